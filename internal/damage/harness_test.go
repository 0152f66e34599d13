package damage_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/internal/damage"
)

func TestUnsafeText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // substring of the problem, "" for safe
	}{
		{"", ""},
		{"plain\nlines\n", ""},
		{"unicode é ✓ \U0001F600\n", ""},
		{"tab\there", "U+0009"},
		{"esc \x1b[31mred", "U+001B"},
		{"cr\r\n", "U+000D"},
		{"nul\x00", "U+0000"},
		{"del\x7f", "U+007F"},
		{"c1 csi \u009b31m", "U+009B"},
		{"bad \xff utf8", "invalid UTF-8"},
		{"line1\nline2 \x07", "line 2"},
	} {
		got := unsafeText([]byte(tc.in))
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("unsafeText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestHarnessCatches runs the harness on stand-ins for iwarpdump (shell
// scripts) that misbehave in each way the damage test looks for, and
// checks that each is caught, and that a well-behaved run is not.
func TestHarnessCatches(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs /bin/sh")
	}
	root := moduleRoot(t)
	work := t.TempDir()
	wrapper := buildWrapper(t, root, work)
	for _, tc := range []struct {
		name   string
		script string
		index  int // argsFor(index): even = jsonl, index%3 == 0 = --strict
		header bool
		rssMiB int
		want   string // substring of a problem, "" for none
	}{
		{"clean jsonl", `echo '{"v":1,"type":"x","frame":1,"ts":"2024-01-01T00:00:00.000000000Z","conn":0}'`, 0, false, 512, ""},
		{"clean text", `echo 'frame 1 ok'`, 1, false, 512, ""},
		{"panic", `echo 'panic: runtime error: index out of range' >&2; echo 'goroutine 1 [running]:' >&2; exit 2`, 1, false, 512, "crash"},
		{"exit 2", `echo "iwarpdump: $2: bad" >&2; exit 2`, 1, false, 512, "exit 2"},
		{"exit 2 header", `echo "iwarpdump: $2: not a capture" >&2; exit 2`, 1, true, 512, "exit 2"},
		{"exit 0 header", `echo "iwarpdump: $2: not a capture" >&2; exit 0`, 1, true, 512, ""},
		{"exit 0 header unnamed", `echo "not a capture" >&2; exit 0`, 1, true, 512, "without naming the file"},
		{"exit 3 not strict", `exit 3`, 1, false, 512, "exit 3 without --strict"},
		{"exit 3 strict", `exit 3`, 3, false, 512, ""},
		{"exit 4", `exit 4`, 1, false, 512, "exit 4"},
		{"hang", `sleep 30`, 1, false, 512, "hang"},
		{"signal", `kill -SEGV $$`, 1, false, 512, "did not exit normally"},
		{"bad json", `echo '{"v":1,'`, 0, false, 512, "invalid JSON"},
		{"schema", `echo '{"v":2}'`, 0, false, 512, "schema"},
		{"bad utf8 json", "printf '{\"v\":\"\\377\"}\\n'", 0, false, 512, "invalid UTF-8"},
		{"escape in text", `printf 'payload \033]0;owned\007\n'`, 1, false, 512, "control character"},
		{"escape on stderr", `printf 'bad \033[2J\n' >&2`, 1, false, 512, "stderr"},
		{"memory", `exit 0`, 1, false, 0, "over the 0 MiB cap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.rssMiB == 0 && runtime.GOOS != "linux" {
				t.Skip("peak memory is measured on Linux only")
			}
			bin := filepath.Join(t.TempDir(), "fake")
			// $1 $2 ... are iwarpdump's flags; the file follows -r.
			script := "#!/bin/sh\nfor a; do shift; [ \"$a\" = -r ] && set -- -r \"$1\" && break; done\n" + tc.script + "\n"
			if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			cfg := runConfig{wrapper: wrapper, bin: bin, work: t.TempDir(), timeout: 500 * time.Millisecond, rssMiB: tc.rssMiB}
			v := damage.Variant{Name: "x", Kind: "test", Data: []byte("data"), FileHeader: tc.header}
			r := runOne(t, cfg, tc.index, v, compileSchema(t, root))
			got := strings.Join(r.problems, "; ")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("problems %q, want %q", got, tc.want)
			}
			if tc.name == "hang" && r.wall > 5*time.Second {
				t.Errorf("hang not stopped in time: %v", r.wall)
			}
		})
	}
}

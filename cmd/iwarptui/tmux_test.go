package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tmux runs tmux on a private server socket, so that the test never
// touches the user's sessions.
type tmux struct {
	t    *testing.T
	sock string
}

func (m *tmux) run(args ...string) string {
	m.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", m.sock}, args...)...).CombinedOutput()
	if err != nil {
		m.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (m *tmux) screen() string { return m.run("capture-pane", "-p", "-t", "ui") }

// waitFor polls the pane until it shows s.
func (m *tmux) waitFor(s string) string {
	m.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		scr := m.screen()
		if strings.Contains(scr, s) {
			return scr
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("the pane never showed %q; it shows:\n%s", s, scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (m *tmux) keys(keys ...string) {
	m.t.Helper()
	m.run(append([]string{"send-keys", "-t", "ui"}, keys...)...)
}

// TestTmux runs the real binary in a 160x50 tmux pane on a real siw
// capture and drives it with send-keys, reading the screen with
// capture-pane. Without tmux it skips, unless IWARP_REQUIRE_TMUX=1 (CI).
// IWARP_TMUX_CAPTURE=FILE saves the main screen there (for the README).
func TestTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("IWARP_REQUIRE_TMUX") == "1" {
			t.Fatalf("tmux is required (IWARP_REQUIRE_TMUX=1) but not found: %v", err)
		}
		t.Skip("tmux not installed: skipping the end-to-end test (apt-get install -y tmux)")
	}
	bin := filepath.Join(t.TempDir(), "iwarptui")
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the binary")
	}
	if out, err := exec.Command(gobin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	capture, err := filepath.Abs("../../testdata/siw/crc_v2_rping.pcap")
	if err != nil {
		t.Fatal(err)
	}
	m := &tmux{t: t, sock: "iwarptui-test-" + strconv.Itoa(os.Getpid())}
	m.run("-f", "/dev/null", "new-session", "-d", "-s", "ui", "-x", "160", "-y", "50", "TERM=xterm-256color "+bin+" "+capture)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", m.sock, "kill-server").Run() })

	// The first screen: the whole capture indexed, the MPA Request of
	// frame 4 selected (MANIFEST.md: Request in 4, Reply in 6).
	// The header says "indexed" a moment before the status line and the
	// detail of the selected row are drawn: under load (CI, on a busy
	// machine) that moment was long enough to read a screen without them.
	m.waitFor("indexed")
	scr := m.waitFor("row 1/43 · frame 4")
	for _, want := range []string{"50 frames", "MPA Request rev 2", "MPA Reply rev 2", "row 1/43 · frame 4"} {
		if !strings.Contains(scr, want) {
			t.Errorf("first screen lacks %q:\n%s", want, scr)
		}
	}

	// Down to frame 9, the first RDMA Read Request; into the tree; down to
	// rdmap.read, expand it, down to the sink STag.
	m.keys("j", "j", "j", "Enter")
	m.waitFor("row 4/43 · frame 9")
	for range 18 {
		m.keys("Down")
	}
	m.waitFor("rdmap.read —")
	m.keys("Right", "Down")
	scr = m.waitFor("rdmap.read.sink_stag — Data Sink STag")
	if !strings.Contains(scr, "0050  00 01 00 00 00 00 d6 66  b9 00") {
		t.Errorf("hex pane lacks frame 9's sink STag d6 66 b9 00 at offset 0x56:\n%s", scr)
	}
	if path := os.Getenv("IWARP_TMUX_CAPTURE"); path != "" {
		if err := os.WriteFile(path, []byte(scr), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// A display filter: the five RDMA Read Requests.
	m.keys("/", "rdmap.opcode == 1", "Enter")
	scr = m.waitFor("row 1/5")
	if n := strings.Count(scr, "RDMA Read Request sink STag"); n != 5 {
		t.Errorf("filter shows %d Read Requests, want 5:\n%s", n, scr)
	}
	// A bad one: the caret under the end.
	m.keys("/", "BSpace", "BSpace", "Enter")
	m.waitFor("^ column 16")
	// A lone Escape is told from an escape sequence by a pause: wait for
	// it to take effect before the next key.
	m.keys("Escape")
	for deadline := time.Now().Add(5 * time.Second); strings.Contains(m.screen(), "^ column"); {
		if time.Now().After(deadline) {
			t.Fatal("Escape did not cancel the filter edit")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A jump, then back and forward with Alt-← and Alt-→ as a terminal
	// sends them (ESC [ 1 ; 3 D), and [ and ].
	m.keys("g", "13", "Enter")
	m.waitFor("frame 17, is selected")
	m.keys("M-Left")
	m.waitFor("back to frame 9")
	m.keys("M-Right")
	m.waitFor("forward to frame 17")
	m.keys("[")
	m.waitFor("back to frame 9")
	m.keys("]")
	m.waitFor("forward to frame 17")

	// Connections, the ladder, statistics, help, and quit.
	m.keys("c")
	scr = m.waitFor("Connections")
	if !strings.Contains(scr, "192.0.2.2:40531") || !strings.Contains(scr, "closed") {
		t.Errorf("connection table:\n%s", scr)
	}
	m.keys("f")
	m.waitFor("request frame 9, latency 1.222ms")
	m.keys("z")
	m.waitFor("RDMAP opcodes per direction (-z ops)")
	m.keys("?")
	m.waitFor("iwarptui keys")
	m.keys("?", "q")
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := exec.Command("tmux", "-L", m.sock, "has-session", "-t", "ui").CombinedOutput()
		if strings.Contains(string(out), "can't find") || strings.Contains(string(out), "no server") || strings.Contains(string(out), "error connecting") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("q did not end iwarptui:\n%s", m.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

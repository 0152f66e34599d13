package damage_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/iwarpkit/iwarpkit/internal/damage"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Knobs of TestDamagedCapturesRealBinary, from the environment.
var (
	envN       = envInt("DAMAGE_N", 1000)    // variants (100 under -short)
	envSeed    = envInt("DAMAGE_SEED", 1)    // generator seed
	envWorkers = envInt("DAMAGE_WORKERS", 2) // binaries run at once
	envTimeout = envDur("DAMAGE_TIMEOUT", 10*time.Second)
	envRSSMiB  = envInt("DAMAGE_RSS_MIB", 512) // peak resident memory cap
	envRepro   = os.Getenv("DAMAGE_REPRO_DIR") // also copy failing files here
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envDur(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// moduleRoot finds the directory holding go.mod, upwards from here.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("go.mod not found")
		}
		dir = up
	}
}

// compileSchema compiles docs/jsonl.schema.json.
func compileSchema(t *testing.T, root string) *jsonschema.Schema {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile(filepath.Join(root, "docs", "jsonl.schema.json"))
	if err != nil {
		t.Fatalf("compile the JSON Lines schema: %v", err)
	}
	return sch
}

// run is one run of the binary on one variant.
type run struct {
	v        damage.Variant
	index    int
	args     []string // flags besides -r FILE
	strict   bool
	jsonl    bool
	code     int   // exit code, -1 when killed
	rssKiB   int64 // peak resident memory of iwarpdump (ru_maxrss)
	floorKiB int64 // the wrapper's own peak, included in rssKiB at most
	wall     time.Duration
	lines    int      // output lines checked
	reported bool     // the binary said something on stderr
	problems []string // violations
	stderr   string
}

// argsFor chooses the flags for variant i: JSON Lines and text alternate,
// every third run is --strict, and some text runs are -v or -q.
func argsFor(i int) (args []string, jsonl, strict bool) {
	jsonl = i%2 == 0
	if jsonl {
		args = append(args, "-T", "jsonl")
	} else {
		switch i % 8 {
		case 1, 5:
			args = append(args, "-v")
		case 3:
			args = append(args, "-q")
		}
	}
	if strict = i%3 == 0; strict {
		args = append(args, "--strict")
	}
	return args, jsonl, strict
}

// TestDamagedCapturesRealBinary (issue 11): builds cmd/iwarpdump, runs it on
// at least 1000 damaged captures made by package damage from
// testdata/siw and testdata/synth, and checks every run:
//
//   - no panic or Go runtime crash on stderr;
//   - no hang: each run ends within DAMAGE_TIMEOUT (10 s);
//   - peak resident memory (getrusage ru_maxrss) under DAMAGE_RSS_MIB (512);
//   - exit code 0, 1 or 3, and 3 only with --strict. Exit 2 (the
//     binary's "not a capture / unreadable file") is accepted only for
//     variants whose file header was damaged (Variant.FileHeader), and
//     then the message must name the file; those are counted apart;
//   - -T jsonl: every line valid UTF-8, valid JSON, valid against
//     docs/jsonl.schema.json;
//   - text output and stderr: valid UTF-8 with no control characters
//     (C0 but newline, DEL, C1), so nothing from the file reaches a
//     terminal raw.
//
// A violating variant is written under a directory that outlives the test
// (logged; also under DAMAGE_REPRO_DIR when set), named after the variant:
// regenerate it with damage.Generate(seed, index, sources).
func TestDamagedCapturesRealBinary(t *testing.T) {
	root := moduleRoot(t)
	n := envN
	if testing.Short() && os.Getenv("DAMAGE_N") == "" {
		n = 100
	}
	seed := int64(envSeed)

	work := t.TempDir()
	bin := filepath.Join(work, "iwarpdump")
	build := exec.Command("go", "build", "-o", bin, "./cmd/iwarpdump")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/iwarpdump: %v\n%s", err, out)
	}
	wrapper := buildWrapper(t, root, work)

	var names []string
	for _, g := range []string{"testdata/siw/*.pcap", "testdata/synth/*.pcap"} {
		m, _ := filepath.Glob(filepath.Join(root, g))
		names = append(names, m...)
	}
	srcs := make([][]byte, len(names))
	for i, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		srcs[i] = b
	}
	if len(srcs) == 0 {
		t.Fatal("no source captures")
	}
	sch := compileSchema(t, root)

	start := time.Now()
	vs := damage.Variants(seed, n, srcs)
	t.Logf("seed %d: %d variants from %d sources in %v; %d workers, %v per file, %d MiB cap",
		seed, len(vs), len(srcs), time.Since(start).Round(time.Millisecond), envWorkers, envTimeout, envRSSMiB)

	cfg := runConfig{wrapper: wrapper, bin: bin, work: work, timeout: envTimeout, rssMiB: envRSSMiB}
	runs := make([]*run, len(vs))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range max(envWorkers, 1) {
		wg.Go(func() {
			for i := range jobs {
				runs[i] = runOne(t, cfg, i, vs[i], sch)
			}
		})
	}
	for i := range vs {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start)

	// Violations: log them and keep the files.
	var keep string
	failed := 0
	for _, r := range runs {
		if len(r.problems) == 0 {
			continue
		}
		failed++
		if keep == "" {
			var err error
			if keep, err = os.MkdirTemp("", "iwarpdump-damage-"); err != nil {
				t.Fatal(err)
			}
		}
		file := filepath.Join(keep, r.v.Name+".pcap")
		_ = os.WriteFile(file, r.v.Data, 0o644)
		if envRepro != "" {
			_ = os.MkdirAll(envRepro, 0o755)
			_ = os.WriteFile(filepath.Join(envRepro, r.v.Name+".pcap"), r.v.Data, 0o644)
		}
		t.Errorf("%s (seed %d, index %d): iwarpdump %s -r %s\n\t%s\n\tstderr: %s",
			r.v.Name, seed, r.index, strings.Join(r.args, " "), file,
			strings.Join(r.problems, "\n\t"), clip(r.stderr, 2000))
	}
	if keep != "" {
		t.Logf("%d failing variants saved in %s", failed, keep)
	}
	t.Log(summary(runs, names, elapsed))
}

// runConfig says how to run the binary and within which limits.
type runConfig struct {
	wrapper, bin, work string
	timeout            time.Duration
	rssMiB             int
}

// runOne writes variant v, runs the binary on it and checks the run.
func runOne(t *testing.T, cfg runConfig, i int, v damage.Variant, sch *jsonschema.Schema) *run {
	args, jsonl, strict := argsFor(i)
	r := &run{v: v, index: i, args: args, strict: strict, jsonl: jsonl}
	file := filepath.Join(cfg.work, fmt.Sprintf("%04d.pcap", i))
	if err := os.WriteFile(file, v.Data, 0o644); err != nil {
		t.Error(err)
		r.problems = append(r.problems, "cannot write the file: "+err.Error())
		return r
	}
	defer os.Remove(file)

	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	cmd, measure, err := command(ctx, cfg.wrapper, cfg.bin, append(append([]string(nil), args...), "-r", file))
	if err != nil {
		r.problems = append(r.problems, "cannot run: "+err.Error())
		return r
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	err = cmd.Run()
	r.wall = time.Since(start)
	m := measure()
	r.rssKiB, r.floorKiB = m.rssKiB, m.floorKiB
	r.stderr = stderr.String()
	r.reported = stderr.Len() > 0
	r.code = -1
	if st := cmd.ProcessState; st != nil {
		r.code = st.ExitCode()
	}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.problems = append(r.problems, fmt.Sprintf("hang: killed after %v", cfg.timeout))
	case err != nil && !errors.As(err, &exitErr):
		r.problems = append(r.problems, "could not run: "+err.Error())
	case m.status != "" && m.status != "exit":
		r.problems = append(r.problems, "iwarpdump did not exit normally: "+m.status)
	}

	// A damaged file header still exits 0 (3 with --strict), with a
	// message that names the file.
	if v.FileHeader && strings.TrimSpace(r.stderr) != "" && !strings.Contains(r.stderr, file) {
		r.problems = append(r.problems, "damaged file header reported without naming the file")
	}
	// Exit code.
	switch {
	case r.code == 0 || r.code == 1:
	case r.code == 3 && strict:
	case r.code == 3:
		r.problems = append(r.problems, "exit 3 without --strict")
	case r.code == -1 || r.code > 128:
		// Killed: by the timeout or a signal, reported above when the
		// wrapper saw it; without the wrapper, report it here.
		if ctx.Err() == nil && m.status == "" {
			r.problems = append(r.problems, "killed by a signal: "+cmd.ProcessState.String())
		}
	default:
		r.problems = append(r.problems, fmt.Sprintf("exit %d", r.code))
	}

	for _, bad := range []string{"panic:", "goroutine ", "fatal error:", "SIGSEGV", "runtime error"} {
		if strings.Contains(r.stderr, bad) {
			r.problems = append(r.problems, "crash: stderr contains "+strconv.Quote(bad))
			break
		}
	}
	if limit := int64(cfg.rssMiB) << 10; r.rssKiB > limit {
		r.problems = append(r.problems, fmt.Sprintf("peak RSS %.1f MiB over the %d MiB cap", float64(r.rssKiB)/1024, cfg.rssMiB))
	}
	if r.wall > cfg.timeout {
		r.problems = append(r.problems, fmt.Sprintf("took %v", r.wall))
	}

	out := stdout.Bytes()
	if jsonl {
		r.checkJSONL(out, sch)
	} else if p := unsafeText(out); p != "" {
		r.problems = append(r.problems, "text output: "+p)
	}
	if p := unsafeText(stderr.Bytes()); p != "" {
		r.problems = append(r.problems, "stderr: "+p)
	}
	return r
}

// checkJSONL checks every line of JSON Lines output; it stops at the first
// bad line.
func (r *run) checkJSONL(out []byte, sch *jsonschema.Schema) {
	if len(out) > 0 && out[len(out)-1] != '\n' {
		r.problems = append(r.problems, "jsonl: output does not end with a newline")
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		r.lines++
		if !utf8.Valid(line) {
			r.problems = append(r.problems, fmt.Sprintf("jsonl line %d: invalid UTF-8: %s", n, clip(string(line), 300)))
			return
		}
		if !json.Valid(line) {
			r.problems = append(r.problems, fmt.Sprintf("jsonl line %d: invalid JSON: %s", n, clip(string(line), 300)))
			return
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
		if err == nil {
			err = sch.Validate(v)
		}
		if err != nil {
			r.problems = append(r.problems, fmt.Sprintf("jsonl line %d: schema: %s: %s", n, clip(err.Error(), 400), clip(string(line), 300)))
			return
		}
	}
	if err := sc.Err(); err != nil {
		r.problems = append(r.problems, "jsonl: "+err.Error())
	}
}

// unsafeText describes the first thing in b that must not reach a terminal:
// invalid UTF-8, a C0 control character other than newline, DEL or a C1
// control character (U+0080-U+009F, which some terminals take as ESC [ and
// the like). It returns "" when b is safe.
func unsafeText(b []byte) string {
	line := 1
	for i := 0; i < len(b); {
		c, size := utf8.DecodeRune(b[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			return fmt.Sprintf("line %d: invalid UTF-8 at octet %d: %s", line, i, around(b, i))
		case c == '\n':
			line++
		case c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f):
			return fmt.Sprintf("line %d: control character %U at octet %d: %s", line, c, i, around(b, i))
		}
		i += size
	}
	return ""
}

// around quotes b around offset i.
func around(b []byte, i int) string {
	return strconv.Quote(string(b[max(0, i-60):min(len(b), i+20)]))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// summary renders the table: per kind, the number of variants, the exit
// codes, how many the binary reported as damaged (stderr), peak RSS and
// the longest run; then the totals.
func summary(runs []*run, names []string, elapsed time.Duration) string {
	type row struct {
		n, viol, reported, hdr int
		codes                  map[int]int
		rss                    int64
		wall                   time.Duration
	}
	rows := map[string]*row{}
	total := &row{codes: map[int]int{}}
	hdrCodes := map[int]int{}
	var maxRSS, maxWall *run
	var floor int64
	lines := 0
	for _, r := range runs {
		k := rows[r.v.Kind]
		if k == nil {
			k = &row{codes: map[int]int{}}
			rows[r.v.Kind] = k
		}
		for _, x := range []*row{k, total} {
			x.n++
			x.codes[r.code]++
			if len(r.problems) > 0 {
				x.viol++
			}
			if r.reported {
				x.reported++
			}
			if r.v.FileHeader {
				x.hdr++
			}
			x.rss = max(x.rss, r.rssKiB)
			x.wall = max(x.wall, r.wall)
		}
		if r.v.FileHeader {
			hdrCodes[r.code]++
		}
		if maxRSS == nil || r.rssKiB > maxRSS.rssKiB {
			maxRSS = r
		}
		if maxWall == nil || r.wall > maxWall.wall {
			maxWall = r
		}
		lines += r.lines
		floor = max(floor, r.floorKiB)
	}
	codes := func(m map[int]int) string {
		var ks []int
		for c := range m {
			ks = append(ks, c)
		}
		sort.Ints(ks)
		var s []string
		for _, c := range ks {
			s = append(s, fmt.Sprintf("%d:%d", c, m[c]))
		}
		return strings.Join(s, " ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-16s %5s %5s %5s %5s %5s %5s %7s %8s %8s %5s\n",
		"kind", "n", "exit0", "exit1", "exit2", "exit3", "other", "stderr", "maxRSS", "maxTime", "FAIL")
	kinds := damage.Kinds()
	for k := range rows {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	line := func(name string, x *row) {
		other := x.n - x.codes[0] - x.codes[1] - x.codes[2] - x.codes[3]
		fmt.Fprintf(&b, "%-16s %5d %5d %5d %5d %5d %5d %7d %6.1fMi %6dms %5d\n",
			name, x.n, x.codes[0], x.codes[1], x.codes[2], x.codes[3], other, x.reported,
			float64(x.rss)/1024, x.wall.Milliseconds(), x.viol)
	}
	for _, k := range kinds {
		if x := rows[k]; x != nil {
			line(k, x)
		}
	}
	line("TOTAL", total)
	fmt.Fprintf(&b, "exit codes: %s\n", codes(total.codes))
	fmt.Fprintf(&b, "file-header damaged (exit 0, 3 with --strict): %d variants, exit codes %s\n", total.hdr, codes(hdrCodes))
	if maxRSS != nil {
		fmt.Fprintf(&b, "max RSS %.1f MiB (%s; includes at most the %.1f MiB of the measuring wrapper), max time %v (%s)\n",
			float64(maxRSS.rssKiB)/1024, maxRSS.v.Name, float64(floor)/1024, maxWall.wall.Round(time.Millisecond), maxWall.v.Name)
	}
	fmt.Fprintf(&b, "%d JSON Lines validated; %d runs with a violation; %v in all\n", lines, total.viol, elapsed.Round(time.Second))
	b.WriteString("sources:")
	for i, n := range names {
		fmt.Fprintf(&b, " s%02d=%s", i, filepath.Base(n))
	}
	return b.String()
}

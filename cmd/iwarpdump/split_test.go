package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/shard"
	"github.com/iwarpkit/iwarpkit/shard/shardtest"
	"github.com/iwarpkit/iwarpkit/synth"
)

func runSplitCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runSplit(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestSplitUsage(t *testing.T) {
	dir := t.TempDir()
	f := siwDir + "crc_v2_rping.pcap"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-w", dir, f}, "--shards must be"},
		{[]string{"--shards", "0", "-w", dir, f}, "--shards must be"},
		{[]string{"--shards", "5000", "-w", dir, f}, "--shards must be"},
		{[]string{"--shards", "2", f}, "no output directory"},
		{[]string{"--shards", "2", "-w", dir}, "no input file"},
		{[]string{"--shards", "2", "-w", dir, "/nonexistent/x.pcap"}, "/nonexistent/x.pcap"},
		{[]string{"--shards", "2", "-w", dir, filepath.Join(dir, "none-*.pcap")}, "no file matches"},
		{[]string{"--shards", "x"}, "invalid value"},
	} {
		code, _, stderr := runSplitCmd(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if code, _, _ := runSplitCmd(t, "-h"); code != 0 {
		t.Errorf("-h: exit %d", code)
	}
}

// TestSplitCommand: split two inputs (merged) into 4 shards, flags after
// the files too; every packet is in one shard; the shards decode to the
// records of the merged inputs; a rerun writes the same bytes.
func TestSplitCommand(t *testing.T) {
	many, multi, _ := scaleCaptures(t)
	dir := filepath.Join(t.TempDir(), "out") // created by split
	code, stdout, stderr := runSplitCmd(t, "--shards", "4", many, "-w", dir, multi)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	paths := strings.Fields(stdout)
	var want []string
	for i := range 4 {
		want = append(want, filepath.Join(dir, "many-40..multi-conn.shard-"+strconv.Itoa(i)+"-of-4.pcap"))
	}
	if !slices.Equal(paths, want) {
		t.Fatalf("printed %q, want %q", paths, want)
	}
	if !strings.Contains(stderr, "from 2 files into 4 shards") {
		t.Errorf("summary: %q", stderr)
	}

	// Shard file frame k is the k-th packet of the merged input in its
	// shard: map frames back and compare with the merged decode.
	origFrames := make([][]uint64, 4)
	m, _ := capture.OpenMerge(many, multi)
	total := 0
	for {
		p, err := m.Next()
		if err != nil {
			break
		}
		i := shard.Of(&p, 4)
		origFrames[i] = append(origFrames[i], p.Frame)
		total++
	}
	m.Close()
	var got []string
	for i, p := range paths {
		recs := decodeRun(t, []string{p}, shardSel{})
		got = append(got, shardtest.Canonical(recs, func(f uint64) uint64 {
			if f == 0 || f > uint64(len(origFrames[i])) {
				return 0
			}
			return origFrames[i][f-1]
		})...)
	}
	slices.Sort(got)
	shardtest.Equal(t, "split shards", got, shardtest.Canonical(decodeRun(t, []string{many, multi}, shardSel{}), nil))

	before := map[string][]byte{}
	for _, p := range paths {
		before[p], _ = os.ReadFile(p)
	}
	if code, _, stderr := runSplitCmd(t, "-q", "--shards", "4", "-w", dir, many, multi); code != 0 || stderr != "" {
		t.Fatalf("rerun: exit %d, stderr %q", code, stderr)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 4 {
		t.Errorf("%d files after the rerun, want 4", len(ents))
	}
	for _, p := range paths {
		if b, _ := os.ReadFile(p); !bytes.Equal(b, before[p]) {
			t.Errorf("%s changed on rerun", p)
		}
	}
	if code, stdout, _ := runSplitCmd(t, "--shards", "2", "--name", "custom", "-w", dir, many); code != 0 ||
		!strings.Contains(stdout, "custom.shard-1-of-2.pcap") {
		t.Errorf("--name: exit %d, %q", code, stdout)
	}
}

func TestSplitDamaged(t *testing.T) {
	many, _, _ := scaleCaptures(t)
	b, _ := os.ReadFile(many)
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(cut, b[:len(b)-7], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		strict bool
		code   int
	}{{false, 0}, {true, 3}} {
		args := []string{"--shards", "3", "-w", t.TempDir(), cut}
		if tc.strict {
			args = append(args, "--strict")
		}
		code, stdout, stderr := runSplitCmd(t, args...)
		if code != tc.code || !strings.Contains(stderr, "truncated record") || !strings.Contains(stderr, "before the damage") {
			t.Errorf("strict=%v: exit %d, stderr %q", tc.strict, code, stderr)
		}
		if n := len(strings.Fields(stdout)); n != 3 {
			t.Errorf("strict=%v: %d files written, want 3", tc.strict, n)
		}
	}
}

// perfCapture writes synth's performance workload (8 connections, CRC,
// markers in half, messages up to 256 KiB) of about size octets.
func perfCapture(tb testing.TB, size int64) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "perf.pcap")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := synth.WritePerf(f, size, 1); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// readOnly reads every packet of path (L2-L4 decoding, as split does) and
// returns the captured octets.
func readOnly(tb testing.TB, path string) int64 {
	src, err := capture.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	var n int64
	for {
		p, err := src.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			tb.Fatal(err)
		}
		n += int64(len(p.Data))
	}
}

// BenchmarkSplitVsRead compares split (read, hash, write N files) with
// plain reading of the same capture; both report MB/s of capture file.
func BenchmarkSplitVsRead(b *testing.B) {
	path := perfCapture(b, 64<<20)
	st, _ := os.Stat(path)
	b.Run("read", func(b *testing.B) {
		b.SetBytes(st.Size())
		b.ReportAllocs()
		for b.Loop() {
			readOnly(b, path)
		}
	})
	for _, n := range []int{1, 8, 64} {
		b.Run("split-"+strconv.Itoa(n), func(b *testing.B) {
			out := b.TempDir()
			b.SetBytes(st.Size())
			b.ReportAllocs()
			for b.Loop() {
				m, err := capture.OpenMerge(path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := shard.Split(context.Background(), m, out, "perf", n); err != nil {
					b.Fatal(err)
				}
				m.Close()
			}
		})
	}
}

// TestSplitThroughput measures split against plain reading on a large
// capture: IWARP_SPLIT_FILE=/tmp/big.pcap go test -run SplitThroughput -v
// (make one with: go run ./cmd/iwarpsynth -scenario large -size 512M -o
// /tmp/big.pcap). Skipped without the variable. Each measurement is the
// best of IWARP_SPLIT_ROUNDS (default 3) runs, interleaved, in wall-clock
// time and in CPU time (user + system) of this process, which a loaded
// machine disturbs less.
func TestSplitThroughput(t *testing.T) {
	path := os.Getenv("IWARP_SPLIT_FILE")
	if path == "" {
		t.Skip("set IWARP_SPLIT_FILE to a large capture to measure split throughput")
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	rounds := 3
	if r, err := strconv.Atoi(os.Getenv("IWARP_SPLIT_ROUNDS")); err == nil && r > 0 {
		rounds = r
	}
	mb := float64(st.Size()) / 1e6
	readOnly(t, path)           // warm the page cache
	modes := []int{0, 1, 8, 64} // 0: read only
	wall := make([]time.Duration, len(modes))
	cpu := make([]time.Duration, len(modes))
	for range rounds {
		for k, n := range modes {
			out := t.TempDir()
			c0 := cpuTime()
			start := time.Now()
			if n == 0 {
				readOnly(t, path)
			} else if code, _, stderr := runSplitCmd(t, "-q", "--shards", strconv.Itoa(n), "-w", out, path); code != 0 {
				t.Fatalf("split: %s", stderr)
			}
			w, c := time.Since(start), cpuTime()-c0
			if wall[k] == 0 || w < wall[k] {
				wall[k] = w
			}
			if cpu[k] == 0 || c < cpu[k] {
				cpu[k] = c
			}
			_ = os.RemoveAll(out)
		}
	}
	for k, n := range modes {
		what := "read only"
		if n > 0 {
			what = "split N=" + strconv.Itoa(n)
		}
		t.Logf("%-12s wall %6.2fs %5.0f MB/s (%3.0f%% of read) | cpu %6.2fs %5.0f MB/s (%3.0f%% of read)", what,
			wall[k].Seconds(), mb/wall[k].Seconds(), 100*wall[0].Seconds()/wall[k].Seconds(),
			cpu[k].Seconds(), mb/cpu[k].Seconds(), 100*cpu[0].Seconds()/cpu[k].Seconds())
	}
}

// cpuTime returns the user plus system CPU time of this process, from
// /proc/self/stat (Linux; 0 elsewhere), in clock ticks of 10 ms.
func cpuTime() time.Duration {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	// Fields after the command name in parentheses; utime and stime are
	// fields 14 and 15 of the whole line (proc(5)).
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond
}

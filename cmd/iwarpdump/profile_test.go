package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestProfileFiles: --cpuprofile, --memprofile and --trace write their
// files, the trace one go tool trace reads (its header), and the decode's
// output is the one without them.
func TestProfileFiles(t *testing.T) {
	in := filepath.Join("..", "..", "testdata", "siw", "crc_v2_rping.pcap")
	dir := t.TempDir()
	cpu, mem, tr := filepath.Join(dir, "cpu"), filepath.Join(dir, "mem"), filepath.Join(dir, "trace")
	for _, j := range []string{"1", "2"} {
		c0, want, _ := runCmd(t, nil, "-r", in, "-j", j)
		c1, got, e1 := runCmd(t, nil, "-r", in, "-j", j, "--cpuprofile", cpu, "--memprofile", mem, "--trace", tr)
		if c0 != 0 || c1 != 0 || got != want || e1 != "" {
			t.Fatalf("-j %s: exit %d/%d, stderr %q; output the same: %v", j, c0, c1, e1, got == want)
		}
		for _, f := range []string{cpu, mem, tr} {
			b, err := os.ReadFile(f)
			if err != nil || len(b) == 0 {
				t.Fatalf("-j %s: %s: %d octets, %v", j, filepath.Base(f), len(b), err)
			}
			if f == tr && !bytes.HasPrefix(b, []byte("go 1.")) {
				t.Errorf("-j %s: the trace starts %q, not go tool trace's header", j, b[:min(len(b), 16)])
			}
		}
	}
	if c, _, e := runCmd(t, nil, "-r", in, "--trace", filepath.Join(dir, "no", "such")); c != 0 || e == "" {
		t.Errorf("--trace into a missing directory: exit %d, stderr %q (want 0 and a complaint)", c, e)
	}
}

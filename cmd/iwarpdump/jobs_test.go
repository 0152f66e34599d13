package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJobsSameOutput: -j N prints what -j 1 prints, in every output mode,
// on every bundled capture (the flows package tests the merge itself over
// interleaved and damaged captures).
func TestJobsSameOutput(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/*/*.pcap")
	if len(files) < 20 {
		t.Fatalf("only %d bundled captures", len(files))
	}
	// Several files merged into one stream, and a packet count.
	files = append(files, "-r "+siw+"crc_v2_rping.pcap -r "+siw+"term_badwrite.pcap -r "+siw+"p2p_rtr1_rping.pcap",
		"-c 40 -r "+siw+"crc_v2_iwtest_ops.pcap")
	// A damaged file: cut inside a record (stderr says where; --strict
	// exits 3).
	data, err := os.ReadFile(siw + "crc_v2_iwtest_ops.pcap")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(cut, data[:len(data)*3/5], 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, cut, "--strict -r "+cut)
	modes := [][]string{{"-T", "jsonl"}, {"-v"}, {"-q", "-z", "conn", "-z", "ops", "-z", "findings", "-z", "latency"}, {"-X"},
		{"-Y", "rdmap.opcode == 0 || mpa.crc_status != \"ok\"", "--fail-on", "warning"}, {"--decode-as", "tcp.port==7174,crc=on"}}
	for _, f := range files {
		for _, m := range modes {
			args := append([]string{"-r", f}, m...)
			if strings.HasPrefix(f, "-") {
				args = append(strings.Fields(f), m...)
			}
			c1, o1, e1 := runCmd(t, nil, append(args, "-j", "1")...)
			for _, j := range []string{"2", "3", "0"} {
				c2, o2, e2 := runCmd(t, nil, append(args, "-j", j)...)
				if c1 != c2 || o1 != o2 || e1 != e2 {
					t.Fatalf("%s %v: -j %s differs from -j 1 (exit %d/%d, %d/%d octets out, stderr %q/%q)",
						filepath.Base(f), m, j, c2, c1, len(o2), len(o1), e2, e1)
				}
			}
		}
	}
}

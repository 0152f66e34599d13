package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/shard/shardtest"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestRotatedFilesSameAsOne: a capture cut into rotated files (down to a
// packet per file) decodes, through -r 'GLOB', exactly as the capture
// itself does, with one worker (the files read, or mapped with --mmap;
// retransmissions compared with octets read back from the earlier files)
// and with two. The
// capture mixes synth's retransmit-conflict scenario, whose two
// conflicting retransmissions (its ground truth) must be found across the
// file boundaries, with a multi-connection one. With several workers the
// merged packets are read in chunks (capture.NewMergeChunks).
func TestRotatedFilesSameAsOne(t *testing.T) {
	dir := t.TempDir()
	rc, _ := synth.Named("retransmit-conflict", 3)
	mc, _ := synth.Named("multi-conn", 3)
	wantConflicts := len(rc.Conns[0].Impair.Conflict)
	for _, sc := range []struct {
		name string
		s    synth.Scenario
	}{{"retransmit-conflict", rc}, {"multi-conn", mc}} {
		whole := shardtest.Write(t, dir, sc.name+".pcap", sc.s)
		pkts, datas := readPackets(t, whole)
		for _, args := range [][]string{{"-T", "jsonl"}, {"-T", "jsonl", "--mmap"}, {"-T", "jsonl", "-j", "2"}, {"-T", "jsonl", "-j", "3", "-c", "7"},
			{"-q", "-z", "conn", "-z", "findings"}, {"-q", "-z", "conn", "-z", "findings", "-j", "2"}} {
			_, want, _ := runCmd(t, nil, append([]string{"-r", whole}, args...)...)
			if sc.name == "retransmit-conflict" && args[1] == "jsonl" && !slices.Contains(args, "-c") {
				if n := strings.Count(want, `"tcp.retransmit_conflict"`); n != wantConflicts {
					t.Fatalf("%s: %d conflicts in the whole capture, want %d", sc.name, n, wantConflicts)
				}
			}
			for _, per := range []int{1, 3, 50} {
				rot := filepath.Join(dir, fmt.Sprintf("%s-%d", sc.name, per))
				for i := 0; i < len(pkts); i += per {
					j := min(i+per, len(pkts))
					writePackets(t, fmt.Sprintf("%s-%05d.pcap", rot, i), pkts[i:j], datas[i:j])
				}
				code, got, errs := runCmd(t, nil, append([]string{"-r", rot + "-*.pcap"}, args...)...)
				if code != 0 || got != want {
					t.Errorf("%s, %d packets per file, %v: exit %d, output differs from the whole capture's (%d and %d octets)\n%s",
						sc.name, per, args, code, len(got), len(want), errs)
				}
			}
		}
	}
}

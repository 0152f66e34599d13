package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// TestMergedAsMergecap: several files decode as the file mergecap merges
// them into (mergecap -w out.pcapng FILES, Wireshark's chronological
// merge): the same records with the same frame numbers, so that frame N
// of iwarpdump -r a -r b is frame N of the merged file in Wireshark. On
// equal timestamps iwarpdump takes the earlier file's packet first, so
// that the rotated files of one capture keep their order, where mergecap
// takes the later file's: the files then merge as mergecap merges them in
// the reverse order. The inputs are bundled captures shifted in time with
// editcap so that they interleave, and so that packets of three files
// have the same timestamp.
func TestMergedAsMergecap(t *testing.T) {
	testutil.RequireTshark(t) // editcap and mergecap come with it
	editcap, err1 := exec.LookPath("editcap")
	mergecap, err2 := exec.LookPath("mergecap")
	if err1 != nil || err2 != nil {
		t.Fatalf("editcap or mergecap missing: %v %v", err1, err2)
	}
	dir := t.TempDir()
	epoch := func(f string) float64 {
		out, err := exec.Command("tshark", "-r", f, "-T", "fields", "-e", "frame.time_epoch").Output()
		if err != nil {
			t.Fatal(err)
		}
		var ts []float64
		for _, l := range strings.Fields(string(out)) {
			v, err := strconv.ParseFloat(l, 64)
			if err != nil {
				t.Fatal(err)
			}
			ts = append(ts, v)
		}
		return ts[0]
	}
	// shift writes f moved so that its first packet is at start (to the
	// microsecond) and returns the copy's path.
	shift := func(f, name string, start float64) string {
		out := filepath.Join(dir, name)
		d := strconv.FormatFloat(start-epoch(f), 'f', 6, 64)
		if b, err := exec.Command(editcap, "-t", d, f, out).CombinedOutput(); err != nil {
			t.Fatalf("editcap: %v: %s", err, b)
		}
		return out
	}
	a := siw + "crc_v2_rping.pcap"
	a0 := epoch(a)
	// The sixth packet of a is at a0 + 0.025153 s.
	interleaved := []string{a, shift(siw+"term_badwrite.pcap", "b.pcap", a0+0.013), shift(siw+"crc_v2_iwtest_ops.pcap", "c.pcap", a0+0.02)}
	tied := []string{a, shift(siw+"term_badwrite.pcap", "tb.pcap", a0+0.025153), shift(siw+"term_sendinv.pcap", "tc.pcap", a0+0.025153)}
	cases := []struct {
		name   string
		files  []string
		merged []string // mergecap's input order
	}{
		{"interleaved", interleaved, interleaved},
		{"ties", tied, []string{tied[2], tied[1], tied[0]}},
	}
	for _, c := range cases {
		m := filepath.Join(dir, c.name+".pcapng")
		if b, err := exec.Command(mergecap, append([]string{"-w", m}, c.merged...)...).CombinedOutput(); err != nil {
			t.Fatalf("mergecap: %v: %s", err, b)
		}
		var rs []string
		for _, f := range c.files {
			rs = append(rs, "-r", f)
		}
		// The packets do interleave: frames of every file among the
		// first ten of the merged file.
		out, err := exec.Command("tshark", "-r", m, "-c", "10", "-T", "fields", "-e", "tcp.srcport").Output()
		if err != nil {
			t.Fatal(err)
		}
		if ports := slices.Compact(slices.Sorted(slices.Values(strings.Fields(string(out))))); len(ports) < 4 {
			t.Fatalf("%s: the first ten merged frames come from ports %v only", c.name, ports)
		}
		for _, mode := range [][]string{{"-T", "jsonl"}, {"-v"}, {"-q", "-z", "conn", "-z", "findings"}, {"-T", "jsonl", "-j", "2"}} {
			code1, got, errs1 := runCmd(t, nil, append(slices.Clone(rs), mode...)...)
			code2, want, errs2 := runCmd(t, nil, append([]string{"-r", m}, mode...)...)
			if code1 != 0 || code2 != 0 {
				t.Fatalf("%s %v: exit %d, %d: %s %s", c.name, mode, code1, code2, errs1, errs2)
			}
			if got != want {
				t.Errorf("%s %v: the files decode unlike mergecap's merge of them (%d and %d octets)", c.name, mode, len(got), len(want))
			}
		}
	}
}

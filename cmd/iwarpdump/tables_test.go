package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/synth"
)

// TestTablesAfterLines: the -z tables printed after the lines (no -q: the
// Collector is given every record, and told when a connection ends,
// report.Collector.Ends) are those -q prints (where Partials count most
// records, report.Partial), after the lines printed without -z: on every
// bundled capture, and on 300 connections reset over 13 minutes, which
// retire one after another (flows/settle.go), with one worker and two.
func TestTablesAfterLines(t *testing.T) {
	files := bundledCaptures(t)
	var buf bytes.Buffer
	if err := synth.WriteStress(&buf, synth.StressResetsSlow, 300, 1); err != nil {
		t.Fatal(err)
	}
	resets := filepath.Join(t.TempDir(), "resets.pcap")
	if err := os.WriteFile(resets, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, resets)
	tables := []string{"-z", "conn", "-z", "ops", "-z", "findings", "-z", "latency"}
	for _, f := range files {
		for _, j := range []string{"1", "2"} {
			c, both, e := runCmd(t, nil, append([]string{"-r", f, "-j", j}, tables...)...)
			c1, lines, e1 := runCmd(t, nil, "-r", f, "-j", j)
			c2, alone, e2 := runCmd(t, nil, append([]string{"-r", f, "-j", j, "-q"}, tables...)...)
			if c != c1 || c != c2 || e != e1 || e != e2 {
				t.Fatalf("%s -j %s: exit %d, stderr %q; lines alone %d, %q; tables alone %d, %q",
					filepath.Base(f), j, c, e, c1, e1, c2, e2)
			}
			if both != lines+alone {
				t.Fatalf("%s -j %s: the lines and tables (%d octets) are not the lines (%d) and then -q's tables (%d)",
					filepath.Base(f), j, len(both), len(lines), len(alone))
			}
		}
	}
}

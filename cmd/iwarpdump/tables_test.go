package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/internal/testutil"
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

// TestConnLineCRCAsTable: a conn line says CRC and markers where -z conn
// shows them, from the MPA exchange or the FPDUs, and not for a connection
// that never carried one (a refused or unanswered connect said "CRC off,
// markers i2r off r2i off" where the table has "-").
func TestConnLineCRCAsTable(t *testing.T) {
	for _, c := range []struct {
		file string
		crc  bool
	}{
		{"../../testdata/tcp/connect-refused.pcap", false},
		{"../../testdata/tcp/connect-unanswered.pcap", false},
		{"../../testdata/synth/no-reply.pcap", true},
		{siw + "crc_v2_rping.pcap", true},
		{"../../testdata/midstream/iwtest_ops_from_frame15.pcap", true},
	} {
		_, out, _ := runCmd(t, nil, "-r", c.file, "-Y", "conn", "-q")
		_, table, _ := runCmd(t, nil, "-r", c.file, "-q", "-z", "conn")
		var row []string
		for _, l := range strings.Split(table, "\n") {
			if cells := testutil.TableCells(l); len(cells) > 5 && cells[0] == "0" {
				row = cells
			}
		}
		if row == nil {
			t.Fatalf("%s: no row of conn 0 in\n%s", c.file, table)
		}
		if got := strings.Contains(out, ", CRC "); got != c.crc || (row[5] != "-") != c.crc {
			t.Errorf("%s: conn line %q, table CRC %q; want CRC shown %v", c.file, out, row[5], c.crc)
		}
	}
}

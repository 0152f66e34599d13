package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/synth"
)

// TestJobsSameOutput: -j N prints what -j 1 prints, in every output mode,
// on every bundled capture (the flows package tests the merge itself over
// interleaved and damaged captures).
func TestJobsSameOutput(t *testing.T) {
	files := bundledCaptures(t)
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
		{"-Y", "rdmap.opcode == 0 || mpa.crc_status != \"ok\"", "--fail-on", "warning"}, {"--decode-as", "tcp.port==7174,crc=on"},
		// The workers render and match the records (flows.Parallel.SetFormat);
		// a filter that reads the connection id they match in two stages,
		// the merge testing the id (filter.Staged).
		{}, {"-q"}, {"-Y", "rdmap.opcode == 0 || mpa.crc_status != \"ok\""}, {"-T", "jsonl", "-Y", "message || finding"},
		{"-T", "jsonl", "-Y", "conn == 1 || message"}, {"-Y", "conn == 0 && !message"}, {"-T", "jsonl", "-Y", "!(tcp.stream == 1) && fpdu || conn in {2 3}"}, {"-T", "jsonl", "-Y", "tcp.srcport == 7174 || ip.addr == 192.0.2.2 || sctp.port || ipv6.addr"},
		// -T fields: rendered by the workers (a column of the connection
		// id or of the time since the line before leaves it to the merge,
		// as a filter on conn does).
		{"-T", "fields", "-e", "frame", "-e", "rdmap.opcode", "-e", "ddp.stag", "-e", "findings.code", "-e", "ip.src", "-e", "frame.time_relative", "-E", "header=y"},
		// tcp.stream, which the merge numbers as it numbers connections.
		{"-T", "fields", "-e", "frame", "-e", "tcp.stream", "-Y", "tcp.stream == 1 || message"}}
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

// TestJobsSameReports: the JUnit, SARIF and HTML reports and the -z tables
// of -j 2 under -q (where the workers count most FPDUs themselves,
// report.Partial) are those of -j 1, on every bundled capture and on a
// generated workload with markers in half its connections.
func TestJobsSameReports(t *testing.T) {
	files := bundledCaptures(t)
	dir := t.TempDir()
	perf := filepath.Join(dir, "perf.pcap")
	f, err := os.Create(perf)
	if err != nil {
		t.Fatal(err)
	}
	if err := synth.WritePerf(f, 6<<20, 9); err != nil {
		t.Fatal(err)
	}
	f.Close()
	files = append(files, perf)
	for _, f := range files {
		var outs [2]string
		for i, j := range []string{"1", "2"} {
			p := filepath.Join(dir, "j"+j)
			c, o, e := runCmd(t, nil, "-r", f, "-j", j, "-q", "-z", "conn", "-z", "ops", "-z", "findings", "-z", "latency",
				"--report", "junit:"+p+".xml", "--report", "sarif:"+p+".sarif", "--report", "html:"+p+".html")
			outs[i] = fmt.Sprint(c, o, e)
			for _, ext := range []string{".xml", ".sarif", ".html"} {
				b, err := os.ReadFile(p + ext)
				if err != nil {
					t.Fatal(err)
				}
				outs[i] += string(b)
			}
		}
		if outs[0] != outs[1] {
			t.Fatalf("%s: -j 2 reports differ from -j 1 (%d/%d octets)", filepath.Base(f), len(outs[1]), len(outs[0]))
		}
	}
}

// bundledCaptures returns the paths of the bundled captures, and fails t
// when there are fewer than 20 (a test over none would prove nothing).
func bundledCaptures(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("../../testdata/*/*.pcap")
	if len(files) < 20 {
		t.Fatalf("only %d bundled captures", len(files))
	}
	return files
}

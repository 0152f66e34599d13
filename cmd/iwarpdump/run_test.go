package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/synth"
)

func runCmd(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if stdin != nil {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = w.Write(stdin); w.Close() }()
		old := os.Stdin
		os.Stdin = r
		defer func() { os.Stdin = old }()
	}
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

const siw = "../../testdata/siw/"

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no capture source"},
		{[]string{"-r", "/nonexistent/x.pcap"}, "/nonexistent/x.pcap"},
		{[]string{"-r", siw + "crc_v2_rping.pcap", "-T", "xml"}, "unknown output format"},
		{[]string{"-r", siw + "crc_v2_rping.pcap", "extra"}, "bpf"},
		{[]string{"-bogus"}, "flag provided but not defined"},
		{[]string{"-r", siw + "crc_v2_rping.pcap", "-c", "0"}, "packet count must be at least 1"},
		{[]string{"-r", siw + "crc_v2_rping.pcap", "-c", "-3"}, "invalid value \"-3\" for flag -c"},
		{[]string{"-i", "lo", "-T", "parquet", "-w", "/nonexistent/dir"}, "-T parquet writes the tables of -r files"},
	} {
		code, _, stderr := runCmd(t, nil, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
		if tc.args != nil && strings.Count(stderr, "\n") > 3 {
			t.Errorf("%v: %d lines on stderr, want the error and a pointer to -h:\n%s", tc.args, strings.Count(stderr, "\n"), stderr)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: stderr %q does not mention %q", tc.args, stderr, tc.want)
		}
	}
}

// TestNotACapture: a readable file that is not a capture is a damaged file
// (issue 11): a message naming the file, exit 0, or 3 under --strict.
func TestNotACapture(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.pcap")
	os.WriteFile(p, []byte("this is not a capture file at all"), 0o644)
	code, _, stderr := runCmd(t, nil, "-r", p)
	if code != 0 || !strings.Contains(stderr, p) || !strings.Contains(stderr, "not a pcap or pcapng file") {
		t.Errorf("exit %d stderr %q", code, stderr)
	}
	if code, _, _ := runCmd(t, nil, "-r", p, "--strict"); code != 3 {
		t.Errorf("--strict: exit %d, want 3", code)
	}
	if code, _, _ := runCmd(t, nil, "-r", t.TempDir()); code != 2 {
		t.Errorf("a directory: exit %d, want 2", code)
	}
}

// TestReadBWOpcodes: the RDMAP opcode counts tshark reports for this capture
// (shared/captures/MANIFEST.md): 5 Read Requests, 15 Read Responses, 32 Sends.
func TestReadBWOpcodes(t *testing.T) {
	code, out, stderr := runCmd(t, nil, "-r", siw+"basic_ib_read_bw_4096_v2_nocrc.pcap", "-T", "jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	counts := map[float64]int{}
	mpa := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("bad JSON line %q: %v", line, err)
		}
		switch r["type"] {
		case "fpdu":
			counts[r["rdmap.opcode"].(float64)]++
		case "mpa":
			mpa++
		}
	}
	want := map[float64]int{1: 5, 2: 15, 3: 32}
	for op, n := range want {
		if counts[op] != n {
			t.Errorf("opcode %v: %d FPDUs, tshark counts %d", op, counts[op], n)
		}
	}
	if mpa != 4 {
		t.Errorf("%d MPA frames, MANIFEST lists 4 (two connections)", mpa)
	}
}

// TestTerminateExplained: siw's Terminates, as MANIFEST.md describes them
// (layer/etype nibbles swapped by siw's bitfields), explained in words.
func TestTerminateExplained(t *testing.T) {
	for file, want := range map[string]string{
		"term_badwrite.pcap": "Terminate DDP Tagged Buffer Error: Invalid STag",
		"term_sendinv.pcap":  "Terminate RDMAP Remote Operation Error: STag cannot be invalidated",
	} {
		code, out, _ := runCmd(t, nil, "-r", siw+file)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("%s: exit %d, output lacks %q:\n%s", file, code, want, out)
		}
	}
}

func TestDeterministic(t *testing.T) {
	for _, f := range []string{"crc_v2_iwtest_ops.pcap", "basic_ib_read_bw_4096_v2_nocrc.pcap"} {
		_, a, _ := runCmd(t, nil, "-r", siw+f, "-T", "jsonl")
		_, b, _ := runCmd(t, nil, "-r", siw+f, "-T", "jsonl")
		if a != b || a == "" {
			t.Errorf("%s: output differs between runs", f)
		}
	}
}

func TestStdinAndCount(t *testing.T) {
	data, err := os.ReadFile(siw + "crc_v2_rping.pcap")
	if err != nil {
		t.Fatal(err)
	}
	code, fromStdin, _ := runCmd(t, data, "-r", "-")
	_, fromFile, _ := runCmd(t, nil, "-r", siw+"crc_v2_rping.pcap")
	if code != 0 || fromStdin != fromFile {
		t.Errorf("stdin decode differs from file decode (exit %d)", code)
	}
	_, limited, _ := runCmd(t, nil, "-r", siw+"crc_v2_rping.pcap", "-c", "8", "-T", "jsonl")
	for _, line := range strings.Split(strings.TrimSpace(limited), "\n") {
		var r map[string]any
		json.Unmarshal([]byte(line), &r)
		if r["frame"].(float64) > 8 {
			t.Errorf("-c 8 printed a record of frame %v", r["frame"])
		}
	}
	if !strings.Contains(limited, `"kind":"request"`) {
		t.Errorf("-c 8 lost the MPA Request of frame 4")
	}
}

// TestTruncatedFile: a file cut inside a record still prints every record
// before the damage, says where it stopped, exits 0 (3 with --strict).
func TestTruncatedFile(t *testing.T) {
	data, err := os.ReadFile(siw + "crc_v2_rping.pcap")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cut.pcap")
	os.WriteFile(p, data[:len(data)/2], 0o644)
	code, out, stderr := runCmd(t, nil, "-r", p)
	if code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	if !strings.Contains(out, "MPA Reply") || !strings.Contains(out, "RDMA Read Request") {
		t.Errorf("records before the damage missing:\n%s", out)
	}
	if !strings.Contains(stderr, "cut.pcap") || !strings.Contains(stderr, "offset") {
		t.Errorf("stderr does not say where it stopped: %q", stderr)
	}
	code, _, _ = runCmd(t, nil, "-r", p, "--strict")
	if code != 3 {
		t.Errorf("--strict exit %d, want 3", code)
	}
}

func TestVerboseTree(t *testing.T) {
	_, out, _ := runCmd(t, nil, "-r", siw+"crc_v2_rping.pcap", "-v", "-c", "10")
	for _, want := range []string{"mpa.crc_status: ok", "ddp.stag: 0xd666b900", "rdmap.read", "sink_stag: 0xd666b900", "enhanced", "ird: 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("tree lacks %q", want)
		}
	}
}

// TestEscapeSequencesPrintSafely: Send payloads and MPA private data full of
// terminal escape sequences never reach the output raw, in any format.
func TestEscapeSequencesPrintSafely(t *testing.T) {
	evil := []byte("\x1b[2J\x1b]0;owned\x07\x1b[31mred\x9b\x00\r\n\u202e")
	c := synth.Conn{
		Initiator: netip.MustParseAddrPort("192.0.2.2:40200"),
		Responder: netip.MustParseAddrPort("192.0.2.1:7174"),
		Handshake: true,
		MPA: &synth.MPAParams{
			Request: synth.MPAFrame{Rev: 1, C: true, PD: evil},
			Reply:   synth.MPAFrame{Rev: 1, C: true, PD: evil},
		},
		Ops: []synth.Op{
			{Dir: synth.I2R, Kind: synth.Send, Payload: evil},
			{Dir: synth.R2I, Kind: synth.Send, Payload: evil},
		},
	}
	p := filepath.Join(t.TempDir(), "evil.pcap")
	if _, err := synth.WriteFiles(synth.Scenario{Conns: []synth.Conn{c}}, p); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-X"}, {"-v", "-X"}, {"-T", "jsonl"}, {"-q"}} {
		code, out, _ := runCmd(t, nil, append([]string{"-r", p}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		for i := 0; i < len(out); i++ {
			if c := out[i]; (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				t.Fatalf("%v: raw control octet 0x%02x in output at %d: %q", args, c, i, out[max(0, i-20):min(len(out), i+20)])
			}
		}
		if strings.Contains(out, "\u202e") || strings.Contains(out, "\xc2\x9b") {
			t.Fatalf("%v: bidi override or C1 CSI printed raw", args)
		}
	}
	_, out, _ := runCmd(t, nil, "-r", p, "-X")
	if !strings.Contains(out, "1b5b 324a") || !strings.Contains(out, ".[2J.]0;owned..[") {
		t.Errorf("-X does not show the payload octets:\n%s", out)
	}
}

// TestDisplayFilter: -Y selects records; the count of Read Responses is
// tshark's (MANIFEST.md: 15 x 0x02 in this capture); a bad filter exits 2
// and points at the offending position.
func TestDisplayFilter(t *testing.T) {
	code, out, _ := runCmd(t, nil, "-r", siw+"basic_ib_read_bw_4096_v2_nocrc.pcap", "-Y", "iwarp_rdma.opcode == 2", "-T", "jsonl")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if n := strings.Count(out, "\n"); n != 15 {
		t.Errorf("%d records match, tshark counts 15 Read Responses", n)
	}
	code, _, stderr := runCmd(t, nil, "-r", siw+"crc_v2_rping.pcap", "-Y", "ddp.stag == && x")
	if code != 2 || !strings.Contains(stderr, "col 13") || !strings.Contains(stderr, "            ^") {
		t.Errorf("bad filter: exit %d, stderr %q", code, stderr)
	}
}

// TestCutAtomicFields: the Atomic Requests editcap -s 100 cut keep 26 of
// their 52 header octets (100 - 54 of Ethernet, IPv4 and TCP - 2 of MPA -
// 18 of DDP; testdata/snaplen/README.md), which -Y and -e reach by their
// registry names; the Atomic Responses, 12 octets, are whole.
func TestCutAtomicFields(t *testing.T) {
	const f = "../../testdata/snaplen/rfc7306_s100.pcap"
	code, out, stderr := runCmd(t, nil, "-r", f, "-Y", "rdmap.atomic.captured == 26", "-T", "fields",
		"-e", "frame", "-e", "rdmap.atomic.op", "-e", "rdmap.atomic.req_id", "-e", "rdmap.atomic.remote_to", "-e", "rdmap.atomic.add_swap_data")
	// Frames 10 and 12 of synth/rfc7306.pcap: FetchAdd req 1 at 0x1000 and
	// CmpSwap req 2 at 0x1008 (its truth file); the data fields lie past
	// the cut, so they are empty.
	if want := "10\t0\t1\t0x0000000000001000\t\n12\t2\t2\t0x0000000000001008\t\n"; code != 0 || out != want {
		t.Errorf("exit %d, output %q, want %q; stderr %s", code, out, want, stderr)
	}
}

// TestStatsAndFailOn: -z tables, --fail-on levels and report files. The
// Terminate of term_badwrite (frame 11 in MANIFEST.md) is an error finding;
// crc_v2_rping has no finding at all.
func TestStatsAndFailOn(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := runCmd(t, nil, "-r", siw+"term_badwrite.pcap", "-q", "-z", "conn", "-z", "findings",
		"--fail-on", "error", "--report", "junit:"+dir+"/r.xml", "--report", "sarif:"+dir+"/r.sarif", "--report", "html:"+dir+"/r.html")
	if code != 1 {
		t.Errorf("--fail-on error with a Terminate: exit %d (%s)", code, stderr)
	}
	if strings.Contains(out, "RDMA Write STag") {
		t.Errorf("-q with -z printed records")
	}
	for _, want := range []string{"iWARP connections", "192.0.2.1:60847", "rdmap.terminate"} {
		if !strings.Contains(out, want) {
			t.Errorf("-z output lacks %q", want)
		}
	}
	for _, f := range []string{"r.xml", "r.sarif", "r.html"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("report %s not written: %v", f, err)
		}
	}
	if code, _, _ := runCmd(t, nil, "-r", siw+"crc_v2_rping.pcap", "-q", "-z", "conn", "--fail-on", "note"); code != 0 {
		t.Errorf("clean capture with --fail-on note: exit %d", code)
	}
	if code, _, _ := runCmd(t, nil, "-r", siw+"crc_v2_rping.pcap", "-z", "bogus"); code != 2 {
		t.Errorf("-z bogus: exit %d, want 2", code)
	}
	if code, _, _ := runCmd(t, nil, "-r", siw+"crc_v2_rping.pcap", "--report", "pdf:x"); code != 2 {
		t.Errorf("--report pdf: exit %d, want 2", code)
	}
}

// TestRotatedWithEmptyFile: a glob over rotated files whose newest is
// empty, or that takes in a file that is no capture, decodes every other
// file (the Terminate of term_badwrite, an error finding, makes --fail-on
// error exit 1), names each bad file on stderr, and exits 3 with --strict
// and 1 or 0 otherwise, with one worker or two.
func TestRotatedWithEmptyFile(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(siw + "term_badwrite.pcap")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"ring-00.pcap": good, "ring-01.pcap": nil, "ring-02.pcap": []byte("<html>\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, alone, _ := runCmd(t, nil, "-r", siw+"term_badwrite.pcap")
	glob := filepath.Join(dir, "ring-*.pcap")
	for _, tc := range []struct {
		args []string
		code int
	}{
		{nil, 0},
		{[]string{"--fail-on", "error"}, 1},
		{[]string{"--strict"}, 3},
		{[]string{"-j", "2", "--fail-on", "error"}, 1},
		{[]string{"-w", filepath.Join(dir, "out.pcapng")}, 0},
	} {
		code, out, errs := runCmd(t, nil, append([]string{"-r", glob}, tc.args...)...)
		if code != tc.code || out != alone {
			t.Errorf("%v: exit %d (want %d), output:\n%s\nwant:\n%s", tc.args, code, tc.code, out, alone)
		}
		for _, want := range []string{"ring-01.pcap: not a pcap or pcapng file (only 0 octets)", "ring-02.pcap: not a pcap or pcapng file",
			"every packet of the other inputs"} {
			if !strings.Contains(errs, want) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, errs, want)
			}
		}
	}
}

// TestHexWithJSONL: -X with JSON Lines is said to be ignored, on stderr,
// and the output is that of JSON Lines alone.
func TestHexWithJSONL(t *testing.T) {
	f := siw + "crc_v2_iwtest_ops.pcap"
	_, plain, _ := runCmd(t, nil, "-r", f, "-T", "jsonl")
	code, out, errs := runCmd(t, nil, "-r", f, "-T", "jsonl", "-X")
	if code != 0 || out != plain || !strings.Contains(errs, "-X prints payload octets in text output only") {
		t.Errorf("exit %d, same output %v, stderr %q", code, out == plain, errs)
	}
}

// TestJSONLTablesOnStderr: with JSON Lines records on stdout, -z tables go
// to stderr and stdout stays JSON objects only; with -q (no records) they
// stay on stdout.
func TestJSONLTablesOnStderr(t *testing.T) {
	f := siw + "term_badwrite.pcap"
	_, plain, _ := runCmd(t, nil, "-r", f, "-T", "jsonl")
	code, out, errs := runCmd(t, nil, "-r", f, "-T", "jsonl", "-z", "conn", "-z", "findings")
	if code != 0 || out != plain {
		t.Errorf("exit %d, stdout differs from -T jsonl alone:\n%s", code, out)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !json.Valid([]byte(l)) {
			t.Errorf("not JSON on stdout: %q", l)
		}
	}
	if !strings.Contains(errs, "(-z conn)") || !strings.Contains(errs, "(-z findings)") {
		t.Errorf("stderr lacks the tables: %q", errs)
	}
	if _, out, _ := runCmd(t, nil, "-r", f, "-T", "jsonl", "-q", "-z", "conn"); !strings.Contains(out, "(-z conn)") {
		t.Errorf("-q: the table left stdout: %q", out)
	}
}

// TestTsharkSpellings: tshark's -V (packet details) and -x (packet bytes)
// print what -v and -X print.
func TestTsharkSpellings(t *testing.T) {
	for name, same := range map[string]string{"-V": "-v", "-x": "-X"} {
		ca, a, _ := runCmd(t, nil, "-r", siw+"term_badwrite.pcap", name)
		cb, b, _ := runCmd(t, nil, "-r", siw+"term_badwrite.pcap", same)
		if ca != 0 || a != b || len(a) < 1000 {
			t.Errorf("%s (exit %d, %d octets) differs from %s (exit %d, %d octets)", name, ca, len(a), same, cb, len(b))
		}
	}
}

// TestHelp: -h prints the usage and every option, exit 0, and nothing
// before the usage line; a bad flag prints one line and a pointer to -h.
func TestHelp(t *testing.T) {
	for _, h := range []string{"-h", "-help", "--help"} {
		code, out, errs := runCmd(t, nil, h)
		if code != 0 || !strings.HasPrefix(out+errs, "usage: iwarpdump") || !strings.Contains(out+errs, "  -Y EXPR") {
			t.Errorf("%s: exit %d, starts %q", h, code, firstLine(out+errs))
		}
	}
	code, out, errs := runCmd(t, nil, "-bogus")
	if code != 2 || strings.Count(out+errs, "\n") != 2 || !strings.HasSuffix(out+errs, "iwarpdump -h lists the options\n") {
		t.Errorf("-bogus: exit %d, %q", code, out+errs)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestReportsSayDamage: a capture cut short is in the reports iwarpdump
// writes (JUnit's error, SARIF's failed invocation), as on standard error.
func TestReportsSayDamage(t *testing.T) {
	data, err := os.ReadFile(siw + "term_badwrite.pcap")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.pcap")
	if err := os.WriteFile(cut, data[:1000], 0o644); err != nil {
		t.Fatal(err)
	}
	junit, sarif := filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.sarif")
	code, _, errs := runCmd(t, nil, "-r", cut, "-q", "--strict", "--report", "junit:"+junit, "--report", "sarif:"+sarif)
	if code != 3 || !strings.Contains(errs, "truncated record") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	j, _ := os.ReadFile(junit)
	s, _ := os.ReadFile(sarif)
	if !strings.Contains(string(j), `errors="1"`) || !strings.Contains(string(j), "truncated record") ||
		!strings.Contains(string(s), `"executionSuccessful": false`) || !strings.Contains(string(s), "truncated record") {
		t.Errorf("the reports do not say the capture is damaged:\n%s\n%s", j, s)
	}
}

// TestSnapHiddenNote: a capture cut by its snap length before any payload
// (editcap -s 60 of a real rping connection; testdata/snaplen/README.md)
// has no record, and standard error says why, with one worker and two, and
// under -q -z conn, whose table is empty; the whole capture says nothing
// of it.
func TestSnapHiddenNote(t *testing.T) {
	const note = "1 TCP connection could not be told iWARP or not"
	for _, args := range [][]string{
		{"-r", "../../testdata/snaplen/crc_v2_rping_s60.pcap"},
		{"-r", "../../testdata/snaplen/crc_v2_rping_s60.pcap", "-j", "2", "-T", "jsonl"},
		{"-r", "../../testdata/snaplen/crc_v2_rping_s60.pcap", "-q", "-z", "conn"},
	} {
		code, out, errs := runCmd(t, nil, args...)
		if code != 0 || strings.Contains(out, "192.0.2") || !strings.Contains(errs, note) || !strings.Contains(errs, "tcpdump -s 0") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	if code, _, errs := runCmd(t, nil, "-r", siw+"crc_v2_rping.pcap", "-q", "-z", "conn"); code != 0 || errs != "" {
		t.Errorf("the whole capture: exit %d, stderr %q", code, errs)
	}
}

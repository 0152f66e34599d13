package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// countFile counts a capture's frames and those f accepts.
func countFile(t *testing.T, path string, f func([]byte, int, layers.LinkType) bool) (all, passed int) {
	t.Helper()
	src, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for {
		p, err := src.Next()
		if err != nil {
			return
		}
		all++
		if f == nil || f(p.Data, p.WireLen, src.LinkType(p.Interface)) {
			passed++
		}
	}
}

// tcpdumpCount counts the packets tcpdump -r reads from path with expr, or
// -1 without tcpdump.
func tcpdumpCount(t *testing.T, path, expr string) int {
	t.Helper()
	bin, err := exec.LookPath("tcpdump")
	if err != nil {
		return -1
	}
	out, err := exec.Command(bin, "-n", "-r", path, expr).Output()
	if err != nil {
		t.Fatalf("tcpdump -r %s %q: %v", path, expr, err)
	}
	return strings.Count(string(out), "\n")
}

func TestCompileFileFilter(t *testing.T) {
	path := siw + "crc_v2_rping.pcap"
	for _, expr := range []string{"tcp", "tcp port 7174 or 4791", "not tcp", "src net 10.0.0.0/8 and tcp[13] == 2",
		"tcp[tcpflags] & tcp-syn != 0", "greater 100 and tcp port 7174", "ip6 protochain 6"} {
		f, err := compileFileFilter(strings.Fields(expr))
		if strings.Contains(expr, "protochain") {
			if err == nil && buildTags == "" {
				t.Errorf("%q: accepted by the pure-Go compiler", expr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		all, n := countFile(t, path, f)
		if want := tcpdumpCount(t, path, expr); want >= 0 && n != want {
			t.Errorf("%q: %d of %d frames pass, tcpdump reads %d", expr, n, all, want)
		}
	}
	// len, greater and less test the length on the wire, in a capture
	// whose frames the snap length cut too.
	cut := "../../testdata/synth/snaplen.pcap"
	for _, expr := range []string{"greater 1000", "len < 300", "less 1000 and tcp"} {
		f, err := compileFileFilter(strings.Fields(expr))
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		all, n := countFile(t, cut, f)
		if want := tcpdumpCount(t, cut, expr); want >= 0 && n != want || n == 0 || n == all {
			t.Errorf("%q on %s: %d of %d frames pass, tcpdump reads %d", expr, cut, n, all, want)
		}
	}
	if f, err := compileFileFilter(nil); f != nil || err != nil {
		t.Errorf("no expression: %v, %v", f != nil, err)
	}
	if _, err := compileFileFilter([]string{"port", "99999"}); err == nil {
		t.Error("port 99999 accepted")
	}
}

func parseLive(t *testing.T, args ...string) *liveFlags {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	l := addLiveFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestFileFilterFlags(t *testing.T) {
	dir := t.TempDir()
	path := siw + "crc_v2_rping.pcap"
	ff := filepath.Join(dir, "f")
	os.WriteFile(ff, []byte("# rping's connection\ntcp and\n  not port 22\n"), 0o644)
	l := parseLive(t, "-F", ff)
	f, err := l.fileFilter(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, n := countFile(t, path, f)
	g, _ := compileFileFilter([]string{"tcp and not port 22"})
	if _, m := countFile(t, path, g); n != m || n == 0 {
		t.Errorf("-F: %d frames, the same expression inline %d", n, m)
	}
	if _, err := l.fileFilter([]string{"tcp"}); err == nil {
		t.Error("-F and an expression both accepted")
	}
	// --bpf-raw: tcpdump -ddd -y EN10MB tcp (tcpdump 4.99.3).
	raw := filepath.Join(dir, "raw")
	os.WriteFile(raw, []byte("12\n40 0 0 12\n21 0 2 2048\n48 0 0 23\n21 6 7 6\n21 0 6 34525\n48 0 0 20\n21 3 0 6\n21 0 3 44\n48 0 0 54\n21 0 1 6\n6 0 0 262144\n6 0 0 0\n"), 0o644)
	l = parseLive(t, "--bpf-raw", "-F", raw)
	f, err = l.fileFilter(nil)
	if err != nil {
		t.Fatal(err)
	}
	g, _ = compileFileFilter([]string{"tcp"})
	_, n = countFile(t, path, f)
	if _, m := countFile(t, path, g); n != m || n == 0 {
		t.Errorf("--bpf-raw tcp: %d frames, compiled tcp %d", n, m)
	}
}

// TestWrapFile: -r with a filter and -w writes exactly the frames that
// pass, and decodes them.
func TestWrapFile(t *testing.T) {
	dir := t.TempDir()
	w := filepath.Join(dir, "out.pcapng")
	l := parseLive(t, "-w", w)
	src, err := capture.Open(siw + "crc_v2_rping.pcap")
	if err != nil {
		t.Fatal(err)
	}
	ps, code := l.wrapFile(src, []string{"tcp", "and", "not", "port", "22"}, io.Discard)
	if ps == nil {
		t.Fatalf("exit %d", code)
	}
	n := 0
	for {
		p, err := ps.Next()
		if err != nil {
			break
		}
		if p.Kind != capture.KindTCP {
			t.Fatalf("frame %d passed: %v", p.Frame, p.Kind)
		}
		n++
	}
	if err := ps.Close(); err != nil {
		t.Fatal(err)
	}
	all, m := countFile(t, w, nil)
	if all != n || m != n || n == 0 {
		t.Errorf("%d frames passed, %d written", n, all)
	}
	if _, code := l.wrapFile(src, []string{"port", "x-y"}, io.Discard); code != 2 {
		t.Errorf("bad filter: exit %d", code)
	}
}

func TestParseFileSize(t *testing.T) {
	for s, want := range map[string]int64{"1": 1e6, "0.5": 5e5, "10k": 10240, "2M": 2 << 20, "1g": 1 << 30, "": 0} {
		if got, err := parseFileSize(s); err != nil || got != want {
			t.Errorf("parseFileSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"x", "-1", "0", "k"} {
		if _, err := parseFileSize(s); err == nil {
			t.Errorf("parseFileSize(%q) accepted", s)
		}
	}
}

// TestWrapFileLinkType: -w from a pcapng file, or a pcapng file of our
// own, keeps the link type: tshark decodes the frames written as
// Ethernet, in pcapng and pcap. (The link type was asked before the
// file's interface description was read: 0 in pcapng, 65535 in pcap.)
func TestWrapFileLinkType(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	dir := t.TempDir()
	ng := filepath.Join(dir, "in.pcapng")
	if code, _, errs := runCmd(t, nil, "-r", siw+"crc_v2_rping.pcap", "-w", ng, "-q"); code != 0 {
		t.Fatalf("-w pcapng: exit %d: %s", code, errs)
	}
	for _, c := range []struct {
		in   string
		args []string
	}{
		{ng, nil}, {ng, []string{"--pcap"}}, {ng, []string{"tcp port 7174"}},
		{"../../testdata/midstream/iwtest_ops_from_frame15.pcap", []string{"--pcap"}},
	} {
		out := filepath.Join(dir, "out")
		args := append([]string{"-r", c.in, "-q", "-w", out}, c.args...)
		if code, _, errs := runCmd(t, nil, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		got, err := exec.Command(tshark, "-r", out, "-T", "fields", "-e", "frame.protocols").Output()
		if err != nil {
			t.Fatalf("%v: tshark: %v", args, err)
		}
		lines := strings.Split(strings.TrimSpace(string(got)), "\n")
		for i, l := range lines {
			if !strings.HasPrefix(l, "eth:") {
				t.Fatalf("%v: tshark reads frame %d of the -w file as %q, not Ethernet", args, i+1, l)
			}
		}
		if len(lines) < 40 {
			t.Errorf("%v: %d frames written", args, len(lines))
		}
	}
}

// TestWriteLinkTypes: -w of captures of two link types merged (Ethernet
// and native InfiniBand) writes each packet on an interface of its own
// link type, so that the file decodes as its inputs do (every packet had
// the first one's link type: 10 records back of 83); --pcap, which holds
// one link type, is refused before the decode (exit 2), and the packets a
// pcap file cannot hold (a pcapng input's second interface) are decoded,
// not written, and said (exit 1).
func TestWriteLinkTypes(t *testing.T) {
	dir := t.TempDir()
	ins := []string{"-r", siw + "crc_v2_rping.pcap", "-r", "../../testdata/synthext/ib-cm-native.pcap"}
	_, want, _ := runCmd(t, nil, append(ins, "-T", "jsonl")...)
	ng := filepath.Join(dir, "merged.pcapng")
	if code, _, errs := runCmd(t, nil, append(ins, "-T", "jsonl", "-w", ng)...); code != 0 {
		t.Fatalf("-w pcapng: exit %d: %s", code, errs)
	}
	if _, got, _ := runCmd(t, nil, "-r", ng, "-T", "jsonl"); got != want || strings.Count(want, "\n") != 83 {
		t.Errorf("the -w file decodes to %d records, its inputs to %d", strings.Count(got, "\n"), strings.Count(want, "\n"))
	}
	code, _, errs := runCmd(t, nil, append(ins, "-q", "-w", filepath.Join(dir, "merged.pcap"), "--pcap")...)
	if code != 2 || !strings.Contains(errs, "link type 1") || !strings.Contains(errs, "247") {
		t.Errorf("--pcap of two link types: exit %d: %s", code, errs)
	}
	code, got, errs := runCmd(t, nil, "-r", ng, "-T", "jsonl", "-w", filepath.Join(dir, "one.pcap"), "--pcap")
	if code != 1 || got != want || !strings.Contains(errs, "50 packets (the first of link type 1, the file's is 247) not written") {
		t.Errorf("--pcap of a pcapng file of two link types: exit %d, %d records: %s", code, strings.Count(got, "\n"), errs)
	}
}

// TestInputUsageErrors: what names no file to read, or would destroy one, is
// refused before anything is decoded (exit 2): a bad -r pattern (it
// exited 0, decoding nothing), -w naming a file -r reads (it cut the file
// short as it read it, and exited 0 with a third of its packets).
func TestInputUsageErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pcap")
	orig, err := os.ReadFile(siw + "crc_v2_rping.pcap")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-r", filepath.Join(dir, "[")},
		{"-r", in, "-w", in},
		{"-r", siw + "crc_v2_iwtest_ops.pcap", "-r", in, "-w", filepath.Join(dir, ".", "in.pcap"), "--pcap"},
	} {
		code, out, errs := runCmd(t, nil, args...)
		if code != 2 || out != "" || errs == "" {
			t.Errorf("%v: exit %d, %d octets out: %s", args, code, len(out), errs)
		}
	}
	if now, err := os.ReadFile(in); err != nil || !bytes.Equal(now, orig) {
		t.Errorf("the input was changed: %v", err)
	}
}

// TestWriteFails: a -w file that cannot be written (the device full) is
// said once and exits 1, with or without a capture filter; it exited 0
// in silence, or as damage of the input ("decoded N packets before the
// damage").
func TestWriteFails(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	for _, args := range [][]string{nil, {"tcp port 7174"}} {
		args = append([]string{"-r", siw + "crc_v2_iwtest_ops.pcap", "-q", "-w", "/dev/full"}, args...)
		code, _, errs := runCmd(t, nil, args...)
		if code != 1 || strings.Count(errs, "no space left on device") != 1 || strings.Contains(errs, "damage") {
			t.Errorf("%v: exit %d, stderr:\n%s", args, code, errs)
		}
	}
}

// TestOptionChecks: what tcpdump refuses is refused (exit 2): -s past
// 262144, and -r with -i (it captured live, ignoring the file); a -F file
// may end lines with '#' comments, as tcpdump's.
func TestOptionChecks(t *testing.T) {
	f := siw + "crc_v2_rping.pcap"
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-i", "lo", "-s", "300000"}, "invalid snaplen 300000"},
		{[]string{"-r", f, "-i", "lo"}, "-r and -i both given"},
	} {
		if code, _, errs := runCmd(t, nil, c.args...); code != 2 || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, errs)
		}
	}
	ff := filepath.Join(t.TempDir(), "filter")
	if err := os.WriteFile(ff, []byte("tcp port 7174 # iWARP\n# a line of comment\nand host 192.0.2.1 # the server\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c1, o1, e1 := runCmd(t, nil, "-r", f, "-F", ff)
	c2, o2, _ := runCmd(t, nil, "-r", f, "tcp port 7174 and host 192.0.2.1")
	if c1 != 0 || c1 != c2 || o1 != o2 || o1 == "" {
		t.Errorf("-F with comments: exit %d (%s), %d octets; the expression: exit %d, %d octets", c1, e1, len(o1), c2, len(o2))
	}
}

// TestDumpProgram: -d, -dd and -ddd print the compiled filter as tcpdump
// does, for the -r file's link type, and exit; the -ddd program, read
// back with --bpf-raw, selects the frames tcpdump selects with the
// expression.
func TestDumpProgram(t *testing.T) {
	f := siw + "crc_v2_iwtest_ops.pcap"
	for _, expr := range []string{"tcp port 70000", "tcp port 7174", "host 192.0.2.1 and not port 22", "ip6 or udp"} {
		code, ddd, errs := runCmd(t, nil, "-ddd", "-r", f, expr)
		if strings.Contains(expr, "70000") {
			if code != 2 || !strings.Contains(errs, "70000") {
				t.Errorf("%q: exit %d: %s", expr, code, errs)
			}
			continue
		}
		if code != 0 || !strings.HasPrefix(ddd, strconv.Itoa(strings.Count(ddd, "\n")-1)+"\n") {
			t.Fatalf("-ddd %q: exit %d, %q (%s)", expr, code, ddd, errs)
		}
		_, d, _ := runCmd(t, nil, "-d", "-r", f, expr)
		_, dd, _ := runCmd(t, nil, "-dd", "-r", f, expr)
		n := strings.Count(ddd, "\n") - 1
		if strings.Count(d, "\n") != n || strings.Count(dd, "\n") != n || !strings.HasPrefix(d, "(000) ") || !strings.HasPrefix(dd, "{ 0x") {
			t.Errorf("%q: -d %q, -dd %q for %d instructions", expr, d, dd, n)
		}
		raw := filepath.Join(t.TempDir(), "prog")
		if err := os.WriteFile(raw, []byte(ddd), 0o644); err != nil {
			t.Fatal(err)
		}
		_, withRaw, _ := runCmd(t, nil, "-r", f, "-w", filepath.Join(t.TempDir(), "o.pcap"), "--pcap", "-q", "--bpf-raw", "-F", raw)
		_, withExpr, _ := runCmd(t, nil, "-r", f, "-q", expr)
		if withRaw != withExpr {
			t.Errorf("%q: the -ddd program decodes to %d octets, the expression to %d", expr, len(withRaw), len(withExpr))
		}
		if want := tcpdumpCount(t, f, expr); want >= 0 {
			all, passed := countFile(t, f, nil)
			ws, code := parseLive(t, "--bpf-raw", "-F", raw).wrapFile(mustOpen(t, f), nil, io.Discard)
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			got := 0
			for {
				if _, err := ws.Next(); err != nil {
					break
				}
				got++
			}
			ws.Close()
			if got != want {
				t.Errorf("%q: the -ddd program keeps %d of %d frames (%d), tcpdump %d", expr, got, all, passed, want)
			}
		}
	}
}

// TestDumpProgramIface: -d for an interface that does not exist fails, as
// tcpdump -d -i does ("No such device exists"); it printed Ethernet's
// program. An interface -D lists, by name or number, gives its program.
func TestDumpProgramIface(t *testing.T) {
	if code, out, errs := runCmd(t, nil, "-d", "-i", "nosuch0", "tcp"); code != 2 || out != "" || !strings.Contains(errs, "nosuch0: no such interface") {
		t.Errorf("-d -i nosuch0: exit %d, out %q, err %q", code, out, errs)
	}
	if code, out, errs := runCmd(t, nil, "-d", "-i", "lo", "tcp"); code != 0 || !strings.HasPrefix(out, "(000) ") {
		t.Errorf("-d -i lo: exit %d, out %q, err %q", code, out, errs)
	}
}

func mustOpen(t *testing.T, path string) *capture.Source {
	t.Helper()
	src, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestFileFilterLinkType: a capture filter the pure-Go compiler cannot
// compile for an input's link type (BSD loopback, native InfiniBand) is
// refused before anything is decoded (exit 2, the file and the link type
// named), as tcpdump stops when it cannot compile the filter for the
// file's link type; every frame of such a file was rejected without a
// word, and the run exited 0. The tcpdump verdicts are noted for each
// case: where tcpdump reads the file with the expression, the refusal is
// the compiler's documented limit (its link types), not libpcap's.
func TestFileFilterLinkType(t *testing.T) {
	dir := t.TempDir()
	// A BSD loopback (DLT_NULL) capture of one IPv4 TCP segment, the
	// address family in the writer's (little-endian) byte order.
	ipTCP := []byte{
		0x45, 0, 0, 44, 0, 1, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
		0x1c, 0x06, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0x03, 0xe8, 0, 0, 0, 0, 'a', 'b', 'c', 'd',
	}
	frame := append([]byte{2, 0, 0, 0}, ipTCP...)
	null := filepath.Join(dir, "null.pcap")
	hdr := []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0}
	rec := []byte{1, 0, 0, 0, 0, 0, 0, 0, byte(len(frame)), 0, 0, 0, byte(len(frame)), 0, 0, 0}
	if err := os.WriteFile(null, append(append(hdr, rec...), frame...), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := tcpdumpCount(t, null, "tcp port 80"); n != 1 && n != -1 {
		t.Fatalf("tcpdump reads %d packets of the loopback capture with tcp port 80, want 1", n)
	}
	ib := "../../testdata/synthext/ib-cm-native.pcap"
	for _, tc := range []struct {
		files []string
		expr  string
		name  string // the file the error names
	}{
		{[]string{null}, "tcp port 80", null}, // tcpdump: 1 packet
		{[]string{null}, "ip", null},          // tcpdump: 1 packet
		{[]string{ib}, "tcp", ib},             // tcpdump refuses it too (libpcap has no InfiniBand link-layer filtering)
		{[]string{ib}, "len > 40", ib},        // tcpdump: 8 packets
		{[]string{siw + "crc_v2_rping.pcap", ib}, "tcp port 7174", ib},
	} {
		var args []string
		for _, f := range tc.files {
			args = append(args, "-r", f)
		}
		code, out, errs := runCmd(t, nil, append(args, "-T", "jsonl", tc.expr)...)
		if code != 2 || out != "" || !strings.Contains(errs, tc.name) || !strings.Contains(errs, "not supported by the pure-Go filter compiler") {
			t.Errorf("%v %q: exit %d, %d octets out: %s", tc.files, tc.expr, code, len(out), errs)
		}
	}
	// Without a filter, or with one for a link type it handles, nothing
	// changes.
	for _, args := range [][]string{{"-r", null}, {"-r", ib}, {"-r", siw + "crc_v2_rping.pcap", "tcp"}} {
		if code, _, errs := runCmd(t, nil, append(args, "-q")...); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
	}
}

// TestFileFilterLaterLinkType: a pcapng file whose second interface is of
// a link type the capture filter cannot be compiled for (native
// InfiniBand, as tcpdump cannot filter "tcp" on it either) gives the
// frames of its first interface the filter passes, and says once that the
// other interface's frames are left out; they were dropped without a word.
func TestFileFilterLaterLinkType(t *testing.T) {
	ng := filepath.Join(t.TempDir(), "merged.pcapng")
	ins := []string{"-r", siw + "crc_v2_rping.pcap", "-r", "../../testdata/synthext/ib-cm-native.pcap"}
	if code, _, errs := runCmd(t, nil, append(ins, "-q", "-w", ng)...); code != 0 {
		t.Fatalf("-w pcapng: exit %d: %s", code, errs)
	}
	_, want, _ := runCmd(t, nil, "-r", siw+"crc_v2_rping.pcap", "-T", "jsonl")
	code, got, errs := runCmd(t, nil, "-r", ng, "-T", "jsonl", "tcp")
	// (Frame numbers differ: the merged file interleaves the two.)
	if code != 0 || strings.Count(got, "\n") != strings.Count(want, "\n") || strings.Contains(got, `"type":"cm"`) {
		t.Errorf("exit %d, %d records, want the rping capture's %d: %s", code, strings.Count(got, "\n"), strings.Count(want, "\n"), errs)
	}
	if strings.Count(errs, "cannot be compiled for link type") != 1 || !strings.Contains(errs, "left out") {
		t.Errorf("stderr: %q", errs)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// fieldAliases are Wireshark fields of the DDP/RDMAP header that -T fields
// prints by the same names, and how their values compare: "num" as numbers
// (tshark prints the opcode in hex and the invalidated STag in decimal,
// iwarpdump the other way round), "set" as the set of values of a frame
// (tshark prints a frame's address once, iwarpdump once for each FPDU),
// otherwise as text, so that the hex widths are tshark's.
var fieldAliases = []struct{ name, cmp string }{
	{"iwarp_rdma.opcode", "num"}, {"iwarp_ddp.stag", ""}, {"iwarp_ddp.tagged_offset", ""},
	{"iwarp_ddp.msn", ""}, {"iwarp_ddp.qn", ""}, {"iwarp_ddp.mo", ""},
	{"iwarp_ddp.last_flag", ""}, {"iwarp_ddp.tagged_flag", ""}, {"iwarp_ddp.dv", ""}, {"iwarp_rdma.version", ""},
	{"iwarp_rdma.sinkstag", ""}, {"iwarp_rdma.sinkto", ""}, {"iwarp_rdma.rdmardsz", ""},
	{"iwarp_rdma.srcstag", ""}, {"iwarp_rdma.srcto", ""}, {"iwarp_rdma.inval_stag", "num"},
	{"iwarp_mpa.ulpdulength", ""}, {"iwarp_mpa.crc", ""}, {"iwarp_mpa.crc_check", ""},
	{"iwarp_ddp.rsvd", ""}, {"iwarp_rdma.rsv", ""}, {"iwarp_rdma.term_layer", ""}, {"iwarp_rdma.term_hdrct_m", ""},
	{"iwarp_rdma.term_etype", ""}, {"iwarp_rdma.term_errcode", ""},
	{"iwarp_rdma.term_etype_rdma", ""}, {"iwarp_rdma.term_etype_ddp", ""}, {"iwarp_rdma.term_etype_llp", ""},
	{"iwarp_rdma.term_errcode_rdma", ""}, {"iwarp_rdma.term_errcode_ddp_tagged", ""},
	{"iwarp_rdma.term_errcode_ddp_untagged", ""}, {"iwarp_rdma.term_errcode_llp", ""},
	{"iwarp_rdma.atomic.opcode", ""}, {"iwarp_rdma.atomic.request_identifier", ""},
	{"iwarp_rdma.atomic.remote_stag", "num"}, {"iwarp_rdma.atomic.remote_tagged_offset", "num"},
	{"iwarp_rdma.atomic.original_request_identifier", ""}, {"iwarp_rdma.atomic.original_remote_data_value", ""},
	{"iwarp_rdma.atomic.add_data", ""}, {"iwarp_rdma.atomic.add_mask", ""}, {"iwarp_rdma.atomic.swap_data", ""},
	{"iwarp_rdma.atomic.swap_mask", ""}, {"iwarp_rdma.atomic.compare_data", ""}, {"iwarp_rdma.atomic.compare_mask", ""},
	{"ip.src", "set"}, {"ip.dst", "set"}, {"ipv6.src", "set"}, {"tcp.srcport", "set"}, {"tcp.dstport", "set"},
	{"tcp.stream", "set"},
}

// TestFieldsAsTshark: -T fields -e with Wireshark's names prints, for every
// FPDU tshark decodes in the real and synthetic captures, what tshark -T
// fields prints for its frame. tshark prints a line per frame, its FPDUs'
// values joined by commas; iwarpdump a line per FPDU, whose last frame
// (frames, occurrence=l) is the frame tshark shows it in. Frames tshark
// does not decode (FPDUs that do not start a segment, markers) are not
// compared. Two differences are iwarpdump's on purpose: a Terminate in
// Linux siw's layout (rdmap.term.siw_layout) is decoded as siw meant it,
// so its term fields are not compared; and in a frame cut short by the
// snap length, tshark stops at the first FPDU that is not whole, where
// iwarpdump decodes the headers that were captured (tshark's values are
// the first of iwarpdump's there).
func TestFieldsAsTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	// The siw captures, and synthetic ones with several FPDUs a frame, an
	// FPDU over several frames, a frame cut short and Terminates.
	files, _ := filepath.Glob("../../testdata/siw/*.pcap")
	for _, f := range []string{"mss-span", "rev1-nocrc", "rev2-p2p-read-rtr", "rfc7306", "snaplen", "terminate-siw", "terminate-rdmap", "terminate-ddp", "terminate-llp"} {
		files = append(files, "../../testdata/synth/"+f+".pcap")
	}
	files = append(files, otherTerminates(t)...)
	files = append(files, atomicOps(t))
	targs := []string{"-Y", "iwarp_ddp_rdmap", "-T", "fields", "-e", "frame.number", "-e", "frame.cap_len", "-e", "frame.len"}
	oargs := []string{"-Y", "fpdu", "-T", "fields", "-E", "occurrence=l", "-e", "frames", "-e", "rdmap.term.siw_layout"}
	for _, a := range fieldAliases {
		targs = append(targs, "-e", a.name)
		oargs = append(oargs, "-e", a.name)
	}
	frames, values := 0, 0
	for _, f := range files {
		out, err := exec.Command(tshark, append([]string{"-r", f}, targs...)...).Output()
		if err != nil {
			t.Fatalf("tshark %s: %v", f, err)
		}
		code, mine, errs := runCmd(t, nil, append([]string{"-r", f}, oargs...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, errs)
		}
		byFrame := map[string][][]string{}
		for _, l := range strings.Split(strings.TrimSuffix(mine, "\n"), "\n") {
			if l == "" {
				continue
			}
			c := strings.Split(l, "\t")
			if len(c) != len(fieldAliases)+2 {
				t.Fatalf("%s: line %q has %d columns", f, l, len(c))
			}
			byFrame[c[0]] = append(byFrame[c[0]], c[1:])
		}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l == "" {
				continue
			}
			c := strings.Split(l, "\t")
			cut := c[1] != c[2]
			c = append(c[:1], c[3:]...)
			rows := byFrame[c[0]]
			if len(rows) == 0 {
				t.Errorf("%s frame %s: tshark decodes %q, iwarpdump has no FPDU ending there", filepath.Base(f), c[0], l)
				continue
			}
			frames++
			siwTerm := slices.ContainsFunc(rows, func(r []string) bool { return r[0] == "1" })
			for i, a := range fieldAliases {
				if siwTerm && strings.HasPrefix(a.name, "iwarp_rdma.term_") {
					continue
				}
				var vals []string
				for _, r := range rows {
					if r[i+1] != "" {
						vals = append(vals, r[i+1])
					}
				}
				want := c[i+1]
				if want != "" {
					values++
				}
				if n := strings.Count(want, ",") + 1; cut && want != "" && len(vals) > n {
					vals = vals[:n]
				}
				got := strings.Join(vals, ",")
				switch a.cmp {
				case "num":
					want, got = numbers(t, want), numbers(t, got)
				case "set":
					slices.Sort(vals)
					got = strings.Join(slices.Compact(vals), ",")
				}
				if got != want {
					t.Errorf("%s frame %s: %s = %q, tshark %q", filepath.Base(f), c[0], a.name, got, want)
				}
			}
		}
	}
	if frames < 350 || values < 2500 {
		t.Errorf("only %d frames, %d values compared", frames, values)
	}
	t.Logf("%d frames of %d captures, %d values as tshark's", frames, len(files), values)
}

// otherTerminates writes captures of the Terminates whose code tshark puts
// in iwarp_rdma.term_errcode rather than a per-layer field (an RDMAP Local
// Catastrophic Error, a DDP error of neither buffer model, an LLP error
// other than an MPA one, a layer no RFC defines), and one of each per-layer
// field not in the bundled captures (RDMAP Remote Operation, DDP
// Untagged). Each is the named terminate-ddp scenario with its Terminate
// replaced.
func otherTerminates(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i, tm := range []rdmap.Terminate{
		{Layer: 0, EType: 0, Code: 0},
		{Layer: 0, EType: 2, Code: 6},
		{Layer: 1, EType: 0, Code: 0},
		{Layer: 1, EType: 2, Code: 1},
		{Layer: 2, EType: 1, Code: 3},
		{Layer: 5, EType: 7, Code: 0x42},
	} {
		sc, ok := synth.Named("terminate-ddp", 1)
		if !ok {
			t.Fatal("no scenario terminate-ddp")
		}
		ops := sc.Conns[0].Ops
		ops[len(ops)-1].Term = tm
		var b bytes.Buffer
		if _, err := synth.Generate(sc, &b, nil); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, "term"+strconv.Itoa(i)+".pcap")
		if err := os.WriteFile(f, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// atomicOps writes a capture of an Atomic Request of each operation (RFC
// 7306 §6.1: FetchAdd, Swap, CmpSwap) and of two no RFC defines, each
// with its response: the rfc7306 scenario with its atomics replaced.
// tshark names their data fields by operation (filter's atomicAliases).
func atomicOps(t *testing.T) string {
	t.Helper()
	sc, ok := synth.Named("rfc7306", 1)
	if !ok {
		t.Fatal("no scenario rfc7306")
	}
	c := &sc.Conns[0]
	var ops []synth.Op
	for _, op := range c.Ops {
		if op.Kind != synth.Atomic {
			ops = append(ops, op)
		}
	}
	for i, op := range []rdmap.AtomicOp{rdmap.AtomicFetchAdd, rdmap.AtomicSwap, rdmap.AtomicCmpSwap, 3, 15} {
		ops = append(ops, synth.Op{Dir: synth.I2R, Kind: synth.Atomic,
			AtomicReq: rdmap.AtomicRequest{Op: op, ReqID: uint32(i + 1), RemoteSTag: 0x61, RemoteTO: 0x1000 + 8*uint64(i),
				AddSwapData: 5 + uint64(i), AddSwapMask: 0xff << i, CompareData: 9 + uint64(i), CompareMask: 0xf0 << i},
			AtomicResp: rdmap.AtomicResponse{ReqID: uint32(i + 1), OrigValue: 42}})
	}
	c.Ops = ops
	var b bytes.Buffer
	if _, err := synth.Generate(sc, &b, nil); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "atomics.pcap")
	if err := os.WriteFile(f, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// numbers rewrites comma-separated numbers (decimal or 0x hex) in decimal.
func numbers(t *testing.T, s string) string {
	t.Helper()
	if s == "" {
		return s
	}
	var out []string
	for _, v := range strings.Split(s, ",") {
		n, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			t.Fatalf("number %q: %v", v, err)
		}
		out = append(out, strconv.FormatUint(n, 10))
	}
	return strings.Join(out, ",")
}

// TestFieldsOptionsAsTshark: tshark's -E options (header, separator, quote,
// bom) give the same octets as tshark's on captures of one FPDU a frame,
// where tshark's line for a frame is iwarpdump's line for its FPDU.
func TestFieldsOptionsAsTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	fields := []string{"-e", "frame.number", "-e", "iwarp_ddp.stag", "-e", "iwarp_ddp.msn", "-e", "ip.src", "-e", "iwarp_ddp.tagged_offset"}
	for _, f := range []string{siw + "term_badwrite.pcap", siw + "crc_v2_rping.pcap"} {
		for _, opts := range [][]string{
			nil,
			{"-E", "header=y", "-E", "separator=,", "-E", "quote=d"},
			{"-E", "separator=/s", "-E", "quote=s", "-E", "bom=y"},
			{"-E", "header=y", "-E", "separator=|", "-E", "quote=n", "-E", "header=n"},
			{"-E", "separator=/t", "-E", "header=y"},
		} {
			args := append(append([]string{"-r", f, "-T", "fields"}, opts...), fields...)
			out, err := exec.Command(tshark, append(args, "-Y", "iwarp_ddp_rdmap")...).Output()
			if err != nil {
				t.Fatalf("tshark %v: %v", args, err)
			}
			code, mine, errs := runCmd(t, nil, append(args, "-Y", "fpdu")...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errs)
			}
			if mine != string(out) {
				t.Errorf("%s %v:\n got %q\nwant %q (tshark)", filepath.Base(f), opts, mine, out)
			}
		}
	}
}

// TestFieldsTimesAsTshark: frame.time_epoch and frame.time_relative are
// tshark's for the frame of each FPDU, and frame.time_delta_displayed is
// the difference of tshark's epoch times of a line and the line before,
// with -j 1 and -j 2, from a file and from standard input.
func TestFieldsTimesAsTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	f := siw + "crc_v2_iwtest_ops.pcap"
	out, err := exec.Command(tshark, "-r", f, "-T", "fields", "-e", "frame.number", "-e", "frame.time_epoch", "-e", "frame.time_relative").Output()
	if err != nil {
		t.Fatal(err)
	}
	epoch, rel := map[string]string{}, map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		c := strings.Split(l, "\t")
		epoch[c[0]], rel[c[0]] = c[1], c[2]
	}
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct {
		name  string
		stdin []byte
		args  []string
	}{{"-j 1", nil, []string{"-r", f}}, {"-j 2", nil, []string{"-r", f, "-j", "2"}}, {"stdin", data, []string{"-r", "-"}}} {
		code, mine, errs := runCmd(t, v.stdin, append(v.args, "-T", "fields", "-Y", "fpdu || message", "-e", "frame",
			"-e", "frame.time_epoch", "-e", "frame.time_relative", "-e", "frame.time_delta_displayed")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", v.name, code, errs)
		}
		lines := strings.Split(strings.TrimSuffix(mine, "\n"), "\n")
		if len(lines) < 100 {
			t.Fatalf("%s: %d lines", v.name, len(lines))
		}
		prev := ""
		for _, l := range lines {
			c := strings.Split(l, "\t")
			if c[1] != epoch[c[0]] || c[2] != rel[c[0]] {
				t.Errorf("%s frame %s: epoch %s relative %s, tshark %s %s", v.name, c[0], c[1], c[2], epoch[c[0]], rel[c[0]])
			}
			want := "0.000000000"
			if prev != "" {
				d := testutil.EpochNanos(t, epoch[c[0]]) - testutil.EpochNanos(t, epoch[prev])
				want = strconv.FormatInt(d/1e9, 10) + "." + strconv.FormatInt(1e9+d%1e9, 10)[1:]
			}
			if c[3] != want {
				t.Errorf("%s frame %s: delta displayed %s, want %s", v.name, c[0], c[3], want)
			}
			prev = c[0]
		}
	}
}

// TestFilterTimesAsTshark: -Y on frame.time_relative, frame.time_epoch and
// frame.time selects the frames tshark -Y selects with the same window,
// with one worker, two, and from standard input (where the first packet's
// time is only known once it is read).
func TestFilterTimesAsTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	f := siw + "crc_v2_iwtest_ops.pcap"
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ws, ours string }{
		{"frame.time_relative >= 0.15 && frame.time_relative < 0.17 && iwarp_ddp", "frame.time_relative >= 0.15 && frame.time_relative < 0.17 && fpdu"},
		{"frame.time_epoch > 1795313758.57 && iwarp_ddp", "frame.time_epoch > 1795313758.57 && fpdu"},
		{`frame.time < "Nov 22, 2026 02:15:58.53" && iwarp_ddp`, `frame.time < "2026-11-22 02:15:58.53Z" && fpdu`},
	} {
		cmd := exec.Command(tshark, "-r", f, "-Y", c.ws, "-T", "fields", "-e", "frame.number")
		cmd.Env = append(os.Environ(), "TZ=UTC")
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Fields(string(out))
		if len(want) < 3 {
			t.Fatalf("tshark -Y %q selects %d frames: the case tests little", c.ws, len(want))
		}
		for _, v := range []struct {
			name  string
			stdin []byte
			args  []string
		}{{"-j 1", nil, []string{"-r", f}}, {"-j 2", nil, []string{"-r", f, "-j", "2"}}, {"stdin", data, []string{"-r", "-"}}} {
			// The frame that completes each FPDU, as tshark shows it
			// there; the windows do not cut an FPDU's frames apart.
			code, mine, errs := runCmd(t, v.stdin, append(v.args, "-T", "fields", "-Y", c.ours, "-e", "frames", "-E", "occurrence=l")...)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", v.name, code, errs)
			}
			if got := strings.Fields(mine); !slices.Equal(got, want) {
				t.Errorf("%s -Y %q: frames %v, tshark -Y %q: %v", v.name, c.ours, got, c.ws, want)
			}
		}
	}
}

// TestFieldsOccurrence: occurrence f, l and a and the aggregator pick the
// values of a list (frames, and the codes of the attached findings) as
// the JSON Lines record lists them.
func TestFieldsOccurrence(t *testing.T) {
	multi := 0 // FPDUs over several frames
	for _, f := range []string{siw + "term_toolong.pcap", siw + "crc_v2_iwtest_ops.pcap", "../../testdata/synth/mss-span.pcap", "../../testdata/synth/rdmac.pcap"} {
		code, js, errs := runCmd(t, nil, "-r", f, "-T", "jsonl", "-Y", "fpdu")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var want [3][]string // first, last, all (with ;)
		for _, l := range strings.Split(strings.TrimSpace(js), "\n") {
			var rec struct {
				Frames   []uint64 `json:"frames"`
				Findings []struct {
					Code string `json:"code"`
				} `json:"findings"`
			}
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatal(err)
			}
			var fr, codes []string
			for _, n := range rec.Frames {
				fr = append(fr, strconv.FormatUint(n, 10))
			}
			for _, c := range rec.Findings {
				codes = append(codes, c.Code)
			}
			if len(fr) > 1 {
				multi++
			}
			pick := func(s []string, i int) string {
				switch {
				case len(s) == 0:
					return ""
				case i == 0:
					return s[0]
				case i == 1:
					return s[len(s)-1]
				}
				return strings.Join(s, ";")
			}
			for i := range want {
				want[i] = append(want[i], pick(fr, i)+"\t"+pick(codes, i))
			}
		}
		for i, occ := range []string{"occurrence=f", "occurrence=l", "occurrence=a"} {
			code, out, errs := runCmd(t, nil, "-r", f, "-T", "fields", "-Y", "fpdu", "-E", occ, "-E", "aggregator=;", "-e", "frames", "-e", "findings.code")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); !slices.Equal(got, want[i]) {
				t.Errorf("%s %s:\n got %q\nwant %q", filepath.Base(f), occ, got, want[i])
			}
		}
	}
	if multi < 10 {
		t.Errorf("only %d FPDUs over several frames", multi)
	}
}

// TestFieldsErrors: -e and -E mistakes exit 2 and say what to do.
func TestFieldsErrors(t *testing.T) {
	f := siw + "term_badwrite.pcap"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-T", "fields"}, "name one with -e"},
		{[]string{"-e", "ddp.stag"}, "add -T fields"},
		{[]string{"-T", "jsonl", "-e", "ddp.stag"}, "add -T fields"},
		{[]string{"-T", "fields", "-e", "ddp.stg"}, `did you mean "ddp.stag"`},
		{[]string{"-T", "fields", "-e", "iwarp_mpa"}, "a protocol"},
		{[]string{"-T", "fields", "-e", "fpdu"}, "a protocol or record type"},
		{[]string{"-T", "fields", "-e", "rdmap.term"}, "rdmap.term.layer"},
		{[]string{"-T", "fields", "-e", "findings"}, "findings.code"},
		{[]string{"-T", "fields", "-e", "frame", "-E", "header"}, "want name=value"},
		{[]string{"-T", "fields", "-e", "frame", "-E", "quote=x"}, "d (double)"},
		{[]string{"-T", "fields", "-e", "frame", "-E", "separator=ab"}, "one printable character"},
		{[]string{"-T", "fields", "-e", "frame", "-E", "occurrence=2"}, "f (first)"},
		{[]string{"-T", "fields", "-e", "frame", "-E", "colour=y"}, "unknown option"},
	} {
		code, out, errs := runCmd(t, nil, append([]string{"-r", f}, tc.args...)...)
		if code != 2 || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, out %q, stderr %q; want exit 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}

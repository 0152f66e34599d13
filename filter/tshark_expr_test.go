package filter

import (
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// tsharkExprs are filters of the forms of expr.go (functions, arithmetic,
// &, fields compared), written with Wireshark's names: each is compared
// with tshark 4.0 on every capture of tsharkExprFiles, as TestTshark
// compares (the frames of the records that match). ours, when set, is our
// spelling of the same filter. A filter that could match records tshark
// has no frame for (a message, a conn record: tcp.*, ip.*) is and-ed with
// a protocol. The comments give what each checks of tshark's semantics.
var tsharkExprs = []struct{ ws, ours string }{
	// len: the octets of bytes; of a number, its Wireshark type's
	// (FT_UINT8 1, FT_UINT16 2, FT_UINT32 4, FT_UINT64 8); of a boolean 0;
	// of an address 4.
	{ws: "len(iwarp_mpa.privatedata) == 4"},
	{ws: "len(iwarp_mpa.privatedata) > 10"},
	{ws: "len(iwarp_ddp.stag) == 4 && len(iwarp_ddp.tagged_offset) == 8"},
	{ws: "len(iwarp_rdma.opcode) == 1 && len(iwarp_ddp.tagged_flag) == 0 && len(iwarp_mpa.ulpdulength) == 2"},
	{ws: "len(iwarp_mpa.crc_check) == 4 && len(ip.src) == 4 && len(tcp.srcport) == 2 && len(tcp.stream) == 4"},
	{ws: "len(ipv6.dst) == 16 && iwarp_mpa"},
	{ws: "len (iwarp_mpa.privatedata) >= len(iwarp_mpa.pdlength)"},
	// count: the values in the record (a frame of one PDU: tshark's
	// occurrences); of an absent field, no value (count(f) == 0 never
	// holds).
	{ws: "count(iwarp_ddp.msn) == 1 && count(iwarp_rdma.opcode) == 1"},
	{ws: "count(iwarp_ddp.stag) == 0 || iwarp_rdma.opcode == 1"},
	{ws: "count(iwarp_ddp.stag) != 1 || iwarp_rdma.opcode == 2"},
	// string: a number in decimal (a hexadecimal field too), an address.
	{ws: `string(iwarp_rdma.opcode) == "3"`},
	{ws: `string(iwarp_ddp.stag) matches "^3" || string(iwarp_ddp.stag) contains "00"`},
	{ws: `string(tcp.dstport) == "7174" && iwarp_ddp`},
	{ws: `string(ip.src) == "192.0.2.2" && iwarp_mpa`},
	{ws: `string(ipv6.src) contains "::2" && iwarp_mpa`},
	{ws: `string(iwarp_ddp.msn) == string(iwarp_ddp.qn)`},
	// abs, max, min: over every value of every argument; an absent field
	// adds none, a value after the first is read as the first's type.
	{ws: "abs(iwarp_ddp.msn - 3) == 1"},
	{ws: "abs(-iwarp_ddp.qn) == 1"},
	{ws: "max(iwarp_ddp.msn, iwarp_ddp.qn) == 1"},
	{ws: "min(iwarp_ddp.msn, iwarp_ddp.stag) > 5"},
	{ws: "max(iwarp_ddp.msn, 3) == 3 && iwarp_mpa"},
	{ws: "max(iwarp_ddp.msn + 1, iwarp_ddp.qn) == 2"},
	{ws: "min(iwarp_ddp.msn, iwarp_ddp.mo, iwarp_ddp.qn) == 0"},
	{ws: "max(tcp.srcport, tcp.dstport) > 7174 && iwarp_ddp"},
	{ws: "min(ip.src, ip.dst) == 192.0.2.1 && iwarp_mpa"},
	{ws: "max(frame.time_relative, 0.02) == 0.02 && iwarp_mpa"},
	{ws: "iwarp_ddp.msn + max(iwarp_ddp.qn, iwarp_ddp.mo) == 2"},
	// Arithmetic: 32 bits for fields of up to 32, 64 for wider; a
	// difference below zero is signed; an overflow or a division by zero
	// leaves no value (!= and === then hold, as in tshark).
	{ws: "iwarp_ddp.msn + 1 == 3"},
	{ws: "iwarp_ddp.msn - 2 == -1"},
	{ws: "iwarp_ddp.msn - 3 < 0"},
	{ws: "iwarp_ddp.msn * 2 > 6"},
	{ws: "iwarp_ddp.msn / 2 == 1"},
	{ws: "iwarp_ddp.msn % 2 == 1"},
	{ws: "-iwarp_ddp.msn == -1"},
	{ws: "-iwarp_ddp.msn < 0 && -iwarp_ddp.msn > -3"},
	{ws: "iwarp_ddp.msn -1 == 0"},
	{ws: "iwarp_ddp.msn/2 == 2"},
	{ws: "{iwarp_ddp.msn + 1} * 2 == 6"},
	{ws: "iwarp_ddp.msn + 1 * 2 == 4"},
	{ws: "iwarp_ddp.msn & 3 + 1 == 0"},
	{ws: "iwarp_ddp.msn - 1 - 1 == 0"},
	{ws: "iwarp_ddp.stag + 0x40000000 != 1"},
	{ws: "iwarp_ddp.stag + 0x40000000 === 1"},
	{ws: "iwarp_ddp.stag + 0x40000000 > 0"},
	{ws: "iwarp_ddp.stag + 1 > iwarp_ddp.stag"},
	{ws: "iwarp_ddp.stag * 2 > 0 || iwarp_rdma.opcode == 1"},
	{ws: "iwarp_ddp.msn / 0 != 1"},
	{ws: "iwarp_ddp.msn / 0 == 0 || iwarp_ddp.msn % 0 == 0 || iwarp_rdma.opcode == 2"},
	{ws: "iwarp_ddp.msn / iwarp_ddp.qn == 1"},
	{ws: "iwarp_ddp.msn - 0x80000000 != 0"},
	{ws: "iwarp_ddp.msn - 3 != -5"},
	{ws: "iwarp_ddp.msn - 3 > -5"},
	{ws: "iwarp_ddp.msn * -1 == -1 || -iwarp_ddp.msn * -1 == 2"},
	{ws: "iwarp_ddp.msn !== -1 || iwarp_ddp.msn - 1 === -1"},
	{ws: "iwarp_ddp.tagged_offset + 1 > 0x10000"},
	{ws: "iwarp_ddp.tagged_offset - iwarp_ddp.tagged_offset == 0 && -iwarp_ddp.tagged_offset < 0"},
	{ws: "iwarp_ddp.tagged_offset & 0xfff == 0"},
	{ws: "iwarp_ddp.tagged_offset / 0x1000 > 0x55"},
	{ws: "iwarp_rdma.opcode + 2 == send"},
	{ws: `iwarp_rdma.opcode - 1 == "Read Request"`},
	{ws: "iwarp_rdma.opcode * 100 > 255"},
	{ws: "iwarp_rdma.opcode + 255 > 255"},
	{ws: "iwarp_rdma.opcode - 4 == -1"},
	{ws: "iwarp_mpa.ulpdulength * 100 > 65535"},
	{ws: "iwarp_rdma.rdmardsz / 2 == 32 || iwarp_rdma.rdmardsz - 4096 == 0"},
	{ws: "frame.time_relative + 1 > 1.035 && iwarp_ddp"},
	{ws: "-frame.time_relative < -0.035 && iwarp_ddp"},
	{ws: "frame.time_relative - frame.time_relative == 0 && iwarp_mpa"},
	{ws: "tcp.stream + 1 == 2 && iwarp_mpa"},
	// & on its own: a value not zero.
	{ws: "iwarp_rdma.opcode & 1"},
	{ws: "iwarp_rdma.opcode & 0x3 == 3"},
	{ws: "iwarp_rdma.opcode & 0x3 != 3"},
	{ws: "iwarp_rdma.opcode bitwise_and 2"},
	{ws: "iwarp_ddp.stag & 0xff00"},
	{ws: "!iwarp_ddp.msn - 1 && iwarp_ddp"},
	{ws: "iwarp_mpa.privatedata & ff:ff == 00:80"},
	{ws: "iwarp_mpa.privatedata & 00:00:00:01"},
	{ws: "iwarp_mpa.privatedata[1:] & 01"},
	{ws: "ip.src & 255.255.255.0 == 192.0.2.0 && iwarp_ddp"},
	{ws: "iwarp_mpa.res & 0x10"},
	{ws: "iwarp_mpa.crc_check & 1"},
	{ws: "iwarp_ddp.rsvd + 1 == 1"},
	// Fields compared with fields: every pair; an absent field, false.
	{ws: "iwarp_ddp.msn == iwarp_ddp.qn"},
	{ws: "iwarp_ddp.msn != iwarp_ddp.qn"},
	{ws: "iwarp_ddp.msn > iwarp_ddp.qn"},
	{ws: "iwarp_ddp.msn === iwarp_ddp.qn || iwarp_ddp.msn !== iwarp_ddp.mo"},
	{ws: "iwarp_ddp.mo == iwarp_ddp.qn"},
	{ws: "iwarp_ddp.msn == iwarp_rdma.opcode"},
	{ws: "iwarp_ddp.msn == iwarp_ddp.qn + 1"},
	{ws: "iwarp_ddp.msn == 1 + iwarp_ddp.qn"},
	{ws: "iwarp_ddp.msn == {1 + 1}"},
	{ws: "iwarp_ddp.msn != iwarp_ddp.stag || iwarp_ddp.msn == 1"},
	{ws: "iwarp_ddp.msn - 1 == -iwarp_ddp.qn"},
	{ws: "iwarp_ddp.msn == count(iwarp_ddp.qn)"},
	{ws: "tcp.srcport > tcp.dstport && iwarp_ddp"},
	{ws: "ip.src > ip.dst && iwarp_rdma"},
	{ws: "iwarp_ddp.tagged_flag == iwarp_ddp.last_flag"},
	// (With pd_len 0, tshark has no privatedata, the record an empty pd.)
	{ws: "iwarp_mpa.privatedata == iwarp_mpa.privatedata && iwarp_mpa.pdlength > 0"},
	{ws: "iwarp_mpa.privatedata[0:2] == iwarp_mpa.privatedata[2:2]"},
	{ws: "iwarp_mpa.privatedata contains iwarp_mpa.privatedata[1:2]"},
	{ws: "iwarp_ddp.msn in {iwarp_ddp.qn, 5}"},
	{ws: "iwarp_ddp.msn in {iwarp_ddp.stag, 5}"},
	{ws: "iwarp_ddp.msn not in {iwarp_ddp.qn} && iwarp_mpa"},
	{ws: "iwarp_rdma.opcode in {iwarp_ddp.msn..iwarp_ddp.qn}"},
	{ws: "iwarp_ddp.msn in {-iwarp_ddp.qn, +3}"},
	{ws: "iwarp_ddp.qn < iwarp_ddp.msn < 3"},
	{ws: "iwarp_ddp.msn == iwarp_ddp.msn == 1"},
	// Wireshark's fields that are computed here (wire.go), per layer or
	// operation (fields.go).
	{ws: "iwarp_rdma.term_errcode_ddp_tagged + 1 == 1"},
	{ws: "iwarp_rdma.term_layer - 1 == iwarp_rdma.term_etype_ddp - 1"},
	{ws: "iwarp_rdma.atomic.swap_data - iwarp_rdma.atomic.compare_data != 0"},
	{ws: "iwarp_rdma.atomic.add_data * 2 == 10"},
	{ws: "iwarp_rdma.atomic.opcode + 1 == 3"},
}

// tsharkExprFiles are the captures every filter of tsharkExprs is compared
// on: siw's (IPv4, IPv6, CRC or not, reads, writes, sends, Terminates) and
// generated ones (a DDP Terminate, atomics). Captures with frames that
// hold several FPDUs are left out (there a test of one record and
// tshark's of the frame can differ: doc.go), and so are those tshark does
// not decode (synth/tiny-segments.pcap). With -short, the first only.
var tsharkExprFiles = []string{
	"crc_v2_rping.pcap", "basic_ib_read_bw_4096_v2_nocrc.pcap", "crc_v2_iwtest_ops.pcap",
	"siw6_rping_v2_crc.pcap", "../synth/rfc7306.pcap", "../synth/terminate-ddp.pcap",
}

// TestTsharkExpr compares every filter of tsharkExprs with tshark on every
// capture of tsharkExprFiles.
func TestTsharkExpr(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	var mu sync.Mutex
	matched := make([]bool, len(tsharkExprs))
	files := tsharkExprFiles
	if testing.Short() {
		files = files[:1]
	}
	for _, file := range files {
		path := filepath.Join("..", "testdata", "siw", file)
		ref := firstTime(t, path)
		rs := siw(t, file)
		for i, c := range tsharkExprs {
			ours := c.ours
			if ours == "" {
				ours = c.ws
			}
			t.Run(file+"/"+ours, func(t *testing.T) {
				t.Parallel()
				want, _ := tsharkFrames(t, tshark, path, c.ws, "")
				got, _ := ourFrames(t, mustCompile(t, ours).WithRef(ref), rs)
				if !slices.Equal(got, want) {
					t.Errorf("%q selects frames %v, tshark -Y %q selects %v", ours, got, c.ws, want)
				}
				if len(want) > 0 {
					mu.Lock()
					matched[i] = true
					mu.Unlock()
				}
			})
		}
	}
	t.Cleanup(func() {
		for i, m := range matched {
			if !m && !t.Failed() && !testing.Short() {
				t.Errorf("%q: tshark selects nothing in any capture: the filter tests nothing", tsharkExprs[i].ws)
			}
		}
	})
}

// tsharkRefused are filters of the forms of expr.go that tshark 4.0
// refuses: Compile refuses them too (TestSyntaxErrors has the messages,
// with iwarpkit's names).
var tsharkRefused = []string{
	"(iwarp_ddp.msn + 1) == 2", "1 + iwarp_ddp.msn == 2", "{1 + iwarp_ddp.msn} == 2", "abs(-3) == 3",
	`iwarp_ddp.msn + "1" == 2`, "iwarp_rdma.opcode + send == 2", "iwarp_rdma.opcode + 256 == 3",
	"iwarp_mpa.ulpdulength * 100000 > 0", "iwarp_ddp.msn - 1 == -2147483648", "iwarp_ddp.msn-1 == 0",
	"len(iwarp_mpa.privatedata)", "{len(iwarp_mpa.privatedata)}", "len()", "count(iwarp_ddp.stag)",
	"foo(iwarp_ddp.msn) == 1", "LEN(iwarp_mpa.privatedata) == 4", "length(iwarp_ddp.msn) == 4",
	"max() == 2", "max(1, iwarp_ddp.msn) == 1", "max(iwarp_ddp.msn, iwarp_rdma.opcode) == 3",
	"abs(iwarp_ddp.msn, iwarp_ddp.qn) == 1", "count(iwarp_ddp.msn, iwarp_ddp.qn) == 1",
	`len("abc") == 3`, "len(iwarp_mpa.privatedata[0:2]) == 2", "count(iwarp_ddp.msn + 1) == 1",
	`upper(iwarp_rdma.opcode) == "X"`, `upper(string(ip.src)) == "X"`, `string(1) == "1"`,
	`string(iwarp_mpa.privatedata) == "x"`, `string(iwarp_ddp.tagged_flag) == "1"`,
	`string(frame.time_relative) == "0"`, `string(iwarp_ddp.msn + 1) == "2"`,
	"iwarp_ddp.tagged_flag + 1 == 2", "iwarp_ddp.tagged_flag & 1", "-iwarp_ddp.tagged_flag == 0",
	"iwarp_ddp.control_field & 0x80", "frame.time_relative * 2 > 0.1", "frame.time + 1 > 0",
	"ip.src + 1 == 192.0.2.3", "iwarp_mpa.privatedata + 1", `iwarp_mpa.privatedata & "a"`,
	"iwarp_ddp.msn == ip.src", "iwarp_ddp.tagged_flag == iwarp_ddp.msn", "iwarp_ddp.msn == iwarp_mpa.privatedata",
	"iwarp_ddp.msn + 1 in {2}", "len(iwarp_mpa.privatedata) in {4}", "iwarp_ddp.msn + 1 contains 2",
	"--iwarp_ddp.msn == 1", "-{iwarp_ddp.msn + 1} == -2", "iwarp_ddp.msn in {iwarp_ddp.qn+1}",
	"iwarp_ddp.msn == $iwarp_ddp.qn", "string(ip.src) matches string(ip.src)",
	"len(iwarp_mpa.privatedata)[0:1] == 00", "{iwarp_ddp.msn == 1}", "iwarp_rdma.opcode & 0x3 in {1}",
	// Negative numbers past a signed 32-bit integer, or whose magnitude is
	// too big for the field.
	"iwarp_ddp.msn == -2147483648", "tcp.stream > -0x80000000", "tcp.stream == 4294967296", "tcp.srcport == -65536",
}

// TestTsharkRefuses: what tshark 4.0 refuses, Compile refuses.
func TestTsharkRefuses(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	path := filepath.Join("..", "testdata", "siw", "crc_v2_rping.pcap")
	for _, expr := range tsharkRefused {
		t.Run(expr, func(t *testing.T) {
			t.Parallel()
			if err := exec.Command(tshark, "-r", path, "-Y", expr, "-c", "1").Run(); err == nil {
				t.Errorf("tshark -Y %q: accepted", expr)
			}
			if _, err := Compile(expr); err == nil {
				t.Errorf("Compile(%q) accepts what tshark refuses", expr)
			}
		})
	}
}

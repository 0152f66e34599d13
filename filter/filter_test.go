package filter

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// kv builders for hand-made records.
func u(k string, v uint64) format.KV           { return format.KV{Key: k, Val: format.Uint(v)} }
func s(k, v string) format.KV                  { return format.KV{Key: k, Val: format.Str(v)} }
func b(k string, v bool) format.KV             { return format.KV{Key: k, Val: format.Bool(v)} }
func obj(k string, kvs ...format.KV) format.KV { return format.KV{Key: k, Val: format.Object(kvs)} }
func list(k string, vs ...format.Value) format.KV {
	return format.KV{Key: k, Val: format.List(vs)}
}

// Hand-made records, shaped like format.Fields output (JSONL.md).
var (
	recFPDU = []format.KV{u("v", 1), s("type", "fpdu"), u("frame", 12), s("ts", "2026-11-22T02:13:22.188476000Z"), u("conn", 0),
		s("src", "192.0.2.1:7471"), s("dst", "192.0.2.1:60847"), s("dir", "r2i"), u("seq", 100), u("len", 40),
		list("frames", format.Uint(11), format.Uint(12)), u("mpa.ulpdu_len", 34), u("mpa.pad", 0),
		list("mpa.markers", format.Object([]format.KV{u("seq", 512), u("fpduptr", 20), b("ok", true)}),
			format.Object([]format.KV{u("seq", 1024), u("fpduptr", 532), b("ok", false)})),
		u("mpa.crc", 0xdeadbeef), s("mpa.crc_status", "bad"),
		b("ddp.t", false), b("ddp.l", true), u("ddp.dv", 1), u("ddp.qn", 0), u("ddp.msn", 7), u("ddp.mo", 0),
		u("rdmap.rv", 1), u("rdmap.opcode", 3), s("rdmap.name", "Send"), u("payload_len", 16),
		list("findings",
			format.Object([]format.KV{s("severity", "error"), s("code", "mpa.crc_bad"), s("msg", "mpa: CRC mismatch"), list("frames", format.Uint(12)), s("ref", "RFC 5044 §4.1")}),
			format.Object([]format.KV{s("severity", "note"), s("code", "ddp.gap"), s("msg", "a gap"), list("frames", format.Uint(11), format.Uint(12)), s("ref", "RFC 5041")}))}
	recMPA = []format.KV{u("v", 1), s("type", "mpa"), u("frame", 4), s("ts", "2026-11-22T02:13:22.163398000Z"), u("conn", 0),
		s("kind", "request"), s("src", "192.0.2.1:60847"), s("dst", "192.0.2.1:7471"), s("dir", "i2r"), u("seq", 1),
		b("m", false), b("c", true), b("r", false), b("s", true), u("res", 0), u("rev", 2), u("pd_len", 6),
		{Key: "pd", Val: format.Bytes([]byte{0, 4, 0, 4, 'i', 'w'})},
		obj("enhanced", u("ird", 4), u("ord", 4), b("a", false), b("b", false), b("c", true), b("d", false), b("p2p", true),
			list("rtr", format.Str("write"))),
		list("frames", format.Uint(4))}
	recTerm = []format.KV{u("v", 1), s("type", "fpdu"), u("frame", 11), u("conn", 1),
		b("ddp.t", false), b("ddp.l", true), u("ddp.qn", 2), u("rdmap.opcode", 7), s("rdmap.name", "Terminate"),
		obj("rdmap.term", u("layer", 1), u("etype", 1), u("code", 0), b("m", true), b("d", true), b("r", false), u("ddp_seg_len", 64),
			obj("ddp", b("t", true), b("l", true), u("dv", 1), u("stag", 0x07bf1600), u("to", 0x7fe0b8347000)),
			obj("rdmap", u("rv", 1), u("opcode", 0), s("name", "RDMA Write")),
			s("text", "DDP Tagged Buffer Error: Invalid STag"))}
	recFinding = []format.KV{u("v", 1), s("type", "finding"), u("frame", 20), u("conn", 1),
		s("severity", "warning"), s("code", "ddp.msn_gap"), s("msg", "MSN gap: 4 then 6"), list("frames", format.Uint(19), format.Uint(20)), s("ref", "RFC 5041 §5.3")}
	recMessage = []format.KV{u("v", 1), s("type", "message"), u("frame", 30), u("conn", 0), s("dir", "r2i"),
		u("opcode", 2), s("name", "RDMA Read Response"), u("segments", 3), u("length", 4096), u("first_frame", 28), u("last_frame", 30),
		u("stag", 0x1234), u("to", 0), u("request_frame", 25), {Key: "latency_ns", Val: format.Int(51000)}}
	recConn = []format.KV{u("v", 1), s("type", "conn"), u("frame", 40), u("conn", 2),
		{Key: "initiator", Val: format.Null()}, {Key: "responder", Val: format.Null()}, s("state", "closed"),
		obj("mpa", u("rev", 2), b("crc", true), b("markers_i2r", false), b("markers_r2i", true), b("enhanced", true),
			u("ird", 4), u("ord", 4), b("p2p", false), list("rtr"), b("rejected", false)),
		u("ddp_version", 1), {Key: "interop", Val: format.Null()}, b("midstream", false), u("fpdus", 3), u("messages", 3),
		u("octets", 168), u("crc_errors", 0), u("findings", 2), u("first_frame", 1), u("last_frame", 40)}
	recNeg = []format.KV{u("v", 1), s("type", "message"), {Key: "latency_ns", Val: format.Int(-5)}}
)

var records = []struct {
	name string
	kvs  []format.KV
}{{"fpdu", recFPDU}, {"mpa", recMPA}, {"term", recTerm}, {"finding", recFinding}, {"message", recMessage}, {"conn", recConn}, {"neg", recNeg}}

// TestMatch checks each filter against the hand-made records: want lists
// the records it must match, by name.
func TestMatch(t *testing.T) {
	cases := []struct {
		expr string
		want string
	}{
		// Record-type shorthands.
		{"mpa", "fpdu mpa term"},
		{"iwarp_mpa", "fpdu mpa term"},
		{"ddp", "fpdu term"},
		{"iwarp_ddp", "fpdu term"},
		{"rdmap", "fpdu term"},
		{"iwarp_rdma", "fpdu term"},
		{"fpdu", "fpdu term"},
		{"message", "message neg"},
		{"finding", "finding"},
		{"conn", "conn"},
		{`type == "fpdu"`, "fpdu term"},
		{"conn == 2", "conn"},
		{"conn == 0", "fpdu mpa message"},
		{"frame > 20", "message conn"},
		{"frame.number >= 20", "finding message conn"},
		// Presence, booleans (bare = present, as in Wireshark).
		{"ddp.l", "fpdu term"},
		{"ddp.l == 1", "fpdu term"},
		{"ddp.t == 1", ""},
		{"ddp.t == 0", "fpdu term"},
		{"ddp.t == false", "fpdu term"},
		{"iwarp_ddp.tagged_flag != True", "fpdu term"},
		// Booleans are ordered, false before true, as in tshark 4.0.
		{"ddp.l > 0", "fpdu term"},
		{"ddp.t < true", "fpdu term"},
		{"ddp.t in {false..true}", "fpdu term"},
		{`ddp.t == "False"`, "fpdu term"},
		{"!ddp.t", "mpa finding message conn neg"},
		{"ddp.stag", ""},
		// Numbers: decimal, hex, octal, binary, negative, 64-bit.
		{"ddp.msn == 7", "fpdu"},
		{"ddp.msn == 0x7", "fpdu"},
		{"ddp.msn == 07", "fpdu"},
		{"ddp.msn == 0b111", "fpdu"},
		{"mpa.crc == 0xdeadbeef", "fpdu"},
		{"mpa.crc == 3735928559", "fpdu"},
		{"rdmap.opcode != 3", "term"},
		{"rdmap.opcode ne 7", "fpdu"},
		{"latency_ns > 50000", "message"},
		{"latency_ns < 0", "neg"},
		{"latency_ns > -6", "message neg"},
		{"latency_ns == -5", "neg"},
		{"latency_ns in {-10..-1}", "neg"},
		{"rdmap.term.ddp.to == 0x7fe0b8347000", "term"},
		// Strings.
		{`rdmap.name == "Send"`, "fpdu"},
		{`rdmap.name contains "min"`, "term"},
		{`rdmap.name matches "^send$"`, "fpdu"},
		{`rdmap.name ~ "(?-i)^send$"`, ""},
		{`rdmap.name < "T"`, "fpdu"},
		{`mpa.crc_status == "bad"`, "fpdu"},
		// tshark's crc_check is the checked CRC field read most
		// significant octet first (wire.go), not the verdict.
		{"iwarp_mpa.crc_check == 0xefbeadde", "fpdu"},
		{"iwarp_mpa.crc", ""},
		{`mpa.kind == "request"`, "mpa"},
		{`ts > "2026-11-22T02:13:22.17"`, "fpdu"},
		// Bytes.
		{"pd contains 69:77", "mpa"},
		{"pd contains 69-77", "mpa"},
		{"pd contains 0x69", "mpa"},
		{"pd contains 69", "mpa"},
		{`pd contains "iw"`, "mpa"},
		{`iwarp_mpa.privatedata == 00:04:00:04:69:77`, "mpa"},
		{"pd == 00.04.00.04.69.77", "mpa"},
		{"pd == 000400046977", "mpa"}, // tshark 4.0 takes octets without separators
		// Slices, as tshark's: [i:n] n octets from i, [i-j] i to j, [i],
		// [:n], [i:], negative offsets from the end; past the end, none.
		{"pd[4:2] == 69:77", "mpa"},
		{"pd[4-5] == \"iw\"", "mpa"},
		{"pd[-1] == 77 && pd[:2] == 00:04 && pd[5:] == 77 && pd[-2:] == 69:77", "mpa"},
		{"pd[5:2]", ""},
		{"pd[6:]", ""},
		{"pd[5:]", "mpa"},
		{"pd[0:2] != 00:04", ""},
		{"pd[0:9]", ""}, // absent when past the end
		{"!(pd[0:9] == 00)", "fpdu mpa term finding message conn neg"},
		{"pd[1:3] contains 04", "mpa"},
		{"pd[1:3] not in {04:00:04}", "fpdu term finding message conn neg"},
		{"pd contains 6977", "mpa"},
		{"pd > 00:04", "mpa"},
		// Objects and members.
		{"enhanced", "mpa"},
		{"enhanced.ird == 4", "mpa"},
		{"mpa.ird == 4", "mpa"},
		{"enhanced.p2p == 1", "mpa"},
		{`enhanced.rtr == "write"`, "mpa"},
		{`enhanced.rtr contains "rit"`, "mpa"},
		{"enhanced.rtr", "mpa"},
		{"rdmap.term", "term"},
		{"rdmap.term.code == 0", "term"},
		{"rdmap.term.m == 1 && rdmap.term.ddp_seg_len == 64", "term"},
		{"rdmap.term.ddp.stag == 0x07bf1600", "term"},
		{"rdmap.term.rdmap.opcode == 0", "term"},
		{`rdmap.term.rdmap.name == "RDMA Write"`, "term"},
		{`rdmap.term.text contains "STag"`, "term"},
		{"mpa.markers", "fpdu"},
		{"mpa.markers.ok == 0", "fpdu"},
		{"mpa.marker.fpduptr == 532", "fpdu"},
		{"iwarp_mpa.marker_fpduptr > 600", ""},
		// Lists: any, all.
		{"frames == 11", "fpdu"},
		{"frames == 12", "fpdu"},
		{"frames != 11", "mpa finding"},
		{"frames === 12", ""},
		{"frames === 4", "mpa"},
		{"frames !== 12", "fpdu mpa finding"},
		{"frames in {11..12}", "fpdu"},
		// not in is !(in), as tshark 4.0 reads it: true without the field.
		{"frames not in {11, 19}", "mpa term message conn neg"},
		{"frames > 19", "finding"},
		// Findings: finding records and attached findings.
		{`finding.severity == "error"`, "fpdu"},
		{`severity == "warning"`, "finding"},
		{`finding.severity in {"error", "warning"}`, "fpdu finding"},
		{`finding.severity != "note"`, "finding"},
		{`finding.code == "ddp.gap"`, "fpdu"},
		{`finding.code matches "^ddp\\."`, "fpdu finding"},
		{`findings.code contains "crc"`, "fpdu"},
		{"findings", "fpdu"},
		{"findings.frames == 11", "fpdu"},
		{"finding.msg", "fpdu finding"},
		{`finding.ref contains "5041"`, "fpdu finding"},
		// Message and conn keys.
		{`name == "RDMA Read Response" && length == 4096`, "message"},
		{"stag == 0x1234 and request_frame == 25", "message"},
		{"opcode == 2", "message"},
		{"mpa.markers_r2i == true", "conn"},
		{"fpdus == 3 && crc_errors == 0", "conn"},
		{`state == "closed"`, "conn"},
		{"initiator", ""},
		{"interop", ""},
		// A key of another type in another record is not the field:
		// conn's mpa.crc is a boolean, the FPDU CRC a number.
		{"mpa.crc", "fpdu"},
		{"mpa.rev == 2", "mpa"},
		// Functions (expr.go): len counts octets, and a number's width
		// on the wire; count the values; an absent field has no value.
		{"len(pd) == 6", "mpa"},
		{"len(rdmap.name) > 4", "term"},
		{"len(ddp.msn) == 4 && len(ddp.t) == 0 && len(rdmap.opcode) == 1", "fpdu"},
		{"count(frames) == 2", "fpdu finding"},
		{"count(findings) == 2 && count(findings.code) == 2 && count(mpa.markers) == 2", "fpdu"},
		{"count(ddp.stag) == 0", ""},
		{`upper(rdmap.name) == "SEND"`, "fpdu"},
		{`lower(rdmap.name) == "terminate"`, "term"},
		{`upper(msg) contains "GAP"`, "fpdu finding"},
		{`lower(rdmap.term.rdmap.name) == "rdma write"`, "term"},
		{`upper(rdmap.name) matches "^send$"`, "fpdu"},
		{`lower(rdmap.name) matches "(?-i)^SEND"`, ""},
		{`string(ddp.msn) == "7" && string(mpa.crc) == "3735928559"`, "fpdu"},
		{`string(latency_ns) == "-5"`, "neg"},
		{"abs(latency_ns) == 5", "neg"},
		{"abs(latency_ns - 51005) == 5", "message"},
		{"max(frames) == 12", "fpdu"},
		{"min(frames, 100) == 4", "mpa"},
		{"max(frames, first_frame) == 28", "message"},
		{`max(rdmap.name) == "Send"`, "fpdu"},
		// Arithmetic: a difference below zero is signed; an overflow or a
		// division by zero leaves no value (!= and === then hold); every
		// pair of two lists' values.
		{"ddp.msn + 1 == 8 && ddp.msn - 8 == -1 && ddp.msn - 8 < 0", "fpdu"},
		{"ddp.msn * 2 == 14 && ddp.msn / 2 == 3 && ddp.msn % 4 == 3 && -ddp.msn == -7", "fpdu"},
		{"ddp.msn -1 == 6 && ddp.msn/7 == 1", "fpdu"},
		{"{ddp.msn + 1} * 2 == 16 && ddp.msn + 1 * 2 == 9 && ddp.msn & 3 + 1 == 4", "fpdu"},
		{"mpa.crc & 0xff == 0xef && mpa.crc & 0xf0000000", "fpdu"},
		{"ddp.qn & 2", "term"},
		{"ddp.qn & 1", ""},
		{"pd & 00:00:00:00:ff", "mpa"},
		{"pd[4:2] & ff:00 == 69:00", "mpa"},
		{"latency_ns + 5 == 0 && latency_ns - 1 < -5", "neg"},
		{"latency_ns * 2 > 100000", "message"},
		{"length / 0 != 1 && length / 0 === 1", "message"},
		{"length / 0 == 0 || length % 0 == 0 || length / 0 !== 1", ""},
		{"length + 18446744073709551615 === 0", "message"},
		{"frames + frames == 23", "fpdu"},
		{"frames - frames != 0", ""},
		{"enhanced.ird + enhanced.ord == 8 && seq + pd_len == 7", "mpa"},
		{"!ddp.msn - 7 && ddp", "fpdu term"},
		{"conn + 1 == 3", "conn"},
		// Fields compared: every pair; an absent field, false.
		{"ddp.msn == ddp.qn", ""},
		{"ddp.mo == ddp.qn", "fpdu"},
		{"ddp.msn != ddp.qn && ddp.msn > ddp.qn", "fpdu"},
		{"ddp.msn != ddp.stag", ""},
		{"frames == frame", "fpdu mpa finding"},
		{"frames === frame", "mpa"},
		{"frames !== frame", "fpdu finding"},
		{"first_frame < last_frame", "message conn"},
		{"rdmap.name == name", ""},
		{"ddp.msn + 1 == ddp.msn + 1", "fpdu"},
		{"{ddp.msn} == 7", "fpdu"},
		{"ddp.msn == {3 + 4}", "fpdu"},
		{"ddp.msn in {ddp.qn, 7} && ddp.msn in {ddp.stag, 7} && ddp.msn in {ddp.qn..10}", "fpdu"},
		{"ddp.msn in {-ddp.qn, +7}", "fpdu"},
		{"ddp && ddp.msn not in {ddp.qn}", "fpdu term"},
		{"pd contains pd[4:2]", "mpa"},
		{`upper(rdmap.name) contains "END"`, "fpdu"},
		{"ddp.qn < ddp.msn < 8", "fpdu"},
		{"!(ddp.msn + 1 == 8)", "mpa term finding message conn neg"},
		// Logic and precedence.
		{"ddp || message", "fpdu term message neg"},
		{"fpdu && rdmap.opcode == 3 || message", "fpdu message neg"},
		{"message || fpdu && rdmap.opcode == 3", "fpdu message neg"},
		{"(message || fpdu) && rdmap.opcode == 3", "fpdu"},
		{"not fpdu and not message and not conn", "mpa finding"},
		{"!(rdmap.opcode == 3)", "mpa term finding message conn neg"},
		{"!!fpdu", "fpdu term"},
		{"", "fpdu mpa term finding message conn neg"},
		{"   ", "fpdu mpa term finding message conn neg"},
	}
	for _, c := range cases {
		f, err := Compile(c.expr)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.expr, err)
			continue
		}
		var got []string
		for _, r := range records {
			if f.Match(r.kvs) {
				got = append(got, r.name)
			}
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%q matches [%s], want [%s]", c.expr, g, c.want)
		}
		// The canonical form is equivalent.
		g, err := Compile(f.String())
		if err != nil {
			t.Errorf("%q: canonical %q does not compile: %v", c.expr, f.String(), err)
			continue
		}
		for _, r := range records {
			if g.Match(r.kvs) != f.Match(r.kvs) {
				t.Errorf("%q and its canonical form %q differ on %s", c.expr, f.String(), r.name)
			}
		}
	}
}

// TestString checks the canonical form.
func TestString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"iwarp_ddp.stag eq 0x10", "ddp.stag == 0x10"},
		{"iwarp_ddp.stag == 16", "ddp.stag == 0x10"},
		{"iwarp_rdma.opcode == 0x2", "rdmap.opcode == 2"},
		{"iwarp_ddp", "ddp"},
		{"iwarp_mpa.crc_check == 0XEFBEADDE", "iwarp_mpa.crc_check == 0xefbeadde"},
		{"frame.number gt 010", "frame > 8"},
		{"ddp.t == 1", "ddp.t == true"},
		{"ddp.t == TRUE", "ddp.t == true"},
		{"ddp.t any_eq 0", "ddp.t == false"},
		{"ddp.t all_ne 0", "ddp.t != false"},
		{"frames all_eq 1", "frames === 1"},
		{"frames any_ne 1", "frames !== 1"},
		{"a_and_b", ""}, // unknown: error
		{"ddp.qn in {1 2 3..7}", "ddp.qn in {1, 2, 3..7}"},
		{"ddp.qn in {1,2,}", "ddp.qn in {1, 2}"},
		{"ddp.qn not in {1}", "ddp.qn not in {1}"},
		{"not ddp.qn == 1", "!(ddp.qn == 1)"},
		{"not ddp", "!ddp"},
		{"!(a_x)", ""},
		{"ddp and rdmap or mpa", "ddp && rdmap || mpa"},
		{"ddp and (rdmap or mpa)", "ddp && (rdmap || mpa)"},
		{"(ddp and rdmap) or mpa", "ddp && rdmap || mpa"},
		{"ddp or (rdmap and mpa)", "ddp || rdmap && mpa"},
		{"(ddp or rdmap) or mpa", "ddp || rdmap || mpa"},
		{"ddp or (rdmap or mpa)", "ddp || (rdmap || mpa)"},
		{"!(ddp || rdmap)", "!(ddp || rdmap)"},
		{"!(ddp && rdmap)", "!(ddp && rdmap)"},
		{`rdmap.name == "a\"b\\c\x01"`, `rdmap.name == "a\"b\\c\x01"`},
		{`rdmap.name == "\101\x42"`, `rdmap.name == "AB"`},
		{`rdmap.name matches r"\d+\."`, `rdmap.name matches "\\d+\\."`},
		{`msg contains "é"`, `msg contains "é"`},
		{"pd == 0.4.a.ff", "pd == 00:04:0a:ff"},
		{"pd == 00040AfF", "pd == 00:04:0a:ff"},
		{"pd[ -2: ] == 6977", "pd[-2:] == 69:77"},
		{"iwarp_mpa.privatedata [1 - 2] != 00", "iwarp_mpa.privatedata[1-2] != 00"}, // tshark's field (wire.go), absent without private data
		{`iwarp_rdma.opcode in {"send with se".."Terminate", write}`, "rdmap.opcode in {5..7, 0}"},
		{"iwarp_rdma.term_layer == llp", "iwarp_rdma.term_layer == 0x2"},
		{`pd contains "iw"`, `pd contains "iw"`},
		{`pd == ""`, `pd == ""`},
		{"latency_ns > -0x10", "latency_ns > -16"},
		{"latency_ns > -0", "latency_ns > 0"},
		{"interop.x == 0x10", "interop.x == 0x10"},
		{`interop.x == "s"`, `interop.x == "s"`},
		// Functions, arithmetic and fields compared (expr.go): a relation
		// of the older form in braces is that form.
		{"iwarp_ddp.msn+1 == 2", "ddp.msn + 1 == 2"},
		{"ddp.stag bitwise_and 0XFF", "ddp.stag & 0xff"},
		{"{ddp.msn} == 1", "ddp.msn == 1"},
		{"{pd}", "pd"},
		{"ddp.msn in {+1}", "ddp.msn in {1}"},
		{"ddp.msn -1 == -1", "ddp.msn - 1 == -1"},
		{"{ddp.msn + 1} * 2 == 4", "{ddp.msn + 1} * 2 == 4"},
		{"ddp.msn + {1 * 2} == 4", "ddp.msn + 1 * 2 == 4"},
		{"ddp.msn - {1 - 1} == 1", "ddp.msn - {1 - 1} == 1"},
		{"ddp.msn & {3 + 1}", "ddp.msn & 3 + 1"},
		{"{ddp.msn & 3} + 1 == 1", "{ddp.msn & 3} + 1 == 1"},
		{"len (pd) eq 4", "len(pd) == 4"},
		{"max(ddp.msn,ddp.qn) ge 1", "max(ddp.msn, ddp.qn) >= 1"},
		{"ddp.qn lt ddp.msn le 3", "ddp.qn < ddp.msn && ddp.msn <= 3"},
		{"not ddp.msn + 1 == 2", "!(ddp.msn + 1 == 2)"},
		{"!ddp.stag & 0x80", "!(ddp.stag & 0x80)"},
		{"ddp.msn in {+1, -ddp.qn, ddp.mo .. 5}", "ddp.msn in {1, -ddp.qn, ddp.mo..5}"},
		{"ip.src & 255.255.255.0 == 192.0.2.0", "ip.src & 255.255.255.0 == 192.0.2.0"},
		{"iwarp_rdma.opcode + 2 == send", "rdmap.opcode + 2 == 3"},
		{"iwarp_ddp.msn == -iwarp_ddp.qn", "ddp.msn == -ddp.qn"},
		{"ddp.msn == 2 - -1", "ddp.msn == 2 - -1"},
		{"ddp.stag + 16 == ddp.stag", "ddp.stag + 0x10 == ddp.stag"},
		{"pd contains pd[1:2]", "pd contains pd[1:2]"},
		{`upper(rdmap.name) matches r"\d"`, `upper(rdmap.name) matches "\\d"`},
		{"frame.time_relative + 1 > 2", "frame.time_relative + 1.000000000 > 2.000000000"},
		{"", ""},
	}
	for _, c := range cases {
		f, err := Compile(c.in)
		if c.want == "" && c.in != "" {
			if err == nil {
				t.Errorf("Compile(%q) = %q, want an error", c.in, f)
			}
			continue
		}
		if err != nil {
			t.Errorf("Compile(%q): %v", c.in, err)
			continue
		}
		if got := f.String(); got != c.want {
			t.Errorf("Compile(%q).String() = %q, want %q", c.in, got, c.want)
		}
		g := mustCompile(t, f.String())
		if g.String() != f.String() {
			t.Errorf("canonical form of %q is not stable: %q then %q", c.in, f.String(), g.String())
		}
	}
}

// TestSyntaxErrors checks the error position (0-based byte offset of the
// offending token) and message of filters that must not compile.
func TestSyntaxErrors(t *testing.T) {
	cases := []struct {
		expr string
		pos  int
		msg  string // substring of the message
	}{
		{"ddp.stg == 1", 0, `unknown field "ddp.stg" (did you mean "ddp.stag"?)`},
		{"ddp.t && iwarp_ddp.stg", 9, `unknown field "iwarp_ddp.stg" (did you mean "iwarp_ddp.stag"?)`},
		{"rdmap.opcod == 2", 0, `did you mean "rdmap.opcode"?`},
		{"rdmap.term.cod == 2", 0, `did you mean "rdmap.term.code"?`},
		{"rdmap.term.ddp.stg", 0, `did you mean "rdmap.term.ddp.stag"?`},
		{"findings.cod", 0, `did you mean "findings.code"?`},
		{"IWARP_DDP.MSN == 1", 0, `unknown field "IWARP_DDP.MSN" (did you mean "iwarp_ddp.msn"?)`}, // it said iwarp_mpa.res
		{"ddp.stag.x", 0, "unknown field"},
		{"ddp.stag == \"abc\"", 12, `ddp.stag is a number field; "abc" is a string`},
		{"ddp.stag == abc", 12, `"abc" is not a number`},
		{"ddp.stag == 0x1ffffffffffffffff", 12, "out of range"},
		// Past the field's width, as tshark says ("70000" too big for
		// this field, maximum 65535).
		{"tcp.port == 70000", 12, "70000 is too big for tcp.port (at most 65535)"},
		{"tcp.srcport in {1..65536}", 19, "too big for tcp.srcport"},
		{"ddp.stag == 0x100000000", 12, "too big for ddp.stag (at most 4294967295)"},
		// Names of values are tshark's (tshark: "RDMA Read Request" cannot
		// be found among the possible values for iwarp_rdma.opcode).
		{`iwarp_rdma.opcode == "RDMA Read Request"`, 21, `"RDMA Read Request" is not a number or the name of a value of rdmap.opcode ("Write", "Read Request",`},
		{`iwarp_rdma.opcode == "3"`, 21, `"3" is not a number or the name of a value`},
		{"iwarp_rdma.term_layer in {RDMA..TCP}", 32, `"TCP" is not a number or the name of a value of iwarp_rdma.term_layer ("RDMA", "DDP", "LLP")`},
		{`ddp.msn == "Send"`, 11, `ddp.msn is a number field; "Send" is a string`},
		{"iwarp_ddp.mo == 4294967296", 16, "too big for ddp.mo (at most 4294967295)"},
		{"iwarp_mpa.rev == 256", 17, "too big for rev (at most 255)"},
		{"iwarp_mpa.ulpdulength in {1..65536}", 29, "too big for mpa.ulpdu_len (at most 65535)"},
		{"iwarp_rdma.opcode == 256", 21, "too big for rdmap.opcode"},
		{"frame.number > 4294967296", 15, "too big for frame"},
		{"rdmap.name == Send", 14, `put the value in double quotes ("Send")`},
		{`mpa.crc_status == bad`, 18, "double quotes"},
		{"ddp.t == yes", 9, "use true, false, 1 or 0"},
		{`ddp.t == "1"`, 9, "use true, false, 1 or 0"}, // tshark: "1" cannot be found among the possible values
		{"ddp.stag contains 1", 9, "contains applies to strings and bytes"},
		{"ddp.stag matches \"1\"", 9, "matches applies to strings"},
		{"rdmap.name matches Send", 19, "matches needs a regular expression in double quotes"},
		{`rdmap.name matches "("`, 19, "bad regular expression"},
		{"pd contains xyz", 12, "write octets in hex"},
		{"pd == 0x100", 6, "write octets in hex"},
		{"rdmap.term == 1", 11, "rdmap.term is an object"},
		{"findings == 1", 9, "findings is a list of objects"},
		{"mpa == 1", 0, `"mpa" is a protocol`},
		{"tcp == 1", 4, "tcp is a protocol: it can only be tested for presence"},
		{"iwarp_ddp == 1", 0, `"iwarp_ddp" is a protocol`},
		{"fpdu == 1", 0, `"fpdu" is a record type, not a field: write it alone, or compare type == "fpdu"`},
		{"ddp.t ==", 8, "unexpected end of filter: expected a value"},
		{"ddp.t == 1 &&", 13, "unexpected end of filter: expected a field name"},
		{"", -1, ""},
		{"&& ddp", 0, `expected a field name, found "&&"`},
		{"== 1", 0, `expected a field name, found "=="`},
		{"1 == ddp.t", 0, `expected a field name, found the value "1"`},
		{`"x" == ddp.t`, 0, "expected a field name, found a string"},
		{"ddp.t = 1", 6, `"=" is not an operator: use == to compare`},
		{"ddp.t & ddp.l", 6, `use && (and)`},
		{"ddp.t | ddp.l", 6, `use || (or)`},
		{"ddp.t ddp.l", 6, `unexpected "ddp.l" after a complete expression (missing && or ||?)`},
		{"ddp.t == 1 1", 11, "missing && or ||?"},
		{"(ddp.t", 0, "unclosed parenthesis"},
		{"ddp && (rdmap || (mpa)", 7, "unclosed parenthesis"},
		{"(ddp.t ddp.l)", 7, `expected ) or an operator, found "ddp.l"`},
		{"ddp.t)", 5, "unmatched )"},
		{"()", 1, `expected a field name, found ")"`},
		{`rdmap.name == "abc`, 14, "unterminated string"},
		{`rdmap.name == "a\qb"`, 16, `unknown escape "\\q"`},
		{`rdmap.name == "a\x"`, 16, `\x needs hex digits`},
		{`rdmap.name == 'a'`, 14, "double quotes"},
		{"ddp.qn in 1", 10, `expected { after in, found "1"`},
		{"ddp.qn in {}", 11, "empty set"},
		{"ddp.qn in {1 2", 10, "unclosed set: missing }"},
		{"ddp.qn in {1,,2}", 13, `expected a value, found ","`},
		{"ddp.qn in {,1}", 11, `expected a value, found ","`},
		{"ddp.qn in {1..}", 14, `expected a value, found "}"`},
		{"ddp.qn in {1 \"a\"}", 13, "is a string"},
		{"ddp.qn not 1", 7, `unexpected "not" after a complete expression`},
		{"ddp.qn @ 1", 7, `unexpected character '@'`},
		// Wireshark syntax iwarpkit does not have: said so, not "unexpected".
		{"pd[0:0] == 00", 2, "the length must be positive"}, // tshark: length 0 isn't positive
		{"pd[2-1]", 2, "the start is after the end"},
		{"pd[0:2,3] == 00", 2, "several ranges is not supported"},
		{"pd[x]", 2, `bad range "x"`},
		{"rdmap.name[0:2] == 00", 10, "slices apply to a bytes field (pd[0:2]); rdmap.name is a string field"},
		{"pd[0:2", 2, "unclosed slice"},
		// tshark 4.0's ${field} is the field in the packet selected in
		// Wireshark's window; tshark has none and matches nothing.
		{"ddp.msn == ${ddp.mo}", 11, "a field reference ${field} is the field's value in the packet selected in Wireshark"},
		// Functions, arithmetic and fields compared (expr.go), where tshark
		// 4.0 refuses them too (its message in the comment).
		{"foo(pd) > 2", 0, `unknown function "foo" (tshark 4.0 has len, count, upper, lower, string, abs, max, min)`}, // Function 'foo' does not exist
		{"LEN(pd) > 2", 0, `unknown function "LEN"`},
		{"len(pd)", 0, "a function is not a test on its own"}, // You cannot test whether a function is present.
		{"{len(pd)}", 1, "a function is not a test on its own"},
		{"len()", 0, "a function is not a test on its own"},
		{"len() == 0", 0, "len() takes one argument"},
		{"abs(ddp.msn, ddp.qn) == 1", 0, "abs() takes one argument"}, // Function abs can only accept 1 arguments.
		{"max() == 1", 0, "max() needs at least one argument"},       // Function max needs at least 1 arguments.
		{"len(pd[0:2]) == 2", 4, "len() takes a field"},              // Only fields can be used as parameter for len()
		{"count(ddp.msn + 1) == 1", 6, "count() takes a field"},
		{`len("abc") == 3`, 4, "len() takes a field"},
		{"upper(ddp.msn) == \"1\"", 6, "upper() takes a string field; ddp.msn is a number field"}, // Only string type fields can be used as parameter for upper()
		{"lower(upper(rdmap.name)) == \"x\"", 6, "lower() takes a field"},
		{"string(pd) == \"x\"", 7, "string() converts numbers and addresses; pd is a bytes field"}, // String conversion for field "iwarp_mpa.privatedata" is not supported
		{"string(ddp.t) == \"1\"", 7, "string() converts numbers and addresses"},
		{"len(ddp) == 1", 4, `"ddp" is a protocol, a header or a record type`},
		{"count(ip) == 1", 6, "ip is a protocol"},
		{"len(conn) == 1", 4, "conn has no Wireshark field"},
		{"abs(rdmap.name) == 1", 4, "abs() takes a number, a time or a boolean"}, // 'http.host' is not a valid argument to 'abs'()
		{"abs(1) == 1", 4, "the left side of a relation starts with a field or a function"},
		{"max(1, ddp.msn) == 1", 4, "the first argument of max() is a field or a function"}, // Argument '1' is not valid for max()
		{"max(ddp.msn, rdmap.opcode) == 1", 13, "the arguments of max() have one type"},     // Arguments to 'max' must have the same type (expected FT_UINT32, got FT_UINT8)
		{"max(ddp.msn, rdmap.name) == 1", 13, "ddp.msn and rdmap.name do not compare"},
		{"1 + ddp.msn == 2", 0, "the left side of a relation starts with a field or a function, not the value \"1\""}, // Constant arithmetic expression on the LHS is invalid.
		{"-1 + ddp.msn == 2", 1, "the left side of a relation starts with a field or a function"},
		{"{1 + ddp.msn} == 2", 1, "the left side of a relation starts with a field or a function"},
		{"1 == ddp.msn + 1", 0, `expected a field name, found the value "1"`},
		{"ddp.t + 1 == 2", 6, `"+" does not apply to ddp.t (a boolean): arithmetic applies to numbers`}, // FT_BOOLEAN cannot +.
		{"-ddp.t == 0", 0, "a minus applies to numbers and times; ddp.t is a boolean"},
		{"ddp.t & ddp.l", 6, "for a logical and, use && (and)"},
		{"rdmap.name + \"x\" == 1", 11, `"+" does not apply to rdmap.name (a string)`}, // FT_STRING cannot +.
		{"pd + 1", 3, `"+" does not apply to pd (bytes): arithmetic applies to numbers, & also to bytes and addresses`},
		{"frame.time + 1 > 0", 11, `"+" does not apply to frame.time`}, // FT_ABSOLUTE_TIME cannot +.
		{"frame.time_relative * 2 > 0", 20, `"*" does not apply to frame.time_relative (a time): arithmetic applies to numbers, + and - also to times`},
		{"iwarp_ddp.control_field & 0x80", 0, `"iwarp_ddp.control_field" is a protocol, a header or a record type (tshark: FT_NONE)`}, // FT_NONE cannot &.
		{"mpa + 1 == 2", 0, `"mpa" is a protocol, a header or a record type`},
		{"interop.x + 1 == 2", 0, "interop.x is a value field of no fixed type"},
		{"pd & \"a\"", 5, "is not a value to compute with"}, // "a" is not a valid arithmetic operand.
		{"ip.src & 192.0.2.0/24", 9, "& takes an address (a mask such as 255.255.255.0), not a subnet"},
		{"rdmap.opcode + send == 3", 15, `"send" is not a number`},                                                   // "send" is not a valid number.
		{"rdmap.opcode + 256 == 3", 15, "256 is too big for rdmap.opcode (at most 255)"},                             // "256" too big for this field, maximum 255.
		{"rdmap.opcode * 100 == 300", 22, "300 is too big for rdmap.opcode"},                                         // "300" cannot be found among the possible values for iwarp_rdma.opcode.
		{"ddp.msn - 1 == -2147483648", 16, "-2147483648 is out of range: a negative number for ddp.msn is an int32"}, // 2147483648 overflows gint32
		{"ddp.msn == rdmap.name", 11, "ddp.msn and rdmap.name do not compare: a number and a string"},                // ... are not of compatible types.
		{"ddp.t == ddp.msn", 9, "ddp.t and ddp.msn do not compare: a boolean and a number"},
		{"ip.src == ipv6.src", 10, "an IPv4 address and an IPv6 address"},
		{"ddp.msn + 1 in {2}", 12, "only a field is tested for membership in a set"}, // "in" was unexpected in this context.
		{"len(pd) in {4}", 8, "only a field is tested for membership in a set"},      // Only a field may be tested for membership in a set.
		{"ddp.msn in {ddp.qn + 1}", 19, "a set holds values, fields and functions, not arithmetic"},
		{"ddp.msn in {{1}}", 12, `expected a value, found "{"`},
		{"ddp.msn in {ddp.qn, {1}}", 20, "a set holds values, fields and functions, not expressions in { }"},
		{"ddp.msn + 1 contains 2", 12, "contains tests a field or a function's value, not arithmetic"}, // "contains" was unexpected in this context.
		{"ddp.msn contains ddp.qn", 8, "contains applies to strings and bytes"},
		{"upper(rdmap.name) matches upper(rdmap.name)", 26, "matches needs a regular expression in double quotes"}, // Matches requires a double quoted string on the right side.
		{"upper(rdmap.name)[0:2] == \"SE\"", 17, "slices apply to a bytes field, not to a function's value"},
		{"--ddp.msn == 1", 1, "a minus applies to a field, a function or a number, not to another minus"}, // "-" was unexpected in this context.
		{"-{ddp.msn} == 1", 1, `a minus applies to a field, a function or a number, not to "{"`},          // "{" was unexpected in this context.
		{"(ddp.msn + 1) == 2", 14, `unexpected "==" after a complete expression`},                         // "==" was unexpected in this context.
		{"ddp.msn +", 9, "unexpected end of filter: expected a field, a function or a value"},
		{"ddp.msn + 1 ==", 14, "unexpected end of filter: expected a field, a function or a value"},
		{"len(pd", 3, "unclosed parenthesis of len("},
		{"max(ddp.msn ddp.qn) == 1", 12, "expected , or ) in the arguments of max()"},
		{"{ddp.msn + 1", 0, "unclosed {: missing }"},
		{"{ddp.msn + 1 ) == 2", 13, "expected } or an arithmetic operator"},
		{"ddp.msn / 0x1ffffffffffffffff == 1", 10, "out of range"},
		{strings.Repeat("{", 300) + "ddp.msn" + strings.Repeat("}", 300) + " == 1", maxDepth, "nested too deeply"},
		{strings.Repeat("max(", 300) + "ddp.msn" + strings.Repeat(")", 300) + " == 1", 4*maxDepth + 3, "nested too deeply"},
		{"ddp.qn == 1 && é", 15, `unexpected character 'é'`},
		{`interop.x == abc`, 13, "is not a number, boolean or byte string"},
		{strings.Repeat("(", 300) + "ddp" + strings.Repeat(")", 300), maxDepth, "nested too deeply"},
		{strings.Repeat("!", 300) + "ddp", maxDepth, "nested too deeply"},
	}
	for _, c := range cases {
		_, err := Compile(c.expr)
		if c.pos < 0 {
			if err != nil {
				t.Errorf("Compile(%q): %v", c.expr, err)
			}
			continue
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Compile(%q) error = %v, want a *SyntaxError", c.expr, err)
			continue
		}
		if se.Pos != c.pos || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("Compile(%q) = col %d %q, want pos %d and a message containing %q", c.expr, se.Pos+1, se.Msg, c.pos, c.msg)
		}
	}
}

func TestSyntaxErrorFormat(t *testing.T) {
	expr := "ddp.t == 1 && rdmap.opcod == 2"
	_, err := Compile(expr)
	se, ok := err.(*SyntaxError)
	if !ok {
		t.Fatalf("Compile(%q) = %v, want *SyntaxError", expr, err)
	}
	if want := `filter: col 15: unknown field "rdmap.opcod" (did you mean "rdmap.opcode"?)`; se.Error() != want {
		t.Errorf("Error() = %q, want %q", se.Error(), want)
	}
	want := "ddp.t == 1 && rdmap.opcod == 2\n" +
		"              ^"
	if got := se.Caret(expr); got != want {
		t.Errorf("Caret:\n%s\nwant:\n%s", got, want)
	}
	// Columns count characters, and control characters become spaces.
	se = &SyntaxError{Pos: len("msg == \"é\"\t"), Msg: "x"}
	if got, want := se.Caret("msg == \"é\"\tx"), "msg == \"é\" x\n           ^"; got != want {
		t.Errorf("Caret = %q, want %q", got, want)
	}
	// At the end of the expression (a missing value).
	_, err = Compile("ddp.t ==")
	if got, want := err.(*SyntaxError).Caret("ddp.t =="), "ddp.t ==\n        ^"; got != want {
		t.Errorf("Caret = %q, want %q", got, want)
	}
	if got, want := (&SyntaxError{Pos: 99}).Caret("ab"), "ab\n  ^"; got != want {
		t.Errorf("Caret beyond the end = %q, want %q", got, want)
	}
}

// TestFindingsOnCaptures checks the finding keys on real and generated
// captures against the findings of the decoded records themselves (the
// flows structs, not format.Fields): finding.severity == S matches a
// finding record of severity S and every FPDU or MPA record carrying a
// finding of severity S.
func TestFindingsOnCaptures(t *testing.T) {
	files := []string{"siw/term_toolong.pcap", "siw/term_badwrite.pcap", "siw/term_sendinv.pcap",
		"siw/gso_v2_nocrc_ib_write_bw_200000.pcap", "siw/reject_app_v2.pcap", "synth/gap.pcap", "synth/snaplen.pcap",
		"synth/retransmit-conflict.pcap", "synth/terminate-llp.pcap"}
	for _, file := range files {
		rs := decodeFile(t, file)
		total := 0
		for _, sev := range []dissect.Severity{dissect.SeverityNote, dissect.SeverityWarning, dissect.SeverityError} {
			want := 0
			for _, r := range rs {
				var fs []dissect.Finding
				switch r.r.Type {
				case flows.RecFinding:
					fs = []dissect.Finding{*r.r.Finding}
				case flows.RecFPDU:
					fs = r.r.FPDU.Findings
				case flows.RecMPA:
					fs = r.r.MPA.Findings
				}
				for _, f := range fs {
					if f.Severity == sev {
						want++
						break
					}
				}
			}
			total += want
			for _, expr := range []string{`finding.severity == "` + sev.String() + `"`, `severity eq "` + sev.String() + `"`} {
				if got := count(mustCompile(t, expr), rs); got != want {
					t.Errorf("%s: %s matches %d records, want %d", file, expr, got, want)
				}
			}
		}
		if total == 0 {
			t.Errorf("%s has no findings: it tests nothing", file)
		}
	}
}

// TestShorthandsOnCaptures checks the record-type shorthands against the
// record types and headers of real captures.
func TestShorthandsOnCaptures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "siw", "*.pcap"))
	for _, path := range files {
		rs := siw(t, filepath.Base(path))
		want := map[string]int{}
		for _, r := range rs {
			want[r.r.Type.String()]++
			if r.r.Type == flows.RecMPA || r.r.Type == flows.RecFPDU {
				want["mpa"+"-layer"]++
			}
			if r.r.Type == flows.RecFPDU && r.r.FPDU.SegOK {
				want["segment"]++
			}
			if r.r.Type == flows.RecMessage && r.r.Message.Opcode == 2 && r.r.Message.RequestFrame != 0 {
				want["latency"]++
			}
		}
		for expr, w := range map[string]int{
			"mpa": want["mpa-layer"], "ddp": want["segment"], "rdmap": want["segment"], "fpdu": want["fpdu"],
			"message": want["message"], "finding": want["finding"], "conn": want["conn"],
			`type == "mpa"`: want["mpa"], "mpa && !fpdu": want["mpa"], "latency_ns": want["latency"],
			"latency_ns >= 0 && opcode == 2": want["latency"],
		} {
			if got := count(mustCompile(t, expr), rs); got != w {
				t.Errorf("%s: %q matches %d records, want %d", filepath.Base(path), expr, got, w)
			}
		}
	}
}

// TestMatchRecord checks the convenience form against Match.
func TestMatchRecord(t *testing.T) {
	f := mustCompile(t, "rdmap.opcode == 2")
	n := 0
	for _, r := range siw(t, "basic_ib_read_bw_4096_v2_nocrc.pcap") {
		if f.MatchRecord(r.r) != f.Match(r.kvs) {
			t.Fatalf("MatchRecord and Match differ on frame %d", r.r.Frame)
		}
		if f.MatchRecord(r.r) {
			n++
		}
	}
	// MANIFEST.md (tshark): 15 RDMA Read Responses.
	if n != 15 {
		t.Errorf("%d Read Responses, want 15", n)
	}
	var nilF *Filter
	if !nilF.Match(recFPDU) || !nilF.MatchRecord(siw(t, "basic_ib_read_bw_4096_v2_nocrc.pcap")[0].r) || nilF.String() != "" {
		t.Error("a nil Filter must match everything and print as empty")
	}
}

// TestMatchNoAllocs: Match does not allocate, whatever the relation.
func TestMatchNoAllocs(t *testing.T) {
	rs := siw(t, "term_badwrite.pcap")
	for _, expr := range []string{
		"rdmap.opcode == 2 || ddp.t == 1 && ddp.stag in {0x1..0x7bf1600} && !(mpa.crc_status != \"ok\")",
		`finding.severity == "error" || findings.code matches "^rdmap\\."`,
		`rdmap.term.ddp.stag == 0x07bf1600 && rdmap.term.text contains "STag"`,
		"frames != 3 || frames === 11 || frames !== 11 || frames not in {1..3}",
		"pd contains 69:77 || mpa || ddp || rdmap || conn || message",
		"enhanced.rtr == \"send\" || interop.x == 1",
	} {
		f := mustCompile(t, expr)
		for _, r := range rs {
			if n := testing.AllocsPerRun(50, func() { f.Match(r.kvs) }); n != 0 {
				t.Errorf("%q: %v allocations per Match on a %v record", expr, n, r.r.Type)
			}
		}
	}
}

// TestExprNoAllocs: Match does not allocate for the forms of expr.go
// either (their values are pooled, but for the race detector's sync.Pool),
// nor MatchRecord on the records it does not allocate for whatever the
// filter (FPDUs without findings: TestMatchRecordAllocs).
func TestExprNoAllocs(t *testing.T) {
	decode := func(files ...string) []rec {
		var rs []rec
		for _, file := range files {
			rs = append(rs, decodeFile(t, file)...)
		}
		return rs
	}
	all := decode("siw/term_badwrite.pcap", "siw/crc_v2_rping.pcap", "synth/rfc7306.pcap")
	fpdus := decode("siw/basic_ib_read_bw_4096_v2_nocrc.pcap", "siw/crc_v2_rping.pcap", "synth/marker-pad-crc.pcap")
	for _, expr := range []string{
		"len(pd) == 4 || count(frames) > 1 || count(findings) == 1",
		"len(rdmap.name) == 4 || count(frames) > 1 || count(findings) == 1",
		`upper(rdmap.name) == "SEND" || lower(rdmap.name) contains "read" || upper(msg) matches "CRC"`,
		`string(ddp.stag) == "1" || string(ip.src) contains "192" || string(latency_ns) == "5"`,
		"abs(ddp.msn - 3) == 1 || max(frames, first_frame) > 3 || min(ip.src, ip.dst) == 192.0.2.1",
		"ddp.msn + 1 == 2 || ddp.msn * 2 / 3 % 2 == 1 || -ddp.msn < -3 || ddp.stag + 0x40000000 != 1",
		"ddp.stag & 0x80 || pd & 00:ff || ip.src & 255.255.255.0 == 192.0.2.0 || ddp.to - 1 > 0",
		"ddp.msn == ddp.qn || ddp.mo != rdmap.read.size || frames === frame || tcp.srcport > tcp.dstport",
		"ddp.msn in {ddp.qn, 5, ddp.mo..9} || pd contains pd[1:2] || ddp.qn < ddp.msn < 3",
		"frame.time_relative + 1 > 1.03 || frame.time_relative - frame.time_relative == 0 || tcp.stream + 1 == 2",
	} {
		f := mustCompile(t, expr).WithRef(all[0].r.TS)
		for _, r := range all {
			if n := testing.AllocsPerRun(20, func() { f.Match(r.kvs) }); n != 0 && !raceEnabled {
				t.Fatalf("%q: %v allocations per Match on a %v record", expr, n, r.r.Type)
			}
		}
		if f.omit == 0 {
			// A filter that reads pd or msg has MatchRecord list every
			// field, which allocates, whatever the test (pd alone too).
			continue
		}
		for _, r := range fpdus {
			if r.r.FPDU == nil || len(r.r.FPDU.Findings) > 0 {
				continue
			}
			if n := testing.AllocsPerRun(20, func() { f.MatchRecord(r.r) }); n != 0 && !raceEnabled {
				t.Fatalf("%q: %v allocations per MatchRecord on the FPDU of frame %d", expr, n, r.r.Frame)
			}
		}
	}
}

// TestExprStrings: upper and lower map ASCII letters only, as tshark's
// (checked on a syslog message with UTF-8 letters: tshark's
// upper(syslog.msg) of "Ärger ß straße" contains "ÄRGER" and "STRAßE", its
// lower "Ärger"); len counts octets (22 for that message, of 18 letters);
// string gives numbers in decimal, signed ones with their sign.
func TestExprStrings(t *testing.T) {
	rec := []format.KV{s("type", "fpdu"), s("rdmap.name", "Ärger ß straße ǅ x"), u("ddp.stag", 0xff), {Key: "latency_ns", Val: format.Int(-12)}}
	for expr, want := range map[string]bool{
		`upper(rdmap.name) == "ÄRGER SS STRASSE ǅ X"`: false,
		`upper(rdmap.name) == "ÄRGER ß STRAßE ǅ X"`:   true,
		`lower(rdmap.name) == "ärger ß straße ǅ x"`:   false,
		`lower(rdmap.name) == "Ärger ß straße ǅ x"`:   true,
		`len(rdmap.name) == 22`:                       true,
		`string(ddp.stag) == "255"`:                   true,
		`string(latency_ns) == "-12"`:                 true,
		`upper(rdmap.name) < lower(rdmap.name)`:       true,
	} {
		if got := mustCompile(t, expr).Match(rec); got != want {
			t.Errorf("%s: %v, want %v", expr, got, want)
		}
	}
}

// TestGetAgreesWithFormat: the filter's one-pass lookup gives what
// format.Get gives, for every known name on every record of real captures.
func TestGetAgreesWithFormat(t *testing.T) {
	paths := append(knownNames(), "rdmap.term.ddp", "rdmap.term.rdmap.read.size", "mpa.rev", "mpa.crc", "enhanced.rtr",
		"rdmap", "rdmap.term.x", "x", "rdmap.", ".", "a.b.c.d")
	var all [][]format.KV
	for _, file := range []string{"siw/term_badwrite.pcap", "siw/term_toolong.pcap", "siw/p2p_rtr2_rping.pcap", "synth/gap.pcap", "synth/terminate-llp.pcap"} {
		for _, r := range decodeFile(t, file) {
			all = append(all, r.kvs)
		}
	}
	for _, r := range records {
		all = append(all, r.kvs)
	}
	for _, kvs := range all {
		for _, p := range paths {
			v1, ok1 := format.Get(kvs, p)
			v2, ok2 := get(kvs, p)
			if ok1 != ok2 || string(format.AppendJSON(nil, []format.KV{{Key: "x", Val: v1}})) != string(format.AppendJSON(nil, []format.KV{{Key: "x", Val: v2}})) {
				t.Fatalf("get(%q) = %v %v, format.Get = %v %v", p, v2, ok2, v1, ok1)
			}
		}
	}
}

// TestReads: which filters read a key, aliases and record-type shorthands
// included; iwarpdump -j N lets its workers match records only when the
// filter does not read "conn".
func TestReads(t *testing.T) {
	cases := []struct {
		expr, key string
		want      bool
	}{
		{"conn == 2", "conn", true},
		{"!(conn >= 2) && mpa.crc_status == \"bad\"", "conn", true},
		{"frame > 20 || conn == 1", "conn", true},
		{"conn", "conn", false}, // the record type, not the id
		{"conn", "type", true},
		{"rdmap.opcode == 4", "conn", false},
		{"rdmap.opcode == 4", "rdmap.opcode", true},
		{"rdmap.opcode == 4", "rdmap", true},
		{"rdmap.opcode == 4", "rdmap.op", false},
		{"iwarp_rdma.opcode == 4", "rdmap.opcode", true},
		{"rdmap", "rdmap.opcode", true},
		{"frame.number >= 20", "frame", true},
		{"", "conn", false},
	}
	for _, c := range cases {
		f, err := Compile(c.expr)
		if err != nil {
			t.Fatalf("%q: %v", c.expr, err)
		}
		if got := f.Reads(c.key); got != c.want {
			t.Errorf("%q reads %q: %v, want %v", c.expr, c.key, got, c.want)
		}
	}
	var nilf *Filter
	if nilf.Reads("conn") {
		t.Error("a nil Filter reads conn")
	}
}

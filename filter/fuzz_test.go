package filter

import (
	"errors"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"", "mpa", "iwarp_ddp", "rdmap", "fpdu", "message", "finding", "conn", "conn == 2", `type == "fpdu"`,
	"frame > 100", "iwarp_rdma.opcode == 2", "rdmap.opcode in {1 2 3..7}", "ddp.stag in {1, 0x10, 3..7}",
	"ddp.t == 1 && ddp.l == 0 || !ddp", "not (ddp.qn == 1 or ddp.mo != 0) and rdmap", `mpa.crc_status == "bad"`,
	`rdmap.name == "Send"`, `pd contains 69:77`, `msg contains "gap"`, `finding.severity == "error"`,
	`rdmap.name matches "(?-i)^RDMA"`, `rdmap.term.ddp.stag == 0x07bf1600`, `findings.code ~ r"\."`,
	"ip.addr == 192.0.2.0/24", "ipv6.src in {2001:db8::1..2001:db8::9 fe80::/10}", "tcp.port != 7174", "sctp.srcport", "ip.dst > 10.0.0.1",
	"frames !== 3", "frames === 3", "frames not in {1..3}", "latency_ns > -5", "interop.a.b == 1",
	`enhanced.rtr contains "wr"`, `pd == ""`, `pd == "a\x00\377"`, "pd == 0.1.a.ff", "ddp.t == TRUE",
	"((ddp))", "!!!ddp", "ddp.stag ==", "ddp.stg", `"x`, "ddp.qn in {1,,2}", "a & b", "0x", "-",
	"mpa.marker.fpduptr > 0x10 && mpa.markers.ok == 0", `ts >= "2026"`,
	"pd[1:2] == 00:04", "pd[-2:] not in {69:77}", "pd[1-2]", "pd[:9]", `iwarp_rdma.opcode == "send"`, "tcp && ip",
	// Functions, arithmetic, & and fields compared (expr.go).
	"len(pd) == 6", "count(frames) > 1", `upper(rdmap.name) == "SEND"`, `lower(msg) matches "gap"`, `string(ddp.msn) == "7"`,
	"abs(latency_ns) > 5", "max(frames, first_frame) == 28", "min(ddp.msn, ddp.qn, 3) < 2", "ddp.msn + 1 == 8",
	"ddp.msn -1 == -1", "-ddp.msn < 0", "{ddp.msn + 1} * 2 / 3 % 2 == 1", "ddp.stag & 0x80", "ddp.stag bitwise_and 0xff == 0",
	"pd & 00:ff", "ip.src & 255.255.255.0 == 192.0.2.0", "ddp.mo == rdmap.read.size", "frames === frame",
	"ddp.msn in {ddp.qn, +5, -ddp.mo..9}", "pd contains pd[1:2]", "ddp.qn < ddp.msn <= 3", "length / 0 != 1",
	"ddp.stag + 0x40000000 === 1", "latency_ns - 0x8000000000000000 != 0", "frame.time_relative + 1.5 > 2", "!ddp.msn - 7",
	"ddp.msn == 1 + ddp.qn", "1 + ddp.msn", "len(", "max(1, ddp.msn)", "${ddp.msn}", "ddp.msn/2", "ddp.msn--1", "{{{1}}}",
}

// FuzzCompile: Compile never panics; an error is a *SyntaxError inside
// the expression; a filter's canonical form compiles to an equivalent
// filter with the same canonical form.
func FuzzCompile(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, c := range tsharkCases {
		f.Add(c.ws)
		f.Add(c.ours)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := Compile(expr)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%q): error %T %v is not a *SyntaxError", expr, err, err)
			}
			if se.Pos < 0 || se.Pos > len(expr) {
				t.Fatalf("Compile(%q): position %d outside the expression", expr, se.Pos)
			}
			if flt != nil {
				t.Fatalf("Compile(%q): a filter and an error", expr)
			}
			_ = se.Caret(expr)
			_ = se.Error()
			return
		}
		canon := flt.String()
		if !utf8.ValidString(canon) {
			t.Fatalf("Compile(%q).String() = %q is not valid UTF-8", expr, canon)
		}
		again, err := Compile(canon)
		if err != nil {
			t.Fatalf("Compile(%q).String() = %q does not compile: %v", expr, canon, err)
		}
		if again.String() != canon {
			t.Fatalf("canonical form not stable: %q -> %q -> %q", expr, canon, again.String())
		}
		for _, r := range records {
			if flt.Match(r.kvs) != again.Match(r.kvs) {
				t.Fatalf("%q and its canonical form %q differ on the %s record", expr, canon, r.name)
			}
		}
	})
}

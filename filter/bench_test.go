package filter

import (
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// typicalFPDU returns an RDMA Read Response FPDU record from a real
// capture, and its fields.
func typicalFPDU(b *testing.B) rec {
	for _, r := range siw(b, "basic_ib_read_bw_4096_v2_nocrc.pcap") {
		if r.r.Type == flows.RecFPDU && r.r.FPDU.SegOK && r.r.FPDU.Seg.Opcode == 2 {
			return r
		}
	}
	b.Fatal("no Read Response")
	return rec{}
}

type benchCase struct{ name, expr string }

// benchFilters runs match on each filter as a sub-benchmark named after
// the case and suffix.
func benchFilters(b *testing.B, cases []benchCase, suffix string, match func(f *Filter)) {
	for _, c := range cases {
		f := mustCompile(b, c.expr)
		b.Run(c.name+suffix, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				match(f)
			}
		})
	}
}

func BenchmarkMatch(b *testing.B) {
	x := typicalFPDU(b)
	benchFilters(b, []benchCase{
		{"opcode", "rdmap.opcode == 2"},
		{"compound", `ddp.t == 1 && ddp.stag in {0x1..0xffff0000} && mpa.crc_status != "bad" || rdmap.opcode == 7`},
		{"nested-miss", "rdmap.term.code == 1"},
		{"finding", `finding.severity == "error"`},
		{"regexp", `rdmap.name matches "response$"`},
	}, "", func(f *Filter) { f.Match(x.kvs) })
}

// BenchmarkMatchRecord: a record's filter verdict from the record, as a
// filtered decode gets it: MatchRecord lists only the fields the filter
// reads; "all-fields" lists them all first (format.Fields), as MatchRecord
// did before.
func BenchmarkMatchRecord(b *testing.B) {
	x := typicalFPDU(b)
	cases := []benchCase{{"opcode", "rdmap.opcode == 2"}, {"ts", `ts > "2020"`}, {"src", `src == "10.0.0.1:4791"`}}
	benchFilters(b, cases, "", func(f *Filter) { f.MatchRecord(x.r) })
	benchFilters(b, cases, "/all-fields", func(f *Filter) { f.Match(format.Fields(x.r)) })
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(`ddp.t == 1 && ddp.stag in {0x1..0xffff0000} && mpa.crc_status != "bad" || rdmap.opcode == 7`); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatchExpr: the forms of expr.go (functions, arithmetic, &,
// fields compared) on the record of BenchmarkMatch.
func BenchmarkMatchExpr(b *testing.B) {
	x := typicalFPDU(b)
	benchFilters(b, []benchCase{
		{"arith", "ddp.stag + 1 > 0x10"},
		{"bitand", "ddp.stag & 0xff00"},
		{"fields", "ddp.to > ddp.stag"},
		{"len", "len(rdmap.name) > 4"},
		{"upper", `upper(rdmap.name) == "RDMA READ RESPONSE"`},
		{"max", "max(frames, frame) > 10"},
		{"set", "ddp.stag in {rdmap.opcode, 0x10..0xffff}"},
	}, "", func(f *Filter) { f.Match(x.kvs) })
}

package filter

import (
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// typicalFPDU returns the fields of an RDMA Read Response FPDU from a real
// capture.
func typicalFPDU(b *testing.B) []format.KV {
	for _, r := range siw(b, "basic_ib_read_bw_4096_v2_nocrc.pcap") {
		if r.r.Type == flows.RecFPDU && r.r.FPDU.SegOK && r.r.FPDU.Seg.Opcode == 2 {
			return r.kvs
		}
	}
	b.Fatal("no Read Response")
	return nil
}

func BenchmarkMatch(b *testing.B) {
	kvs := typicalFPDU(b)
	for _, c := range []struct{ name, expr string }{
		{"opcode", "rdmap.opcode == 2"},
		{"compound", `ddp.t == 1 && ddp.stag in {0x1..0xffff0000} && mpa.crc_status != "bad" || rdmap.opcode == 7`},
		{"nested-miss", "rdmap.term.code == 1"},
		{"finding", `finding.severity == "error"`},
		{"regexp", `rdmap.name matches "response$"`},
	} {
		f, err := Compile(c.expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f.Match(kvs)
			}
		})
	}
}

// BenchmarkMatchRecord: a record's filter verdict from the record, as a
// filtered decode gets it: MatchRecord lists only the fields the filter
// reads; "all-fields" lists them all first (format.Fields), as MatchRecord
// did before.
func BenchmarkMatchRecord(b *testing.B) {
	var r *flows.Record
	for _, x := range siw(b, "basic_ib_read_bw_4096_v2_nocrc.pcap") {
		if x.r.Type == flows.RecFPDU && x.r.FPDU.SegOK && x.r.FPDU.Seg.Opcode == 2 {
			r = x.r
			break
		}
	}
	for _, c := range []struct{ name, expr string }{
		{"opcode", "rdmap.opcode == 2"},
		{"ts", `ts > "2020"`},
		{"src", `src == "10.0.0.1:4791"`},
	} {
		f, err := Compile(c.expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f.MatchRecord(r)
			}
		})
		b.Run(c.name+"/all-fields", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f.Match(format.Fields(r))
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(`ddp.t == 1 && ddp.stag in {0x1..0xffff0000} && mpa.crc_status != "bad" || rdmap.opcode == 7`); err != nil {
			b.Fatal(err)
		}
	}
}

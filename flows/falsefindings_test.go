package flows_test

import (
	"bytes"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestFindingsNotFalse: captures that look like a finding's trigger but
// are not one. Each case names the codes that must not be emitted, and
// those that must (findingCases has each code's own trigger).
func TestFindingsNotFalse(t *testing.T) {
	sendHdr := ddp.Header{L: true, DV: 1, ULPCtrl: uint8(rdmap.MakeControl(1, 0, rdmap.OpSend)), QN: 0, MSN: 1}
	cases := []struct {
		name      string
		gen       func() synth.Scenario
		not, want []string
		check     func(t *testing.T, recs []*flows.Record)
	}{{
		// MSN 1's last segment is lost in a capture gap: MSN 2 is
		// the second message on the queue, not the first, and follows
		// MSN 1 without a jump.
		name: "last segment of MSN 1 lost",
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.Ops = []synth.Op{
				{Dir: synth.R2I, Kind: synth.Write, Size: 16, STag: 0x98},
				{Dir: synth.I2R, Kind: synth.Send, Size: 3000, MaxULPDU: 1000},
				{Dir: synth.I2R, Kind: synth.Send, Size: 16},
			}
			// I2R data segments: 0 the MPA Request, 1-3 the Send's.
			c.Impair.Drop = []synth.SegRef{{Dir: synth.I2R, Index: 3}}
			return scenario(c)
		},
		not:  []string{"ddp.msn_first", "ddp.msn_gap"},
		want: []string{"ddp.message_incomplete", "tcp.gap"},
	}, {
		// The first segment of a Send is lost: the first seen is at an
		// MO past 0, which the gap explains.
		name: "first segment of a Send lost",
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.Ops = []synth.Op{
				{Dir: synth.R2I, Kind: synth.Write, Size: 16, STag: 0x98},
				{Dir: synth.I2R, Kind: synth.Send, Size: 3000, MaxULPDU: 1000},
			}
			c.Impair.Drop = []synth.SegRef{{Dir: synth.I2R, Index: 1}}
			return scenario(c)
		},
		not:  []string{"ddp.offset_discontinuity", "ddp.msn_first"},
		want: []string{"tcp.gap"},
	}, {
		// A Terminate in Linux siw's layout whose DDP Segment Length
		// is the terminated Send's payload length (16), as siw sends
		// it, not its 34-octet segment length.
		name: "siw Terminate, payload length",
		gen: func() synth.Scenario {
			return withOps(
				synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 16},
				synth.Op{Dir: synth.R2I, Kind: synth.Terminate, Term: rdmap.Terminate{Layer: 1, EType: 2, Code: 2,
					M: true, D: true, DDPSegLen: 16, DDP: sendHdr, HasDDP: true, SiwLayout: true}})
		},
		not:  []string{"rdmap.term_seglen_mismatch"},
		want: []string{"rdmap.term_segment", "rdmap.term_siw_layout"},
	}, {
		// The same in the RFC layout with the segment's length.
		name: "RFC Terminate, segment length",
		gen: func() synth.Scenario {
			return withOps(
				synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 16},
				synth.Op{Dir: synth.R2I, Kind: synth.Terminate, Term: rdmap.Terminate{Layer: 1, EType: 2, Code: 2,
					M: true, D: true, DDPSegLen: 34, DDP: sendHdr, HasDDP: true}})
		},
		not:  []string{"rdmap.term_seglen_mismatch", "rdmap.term_siw_layout"},
		want: []string{"rdmap.term_segment"},
	}, {
		// LLP error 0x06 after an MPA rev 1 exchange: RFC 6581's
		// meaning (insufficient IRD) does not apply.
		name: "LLP 0x06 after rev 1",
		gen: func() synth.Scenario {
			return withTerm(rdmap.Terminate{Layer: uint8(rdmap.LayerLLP), EType: rdmap.ETypeLLPMPA, Code: 0x06})
		},
		not:  []string{"mpa.ird_insufficient_term"},
		want: []string{"rdmap.terminate"},
	}, {
		// Two Reads into one buffer at different offsets, answered in
		// the opposite order: paired by TO, each response has its
		// request's size; the order is a finding.
		name: "Reads into one STag answered out of order",
		gen: func() synth.Scenario {
			return withOps(append(opening(),
				synth.Op{Dir: synth.I2R, Kind: synth.Read, Size: 64, STag: 0x51, SrcSTag: 0x61, NoResponse: true},
				synth.Op{Dir: synth.I2R, Kind: synth.Read, Size: 32, STag: 0x51, TO: 0x1000, SrcSTag: 0x62, NoResponse: true},
				rawOp(synth.R2I, readResponse(0x51, 0x1000, 32)),
				rawOp(synth.R2I, readResponse(0x51, 0, 64)))...)
		},
		not:  []string{"rdmap.read_size_mismatch"},
		want: []string{"rdmap.read_response_order"},
		check: func(t *testing.T, recs []*flows.Record) {
			// Frames: 1-3 TCP, 4-5 MPA, 6-7 the opening, 8-9 the
			// Reads, 10-11 the Responses.
			got := map[uint64]uint64{}
			for _, r := range recs {
				if m := r.Message; m != nil && m.Opcode == rdmap.OpReadResponse {
					got[m.TO] = m.RequestFrame
				}
			}
			if got[0x1000] != 9 || got[0] != 8 {
				t.Errorf("Read Response by TO -> request frame %v, want 0x1000 -> 9, 0 -> 8", got)
			}
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var pcap bytes.Buffer
			if _, err := synth.Generate(c.gen(), &pcap, nil); err != nil {
				t.Fatal(err)
			}
			recs := decodeReader(t, bytes.NewReader(pcap.Bytes()), flows.Options{})
			got := findingsOf(recs)
			for _, code := range c.not {
				if len(got[code]) > 0 {
					t.Errorf("%s emitted", code)
				}
			}
			for _, code := range c.want {
				if len(got[code]) == 0 {
					t.Errorf("%s not emitted", code)
				}
			}
			if c.check != nil {
				c.check(t, recs)
			}
		})
	}
}

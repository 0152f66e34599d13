package flows_test

import (
	"fmt"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestFirstFPDUCRCBad: a direction whose first captured FPDU has a bad CRC
// (a capture started mid-stream, or resumed after lost octets, right at a
// CRC error: what a capture taken because of CRC errors may hold) reports
// that FPDU and its error when it starts a segment and the FPDU after it
// validates. It used to be scanned past: the lock came one FPDU later, and
// the summary said 0 CRC errors. Checked against the generator's truth at
// every cut and every single dropped frame of connections whose CRCs are
// inverted in every fourth FPDU (3 seeds, every FPDU checked with
// compareTruth) or every ninth (10 seeds: the bad CRCs and the FPDUs
// reported), markers off and on, CRC on. (compareTruth fails on some of the
// latter's last cuts, before this change as after: a direction whose only
// captured FPDU has a bad CRC over a marker cannot be decided.)
func TestFirstFPDUCRCBad(t *testing.T) {
	for _, tc := range []struct {
		every, seeds int
		all          bool
	}{{4, 3, true}, {9, 10, false}} {
		for _, mk := range []bool{false, true} {
			for seed := int64(1); seed <= int64(tc.seeds); seed++ {
				sc := longConnM(seed, 40, mk, true, 0)
				for _, d := range []synth.Dir{synth.I2R, synth.R2I} {
					for i := 0; i < 200; i += tc.every {
						sc.Conns[0].Impair.CorruptCRC = append(sc.Conns[0].Impair.CorruptCRC, synth.FPDURef{Dir: d, Index: i})
					}
				}
				ps, truth := genPackets(t, sc)
				name := fmt.Sprintf("every %d, markers %v, seed %d", tc.every, mk, seed)
				for cut := 1; cut < len(ps); cut++ {
					tr := lossTruth(truth, func(f uint64) bool { return f < ps[cut].Frame }, true)
					recs := decodePacketsOpts(ps[cut:], flows.Options{})
					if tc.all {
						compareTruth(t, tr, recs)
					}
					noFalseCRC(t, tr, recs)
					firstBadReported(t, fmt.Sprintf("%s, started at frame %d", name, ps[cut].Frame), ps[cut:], tr, recs)
				}
				for drop := range ps {
					lost := ps[drop].Frame
					rest := append(append([]capture.Packet(nil), ps[:drop]...), ps[drop+1:]...)
					tr := lossTruth(truth, func(f uint64) bool { return f == lost }, false)
					recs := decodePacketsOpts(rest, flows.Options{})
					if tc.all {
						compareTruthLoss(t, tr, recs, true)
					}
					noFalseCRC(t, tr, recs)
					firstBadReported(t, fmt.Sprintf("%s, without frame %d", name, lost), rest, tr, recs)
				}
			}
		}
	}
}

// firstBadReported: every captured FPDU of the truth whose CRC is bad,
// that starts a segment of kept, and whose successor in its direction is
// captured with a good CRC, is reported with CRCBad.
func firstBadReported(t *testing.T, what string, kept []capture.Packet, truth []synth.Record, recs []*flows.Record) {
	t.Helper()
	type dk = [2]string
	starts := map[dk]map[uint32]bool{}
	for _, p := range kept {
		if len(p.Payload) > 0 {
			k := dk{p.Src.String(), p.Dst.String()}
			if starts[k] == nil {
				starts[k] = map[uint32]bool{}
			}
			starts[k][p.Seq] = true
		}
	}
	got := map[dk]map[uint32]*flows.Record{}
	for _, r := range recs {
		if r.Type == flows.RecFPDU {
			k := dk{r.Src.String(), r.Dst.String()}
			if got[k] == nil {
				got[k] = map[uint32]*flows.Record{}
			}
			got[k][r.FPDU.Seq] = r
		}
	}
	byIdx := map[dk]map[int]*synth.TruthFPDU{}
	for _, x := range truth {
		if v, ok := x.(*synth.TruthFPDU); ok {
			k := dk{v.Src, v.Dst}
			if byIdx[k] == nil {
				byIdx[k] = map[int]*synth.TruthFPDU{}
			}
			byIdx[k][v.Index] = v
		}
	}
	for k, m := range byIdx {
		for i, v := range m {
			next := m[i+1]
			if !v.Captured || v.MPA.CRCStatus != "bad" || !starts[k][v.Seq] || next == nil || !next.Captured || next.MPA.CRCStatus != "ok" {
				continue
			}
			if r := got[k][v.Seq]; r == nil || r.FPDU.CRCStatus != flows.CRCBad {
				t.Errorf("%s: FPDU seq %d (%s>%s, frame %d), bad CRC, not reported as such", what, v.Seq, v.Src, v.Dst, v.Frame)
			}
		}
	}
}

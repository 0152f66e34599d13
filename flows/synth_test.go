package flows_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

type dirKey struct{ src, dst string }

// decodeReader runs the pipeline over an in-memory capture.
func decodeReader(t testing.TB, r io.Reader, opts flows.Options) []*flows.Record {
	t.Helper()
	src, err := capture.NewSource(r, "synth")
	if err != nil {
		t.Fatal(err)
	}
	var out []*flows.Record
	d := flows.NewDecoder(opts, func(r *flows.Record) { out = append(out, r) })
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		d.Packet(&p)
	}
	d.Close()
	return out
}

// compareTruth checks the decode of a generated capture against the
// generator's ground truth, FPDU for FPDU: same sequence numbers, lengths,
// markers, DDP/RDMAP fields and CRC status, and no FPDU that was not sent.
// It returns how many captured FPDUs were not reported and on how many
// directions that started mid-stream.
func compareTruth(t *testing.T, truth []synth.Record, recs []*flows.Record) (missed, captured int) {
	t.Helper()
	return compareTruthLoss(t, truth, recs, false)
}

// compareTruthLoss is compareTruth; with lossy set, a captured FPDU that is
// not reported is only counted (after lost octets a decoder may skip FPDUs
// until it resynchronises), never an error.
func compareTruthLoss(t *testing.T, truth []synth.Record, recs []*flows.Record, lossy bool) (missed, captured int) {
	t.Helper()
	type key struct {
		dk  dirKey
		seq uint32
	}
	got := map[key]*flows.Record{}
	firstSeq := map[dirKey]uint32{}
	partCRC := map[bool]int{} // FPDUs not wholly captured, by CRCCut
	defer func() {
		if len(partCRC) > 0 {
			t.Logf("FPDUs not wholly captured: %d CRC fields read, %d cut", partCRC[false], partCRC[true])
		}
	}()
	for _, r := range recs {
		if r.Type != flows.RecFPDU {
			continue
		}
		dk := dirKey{r.Src.String(), r.Dst.String()}
		got[key{dk, r.FPDU.Seq}] = r
		if _, ok := firstSeq[dk]; !ok {
			firstSeq[dk] = r.FPDU.Seq
		}
	}
	sent := map[key]*synth.TruthFPDU{}
	midstream := map[int]bool{}
	var gotMPA []*flows.Record
	for _, r := range recs {
		if r.Type == flows.RecMPA {
			gotMPA = append(gotMPA, r)
		}
	}
	mi := 0
	for _, tr := range truth {
		switch v := tr.(type) {
		case *synth.TruthConn:
			midstream[v.Conn] = v.Midstream
		case *synth.TruthMPA:
			if !v.Captured {
				continue
			}
			if mi >= len(gotMPA) {
				t.Errorf("MPA %s of conn %d (frame %d) not reported", v.Kind, v.Conn, v.Frame)
				continue
			}
			g := gotMPA[mi].MPA
			mi++
			f := g.Frame
			if f.Kind.String() != v.Kind || f.Rev != v.Rev || f.M != v.M || f.C != v.C || f.R != v.R || f.S != v.S ||
				f.Res != v.Res || int(f.PDLen) != v.PDLen || fmt.Sprintf("%x", f.PD) != v.PD || g.Seq != v.Seq {
				t.Errorf("MPA %s frame %d: got %+v seq %d, truth %+v", v.Kind, v.Frame, f, g.Seq, v)
			}
			if (v.Enhanced != nil) != g.HasEnhanced || (v.Enhanced != nil && (v.Enhanced.IRD != g.Enhanced.IRD || v.Enhanced.ORD != g.Enhanced.ORD ||
				v.Enhanced.P2P != g.P2P || fmt.Sprint(v.Enhanced.RTR) != fmt.Sprint(nonNil(g.RTR.Names())))) {
				t.Errorf("MPA %s frame %d: enhanced %+v/%v %v, truth %+v", v.Kind, v.Frame, g.Enhanced, g.P2P, g.RTR.Names(), v.Enhanced)
			}
		}
	}
	if mi != len(gotMPA) {
		t.Errorf("%d MPA frames reported, %d in the truth", len(gotMPA), mi)
	}
	for _, tr := range truth {
		v, ok := tr.(*synth.TruthFPDU)
		if !ok {
			continue
		}
		k := key{dirKey{v.Src, v.Dst}, v.Seq}
		sent[k] = v
		r := got[k]
		if !v.Captured {
			if r != nil && r.FPDU.CRCStatus != flows.CRCIncomplete {
				t.Errorf("FPDU seq %d (%s>%s) not wholly captured, reported with CRC %v", v.Seq, v.Src, v.Dst, r.FPDU.CRCStatus)
			}
			// A CRC field the capture holds is the one sent; one it
			// cut is not given (0, and absent from the fields).
			if r != nil && (r.FPDU.CRCCut && r.FPDU.CRC != 0 || !r.FPDU.CRCCut && r.FPDU.CRC != v.MPA.CRC) {
				t.Errorf("FPDU seq %d (%s>%s) not wholly captured: CRC 0x%08x (cut %v), sent 0x%08x", v.Seq, v.Src, v.Dst, r.FPDU.CRC, r.FPDU.CRCCut, v.MPA.CRC)
			}
			if r != nil {
				partCRC[r.FPDU.CRCCut]++
			}
			continue
		}
		captured++
		if r == nil {
			// Before a mid-stream lock an FPDU may go unreported.
			// (or in a mid-stream direction that never locked: a single
			// FPDU without CRC cannot be confirmed).
			if fs, ok := firstSeq[k.dk]; midstream[v.Conn] && (!ok || int32(v.Seq-fs) < 0) {
				missed++
				continue
			}
			missed++
			if !lossy {
				t.Errorf("FPDU seq %d (%s>%s, frame %d, %s) not reported", v.Seq, v.Src, v.Dst, v.Frame, v.RDMAP.Name)
			}
			continue
		}
		f := r.FPDU
		errf := func(format string, a ...any) {
			t.Errorf("FPDU seq %d (%s>%s, frame %d): %s", v.Seq, v.Src, v.Dst, v.Frame, fmt.Sprintf(format, a...))
		}
		if f.Len != v.Len || int(f.ULPDULen) != v.MPA.ULPDULen || f.Pad != v.MPA.Pad {
			errf("len %d ulpdu %d pad %d, truth %d %d %d", f.Len, f.ULPDULen, f.Pad, v.Len, v.MPA.ULPDULen, v.MPA.Pad)
		}
		if f.CRC != v.MPA.CRC || f.CRCStatus.String() != v.MPA.CRCStatus {
			errf("CRC 0x%08x %v, truth 0x%08x %s", f.CRC, f.CRCStatus, v.MPA.CRC, v.MPA.CRCStatus)
		}
		if len(f.Markers) != len(v.MPA.Markers) {
			errf("%d markers, truth %d", len(f.Markers), len(v.MPA.Markers))
		} else {
			for i, m := range v.MPA.Markers {
				g := f.Markers[i]
				if g.Seq != m.Seq || g.FPDUPtr != m.FPDUPtr || g.OK != m.OK {
					errf("marker %d: seq %d ptr %d ok %v, truth %d %d %v", i, g.Seq, g.FPDUPtr, g.OK, m.Seq, m.FPDUPtr, m.OK)
				}
			}
		}
		if v.DDP == nil || v.RDMAP == nil {
			continue
		}
		if !f.SegOK {
			errf("DDP segment not decoded: %v", f.SegErr)
			continue
		}
		s := f.Seg
		h := s.DDP
		if h.T != v.DDP.T || h.L != v.DDP.L || h.DV != v.DDP.DV || h.Rsvd != v.DDP.Rsvd {
			errf("DDP T/L/DV/rsvd %v/%v/%d/%d, truth %v/%v/%d/%d", h.T, h.L, h.DV, h.Rsvd, v.DDP.T, v.DDP.L, v.DDP.DV, v.DDP.Rsvd)
		}
		if v.DDP.STag != nil && (h.STag != *v.DDP.STag || h.TO != *v.DDP.TO) {
			errf("STag/TO 0x%x/0x%x, truth 0x%x/0x%x", h.STag, h.TO, *v.DDP.STag, *v.DDP.TO)
		}
		if v.DDP.QN != nil && (h.QN != *v.DDP.QN || h.MSN != *v.DDP.MSN || h.MO != *v.DDP.MO) {
			errf("QN/MSN/MO %d/%d/%d, truth %d/%d/%d", h.QN, h.MSN, h.MO, *v.DDP.QN, *v.DDP.MSN, *v.DDP.MO)
		}
		if uint8(s.Opcode) != v.RDMAP.Opcode || s.RV != v.RDMAP.RV || f.PayloadLen != v.PayloadLen {
			errf("opcode %d RV %d payload %d, truth %d %d %d", s.Opcode, s.RV, f.PayloadLen, v.RDMAP.Opcode, v.RDMAP.RV, v.PayloadLen)
		}
		if v.RDMAP.InvalSTag != nil && s.InvalSTag != *v.RDMAP.InvalSTag {
			errf("inval STag 0x%x, truth 0x%x", s.InvalSTag, *v.RDMAP.InvalSTag)
		}
		if rr := v.RDMAP.Read; rr != nil && (s.Read.SinkSTag != rr.SinkSTag || s.Read.SinkTO != rr.SinkTO || s.Read.Size != rr.Size ||
			s.Read.SrcSTag != rr.SrcSTag || s.Read.SrcTO != rr.SrcTO) {
			errf("read %+v, truth %+v", s.Read, *rr)
		}
		if tm := v.RDMAP.Term; tm != nil {
			g := s.Term
			if g.Layer != tm.Layer || g.EType != tm.EType || g.Code != tm.Code || g.M != tm.M || g.D != tm.D || g.R != tm.R || g.SiwLayout != tm.SiwLayout {
				errf("terminate %d/%d/%d M%v D%v R%v siw %v, truth %+v", g.Layer, g.EType, g.Code, g.M, g.D, g.R, g.SiwLayout, *tm)
			}
			if tm.DDP != nil && (!g.HasDDP || g.DDP.T != tm.DDP.T) {
				errf("terminated DDP header %+v, truth %+v", g.DDP, *tm.DDP)
			}
		}
		if v.RDMAP.Immediate != nil && s.Immediate != *v.RDMAP.Immediate {
			errf("immediate 0x%x, truth 0x%x", s.Immediate, *v.RDMAP.Immediate)
		}
	}
	for k, r := range got {
		if sent[k] == nil {
			// The one ambiguity no decoder can settle: with CRC off,
			// an FPDU whose only marker is its leading one (FPDUPTR 0)
			// is indistinguishable from a marker-free FPDU four octets
			// later when no other marker of the direction is in the
			// capture. Accept exactly that: the sent FPDU four octets
			// earlier, with a leading marker, four octets longer, CRC
			// unchecked, and the same ULPDU.
			if v := sent[key{k.dk, k.seq - 4}]; v != nil && v.Len == r.FPDU.Len+4 && v.MPA.CRCStatus == "unchecked" &&
				len(v.MPA.Markers) == 1 && v.MPA.Markers[0].FPDUPtr == 0 && int(r.FPDU.ULPDULen) == v.MPA.ULPDULen {
				continue
			}
			t.Errorf("FPDU seq %d (%s>%s, frame %d, %s) reported but never sent", k.seq, k.dk.src, k.dk.dst, r.Frame, r.FPDU.Seg.Opcode)
		}
	}
	compareConnMarkers(t, truth, recs)
	return missed, captured
}

// compareConnMarkers checks the markers of each conn record against the
// truth, direction by direction: on where a captured FPDU of the direction
// carries a marker, off where no FPDU of it was sent with one. When the
// initiator is unknown (no MPA exchange captured), i2r is from the
// endpoint seen first.
func compareConnMarkers(t *testing.T, truth []synth.Record, recs []*flows.Record) {
	t.Helper()
	seen, sent := map[dirKey]bool{}, map[dirKey]bool{}
	for _, tr := range truth {
		if v, ok := tr.(*synth.TruthFPDU); ok && len(v.MPA.Markers) > 0 {
			dk := dirKey{v.Src, v.Dst}
			sent[dk] = true
			seen[dk] = seen[dk] || v.Captured
		}
	}
	for _, r := range recs {
		s := r.Summary
		if r.Type != flows.RecConn || s.FPDUs == 0 {
			continue
		}
		a, b := s.A, s.B
		if s.InitiatorKnown {
			a, b = s.Initiator, s.Responder
		}
		for _, d := range []struct {
			dk  dirKey
			got bool
		}{{dirKey{a.String(), b.String()}, s.MarkersI2R}, {dirKey{b.String(), a.String()}, s.MarkersR2I}} {
			if seen[d.dk] && !d.got || !sent[d.dk] && d.got {
				t.Errorf("conn %d (initiator known %v): markers %s>%s %v, truth sent %v, captured %v",
					r.Conn, s.InitiatorKnown, d.dk.src, d.dk.dst, d.got, sent[d.dk], seen[d.dk])
			}
		}
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestSynthGroundTruth decodes every named synth scenario with several seeds
// and compares with the generator's ground truth.
func TestSynthGroundTruth(t *testing.T) {
	for _, name := range synth.Names() {
		if name == "large" {
			continue
		}
		for seed := int64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", name, seed), func(t *testing.T) {
				sc, ok := synth.Named(name, seed)
				if !ok {
					t.Fatalf("no scenario %s", name)
				}
				var pcap, truth bytes.Buffer
				res, err := synth.Generate(sc, &pcap, &truth)
				if err != nil {
					t.Fatal(err)
				}
				recs := decodeReader(t, &pcap, flows.Options{})
				missed, captured := compareTruth(t, res.Records, recs)
				t.Logf("%d truth records, %d decoded records, %d captured FPDUs, %d missed", len(res.Records), len(recs), captured, missed)
				if captured == 0 && name != "reject" && name != "no-reply" {
					t.Errorf("no captured FPDU compared")
				}
				if captured > 0 && float64(missed) > 0.01*float64(captured) {
					t.Errorf("%d of %d captured FPDUs not reported", missed, captured)
				}
			})
		}
	}
}

// TestSmallWorkload: synth's small-message workload (bench/compare.sh)
// decodes as its generator makes it: every FPDU a message of its own, a
// Send or an RDMA Write of at most 64 octets with a good CRC, on 4
// connections, and nothing to find.
func TestSmallWorkload(t *testing.T) {
	var buf bytes.Buffer
	if err := synth.WriteSmall(&buf, 1<<20, 1); err != nil {
		t.Fatal(err)
	}
	pkts := testutil.ReadPackets(buf.Bytes())
	fpdus, msgs, conns := 0, 0, 0
	d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) {
		switch r.Type {
		case flows.RecFPDU:
			fpdus++
			f := r.FPDU
			if f.CRCStatus != flows.CRCOK || !f.SegOK || f.PayloadLen > 64 || len(f.Findings) > 0 ||
				(f.Seg.Opcode != rdmap.OpSend && f.Seg.Opcode != rdmap.OpWrite) || !f.Seg.DDP.L {
				t.Fatalf("frame %d: FPDU %+v", r.Frame, f)
			}
		case flows.RecMessage:
			msgs++
			if m := r.Message; m.Segments != 1 || m.Length > 64 {
				t.Fatalf("frame %d: message %+v", r.Frame, m)
			}
		case flows.RecConn:
			conns++
			if r.Summary.Findings != 0 {
				t.Fatalf("connection %d: %d findings", r.Conn, r.Summary.Findings)
			}
		}
	})
	for i := range pkts {
		d.Packet(&pkts[i])
	}
	d.Close()
	if conns != synth.SmallConns || fpdus != msgs || fpdus < 20*len(pkts)/2 {
		t.Fatalf("%d packets: %d connections, %d FPDUs, %d messages", len(pkts), conns, fpdus, msgs)
	}
}

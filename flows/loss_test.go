package flows_test

import (
	"bytes"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestCaptureLoss: a segment missing from the capture but acknowledged by
// its receiver (capture loss) is given up as a gap once some 256 KiB wait
// behind it, not when the 4 MiB buffer is full or the capture ends: the
// records of every connection stop waiting for it, the FPDUs are the
// generator's, and the gap is reported at the frame after the hole, with
// that frame's time.
func TestCaptureLoss(t *testing.T) {
	var conns []synth.Conn
	for i := range 2 {
		c := seqConn(i, 0)
		c.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}}
		for range 20 {
			c.Ops = append(c.Ops, synth.Op{Dir: synth.I2R, Kind: synth.Write, Size: 64 << 10, STag: 0x100, TO: 0x1000})
		}
		conns = append(conns, c)
	}
	conns[0].Impair.Drop = []synth.SegRef{{Dir: synth.I2R, Index: 10}}
	var pcap bytes.Buffer
	res, err := synth.Generate(synth.Scenario{Conns: conns}, &pcap, nil)
	if err != nil {
		t.Fatal(err)
	}
	pkts := packetsOf(t, pcap.Bytes())
	var recs []*flows.Record
	var cur, lag uint64
	d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) {
		recs = append(recs, r)
		if cur > r.Frame {
			lag = max(lag, cur-r.Frame)
		}
	})
	for i := range pkts {
		cur = pkts[i].Frame
		d.Packet(&pkts[i])
	}
	cur = uint64(len(pkts)) + 1 // what the end of the capture releases waited for all of it
	d.Close()

	missed, captured := compareTruth(t, res.Records, recs)
	if captured == 0 || missed > 2 {
		t.Errorf("%d of %d captured FPDUs not reported", missed, captured)
	}
	gaps := 0
	for _, r := range recs {
		if r.Finding == nil {
			continue
		}
		switch r.Finding.Code {
		case "cap.reassembly_buffer":
			t.Errorf("frame %d: %s", r.Frame, r.Finding.Msg)
		case "tcp.gap":
			gaps++
			if want := pkts[r.Frame-1].TS; !r.TS.Equal(want) {
				t.Errorf("the gap at frame %d is reported at %v, the frame's time is %v", r.Frame, r.TS, want)
			}
		}
	}
	if gaps != 1 {
		t.Errorf("%d gaps reported, want 1", gaps)
	}
	// 256 KiB of one connection are some 180 of its segments; the other
	// connection's packets and the ACKs interleave.
	t.Logf("%d packets; records waited at most %d frames", len(pkts), lag)
	if lag > 800 {
		t.Errorf("records waited up to %d frames for the hole", lag)
	}
}

// TestCRCOfCutFPDU: an FPDU whose middle segment the capture lost is
// incomplete, and its CRC field, captured in its last segment, is the one
// the generator sent (an FPDU whose last octets were not captured has no
// CRC field to give: CRCCut, checked on the snaplen scenario by
// TestSynthGroundTruth).
func TestCRCOfCutFPDU(t *testing.T) {
	sc, _ := synth.Named("mss-span", 1)
	sc.Conns[0].Impair.Drop = []synth.SegRef{{Dir: synth.I2R, Index: 3}}
	var pcap bytes.Buffer
	res, err := synth.Generate(sc, &pcap, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs := decodeReader(t, &pcap, flows.Options{})
	compareTruth(t, res.Records, recs) // a CRC field read is the one sent
	read := 0
	for _, r := range recs {
		if r.Type == flows.RecFPDU && r.FPDU.CRCStatus == flows.CRCIncomplete && !r.FPDU.CRCCut {
			read++
		}
	}
	if read != 1 {
		t.Errorf("%d incomplete FPDUs with their CRC field read, want 1 (the Write's, its third segment lost)", read)
	}
}

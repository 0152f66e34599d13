package flows_test

import (
	"math/rand"
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/synth"
)

// These tests check the mid-stream recovery of markers, grid phase, CRC use
// and FPDU boundaries (issue 4) against the generator's ground truth, on
// captures started at a later frame or with one frame dropped: the cases
// of audit C's findings 1 to 5.

// genPackets writes sc and returns its packets and truth.
func genPackets(t *testing.T, sc synth.Scenario) ([]capture.Packet, []synth.Record) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.pcap")
	res, err := synth.WriteFiles(sc, p)
	if err != nil {
		t.Fatal(err)
	}
	return loadPackets(t, p), res.Records
}

// lossTruth is truth with every FPDU and MPA frame that a frame in lost
// carried marked not captured, and every connection mid-stream when midstream.
func lossTruth(truth []synth.Record, lost func(frame uint64) bool, midstream bool) []synth.Record {
	out := make([]synth.Record, 0, len(truth))
	for _, r := range truth {
		switch v := r.(type) {
		case *synth.TruthFPDU:
			c := *v
			for _, f := range c.Frames {
				if lost(f) {
					c.Captured = false
				}
			}
			out = append(out, &c)
		case *synth.TruthMPA:
			c := *v
			for _, f := range c.Frames {
				if lost(f) {
					c.Captured = false
				}
			}
			out = append(out, &c)
		case *synth.TruthConn:
			c := *v
			c.Midstream = c.Midstream || midstream
			out = append(out, &c)
		default:
			out = append(out, r)
		}
	}
	return out
}

func decodePacketsOpts(ps []capture.Packet, opts flows.Options) []*flows.Record {
	var out []*flows.Record
	d := flows.NewDecoder(opts, func(r *flows.Record) { out = append(out, r) })
	for i := range ps {
		p := ps[i]
		p.Payload = append([]byte(nil), p.Payload...)
		d.Packet(&p)
	}
	d.Close()
	return out
}

var midstreamScenarios = []string{"rdmac", "rev0-interop", "seq-wrap", "tiny-segments", "midstream-markers", "midstream-markers-r2i", "crc-bad", "markers-both"}

// TestMidstreamCutTruth starts generated captures at every frame (findings
// 1 and 2): a direction must not be locked "no markers" on less than a
// marker interval (the FPDU holding the first marker was framed 4 octets
// short, reported CRC BAD, and followed by a made-up FPDU), and CRC use
// must not be decided from one FPDU (a first FPDU whose CRC is bad, or whose
// leading marker was cut, turned CRC off and hid later errors). Every FPDU
// reported must be one the generator sent, with its fields, CRC status and
// markers; every captured FPDU after a direction's first must be reported.
func TestMidstreamCutTruth(t *testing.T) {
	for _, name := range midstreamScenarios {
		for seed := int64(1); seed <= 3; seed++ {
			sc, ok := synth.Named(name, seed)
			if !ok {
				t.Fatalf("no scenario %s", name)
			}
			ps, truth := genPackets(t, sc)
			for cut := 1; cut < len(ps); cut++ {
				first := ps[cut].Frame
				tr := lossTruth(truth, func(f uint64) bool { return f < first }, true)
				recs := decodePacketsOpts(ps[cut:], flows.Options{})
				if !t.Run("", func(t *testing.T) {
					compareTruth(t, tr, recs)
					noFalseCRC(t, tr, recs)
				}) {
					t.Fatalf("%s seed %d started at frame %d", name, seed, first)
				}
			}
		}
	}
}

// noFalseCRC: no CRC error is reported that the truth does not have.
func noFalseCRC(t *testing.T, truth []synth.Record, recs []*flows.Record) {
	t.Helper()
	bad := 0
	for _, r := range truth {
		if v, ok := r.(*synth.TruthFPDU); ok && v.Captured && v.MPA.CRCStatus == "bad" {
			bad++
		}
	}
	got := 0
	for _, r := range recs {
		if r.Type == flows.RecFPDU && r.FPDU.CRCStatus == flows.CRCBad {
			got++
		}
	}
	if got > bad {
		t.Errorf("%d CRC errors reported, the truth has %d", got, bad)
	}
}

// TestMidstreamDropTruth drops each frame of generated captures in turn
// (findings 1 and 4): no FPDU that was not sent, no wrong field, and the
// FPDUs captured whole before a gap in a direction not locked yet are
// reported (they confirm themselves by CRC32c over their markers).
func TestMidstreamDropTruth(t *testing.T) {
	for _, name := range midstreamScenarios {
		for seed := int64(1); seed <= 3; seed++ {
			sc, _ := synth.Named(name, seed)
			ps, truth := genPackets(t, sc)
			for drop := range ps {
				lostFrame := ps[drop].Frame
				rest := append(append([]capture.Packet(nil), ps[:drop]...), ps[drop+1:]...)
				tr := lossTruth(truth, func(f uint64) bool { return f == lostFrame }, false)
				recs := decodePacketsOpts(rest, flows.Options{})
				if !t.Run("", func(t *testing.T) {
					compareTruthLoss(t, tr, recs, true)
					noFalseCRC(t, tr, recs)
				}) {
					t.Fatalf("%s seed %d without frame %d", name, seed, lostFrame)
				}
			}
		}
	}
	// Audit C's two examples: every FPDU captured whole is reported, the
	// one before the gap included.
	for _, tc := range []struct {
		name string
		drop uint64
	}{{"midstream-markers", 6}, {"rdmac", 6}} {
		sc, _ := synth.Named(tc.name, 1)
		ps, truth := genPackets(t, sc)
		var rest []capture.Packet
		for _, p := range ps {
			if p.Frame != tc.drop {
				rest = append(rest, p)
			}
		}
		tr := lossTruth(truth, func(f uint64) bool { return f == tc.drop }, false)
		if missed, captured := compareTruthLoss(t, tr, decodePacketsOpts(rest, flows.Options{}), true); missed > 0 {
			t.Errorf("%s seed 1 without frame %d: %d of %d FPDUs captured whole not reported", tc.name, tc.drop, missed, captured)
		}
	}
}

// longConn is a connection of n random operations, as audit C's generator
// (gen/long.go) makes them: markers both ways, CRC as crc says.
func longConn(seed int64, n int, crc bool, start int) synth.Scenario {
	return longConnM(seed, n, true, crc, start)
}

// longConnM is longConn with markers as mk says.
func longConnM(seed int64, n int, mk, crc bool, start int) synth.Scenario {
	r := rand.New(rand.NewSource(seed))
	c := synth.Conn{
		Initiator: netip.MustParseAddrPort("192.0.2.2:40100"),
		Responder: netip.MustParseAddrPort("192.0.2.1:7174"),
		Handshake: true,
		MPA:       &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, M: mk, C: crc}, Reply: synth.MPAFrame{Rev: 1, M: mk, C: crc}},
	}
	for i := 0; i < n; i++ {
		d := synth.Dir(r.Intn(2))
		switch r.Intn(5) {
		case 0, 1:
			c.Ops = append(c.Ops, synth.Op{Dir: d, Kind: synth.Send, Size: r.Intn(200)})
		case 2:
			c.Ops = append(c.Ops, synth.Op{Dir: d, Kind: synth.Write, Size: r.Intn(4000), STag: uint32(0x1000 * (i + 1))})
		case 3:
			c.Ops = append(c.Ops, synth.Op{Dir: d, Kind: synth.Read, Size: r.Intn(3000), STag: uint32(0x100000 + i), SrcSTag: uint32(0x200000 + i)})
		case 4:
			c.Ops = append(c.Ops, synth.Op{Dir: d, Kind: synth.SendSE, Size: r.Intn(60)})
		}
	}
	if start > 0 {
		c.Impair.StartAt = &synth.StartAt{Frame: start}
	}
	return synth.Scenario{Seed: seed, Conns: []synth.Conn{c}}
}

// TestMidstreamGridWaits (finding 3): markers on, CRC off, a long capture
// started mid-stream. The marker grid several markers agree on must win
// while its confirming chain only waits for octets; a marker-free lock on
// three short headers lost 41 of 102 FPDUs and made up a 61,956-octet one.
func TestMidstreamGridWaits(t *testing.T) {
	for _, start := range []int{8, 9, 10, 16, 17, 18, 19, 20, 21, 22} {
		ps, truth := genPackets(t, longConn(2, 80, false, start))
		recs := decodePacketsOpts(ps, flows.Options{})
		missed, captured := compareTruth(t, truth, recs)
		// Only FPDUs before each direction's first lock may be missed.
		if missed > 4 {
			t.Errorf("start at frame %d: %d of %d captured FPDUs not reported", start, missed, captured)
		}
	}
}

// TestMidstreamNoMarkersNoCRC: without markers and without CRC, a run of
// long FPDUs covers a marker interval with its first FPDU, but the lock
// still needs chainLen consistent headers; it waited for ever for them (the
// walk stopped at the interval), and every FPDU before the next lock was
// lost. Every captured FPDU must be reported.
func TestMidstreamNoMarkersNoCRC(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		for _, start := range []int{10, 25, 40} {
			ps, truth := genPackets(t, longConnM(seed, 80, false, false, start))
			if missed, captured := compareTruth(t, truth, decodePacketsOpts(ps, flows.Options{})); missed > 0 {
				t.Errorf("seed %d start at frame %d: %d of %d captured FPDUs not reported", seed, start, missed, captured)
			}
		}
	}
}

// TestForcedMarkersShortRDMAC (finding 5): with markers and CRC forced by
// --decode-as, a short mid-stream RDMAC capture decodes at least what the
// heuristic decodes, and only FPDUs that were sent.
func TestForcedMarkersShortRDMAC(t *testing.T) {
	f, err := flows.ParseForce("tcp.port==7174,markers=both,crc=on")
	if err != nil {
		t.Fatal(err)
	}
	for seed := int64(1); seed <= 3; seed++ {
		sc, _ := synth.Named("rdmac", seed)
		ps, truth := genPackets(t, sc)
		for _, from := range []uint64{11, 12, 13} {
			var rest []capture.Packet
			for _, p := range ps {
				if p.Frame >= from && p.Frame <= 20 {
					rest = append(rest, p)
				}
			}
			tr := lossTruth(truth, func(fr uint64) bool { return fr < from || fr > 20 }, true)
			auto := decodePacketsOpts(rest, flows.Options{})
			forced := decodePacketsOpts(rest, flows.Options{Force: []flows.Force{f}})
			compareTruth(t, tr, auto)
			compareTruth(t, tr, forced)
			if a, b := countFPDUs(auto), countFPDUs(forced); b < a || b == 0 {
				t.Errorf("rdmac seed %d from frame %d: %d FPDUs forced, %d by the heuristic", seed, from, b, a)
			}
		}
	}
}

func countFPDUs(recs []*flows.Record) (n int) {
	for _, r := range recs {
		if r.Type == flows.RecFPDU {
			n++
		}
	}
	return n
}

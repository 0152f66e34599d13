package flows_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/synth"
)

func TestParseForce(t *testing.T) {
	good := map[string]flows.Force{
		"tcp.port==7174":                      {Port: 7174, NeverGiveUp: true},
		"tcp.port==7174,markers=both,crc=on":  {Port: 7174, NeverGiveUp: true, MarkersSet: true, MarkersTo: true, MarkersFrom: true, CRCSet: true, CRC: true},
		"any,markers=to,crc=off":              {NeverGiveUp: true, MarkersSet: true, MarkersTo: true, CRCSet: true},
		"tcp.port==1,markers=none,origin=isn": {Port: 1, NeverGiveUp: true, MarkersSet: true, OriginAtISN: true, OriginAtISNGiven: true},
	}
	for spec, want := range good {
		got, err := flows.ParseForce(spec)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", spec, got, err, want)
		}
	}
	for _, bad := range []string{"", "udp.port==1", "tcp.port==0", "tcp.port==70000", "any,markers=sideways", "any,crc=maybe", "any,foo=1", "any,host=nope", "any,markers"} {
		if _, err := flows.ParseForce(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestForceOverrides: --decode-as settings win over what the data suggests.
// On a mid-stream capture with CRC on (so the heuristic finds CRC), crc=off
// makes every FPDU "unchecked"; markers=both on a mid-stream marker capture
// decodes as without it; on a no-marker capture it finds nothing, as the
// user asked for markers that are not there.
func TestForceOverrides(t *testing.T) {
	gen := func(name string) []byte {
		sc, _ := synth.Named(name, 1)
		var b bytes.Buffer
		if _, err := synth.Generate(sc, &b, nil); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	count := func(data []byte, f ...flows.Force) map[flows.CRCStatus]int {
		m := map[flows.CRCStatus]int{}
		for _, r := range decodeReader(t, bytes.NewReader(data), flows.Options{Force: f}) {
			if r.Type == flows.RecFPDU {
				m[r.FPDU.CRCStatus]++
			}
		}
		return m
	}
	mid := gen("midstream")
	if n := count(mid); n[flows.CRCOK] == 0 || n[flows.CRCUnchecked] != 0 {
		t.Fatalf("heuristic decode of the mid-stream capture: %v", n)
	}
	crcOff, _ := flows.ParseForce("tcp.port==7174,crc=off")
	if n := count(mid, crcOff); n[flows.CRCOK] != 0 || n[flows.CRCUnchecked] == 0 {
		t.Errorf("crc=off: %v, want all unchecked", n)
	}
	midM := gen("midstream-markers")
	both, _ := flows.ParseForce("tcp.port==7174,markers=both")
	if a, b := count(midM), count(midM, both); a[flows.CRCOK] == 0 || a[flows.CRCOK] != b[flows.CRCOK] {
		t.Errorf("markers=both on a marker capture: %v vs heuristic %v", b, a)
	}
	if n := count(mid, both); len(n) != 0 {
		t.Errorf("markers=both on a marker-free capture decoded %v", n)
	}
}

// TestDraftFlags: --mpa-flags draft reads the Enhanced flags with seed 003's
// meanings (A = zero-length FPDU RTR, B = Write, C = Read, no P2P flag).
func TestDraftFlags(t *testing.T) {
	path := "../testdata/siw/p2p_rtr1_rping.pcap" // Request IRD/ORD words 0x8001 0x8001: A and C set
	for _, tc := range []struct {
		flags mpa.FlagMeaning
		rtr   string
	}{{mpa.FlagsRFC6581, "write"}, {mpa.FlagsDraft01, "send,read"}} {
		data, err := os.ReadFile(filepath.Clean(path))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range decodeReader(t, bytes.NewReader(data), flows.Options{Flags: tc.flags}) {
			if r.Type == flows.RecMPA && r.MPA.Frame.Kind == mpa.KindRequest {
				if got := r.MPA.RTR.String(); got != tc.rtr {
					t.Errorf("flags %v: RTR %q, want %q", tc.flags, got, tc.rtr)
				}
			}
		}
	}
}

// TestCutGeneratedMultiConn cuts a generated multi-connection capture at
// every packet boundary and checks the rest against the generator's ground
// truth: no FPDU that was not sent, all captured FPDUs after each
// direction's lock point reported with the right fields.
func TestCutGeneratedMultiConn(t *testing.T) {
	sc, _ := synth.Named("multi-conn", 2)
	dir := t.TempDir()
	p := filepath.Join(dir, "multi.pcap")
	res, err := synth.WriteFiles(sc, p)
	if err != nil {
		t.Fatal(err)
	}
	ps := loadPackets(t, p)
	for cut := 1; cut < len(ps); cut++ {
		recs := decodePackets(ps[cut:])
		// Records of FPDUs before the cut are not captured any more:
		// mark them so compareTruth accepts their absence.
		truth := make([]synth.Record, 0, len(res.Records))
		for _, r := range res.Records {
			switch v := r.(type) {
			case *synth.TruthFPDU:
				c := *v
				if c.Frames[0] < ps[cut].Frame {
					c.Captured = false
				}
				truth = append(truth, &c)
			case *synth.TruthMPA:
				c := *v
				if c.Frame < ps[cut].Frame {
					c.Captured = false
				}
				truth = append(truth, &c)
			case *synth.TruthConn:
				c := *v
				c.Midstream = true
				truth = append(truth, &c)
			default:
				truth = append(truth, r)
			}
		}
		ok := t.Run("cut", func(t *testing.T) {
			missed, captured := compareTruth(t, truth, recs)
			if captured > 0 && missed > 3*6 {
				t.Errorf("cut at frame %d: %d of %d captured FPDUs missed", ps[cut].Frame, missed, captured)
			}
		})
		if !ok {
			t.Fatalf("cut at frame %d failed", ps[cut].Frame)
		}
	}
}

// TestForceKeepsFrameOrder: with --decode-as (Force), a direction whose
// handshake was not captured is resynchronised at once, and the records of
// its lock keep their frames; the records of the other direction must wait
// for them, so that the records come in frame order (docs/jsonl.md). Each
// capture is decoded with the settings the heuristic finds (the same FPDUs
// must come out) and checked for order.
func TestForceKeepsFrameOrder(t *testing.T) {
	for _, tc := range []struct{ file, spec string }{
		{"../testdata/midstream/rping_nocrc_from_frame20.pcap", "tcp.port==7174,crc=off,markers=none"},
		{"../testdata/midstream/iwtest_ops_from_frame15.pcap", "tcp.port==7471,crc=on,markers=none"},
		{"../testdata/synth/midstream-markers.pcap", "tcp.port==7174,markers=both"},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		f, err := flows.ParseForce(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		fpdus := func(recs []*flows.Record) (n int) {
			for _, r := range recs {
				if r.Type == flows.RecFPDU {
					n++
				}
			}
			return n
		}
		auto := decodeReader(t, bytes.NewReader(data), flows.Options{})
		forced := decodeReader(t, bytes.NewReader(data), flows.Options{Force: []flows.Force{f}})
		if a, b := fpdus(auto), fpdus(forced); a == 0 || a != b {
			t.Errorf("%s: %d FPDUs with %s, %d without", tc.file, b, tc.spec, a)
		}
		for i := 1; i < len(forced); i++ {
			if forced[i].Frame < forced[i-1].Frame {
				t.Errorf("%s with %s: record %d (%v, frame %d) after frame %d", tc.file, tc.spec, i, forced[i].Type, forced[i].Frame, forced[i-1].Frame)
				break
			}
		}
	}
}

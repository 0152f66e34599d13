package format

import (
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// TestConnLineMidstreamMarkers: a connection captured after its MPA
// exchange, with markers one way only (synth's midstream-markers-r2i: the
// initiator's Request asked for them, RFC 5044 §7.1), names the side whose
// FPDUs carry markers on its text line, and its JSON Lines record gives
// the endpoints that markers_i2r and markers_r2i refer to. The generator's
// truth says which side sent markers.
func TestConnLineMidstreamMarkers(t *testing.T) {
	pcap, truth := testutil.SynthNamed(t, "midstream-markers-r2i", 1)
	from := testutil.MarkerSender(truth) // the side whose FPDUs carry markers
	var conn *flows.Record
	for _, r := range testutil.DecodeBytes(t, pcap, flows.Options{}) {
		if r.Type == flows.RecConn {
			conn = r
		}
	}
	if conn == nil || conn.Summary.InitiatorKnown || !conn.Summary.Midstream {
		t.Fatalf("want one mid-stream conn record with the initiator unknown, got %+v", conn)
	}
	line := string(AppendText(nil, conn, TextOptions{}))
	if want := "markers only from " + from + ","; !strings.Contains(line, want) {
		t.Errorf("line %q does not say %q", line, want)
	}
	js := string(AppendJSON(nil, Fields(conn)))
	s := conn.Summary
	first, i2r := s.A, s.MarkersI2R
	if first.String() != from {
		i2r = s.MarkersR2I
	}
	if !i2r || s.MarkersI2R == s.MarkersR2I {
		t.Errorf("markers i2r %v r2i %v with endpoints %v, %v: want on from %v only", s.MarkersI2R, s.MarkersR2I, s.A, s.B, from)
	}
	if want := `"endpoints":["` + s.A.String() + `","` + s.B.String() + `"]`; !strings.Contains(js, want) {
		t.Errorf("JSON %s lacks %s", js, want)
	}
}

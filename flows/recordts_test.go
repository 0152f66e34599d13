package flows_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
)

// TestRecordTime checks that every record carries the timestamp of the
// frame it names, as the capture file has it: a finding reported long after
// its frame (a message still open when the capture ends) once took the
// connection's last timestamp instead.
func TestRecordTime(t *testing.T) {
	for _, bc := range bundled(t) {
		f, ps := bc.path, bc.pkts
		ts := map[uint64]time.Time{}
		for _, p := range ps {
			ts[p.Frame] = p.TS
		}
		// Resegmented, a connection has more packets than frames, and its
		// recent frames reach back less far.
		for _, in := range [][]capture.Packet{ps, resegment(ps, func(int) int { return 3 })} {
			d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) {
				if want, ok := ts[r.Frame]; ok && !r.TS.Equal(want) {
					t.Errorf("%s: %v record of frame %d at %v, the frame is at %v", filepath.Base(f), r.Type, r.Frame, r.TS, want)
				}
			})
			for i := range in {
				d.Packet(&in[i])
			}
			d.Close()
		}
	}
}

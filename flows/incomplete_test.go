package flows_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// TestMessageIncompleteCause: ddp.message_incomplete names what left the
// message incomplete when the capture shows it, and lists that frame: the
// capture gap of the message's direction after its last segment
// (gap.pcap: synth dropped the i2r segment that carried the rest of the
// RDMA Write of frame 8), or the Terminate that ended the connection
// (term_toolong.pcap: siw's Terminate, tshark's opcode 7 in frame 16,
// after the 3 segments of a Send too long for its buffer).
func TestMessageIncompleteCause(t *testing.T) {
	for _, c := range []struct {
		file, cause string
	}{{"testdata/synth/gap.pcap", "gap"}, {"testdata/siw/term_toolong.pcap", "terminate"}} {
		rs := testutil.Decode(t, "../"+c.file, flows.Options{})
		var want uint64               // the cause's frame
		sender := map[uint64]string{} // frame: the sender of its FPDUs
		for _, r := range rs {
			if r.Type == flows.RecFPDU {
				sender[r.Frame] = r.Src.String()
				if c.cause == "terminate" && r.FPDU.SegOK && r.FPDU.Seg.Opcode == rdmap.OpTerminate {
					want = r.Frame
				}
			}
		}
		n := 0
		for _, r := range rs {
			if r.Type != flows.RecFinding || r.Finding.Code != "ddp.message_incomplete" {
				continue
			}
			n++
			f := r.Finding
			if c.cause == "gap" {
				// The gap of the direction that sent the message: the
				// tcp.gap finding whose packets flow as the message's.
				for _, g := range rs {
					if g.Type == flows.RecFinding && g.Finding.Code == "tcp.gap" && g.Frame > r.Frame && sender[g.Frame] == sender[r.Frame] {
						want = g.Frame
					}
				}
			}
			if want == 0 {
				t.Fatalf("%s: no %s found", c.file, c.cause)
			}
			if !slices.Contains(f.Frames, want) || !strings.Contains(f.Msg, "frame "+strconv.FormatUint(want, 10)) {
				t.Errorf("%s: %q (frames %v) does not name the %s of frame %d", c.file, f.Msg, f.Frames, c.cause, want)
			}
		}
		if n != 1 {
			t.Errorf("%s: %d ddp.message_incomplete findings, want 1", c.file, n)
		}
	}
}

package flows_test

import (
	"os/exec"
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

// TestSyncLostAtGap: when an FPDU's length field falls in a capture gap,
// mpa.sync_lost is reported at the gap, with the seq of that FPDU, not when
// the gap is handled (gap.pcap: at the end of the connection, frame 20,
// where the reassembler stopped waiting for a retransmission). Each
// sync_lost shares its frame with the tcp.gap of its direction, and that
// frame is the one tshark shows the first octets after the gap in: its
// tcp.seq_raw is where the gap ends.
func TestSyncLostAtGap(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	const file = "../testdata/synth/gap.pcap"
	out, err := exec.Command(tshark, "-r", file, "-T", "fields", "-e", "frame.number", "-e", "tcp.seq_raw").Output()
	if err != nil {
		t.Fatal(err)
	}
	seqOf := map[uint64]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		c := strings.Split(l, "\t")
		n, _ := strconv.ParseUint(c[0], 10, 64)
		seqOf[n] = c[1]
	}
	gaps := map[uint64]string{} // frame: the seq the gap ends at
	var lost []*flows.Record
	for _, r := range testutil.Decode(t, file, flows.Options{}) {
		if r.Type != flows.RecFinding {
			continue
		}
		switch r.Finding.Code {
		case "tcp.gap":
			_, end, _ := strings.Cut(r.Finding.Msg, " to ")
			gaps[r.Frame] = strings.TrimSuffix(end, ")")
		case "mpa.sync_lost":
			lost = append(lost, r)
		}
	}
	if len(lost) != 2 || len(gaps) != 2 {
		t.Fatalf("%d sync_lost and %d gaps, want 2 of each", len(lost), len(gaps))
	}
	for _, r := range lost {
		end, ok := gaps[r.Frame]
		if !ok {
			t.Errorf("sync_lost at frame %d, where no gap is: %s", r.Frame, r.Finding.Msg)
			continue
		}
		if seqOf[r.Frame] != end {
			t.Errorf("frame %d: tshark's seq %s, the gap ends at %s", r.Frame, seqOf[r.Frame], end)
		}
		if !strings.Contains(r.Finding.Msg, "at seq ") {
			t.Errorf("sync_lost does not name the FPDU's seq: %s", r.Finding.Msg)
		}
	}
}

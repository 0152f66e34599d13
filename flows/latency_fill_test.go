package flows_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestLatencyAfterRetransmission: a Read Response segment lost before the
// capture point and sent again 250 ms later, after the response's last
// segment. The requester's RNIC has the response only when the hole is
// filled, so the message ends at the retransmission: its last frame and
// its latency are those of the frame carrying it, as the edited capture's
// own frames give them.
func TestLatencyAfterRetransmission(t *testing.T) {
	c := baseConn(40100)
	c.Ops = append(opening(), synth.Op{Dir: synth.I2R, Kind: synth.Read, Size: 20000, STag: 0x51, SrcSTag: 0x61})
	var pcap bytes.Buffer
	res, err := synth.Generate(scenario(c), &pcap, nil)
	if err != nil {
		t.Fatal(err)
	}
	var reqSeq, lastSeq uint32
	var resp []uint32 // the Read Response FPDUs' sequence numbers
	for _, r := range res.Records {
		f, ok := r.(*synth.TruthFPDU)
		if !ok || f.RDMAP == nil {
			continue
		}
		switch rdmap.Opcode(f.RDMAP.Opcode) {
		case rdmap.OpReadRequest:
			reqSeq = f.Seq
		case rdmap.OpReadResponse:
			resp = append(resp, f.Seq)
			if f.DDP.L {
				lastSeq = f.Seq
			}
		}
	}
	if len(resp) < 6 {
		t.Fatalf("%d Read Response FPDUs", len(resp))
	}
	path := t.TempDir() + "/read.pcap"
	if err := os.WriteFile(path, pcap.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	frames, times, _ := captureFrames(t, path)
	seqOf := func(f []byte) (uint32, int) {
		off := 14 + int(f[14]&15)*4
		return binary.BigEndian.Uint32(f[off+4:]), len(f) - off - int(f[off+12]>>4)*4
	}
	find := func(seq uint32) int {
		for i, f := range frames {
			if s, n := seqOf(f); n > 0 && s == seq {
				return i
			}
		}
		t.Fatalf("no frame starts at seq %d", seq)
		return -1
	}
	// The third Read Response segment goes after the last one, 250 ms
	// later; the frames after it come 250 ms later too.
	lost := find(resp[2])
	last := find(lastSeq)
	f, ts := frames[lost], times[last].Add(250*time.Millisecond)
	frames, times = slices.Delete(frames, lost, lost+1), slices.Delete(times, lost, lost+1)
	last--
	frames, times = slices.Insert(frames, last+1, f), slices.Insert(times, last+1, ts)
	for i := last + 2; i < len(times); i++ {
		times[i] = times[i].Add(250 * time.Millisecond)
	}
	_, data := writePcap(t, "retrans.pcap", frames, times)
	wantLast := uint64(last + 2) // 1-based, the retransmission
	req := find(reqSeq)
	wantLatency := times[last+1].Sub(times[req])
	for _, workers := range []int{0, 2, -2} {
		n := 0
		for _, r := range recordsWith(t, data, workers) {
			if r.Type != flows.RecMessage || r.Message.Opcode != rdmap.OpReadResponse {
				continue
			}
			n++
			if m := r.Message; m.LastFrame != wantLast || m.Latency != wantLatency || m.RequestFrame != uint64(req+1) {
				t.Errorf("workers %d: last frame %d latency %v request %d; want %d, %v, %d",
					workers, m.LastFrame, m.Latency, m.RequestFrame, wantLast, wantLatency, req+1)
			}
		}
		if n != 1 {
			t.Errorf("workers %d: %d Read Responses", workers, n)
		}
	}
}

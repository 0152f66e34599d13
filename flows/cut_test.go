package flows_test

import (
	"errors"
	"io"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
)

// loadPackets reads a capture into memory (payloads copied).
func loadPackets(t testing.TB, path string) []capture.Packet {
	t.Helper()
	src, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var ps []capture.Packet
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p.Payload = append([]byte(nil), p.Payload...)
		p.Data = nil
		ps = append(ps, p)
	}
	return ps
}

func decodePackets(ps []capture.Packet) []*flows.Record {
	var out []*flows.Record
	d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) { out = append(out, r) })
	for i := range ps {
		d.Packet(&ps[i])
	}
	d.Close()
	return out
}

type fpduKey struct {
	src, dst string
	seq      uint32
}

// TestCutAnywhere starts the capture at every packet boundary of real siw
// captures (the handshake, and more, missing) and checks the mid-stream
// decode against the full decode, which TestTsharkDifferential ties to
// tshark: no FPDU that the full decode does not have, identical fields for
// those reported, and nothing lost once framing is recovered.
func TestCutAnywhere(t *testing.T) {
	for _, name := range []string{"crc_v2_iwtest_ops.pcap", "basic_rping_v2_nocrc.pcap", "basic_ib_read_bw_4096_v2_nocrc.pcap", "siw6_rping_v2_crc.pcap", "gso_v2_nocrc_ib_write_bw_200000.pcap"} {
		t.Run(name, func(t *testing.T) {
			ps := loadPackets(t, "../testdata/siw/"+name)
			full := map[fpduKey]*flows.Record{}
			for _, r := range decodePackets(ps) {
				if r.Type == flows.RecFPDU {
					full[fpduKey{r.Src.String(), r.Dst.String(), r.FPDU.Seq}] = r
				}
			}
			totalMissed, totalAfter, totalInside, totalGot := 0, 0, 0, 0
			for cut := 1; cut < len(ps); cut++ {
				recs := decodePackets(ps[cut:])
				firstFrame := ps[cut].Frame
				got := map[fpduKey]bool{}
				// First reported FPDU per direction: the lock point.
				lock := map[[2]string]uint32{}
				for _, r := range recs {
					if r.Type != flows.RecFPDU {
						continue
					}
					k := fpduKey{r.Src.String(), r.Dst.String(), r.FPDU.Seq}
					want, ok := full[k]
					if !ok {
						t.Fatalf("cut at frame %d: FPDU at seq %d (%s > %s) was not sent", firstFrame, k.seq, k.src, k.dst)
					}
					g, w := r.FPDU, want.FPDU
					if g.Len != w.Len || g.Seg.Opcode != w.Seg.Opcode || g.Seg.DDP != w.Seg.DDP || g.CRC != w.CRC {
						t.Fatalf("cut at frame %d: FPDU seq %d differs from the full decode", firstFrame, k.seq)
					}
					if g.CRCStatus != w.CRCStatus && !(w.CRCStatus == flows.CRCOK && g.CRCStatus == flows.CRCUnchecked) {
						t.Fatalf("cut at frame %d: FPDU seq %d CRC %v, full decode %v", firstFrame, k.seq, g.CRCStatus, w.CRCStatus)
					}
					got[k] = true
					dk := [2]string{k.src, k.dst}
					if _, ok := lock[dk]; !ok {
						lock[dk] = k.seq
					}
				}
				// FPDUs wholly inside the cut capture, after the lock point.
				totalGot += len(got)
				for k, r := range full {
					if r.FPDU.Frames[0] < firstFrame {
						continue
					}
					totalInside++
					l, ok := lock[[2]string{k.src, k.dst}]
					if !ok || int32(k.seq-l) < 0 {
						continue
					}
					totalAfter++
					if !got[k] {
						totalMissed++
						t.Errorf("cut at frame %d: FPDU seq %d (%s > %s, frame %d) missing after resynchronisation", firstFrame, k.seq, k.src, k.dst, r.Frame)
					}
				}
			}
			t.Logf("%d cuts: %d FPDUs wholly captured, %d reported (%.2f%%); %d after the lock points, %d of those missed",
				len(ps)-1, totalInside, totalGot, 100*float64(totalGot)/float64(max(totalInside, 1)), totalAfter, totalMissed)
			if totalAfter > 0 && float64(totalMissed) > 0.01*float64(totalAfter) {
				t.Errorf("more than 1%% of the FPDUs after resynchronisation were missed")
			}
			if totalAfter == 0 {
				t.Fatal("no FPDU was recovered in any cut")
			}
		})
	}
}

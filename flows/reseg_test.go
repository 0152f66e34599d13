package flows_test

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// resegment cuts the TCP payload of every packet into pieces whose sizes
// cut returns, each piece a packet of its own with the original's frame
// number and timestamp: the same octets in the same frames, segmented
// differently. A FIN stays on the last piece.
func resegment(ps []capture.Packet, cut func(rest int) int) []capture.Packet {
	var out []capture.Packet
	for _, p := range ps {
		if p.Kind != capture.KindTCP || len(p.Payload) < 2 || p.PayloadWireLen != len(p.Payload) {
			out = append(out, p)
			continue
		}
		pl := p.Payload
		for off := 0; off < len(pl); {
			n := min(max(cut(len(pl)-off), 1), len(pl)-off)
			q := p
			q.Payload = pl[off : off+n : off+n]
			q.PayloadWireLen = n
			q.Seq = p.Seq + uint32(off)
			if off+n < len(pl) {
				q.Flags &^= capture.FlagFIN
			}
			out = append(out, q)
			off += n
		}
	}
	return out
}

// decodeJSON renders the records of one Decoder over ps, one JSON line each.
func decodeJSON(ps []capture.Packet) []byte {
	var out []byte
	d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) {
		out = format.AppendJSON(out, format.Fields(r))
		out = append(out, '\n')
	})
	for i := range ps {
		d.Packet(&ps[i])
	}
	d.Close()
	return out
}

// TestResegment checks that how a TCP stream is cut into segments does not
// change what is decoded from it: the same octets, in the same frames, cut
// in two at random, into pieces of a few octets, and at a fixed stride,
// give the same records. MPA lets a sender put FPDUs across segments
// (senders are asked to align them, but retransmissions and segmentation
// offload break that: PROTOCOL.md), so a segment that completes an FPDU and
// starts the next is ordinary; the framing joins only the octets that
// complete the FPDU it holds, and frames the rest from the segment.
func TestResegment(t *testing.T) {
	caps := bundled(t)
	if len(caps) < 20 {
		t.Fatalf("only %d captures found", len(caps))
	}
	cuts := []struct {
		name string
		cut  func(r *rand.Rand) func(int) int
	}{
		{"halves", func(r *rand.Rand) func(int) int {
			// The first piece of each packet ends at a random octet;
			// the second is the rest.
			first := true
			return func(rest int) int {
				if first = !first; !first {
					return 1 + r.IntN(rest)
				}
				return rest
			}
		}},
		// Two octets at least: the first segment of a capture that starts
		// mid-stream holding one octet is a keepalive probe (reassembly).
		{"tiny", func(r *rand.Rand) func(int) int { return func(int) int { return 2 + r.IntN(6) } }},
		{"stride100", func(*rand.Rand) func(int) int { return func(int) int { return 100 } }},
	}
	// What legitimately depends on the segments: the finding about a
	// conflicting retransmission names the segment, and a mid-stream
	// marker lock counts the markers that agree in what was buffered
	// when it was decided (4 for pieces of a few octets, 5 otherwise).
	skip := map[string]string{"retransmit-conflict.pcap": "*", "rdmac.pcap": "tiny"}
	for _, bc := range caps {
		f, ps := bc.path, bc.pkts
		want := decodeJSON(ps)
		for _, c := range cuts {
			t.Run(filepath.Base(f)+"/"+c.name, func(t *testing.T) {
				if s := skip[filepath.Base(f)]; s == "*" || s == c.name {
					t.Skip("depends on the segments (see skip)")
				}
				got := decodeJSON(resegment(ps, c.cut(rand.New(rand.NewPCG(1, uint64(len(ps)))))))
				if !bytes.Equal(got, want) {
					gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
					for i := range min(len(gl), len(wl)) {
						if !bytes.Equal(gl[i], wl[i]) {
							t.Fatalf("record %d differs:\n got %s\nwant %s", i, gl[i], wl[i])
						}
					}
					t.Fatalf("%d records, want %d", len(gl), len(wl))
				}
			})
		}
	}
}

// FuzzResegment cuts the bundled captures' segments where the fuzzer says
// (each octet of cuts, in turn, the size of the next piece; 0 the rest of
// the packet) and checks the records against the capture's own cut.
func FuzzResegment(f *testing.F) {
	var caps [][]capture.Packet
	var wants [][]byte
	for _, bc := range bundled(f) {
		switch filepath.Base(bc.path) {
		case "retransmit-conflict.pcap", "rdmac.pcap", "midstream-markers.pcap":
			// TestResegment's skip, and the other capture that starts
			// mid-stream with markers: its lock message counts the
			// markers buffered, which the fuzzer's cuts can change.
			continue
		}
		ps := bc.pkts
		if len(ps) > 400 {
			continue // keep each exec short
		}
		caps = append(caps, ps)
		wants = append(wants, decodeJSON(ps))
	}
	f.Add(uint8(0), []byte{3})
	f.Add(uint8(3), []byte{100, 0})
	f.Add(uint8(7), []byte{2, 9, 200, 0, 17})
	f.Fuzz(func(t *testing.T, idx uint8, cuts []byte) {
		if len(cuts) == 0 {
			return
		}
		i := int(idx) % len(caps)
		k := 0
		got := decodeJSON(resegment(caps[i], func(rest int) int {
			c := int(cuts[k%len(cuts)])
			k++
			if c == 0 {
				return rest
			}
			return max(c, 2)
		}))
		if !bytes.Equal(got, wants[i]) {
			t.Fatalf("capture %d cut by %v: records differ", i, cuts)
		}
	})
}

package flows_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/dissect/sctp"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/synth"
)

// sctpFrame builds an Ethernet/IPv4/SCTP frame from 192.0.2.2:5001 to
// 192.0.2.1:5000 (or back) holding the given chunks, its CRC32c set.
func sctpFrame(fromI bool, chunks ...[]byte) []byte {
	src, dst := []byte{192, 0, 2, 2}, []byte{192, 0, 2, 1}
	sp, dp := uint16(5001), uint16(5000)
	if !fromI {
		src, dst, sp, dp = dst, src, dp, sp
	}
	pkt := sctp.AppendHeader(nil, sctp.Header{SrcPort: sp, DstPort: dp, VerificationTag: 0x1234})
	for _, c := range chunks {
		pkt = append(pkt, c...)
	}
	sctp.SetChecksum(pkt)
	f := make([]byte, 14, 14+20+len(pkt))
	f[12], f[13] = 0x08, 0x00
	ip := ipv4Header(sctp.IPProto, src, dst, len(pkt))
	return append(append(f, ip...), pkt...)
}

// ddpSend is an untagged Send DDP segment (RFC 5041 §4.3) of MSN msn
// holding n octets.
func ddpSend(msn uint32, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i)
	}
	return rdmap.AppendSegment(nil, rdmap.Segment{DDP: ddp.Header{L: true, DV: 1, QN: 0, MSN: msn}, RV: 1,
		Opcode: rdmap.OpSend, Payload: p})
}

// dataChunks splits msg into DATA chunks of at most frag octets with
// consecutive TSNs from tsn (RFC 9260 §6.9).
func dataChunks(tsn uint32, ssn uint16, msg []byte, frag int) [][]byte {
	var out [][]byte
	for off := 0; off < len(msg); off += frag {
		n := min(frag, len(msg)-off)
		var fl uint8
		if off == 0 {
			fl |= sctp.FlagBegin
		}
		if off+n == len(msg) {
			fl |= sctp.FlagEnd
		}
		out = append(out, sctp.AppendData(nil, sctp.Data{Flags: fl, TSN: tsn, Stream: 1, SSN: ssn,
			PPID: sctp.PPIDDDPSegment, UserData: msg[off : off+n]}))
		tsn++
	}
	return out
}

// TestSCTPFragmentOrder: the fragments of a user message are put together
// by TSN (RFC 9260 §6.9), in whatever order the capture holds them and
// however many share a packet; a fragment lost for good is one
// sctp.fragment_lost for its message. Before, a fragment captured after
// the next one (a retransmission filling a hole) lost the message and
// was reported missing although the capture held it.
func TestSCTPFragmentOrder(t *testing.T) {
	var tsn uint32 = 0xFFFFFFFE // the TSNs wrap inside the message
	msg := ddpSend(1, 3000)
	ch := dataChunks(tsn, 0, msg, 1100) // 3 fragments
	next := dataChunks(tsn+3, 1, ddpSend(2, 40), 1100)[0]
	cases := []struct {
		name     string
		frames   [][]byte
		segments int
		frames0  []uint64 // the frames of the first segment
		lost     int
	}{
		{"in order", [][]byte{sctpFrame(true, ch[0]), sctpFrame(true, ch[1]), sctpFrame(true, ch[2]), sctpFrame(true, next)},
			2, []uint64{1, 2, 3}, 0},
		{"hole filled later", [][]byte{sctpFrame(true, ch[0]), sctpFrame(true, ch[2]), sctpFrame(true, next), sctpFrame(true, ch[1])},
			2, []uint64{1, 2, 4}, 0},
		{"last first", [][]byte{sctpFrame(true, ch[2]), sctpFrame(true, ch[1]), sctpFrame(true, ch[0]), sctpFrame(true, next)},
			2, []uint64{1, 2, 3}, 0},
		{"retransmitted", [][]byte{sctpFrame(true, ch[0]), sctpFrame(true, ch[1]), sctpFrame(true, ch[1]), sctpFrame(true, ch[2]),
			sctpFrame(true, next)}, 2, []uint64{1, 2, 4}, 0},
		{"bundled", [][]byte{sctpFrame(true, ch[0], ch[1], ch[2], next)}, 2, []uint64{1}, 0},
		{"bundled out of order", [][]byte{sctpFrame(true, ch[2], ch[0]), sctpFrame(true, next, ch[1])}, 2, []uint64{1, 2}, 0},
		{"middle lost", [][]byte{sctpFrame(true, ch[0]), sctpFrame(true, ch[2]), sctpFrame(true, next)}, 1, nil, 1},
		{"first lost", [][]byte{sctpFrame(true, ch[1]), sctpFrame(true, ch[2]), sctpFrame(true, next)}, 1, nil, 1},
	}
	for _, c := range cases {
		var pcap bytes.Buffer
		w := newPcap(&pcap)
		for _, f := range c.frames {
			w(f)
		}
		var segs, lost int
		var frames0 []uint64
		var last uint64
		for _, r := range decodeReader(t, &pcap, flows.Options{}) {
			if r.Frame < last {
				t.Errorf("%s: record of frame %d after one of frame %d", c.name, r.Frame, last)
			}
			last = r.Frame
			switch {
			case r.Type == flows.RecDDPSCTP:
				if !r.SCTP.SegOK {
					t.Errorf("%s frame %d: segment not decoded: %v", c.name, r.Frame, r.SCTP.SegErr)
					continue
				}
				if segs == 0 && c.frames0 != nil {
					frames0 = r.SCTP.Frames
					if r.SCTP.TSN != tsn || r.SCTP.PayloadLen != 3000 || r.Frame != frames0[0] {
						t.Errorf("%s: first segment TSN %d, %d octets, frame %d", c.name, r.SCTP.TSN, r.SCTP.PayloadLen, r.Frame)
					}
				}
				segs++
				for _, f := range r.SCTP.Findings {
					t.Errorf("%s frame %d: finding %s", c.name, r.Frame, f.Code)
				}
			case r.Type == flows.RecFinding:
				if r.Finding.Code != "sctp.fragment_lost" {
					t.Errorf("%s frame %d: finding %s", c.name, r.Frame, r.Finding.Code)
				}
				lost++
			}
		}
		if segs != c.segments || lost != c.lost || !reflect.DeepEqual(frames0, c.frames0) {
			t.Errorf("%s: %d segments (frames %v), %d lost; want %d (%v), %d", c.name, segs, frames0, lost,
				c.segments, c.frames0, c.lost)
		}
	}
}

// TestSCTPFragmentWindow: a message missing a fragment is given up once
// the side's fragments are far past it, not held to the end of the
// capture (the records after it would wait that long).
func TestSCTPFragmentWindow(t *testing.T) {
	var pcap bytes.Buffer
	w := newPcap(&pcap)
	ch := dataChunks(100, 0, ddpSend(1, 300), 100)
	w(sctpFrame(true, ch[0])) // ch[1] and ch[2] never come
	tsn, ssn := uint32(103), uint16(1)
	for i := 0; i < 5000; i++ {
		cs := dataChunks(tsn, ssn, ddpSend(uint32(i+2), 20), 12)
		for _, c := range cs {
			w(sctpFrame(true, c))
		}
		tsn += uint32(len(cs))
		ssn++
	}
	src, err := capture.NewSource(&pcap, "window")
	if err != nil {
		t.Fatal(err)
	}
	var fed, lostAt uint64
	var lostFed uint64
	segs := 0
	d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) {
		switch r.Type {
		case flows.RecFinding:
			if r.Finding.Code != "sctp.fragment_lost" || lostAt != 0 {
				t.Errorf("frame %d: %s", r.Frame, r.Finding.Code)
			}
			lostAt, lostFed = r.Frame, fed
		case flows.RecDDPSCTP:
			segs++
		}
	})
	for {
		p, err := src.Next()
		if err != nil {
			break
		}
		fed++
		d.Packet(&p)
	}
	d.Close()
	if lostAt != 1 || segs != 5000 || lostFed == 0 || lostFed >= fed {
		t.Errorf("lost at frame %d (reported after %d of %d packets), %d segments", lostAt, lostFed, fed, segs)
	}
}

// TestSCTPNewAssociation: an INIT with a new Initiate Tag between the
// endpoints of an association starts a new association (RFC 9260 §5.1),
// with its own conn record; before, the second one was summarised with the
// first, or its DATA chunks, repeating TSNs, dropped as retransmissions.
func TestSCTPNewAssociation(t *testing.T) {
	var pcap bytes.Buffer
	pw := pcapgo.NewWriter(&pcap)
	_ = pw.WriteFileHeader(65535, layers.LinkTypeEthernet)
	for i, seed := range []int64{1, 2, 2} {
		s, _ := synth.NamedExt("sctp-ddp", seed)
		var one bytes.Buffer
		if _, err := s.Generate(&one, nil); err != nil {
			t.Fatal(err)
		}
		r, err := pcapgo.NewReader(&one)
		if err != nil {
			t.Fatal(err)
		}
		for {
			data, ci, err := r.ReadPacketData()
			if err != nil {
				break
			}
			ci.Timestamp = ci.Timestamp.Add(time.Duration(i) * time.Minute)
			_ = pw.WritePacket(ci, data)
		}
	}
	var sums []string
	segs := map[int]int{}
	for _, r := range decodeReader(t, &pcap, flows.Options{}) {
		switch r.Type {
		case flows.RecExtConn:
			s := r.SCTP.Summary
			sums = append(sums, fmt.Sprintf("%d %s %d", r.Conn, s.State, s.Segments))
		case flows.RecDDPSCTP:
			segs[r.Conn]++
		}
	}
	// Seeds 1 and 2 differ in their tags; the third run repeats the
	// second's INIT tag and TSNs: it is the second association's INIT
	// and DATA chunks sent again, not a new association.
	want := []string{"0 terminated 11", "1 terminated 11"}
	if !reflect.DeepEqual(sums, want) || segs[0] != 11 || segs[1] != 11 {
		t.Errorf("summaries %v, segments %v; want %v", sums, segs, want)
	}
}

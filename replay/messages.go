package replay

import (
	"crypto/sha256"
	"slices"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// pmsg is one message as the replay sends or expects it, after the
// negotiation: recorded messages with the negotiated DDP/RDMAP version and
// MSNs renumbered from 1, and the RTR the negotiation calls for.
type pmsg struct {
	rec  *Message // nil for a generated RTR
	dir  Dir
	head rdmap.Segment
	segs []Segment
	// after is how many messages of the other direction must have been
	// received before this one is sent: those that come before it in the
	// capture's frame order (the causal order of the recording).
	after int
	// at is the offset from the recording's start, for paced replay.
	at     time.Duration
	length uint64
	// digest is the SHA-256 of what the engine sends (generated octets for a
	// filler); recDigest is the recorded one, what a real peer should send.
	digest, recDigest Digest
	filler            bool
	// incomplete: the recording ends before the message's last segment
	// (L=1); a receiver counts it once it has as many segments.
	incomplete bool
	// readResp: a Read Response, sent to the Sink STag/TO of the Read
	// Request actually received (RFC 5040 §4.5).
	readResp bool
}

// info returns what a comparison looks at.
func (m *pmsg) info(peerIsEngine bool) MessageInfo {
	d := m.recDigest
	if peerIsEngine {
		d = m.digest
	}
	i := infoOf(&m.head)
	i.Length, i.Digest = m.length, d
	return i
}

// filler writes the generated payload of a message whose octets were not
// kept: octet i of the message (at offset off) is (i*7 + i>>8 + 0x5a) mod 256.
func fill(dst []byte, off uint64) {
	for i := range dst {
		j := off + uint64(i)
		dst[i] = byte(j*7 + j>>8 + 0x5a)
	}
}

// rtrMessages returns the RTR of the negotiated peer-to-peer mode (RFC 6581
// §4) as Linux siw sends it (captures MANIFEST: p2p_rtr1_rping,
// p2p_rtr2_rping): a zero-length Send, RDMA Write (STag 1, TO 0) or RDMA
// Read Request (size 0, sink STag 0, source STag 1), and for the Read its
// zero-length Read Response (to the sink STag, 0).
func rtrMessages(t mpa.RTRSet) []pmsg {
	var z Digest = sha256.Sum256(nil)
	one := []Segment{{Last: true}}
	switch t {
	case mpa.RTRWrite:
		h := rdmap.Segment{Opcode: rdmap.OpWrite, DDP: ddp.Header{T: true, L: true, STag: 1}}
		return []pmsg{{dir: I2R, head: h, segs: one, digest: z, recDigest: z}}
	case mpa.RTRRead:
		q := rdmap.Segment{Opcode: rdmap.OpReadRequest, DDP: ddp.Header{L: true, QN: ddp.QNReadRequest},
			Read: rdmap.ReadRequest{SinkSTag: 0, SrcSTag: 1}}
		r := rdmap.Segment{Opcode: rdmap.OpReadResponse, DDP: ddp.Header{T: true, L: true, STag: 0}}
		return []pmsg{
			{dir: I2R, head: q, segs: one, digest: z, recDigest: z},
			{dir: R2I, head: r, segs: one, digest: z, recDigest: z, readResp: true},
		}
	case mpa.RTRSend:
		h := rdmap.Segment{Opcode: rdmap.OpSend, DDP: ddp.Header{L: true, QN: ddp.QNSend}}
		return []pmsg{{dir: I2R, head: h, segs: one, digest: z, recDigest: z}}
	}
	return nil
}

// buildMessages returns the messages of s as replayed under outcome o, in
// causal order, with their dependencies. With responderWaits, responder
// messages the recording shows before the initiator's first one are moved
// after it: an emulated RNIC keeps the rule that the responder sends no FPDU
// before it has received the initiator's first (RFC 5044 §7.1; seed 003
// §4.2), which some recordings (Linux siw) break. mss is the TCP segment
// size of the connection (0: not known): in a direction whose markers the
// replay turns on, segments are cut to fit it (resegment).
func buildMessages(s *Script, o *Outcome, responderWaits bool, mss int) []pmsg {
	var out []pmsg
	if o.P2P {
		out = rtrMessages(o.RTR)
	}
	var buf []byte
	for i := range s.Messages {
		m := &s.Messages[i]
		if m.RTR {
			continue
		}
		pm := pmsg{rec: m, dir: m.Dir, head: m.Head, segs: m.Segments, at: m.TS.Sub(s.Start),
			length: m.Length, recDigest: m.Digest, digest: m.Digest, filler: m.Filler,
			readResp: m.Head.Opcode == rdmap.OpReadResponse, incomplete: !m.Complete}
		if pm.at < 0 {
			pm.at = 0
		}
		if m.Filler {
			h := sha256.New()
			for _, sg := range m.Segments {
				if cap(buf) < sg.PayloadLen {
					buf = make([]byte, sg.PayloadLen)
				}
				b := buf[:sg.PayloadLen]
				fill(b, sg.Off)
				h.Write(b)
			}
			h.Sum(pm.digest[:0])
		}
		if on := [2]bool{o.MarkersI2R, o.MarkersR2I}; mss > 0 && on[m.Dir] && !s.markers(m.Dir) {
			pm.segs = resegment(pm.segs, &m.Head, mss)
		}
		out = append(out, pm)
	}
	if responderWaits {
		if fi := slices.IndexFunc(out, func(m pmsg) bool { return m.dir == I2R }); fi > 0 {
			first := out[fi]
			copy(out[1:fi+1], out[:fi])
			out[0] = first
		}
	}
	// Versions, MSNs (from 1 per direction and queue, RFC 5041 §5.1) and
	// the causal dependencies.
	var msn [2]map[uint32]uint32
	var seen [2]int
	for i := range out {
		m := &out[i]
		m.head.DDP.DV, m.head.RV = o.V, o.V
		if !m.head.DDP.T {
			if msn[m.dir] == nil {
				msn[m.dir] = map[uint32]uint32{}
			}
			msn[m.dir][m.head.DDP.QN]++
			m.head.DDP.MSN = msn[m.dir][m.head.DDP.QN]
		}
		m.after = seen[m.dir.Other()]
		seen[m.dir]++
	}
	return out
}

// resegment cuts the segments of a message whose head is h so that each
// FPDU fits in one TCP segment of mss octets with markers (RFC 5044 §8,
// MULPDU; PROTOCOL.md A.3): the recording's segments were sized for a
// direction without markers, and the two or three markers a full segment
// gains would make every FPDU straddle two TCP segments. Messages without
// payload (Read Requests, Terminates, Atomics) keep their one segment. It
// returns segs itself when nothing needs cutting.
func resegment(segs []Segment, h *rdmap.Segment, mss int) []Segment {
	hdr := ddp.UntaggedHeaderLen
	if h.DDP.T {
		hdr = ddp.TaggedHeaderLen
	}
	hdr += h.Opcode.HeaderLen()
	most := mpa.MULPDU(mss, true) - hdr
	if most <= 0 || !slices.ContainsFunc(segs, func(sg Segment) bool { return sg.PayloadLen > most }) {
		return segs
	}
	var out []Segment
	for _, sg := range segs {
		for k := 0; k == 0 || k < sg.PayloadLen; k += most {
			n := min(most, sg.PayloadLen-k)
			piece := Segment{Off: sg.Off + uint64(k), Last: sg.Last && k+n == sg.PayloadLen, PayloadLen: n}
			if sg.Payload != nil {
				piece.Payload = sg.Payload[k : k+n : k+n]
			}
			out = append(out, piece)
		}
	}
	return out
}

package replay

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// MessageInfo is what a replay compares of an RDMA message: its opcode, its
// payload length and the SHA-256 of its payload (RFC 5040 §4; the digest does
// not depend on how the message was segmented), and the headers that say
// where its data goes: the STag and TO of a tagged message's first segment
// (RFC 5041 §4.3) and an RDMA Read Request's header (RFC 5040 §4.4), which
// has no payload.
type MessageInfo struct {
	Opcode rdmap.Opcode
	Length uint64
	Digest Digest
	STag   uint32
	TO     uint64
	Read   rdmap.ReadRequest
}

// infoOf returns the MessageInfo of a message whose first segment is h,
// without its length and digest.
func infoOf(h *rdmap.Segment) MessageInfo {
	m := MessageInfo{Opcode: h.Opcode}
	if h.DDP.T {
		m.STag, m.TO = h.DDP.STag, h.DDP.TO
	}
	if h.Opcode == rdmap.OpReadRequest {
		m.Read = h.Read
	}
	return m
}

// String describes the message: "Send 64 octets [1a2b3c4d5e6f7081]",
// "RDMA Write 64 octets STag 0x07bf1600 TO 0x7fe0b8347000 [...]", "RDMA
// Read Request of 64 octets from STag 0x... TO 0x... to STag 0x... TO 0x...".
func (m MessageInfo) String() string {
	switch {
	case m.Opcode == rdmap.OpReadRequest:
		r := m.Read
		return fmt.Sprintf("%s of %d octets from STag 0x%08x TO 0x%x to STag 0x%08x TO 0x%x", m.Opcode, r.Size, r.SrcSTag, r.SrcTO, r.SinkSTag, r.SinkTO)
	case m.STag != 0 || m.TO != 0 || m.Opcode == rdmap.OpWrite || m.Opcode == rdmap.OpReadResponse:
		return fmt.Sprintf("%s %d octets STag 0x%08x TO 0x%x [%s]", m.Opcode, m.Length, m.STag, m.TO, m.Digest)
	}
	return fmt.Sprintf("%s %d octets [%s]", m.Opcode, m.Length, m.Digest)
}

// MismatchKind says how a received message differs from the recording.
type MismatchKind uint8

// Mismatch kinds.
const (
	// MismatchMissing: a recorded message did not arrive.
	MismatchMissing MismatchKind = iota + 1
	// MismatchExtra: a message arrived that the recording does not have.
	MismatchExtra
	// MismatchOpcode: a message arrived in the place of a recorded one
	// with another opcode.
	MismatchOpcode
	// MismatchLength: same opcode, another payload length.
	MismatchLength
	// MismatchPayload: same opcode and length, another payload.
	MismatchPayload
	// MismatchOrder: the message arrived, but not in its recorded place.
	MismatchOrder
	// MismatchHeader: same opcode, length and payload, but another STag or
	// TO (tagged), or another RDMA Read Request header.
	MismatchHeader
	// MismatchFrame: the peer's MPA Request or Reply differs from the
	// recorded one (with the negotiation's overrides): its revision, flags
	// or private data (RFC 5044 §7.1.1, RFC 6581 §8). Detail says how.
	MismatchFrame
)

var mismatchNames = [...]string{"", "missing", "extra", "opcode", "length", "payload", "order", "header", "MPA frame"}

// String returns the kind's name as reports print it.
func (k MismatchKind) String() string {
	if int(k) < len(mismatchNames) && k != 0 {
		return mismatchNames[k]
	}
	return fmt.Sprintf("mismatch(%d)", uint8(k))
}

// Mismatch is one difference between the messages a side received and the
// ones the recording says its peer sent.
type Mismatch struct {
	// Dir is the direction of the message.
	Dir  Dir
	Kind MismatchKind
	// Want is the recorded message (its 0-based index among the direction's
	// messages in WantIndex, -1 for MismatchExtra); Got the received one
	// (GotIndex, -1 for MismatchMissing).
	Want, Got           MessageInfo
	WantIndex, GotIndex int
	// Detail describes a MismatchFrame: the fields that differ, and the
	// recorded and received frames.
	Detail string
}

// String describes the mismatch in one line.
func (m Mismatch) String() string {
	switch m.Kind {
	case MismatchMissing:
		return fmt.Sprintf("%s message %d missing: %s", m.Dir, m.WantIndex, m.Want)
	case MismatchExtra:
		return fmt.Sprintf("%s extra message (received #%d): %s", m.Dir, m.GotIndex, m.Got)
	case MismatchOrder:
		return fmt.Sprintf("%s message %d out of order (received #%d): %s", m.Dir, m.WantIndex, m.GotIndex, m.Want)
	case MismatchFrame:
		return fmt.Sprintf("%s %s", m.Dir, m.Detail)
	}
	return fmt.Sprintf("%s message %d %s differs: want %s, got %s", m.Dir, m.WantIndex, m.Kind, m.Want, m.Got)
}

// diffWindow is how far Diff looks ahead to tell a missing or extra message
// from a changed one.
const diffWindow = 64

// Diff compares the messages received in direction d with the ones expected,
// in order, and returns the differences: messages missing, extra, changed
// (opcode, length, payload or header) and out of order.
func Diff(d Dir, want, got []MessageInfo) []Mismatch {
	var out []Mismatch
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		if i < len(want) && j < len(got) && want[i] == got[j] {
			i++
			j++
			continue
		}
		if i < len(want) && j < len(got) {
			// Is got[j] a later wanted message (want[i..] missing), or is
			// want[i] a later received one (got[j..] extra)?
			km, ke := -1, -1
			for k := 1; k < diffWindow && i+k < len(want); k++ {
				if want[i+k] == got[j] {
					km = k
					break
				}
			}
			for k := 1; k < diffWindow && j+k < len(got); k++ {
				if got[j+k] == want[i] {
					ke = k
					break
				}
			}
			switch {
			case km > 0 && (ke < 0 || km <= ke):
				for k := 0; k < km; k++ {
					out = append(out, Mismatch{Dir: d, Kind: MismatchMissing, Want: want[i+k], WantIndex: i + k, GotIndex: -1})
				}
				i += km
				continue
			case ke > 0:
				for k := 0; k < ke; k++ {
					out = append(out, Mismatch{Dir: d, Kind: MismatchExtra, Got: got[j+k], GotIndex: j + k, WantIndex: -1})
				}
				j += ke
				continue
			}
			w, g := want[i], got[j]
			kind := MismatchPayload
			switch {
			case w.Opcode != g.Opcode:
				kind = MismatchOpcode
			case w.Length != g.Length:
				kind = MismatchLength
			case w.Digest == g.Digest:
				kind = MismatchHeader
			}
			out = append(out, Mismatch{Dir: d, Kind: kind, Want: w, Got: g, WantIndex: i, GotIndex: j})
			i++
			j++
			continue
		}
		if i < len(want) {
			out = append(out, Mismatch{Dir: d, Kind: MismatchMissing, Want: want[i], WantIndex: i, GotIndex: -1})
			i++
		} else {
			out = append(out, Mismatch{Dir: d, Kind: MismatchExtra, Got: got[j], GotIndex: j, WantIndex: -1})
			j++
		}
	}
	// A missing message that arrived elsewhere is out of order.
	for a := range out {
		if out[a].Kind != MismatchMissing {
			continue
		}
		for b := range out {
			if out[b].Kind == MismatchExtra && out[b].Got == out[a].Want {
				out[a].Kind, out[a].GotIndex = MismatchOrder, out[b].GotIndex
				out[b].Kind = 0
				break
			}
		}
	}
	n := 0
	for _, m := range out {
		if m.Kind != 0 {
			out[n] = m
			n++
		}
	}
	return out[:n]
}

// frameDiff compares the MPA frame a peer sent (got) with the one the
// recording has it send (want, nil when the recording has none) and returns
// the difference, or nil when they are the same.
func frameDiff(d Dir, want, got *mpa.Frame) *Mismatch {
	what := "Request"
	if got.Kind == mpa.KindReply {
		what = "Reply"
	}
	if want == nil {
		return &Mismatch{Dir: d, Kind: MismatchFrame, WantIndex: -1, GotIndex: -1,
			Detail: fmt.Sprintf("MPA %s where the recording has none: %s", what, frameString(got))}
	}
	var fields []string
	if want.Rev != got.Rev {
		fields = append(fields, "revision")
	}
	if want.M != got.M || want.C != got.C || want.R != got.R || want.S != got.S || want.Res != got.Res {
		fields = append(fields, "flags")
	}
	if !bytes.Equal(want.PD, got.PD) {
		fields = append(fields, "private data")
	}
	if len(fields) == 0 {
		return nil
	}
	return &Mismatch{Dir: d, Kind: MismatchFrame, WantIndex: -1, GotIndex: -1,
		Detail: fmt.Sprintf("MPA %s differs (%s): want %s, got %s", what, strings.Join(fields, ", "), frameString(want), frameString(got))}
}

// frameString describes an MPA frame for a report: "Rev 2 M=0 C=1 R=0 S=1
// Res=0x0, 24 octets of private data 00 04 00 04 69 77 ...".
func frameString(f *mpa.Frame) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Rev %d M=%d C=%d R=%d S=%d Res=0x%x, ", f.Rev, b2i(f.M), b2i(f.C), b2i(f.R), b2i(f.S), f.Res)
	if len(f.PD) == 0 {
		b.WriteString("no private data")
		return b.String()
	}
	fmt.Fprintf(&b, "%d octets of private data % x", len(f.PD), f.PD[:min(len(f.PD), 32)])
	if len(f.PD) > 32 {
		b.WriteString(" ...")
	}
	return b.String()
}

package rdmap

import (
	"encoding/binary"
	"errors"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ddp"
)

// Segment is one decoded DDP segment carrying RDMAP, i.e. the ULPDU of one
// MPA FPDU: the DDP header (RFC 5041 §4), the RDMAP control octet (RFC
// 5040 §4.1) and the RDMAP header the opcode calls for.
//
// RV, Rsvd and Opcode are the fields of DDP.ULPCtrl. InvalSTag is
// DDP.ULPRsvd when the opcode is Send with Invalidate or Send with SE and
// Invalidate (untagged); zero otherwise. Of Read, Term, Immediate,
// AtomicReq and AtomicResp only the one the opcode names is filled in:
// Read for RDMA Read Request, Term for Terminate, Immediate for the two
// Immediate Data opcodes (RFC 7306), AtomicReq and AtomicResp for Atomic
// Request and Atomic Response (RFC 7306).
//
// HdrLen is the number of header octets (DDP plus RDMAP). Payload is the
// rest of the segment: the ULP payload of Writes, Read Responses and
// Sends, and normally empty for the other opcodes. It aliases the decoded
// buffer and its capacity is capped at its length.
type Segment struct {
	DDP    ddp.Header
	RV     uint8
	Rsvd   uint8
	Opcode Opcode

	InvalSTag uint32

	Read       ReadRequest
	Term       Terminate
	Immediate  uint64
	AtomicReq  AtomicRequest
	AtomicResp AtomicResponse

	HdrLen  int
	Payload []byte

	// HdrCut is set by DecodeCutInto on a Read Request, Immediate Data
	// or Atomic Request or Response whose RDMAP header the capture cut
	// (snap length, capture gap): how many of the header's octets were
	// captured, at least 4 (a Read Request's Data Sink STag, an Atomic
	// Request's opcode word, an Atomic Response's Request Identifier).
	// Read, Immediate, AtomicReq or AtomicResp holds the fields wholly
	// within them (ReadRequestKnown, AtomicRequestKnown,
	// AtomicResponseKnown), the others zero. 0 for a whole header. (A
	// Terminate's is Term.Cut.)
	HdrCut int
}

// Control returns the RDMAP control octet built from s.RV, s.Rsvd and
// s.Opcode, as AppendSegment writes it.
func (s Segment) Control() Control { return MakeControl(s.RV, s.Rsvd, s.Opcode) }

// Decode decodes one DDP segment carrying RDMAP: the DDP header, then the
// RDMAP header its opcode needs (none for RDMA Write, Read Response and the
// Sends; RFC 5040 §4.2 Figure 5, RFC 7306). The RDMAP header is read after
// whichever DDP header the T bit gave, even when T contradicts the opcode;
// Segment.Check reports that.
//
// Errors, returned unwrapped:
//
//   - dissect.ErrTruncated when ulpdu ends inside the DDP header (the
//     Segment is then zero) or inside the RDMAP header (the Segment then
//     holds the DDP header, RV, Rsvd, Opcode and InvalSTag, with HdrLen
//     the DDP header's length and no Payload);
//   - dissect.ErrUnknownOpcode for opcodes 0xC to 0xF: the Segment holds
//     the DDP and control fields, HdrLen is the DDP header's length and
//     Payload the rest of the segment.
//
// Decode does not allocate.
func Decode(ulpdu []byte) (Segment, error) {
	var s Segment
	err := DecodeInto(&s, ulpdu)
	return s, err
}

// DecodeInto is Decode writing into *s, which it overwrites whole: the
// same fields and the same errors, without copying a Segment (some 250
// octets) on the way out. Hot paths decode straight into the record that
// keeps the result.
func DecodeInto(s *Segment, ulpdu []byte) error {
	// Cleared, then set field by field, the DDP header in place: a
	// composite literal, or a Header returned, is built on the stack and
	// copied (three times the stores, and a stalled load of the copy).
	*s = Segment{}
	n, err := ddp.DecodeInto(&s.DDP, ulpdu)
	if err != nil {
		return err
	}
	h := &s.DDP
	c := Control(h.ULPCtrl)
	s.RV, s.Rsvd, s.Opcode, s.HdrLen = c.RV(), c.Rsvd(), c.Opcode(), n
	if !h.T && s.Opcode.HasInvalidate() {
		s.InvalSTag = h.ULPRsvd
	}
	rest := ulpdu[n:]
	m := 0
	switch s.Opcode {
	case OpWrite, OpReadResponse, OpSend, OpSendInvalidate, OpSendSE, OpSendSEInvalidate:
	case OpReadRequest:
		if s.Read, err = DecodeReadRequest(rest); err != nil {
			return err
		}
		m = ReadRequestLen
	case OpTerminate:
		if s.Term, m, err = DecodeTerminate(rest); err != nil {
			return err
		}
	case OpImmediate, OpImmediateSE:
		if len(rest) < ImmediateDataLen {
			return dissect.ErrTruncated
		}
		s.Immediate = binary.BigEndian.Uint64(rest)
		m = ImmediateDataLen
	case OpAtomicRequest:
		if s.AtomicReq, err = DecodeAtomicRequest(rest); err != nil {
			return err
		}
		m = AtomicRequestLen
	case OpAtomicResponse:
		if s.AtomicResp, err = DecodeAtomicResponse(rest); err != nil {
			return err
		}
		m = AtomicResponseLen
	default:
		s.Payload = rest[:len(rest):len(rest)]
		return dissect.ErrUnknownOpcode
	}
	s.HdrLen = n + m
	s.Payload = rest[m:len(rest):len(rest)]
	return nil
}

// DecodeCutInto is DecodeInto for a segment the capture cut (snap length,
// capture gap): ulpdu holds the first octets of a ULPDU of wire octets. A
// Terminate whose DDP header and control word were captured is decoded as
// far as ulpdu goes (DecodeTerminateCut); when Term.Cut says the header
// itself was cut, HdrLen is wire and Payload nil, as a Terminate carries
// no payload. A Read Request whose header was cut after its Data Sink
// STag is decoded likewise, HdrCut saying how much of the header there
// was (the STag is what its Read Responses carry: header-only captures,
// tcpdump -s 96, cut every Read Request), and so are the RFC 7306 headers
// (Immediate Data, Atomic Request and Response) cut after their first 4
// octets. Every other segment decodes as DecodeInto(s, ulpdu) does, to the
// same errors.
func DecodeCutInto(s *Segment, ulpdu []byte, wire int) error {
	err := DecodeInto(s, ulpdu)
	if len(ulpdu) >= wire || err != nil && !errors.Is(err, dissect.ErrTruncated) {
		return err
	}
	if m := cutHeaderLen(s.Opcode); m > 0 && err != nil && s.HdrLen > 0 {
		// DecodeInto decoded the DDP header and the control octet.
		n := s.HdrLen
		rest := ulpdu[n:]
		if len(rest) < 4 || len(rest) >= m || n+m > wire {
			*s = Segment{}
			return err
		}
		switch s.Opcode {
		case OpReadRequest:
			s.Read = decodeReadRequestCut(rest)
		case OpAtomicRequest:
			s.AtomicReq = decodeAtomicRequestCut(rest)
		case OpAtomicResponse:
			s.AtomicResp = decodeAtomicResponseCut(rest)
		}
		s.HdrCut = len(rest)
		s.HdrLen, s.Payload = wire, nil
		return nil
	}
	if s.Opcode != OpTerminate {
		return err
	}
	// DecodeInto decoded the DDP header and the control octet; the
	// Terminate header is read again with the layout the wire length
	// decides.
	n := s.DDP.Len()
	rest := ulpdu[n:]
	t, m, err := DecodeTerminateCut(rest, wire-n)
	if err != nil {
		*s = Segment{}
		return err
	}
	s.Term = t
	s.HdrLen, s.Payload = n+m, rest[m:len(rest):len(rest)]
	if t.Cut {
		// The header runs on into the octets cut; a Terminate carries
		// no payload.
		s.HdrLen, s.Payload = wire, nil
	}
	return nil
}

// cutHeaderLen returns the length of the RDMAP header of op if
// DecodeCutInto decodes it cut (Segment.HdrCut), else 0.
func cutHeaderLen(op Opcode) int {
	switch op {
	case OpReadRequest:
		return ReadRequestLen
	case OpImmediate, OpImmediateSE:
		return ImmediateDataLen
	case OpAtomicRequest:
		return AtomicRequestLen
	case OpAtomicResponse:
		return AtomicResponseLen
	}
	return 0
}

// AppendSegment appends the wire form of s to dst: the DDP header, the
// RDMAP header its opcode calls for, and s.Payload.
//
// The RDMAP control octet is built from s.RV, s.Rsvd and s.Opcode, and
// for the two invalidate opcodes on an untagged header DDP octets 2..5
// are s.InvalSTag; s.DDP.ULPCtrl, and then s.DDP.ULPRsvd, are ignored.
// Decode of the result gives s back (HdrLen included) for every Segment
// Decode returned without error or with ErrUnknownOpcode.
func AppendSegment(dst []byte, s Segment) []byte {
	h := s.DDP
	h.ULPCtrl = uint8(s.Control())
	if !h.T && s.Opcode.HasInvalidate() {
		h.ULPRsvd = s.InvalSTag
	}
	dst = ddp.Append(dst, h)
	switch s.Opcode & opcodeMask {
	case OpReadRequest:
		dst = AppendReadRequest(dst, s.Read)
	case OpTerminate:
		dst = AppendTerminate(dst, s.Term)
	case OpImmediate, OpImmediateSE:
		dst = binary.BigEndian.AppendUint64(dst, s.Immediate)
	case OpAtomicRequest:
		dst = AppendAtomicRequest(dst, s.AtomicReq)
	case OpAtomicResponse:
		dst = AppendAtomicResponse(dst, s.AtomicResp)
	}
	return append(dst, s.Payload...)
}

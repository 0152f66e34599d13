package sctp

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
)

// Payload protocol identifiers of RFC 5043, as the IANA "SCTP Payload
// Protocol Identifiers" registry lists them (reference RFC 5043): a DATA
// chunk carries either one DDP segment or one DDP Stream Session Control
// message; seed 003 §7: "The Payload Protocol Identifier (PPID) already
// distinguishes between Session Establishment and DDP Segments."
const (
	PPIDDDPSegment        = 16 // "DDP Segment Chunk"
	PPIDDDPSessionControl = 17 // "DDP Stream Session Control"
)

// PPIDName returns "ddp_segment", "ddp_session_control", or "" for other
// identifiers.
func PPIDName(ppid uint32) string {
	switch ppid {
	case PPIDDDPSegment:
		return "ddp_segment"
	case PPIDDDPSessionControl:
		return "ddp_session_control"
	}
	return ""
}

// FuncCode is the function code of a DDP Stream Session Control message
// (RFC 5043; seed 003 §7 for 0x05-0x07).
type FuncCode uint16

// Function codes. Initiate and Accept are "equivalent to an MPA Request
// Frame and an accepting MPA Reply Frame" (seed 003 §7); Reject to a
// rejecting Reply; Terminate ends the session. The enhanced codes add the
// IRD/ORD negotiation of seed 003 §8, and "the Enhanced Reject function
// code SHOULD be used to indicate a configuration that would have been
// accepted" (seed 003 §7). The values 0x01-0x04 are [rfc-mem] (RFC 5043).
const (
	FuncInitiate         FuncCode = 0x01
	FuncAccept           FuncCode = 0x02
	FuncReject           FuncCode = 0x03
	FuncTerminate        FuncCode = 0x04
	FuncEnhancedInitiate FuncCode = 0x05
	FuncEnhancedAccept   FuncCode = 0x06
	FuncEnhancedReject   FuncCode = 0x07
)

var funcNames = [...]string{"", "initiate", "accept", "reject", "terminate", "enhanced_initiate", "enhanced_accept", "enhanced_reject"}

// String returns the JSON Lines name ("initiate", "enhanced_accept", ...)
// or "function(N)".
func (f FuncCode) String() string {
	if f > 0 && int(f) < len(funcNames) {
		return funcNames[f]
	}
	return "function(" + utoa(uint64(f)) + ")"
}

// Known reports whether f is one of the seven defined function codes.
func (f FuncCode) Known() bool { return f >= FuncInitiate && f <= FuncEnhancedReject }

// Enhanced reports whether f is one of seed 003's enhanced codes, whose
// private data begins with the Enhanced RDMA Connection Establishment
// Data.
func (f FuncCode) Enhanced() bool { return f >= FuncEnhancedInitiate && f <= FuncEnhancedReject }

// Initiating reports whether f opens a session (Initiate or Enhanced
// Initiate): its sender is the initiator.
func (f FuncCode) Initiating() bool { return f == FuncInitiate || f == FuncEnhancedInitiate }

// Rejecting reports whether f refuses a session (Reject, Enhanced Reject).
func (f FuncCode) Rejecting() bool { return f == FuncReject || f == FuncEnhancedReject }

// SessionControlHeaderLen is the size of the fixed part of a DDP Stream
// Session Control message: Function Code (16 bits) and Private Data
// Length (16 bits) [rfc-mem: RFC 5043].
const SessionControlHeaderLen = 4

// SessionControl is a DDP Stream Session Control message, the user data of
// a DATA chunk of PPID 17 (RFC 5043):
//
//	octets 0-1: Function Code
//	octets 2-3: Private Data Length
//	octets 4-:  Private Data (for the enhanced codes, starting with the
//	            four octets |A|B| IRD |C|D| ORD | of seed 003 §8)
//
// PD aliases the input.
type SessionControl struct {
	Func  FuncCode
	PDLen uint16
	PD    []byte
}

// DecodeSessionControl reads a session control message. It returns
// dissect.ErrTruncated when b is shorter than the fixed part and
// dissect.ErrBadLength (with Func and PDLen set, PD = what there is) when
// the private data length runs past b. Octets after the private data are
// ignored. It does not allocate.
func DecodeSessionControl(b []byte) (SessionControl, error) {
	if len(b) < SessionControlHeaderLen {
		return SessionControl{}, dissect.ErrTruncated
	}
	s := SessionControl{Func: FuncCode(binary.BigEndian.Uint16(b[0:2])), PDLen: binary.BigEndian.Uint16(b[2:4])}
	end := SessionControlHeaderLen + int(s.PDLen)
	if end > len(b) {
		s.PD = b[SessionControlHeaderLen:len(b):len(b)]
		return s, dissect.ErrBadLength
	}
	s.PD = b[SessionControlHeaderLen:end:end]
	return s, nil
}

// AppendSessionControl appends s with its Private Data Length set to
// len(s.PD) (s.PDLen is ignored).
func AppendSessionControl(dst []byte, s SessionControl) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(s.Func))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s.PD)))
	return append(dst, s.PD...)
}

// Enhanced returns the Enhanced RDMA Connection Establishment Data that
// starts the private data of an enhanced function code (seed 003 §8, the
// layout of RFC 6581 §9) and the ULP private data after it. ok is false for
// the other codes and when the private data is shorter than four octets.
// Read the flags with mpa.FlagsDraft01: seed 003 is the only text that
// defines these messages.
func (s SessionControl) Enhanced() (e mpa.Enhanced, ulp []byte, ok bool) {
	if !s.Func.Enhanced() {
		return mpa.Enhanced{}, s.PD, false
	}
	e, err := mpa.DecodeEnhanced(s.PD)
	if err != nil {
		return mpa.Enhanced{}, s.PD, false
	}
	return e, s.PD[mpa.EnhancedLen:], true
}

// Check reports an unknown function code (sctp.session_function_unknown)
// and an enhanced code without room for IRD/ORD
// (sctp.session_enhanced_short).
func (s SessionControl) Check(dst []dissect.Finding) []dissect.Finding {
	if !s.Func.Known() {
		dst = append(dst, dissect.Finding{Severity: dissect.SeverityWarning, Code: "sctp.session_function_unknown",
			Msg: "DDP Stream Session Control function code " + utoa(uint64(s.Func)) + " is not defined",
			Ref: "RFC 5043; draft-ietf-storm-mpa-peer-connect-01 §7"})
	} else if s.Func.Enhanced() && len(s.PD) < mpa.EnhancedLen {
		dst = append(dst, dissect.Finding{Severity: dissect.SeverityWarning, Code: "sctp.session_enhanced_short",
			Msg: s.Func.String() + " without the 4-octet IRD/ORD data (" + utoa(uint64(len(s.PD))) + " octets of private data)",
			Ref: "draft-ietf-storm-mpa-peer-connect-01 §8"})
	}
	return dst
}

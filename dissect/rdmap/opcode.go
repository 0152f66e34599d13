package rdmap

import "github.com/iwarpkit/iwarpkit/dissect/ddp"

// Opcode is the RDMAP message opcode, the low four bits of the RDMAP
// control octet (RFC 5040 §4.1 Figure 4; RFC 7306 adds 0x8 to 0xB).
type Opcode uint8

// RDMAP opcodes. 0x0 to 0x7 are RFC 5040 §4.1 Figure 4 (identical in
// draft-ietf-rddp-rdmap-06); 0x8 to 0xB are RFC 7306; 0xC to 0xF are
// reserved.
const (
	OpWrite            Opcode = 0x0 // RDMA Write
	OpReadRequest      Opcode = 0x1 // RDMA Read Request
	OpReadResponse     Opcode = 0x2 // RDMA Read Response
	OpSend             Opcode = 0x3 // Send
	OpSendInvalidate   Opcode = 0x4 // Send with Invalidate
	OpSendSE           Opcode = 0x5 // Send with Solicited Event
	OpSendSEInvalidate Opcode = 0x6 // Send with Solicited Event and Invalidate
	OpTerminate        Opcode = 0x7 // Terminate
	OpImmediate        Opcode = 0x8 // Immediate Data (RFC 7306)
	OpImmediateSE      Opcode = 0x9 // Immediate Data with Solicited Event (RFC 7306)
	OpAtomicRequest    Opcode = 0xA // Atomic Request (RFC 7306)
	OpAtomicResponse   Opcode = 0xB // Atomic Response (RFC 7306)
)

const (
	opcodeMask           Opcode = 0x0F
	lastDefinedOpcode           = OpAtomicResponse
	immediateDataLen            = 8  // RFC 7306 Immediate Data
	atomicRequestHdrLen         = 52 // RFC 7306 Atomic Request header
	atomicResponseHdrLen        = 12 // RFC 7306 Atomic Response header
)

var opcodeNames = [16]string{
	"RDMA Write",
	"RDMA Read Request",
	"RDMA Read Response",
	"Send",
	"Send with Invalidate",
	"Send with SE",
	"Send with SE and Invalidate",
	"Terminate",
	"Immediate Data",
	"Immediate Data with SE",
	"Atomic Request",
	"Atomic Response",
	"Reserved (0xC)",
	"Reserved (0xD)",
	"Reserved (0xE)",
	"Reserved (0xF)",
}

// String returns the message name RFC 5040 Figure 4 and RFC 7306 give the
// opcode ("RDMA Write", "Send with SE and Invalidate", ...), or
// "Reserved (0xN)" for the others. It does not allocate for 0x0 to 0xF.
func (o Opcode) String() string {
	if int(o) < len(opcodeNames) {
		return opcodeNames[o]
	}
	return "Reserved (" + hex2(uint8(o)) + ")"
}

// GoString returns the Go name of a defined opcode ("rdmap.OpSend"), so
// that test failures print readably, and "rdmap.Opcode(0xN)" otherwise.
func (o Opcode) GoString() string {
	names := [...]string{"OpWrite", "OpReadRequest", "OpReadResponse", "OpSend",
		"OpSendInvalidate", "OpSendSE", "OpSendSEInvalidate", "OpTerminate",
		"OpImmediate", "OpImmediateSE", "OpAtomicRequest", "OpAtomicResponse"}
	if o <= lastDefinedOpcode {
		return "rdmap." + names[o]
	}
	return "rdmap.Opcode(" + hex2(uint8(o)) + ")"
}

// Valid reports whether RFC 5040 or RFC 7306 defines the opcode.
func (o Opcode) Valid() bool { return o <= lastDefinedOpcode }

// Tagged reports the value of the DDP Tagged flag the opcode requires
// (RFC 5040 §4.1 Figure 4): true for RDMA Write and RDMA Read Response,
// false for every other defined opcode (all untagged) and for reserved
// ones.
func (o Opcode) Tagged() bool { return o == OpWrite || o == OpReadResponse }

// QN returns the DDP queue number an untagged message with this opcode
// must use (RFC 5040 §4.1 Figure 4, RFC 7306), and false for tagged and
// reserved opcodes.
//
// Send variants and Immediate Data: ddp.QNSend. RDMA Read Request:
// ddp.QNReadRequest. Terminate: ddp.QNTerminate. Atomic Response:
// ddp.QNAtomic (3). Atomic Request: ddp.QNReadRequest (1), as urdma, the
// one public implementation of RFC 7306 found, sends it; this was not
// checked against the RFC text, so [Segment.Check] also accepts QN 3 for
// an Atomic Request.
func (o Opcode) QN() (uint32, bool) {
	switch o {
	case OpSend, OpSendInvalidate, OpSendSE, OpSendSEInvalidate, OpImmediate, OpImmediateSE:
		return ddp.QNSend, true
	case OpReadRequest, OpAtomicRequest:
		return ddp.QNReadRequest, true
	case OpTerminate:
		return ddp.QNTerminate, true
	case OpAtomicResponse:
		return ddp.QNAtomic, true
	}
	return 0, false
}

// HasInvalidate reports whether the opcode carries an Invalidate STag in
// DDP octets 2..5 (RFC 5040 §4.1): Send with Invalidate and Send with SE
// and Invalidate.
func (o Opcode) HasInvalidate() bool { return o == OpSendInvalidate || o == OpSendSEInvalidate }

// DataOnly reports whether the opcode has no RDMAP header after the DDP
// header, only ULP payload (RFC 5040 §4.2, Figure 5): RDMA Write, RDMA Read
// Response and the four Sends. Decode reads nothing of such a segment past
// the DDP header.
func (o Opcode) DataOnly() bool {
	switch o {
	case OpWrite, OpReadResponse, OpSend, OpSendInvalidate, OpSendSE, OpSendSEInvalidate:
		return true
	}
	return false
}

// HeaderLen returns the length of the RDMAP header that follows the DDP
// header for this opcode, 0 when there is none: 28 for RDMA Read Request
// (RFC 5040 §4.4), 8 for the Immediate Data messages, 52 for Atomic
// Request and 12 for Atomic Response (RFC 7306). A Terminate's header has
// a variable length (see DecodeTerminate); HeaderLen returns its minimum,
// 4.
func (o Opcode) HeaderLen() int {
	switch o {
	case OpReadRequest:
		return ReadRequestLen
	case OpTerminate:
		return terminateMinLen
	case OpImmediate, OpImmediateSE:
		return immediateDataLen
	case OpAtomicRequest:
		return atomicRequestHdrLen
	case OpAtomicResponse:
		return atomicResponseHdrLen
	}
	return 0
}

// Control is the RDMAP control octet, DDP octet 1 (RFC 5040 §4.1 Figure 3):
// RV in bits 0-1 (mask 0xC0), reserved bits 2-3 (0x30), opcode bits 4-7
// (0x0F).
type Control uint8

// RDMAP versions (RFC 5040 §4.1; draft-ietf-rddp-rdmap-06 §4.1 for
// RDMAC).
const (
	// VersionRDMAC is RV 0, used by RDMA Consortium RNICs.
	VersionRDMAC = 0
	// VersionIETF is RV 1, the version RFC 5040 defines.
	VersionIETF = 1
)

// MakeControl builds a control octet from its fields, masking each to its
// width.
func MakeControl(rv, rsvd uint8, op Opcode) Control {
	return Control((rv&3)<<6 | (rsvd&3)<<4 | uint8(op&opcodeMask))
}

// RV returns the RDMAP version (bits 0-1).
func (c Control) RV() uint8 { return uint8(c) >> 6 }

// Rsvd returns the two reserved bits (bits 2-3), which must be zero.
func (c Control) Rsvd() uint8 { return (uint8(c) >> 4) & 3 }

// Opcode returns the opcode (bits 4-7).
func (c Control) Opcode() Opcode { return Opcode(c) & opcodeMask }

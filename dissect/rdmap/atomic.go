package rdmap

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// AtomicOp is the Atomic Operation code in the low four bits of the first
// word of an Atomic Request header (RFC 7306).
//
// The values were not checked against the RFC text: FetchAdd 0 and CmpSwap
// 2 are what Wireshark's iWARP dissector decodes; Swap 1 is the gap between
// them. urdma (a non-standard UDP implementation) sends 1 for CmpSwap.
type AtomicOp uint8

//go:generate go tool stringer -type=AtomicOp,TermLayer,Need -linecomment -output=enums_string.go

// Atomic operations (RFC 7306; values unverified, see AtomicOp).
const (
	AtomicFetchAdd AtomicOp = 0 // FetchAdd
	AtomicSwap     AtomicOp = 1 // Swap
	AtomicCmpSwap  AtomicOp = 2 // CmpSwap
)

// AtomicRequestLen is the length of the Atomic Request header (RFC 7306)
// that follows the untagged DDP header.
const AtomicRequestLen = atomicRequestHdrLen

// AtomicResponseLen is the length of the Atomic Response header (RFC 7306)
// that follows the untagged DDP header.
const AtomicResponseLen = atomicResponseHdrLen

// ImmediateDataLen is the length of the immediate data an Immediate Data
// message carries after the untagged DDP header (RFC 7306).
const ImmediateDataLen = immediateDataLen

// AtomicRequest is the RFC 7306 Atomic Request header (52 octets; layout
// as Wireshark and urdma decode it):
//
//	+0  Reserved (28 bits) | Atomic OpCode (4 bits)
//	+4  Request Identifier
//	+8  Remote STag
//	+12 Remote Tagged Offset (64)
//	+20 Add or Swap Data (64)
//	+28 Add or Swap Mask (64)
//	+36 Compare Data (64)
//	+44 Compare Mask (64)
//
// Rsvd keeps the 28 reserved bits (first word >> 4) so that the header
// round-trips exactly.
type AtomicRequest struct {
	Rsvd        uint32 // reserved, 28 bits
	Op          AtomicOp
	ReqID       uint32
	RemoteSTag  uint32
	RemoteTO    uint64
	AddSwapData uint64
	AddSwapMask uint64
	CompareData uint64
	CompareMask uint64
}

// AtomicResponse is the RFC 7306 Atomic Response header (12 octets): the
// Request Identifier of the Atomic Request it answers and the value the
// remote location held before the operation.
type AtomicResponse struct {
	ReqID     uint32
	OrigValue uint64
}

// DecodeAtomicRequest reads an Atomic Request header from the start of b.
// It returns dissect.ErrTruncated when b is shorter than AtomicRequestLen.
func DecodeAtomicRequest(b []byte) (AtomicRequest, error) {
	if len(b) < AtomicRequestLen {
		return AtomicRequest{}, dissect.ErrTruncated
	}
	b = b[:AtomicRequestLen]
	w := binary.BigEndian.Uint32(b[0:4])
	return AtomicRequest{
		Rsvd:        w >> 4,
		Op:          AtomicOp(w & 0xF),
		ReqID:       binary.BigEndian.Uint32(b[4:8]),
		RemoteSTag:  binary.BigEndian.Uint32(b[8:12]),
		RemoteTO:    binary.BigEndian.Uint64(b[12:20]),
		AddSwapData: binary.BigEndian.Uint64(b[20:28]),
		AddSwapMask: binary.BigEndian.Uint64(b[28:36]),
		CompareData: binary.BigEndian.Uint64(b[36:44]),
		CompareMask: binary.BigEndian.Uint64(b[44:52]),
	}, nil
}

// decodeAtomicRequestCut reads the fields of an Atomic Request header that
// lie wholly within b, shorter than AtomicRequestLen (DecodeCutInto).
func decodeAtomicRequestCut(b []byte) AtomicRequest {
	// The header's fields end at these offsets: the octets up to the
	// last end within b are decoded, the rest read as zero.
	var full [AtomicRequestLen]byte
	keep := 0
	for _, end := range [...]int{4, 8, 12, 20, 28, 36, 44} {
		if len(b) >= end {
			keep = end
		}
	}
	copy(full[:], b[:keep])
	r, _ := DecodeAtomicRequest(full[:])
	return r
}

// AtomicRequestKnown reports which fields of an Atomic Request header the
// first have octets held (Segment.HdrCut; 0 or AtomicRequestLen and more:
// all of them), in the order of the header: the opcode word, Request
// Identifier, Remote STag, Remote Tagged Offset, Add or Swap Data and
// Mask, Compare Data and Mask.
func AtomicRequestKnown(have int) (op, reqID, stag, to, addSwapData, addSwapMask, compareData, compareMask bool) {
	if have <= 0 || have >= AtomicRequestLen {
		return true, true, true, true, true, true, true, true
	}
	return have >= 4, have >= 8, have >= 12, have >= 20, have >= 28, have >= 36, have >= 44, false
}

// decodeAtomicResponseCut reads the fields of an Atomic Response header
// that lie wholly within b, shorter than AtomicResponseLen (DecodeCutInto).
func decodeAtomicResponseCut(b []byte) AtomicResponse {
	var r AtomicResponse
	if len(b) >= 4 {
		r.ReqID = binary.BigEndian.Uint32(b[0:4])
	}
	return r
}

// AtomicResponseKnown reports which fields of an Atomic Response header the
// first have octets held (Segment.HdrCut; 0 or AtomicResponseLen and
// more: both): its Request Identifier and Original Value.
func AtomicResponseKnown(have int) (reqID, origValue bool) {
	if have <= 0 || have >= AtomicResponseLen {
		return true, true
	}
	return have >= 4, false
}

// AppendAtomicRequest appends the 52-octet wire form of r to dst. Rsvd is
// masked to 28 bits and Op to 4.
func AppendAtomicRequest(dst []byte, r AtomicRequest) []byte {
	dst = binary.BigEndian.AppendUint32(dst, (r.Rsvd&0x0FFFFFFF)<<4|uint32(r.Op&0xF))
	dst = binary.BigEndian.AppendUint32(dst, r.ReqID)
	dst = binary.BigEndian.AppendUint32(dst, r.RemoteSTag)
	dst = binary.BigEndian.AppendUint64(dst, r.RemoteTO)
	dst = binary.BigEndian.AppendUint64(dst, r.AddSwapData)
	dst = binary.BigEndian.AppendUint64(dst, r.AddSwapMask)
	dst = binary.BigEndian.AppendUint64(dst, r.CompareData)
	return binary.BigEndian.AppendUint64(dst, r.CompareMask)
}

// DecodeAtomicResponse reads an Atomic Response header from the start of
// b. It returns dissect.ErrTruncated when b is shorter than
// AtomicResponseLen.
func DecodeAtomicResponse(b []byte) (AtomicResponse, error) {
	if len(b) < AtomicResponseLen {
		return AtomicResponse{}, dissect.ErrTruncated
	}
	return AtomicResponse{
		ReqID:     binary.BigEndian.Uint32(b[0:4]),
		OrigValue: binary.BigEndian.Uint64(b[4:12]),
	}, nil
}

// AppendAtomicResponse appends the 12-octet wire form of r to dst.
func AppendAtomicResponse(dst []byte, r AtomicResponse) []byte {
	dst = binary.BigEndian.AppendUint32(dst, r.ReqID)
	return binary.BigEndian.AppendUint64(dst, r.OrigValue)
}

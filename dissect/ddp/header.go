package ddp

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// Header lengths, RFC 5041 §4.
const (
	// TaggedHeaderLen is the length of the tagged buffer model header:
	// control octet, RsvdULP octet, STag (4) and TO (8).
	TaggedHeaderLen = 14
	// UntaggedHeaderLen is the length of the untagged buffer model header:
	// control octet, RsvdULP (5), QN (4), MSN (4) and MO (4).
	UntaggedHeaderLen = 18
)

// Versions of the DV field (RFC 5041 §4, DDP Control Field; the RDMA
// Consortium value is from draft-carrier-rddp-rnic-interop §3).
const (
	// VersionRDMAC is DV 0, used by RDMA Consortium (pre-IETF) RNICs.
	VersionRDMAC = 0
	// VersionIETF is DV 1, the version RFC 5041 defines.
	VersionIETF = 1
)

// Queue numbers of the untagged buffer model as RDMAP uses them (RFC 5040
// §4.1 Figure 4; RFC 7306 for QNAtomic).
const (
	// QNSend is the queue of Send messages (all four Send variants, and
	// the Immediate Data messages of RFC 7306).
	QNSend uint32 = 0
	// QNReadRequest is the RDMA Read Request queue.
	QNReadRequest uint32 = 1
	// QNTerminate is the Terminate queue.
	QNTerminate uint32 = 2
	// QNAtomic is the queue RFC 7306 adds for atomic operations (the
	// Atomic Response queue). Not verified against the RFC text: see
	// rdmap.Opcode.QN for what is expected of each atomic message.
	QNAtomic uint32 = 3
)

// Bits of the DDP control octet (octet 0), RFC 5041 §4.
const (
	ctrlT    = 0x80 // Tagged flag
	ctrlL    = 0x40 // Last flag
	ctrlRsvd = 0x3C // reserved, sent as zero
	ctrlDV   = 0x03 // DDP version
)

// Header is a decoded DDP header (RFC 5041 §4), tagged or untagged as T
// says.
//
// Every bit of the header is kept, so that [Append] reproduces the octets
// exactly: Rsvd holds the four reserved control bits ((ctrl&0x3C)>>2) and
// ULPCtrl the first RsvdULP octet (octet 1, RDMAP's control octet).
//
// STag and TO are meaningful only when T is set. ULPRsvd (octets 2..5, the
// rest of RsvdULP; RDMAP's Invalidate STag), QN, MSN and MO only when T is
// clear. Decode leaves the fields of the other model zero and Append
// ignores them.
type Header struct {
	T, L bool
	Rsvd uint8 // reserved control bits, (ctrl&0x3C)>>2
	DV   uint8 // DDP version, ctrl&0x03

	ULPCtrl uint8 // octet 1: RsvdULP[0:7], RDMAP's control octet

	STag uint32 // tagged: Data Sink STag
	TO   uint64 // tagged: Data Sink Tagged Offset

	ULPRsvd uint32 // untagged: octets 2..5, RsvdULP[8:39]
	QN      uint32 // untagged: queue number
	MSN     uint32 // untagged: message sequence number
	MO      uint32 // untagged: message offset
}

// Len returns the header's length on the wire: TaggedHeaderLen when T is
// set, UntaggedHeaderLen otherwise.
func (h Header) Len() int {
	if h.T {
		return TaggedHeaderLen
	}
	return UntaggedHeaderLen
}

// Ctrl returns the DDP control octet (octet 0) that Append writes for h.
func (h Header) Ctrl() uint8 {
	c := (h.Rsvd<<2)&ctrlRsvd | h.DV&ctrlDV
	if h.T {
		c |= ctrlT
	}
	if h.L {
		c |= ctrlL
	}
	return c
}

// HeaderLen returns the length of the DDP header whose control octet is
// ctrl: the T bit alone decides it (RFC 5041 §4).
func HeaderLen(ctrl uint8) int {
	if ctrl&ctrlT != 0 {
		return TaggedHeaderLen
	}
	return UntaggedHeaderLen
}

// view is a zero-copy window on a DDP header whose length has been checked
// against its T bit. Its accessors read the fields in place.
type view []byte

func (v view) ctrl() uint8     { return v[0] }
func (v view) tagged() bool    { return v[0]&ctrlT != 0 }
func (v view) ulpCtrl() uint8  { return v[1] }
func (v view) stag() uint32    { return binary.BigEndian.Uint32(v[2:6]) }
func (v view) to() uint64      { return binary.BigEndian.Uint64(v[6:14]) }
func (v view) ulpRsvd() uint32 { return binary.BigEndian.Uint32(v[2:6]) }
func (v view) qn() uint32      { return binary.BigEndian.Uint32(v[6:10]) }
func (v view) msn() uint32     { return binary.BigEndian.Uint32(v[10:14]) }
func (v view) mo() uint32      { return binary.BigEndian.Uint32(v[14:18]) }

// Decode reads the DDP header at the start of b (RFC 5041 §4) and returns
// it with its length (14 or 18, chosen by the T bit of b[0]). It returns
// dissect.ErrTruncated and a zero Header when b is shorter than that. It
// does not allocate and does not judge any field.
func Decode(b []byte) (Header, int, error) {
	var h Header
	n, err := DecodeInto(&h, b)
	return h, n, err
}

// DecodeInto is Decode writing the header to *h, which it zeroes first:
// for a caller whose Header is a field of a larger struct, it spares the
// copy of a returned Header, which stalls a load of it that comes soon
// after (a store-to-load forwarding failure on the copy's overlapping
// 16-octet moves; rdmap.DecodeInto, on every FPDU).
func DecodeInto(h *Header, b []byte) (int, error) {
	*h = Header{}
	if len(b) < 1 {
		return 0, dissect.ErrTruncated
	}
	n := HeaderLen(b[0])
	if len(b) < n {
		return 0, dissect.ErrTruncated
	}
	v := view(b[:n])
	c := v.ctrl()
	h.T, h.L, h.Rsvd, h.DV, h.ULPCtrl = v.tagged(), c&ctrlL != 0, (c&ctrlRsvd)>>2, c&ctrlDV, v.ulpCtrl()
	if h.T {
		h.STag = v.stag()
		h.TO = v.to()
	} else {
		h.ULPRsvd = v.ulpRsvd()
		h.QN = v.qn()
		h.MSN = v.msn()
		h.MO = v.mo()
	}
	return n, nil
}

// Append appends the wire form of h (RFC 5041 §4) to dst and returns the
// extended slice: the tagged header when h.T is set, the untagged one
// otherwise. Rsvd and DV are masked to their field widths.
func Append(dst []byte, h Header) []byte {
	dst = append(dst, h.Ctrl(), h.ULPCtrl)
	if h.T {
		dst = binary.BigEndian.AppendUint32(dst, h.STag)
		return binary.BigEndian.AppendUint64(dst, h.TO)
	}
	dst = binary.BigEndian.AppendUint32(dst, h.ULPRsvd)
	dst = binary.BigEndian.AppendUint32(dst, h.QN)
	dst = binary.BigEndian.AppendUint32(dst, h.MSN)
	return binary.BigEndian.AppendUint32(dst, h.MO)
}

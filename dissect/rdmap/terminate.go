package rdmap

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ddp"
)

// terminateMinLen is the length of the Terminate control word (Terminate
// Control, 19 bits, and Reserved, 13 bits; RFC 5040 §4.8 Figure 7).
const terminateMinLen = 4

// TerminateMaxLen is the longest Terminate header: control word (4), DDP
// Segment Length (2), an untagged Terminated DDP Header (18) and the
// Terminated RDMA Header (28); cxgb4's TERM_MAX_LENGTH.
const TerminateMaxLen = terminateMinLen + 2 + ddp.UntaggedHeaderLen + ReadRequestLen

// Header control bits in the third octet of the control word.
const (
	hdrctM = 0x80 // RFC layout: DDP Segment Length valid
	hdrctD = 0x40 // RFC layout: Terminated DDP Header included
	hdrctR = 0x20 // RFC layout: Terminated RDMA Header included

	siwM = 0x01 // Linux siw layout on little-endian hosts
	siwD = 0x02
	siwR = 0x04
)

// Terminate is the Terminate header (RFC 5040 §4.8 Figure 7), which
// follows the untagged DDP header of a Terminate message (QN 2).
//
// Layer, EType and Code say which layer found which error (Figure 9; see
// [LayerName], [ETypeName], [CodeText], [Terminate.Explain]). M, D and R
// are the header control bits: M says DDPSegLen is valid, D that the
// Terminated DDP Header is included, R that the Terminated RDMA Header (a
// Read Request header) is included. Rsvd holds the 13 reserved bits.
//
// DDPSegLen is present on the wire when M or D is set. DDP, the Terminated
// DDP Header, is present when D is set and is 14 or 18 octets as its own T
// bit says; HasDDP reports it. RDMA is present when R is set; HasRDMA
// reports it.
//
// SiwLayout is set when the control word was read in the layout Linux siw
// writes on little-endian hosts (see [DecodeTerminate]); the decoded
// fields then hold the values siw meant, and AppendTerminate writes that
// layout back.
type Terminate struct {
	Layer, EType, Code uint8
	M, D, R            bool
	Rsvd               uint16 // 13 bits

	DDPSegLen uint16 // present when M or D

	DDP    ddp.Header // when D: the header of the terminated segment
	HasDDP bool

	RDMA    ReadRequest // when R: the terminated Read Request
	HasRDMA bool

	SiwLayout bool // control word in Linux siw's little-endian bitfield layout

	// Cut is set by DecodeTerminateCut when the capture ended inside the
	// header (snap length, capture gap): the control word is whole, but
	// DDPSegLen is zero when it was cut too, and HasDDP and HasRDMA are
	// false for headers the capture cut.
	Cut bool
}

// controlRFC reads the control word in the layout of RFC 5040 §4.8: Layer
// in the high nibble of octet 0, EType in the low one, Code in octet 1,
// M/D/R in the top bits of octet 2, Reserved in the remaining 13 bits.
func controlRFC(b []byte) Terminate {
	return Terminate{
		Layer: b[0] >> 4,
		EType: b[0] & 0x0F,
		Code:  b[1],
		M:     b[2]&hdrctM != 0,
		D:     b[2]&hdrctD != 0,
		R:     b[2]&hdrctR != 0,
		Rsvd:  uint16(b[2]&0x1F)<<8 | uint16(b[3]),
	}
}

// controlSiw reads the control word as Linux siw 6.1 lays out its C
// bitfields on a little-endian host: Layer in the low nibble of octet 0,
// EType in the high one, Code in octet 1, M/D/R in bits 0/1/2 of octet 2,
// and the 13 reserved bits above them.
func controlSiw(b []byte) Terminate {
	return Terminate{
		Layer:     b[0] & 0x0F,
		EType:     b[0] >> 4,
		Code:      b[1],
		M:         b[2]&siwM != 0,
		D:         b[2]&siwD != 0,
		R:         b[2]&siwR != 0,
		Rsvd:      uint16(b[2]>>3) | uint16(b[3])<<5,
		SiwLayout: true,
	}
}

// decodeBody reads what follows the control word according to t's M, D
// and R bits and returns the completed header and its total length.
func decodeBody(b []byte, t Terminate) (Terminate, int, error) {
	off := terminateMinLen
	if t.M || t.D {
		if len(b) < off+2 {
			return Terminate{}, 0, dissect.ErrTruncated
		}
		t.DDPSegLen = binary.BigEndian.Uint16(b[off:])
		off += 2
	}
	if t.D {
		h, n, err := ddp.Decode(b[off:])
		if err != nil {
			return Terminate{}, 0, err
		}
		t.DDP, t.HasDDP = h, true
		off += n
	}
	if t.R {
		r, err := DecodeReadRequest(b[off:])
		if err != nil {
			return Terminate{}, 0, err
		}
		t.RDMA, t.HasRDMA = r, true
		off += ReadRequestLen
	}
	return t, off, nil
}

// DecodeTerminate reads a Terminate header (RFC 5040 §4.8) from b, which
// must hold the octets after the 18-octet untagged DDP header of the
// Terminate message, to the end of the DDP segment. It returns the header
// and the number of octets it used: 4, plus 2 when M or D is set, plus
// 14 or 18 when D is set (the terminated header's own T bit decides),
// plus 28 when R is set. It returns dissect.ErrTruncated when b ends
// early. It does not allocate.
//
// # The Linux siw layout
//
// Linux siw (seen with 6.1) declares the control word as C bitfields and
// sends them as the compiler lays them out on a little-endian host: Layer
// in the low nibble of octet 0 and EType in the high one, and the M, D and
// R bits in bits 0, 1 and 2 (values 0x01, 0x02, 0x04) of octet 2 instead
// of 0x80, 0x40, 0x20. An "RDMAP / Remote Operation Error / 0x09"
// Terminate with M and D set thus reads 20 09 03 00 on the wire, which the
// RFC layout reads as LLP / 0x0 / 0x09 with no headers and reserved bits
// 0x300 (tshark does exactly that).
//
// DecodeTerminate reads the RFC layout unless the octets fit the siw
// layout and only it:
//
//   - octet 2 has some of its three low bits set and none of the others
//     (in the RFC layout: M, D and R clear, reserved bits nonzero), octet 3
//     is zero, and the low nibble of octet 0, siw's Layer, is a defined
//     layer (0, 1 or 2); and
//   - the siw reading of M, D and R accounts for every octet of b exactly:
//     the DDP Segment Length, a Terminated DDP Header of the length its
//     own T bit gives, and the Read Request header, with nothing missing
//     and nothing left over. The RFC reading, with no header control bits
//     set, accounts for only the first 4.
//
// A Terminate siw sends without any header (LLP errors) has octets 2 and
// 3 zero and cannot be told apart that way. For those the decoder swaps
// the nibbles only when the RFC reading names no error that the tables
// define and the swapped one names its very code (not an error type that
// takes any code, as DDP's Local Catastrophic Error does): siw's "LLP /
// MPA / CRC error" is 02 02 00 00, which the RFC layout reads as RDMAP /
// Remote Operation / 0x02, an undefined code. Everything else is read the
// RFC way: an RFC-layout RDMAP Remote Protection Error with a code no
// table has (01 05 00 00) stays one, with its code unknown.
//
// In both cases SiwLayout is set and the fields hold the values siw meant;
// the reserved bits are zero by construction.
func DecodeTerminate(b []byte) (Terminate, int, error) {
	if len(b) < terminateMinLen {
		return Terminate{}, 0, dissect.ErrTruncated
	}
	if b[2]&0xF8 == 0 && b[2]&0x07 != 0 && b[3] == 0 && b[0]&0x0F <= uint8(LayerLLP) {
		if t, n, err := decodeBody(b, controlSiw(b)); err == nil && n == len(b) {
			return t, n, nil
		}
	}
	if b[2] == 0 && b[3] == 0 && b[0]>>4 != b[0]&0x0F &&
		!Defined(b[0]>>4, b[0]&0x0F, b[1]) && definedCode(b[0]&0x0F, b[0]>>4, b[1]) {
		return controlSiw(b), terminateMinLen, nil
	}
	return decodeBody(b, controlRFC(b))
}

// DecodeTerminateCut is DecodeTerminate for a Terminate the capture cut:
// b holds the first octets of the wire octets after the untagged DDP
// header, of which there were wire. It chooses the layout as
// DecodeTerminate does, from wire rather than len(b), and returns the
// control word and the parts of the header b holds whole, with Cut set
// when the header itself was cut, and the number of octets of b they
// take. It returns dissect.ErrTruncated
// only when b does not hold the control word. When b is not cut
// (len(b) >= wire) it is DecodeTerminate(b[:wire]).
func DecodeTerminateCut(b []byte, wire int) (Terminate, int, error) {
	if len(b) >= wire {
		return DecodeTerminate(b[:max(wire, 0)])
	}
	if len(b) < terminateMinLen {
		return Terminate{}, 0, dissect.ErrTruncated
	}
	t := controlRFC(b)
	if b[2]&0xF8 == 0 && b[2]&0x07 != 0 && b[3] == 0 && b[0]&0x0F <= uint8(LayerLLP) && siwFits(b, wire) {
		t = controlSiw(b)
	}
	t.Cut = true
	off := terminateMinLen
	if t.M || t.D {
		if len(b) < off+2 {
			return t, off, nil
		}
		t.DDPSegLen = binary.BigEndian.Uint16(b[off:])
		off += 2
	}
	if t.D {
		h, n, err := ddp.Decode(b[off:])
		if err != nil {
			return t, off, nil
		}
		t.DDP, t.HasDDP = h, true
		off += n
	}
	if t.R {
		r, err := DecodeReadRequest(b[off:])
		if err != nil {
			return t, off, nil
		}
		t.RDMA, t.HasRDMA = r, true
		off += ReadRequestLen
	}
	// The header is whole; what the capture cut came after it.
	t.Cut = false
	return t, off, nil
}

// siwFits reports whether the siw reading of the control word at the start
// of b accounts for exactly wire octets, as DecodeTerminate requires of a
// whole Terminate; the Terminated DDP Header counts 14 or 18 octets as its
// T bit says, either when b does not hold that bit.
func siwFits(b []byte, wire int) bool {
	t := controlSiw(b)
	n := terminateMinLen
	if t.M || t.D {
		n += 2
	}
	if t.R {
		n += ReadRequestLen
	}
	if !t.D {
		return n == wire
	}
	if len(b) > n {
		return n+ddp.HeaderLen(b[n]) == wire
	}
	return n+ddp.HeaderLen(0x80) == wire || n+ddp.HeaderLen(0) == wire
}

// Len returns the length of t on the wire, as AppendTerminate writes it.
func (t Terminate) Len() int {
	n := terminateMinLen
	if t.M || t.D {
		n += 2
	}
	if t.D {
		n += t.DDP.Len()
	}
	if t.R {
		n += ReadRequestLen
	}
	return n
}

// AppendTerminate appends the wire form of t (RFC 5040 §4.8) to dst: the
// control word (in siw's layout when t.SiwLayout is set), then DDPSegLen
// when M or D is set, t.DDP when D is set and t.RDMA when R is set. The
// M, D and R bits decide what is written; HasDDP and HasRDMA are not
// consulted. Layer, EType and Rsvd are masked to their widths.
func AppendTerminate(dst []byte, t Terminate) []byte {
	var c [4]byte
	if t.SiwLayout {
		c[0] = t.Layer&0x0F | t.EType<<4
		c[1] = t.Code
		c[2] = uint8(t.Rsvd&0x1F) << 3
		if t.M {
			c[2] |= siwM
		}
		if t.D {
			c[2] |= siwD
		}
		if t.R {
			c[2] |= siwR
		}
		c[3] = uint8(t.Rsvd >> 5)
	} else {
		c[0] = t.Layer<<4 | t.EType&0x0F
		c[1] = t.Code
		c[2] = uint8(t.Rsvd>>8) & 0x1F
		if t.M {
			c[2] |= hdrctM
		}
		if t.D {
			c[2] |= hdrctD
		}
		if t.R {
			c[2] |= hdrctR
		}
		c[3] = uint8(t.Rsvd)
	}
	dst = append(dst, c[:]...)
	if t.M || t.D {
		dst = binary.BigEndian.AppendUint16(dst, t.DDPSegLen)
	}
	if t.D {
		dst = ddp.Append(dst, t.DDP)
	}
	if t.R {
		dst = AppendReadRequest(dst, t.RDMA)
	}
	return dst
}

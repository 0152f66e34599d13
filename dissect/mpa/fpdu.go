package mpa

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/internal/crc32c"
)

// Sizes of the FPDU, the Framed Protocol Data Unit (RFC 5044 §4.1):
//
//	| ULPDU_Length (2) | ULPDU | PAD (0-3) | CRC (4) |
//
// plus 4 octets for each marker that falls inside it on the wire.
const (
	// LenFieldLen is the size of the ULPDU_Length field.
	LenFieldLen = 2
	// CRCLen is the size of the CRC field.
	CRCLen = 4
	// MinFPDULen is the size of the smallest FPDU: a ULPDU of 0 or 2
	// octets, no marker.
	MinFPDULen = 8
	// MaxULPDULen is the largest ULPDU the 16-bit ULPDU_Length can declare.
	MaxULPDULen = 0xFFFF
)

// PadLen returns the number of PAD octets that follow a ULPDU of ulpduLen
// octets: (4 - (ulpduLen+2) mod 4) mod 4, which makes ULPDU_Length, ULPDU
// and PAD together a multiple of four octets (RFC 5044 §4.1). Markers play
// no part in it.
func PadLen(ulpduLen int) int {
	// -(x+2) mod 4, computed in unsigned arithmetic so that it is defined
	// for every int and branch-free.
	return int(-(uint(ulpduLen) + LenFieldLen) & 3)
}

// PlainLen returns the size of an FPDU carrying a ULPDU of ulpduLen octets
// without markers: 2 + ulpduLen + PadLen(ulpduLen) + 4 (RFC 5044 §4.1).
func PlainLen(ulpduLen int) int {
	return LenFieldLen + ulpduLen + PadLen(ulpduLen) + CRCLen
}

// FPDU is a decoded FPDU (RFC 5044 §4.1), taken from octets from which any
// markers have already been removed. ULPDU, Pad and Raw alias the decoded
// buffer. CRC is the value of the CRC field, read least significant octet
// first as MPA sends it (RFC 5044 §4.4); it is whatever the sender put
// there, also when CRCs were not negotiated.
type FPDU struct {
	ULPDULen uint16
	ULPDU    []byte
	Pad      []byte
	CRC      uint32
	// Raw is the whole FPDU, PlainLen(ULPDULen) octets from ULPDU_Length
	// through the CRC field.
	Raw []byte
}

// DecodeFPDU decodes the FPDU at the start of b, which must begin with the
// ULPDU_Length field and hold no markers (package markers strips them),
// and returns it with n = PlainLen(ULPDU_Length), the octets it occupies
// (RFC 5044 §4.1). It returns dissect.ErrTruncated when b ends before the
// FPDU does. It checks neither the PAD octets nor the CRC (see
// FPDU.PadZero and FPDU.CRCOK) and does not allocate.
func DecodeFPDU(b []byte) (FPDU, int, error) {
	if len(b) < LenFieldLen {
		return FPDU{}, 0, dissect.ErrTruncated
	}
	ulen := binary.BigEndian.Uint16(b)
	n := PlainLen(int(ulen))
	if len(b) < n {
		return FPDU{}, 0, dissect.ErrTruncated
	}
	end := LenFieldLen + int(ulen)
	padEnd := n - CRCLen
	return FPDU{
		ULPDULen: ulen,
		ULPDU:    b[LenFieldLen:end:end],
		Pad:      b[end:padEnd:padEnd],
		CRC:      binary.LittleEndian.Uint32(b[padEnd:n]),
		Raw:      b[:n:n],
	}, n, nil
}

// ComputedCRC returns the CRC-32C of Raw from ULPDU_Length through PAD,
// the value the CRC field holds when CRCs are in use (RFC 5044 §4.4).
// It is right only for an FPDU that had no markers on the wire: the MPA
// CRC also covers the markers inside the FPDU, so with markers compute it
// over the wire octets with UpdateCRC32C instead. It returns 0 when Raw is
// too short to be an FPDU.
func (p FPDU) ComputedCRC() uint32 {
	if len(p.Raw) < LenFieldLen+CRCLen {
		return 0
	}
	return CRC32C(p.Raw[:len(p.Raw)-CRCLen])
}

// CRCOK reports whether the CRC field matches ComputedCRC. The same caveat
// about markers applies.
func (p FPDU) CRCOK() bool {
	return len(p.Raw) >= LenFieldLen+CRCLen && p.CRC == p.ComputedCRC()
}

// PadZero reports whether every PAD octet is zero, as RFC 5044 §4.1
// requires of the sender.
func (p FPDU) PadZero() bool {
	for _, c := range p.Pad {
		if c != 0 {
			return false
		}
	}
	return true
}

// AppendFPDU appends a marker-free FPDU carrying ulpdu to dst and returns
// the extended slice (RFC 5044 §4.1): ULPDU_Length, the ULPDU, zero PAD
// octets, then the CRC-32C of all of those written least significant octet
// first (RFC 5044 §4.4), or a zero CRC field when crc is false.
//
// ULPDU_Length has 16 bits: when len(ulpdu) > MaxULPDULen, AppendFPDU
// appends nothing and returns dst unchanged. Use AppendFPDUChecked to be
// told.
func AppendFPDU(dst, ulpdu []byte, crc bool) []byte {
	if len(ulpdu) > MaxULPDULen {
		return dst
	}
	start := len(dst)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(ulpdu)))
	dst = append(dst, ulpdu...)
	dst = append(dst, zeroPad[:PadLen(len(ulpdu))]...)
	var c uint32
	if crc {
		c = CRC32C(dst[start:])
	}
	return binary.LittleEndian.AppendUint32(dst, c)
}

var zeroPad [3]byte

// AppendFPDUChecked is AppendFPDU that returns dissect.ErrBadLength (and
// dst unchanged) when ulpdu is longer than MaxULPDULen octets.
func AppendFPDUChecked(dst, ulpdu []byte, crc bool) ([]byte, error) {
	if len(ulpdu) > MaxULPDULen {
		return dst, dissect.ErrBadLength
	}
	return AppendFPDU(dst, ulpdu, crc), nil
}

// CRC32C returns the CRC-32C (Castagnoli: reflected polynomial 0x82F63B78,
// initial value and final XOR 0xFFFFFFFF) of b, the CRC MPA uses
// (RFC 5044 §4.4). MPA puts the value on the wire least significant octet
// first. It is internal/crc32c's, several times faster than hash/crc32 on
// FPDU-sized buffers where the CPU has AVX-512.
func CRC32C(b []byte) uint32 { return crc32c.Checksum(b) }

// UpdateCRC32C returns the CRC-32C of the octets that crc covered followed
// by b, so that UpdateCRC32C(CRC32C(x), y) == CRC32C(x+y) and
// UpdateCRC32C(0, x) == CRC32C(x). It lets a caller checksum an FPDU
// piece by piece as it lies on the wire, markers included (RFC 5044 §4.4),
// across TCP segments, without copying.
func UpdateCRC32C(crc uint32, b []byte) uint32 { return crc32c.Update(crc, b) }

// MULPDU returns the Maximum ULPDU, the largest ULPDU that fits in one TCP
// segment of emss octets (the Effective MSS: the MSS less the TCP options
// in every segment), per RFC 5044 §4.5:
//
//	MULPDU = EMSS - (6 + 4*ceil(EMSS/512) + EMSS mod 4)    with markers
//	MULPDU = EMSS - (6 + EMSS mod 4)                        without
//
// 6 is the ULPDU_Length and CRC fields, 4*ceil(EMSS/512) the worst case of
// markers in a segment, and EMSS mod 4 keeps the FPDU four-octet aligned.
// The marker-free form drops the marker term (derived, not quoted). The
// result is never negative: an EMSS too small for any ULPDU gives 0.
func MULPDU(emss int, markers bool) int {
	if emss <= 0 {
		return 0
	}
	overhead := LenFieldLen + CRCLen + emss%4
	if markers {
		overhead += MarkerLen * ((emss + MarkerPeriod - 1) / MarkerPeriod)
	}
	if emss <= overhead {
		return 0
	}
	return min(emss-overhead, MaxULPDULen)
}

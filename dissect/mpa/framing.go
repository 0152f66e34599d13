package mpa

import (
	"slices"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/markers"
)

// Framing is how one direction of an MPA connection puts its FPDUs on the
// wire once the MPA Request and Reply have negotiated it (RFC 5044 §7.1):
// whether markers are inserted (the M flag the peer sent, §7.1.2), whether
// the CRC field carries the CRC-32C (the C flag, §4.4) and the marker grid
// (§5.1). It is the one encoder of on-the-wire FPDUs: the capture generator
// (package synth) and the replay engine (package replay) both use it.
//
// Positions are 64-bit stream offsets, as in package markers: start, the
// offset of an FPDU's first octet (a leading marker included), is on the
// same scale as Grid.Origin. A Framing is a small value; its methods neither
// keep state nor allocate when the destination has the capacity.
type Framing struct {
	// Markers inserts a marker at every Grid position inside the FPDU.
	Markers bool
	// CRC fills in the CRC field; without it the field is zero.
	CRC bool
	// Grid is the direction's marker grid, used only with Markers.
	Grid markers.Grid
}

// WireLen returns the on-wire length of the FPDU that carries a ULPDU of
// ulpduLen octets and starts at stream offset start: PlainLen(ulpduLen)
// plus four octets for every marker inside it (RFC 5044 §4.1, §5.1).
func (f Framing) WireLen(start uint64, ulpduLen int) int {
	n := PlainLen(ulpduLen)
	if f.Markers {
		return f.Grid.WireLen(start, n)
	}
	return n
}

// CRCOffsets returns where the four octets of the CRC field of the FPDU
// that carries a ULPDU of ulpduLen octets and starts at stream offset start
// lie on the wire, as offsets from start, least significant octet of the
// CRC value first (RFC 5044 §4.4). They are consecutive unless a marker
// falls inside the field, which happens only when the FPDU is not
// four-octet aligned on the grid (a grid anchored at the TCP stream start
// with an MPA frame of odd private-data length before the FPDU).
func (f Framing) CRCOffsets(start uint64, ulpduLen int) [CRCLen]int {
	var at [CRCLen]int
	first := PlainLen(ulpduLen) - CRCLen
	for i := range at {
		at[i] = first + i
		if f.Markers {
			at[i] = f.Grid.WireOffset(start, at[i])
		}
	}
	return at
}

// AppendFPDU appends to dst the wire form of the FPDU that carries ulpdu
// and starts at stream offset start, and returns the extended slice
// (RFC 5044 §4.1): ULPDU_Length, the ULPDU and zero PAD octets, with a
// marker before every octet that falls on the grid when f.Markers is set
// (§5.1, markers.Grid.Insert: Rsvd 0, FPDUPTR the distance back to start;
// a marker due right after the last CRC octet belongs to the next FPDU),
// then the CRC field. With f.CRC the field holds the CRC-32C of every wire
// octet from start up to the field, markers included (§4.4; PROTOCOL.md
// A.4), least significant octet first; otherwise it is zero.
//
// It returns dissect.ErrBadLength and dst unchanged when ulpdu is longer
// than MaxULPDULen. It does not allocate when dst has the capacity for
// WireLen(start, len(ulpdu)) more octets.
func (f Framing) AppendFPDU(dst, ulpdu []byte, start uint64) ([]byte, error) {
	if len(ulpdu) > MaxULPDULen {
		return dst, dissect.ErrBadLength
	}
	if !f.Markers {
		// The CRC over the plain octets is the CRC over the wire.
		return AppendFPDU(dst, ulpdu, f.CRC), nil
	}
	base := len(dst)
	plainLen := PlainLen(len(ulpdu))
	wireLen := f.Grid.WireLen(start, plainLen)
	dst = slices.Grow(dst, wireLen)
	// Lay the marker-free FPDU at the end of the room the wire form takes
	// and let Grid.Insert spread it forward over itself: Insert never
	// writes over plain octets it has still to read.
	tail := base + wireLen - plainLen
	plain := AppendFPDU(dst[:tail], ulpdu, false)[tail:]
	dst = f.Grid.Insert(dst[:base], plain, start)
	wire := dst[base:]
	at := f.CRCOffsets(start, len(ulpdu))
	var crc uint32
	if f.CRC {
		crc = CRC32C(wire[:at[0]])
	}
	for i, o := range at {
		wire[o] = byte(crc >> (8 * i))
	}
	return dst, nil
}

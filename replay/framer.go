package replay

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/markers"
)

// Framer encodes the FPDUs of one direction of an MPA connection (RFC 5044
// §4) with mpa.Framing, the encoder package synth shares: ULPDU_Length, the
// ULPDU, PAD, markers on the 512-octet grid when they were negotiated for
// the direction (§5.1), and the CRC-32C over the wire octets from the
// FPDU's first octet through the PAD, markers included (§4.4; PROTOCOL.md
// A.4). Framer adds the one piece of state, the stream offset of the next
// FPDU.
//
// Offsets are stream offsets: 0 is the first octet after the SYN, so the grid
// origin of a direction is the length of the MPA Request or Reply frame that
// direction sent (0 for an RDMAC stream without one).
type Framer struct {
	// Framing holds what was negotiated: Markers (the peer asked for them:
	// RFC 5044 §7.1.2), CRC (without it the field is zero) and the marker
	// Grid, whose Origin is the first FPDU octet.
	mpa.Framing
	// Off is the stream offset of the next FPDU's first octet.
	Off uint64
}

// NewFramer returns a Framer whose first FPDU starts at stream offset origin,
// which is also the marker grid origin (RFC 5044 §5.1).
func NewFramer(origin uint64, markersOn, crc bool) *Framer {
	return &Framer{Framing: mpa.Framing{Markers: markersOn, CRC: crc, Grid: markers.Grid{Origin: origin}}, Off: origin}
}

// AppendFPDU appends to dst the wire form of the next FPDU carrying ulpdu
// (mpa.Framing.AppendFPDU at Off: RFC 5044 §4.1, §4.4, §5.1) and advances
// Off past it. It returns dissect.ErrBadLength and dst unchanged when ulpdu
// is longer than mpa.MaxULPDULen.
func (f *Framer) AppendFPDU(dst, ulpdu []byte) ([]byte, error) {
	n := len(dst)
	dst, err := f.Framing.AppendFPDU(dst, ulpdu, f.Off)
	f.Off += uint64(len(dst) - n)
	return dst, err
}

// Deframer reads the FPDUs of one received direction (RFC 5044 §4): it finds
// each FPDU's ULPDU_Length on the wire (skipping markers), waits for the whole
// FPDU, checks its markers' FPDUPTR (§5.1) and its CRC when CRCs were
// negotiated (§4.4), and returns the marker-free octets.
type Deframer struct {
	Markers bool
	CRC     bool
	Grid    markers.Grid
	// Off is the stream offset of the next FPDU's first octet.
	Off uint64

	plain []byte
	found []markers.Found
}

// NewDeframer returns a Deframer whose first FPDU starts at origin.
func NewDeframer(origin uint64, markersOn, crc bool) *Deframer {
	return &Deframer{Markers: markersOn, CRC: crc, Grid: markers.Grid{Origin: origin}, Off: origin}
}

// Next decodes the FPDU at the start of wire, which begins at stream offset
// d.Off. It returns n == 0 and a nil error when wire does not yet hold the
// whole FPDU. Otherwise it returns the FPDU (its octets alias the Deframer's
// buffer, valid until the next call) and n, the wire octets it occupied, and
// advances Off. Errors: dissect.ErrMarkerMismatch when a marker's FPDUPTR does
// not point at the FPDU's start (LLP error 0x03), dissect.ErrBadCRC when the
// CRC field is wrong (LLP error 0x02); n is then the FPDU's wire length.
func (d *Deframer) Next(wire []byte) (p mpa.FPDU, n int, err error) {
	s := d.Off
	o0, o1 := 0, 1
	if d.Markers {
		o0, o1 = d.Grid.WireOffset(s, 0), d.Grid.WireOffset(s, 1)
	}
	if len(wire) <= o1 {
		return p, 0, nil
	}
	ulen := int(wire[o0])<<8 | int(wire[o1])
	plainLen := mpa.PlainLen(ulen)
	wireLen := plainLen
	if d.Markers {
		wireLen = d.Grid.WireLen(s, plainLen)
	}
	if len(wire) < wireLen {
		return p, 0, nil
	}
	w := wire[:wireLen]
	plain := w
	if d.Markers {
		d.plain, d.found = d.Grid.Strip(d.plain[:0], w, s, d.found[:0])
		plain = d.plain
		for _, m := range d.found {
			if !markers.CheckPtr(m, s) {
				d.Off += uint64(wireLen)
				return p, wireLen, dissect.ErrMarkerMismatch
			}
		}
	}
	p, _, err = mpa.DecodeFPDU(plain)
	if err != nil {
		// Cannot happen: plain holds PlainLen(ulen) octets.
		d.Off += uint64(wireLen)
		return p, wireLen, err
	}
	if d.CRC && mpa.CRC32C(w[:wireLen-mpa.CRCLen]) != binary.LittleEndian.Uint32(w[wireLen-mpa.CRCLen:]) {
		d.Off += uint64(wireLen)
		return p, wireLen, dissect.ErrBadCRC
	}
	d.Off += uint64(wireLen)
	return p, wireLen, nil
}

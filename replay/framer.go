package replay

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/markers"
)

// Framer encodes the FPDUs of one direction of an MPA connection (RFC 5044
// §4): ULPDU_Length, the ULPDU, PAD, markers on the 512-octet grid when they
// were negotiated for the direction (§5.1), and the CRC-32C over the wire
// octets from the FPDU's first octet through the PAD, markers included (§4.4;
// PROTOCOL.md A.4), written least significant octet first.
//
// It is the one encoder of the wire format in package replay and is built only
// from the shared pieces: mpa.AppendFPDU for length, pad and CRC field,
// markers.Grid.Insert for the markers, mpa.CRC32C for the checksum. Package
// synth does the same steps internally (synth/gen.go); the two should share
// this type (or a common internal package) once synth is free to change.
//
// Offsets are stream offsets: 0 is the first octet after the SYN, so the grid
// origin of a direction is the length of the MPA Request or Reply frame that
// direction sent (0 for an RDMAC stream without one).
type Framer struct {
	// Markers inserts markers (the peer asked for them: RFC 5044 §7.1.2).
	Markers bool
	// CRC fills in the CRC field; without it the field is zero.
	CRC bool
	// Grid is the marker grid; Grid.Origin is the first FPDU octet.
	Grid markers.Grid
	// Off is the stream offset of the next FPDU's first octet.
	Off uint64

	plain []byte
}

// NewFramer returns a Framer whose first FPDU starts at stream offset origin,
// which is also the marker grid origin (RFC 5044 §5.1).
func NewFramer(origin uint64, markersOn, crc bool) *Framer {
	return &Framer{Markers: markersOn, CRC: crc, Grid: markers.Grid{Origin: origin}, Off: origin}
}

// AppendFPDU appends to dst the wire form of the next FPDU carrying ulpdu
// and advances Off past it (RFC 5044 §4.1, §4.4, §5.1). It returns
// dissect.ErrBadLength and dst unchanged when ulpdu is longer than
// mpa.MaxULPDULen.
func (f *Framer) AppendFPDU(dst, ulpdu []byte) ([]byte, error) {
	var err error
	f.plain, err = mpa.AppendFPDUChecked(f.plain[:0], ulpdu, false)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	if f.Markers {
		dst = f.Grid.Insert(dst, f.plain, f.Off)
	} else {
		dst = append(dst, f.plain...)
	}
	wire := dst[start:]
	// The CRC field is the last four wire octets: markers are four-aligned
	// and one due right after the FPDU belongs to the next (markers.Grid.Insert).
	crcAt := len(wire) - mpa.CRCLen
	var crc uint32
	if f.CRC {
		crc = mpa.CRC32C(wire[:crcAt])
	}
	binary.LittleEndian.PutUint32(wire[crcAt:], crc)
	f.Off += uint64(len(wire))
	return dst, nil
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

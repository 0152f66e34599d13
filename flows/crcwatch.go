package flows

import (
	"math/bits"
	"strconv"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
)

// A direction whose MPA Request and Reply were not captured has its CRC
// use guessed from the data: on when a CRC32c validates, off when framing
// locked on consistent headers alone. "Off" then also fits a sender whose
// CRCs are all wrong, the fault a capture is most often taken to find.
// Without CRC the field is still sent, its content arbitrary but usually
// zero (RFC 5044 §4.1; Linux siw sends zero), so the first FPDUs framed
// after such a guess are looked at (crcWatch):
//   - every CRC field holds its FPDU's CRC32c with the octets reversed:
//     the sender computes CRCs, so CRC is on, and writes them in the
//     wrong byte order (PROTOCOL.md A.5 warns of code that does): error
//     mpa.crc_byte_order, and the direction's CRCs are checked from then
//     on (each fails: mpa.crc_bad);
//   - every field is neither zero nor a CRC32c of its FPDU either way:
//     warning mpa.crc_unverified, as the data cannot tell CRC off with a
//     sender that fills the field from CRC on with CRCs all wrong.
// Fields of zero, or a mix, leave the guess as it was.

// crcWatchFPDUs is how many whole FPDUs decide.
const crcWatchFPDUs = 3

// crcWatch counts the CRC fields of the first whole FPDUs of a direction
// whose CRC was guessed off.
type crcWatch struct {
	n, zero, reversed, other int
	frames                   [crcWatchFPDUs]uint64
}

// guessedCRC is called where a direction without a captured handshake
// has its CRC use decided from the data.
func (d *direction) guessedCRC() {
	if !d.crc && !d.crcForced && d.cw == nil {
		d.cw = &crcWatch{}
	}
}

// unchecked is the CRC status of a whole FPDU, wire its octets, framed
// while CRC is off: they are not checked, but watched after a guess.
func (d *direction) unchecked(rec *Record, wire []byte) CRCStatus {
	if d.cw != nil {
		d.watchCRC(rec, wire)
	}
	return CRCUnchecked
}

func (d *direction) watchCRC(rec *Record, wire []byte) {
	w := d.cw
	if len(wire) < mpa.MinFPDULen || w.n >= crcWatchFPDUs {
		return
	}
	field, sum := crcFields(wire)
	switch {
	case field == 0:
		w.zero++
	case bits.ReverseBytes32(field) == sum && field != sum:
		w.reversed++
	case field != sum:
		w.other++
	}
	w.frames[w.n] = rec.Frame
	w.n++
	if w.n < crcWatchFPDUs {
		return
	}
	d.cw = nil
	c := d.c
	n := strconv.Itoa(w.n)
	switch {
	case w.reversed == w.n:
		d.crc = true
		c.finding(rec, dissect.SeverityError, "mpa.crc_byte_order",
			"the CRC field of each of this direction's first "+n+" FPDUs holds the FPDU's CRC32c with its octets reversed: "+
				"the sender computes CRCs, so CRC is on, and writes them most significant octet first (receivers read "+
				"the least significant first and see a CRC error); this direction's CRCs are checked from the next FPDU on",
			"RFC 5044 §4.1", w.frames[:]...)
	case w.other == w.n:
		c.finding(rec, dissect.SeverityWarning, "mpa.crc_unverified",
			"no MPA handshake captured and no CRC32c validates, so the decoder took CRC as off, but the CRC fields of "+
				"this direction's first "+n+" FPDUs are not zero: either CRC is off and the sender fills the field (RFC 5044 lets it), "+
				"or CRC is on and every CRC this sender computes is wrong, which a receiver answers with a Terminate (MPA CRC error)",
			"RFC 5044 §4.1", w.frames[:]...)
	}
}

// crcFields returns the CRC field of the whole FPDU wire (markers in
// place) and the CRC32c of the octets it covers.
func crcFields(wire []byte) (field, sum uint32) {
	n := len(wire) - mpa.CRCLen
	return uint32(wire[n]) | uint32(wire[n+1])<<8 | uint32(wire[n+2])<<16 | uint32(wire[n+3])<<24, mpa.CRC32C(wire[:n])
}

// crcBadMsg is the message of mpa.crc_bad for a CRC field that does not
// match sum, the CRC32c of the octets it covers, with what the field
// says of the sender when it says something.
func crcBadMsg(field, sum uint32) string {
	msg := "CRC32c mismatch: the CRC field is " + hex32(bits.ReverseBytes32(field)) + ", the FPDU's octets give " +
		hex32(bits.ReverseBytes32(sum)) + " (as sent on the wire, first octet first)"
	switch {
	case bits.ReverseBytes32(field) == sum:
		msg += "; the field holds that CRC32c with its octets reversed: the sender writes its CRCs in the wrong byte order, " +
			"a sender fault rather than damage (every FPDU it sends fails)"
	case field == 0:
		msg += "; the field is zero, as a sender with CRC off leaves it: this sender may not compute CRCs " +
			"(its CRC setting differs from its peer's)"
	}
	return msg
}

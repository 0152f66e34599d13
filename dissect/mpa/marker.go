package mpa

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// Marker geometry (RFC 5044 §4.2, §4.3).
const (
	// MarkerLen is the size of a marker on the wire.
	MarkerLen = 4
	// MarkerPeriod is the distance in TCP sequence space between markers
	// in a direction where they were negotiated.
	MarkerPeriod = 512
)

// Marker is an MPA marker (RFC 5044 §4.2): 16 reserved bits, sent as
// zero, then FPDUPTR, the distance in octets back from the marker to the
// ULPDU_Length field of the FPDU that holds it (0 when the marker sits
// immediately before that field). Both halves are big-endian.
type Marker struct {
	Rsvd, FPDUPtr uint16
}

// DecodeMarker decodes the marker in the first four octets of b (RFC 5044
// §4.2). It returns dissect.ErrTruncated when b is shorter. Checking
// FPDUPTR against the stream is for package markers. It does not allocate.
func DecodeMarker(b []byte) (Marker, error) {
	if len(b) < MarkerLen {
		return Marker{}, dissect.ErrTruncated
	}
	return Marker{
		Rsvd:    binary.BigEndian.Uint16(b[0:2]),
		FPDUPtr: binary.BigEndian.Uint16(b[2:4]),
	}, nil
}

// AppendMarker appends the four-octet wire form of m to dst (RFC 5044
// §4.2).
func AppendMarker(dst []byte, m Marker) []byte {
	dst = binary.BigEndian.AppendUint16(dst, m.Rsvd)
	return binary.BigEndian.AppendUint16(dst, m.FPDUPtr)
}

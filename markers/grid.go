package markers

import "encoding/binary"

// Interval is the spacing of MPA markers in TCP sequence space: one marker
// every 512 octets (RFC 5044 §5.1).
const Interval = 512

// Size is the length of one MPA marker on the wire: 16 reserved bits and the
// 16-bit FPDUPTR (RFC 5044 §5.1).
const Size = 4

// stride is the number of marker-free octets between two markers.
const stride = Interval - Size

// Grid is the marker grid of one direction of an MPA connection (RFC 5044
// §5.1). Origin is the stream offset of the first octet of the first FPDU of
// that direction; a marker starts at every Origin + k*512 for k >= 0 and
// none before Origin. Offsets are those of reassembly.Chunk.Off.
type Grid struct {
	Origin uint64
}

// IsMarker reports whether a marker starts at stream offset off
// (RFC 5044 §5.1).
func (g Grid) IsMarker(off uint64) bool {
	return off >= g.Origin && (off-g.Origin)%Interval == 0
}

// Next returns the first marker position at or after off; for off before
// the origin it returns Origin (RFC 5044 §5.1).
func (g Grid) Next(off uint64) uint64 {
	if off <= g.Origin {
		return g.Origin
	}
	r := (off - g.Origin) % Interval
	if r == 0 {
		return off
	}
	return off + (Interval - r)
}

// Count returns how many markers start in [start, end) (RFC 5044 §5.1). It
// is 0 when end <= start.
func (g Grid) Count(start, end uint64) int {
	if end <= start {
		return 0
	}
	m := g.Next(start)
	if m >= end {
		return 0
	}
	return int((end-1-m)/Interval) + 1
}

// lead returns, for an FPDU starting at stream offset start, the number of
// plain octets that precede its first marker.
func (g Grid) lead(start uint64) uint64 {
	return g.Next(start) - start
}

// markersUpTo returns how many markers an FPDU starting at start carries in
// front of its plain octet idx, the marker right before idx included (the
// k-th marker, k >= 0, precedes plain octet lead + 508k). Called with n-1 it
// counts the markers of an FPDU of n plain octets. idx must be >= 0.
func (g Grid) markersUpTo(start uint64, idx int) int {
	d := g.lead(start)
	if uint64(idx) < d {
		return 0
	}
	return int((uint64(idx)-d)/stride) + 1
}

// WireLen returns the on-wire length of an FPDU that starts at stream offset
// start and has plainLen marker-free octets (2 + ULPDU_Length + PAD + 4):
// plainLen plus 4 for every marker inside it. A marker exactly at start
// belongs to this FPDU (FPDUPTR 0); one exactly at the end belongs to the
// next FPDU (RFC 5044 §5.1). It returns 0 for plainLen <= 0.
func (g Grid) WireLen(start uint64, plainLen int) int {
	if plainLen <= 0 {
		return 0
	}
	return plainLen + Size*g.markersUpTo(start, plainLen-1)
}

// WireOffset returns where the plain (marker-free) octet plainIdx of an FPDU
// starting at stream offset start lies on the wire, as an offset from start
// (RFC 5044 §5.1). WireOffset(start, 0) and WireOffset(start, 1) locate the
// two ULPDU_Length octets even when a marker separates them. It returns
// plainIdx unchanged for plainIdx < 0.
func (g Grid) WireOffset(start uint64, plainIdx int) int {
	if plainIdx < 0 {
		return plainIdx
	}
	return plainIdx + Size*g.markersUpTo(start, plainIdx)
}

// Found is one marker read from the wire by [Grid.Strip]: its stream offset
// and its two 16-bit fields (RFC 5044 §5.1).
type Found struct {
	Off     uint64
	Rsvd    uint16
	FPDUPtr uint16
}

// Strip appends to dst the octets of wire, which starts at stream offset
// start, without the markers the grid places in it, and appends every marker
// it removed to ms (RFC 5044 §5.1). A marker cut by either end of wire has
// its octets that lie inside wire removed but is not reported in ms, since
// its value is incomplete. Strip does not allocate when dst and ms have the
// capacity.
func (g Grid) Strip(dst []byte, wire []byte, start uint64, ms []Found) ([]byte, []Found) {
	n := len(ms)
	ms = g.Scan(wire, start, ms)
	p := min(g.cutLead(start), len(wire))
	for _, m := range ms[n:] {
		i := int(m.Off - start)
		dst = append(dst, wire[p:i]...)
		p = i + Size
	}
	// The rest, but for a marker cut by the end of wire (Scan reported
	// every whole one).
	end := len(wire)
	if p < end {
		if m := g.Next(start + uint64(p)); m < start+uint64(end) {
			end = int(m - start)
		}
	}
	return append(dst, wire[p:end]...), ms
}

// cutLead returns how many octets at stream offset start belong to a
// marker that began before start (0 to 3).
func (g Grid) cutLead(start uint64) int {
	if start > g.Origin {
		prev := start - (start-g.Origin)%Interval
		if prev < start && start-prev < Size {
			return int(Size - (start - prev))
		}
	}
	return 0
}

// Scan appends to ms the markers Strip would report for wire, which starts
// at stream offset start, without copying any octet (RFC 5044 §5.1): a
// reader that needs only some plain octets locates them with WireOffset.
// Scan does not allocate when ms has the capacity.
func (g Grid) Scan(wire []byte, start uint64, ms []Found) []Found {
	p := g.cutLead(start)
	for p < len(wire) {
		off := start + uint64(p)
		m := g.Next(off)
		run := m - off
		if run >= uint64(len(wire)-p) {
			break
		}
		p += int(run)
		if len(wire)-p < Size {
			break // marker cut by the end of wire
		}
		ms = append(ms, Found{
			Off:     m,
			Rsvd:    binary.BigEndian.Uint16(wire[p:]),
			FPDUPtr: binary.BigEndian.Uint16(wire[p+2:]),
		})
		p += Size
	}
	return ms
}

// Insert appends to dst the wire form of an FPDU that starts at stream
// offset start and whose marker-free octets are plain: a marker goes before
// every plain octet that falls on the grid, with Rsvd 0 and FPDUPTR the
// distance from start to the marker, earlier markers counted (RFC 5044
// §5.1). A marker due right after the last plain octet belongs to the next
// FPDU and is not written. A distance above 65535 is written modulo 2^16.
// Insert does not allocate when dst has the capacity
// (WireLen(start, len(plain)) more octets).
//
// Insert works from front to back and never writes over a plain octet it
// has still to read, so plain may also lie in dst's spare capacity, ending
// where the wire form ends (at len(dst)+WireLen(start, len(plain))): the
// FPDU is then spread out in place, as mpa.Framing.AppendFPDU does.
//
// start must not lie inside a marker (1 to 3 octets after a grid
// position): no FPDU can start there, and Strip would take the first
// octets for the rest of that marker.
func (g Grid) Insert(dst []byte, plain []byte, start uint64) []byte {
	w := start // stream offset of the next wire octet
	m := g.Next(start)
	i := 0
	for i < len(plain) {
		if w == m {
			ptr := uint16(m - start)
			dst = append(dst, 0, 0, byte(ptr>>8), byte(ptr))
			w += Size
			m += Interval
			continue
		}
		run := m - w
		if rest := uint64(len(plain) - i); run > rest {
			run = rest
		}
		dst = append(dst, plain[i:i+int(run)]...)
		i += int(run)
		w += run
	}
	return dst
}

// CheckPtr reports whether marker m is valid for the FPDU that starts at
// stream offset fpduStart: Rsvd is 0 and FPDUPTR equals the distance from
// fpduStart to the marker (RFC 5044 §5.1). A marker before fpduStart or
// further than 65535 octets from it never checks.
func CheckPtr(m Found, fpduStart uint64) bool {
	if m.Rsvd != 0 || m.Off < fpduStart {
		return false
	}
	d := m.Off - fpduStart
	return d <= 0xFFFF && uint16(d) == m.FPDUPtr
}

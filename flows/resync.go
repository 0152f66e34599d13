package flows

import (
	"encoding/binary"
	"strconv"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/markers"
)

// chainLen is how many consecutive plausible FPDU headers confirm a lock
// when CRC32c cannot (RFC 5044 §4: FPDUs follow each other back to back).
const chainLen = 3

// plausible reports whether wire (the complete wire octets of a candidate
// FPDU at stream offset s) holds a DDP/RDMAP header that a conforming sender
// could have sent, consistent with what the connection has shown so far.
// The Segment it returns may point into a buffer the next call reuses.
func (d *direction) plausible(wire []byte, s uint64, mk bool, g markers.Grid) (rdmap.Segment, bool) {
	plain := wire
	if mk {
		// Stripped into the Decoder's buffer: what is returned does not
		// keep it (callers look at the verdict only).
		var found []markers.Found
		dec := d.c.d
		plain, found = g.Strip(dec.stripBuf[:0], wire, s, dec.stripFound[:0])
		dec.stripBuf, dec.stripFound = plain[:0], found[:0]
		for _, m := range found {
			if !markers.CheckPtr(m, s) {
				return rdmap.Segment{}, false
			}
		}
	}
	if len(plain) < mpa.MinFPDULen {
		return rdmap.Segment{}, false
	}
	ulen := int(binary.BigEndian.Uint16(plain))
	if mpa.PlainLen(ulen) != len(plain) || ulen < ddp.TaggedHeaderLen {
		return rdmap.Segment{}, false
	}
	return d.plausibleULPDU(plain[2 : 2+ulen])
}

// ptrSlip reports whether the FPDU of wire octets at the front of b, at
// stream offset s, which plausible rejected, fails on its marker pointers
// alone while in sync: its header is plausible with its markers stripped,
// and another of its markers points back to it, or the next FPDU's control
// octets are plausible where its length puts them. One damaged or wrong
// FPDUPTR does not make framing lost (RFC 5044 §5.1: framing continues
// from the length field); emitFPDU reports it as mpa.marker_ptr_bad, and
// the CRC, when it fails, as mpa.crc_bad.
func (d *direction) ptrSlip(b []byte, s uint64, wire int) bool {
	if !d.markers {
		return false
	}
	dec := d.c.d
	plain, found := d.grid.Strip(dec.stripBuf[:0], b[:wire], s, dec.stripFound[:0])
	dec.stripBuf, dec.stripFound = plain[:0], found[:0]
	good, bad := 0, 0
	for _, m := range found {
		if markers.CheckPtr(m, s) {
			good++
		} else {
			bad++
		}
	}
	if bad == 0 || len(plain) < mpa.MinFPDULen {
		return false
	}
	ulen := int(binary.BigEndian.Uint16(plain))
	if mpa.PlainLen(ulen) != len(plain) || ulen < ddp.TaggedHeaderLen {
		return false
	}
	if _, ok := d.plausibleULPDU(plain[2 : 2+ulen]); !ok {
		return false
	}
	return good > 0 || ctrlPlausible(b[wire:], s+uint64(wire), true, d.grid)
}

// plausibleULPDU checks the header rules of RFC 5040 §4 and RFC 5041 §4 that
// hold for every valid segment.
func (d *direction) plausibleULPDU(ulpdu []byte) (rdmap.Segment, bool) {
	seg, err := rdmap.Decode(ulpdu)
	if err != nil {
		return seg, false
	}
	h := seg.DDP
	if h.Rsvd != 0 || seg.Rsvd != 0 || h.DV > 1 || seg.RV != h.DV {
		return seg, false
	}
	if v := d.c.ddpVersion; v >= 0 && int(h.DV) != v {
		return seg, false
	}
	op := seg.Opcode
	if !op.Valid() || op.Tagged() != h.T {
		return seg, false
	}
	if !h.T {
		if qn, ok := op.QN(); ok && qn != h.QN {
			return seg, false
		}
		if !op.HasInvalidate() && h.ULPRsvd != 0 {
			return seg, false
		}
		if h.MSN == 0 {
			return seg, false
		}
		if (op == rdmap.OpReadRequest || op == rdmap.OpTerminate) && (!h.L || h.MO != 0) {
			return seg, false
		}
	}
	return seg, true
}

// ctrlPlausible applies to the DDP and RDMAP control octets of the
// candidate FPDU w at stream offset s (its plain octets 2 and 3) the checks
// plausibleULPDU makes of them (RFC 5041 §4: reserved bits zero, DV 0 or
// 1; RFC 5040 §4: RV equal to DV, reserved bits zero, a defined opcode
// whose Tagged flag matches), before anything is stripped or decoded. A
// search through octets that hold no FPDU (a connection that is not iWARP,
// captured from mid-stream) tries every offset: decoding the headers of
// each took some 150 ms per MiB, and random octets pass these checks once
// in about 1,300.
func ctrlPlausible(w []byte, s uint64, mk bool, g markers.Grid) bool {
	i0, i1 := 2, 3
	if mk {
		i0, i1 = g.WireOffset(s, 2), g.WireOffset(s, 3)
	}
	if i1 >= len(w) {
		return true // left to plausible
	}
	c0, c1 := w[i0], w[i1]
	if c0&0x3C != 0 || c0&0x03 > 1 || c1>>6 != c0&0x03 || (c1>>4)&0x03 != 0 {
		return false
	}
	op := rdmap.Opcode(c1 & 0x0F)
	return op.Valid() && op.Tagged() == (c0&0x80 != 0)
}

// candidateAt examines a possible FPDU starting at stream offset s.
// needMore is true when the buffer does not yet hold all of it.
func (d *direction) candidateAt(s uint64, mk bool, g markers.Grid, checkCRC bool) (ok bool, wire int, crcOK bool, needMore bool) {
	b := d.buf()
	if s < d.bufOff {
		return false, 0, false, false
	}
	ulen, have, hole := d.lenAt(b, s, d.bufOff, mk, g)
	if hole {
		return false, 0, false, false
	}
	if !have {
		return false, 0, false, true
	}
	if ulen < ddp.TaggedHeaderLen {
		return false, 0, false, false
	}
	plain := mpa.PlainLen(ulen)
	wire = plain
	if mk {
		wire = g.WireLen(s, plain)
	}
	i := int(s - d.bufOff)
	if i+wire > len(b) {
		return false, wire, false, true
	}
	w := b[i : i+wire]
	if d.overlapsHole(s, s+uint64(wire)) {
		return false, wire, false, false
	}
	if !ctrlPlausible(w, s, mk, g) {
		return false, wire, false, false
	}
	if _, p := d.plausible(w, s, mk, g); !p {
		return false, wire, false, false
	}
	if checkCRC {
		n := wire - mpa.CRCLen
		crcOK = mpa.CRC32C(w[:n]) == binary.LittleEndian.Uint32(w[n:])
	}
	return true, wire, crcOK, false
}

// resync looks for the next FPDU boundary after lost octets or in a stream
// whose start was not captured. It reports whether it made progress. With
// final set (end of capture) it accepts a shorter header chain.
func (d *direction) resync(final bool) bool {
	if d.markers && d.originKnown {
		return d.resyncMarkers(final)
	}
	if !d.originKnown && (!d.markersKnown || d.markersNeg) {
		if !d.noMarkerPhase {
			locked, wait := d.findMarkerPhase(final)
			if locked {
				return true
			}
			if wait {
				return false
			}
		}
		if d.markersForced && d.markersNeg {
			// Markers were forced: never fall back to a marker-free lock.
			return false
		}
	}
	return d.resyncChain(final)
}

// phaseMinData is how many octets a mid-stream direction gathers before
// looking for the marker grid: two markers 512 apart need more than 512.
const phaseMinData = 4 * markers.Interval

// maxMarkerChain bounds the FPDUs examined to find a marker inside an FPDU.
const maxMarkerChain = 64

// findMarkerPhase recovers the marker grid of a direction whose handshake was
// not captured (RFC 5044 §5.1): candidate phases from markers.FindPhase are
// accepted only when an FPDU that a marker points to is confirmed, by CRC32c
// or by a chain of consistent headers framed with that grid.
func (d *direction) findMarkerPhase(final bool) (locked, wait bool) {
	b := d.buf()
	if len(b) < phaseMinData && !final {
		return false, true
	}
	cands := markers.FindPhase(b, d.bufOff, nil)
	for i, cand := range cands {
		if i >= 8 || cand.Confirmed < 2 {
			break
		}
		g := cand.Grid
		for m := g.Next(d.bufOff); m+markers.Size <= d.bufOff+uint64(len(b)); m += markers.Interval {
			idx := int(m - d.bufOff)
			ptr := uint64(binary.BigEndian.Uint16(b[idx+2:]))
			if binary.BigEndian.Uint16(b[idx:]) != 0 || ptr%4 != 0 || ptr > m || m-ptr < d.bufOff {
				continue
			}
			start := m - ptr
			if !d.confirmAt(start, true, g) {
				continue
			}
			d.consume(int(start - d.bufOff))
			d.markers = true
			d.grid = g
			d.origin = g.Origin
			d.originKnown = true
			d.mode = modeFPDU
			wasMid := !d.everLock && d.midstream
			d.everLock = true
			if wasMid {
				d.c.midstream = true
			}
			d.c.finding(nil, dissect.SeverityNote, "mpa.midstream_lock",
				"no MPA handshake captured in this direction: marker grid recovered (phase "+
					strconv.FormatUint(g.Origin%markers.Interval, 10)+" of 512, "+strconv.Itoa(cand.Confirmed)+
					" consecutive markers agree) and FPDU framing locked at seq "+strconv.FormatUint(uint64(d.seqOf(start)), 10)+
					"; CRC "+onOff(d.crc), "RFC 5044 §5.1", d.firstFrame(start))
			return true, false
		}
	}
	if len(b) >= 2*phaseMinData || final {
		d.noMarkerPhase = true
	}
	return false, false
}

// confirmAt reports whether an FPDU at stream offset s is confirmed: its CRC
// validates (and then CRC is in use), or it and the following FPDUs form a
// chain of chainLen consistent headers (fewer when the data ends first).
func (d *direction) confirmAt(s uint64, mk bool, g markers.Grid) bool {
	ok, wire, crcOK, _ := d.candidateAt(s, mk, g, !d.crcKnown || d.crc)
	if !ok {
		return false
	}
	// A CRC32c that validates proves the framing, and proves a marker
	// hypothesis only when the CRC covered a grid point (RFC 5044 §4.1: the
	// CRC covers the markers inside the FPDU).
	if crcOK && (!mk || g.Count(s, s+uint64(wire)-mpa.CRCLen) > 0) {
		if !d.crcKnown {
			d.crc, d.crcKnown = true, true
		}
		return true
	}
	if d.crcKnown && d.crc {
		return false
	}
	// Under a marker hypothesis, the zero CRC field of a CRC-less stream
	// in front of each FPDU looks exactly like a marker with FPDUPTR 0, so
	// the chain must also hold a marker strictly inside an FPDU (FPDUPTR >
	// 0, checked by plausible) before the grid is believed.
	interior := 0
	if mk {
		interior = g.Count(s+1, s+uint64(wire))
	}
	chain, q := 1, s+uint64(wire)
	for chain < chainLen || (mk && interior == 0 && chain < maxMarkerChain) {
		ok2, w2, _, need := d.candidateAt(q, mk, g, false)
		if need {
			// The data ends: accept a shorter chain only when it ends
			// exactly at the end of the data.
			return chain >= 2 && q == d.bufOff+uint64(len(d.buf())) && (!mk || interior > 0)
		}
		if !ok2 {
			return false
		}
		if mk {
			interior += g.Count(q+1, q+uint64(w2))
		}
		chain++
		q += uint64(w2)
	}
	if mk && interior == 0 {
		return false
	}
	if !d.crcKnown {
		d.crc, d.crcKnown = false, true
	}
	return true
}

// resyncMarkers uses the marker grid: the next marker's FPDUPTR points at the
// start of the FPDU holding it (RFC 5044 §5.1).
func (d *direction) resyncMarkers(final bool) bool {
	start0 := d.bufOff
	for {
		b := d.buf()
		m := d.grid.Next(d.bufOff)
		idx := int(m - d.bufOff)
		if idx+markers.Size > len(b) {
			if idx > len(b) {
				idx = len(b)
			}
			d.consume(idx)
			return d.bufOff != start0
		}
		if d.inHole(m) || d.inHole(m+3) {
			d.consume(idx + markers.Size)
			continue
		}
		rsvd := binary.BigEndian.Uint16(b[idx:])
		ptr := uint64(binary.BigEndian.Uint16(b[idx+2:]))
		if rsvd == 0 && ptr%4 == 0 && ptr <= m-d.bufOff+uint64(idx)-uint64(idx) && m >= ptr && m-ptr >= d.bufOff {
			start := m - ptr
			ok, _, crcOK, need := d.candidateAt(start, true, d.grid, d.crc)
			if need && !final {
				d.consume(int(start - d.bufOff))
				return d.bufOff != start0
			}
			if ok && (!d.crc || crcOK) {
				skipped := start - d.lostAt
				d.consume(int(start - d.bufOff))
				d.mode = modeFPDU
				d.c.finding(nil, dissect.SeverityNote, "mpa.resync",
					"framing recovered at seq "+strconv.FormatUint(uint64(d.seqOf(start)), 10)+" from the marker at seq "+
						strconv.FormatUint(uint64(d.seqOf(m)), 10)+" ("+strconv.FormatUint(skipped, 10)+" octets skipped)",
					"RFC 5044 §5.1", d.firstFrame(start))
				return true
			}
		}
		d.consume(idx + markers.Size)
	}
}

// resyncChain scans for a run of consistent FPDU headers (or one FPDU whose
// CRC32c validates) when there are no markers to follow.
func (d *direction) resyncChain(final bool) bool {
	start0 := d.bufOff
	b := d.buf()
	step := uint64(1)
	p := d.bufOff
	if d.originKnown {
		step = 4
		if r := (p - d.origin) % 4; r != 0 && p >= d.origin {
			p += 4 - r
		}
	}
	checkCRC := !d.crcKnown || d.crc
	tryLeading := !d.originKnown && (!d.markersKnown || d.markersNeg) && checkCRC
	for ; p+mpa.MinFPDULen <= d.bufOff+uint64(len(b)); p += step {
		// A marker stream whose FPDUs are short holds few markers, and
		// an FPDU that starts with a marker (FPDUPTR 0) looks like a
		// marker-free FPDU after four zero octets. The CRC tells them
		// apart: it covers the leading marker (RFC 5044 §4.1), so it
		// validates only when the FPDU is framed with it.
		if i := int(p - d.bufOff); tryLeading && i+8 <= len(b) && binary.BigEndian.Uint32(b[i:]) == 0 {
			g := markers.Grid{Origin: p}
			if ok, _, crcOK, _ := d.candidateAt(p, true, g, true); ok && crcOK {
				d.consume(i)
				d.crc, d.crcKnown = true, true
				d.markers, d.grid, d.origin, d.originKnown = true, g, p, true
				wasMid := !d.everLock && d.midstream
				d.mode = modeFPDU
				d.everLock = true
				if wasMid {
					d.c.midstream = true
				}
				d.c.finding(nil, dissect.SeverityNote, "mpa.midstream_lock",
					"no MPA handshake captured in this direction: FPDU framing locked at seq "+strconv.FormatUint(uint64(d.seqOf(p)), 10)+
						" on a CRC32c that validates with a leading marker (FPDUPTR 0); CRC on, markers on (grid phase "+
						strconv.FormatUint(p%markers.Interval, 10)+" of 512)", "RFC 5044 §4.1, §5.1", d.firstFrame(p))
				return true
			}
		}
		ok, wire, crcOK, need := d.candidateAt(p, false, markers.Grid{}, checkCRC)
		if need {
			if final {
				continue
			}
			d.dropScanned(p)
			return d.bufOff != start0
		}
		if !ok {
			continue
		}
		confirmed := crcOK
		evidence := "CRC32c validates"
		if !confirmed {
			if d.crcKnown && d.crc {
				continue
			}
			chain, q := 1, p+uint64(wire)
			waiting := false
			for chain < chainLen {
				ok2, w2, _, need2 := d.candidateAt(q, false, markers.Grid{}, false)
				if need2 {
					waiting = q < d.bufOff+uint64(len(b)) || !final
					break
				}
				if !ok2 {
					break
				}
				chain++
				q += uint64(w2)
			}
			if chain < chainLen && waiting && !final {
				d.dropScanned(p)
				return d.bufOff != start0
			}
			// At the end of the capture a shorter chain that ends exactly
			// at the last octet is accepted, but never a single header.
			endOfData := q == d.bufOff+uint64(len(b))
			confirmed = chain >= chainLen || (final && endOfData && chain >= 2)
			evidence = strconv.Itoa(chain) + " consecutive consistent FPDU headers (lower confidence: no CRC)"
		}
		if !confirmed {
			continue
		}
		skipped := p - d.lostAt
		d.consume(int(p - d.bufOff))
		if !d.crcKnown {
			d.crc = crcOK
			d.crcKnown = true
		}
		wasMid := !d.everLock && d.midstream
		if !d.originKnown {
			d.origin = p
			d.originKnown = true
		}
		d.mode = modeFPDU
		d.markers = false
		d.everLock = true
		if wasMid {
			d.c.midstream = true
			d.c.finding(nil, dissect.SeverityNote, "mpa.midstream_lock",
				"no MPA handshake captured in this direction: FPDU framing locked at seq "+strconv.FormatUint(uint64(d.seqOf(p)), 10)+
					" on "+evidence+"; CRC "+onOff(d.crc)+", no markers", "RFC 5044 §4", d.firstFrame(p))
		} else {
			d.c.finding(nil, dissect.SeverityNote, "mpa.resync",
				"framing recovered at seq "+strconv.FormatUint(uint64(d.seqOf(p)), 10)+" on "+evidence+" ("+
					strconv.FormatUint(skipped, 10)+" octets skipped)", "RFC 5044 §4", d.firstFrame(p))
		}
		return true
	}
	d.dropScanned(p)
	return d.bufOff != start0
}

// dropScanned discards octets before p that can no longer start an FPDU and
// gives up on a direction that never locked after scanLimit octets.
func (d *direction) dropScanned(p uint64) {
	if p > d.bufOff+uint64(len(d.buf())) {
		p = d.bufOff + uint64(len(d.buf()))
	}
	n := p - d.bufOff
	d.consume(int(n))
	if !d.everLock {
		d.scanned += n
		if d.scanned > scanLimit {
			d.mode = modeDead
			d.dropAll(d.bufOff + uint64(len(d.buf())))
		}
	}
	// Keep the held octets bounded while waiting for a long candidate.
	if len(d.buf()) > maxHold {
		d.consume(len(d.buf()) - maxHold)
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

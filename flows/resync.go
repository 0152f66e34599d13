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
	if !d.originKnown && (!d.markersKnown || d.markersNeg) && !d.noMarkerPhase {
		locked, wait := d.findMarkerPhase(final)
		if locked {
			return true
		}
		if wait {
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
// or by a chain of consistent headers framed with that grid. A phase only one
// marker shows is accepted on a CRC32c that covers that marker alone. While
// the chain that would confirm a phase several markers agree on is only
// waiting for more octets, it waits ("wait" is not "fail"): a marker-free
// lock must not be tried in its place.
func (d *direction) findMarkerPhase(final bool) (locked, wait bool) {
	b := d.buf()
	if len(b) < phaseMinData && !final {
		return false, true
	}
	canWait := !final && len(b) < maxHold
	cands := markers.FindPhase(b, d.bufOff, nil)
	for i, cand := range cands {
		if i >= 8 {
			break
		}
		single := cand.Confirmed < 2
		g := cand.Grid
		waited := false
		for m := g.Next(d.bufOff); m+markers.Size <= d.bufOff+uint64(len(b)); m += markers.Interval {
			idx := int(m - d.bufOff)
			ptr := uint64(binary.BigEndian.Uint16(b[idx+2:]))
			if binary.BigEndian.Uint16(b[idx:]) != 0 || ptr%4 != 0 || ptr > m || m-ptr < d.bufOff {
				continue
			}
			start := m - ptr
			ok, w, crcOn := d.confirmAt(start, true, g, final)
			waited = waited || w
			if !ok || single && !crcOn {
				continue
			}
			if !d.crcKnown {
				d.crc, d.crcKnown = crcOn, true
				d.guessedCRC()
			}
			start = d.lockMarkers(start, g)
			d.c.finding(nil, dissect.SeverityNote, "mpa.midstream_lock",
				"no MPA handshake captured in this direction: marker grid recovered (phase "+
					strconv.FormatUint(g.Origin%markers.Interval, 10)+" of 512, "+strconv.Itoa(cand.Confirmed)+
					" consecutive markers agree) and FPDU framing locked at seq "+strconv.FormatUint(uint64(d.seqOf(start)), 10)+
					"; CRC "+onOff(d.crc), "RFC 5044 §5.1", d.firstFrame(start))
			return true, false
		}
		if waited && !single && canWait {
			return false, true
		}
	}
	if len(b) >= 2*phaseMinData || final {
		d.noMarkerPhase = true
	}
	return false, false
}

// lockMarkers locks the direction on the marker grid g with the FPDU at
// stream offset s confirmed, and returns where framing starts: earlier than
// s when FPDUs before it frame on the grid up to s (backfill), and never at
// an offset right after a grid point (a marker there is the leading marker,
// FPDUPTR 0, of an FPDU that starts with it, RFC 5044 §5.1).
func (d *direction) lockMarkers(s uint64, g markers.Grid) uint64 {
	if s >= markers.Size && g.IsMarker(s-markers.Size) {
		if s-markers.Size >= d.bufOff {
			s -= markers.Size
		} else if _, w, _, _ := d.candidateAt(s, true, g, false); w > 0 {
			s += uint64(w) // its leading marker was not captured
		}
	}
	s = d.backfill(s, g)
	d.consume(int(s - d.bufOff))
	d.markers, d.grid, d.origin, d.originKnown = true, g, g.Origin, true
	d.mode = modeFPDU
	wasMid := !d.everLock && d.midstream
	d.everLock = true
	if wasMid {
		d.c.midstream = true
	}
	return s
}

// backfill returns the earliest buffered offset p <= s from which FPDUs
// framed on the grid g lead exactly to the confirmed FPDU at s, each of them
// confirmed: its CRC32c validates when CRC is in use (but for a first
// FPDU that starts a segment, badCRCFirst: it is reported as a CRC
// error); otherwise the run has two FPDUs or more, or a marker inside an
// FPDU whose FPDUPTR checks.
func (d *direction) backfill(s uint64, g markers.Grid) uint64 {
	for range backfillRuns {
		p := d.backfillTo(s, g)
		if p == s || !d.crc {
			return p
		}
		// A run that starts with a CRC error may have another run
		// before it that leads to it.
		s = p
	}
	return s
}

// backfillRuns bounds the runs backfill goes back over (each a walk of
// the buffer).
const backfillRuns = 8

// backfillTo is one step of backfill: the earliest p of runs to s.
func (d *direction) backfillTo(s uint64, g markers.Grid) uint64 {
	if s <= d.bufOff {
		return s
	}
	for p := s - (s-d.bufOff)/4*4; p < s; p += 4 {
		if p >= markers.Size && g.IsMarker(p-markers.Size) {
			continue
		}
		n, interior, q := 0, 0, p
		for q < s {
			ok, w, crcOK, _ := d.candidateAt(q, true, g, d.crc)
			if !ok || d.crc && !crcOK && (q != p || !d.badCRCFirst(p, w)) {
				break
			}
			interior += g.Count(q+1, q+uint64(w))
			n++
			q += uint64(w)
		}
		if q == s && n > 0 && (d.crc || n >= 2 || interior > 0) {
			return p
		}
	}
	return s
}

// confirmAt reports whether an FPDU at stream offset s is confirmed: its CRC
// validates (and then CRC is in use), or it and the following FPDUs form a
// chain of chainLen consistent headers (fewer when the data ends first).
// wait: the data ends before the chain could tell (not final). crcOn: CRC
// is in use, as far as the chain shows (a CRC32c of the chain validates).
// It changes nothing in d.
func (d *direction) confirmAt(s uint64, mk bool, g markers.Grid, final bool) (ok, wait, crcOn bool) {
	checkCRC := !d.crcKnown || d.crc
	ok, wire, crcOK, need := d.candidateAt(s, mk, g, checkCRC)
	if !ok {
		return false, need && !final, false
	}
	// A CRC32c that validates proves the framing, and proves a marker
	// hypothesis only when the CRC covered a grid point (RFC 5044 §4.1: the
	// CRC covers the markers inside the FPDU).
	if crcOK && (!mk || g.Count(s, s+uint64(wire)-mpa.CRCLen) > 0) {
		return true, false, true
	}
	if d.crcKnown && d.crc {
		return false, false, false
	}
	// Under a marker hypothesis, the zero CRC field of a CRC-less stream
	// in front of each FPDU looks exactly like a marker with FPDUPTR 0, so
	// the chain must also hold a marker strictly inside an FPDU (FPDUPTR >
	// 0, checked by plausible) before the grid is believed. A CRC32c that
	// validates anywhere in the chain says CRC is in use: one FPDU whose
	// CRC is bad does not turn it off.
	interior := 0
	if mk {
		interior = g.Count(s+1, s+uint64(wire))
	}
	valid := crcOK
	chain, q := 1, s+uint64(wire)
	for chain < chainLen || (mk && interior == 0 && chain < maxMarkerChain) {
		ok2, w2, crc2, need := d.candidateAt(q, mk, g, checkCRC)
		if need {
			// The data ends: accept a shorter chain only when it ends
			// exactly at the end of the data; otherwise wait for more.
			if chain >= 2 && q == d.bufOff+uint64(len(d.buf())) && (!mk || interior > 0) {
				return true, false, valid
			}
			return false, !final, false
		}
		if !ok2 {
			return false, false, false
		}
		valid = valid || crc2
		if mk {
			interior += g.Count(q+1, q+uint64(w2))
		}
		chain++
		q += uint64(w2)
	}
	if mk && interior == 0 {
		return false, false, false
	}
	return true, false, valid
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
			// No marker left to follow. The octets before the next one
			// are kept, for the FPDUs there that lead to it (backfill);
			// at the end of the data they are framed on the grid.
			if final {
				return d.resyncGridChain() || d.bufOff != start0
			}
			if len(b) > maxHold {
				d.consume(len(b) - maxHold)
			}
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
			ok, w, crcOK, need := d.candidateAt(start, true, d.grid, d.crc)
			if need && !final {
				return d.bufOff != start0
			}
			if ok && d.crc && !crcOK && d.badCRCFirst(start, w) {
				// Its CRC fails: taken when the next FPDU validates.
				valid, need2 := d.nextValidates(start, w, true, d.grid)
				if need2 && !final {
					return d.bufOff != start0
				}
				crcOK = valid
			}
			if ok && (!d.crc || crcOK) {
				start = d.backfill(start, d.grid)
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

// resyncGridChain looks, at the end of the data and with no marker left in
// it, for an FPDU framed on the known grid that is confirmed: its CRC32c
// validates, or (CRC off) a chain of chainLen consistent headers, or of
// two that ends exactly at the end of the data.
func (d *direction) resyncGridChain() bool {
	b := d.buf()
	end := d.bufOff + uint64(len(b))
	p := d.bufOff
	if r := (p - d.grid.Origin) % 4; p >= d.grid.Origin && r != 0 {
		p += 4 - r
	}
	for ; p+mpa.MinFPDULen <= end; p += 4 {
		if p >= markers.Size && d.grid.IsMarker(p-markers.Size) {
			continue // an FPDU starts with the marker before it
		}
		ok, w, crcOK, _ := d.candidateAt(p, true, d.grid, d.crc)
		evidence := d.chainEvidence(d.crc, chainLen)
		if ok && d.crc && !crcOK && d.badCRCFirst(p, w) {
			// Its CRC fails: taken when the next FPDU validates.
			valid, _ := d.nextValidates(p, w, true, d.grid)
			crcOK, evidence = valid, badFirstEvidence
		}
		if !ok || d.crc && !crcOK {
			continue
		}
		if !d.crc {
			chain, q := 1, p+uint64(w)
			for chain < chainLen {
				ok2, w2, _, _ := d.candidateAt(q, true, d.grid, false)
				if !ok2 {
					break
				}
				chain++
				q += uint64(w2)
			}
			if chain < chainLen && !(chain >= 2 && q == end) {
				continue
			}
		}
		skipped := p - d.lostAt
		d.consume(int(p - d.bufOff))
		d.mode = modeFPDU
		d.c.finding(nil, dissect.SeverityNote, "mpa.resync",
			"framing recovered at seq "+strconv.FormatUint(uint64(d.seqOf(p)), 10)+" on the marker grid, with no marker left to follow ("+
				evidence+"; "+strconv.FormatUint(skipped, 10)+" octets skipped)", "RFC 5044 §4, §5.1", d.firstFrame(p))
		return true
	}
	d.consume(len(b))
	return false
}

// resyncChain scans for a run of consistent FPDU headers (or one FPDU whose
// CRC32c validates) when there are no markers to follow. In a direction
// whose markers are undecided (mid-stream, handshake not captured) the
// candidate is examined by midstreamChain, which never decides "no markers"
// on less than a marker interval.
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
	undecided := !d.originKnown && (!d.markersKnown || d.markersNeg)
	tryLeading := undecided && checkCRC
	for ; p+mpa.MinFPDULen <= d.bufOff+uint64(len(b)); p += step {
		// A marker stream whose FPDUs are short holds few markers, and
		// an FPDU that starts with a marker (FPDUPTR 0) looks like a
		// marker-free FPDU after four zero octets. The CRC tells them
		// apart: it covers the leading marker (RFC 5044 §4.1), so it
		// validates only when the FPDU is framed with it.
		if i := int(p - d.bufOff); tryLeading && i+8 <= len(b) && binary.BigEndian.Uint32(b[i:]) == 0 {
			g := markers.Grid{Origin: p % markers.Interval}
			if ok, _, crcOK, _ := d.candidateAt(p, true, g, true); ok && crcOK {
				d.crc, d.crcKnown = true, true
				s := d.lockMarkers(p, g)
				d.c.finding(nil, dissect.SeverityNote, "mpa.midstream_lock",
					"no MPA handshake captured in this direction: FPDU framing locked at seq "+strconv.FormatUint(uint64(d.seqOf(s)), 10)+
						" on a CRC32c that validates with a leading marker (FPDUPTR 0); CRC on, markers on (grid phase "+
						strconv.FormatUint(p%markers.Interval, 10)+" of 512)", "RFC 5044 §4.1, §5.1", d.firstFrame(s))
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
		if undecided {
			switch d.midstreamChain(p, final) {
			case chainLocked:
				return true
			case chainWait:
				d.dropScanned(p)
				return d.bufOff != start0
			}
			continue
		}
		confirmed := crcOK
		evidence := "CRC32c validates"
		if !confirmed {
			if d.crcKnown && d.crc {
				// CRC is in use and this FPDU's fails: it is taken
				// when it starts a segment and the next validates.
				valid, need2 := d.nextValidates(p, wire, false, markers.Grid{})
				if need2 && !final && d.badCRCFirst(p, wire) {
					d.dropScanned(p)
					return d.bufOff != start0
				}
				if !valid || !d.badCRCFirst(p, wire) {
					continue
				}
				d.lockPlain(p, badFirstEvidence)
				return true
			}
			chain, q := 1, p+uint64(wire)
			waiting, valid, nextOK := false, false, false
			for chain < chainLen {
				ok2, w2, crc2, need2 := d.candidateAt(q, false, markers.Grid{}, checkCRC)
				if need2 {
					waiting = q < d.bufOff+uint64(len(b)) || !final
					break
				}
				if !ok2 {
					break
				}
				valid = valid || crc2
				nextOK = nextOK || chain == 1 && crc2
				chain++
				q += uint64(w2)
			}
			if valid {
				// CRC is in use and this FPDU's does not validate: a
				// candidate found by scanning is not confirmed by it,
				// unless it starts a segment and the next validates.
				if nextOK && d.badCRCFirst(p, wire) {
					d.setCRC(true)
					d.lockPlain(p, badFirstEvidence)
					return true
				}
				continue
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
		if !d.crcKnown {
			d.crc = crcOK
			d.crcKnown = true
			d.guessedCRC()
		}
		d.lockPlain(p, evidence)
		return true
	}
	d.dropScanned(p)
	return d.bufOff != start0
}

// lockPlain locks framing without markers at stream offset p.
func (d *direction) lockPlain(p uint64, evidence string) {
	skipped := p - d.lostAt
	d.consume(int(p - d.bufOff))
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
}

// Verdicts of midstreamChain.
const (
	chainReject = iota // not an FPDU start: scan on
	chainLocked        // framing locked
	chainWait          // more octets are needed to decide
)

// midstreamChain examines a plausible marker-free FPDU at stream offset p
// in a direction whose markers are undecided (no handshake captured, or
// markers forced with their grid unknown). It follows the FPDUs from p
// without markers. A run that covers a whole marker interval (512 octets)
// proves there are no markers: a marker would sit inside it, and break
// the chain (RFC 5044 §5.1), so framing locks without markers. A run that
// breaks before is looked at for a marker at its break whose FPDUPTR
// points to the FPDU there; when that grid is confirmed (confirmAt),
// framing locks on it from p. CRC is in use when a CRC32c of the run
// validates (or DDP version 0 says RDMAC, where CRC is always on), not
// from one FPDU, and then the run must start with an FPDU whose CRC
// validates. With too little data to decide it waits, or, at the end of
// the capture, locks on what there is as before.
func (d *direction) midstreamChain(p uint64, final bool) int {
	b := d.buf()
	dataEnd := d.bufOff + uint64(len(b))
	knownOn, knownOff := d.crcKnown && d.crc, d.crcKnown && !d.crc
	forcedMk := d.markersForced && d.markersNeg
	var (
		n, valid               int
		firstOK, secondOK, dv0 bool
		firstW                 int
		validEnd               uint64
		lastStart              uint64
		validN                 int
		broke                  bool
	)
	q := p
	for n < maxMarkerChain {
		crcOn := knownOn || !knownOff && (valid > 0 || dv0)
		conf, confN := q, n
		if crcOn {
			conf, confN = validEnd, validN
		}
		if conf > p && conf-p >= markers.Interval && (crcOn || confN >= chainLen) {
			break
		}
		ok, w, crcOK, need := d.candidateAt(q, false, markers.Grid{}, !knownOff)
		if need {
			break
		}
		if !ok {
			broke = true
			break
		}
		if b[int(q-d.bufOff)+2]&0x03 == 0 {
			dv0 = true // RDMAC: markers and CRC are always on
		}
		n++
		switch n {
		case 1:
			firstOK, firstW = crcOK, w
		case 2:
			secondOK = crcOK
		}
		lastStart = q
		q += uint64(w)
		if crcOK {
			valid++
			validEnd, validN = q, n
		}
	}
	crcOn := knownOn || !knownOff && (valid > 0 || dv0)
	badFirst := false
	if crcOn && !firstOK {
		if !secondOK || !d.badCRCFirst(p, firstW) {
			return chainReject
		}
		badFirst = true
	}
	confEnd, confN := q, n
	if crcOn {
		confEnd, confN = validEnd, validN
	}
	decided := crcOn || confN >= chainLen
	if confEnd-p >= markers.Interval && decided && !forcedMk {
		d.setCRC(crcOn)
		ev := d.chainEvidence(crcOn, confN)
		if badFirst {
			ev = badFirstEvidence
		}
		d.lockPlain(p, ev)
		return chainLocked
	}
	// The run stops short of a marker interval: at a header that does not
	// fit, at an FPDU whose CRC fails, or at the end of the data.
	// With CRC in use the marker is in the first FPDU whose CRC fails
	// (or leads the FPDU after the run); without, a marker inside the last
	// FPDU of the run made its successor's header unreadable, or leads it.
	brks := []uint64{confEnd}
	if !crcOn && n > 0 {
		brks = []uint64{lastStart, q}
	}
	waitMk := false
	for _, brk := range brks {
		if !broke && confEnd == q && !final {
			break
		}
		g, ok, wait, mkCRC := d.markerAtBreak(p, brk, final)
		waitMk = waitMk || wait
		if ok {
			d.setCRC(crcOn || mkCRC)
			s := d.lockMarkers(p, g)
			d.c.finding(nil, dissect.SeverityNote, "mpa.midstream_lock",
				"no MPA handshake captured in this direction: marker grid recovered (phase "+
					strconv.FormatUint(g.Origin%markers.Interval, 10)+" of 512) from a marker whose FPDUPTR points to the FPDU at seq "+
					strconv.FormatUint(uint64(d.seqOf(brk)), 10)+", confirmed, and FPDU framing locked at seq "+
					strconv.FormatUint(uint64(d.seqOf(s)), 10)+"; CRC "+onOff(d.crc), "RFC 5044 §5.1", d.firstFrame(s))
			return chainLocked
		}
	}
	if waitMk && len(b) < maxHold {
		return chainWait
	}
	if !broke && !final && len(b) < maxHold {
		return chainWait
	}
	if forcedMk && !(final && crcOn && confEnd == dataEnd && d.scanned == 0 && dataEnd-d.bufOff < markers.Interval) {
		// Markers forced, their grid unknown: only FPDUs whose CRC32c
		// validates without a marker, up to the end of the data, can be
		// framed (none of them holds a marker), and only in a direction
		// that sent less than a marker interval, where that does not
		// contradict the markers forced (mpa.forced_unframed says so).
		return chainReject
	}
	// No marker explains the break: lock without markers on the evidence
	// there is, as a lock on a short run always did; the FPDU at the
	// break is then reported as framing finds it.
	if decided || final && confEnd == dataEnd && confN >= 2 {
		d.setCRC(crcOn)
		ev := d.chainEvidence(crcOn, confN)
		if badFirst {
			ev = badFirstEvidence
		}
		d.lockPlain(p, ev)
		return chainLocked
	}
	return chainReject
}

// badFirstEvidence is the evidence of a lock on an FPDU whose CRC fails,
// confirmed by the one after it (badCRCFirst).
const badFirstEvidence = "the CRC32c of the FPDU after it, which its length field reaches, validates (its own does not: reported as a CRC error)"

// nextValidates reports whether the FPDU right after the one of wire
// octets at stream offset p (framed with markers on g when mk) is whole
// and its CRC32c validates; need: the buffer does not hold it all yet.
func (d *direction) nextValidates(p uint64, wire int, mk bool, g markers.Grid) (valid, need bool) {
	ok, _, crcOK, need := d.candidateAt(p+uint64(wire), mk, g, true)
	return ok && crcOK, need
}

// badCRCFirst reports whether a plausible FPDU of wire octets at stream
// offset p whose CRC32c fails, followed by one whose CRC32c validates, is
// taken as an FPDU with a CRC error rather than scanned past. p must be
// where a captured segment starts, as a sender that aligns its FPDUs to
// segments starts them (RFC 5044 §5.2; siw does): its length field
// reaching exactly an FPDU that validates is then the evidence (random
// octets at a segment start do that about once in 10^6: a 16-bit length,
// the DDP and RDMAP header checks). And its CRC32c must not validate with
// a leading marker before it (FPDUPTR 0, four zero octets, RFC 5044 §5.1,
// which the CRC covers, §4.1): that is an FPDU whose first octets, its
// marker, were not captured, not a CRC error. Without this, a direction
// whose first captured FPDU (mid-stream, or after lost octets) had a bad
// CRC, as a capture taken because of CRC errors may start, lost the
// error: the FPDU was skipped and the summary said 0 CRC errors.
func (d *direction) badCRCFirst(p uint64, wire int) bool {
	b := d.buf()
	if p < d.bufOff || wire < mpa.MinFPDULen || p-d.bufOff+uint64(wire) > uint64(len(b)) {
		return false
	}
	w := b[p-d.bufOff:][:wire]
	n := wire - mpa.CRCLen
	var lead [markers.Size]byte
	if mpa.UpdateCRC32C(mpa.CRC32C(lead[:]), w[:n]) == binary.LittleEndian.Uint32(w[n:]) {
		return false
	}
	for i := range d.prov {
		if d.prov[i].off == p {
			return true
		}
		if d.prov[i].off > p {
			break
		}
	}
	return false
}

// setCRC records CRC use when nothing decided it before.
func (d *direction) setCRC(on bool) {
	if !d.crcKnown {
		d.crc, d.crcKnown = on, true
		d.guessedCRC()
	}
}

func (d *direction) chainEvidence(crcOn bool, n int) string {
	if crcOn {
		return "CRC32c validates"
	}
	return strconv.Itoa(n) + " consecutive consistent FPDU headers (lower confidence: no CRC)"
}

// markerAtBreak looks, in the FPDU at stream offset bq where a marker-free
// run from p broke, for a marker whose FPDUPTR points back to bq (RFC 5044
// §5.1), on a grid with no marker in [p, bq) (the run was marker-free), and
// confirms that grid at bq (confirmAt). crcOn: the confirmation says CRC
// is in use.
func (d *direction) markerAtBreak(p, bq uint64, final bool) (g markers.Grid, ok, wait, crcOn bool) {
	b := d.buf()
	i := int(bq - d.bufOff)
	if i+2 > len(b) {
		return g, false, !final, false
	}
	// A marker inside the FPDU leaves its length field before it; a
	// leading one (FPDUPTR 0) is at bq itself.
	lim := bq + uint64(mpa.PlainLen(int(binary.BigEndian.Uint16(b[i:])))) + markers.Size
	for m := bq; m < lim; m += 4 {
		j := int(m - d.bufOff)
		if j+markers.Size > len(b) {
			return g, false, !final, false
		}
		if binary.BigEndian.Uint16(b[j:]) != 0 || uint64(binary.BigEndian.Uint16(b[j+2:])) != m-bq {
			continue
		}
		if m >= markers.Interval && m-markers.Interval >= p {
			continue // the grid would put a marker inside the run
		}
		cand := markers.Grid{Origin: m % markers.Interval}
		c, w, on := d.confirmAt(bq, true, cand, final)
		if c {
			return cand, true, false, on
		}
		wait = wait || w
	}
	return g, false, wait, false
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

// settleBeforeGap frames, before octets are lost, what a direction that is
// resynchronising holds: as at the end of the capture, FPDUs captured whole
// and confirmed (by CRC32c, by markers that agree, or by a header chain
// that ends at the gap) are reported, not thrown away with the octets
// around them; the gap itself is then handled as in a locked direction.
func (d *direction) settleBeforeGap() {
	if d.mode != modeLost || len(d.buf()) == 0 || d.final || d.parsing {
		return
	}
	nmp := d.noMarkerPhase
	d.final = true
	for d.mode == modeLost && len(d.buf()) > 0 && d.resync(true) {
	}
	d.noMarkerPhase = nmp
	if d.mode == modeFPDU {
		d.parse()
	}
	d.final = false
}

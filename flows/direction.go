package flows

import (
	"encoding/binary"
	"errors"
	"strconv"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/markers"
	"github.com/iwarpkit/iwarpkit/reassembly"
)

// dmode is the state of one direction's MPA state machine.
type dmode uint8

const (
	modeStart   dmode = iota // streaming mode: expecting an MPA Request or Reply
	modeWaitNeg              // our MPA frame was sent; waiting for the other side's to know markers/CRC
	modeFPDU                 // full operation: framing FPDUs
	modeLost                 // resynchronising (after a gap, or no handshake captured)
	modeDead                 // not iWARP, or rejected: octets are ignored
)

// Limits per direction.
const (
	maxFPDUWire = 2 + 65535 + 3 + 4 + 4*130 // the longest FPDU on the wire, markers included
	maxHold     = 2*maxFPDUWire + 20        // octets held while framing
	maxHole     = maxFPDUWire               // gaps up to this size are kept as zero-filled holes
	scanLimit   = 1 << 20                   // octets scanned for a first lock before giving up on a direction
)

type prov struct {
	off, end uint64
	frame    uint64
	// The frame's timestamp without its pointer (time.Time has one), so
	// that appending costs no write barrier: seconds and nanoseconds as
	// time.Time.Unix and Nanosecond give them (int64 nanoseconds would
	// overflow for damaged timestamps).
	sec  int64
	nsec int32
}

// time is the frame's timestamp; capture gives UTC times.
func (p *prov) time() time.Time { return time.Unix(p.sec, int64(p.nsec)).UTC() }

// hole is a run of stream octets never captured, zero-filled in the
// buffer; cut: the capture's snap length cut them.
type hole struct {
	off, end uint64
	cut      bool
}

// compactAt is the capacity from which a direction's buffer makes room by
// moving its octets to the front rather than growing (direction.Data).
const compactAt = 8 << 10

type direction struct {
	c      *conn
	side   side
	stream *reassembly.Stream
	mode   dmode
	// inPending: in the heap Decoder.pending, at pendIdx, under pendKey
	// (its pendingFrame when last keyed).
	inPending bool
	pendIdx   int
	pendKey   uint64

	data []byte // data[head:] holds stream octets [bufOff, bufOff+len)
	head int
	// borrowed: data is the capture's buffer (during Data only); own is the
	// direction's storage for octets kept between packets.
	borrowed bool
	own      []byte
	bufOff   uint64
	prov     []prov
	holes    []hole

	seqBase  uint32
	seqKnown bool
	lastTS   time.Time

	markersNeg, markersKnown bool // negotiated by the other side's MPA frame
	markers                  bool // in effect
	grid                     markers.Grid
	crc, crcKnown            bool
	origin                   uint64 // stream offset of the first FPDU octet
	originKnown              bool

	parsing   bool
	midstream bool
	scanned   uint64 // octets scanned while looking for a first lock
	lostAt    uint64 // stream offset where sync was lost
	everLock  bool
	// lossy: octets of this direction were lost (a capture gap, a snap
	// length cut) or skipped (resynchronisation): segments may be missing.
	lossy bool
	// noMarkerPhase: a mid-stream search found no marker grid.
	noMarkerPhase bool
	// markersForced, crcForced: set by a Force; the handshake does not change them.
	markersForced, crcForced bool
	sawFPDU                  bool // an FPDU was framed in this direction
	final                    bool // the capture has ended: no more data will come
	synSeen                  bool // the SYN of this direction was captured: offset 0 is ISN+1
	dv                       int  // DDP version seen in this direction, -1 unknown

	scratch []byte
	found   []markers.Found
	msgs    messages
	an      dirState
	// cw: the CRC fields watched after CRC was guessed off (crcwatch.go).
	cw *crcWatch
}

func newDirection(c *conn, s side, ro reassembly.Options) *direction {
	return &direction{c: c, side: s, stream: reassembly.NewStream(ro), dv: -1}
}

// reset makes d what newDirection makes, keeping the storage of its
// slices and maps (Decoder.newConn).
func (d *direction) reset(c *conn, s side, ro reassembly.Options) {
	st := d.stream
	st.Reset(ro)
	own, prov, holes, scratch, found := d.own[:0], d.prov[:0], d.holes[:0], d.scratch[:0], d.found[:0]
	open, recent, msn := d.msgs.open_, d.an.recent[:0], d.an.msn
	clear(open)
	msn.reset()
	*d = direction{c: c, side: s, stream: st, dv: -1, own: own, prov: prov, holes: holes, scratch: scratch, found: found}
	d.msgs.open_ = open
	d.an.recent, d.an.msn = recent, msn
}

func (d *direction) buf() []byte { return d.data[d.head:] }

// compact gives back the buffers a direction of a closed connection holds
// with nothing in them. The connection stays in the table until the end of
// the capture (its summary comes then), and its buffers' capacity, the
// largest FPDU it ever had to join, was most of what it kept: 6.4 KB per
// connection before this, on captures of many short connections. Octets
// that come after all are buffered again as usual.
func (d *direction) compact() {
	if d.parsing || d.borrowed {
		return
	}
	if len(d.buf()) == 0 {
		d.c.d.giveOwn(d.own)
		d.data, d.own, d.head = nil, nil, 0
	}
	if len(d.prov) == 0 {
		d.prov = nil
	}
	d.scratch, d.found = nil, nil
}

func (d *direction) seqOf(off uint64) uint32 { return d.seqBase + uint32(off) }

// Data implements reassembly.Handler.
func (d *direction) Data(ch *reassembly.Chunk) {
	if !d.seqKnown {
		d.seqBase = uint32(ch.Seq) - uint32(ch.Off)
		d.seqKnown = true
	}
	if d.mode == modeDead {
		if d.c.rejected && len(ch.Data) > 0 && d.c.dirOf(d.side) != DirUnknown {
			d.c.finding(nil, dissect.SeverityWarning, "mpa.data_after_reject",
				"octets sent after the connection was rejected", "RFC 5044 §7.1.1", ch.Frame)
		}
		return
	}
	if len(ch.Data) == 0 {
		return
	}
	end := d.bufOff + uint64(len(d.buf()))
	if len(d.buf()) > 0 && ch.Off != end {
		// The reassembler promises contiguous delivery between gap
		// events; treat anything else as a gap.
		if ch.Off < end {
			return
		}
		d.gap(end, ch.Off, ch.Frame, false)
		if d.mode == modeDead {
			return
		}
	}
	var rest []byte // octets after those completing the FPDU held
	if len(d.buf()) == 0 {
		// Nothing pending: frame straight from the capture's buffer
		// (zero-copy); only a trailing partial FPDU is copied below.
		d.bufOff = ch.Off
		d.data = ch.Data
		d.head = 0
		d.borrowed = true
	} else {
		join := ch.Data
		if n := d.completes(); n > 0 && n < len(join) {
			// Join only the octets that complete the FPDU held; what
			// follows is framed from the capture's buffer, as when
			// nothing is held. Joining whole chunks copied 70 % of the
			// workload's octets once more (83 % on small messages), and
			// the buffer of a direction whose FPDUs straddle segments
			// grew to an FPDU and a segment.
			join, rest = join[:n], join[n:]
		}
		if len(d.data)+len(join) > cap(d.data) && cap(d.data) >= compactAt && d.head >= len(d.buf()) {
			// Reuse the room of the octets consumed rather than let append
			// grow the buffer (consume moves them only past 64 KiB): a
			// direction whose FPDUs straddle its segments kept some 130 KB,
			// 2,000 such connections 270 MB. What is moved is at most what
			// was consumed.
			m := copy(d.data, d.data[d.head:])
			d.data, d.head = d.data[:m], 0
		}
		d.data = append(d.data, join...)
		d.own = d.data[:0]
	}
	// Set in place: appending a prov literal copies it from the stack
	// with overlapping 16-octet moves, and parse's first load of it
	// stalled (store-to-load forwarding; 1 % of a -j 1 profile's samples).
	if len(d.prov) == cap(d.prov) {
		d.prov = append(d.prov, prov{})
	} else {
		d.prov = d.prov[:len(d.prov)+1]
	}
	pv := &d.prov[len(d.prov)-1]
	pv.off, pv.end, pv.frame = ch.Off, ch.Off+uint64(len(ch.Data)), ch.Frame
	pv.sec, pv.nsec = ch.TS.Unix(), int32(ch.TS.Nanosecond())
	d.parse()
	if rest != nil {
		if len(d.buf()) == 0 {
			d.bufOff = ch.Off + uint64(len(ch.Data)-len(rest))
			d.data, d.head, d.borrowed = rest, 0, true
		} else {
			// The FPDU was not framed (sync lost, say): the rest
			// joins the buffer as the whole chunk did.
			d.data = append(d.data, rest...)
			d.own = d.data[:0]
		}
		d.parse()
	}
	if d.borrowed {
		if cap(d.own) == 0 {
			d.own = d.c.d.takeOwn()
		}
		d.own = append(d.own[:0], d.buf()...)
		d.data = d.own
		d.head = 0
		d.borrowed = false
	}
}

// completes is how many more octets complete the FPDU at the front of the
// buffer, or 0 when that is not known: outside steady framing, or while its
// length field is not all there.
func (d *direction) completes() int {
	if d.mode != modeFPDU || !d.sawFPDU {
		return 0
	}
	b := d.buf()
	s := d.bufOff
	ulen, ok, hole := d.lenAt(b, s, s, d.markers, d.grid)
	if !ok || hole {
		return 0
	}
	wire := mpa.PlainLen(ulen)
	if d.markers {
		wire = d.grid.WireLen(s, wire)
	}
	return max(wire-len(b), 0)
}

// Event implements reassembly.Handler.
func (d *direction) Event(e reassembly.Event) {
	switch e.Kind {
	case reassembly.EvGap:
		if !d.seqKnown {
			d.seqBase = uint32(e.Seq) - uint32(e.Off)
			d.seqKnown = true
		}
		// The frame of the octets after the gap may be long past: its
		// time comes with the event (conn.tsOf).
		d.c.hint = frameTS{e.Frame, e.TS}
		d.gap(e.Off, e.Off+uint64(e.Len), e.Frame, e.Cut)
		d.c.hint = frameTS{}
	case reassembly.EvMidstream:
		d.midstream = true
	case reassembly.EvConflict, reassembly.EvPastFIN:
		d.conflict(e)
	case reassembly.EvBufferFull:
		d.c.finding(nil, dissect.SeverityWarning, "cap.reassembly_buffer",
			"out-of-order buffer full: octets skipped", "", e.Frame)
	}
}

// conflict reports octets that contradict what the stream already holds
// (reassembly.EvConflict: a retransmission with other octets, a SYN or FIN
// that contradicts an earlier one) or that lie past its FIN
// (reassembly.EvPastFIN).
func (d *direction) conflict(e reassembly.Event) {
	if !d.c.isIWARP() {
		return
	}
	seq := strconv.FormatUint(uint64(uint32(e.Seq)), 10)
	switch {
	case e.Kind == reassembly.EvPastFIN:
		d.c.finding(nil, dissect.SeverityWarning, "tcp.data_after_fin",
			strconv.Itoa(e.Len)+" octets at seq "+seq+" lie past the FIN "+d.c.endpoint(d.side).String()+
				" sent: data after the end of its stream (a stray or forged segment, or a sender bug), not decoded", "RFC 793 §3.5", e.Frame)
	case e.Len == 0:
		d.c.finding(nil, dissect.SeverityWarning, "tcp.retransmit_conflict",
			"a SYN or FIN at seq "+seq+" contradicts the one seen before on this side; the first was kept", "RFC 793 §3.3, §3.5", e.Frame)
	default:
		d.c.finding(nil, dissect.SeverityWarning, "tcp.retransmit_conflict",
			"retransmission of seq "+seq+" (+"+strconv.Itoa(e.Len)+
				") carries different octets than the first copy; the first copy was used", "RFC 793 §3.3", e.Frame)
	}
}

// gap handles octets [off, end) that were never captured: missing from
// the capture, or, when cut is set, cut off the end of the segment of frame
// by the capture's snap length.
func (d *direction) gap(off, end uint64, frame uint64, cut bool) {
	if end <= off || d.mode == modeDead {
		return
	}
	d.settleBeforeGap()
	d.lossy = true
	if cut {
		d.c.cutSegs++
		defer d.snapCut(frame, end-off)
	}
	if d.c.isIWARP() || d.mode == modeFPDU || d.mode == modeWaitNeg {
		d.msgs.gapped(frame, cut)
		if !cut {
			d.c.finding(nil, dissect.SeverityWarning, "tcp.gap",
				strconv.FormatUint(end-off, 10)+" octets sent by "+d.c.endpoint(d.side).String()+" are missing from the capture (seq "+
					strconv.FormatUint(uint64(d.seqOf(off)), 10)+" to "+strconv.FormatUint(uint64(d.seqOf(end)), 10)+")",
				"", frame)
		}
	}
	bufEnd := d.bufOff + uint64(len(d.buf()))
	if len(d.buf()) == 0 {
		bufEnd = off
		d.bufOff = off
	}
	if off != bufEnd {
		off = bufEnd
	}
	if (d.mode == modeFPDU || d.mode == modeWaitNeg || cut && d.mode == modeStart && d.cutMPA(off, end)) &&
		end-off <= maxHole && len(d.buf())+int(end-off) <= maxHold {
		// Keep small gaps as zero-filled holes so the FPDU around them is
		// reported (crc_status incomplete) and framing goes on from its
		// length field; and an MPA Request or Reply whose private data the
		// snap length cut, from its header.
		n := int(end - off)
		for i := 0; i < n; i++ {
			d.data = append(d.data, 0)
			d.own = d.data[:0]
		}
		d.holes = append(d.holes, hole{off, end, cut})
		d.parse()
		return
	}
	if d.mode == modeStart && cut && d.keyCutAt(off) {
		// The snap length cut the MPA frame before the end of its header:
		// iWARP, but its negotiation is unknown.
		d.c.keyCut = true
		d.midstream = true
	} else if d.mode == modeStart && cut && d.keyUnseenAt(off) {
		d.c.keyUnseen = true
	}
	// A large gap: report what is known of the FPDU in progress, then
	// resynchronise after the gap.
	if d.mode == modeFPDU {
		d.emitPartial(end)
	}
	d.dropAll(end)
	if d.mode == modeFPDU || d.mode == modeWaitNeg || d.mode == modeStart {
		d.lose(end)
	}
}

// keyCutAt reports whether the octets buffered before a snap-length cut at
// off are the start of an MPA Request or Reply cut before the end of its
// header: at least half its key (8 octets), which no other protocol sends.
func (d *direction) keyCutAt(off uint64) bool {
	b := d.buf()
	return d.bufOff == 0 && uint64(len(b)) == off && len(b) >= mpa.KeyLen/2 && len(b) < mpa.HeaderLen &&
		mpa.IsKeyPrefix(b[:min(len(b), mpa.KeyLen)])
}

// snapCut reports, once per connection and once it is known to be iWARP,
// that the capture's snap length cut n octets off the segment of frame
// (RFC 1761's snapshot length; tshark's "Packet size limited during
// capture").
func (d *direction) snapCut(frame, n uint64) {
	c := d.c
	if c.cutSaid || !c.isIWARP() {
		return
	}
	c.cutSaid = true
	msg := "the capture's snap length cut " + strconv.FormatUint(n, 10) + " octets off the end of this segment from " +
		c.endpoint(d.side).String()
	if c.keyCut && c.req == nil && c.rep == nil {
		msg += ", in the MPA Request or Reply before the end of its 20-octet header: the negotiated revision, markers and CRC are unknown, and FPDUs are looked for as in a mid-stream capture"
	} else {
		msg += ": FPDUs in cut segments are incomplete and their CRCs are not checked; the conn record counts the cut segments (cut_segments)"
	}
	c.finding(nil, dissect.SeverityWarning, "cap.snaplen", msg+". Capture with a larger snap length (tcpdump -s 0)", "", frame)
}

// keyUnseenAt reports whether the octets buffered before a snap-length cut
// at off, the first of the direction's stream, are too few to tell an MPA
// Request or Reply's key (less than half of it, all of them a prefix of
// a key): the capture cannot say whether the connection is iWARP.
func (d *direction) keyUnseenAt(off uint64) bool {
	b := d.buf()
	return d.bufOff == 0 && uint64(len(b)) == off && len(b) < mpa.KeyLen/2 && mpa.IsKeyPrefix(b)
}

// cutMPA reports whether the octets buffered before a snap-length cut at
// off hold the header of an MPA Request or Reply whose frame the cut ends
// early: parseStart then decodes it with a hole for the private data cut.
func (d *direction) cutMPA(off, end uint64) bool {
	b := d.buf()
	if d.bufOff+uint64(len(b)) != off || len(b) < mpa.HeaderLen {
		return false
	}
	n, ok := mpa.FrameLen(b)
	return ok && n > len(b)
}

// lose enters resynchronisation at stream offset at.
func (d *direction) lose(at uint64) {
	if d.mode == modeStart && !d.everLock && !d.c.isIWARP() {
		// Nothing iWARP seen yet: scan as a mid-stream capture.
		d.midstream = true
	}
	d.mode = modeLost
	d.lostAt = at
	d.lossy = true
}

// dropAll discards every buffered octet and restarts the buffer at off.
func (d *direction) dropAll(off uint64) {
	d.data = d.data[:0]
	d.head = 0
	d.bufOff = off
	d.prov = d.prov[:0]
	d.holes = d.holes[:0]
}

// consume drops n octets from the front of the buffer.
func (d *direction) consume(n int) {
	if n <= 0 {
		return
	}
	if n > len(d.buf()) {
		n = len(d.buf())
	}
	d.head += n
	d.bufOff += uint64(n)
	if d.head == len(d.data) {
		d.data = d.data[:0]
		d.head = 0
	} else if !d.borrowed && d.head > 64<<10 && d.head > len(d.data)/2 {
		m := copy(d.data, d.data[d.head:])
		d.data = d.data[:m]
		d.head = 0
	}
	i := 0
	for i < len(d.prov) && d.prov[i].end <= d.bufOff {
		i++
	}
	if i > 0 {
		d.prov = append(d.prov[:0], d.prov[i:]...)
	}
	i = 0
	for i < len(d.holes) && d.holes[i].end <= d.bufOff {
		i++
	}
	if i > 0 {
		d.holes = append(d.holes[:0], d.holes[i:]...)
	}
}

func (d *direction) hasPending() bool {
	return (len(d.buf()) > 0 && d.mode != modeDead) || d.msgs.open() > 0
}

// pendingFrame is the earliest frame whose octets might still become part of
// a record of this direction. A direction resynchronising (modeLost) holds
// records back only when it is known to carry FPDUs: it framed some before
// a gap, or --decode-as forced it (Force); the records of its lock keep
// their frames, which may be earlier than records of other connections.
// One that never framed an FPDU, most often a TCP connection that is not
// iWARP, is scanned for up to scanLimit octets, and the records of every
// other connection would wait for it meanwhile.
func (d *direction) pendingFrame() (uint64, bool) {
	var f uint64
	ok := false
	if len(d.buf()) > 0 && d.mode != modeDead && (d.mode != modeLost || d.sawFPDU || d.c.force != nil) && len(d.prov) > 0 {
		f, ok = d.prov[0].frame, true
	}
	if mf, mok := d.msgs.oldest(); mok && (!ok || mf < f) {
		f, ok = mf, true
	}
	return f, ok
}

func (d *direction) frameTS(frame uint64) (time.Time, bool) {
	for i := range d.prov {
		if d.prov[i].frame == frame {
			return d.prov[i].time(), true
		}
	}
	return time.Time{}, false
}

// framesOf lists the frames that carried octets of [s, e), with the
// timestamps of the first of them and of the last.
func (d *direction) framesOf(out []uint64, s, e uint64) ([]uint64, time.Time, time.Time) {
	var ts, end time.Time
	for i := range d.prov {
		p := &d.prov[i]
		if p.end <= s || p.off >= e {
			continue
		}
		if len(out) == 0 {
			ts = p.time()
		}
		if len(out) == 0 || out[len(out)-1] != p.frame {
			out = append(out, p.frame)
			end = p.time()
		}
	}
	return out, ts, end
}

func (d *direction) inHole(off uint64) bool {
	for _, h := range d.holes {
		if off >= h.off && off < h.end {
			return true
		}
	}
	return false
}

func (d *direction) overlapsHole(s, e uint64) bool {
	if len(d.holes) == 0 {
		return false
	}
	for _, h := range d.holes {
		if h.off < e && s < h.end {
			return true
		}
	}
	return false
}

// parse runs the state machine over the buffered octets.
func (d *direction) parse() {
	if d.parsing {
		return
	}
	d.parsing = true
	defer func() { d.parsing = false }()
	for {
		var progressed bool
		switch d.mode {
		case modeStart:
			progressed = d.parseStart()
		case modeWaitNeg:
			if len(d.buf()) > maxHold {
				d.inferNegotiation()
				progressed = true
			}
		case modeFPDU:
			progressed = d.parseFPDU()
		case modeLost:
			progressed = d.resync(false)
		case modeDead:
			d.dropAll(d.bufOff + uint64(len(d.buf())))
		}
		if !progressed {
			return
		}
	}
}

// tryFrame is called when the negotiation completes.
func (d *direction) tryFrame() {
	if d.mode != modeWaitNeg {
		return
	}
	if !d.crcKnown || !d.markersKnown {
		return
	}
	d.startFPDU(d.markersNeg, d.crc)
	d.parse()
}

func (d *direction) startFPDU(markersOn, crc bool) {
	d.mode = modeFPDU
	d.markers = markersOn
	d.crc = crc
	d.crcKnown = true
	d.grid = markers.Grid{Origin: d.origin}
	d.everLock = true
}

// parseStart reads an MPA Request or Reply at the start of the stream.
func (d *direction) parseStart() bool {
	b := d.buf()
	if len(b) == 0 {
		return false
	}
	k := len(b)
	if k > mpa.KeyLen {
		k = mpa.KeyLen
	}
	if !mpa.IsKeyPrefix(b[:k]) {
		d.notMPA()
		return true
	}
	f, n, err := mpa.DecodeFrame(b)
	if errors.Is(err, dissect.ErrTruncated) {
		return false
	}
	if err != nil {
		d.notMPA()
		return true
	}
	frames, ts, _ := d.framesOf(nil, d.bufOff, d.bufOff+uint64(n))
	rec := mkRecord(RecMPA, frames[0], ts)
	d.fill(rec)
	m := &MPARecord{Seq: d.seqOf(d.bufOff), Frame: f, Frames: frames}
	pd := f.PD
	if len(d.holes) > 0 && d.holes[0].off < d.bufOff+uint64(n) {
		// The snap length cut the private data (gap, cutMPA): keep what
		// was captured.
		pd = pd[:max(int(d.holes[0].off-d.bufOff)-mpa.HeaderLen, 0)]
	}
	m.Frame.PD = append([]byte(nil), pd...)
	if e, _, ok := m.Frame.Enhanced(); ok {
		m.HasEnhanced = true
		m.Enhanced = e
		m.P2P = e.P2P(d.c.d.opts.Flags)
		m.RTR = e.RTR(d.c.d.opts.Flags)
	}
	rec.MPA = m
	for _, fd := range f.Check(nil) {
		d.c.finding(rec, fd.Severity, fd.Code, fd.Msg, fd.Ref, rec.Frame)
	}
	d.consume(n)
	d.origin = d.bufOff
	d.originKnown = true
	d.mode = modeWaitNeg
	if f.Kind == mpa.KindReply && f.R {
		d.mode = modeDead
	}
	d.c.onMPA(d, rec)
	d.c.d.push(rec)
	if d.c.rejected {
		for _, od := range d.c.dirs {
			if od.mode == modeWaitNeg {
				od.mode = modeDead
			}
		}
	}
	return true
}

// notMPA handles a stream that does not start with an MPA frame.
func (d *direction) notMPA() {
	d.lose(d.bufOff)
	d.midstream = true
}

// inferNegotiation decides markers and CRC for a direction whose peer's MPA
// frame was not captured, from the first FPDU itself.
func (d *direction) inferNegotiation() {
	d.c.finding(nil, dissect.SeverityWarning, "mpa.negotiation_not_captured",
		"the peer's MPA frame was not captured: marker and CRC use inferred from the data", "RFC 5044 §7.1", d.c.lastFrame)
	b := d.buf()
	mk := d.markersKnown && d.markersNeg
	if !d.markersKnown {
		// In a marker direction the first FPDU starts with a marker whose
		// FPDUPTR is 0: four zero octets, which no FPDU header can be.
		mk = len(b) >= 4 && binary.BigEndian.Uint32(b) == 0
	}
	crc := d.crcKnown && d.crc
	if !d.crcKnown {
		crc = d.inferCRC(mk)
	}
	d.startFPDU(mk, crc)
}

// inferCRC decides CRC use for inferNegotiation: on when the MPA frame
// captured asked for it (CRC is used when either side sets C, RFC 5044
// §7.1) or is RDMAC (rev 0: always on), else when the CRC32c of one of the
// first FPDUs validates, not only the first one's: a first FPDU whose CRC
// is bad must not turn CRC off for the direction.
func (d *direction) inferCRC(mk bool) bool {
	for _, m := range []*MPARecord{d.c.req, d.c.rep} {
		if m != nil && (m.Frame.C || m.Frame.Rev == 0) {
			return true
		}
	}
	g := markers.Grid{Origin: d.origin}
	s := d.bufOff
	for range 8 {
		ok, w, crcOK, _ := d.candidateAt(s, mk, g, true)
		if !ok {
			return false
		}
		if crcOK {
			return true
		}
		s += uint64(w)
	}
	return false
}

// finish is called at the end of the capture for the direction.
func (d *direction) finish() {
	d.final = true
	switch d.mode {
	case modeWaitNeg:
		if len(d.buf()) > 0 {
			d.inferNegotiation()
			d.parse()
		}
	case modeLost:
		d.resync(true)
		d.parse()
	}
	if d.mode == modeFPDU && len(d.buf()) > 0 {
		d.parse()
	}
	if d.mode == modeFPDU && len(d.buf()) > 0 {
		d.emitPartial(d.bufOff + uint64(len(d.buf())))
	}
	d.dropAll(d.bufOff + uint64(len(d.buf())))
	d.msgs.flush(d)
}

// fill sets the common fields of a record sent by this direction.
func (d *direction) fill(r *Record) {
	r.Conn = d.c.id
	r.Src = d.c.endpoint(d.side)
	r.Dst = d.c.endpoint(1 - d.side)
	r.Dir = d.c.dirOf(d.side)
}

// lenField returns the ULPDU_Length of an FPDU starting at stream offset s,
// and the wire offsets of its two octets, given the marker setting.
func (d *direction) lenAt(b []byte, s, bufOff uint64, mk bool, g markers.Grid) (ulen int, ok bool, inHole bool) {
	w0, w1 := 0, 1
	if mk {
		w0, w1 = g.WireOffset(s, 0), g.WireOffset(s, 1)
	}
	i0 := int(s-bufOff) + w0
	i1 := int(s-bufOff) + w1
	if i1 >= len(b) {
		return 0, false, false
	}
	if d.inHole(s+uint64(w0)) || d.inHole(s+uint64(w1)) {
		return 0, false, true
	}
	return int(b[i0])<<8 | int(b[i1]), true, false
}

// parseFPDU frames one FPDU at the front of the buffer.
func (d *direction) parseFPDU() bool {
	b := d.buf()
	s := d.bufOff
	ulen, ok, hole := d.lenAt(b, s, s, d.markers, d.grid)
	if hole {
		// Found as the gap is handled, which may be long after it (the
		// reassembler waits for a retransmission until the connection
		// ends): the finding is the gap's frame's, as tcp.gap is.
		frame := d.c.lastFrame
		if d.c.hint.frame != 0 {
			frame = d.c.hint.frame
		}
		at := -1 // the hole holding the length field
		for i := range d.holes {
			if d.holes[i].off <= s+2 && s < d.holes[i].end {
				at = i
				break
			}
		}
		where := " was lost in the capture gap; resynchronising"
		if at >= 0 && d.holes[at].cut {
			where = " was in the octets the snap length cut; resynchronising"
		}
		d.c.finding(nil, dissect.SeverityWarning, "mpa.sync_lost",
			"the ULPDU_Length of the FPDU at seq "+strconv.FormatUint(uint64(d.seqOf(s)), 10)+where, "RFC 5044 §4", frame)
		// Skip past it.
		if at >= 0 {
			d.consume(int(d.holes[at].end - s))
		}
		d.lose(d.bufOff)
		return true
	}
	if !ok {
		return false
	}
	plain := mpa.PlainLen(ulen)
	wire := plain
	if d.markers {
		wire = d.grid.WireLen(s, plain)
	}
	if len(b) < wire {
		return false
	}
	if !d.sawFPDU && !d.markersForced {
		retry, wait := d.firstFPDUHypotheses(s)
		if retry {
			return true
		}
		if wait {
			return false
		}
	}
	d.sawFPDU = true
	crc := crcNotComputed
	if !d.overlapsHole(s, s+uint64(wire)) && d.crc && wire >= mpa.MinFPDULen {
		crc = crcComputedBad
		if d.crcValidates(b[:wire]) {
			crc = crcComputedOK
		}
	}
	if crc != crcComputedOK && !d.overlapsHole(s, s+uint64(wire)) {
		if _, plausible := d.plausible(b[:wire], s, d.markers, d.grid); !plausible && !d.ptrSlip(b, s, wire) {
			d.c.finding(nil, dissect.SeverityWarning, "mpa.sync_lost",
				"the octets at seq "+strconv.FormatUint(uint64(d.seqOf(s)), 10)+" are not a valid FPDU header; resynchronising",
				"RFC 5044 §4", d.firstFrame(s))
			d.lose(s)
			d.consume(1)
			return true
		}
	}
	d.emitFPDU(s, b[:wire], wire, ulen, crc)
	d.consume(wire)
	return true
}

func (d *direction) firstFrame(off uint64) uint64 {
	for i := range d.prov {
		if d.prov[i].end > off {
			return d.prov[i].frame
		}
	}
	return d.c.lastFrame
}

// crcValidates reports whether CRC is in use on the direction and the FPDU's
// CRC field matches (markers inside are covered, RFC 5044 §4.1).
func (d *direction) crcValidates(wire []byte) bool {
	if !d.crc || len(wire) < mpa.MinFPDULen {
		return false
	}
	n := len(wire) - mpa.CRCLen
	return mpa.CRC32C(wire[:n]) == binary.LittleEndian.Uint32(wire[n:])
}

// emitPartial reports the FPDU in progress at the front of the buffer, whose
// octets up to gapEnd were not all captured.
func (d *direction) emitPartial(gapEnd uint64) {
	b := d.buf()
	if len(b) == 0 {
		return
	}
	s := d.bufOff
	ulen, ok, _ := d.lenAt(b, s, s, d.markers, d.grid)
	if !ok {
		return
	}
	plain := mpa.PlainLen(ulen)
	wire := plain
	if d.markers {
		wire = d.grid.WireLen(s, plain)
	}
	if wire <= len(b) {
		return
	}
	if gapEnd < s+uint64(wire) {
		gapEnd = s + uint64(wire)
	}
	d.holes = append(d.holes, hole{off: s + uint64(len(b)), end: gapEnd})
	d.emitFPDU(s, b, wire, ulen, crcNotComputed)
}

// crcState carries a CRC32c verdict parseFPDU already computed into
// emitFPDU, so that each FPDU's octets are summed once.
type crcState uint8

const (
	crcNotComputed crcState = iota
	crcComputedOK
	crcComputedBad
)

// emitFPDU builds the record of the FPDU at stream offset s whose wire
// length is wire; have holds its captured octets (all of them, or a prefix).
func (d *direction) emitFPDU(s uint64, have []byte, wire, ulen int, crc crcState) {
	c := d.c
	// One allocation for the record, its FPDU part and up to two frames.
	box := c.d.newBox()
	frames, ts, end := d.framesOf(box.frames[:0], s, s+uint64(wire))
	if len(frames) == 0 {
		frames = append(frames, c.lastFrame)
		ts, end = d.lastTS, d.lastTS
	}
	rec := &box.r
	rec.Type, rec.Frame, rec.TS = RecFPDU, frames[0], ts
	d.fill(rec)
	fr := &box.f
	fr.Seq, fr.Off, fr.Len, fr.Frames, fr.ULPDULen, fr.Pad = d.seqOf(s), s, wire, frames, uint16(ulen), mpa.PadLen(ulen)
	rec.FPDU = fr
	complete := len(have) >= wire && !d.overlapsHole(s, s+uint64(wire))
	if len(have) > wire {
		have = have[:wire]
	}

	// Strip markers and check their FPDUPTRs (RFC 5044 §5.1). When nothing
	// needs the whole ULPDU (no Payload callback), only its first octets
	// are stripped (partial): enough for the DDP and RDMAP headers and the
	// preview; the pad is read where the grid puts it, and the markers are
	// listed without a copy. Copying every octet of half the connections
	// was a twentieth of the decode.
	plain := have
	partial := false
	if d.markers {
		if pfx := 2 + rdmapMaxHdr + PreviewLen; complete && c.d.opts.Payload == nil && !c.d.fullStrip && mpa.PlainLen(ulen) > pfx {
			d.scratch, _ = d.grid.Strip(d.scratch[:0], have[:d.grid.WireOffset(s, pfx)], s, d.found[:0])
			d.found = d.grid.Scan(have, s, d.found[:0])
			partial = true
		} else {
			d.scratch, d.found = d.grid.Strip(d.scratch[:0], have, s, d.found[:0])
		}
		if len(d.found) > len(box.markers) {
			box.markers = [4]Marker{}
		}
		plain = d.scratch
		fr.Markers = box.markers[:0]
		for _, m := range d.found {
			if d.overlapsHole(m.Off, m.Off+markers.Size) {
				continue
			}
			ok := markers.CheckPtr(m, s)
			fr.Markers = append(fr.Markers, Marker{Seq: d.seqOf(m.Off), FPDUPtr: m.FPDUPtr, Rsvd: m.Rsvd, OK: ok})
			if !ok {
				c.finding(rec, dissect.SeverityError, "mpa.marker_ptr_bad",
					"marker at seq "+strconv.FormatUint(uint64(d.seqOf(m.Off)), 10)+" has FPDUPTR "+strconv.Itoa(int(m.FPDUPtr))+
						", expected "+strconv.FormatUint(m.Off-s, 10)+" (framing continues from the length field)", "RFC 5044 §5.1", rec.Frame)
			}
		}
	}
	if complete {
		fr.CRC = binary.LittleEndian.Uint32(have[wire-mpa.CRCLen:])
		switch {
		case !d.crc:
			fr.CRCStatus = d.unchecked(rec, have[:wire])
		case crc == crcComputedOK || (crc == crcNotComputed && mpa.CRC32C(have[:wire-mpa.CRCLen]) == fr.CRC):
			fr.CRCStatus = CRCOK
		default:
			fr.CRCStatus = CRCBad
			c.crcErrors++
			d.an.crcBad = rec.Frame
			c.finding(rec, dissect.SeverityError, "mpa.crc_bad",
				crcBadMsg(fr.CRC, mpa.CRC32C(have[:wire-mpa.CRCLen])),
				"RFC 5044 §4.1", rec.Frame)
		}
	} else {
		fr.CRCStatus, fr.CRC, fr.CRCCut = d.incompleteCRC(s, have, wire)
	}

	// The ULPDU: the DDP segment (RFC 5041) and its RDMAP header (RFC 5040).
	ulpdu := plain
	if len(ulpdu) > 2 {
		ulpdu = ulpdu[2:]
	} else {
		ulpdu = nil
	}
	if len(ulpdu) > ulen {
		ulpdu = ulpdu[:ulen]
	}
	hdrMissing := d.overlapsHole(s, s+uint64(d.wireOff(s, 2+rdmapMaxHdr)))
	if !complete && hdrMissing {
		// Decode what there is, but a header that runs into missing octets is not trusted.
		ulpdu = d.trimToHole(s, ulpdu)
	}
	// Decoded in place: a Segment is some 250 octets, copied twice when
	// returned by value.
	seg := &fr.Seg
	var err error
	if !complete && hdrMissing {
		// A Terminate is explained from its control word when the rest
		// of its header is missing.
		err = rdmap.DecodeCutInto(seg, ulpdu, ulen)
	} else {
		err = rdmap.DecodeInto(seg, ulpdu)
	}
	if partial && (err != nil || !seg.Opcode.DataOnly()) {
		// Anything but a data segment (a Read Request's or Terminate's
		// decode and checks look past the header) is decoded from the
		// whole ULPDU.
		partial = false
		d.scratch, _ = d.grid.Strip(d.scratch[:0], have, s, d.found[:0])
		plain = d.scratch
		ulpdu = plain[2:]
		if len(ulpdu) > ulen {
			ulpdu = ulpdu[:ulen]
		}
		err = rdmap.DecodeInto(seg, ulpdu)
	}
	if !complete && errors.Is(err, dissect.ErrTruncated) {
		fr.SegErr = err
		*seg = rdmap.Segment{}
	} else if err != nil && !errors.Is(err, dissect.ErrUnknownOpcode) {
		fr.SegErr = err
		*seg = rdmap.Segment{}
		c.finding(rec, dissect.SeverityError, "ddp.malformed", "DDP segment cannot be decoded: "+err.Error(), "RFC 5041 §4", rec.Frame)
	} else {
		fr.SegOK = true
		if err != nil { // dissect.ErrUnknownOpcode
			fr.SegErr = err
		}
		fr.PayloadLen = ulen - seg.HdrLen
		if fr.PayloadLen < 0 {
			fr.PayloadLen = 0
		}
		if complete {
			n := copy(fr.previewBuf[:], seg.Payload)
			fr.Preview = fr.previewBuf[:n]
		}
		if partial {
			// The payload's length, for Check: its octets are not read.
			seg.Payload = have[:fr.PayloadLen]
		}
		// Check sees the payload (payload after a Read Request or
		// Terminate header is a finding) and runs the Terminate's
		// Figure 10 header check itself.
		for _, f := range seg.Check(nil) {
			c.finding(rec, f.Severity, f.Code, f.Msg, f.Ref, rec.Frame)
		}
		payload := seg.Payload
		seg.Payload = nil
		if cb := c.d.opts.Payload; cb != nil && complete {
			cb(rec, payload)
		}
		dv := int(seg.DDP.DV)
		if c.ddpVersion < 0 {
			c.ddpVersion = dv
		} else if c.ddpVersion != dv {
			c.finding(rec, dissect.SeverityError, "ddp.version_mismatch",
				"DDP version "+strconv.Itoa(dv)+" differs from version "+strconv.Itoa(c.ddpVersion)+" seen before on the connection",
				"seed 000 §5.1", rec.Frame)
		}
	}
	if complete && fr.Pad > 0 {
		nonzero := false
		if partial {
			for i := 0; i < fr.Pad; i++ {
				nonzero = nonzero || have[d.grid.WireOffset(s, 2+ulen+i)] != 0
			}
		} else {
			for _, x := range plain[len(plain)-mpa.CRCLen-fr.Pad : len(plain)-mpa.CRCLen] {
				nonzero = nonzero || x != 0
			}
		}
		if nonzero {
			c.finding(rec, dissect.SeverityNote, "mpa.pad_nonzero", "pad octets are not zero", "RFC 5044 §4.1", rec.Frame)
		}
	}
	c.fpdus++
	c.octets += uint64(wire)
	if fr.SegOK {
		c.analyzeFPDU(d, rec)
	}
	c.d.push(rec)
	if fr.SegOK {
		d.msgs.add(d, rec, end)
	}
}

// rdmapMaxHdr is the longest DDP+RDMAP header (Atomic Request: 18 + 52).
const rdmapMaxHdr = 18 + 52

// wireOff maps a plain offset to a wire offset for the FPDU at s.
func (d *direction) wireOff(s uint64, plainIdx int) int {
	if d.markers {
		return d.grid.WireOffset(s, plainIdx)
	}
	return plainIdx
}

// trimToHole cuts ulpdu (plain octets from plain offset 2) before the first
// missing octet.
func (d *direction) trimToHole(s uint64, ulpdu []byte) []byte {
	for i := range ulpdu {
		if d.inHole(s + uint64(d.wireOff(s, 2+i))) {
			return ulpdu[:i]
		}
	}
	return ulpdu
}

// firstFPDUHypotheses checks the first FPDU of a direction against what the
// negotiation predicts and, when it does not validate, against the
// alternatives seen in practice: the RDMAC grid anchored at ISN+1
// (PROTOCOL.md A.6) and markers toggled (a peer that ignored the M bit, or a
// rev 0 peer that always sends markers). It reports whether the framing
// settings changed (the caller then frames again), or that more data is
// needed to decide.
func (d *direction) firstFPDUHypotheses(s uint64) (retry, wait bool) {
	ok, _, _, need := d.candidateAt(s, d.markers, d.grid, false)
	if ok || need {
		return false, false
	}
	type hyp struct {
		mk   bool
		g    markers.Grid
		code string
		msg  string
		ref  string
		sev  dissect.Severity
	}
	var hs []hyp
	if d.markers && d.synSeen && d.grid.Origin != 0 {
		hs = append(hs, hyp{true, markers.Grid{Origin: 0}, "mpa.grid_at_isn",
			"the markers follow a 512-octet grid anchored at ISN+1, not at the first FPDU octet (RDMAC-era MPA)",
			"seed 000 §4; RFC 5044 §5.1", dissect.SeverityNote})
	}
	neg := "absent"
	if d.markers {
		neg = "present"
	}
	hs = append(hs, hyp{!d.markers, markers.Grid{Origin: d.origin}, "mpa.markers_unexpected",
		"the negotiation says markers are " + neg + " in this direction, but the FPDUs only frame the other way",
		"RFC 5044 §7.1; " + interopRef, dissect.SeverityError})
	for _, h := range hs {
		ok, need := d.chainCheck(s, h.mk, h.g)
		if need {
			return false, true
		}
		if ok {
			d.markers, d.grid = h.mk, h.g
			d.c.finding(nil, h.sev, h.code, h.msg, h.ref, d.firstFrame(s))
			return true, false
		}
	}
	return false, false
}

// chainCheck reports whether the FPDUs from stream offset s frame
// consistently under a marker setting: chainLen plausible FPDUs (fewer when
// the capture ends first) and, with markers, a marker strictly inside an FPDU
// (see confirmAt). need is true when more data is required to decide.
func (d *direction) chainCheck(s uint64, mk bool, g markers.Grid) (ok, need bool) {
	chain, interior, q := 0, 0, s
	end := d.bufOff + uint64(len(d.buf()))
	for chain < chainLen || (mk && interior == 0 && chain < maxMarkerChain) {
		if q == end && d.final && chain > 0 {
			break
		}
		c, w, _, n := d.candidateAt(q, mk, g, false)
		if n {
			if d.final || len(d.buf()) >= maxHold {
				break
			}
			return false, true
		}
		if !c {
			return false, false
		}
		if mk {
			interior += g.Count(q+1, q+uint64(w))
		}
		chain++
		q += uint64(w)
	}
	return chain > 0 && (!mk || interior > 0), false
}

// fpduBox holds an FPDU record and its parts in one allocation; r must stay
// the first field (Decoder.release turns a boxed *Record back into its box).
type fpduBox struct {
	r       Record
	f       FPDURecord
	frames  [2]uint64
	markers [4]Marker
}

// hex32 writes v as 0x and eight hex digits, so that two CRCs side by side
// line up.
func hex32(v uint32) string {
	const digits = "0123456789abcdef"
	b := [10]byte{'0', 'x'}
	for i := 9; i >= 2; i-- {
		b[i] = digits[v&0xf]
		v >>= 4
	}
	return string(b[:])
}

// incompleteCRC is the CRC verdict on the FPDU at stream offset s of wire
// length wire whose octets were not all captured (have holds a prefix of
// them): its CRC field when the capture holds it, though the octets it
// covers are not all there to check it, or cut. A helper of emitFPDU's,
// so that emitFPDU's lines, to which default.pgo keys its call sites,
// stay where they were (the profile lost to moved lines cost -q -z conn
// 10 %), and not inlined: inlined, it made emitFPDU's code 5 % slower.
//
//go:noinline
func (d *direction) incompleteCRC(s uint64, have []byte, wire int) (CRCStatus, uint32, bool) {
	e := s + uint64(wire)
	if len(have) < wire || d.overlapsHole(e-mpa.CRCLen, e) {
		return CRCIncomplete, 0, true
	}
	return CRCIncomplete, binary.LittleEndian.Uint32(have[wire-mpa.CRCLen:]), false
}

package flows

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/reassembly"
)

// side identifies one endpoint of a conn: 0 = a (the source of the first
// packet seen), 1 = b.
type side int8

const noSide side = -1

type conn struct {
	d    *Decoder
	id   int
	a, b netip.AddrPort
	dirs [2]*direction // dirs[0]: a->b, dirs[1]: b->a

	initiator side // noSide until a SYN or an MPA Request says
	synSeen   bool

	// recent remembers the timestamps of the connection's last frames,
	// so that findings about an earlier frame carry its time. It is per
	// connection, never global, so that a connection decodes the same
	// whichever other connections share its Decoder (Parallel).
	recent    [connRecent]frameTS
	recentIdx int
	// hint is the time of a frame that an event about to be reported
	// carries (direction.Event), when the frame may be past recent.
	hint frameTS

	req, rep       *MPARecord
	reqFrame       uint64
	rtrFrame       uint64 // the initiator's zero-length RDMA Read sent as its RTR (RFC 6581 §4)
	rejected       bool
	crc            bool
	negotiated     bool
	closed         bool
	finSeen        [2]bool
	rstSeen        bool
	listed         bool // in Decoder.resets (settle.go)
	settled        bool // its rings of sent segments were dropped (conn.settle)
	firstFrame     uint64
	firstTS        time.Time
	lastFrame      uint64
	ddpVersion     int
	midstream      bool
	fpdus          int
	messages       int
	octets         uint64
	crcErrors      int
	findings       int
	summarised     bool
	reads          readQueue // outstanding RDMA Read Requests, oldest first, per requester side
	suppressed     int
	findingsByCode map[string]int
	force          *Force

	// What each side sent, and when the last packet came (stall.go).
	tcp      [2]tcpSide
	lastNano int64
	lastSet  bool
	// TCP's health, for the summary (stall.go): segments sent again,
	// zero windows advertised, stalls and their time.
	retrans, zeroWins, stalls uint32
	stalled                   int64
	// quietToEnd is how long the capture went on after the connection's
	// last packet, when it was still open at the end (stallToEnd).
	quietToEnd int64
	// ep is the stall episode still going on (stall.go).
	ep episode
	// connect is what the TCP handshake showed (connect.go).
	connect connectState
	// cutSegs counts the segments whose end the snap length cut
	// (TCPHealth.Cut); cutSaid: cap.snaplen was reported; keyCut: the cut
	// left less than an MPA frame's header, so only its key says iWARP;
	// keyUnseen: the cut left less than half a key at the start of a
	// direction, so nothing says whether it is iWARP (Decoder.SnapHidden).
	cutSegs   uint32
	cutSaid   bool
	keyCut    bool
	keyUnseen bool
}

// onceCodes are findings that state a fact of the connection rather than of
// one FPDU: reported on the first FPDU only.
var onceCodes = map[string]bool{
	"ddp.dv_rdmac":          true,
	"rdmap.rv_rdmac":        true,
	"mpa.pad_nonzero":       true,
	"rdmap.term_siw_layout": true,
	"cap.caplen_above_len":  true,
}

func newConn(d *Decoder, id int, a, b netip.AddrPort, frame uint64, ts time.Time) *conn {
	c := &conn{d: d, id: id, a: a, b: b, initiator: noSide, firstFrame: frame, firstTS: ts, ddpVersion: -1}
	for i := range c.dirs {
		c.dirs[i] = newDirection(c, side(i), d.opts.Reassembly)
	}
	c.applyForce()
	return c
}

// newConn returns a new connection, made from a spare one (a connection
// finished when it closed) when there is one: a capture of many short
// connections allocated some 11 KB for each, and collecting that was 40 %
// of its decode.
func (d *Decoder) newConn(id int, a, b netip.AddrPort, frame uint64, ts time.Time) *conn {
	n := len(d.spare)
	if n == 0 {
		return newConn(d, id, a, b, frame, ts)
	}
	c := d.spare[n-1]
	d.spare[n-1] = nil
	d.spare = d.spare[:n-1]
	dirs, reads, byCode := c.dirs, c.reads, c.findingsByCode
	reads.reset()
	clear(byCode)
	*c = conn{d: d, id: id, a: a, b: b, initiator: noSide, firstFrame: frame, firstTS: ts, ddpVersion: -1,
		dirs: dirs, reads: reads, findingsByCode: byCode}
	for i, dir := range c.dirs {
		dir.reset(c, side(i), d.opts.Reassembly)
	}
	c.applyForce()
	return c
}

// sideOf returns the side that sent a packet from src.
func (c *conn) sideOf(src netip.AddrPort) side {
	if src == c.a {
		return 0
	}
	return 1
}

func (c *conn) endpoint(s side) netip.AddrPort {
	if s == 0 {
		return c.a
	}
	return c.b
}

// dirOf returns the record direction for data sent by side s.
func (c *conn) dirOf(s side) Dir {
	switch {
	case c.initiator == noSide:
		return DirUnknown
	case c.initiator == s:
		return DirI2R
	default:
		return DirR2I
	}
}

func (c *conn) packet(p *capture.Packet) {
	s := c.sideOf(p.Src)
	c.watch(p, s) // stalls (stall.go)
	c.lastFrame = p.Frame
	c.recent[c.recentIdx] = frameTS{p.Frame, p.TS}
	c.recentIdx = (c.recentIdx + 1) % connRecent
	if p.Flags&capture.FlagSYN != 0 && p.Flags&capture.FlagACK == 0 && c.initiator == noSide {
		c.initiator = s
	}
	if p.Flags&capture.FlagSYN != 0 {
		c.synSeen = true
		c.dirs[s].synSeen = true
	}
	var fl reassembly.Flags
	if p.Flags&capture.FlagSYN != 0 {
		fl |= reassembly.SYN
	}
	if p.Flags&capture.FlagFIN != 0 {
		fl |= reassembly.FIN
		c.finSeen[s] = true
	}
	if p.Flags&capture.FlagRST != 0 {
		fl |= reassembly.RST
		c.rstSeen = true
	}
	if p.Flags&capture.FlagACK != 0 {
		fl |= reassembly.ACK
	}
	wire := p.PayloadWireLen
	if wire < len(p.Payload) {
		wire = len(p.Payload)
	}
	// Set field by field: a composite literal is built aside and copied,
	// and Add's first loads of the copy stalled (store-to-load forwarding).
	var seg reassembly.Segment
	seg.Seq, seg.Flags, seg.Payload, seg.Frame = reassembly.SeqNum(p.Seq), fl, p.Payload, p.Frame
	seg.TS, seg.Truncated, seg.WireLen, seg.FilePos = p.TS, wire > len(p.Payload), wire, p.PayloadPos
	dir := c.dirs[s]
	dir.lastTS = p.TS
	dir.stream.Add(&seg, dir)
	if dir.hasPending() {
		c.d.addPending(dir)
	}
	if c.rstSeen || (c.finSeen[0] && c.finSeen[1]) {
		c.closed = true
		for _, d := range c.dirs {
			d.compact()
			if c.rstSeen {
				// Reset: what the streams delivered will not be sent
				// again (a copy that comes all the same counts as
				// equal).
				d.stream.Forget()
			}
		}
	}
	// (Below the rest: default.pgo keys its inlining to the lines of the
	// call sites above.)
	if fl&reassembly.ACK != 0 && c.dirs[1-s].stream.Holding() {
		// Octets the peer acknowledged that never came: capture loss.
		c.dirs[1-s].stream.PeerAck(reassembly.SeqNum(p.Ack), c.dirs[1-s])
	}
	if c.finSeen[1-s] && fl&reassembly.ACK != 0 {
		c.dirs[1-s].stream.Acked(reassembly.SeqNum(p.Ack))
		if c.over() {
			c.d.closed(c) // summarised and dropped: c is done with
			return
		}
	}
	if c.rstSeen {
		c.afterReset(p.TS)
	}
}

// afterReset handles a packet, at ts, of a connection that was reset.
func (c *conn) afterReset(ts time.Time) {
	switch {
	case c.synSeen && !c.hadOctets():
		// Reset after its SYN and before either side sent an octet (a
		// connection refused, or aborted at once): nothing that follows
		// can belong to it, and it has no records. It is dropped now
		// rather than kept, 2.3 KB of it, to the end of the capture.
		c.d.closed(c)
	case !c.listed:
		c.d.noteReset(c, ts)
	}
}

// hadOctets reports whether either direction has had octets: delivered,
// held out of order, or known to be missing.
func (c *conn) hadOctets() bool {
	for _, d := range c.dirs {
		if d.seqKnown || d.stream.Buffered() > 0 {
			return true
		}
	}
	return false
}

// over reports whether both directions reached their FIN and saw it
// acknowledged: nothing more can come on the connection.
func (c *conn) over() bool {
	return c.finSeen[0] && c.finSeen[1] && !c.rstSeen &&
		c.dirs[0].stream.FinAcked() && c.dirs[1].stream.FinAcked()
}

// flush delivers everything buffered in both directions (end of capture or
// connection close).
func (c *conn) flush() {
	for _, dir := range c.dirs {
		dir.stream.Flush(dir)
		dir.finish()
	}
}

// finding records a connection-level finding. rec, when non-nil, is the
// record it is attached to; otherwise a standalone finding record is queued.
func (c *conn) finding(rec *Record, sev dissect.Severity, code, msg, ref string, frames ...uint64) {
	if c.findingsByCode == nil {
		c.findingsByCode = make(map[string]int)
	}
	n := c.findingsByCode[code]
	c.findingsByCode[code] = n + 1
	if n >= 1 && onceCodes[code] {
		return
	}
	if n >= c.d.opts.MaxFindingsPerCode {
		c.suppressed++
		return
	}
	c.findings++
	f := dissect.Finding{Severity: sev, Code: code, Msg: msg, Ref: ref, Frames: frames}
	if rec != nil {
		switch {
		case rec.FPDU != nil:
			rec.FPDU.Findings = append(rec.FPDU.Findings, f)
			return
		case rec.MPA != nil:
			rec.MPA.Findings = append(rec.MPA.Findings, f)
			return
		}
	}
	var frame uint64
	if len(frames) > 0 {
		frame = frames[0]
	} else {
		frame = c.lastFrame
	}
	r := mkRecord(RecFinding, frame, c.tsOf(frame))
	r.Conn = c.id
	r.Finding = &f
	c.d.push(r)
}

// tsOf returns the timestamp of a frame of this connection, as well as it is
// known (the latest timestamp seen otherwise).
func (c *conn) tsOf(frame uint64) time.Time {
	if c.hint.frame == frame && frame != 0 {
		return c.hint.ts
	}
	for i := range c.recent {
		if e := &c.recent[i]; e.frame == frame && frame != 0 {
			return e.ts
		}
	}
	for _, d := range c.dirs {
		if ts, ok := d.frameTS(frame); ok {
			return ts
		}
	}
	if c.dirs[0].lastTS.After(c.dirs[1].lastTS) {
		return c.dirs[0].lastTS
	}
	return c.dirs[1].lastTS
}

// onMPA is called by a direction that decoded an MPA Request or Reply.
func (c *conn) onMPA(dir *direction, rec *Record) {
	m := rec.MPA
	switch m.Frame.Kind {
	case mpa.KindRequest:
		if c.initiator == noSide {
			c.initiator = dir.side
		} else if c.initiator != dir.side {
			c.finding(rec, dissect.SeverityWarning, "mpa.request_from_responder",
				"MPA Request sent by the TCP passive side", "RFC 5044 §7.1", rec.Frame)
		}
		if c.req != nil {
			c.finding(rec, dissect.SeverityWarning, "mpa.duplicate_request", "second MPA Request on the connection", "RFC 5044 §7.1", rec.Frame)
			return
		}
		c.req = m
		c.reqFrame = rec.Frame
		// The Request's M bit: the initiator wants to receive markers, so
		// the responder->initiator direction carries them.
		if od := c.dirs[1-dir.side]; !od.markersForced {
			od.markersNeg = m.Frame.M
			od.markersKnown = true
		}
	case mpa.KindReply:
		if c.req == nil {
			c.finding(rec, dissect.SeverityWarning, "mpa.reply_without_request",
				"MPA Reply with no MPA Request captured before it", "RFC 5044 §7.1", rec.Frame)
		} else if c.initiator == dir.side {
			c.finding(rec, dissect.SeverityWarning, "mpa.reply_from_initiator",
				"MPA Reply sent by the side that sent the Request", "RFC 5044 §7.1", rec.Frame)
		}
		if c.rep != nil {
			c.finding(rec, dissect.SeverityWarning, "mpa.duplicate_reply", "second MPA Reply on the connection", "RFC 5044 §7.1", rec.Frame)
			return
		}
		c.rep = m
		if c.initiator == noSide {
			c.initiator = 1 - dir.side
		}
		if od := c.dirs[1-dir.side]; !od.markersForced {
			od.markersNeg = m.Frame.M
			od.markersKnown = true
		}
		if m.Frame.R {
			c.rejected = true
			sev, why := c.rejectCause(m)
			c.finding(rec, sev, "mpa.rejected",
				"the responder rejected the connection (R=1): no FPDUs follow; "+why, "RFC 5044 §7.1.1", rec.Frame)
		}
		if c.req != nil && c.req.Frame.Rev == 2 && c.req.Frame.S && !(m.Frame.Rev == 2 && m.Frame.S) && !m.Frame.R {
			c.finding(rec, dissect.SeverityError, "mpa.enhanced_not_answered",
				"the Request asked for Enhanced RDMA Connection Establishment but the Reply is not rev 2 with S set", "RFC 6581 §9", rec.Frame)
		}
	}
	if c.req != nil && c.rep != nil && !c.rejected {
		c.negotiated = true
		c.crc = c.req.Frame.C || c.rep.Frame.C
		if c.rdmacOutcome() {
			// A V=0 outcome (matrix rows 1, 3, 5): RDMAC requires markers
			// and CRC in both directions, whatever the IETF side asked.
			c.crc = true
			for _, d := range c.dirs {
				if !d.markersForced {
					d.markersNeg, d.markersKnown = true, true
				}
			}
		}
		c.checkIRDORD(rec)
		for _, d := range c.dirs {
			if !d.crcForced {
				d.crc = c.crc
			}
			d.crcKnown = true
			d.tryFrame()
		}
	}
}

// connRecent is how many frame timestamps a connection remembers.
const connRecent = 16

// summarise queues the connection's conn record.
func (c *conn) summarise() {
	if c.summarised {
		return
	}
	c.summarised = true
	if c.force != nil {
		c.forcedUnframed()
	} else if !c.isIWARP() && !c.connectFailed() {
		if c.keyUnseen {
			c.d.snapHidden++
		}
		return
	}
	c.unanswered()
	iv := c.interopVerdict()
	if c.suppressed > 0 {
		c.finding(nil, dissect.SeverityNote, "cap.findings_suppressed",
			strconv.Itoa(c.suppressed)+" further findings were not reported (more than "+
				strconv.Itoa(c.d.opts.MaxFindingsPerCode)+" of one code on this connection)", "", c.lastFrame)
	}
	s := &ConnSummary{
		A:          c.a,
		B:          c.b,
		State:      c.state(),
		Rejected:   c.rejected,
		DDPVersion: c.ddpVersion,
		Midstream:  c.midstream,
		FPDUs:      c.fpdus,
		Messages:   c.messages,
		Octets:     c.octets,
		CRCErrors:  c.crcErrors,
		Findings:   c.findings,
		TCP: TCPHealth{Retransmissions: int(c.retrans), ZeroWindows: int(c.zeroWins), Stalls: int(c.stalls),
			Stalled: time.Duration(c.stalled), Cut: int(c.cutSegs)},
		FirstFrame: c.firstFrame,
		LastFrame:  c.lastFrame,
		CRC:        c.crc,
	}
	if c.initiator != noSide {
		s.InitiatorKnown = true
		s.Initiator = c.endpoint(c.initiator)
		s.Responder = c.endpoint(1 - c.initiator)
		s.MarkersI2R = c.dirs[c.initiator].markers
		s.MarkersR2I = c.dirs[1-c.initiator].markers
	} else {
		s.MarkersI2R, s.MarkersR2I = c.dirs[0].markers, c.dirs[1].markers
	}
	if c.req != nil {
		s.HaveRequest = true
		s.Rev = c.req.Frame.Rev
	}
	if c.rep != nil {
		s.HaveReply = true
		s.Rev = c.rep.Frame.Rev
		if c.rep.HasEnhanced {
			s.Enhanced = true
			s.IRD, s.ORD = c.rep.Enhanced.IRD, c.rep.Enhanced.ORD
			s.P2P = c.rep.P2P
			s.RTR = c.rep.RTR
		}
	}
	if !c.negotiated {
		s.CRC = c.dirs[0].crc || c.dirs[1].crc
	}
	s.Interop = iv
	r := mkRecord(RecConn, c.lastFrame, c.tsOf(c.lastFrame))
	r.Conn = c.id
	r.Summary = s
	c.d.push(r)
}

// unanswered reports, as the connection ends, what was asked and never
// answered, the usual signs of a setup that failed or a peer that stalled:
// an MPA Request with no Reply (RFC 5044 §7.1) and RDMA Read Requests with
// no Read Response (RFC 5040 §5.2.1). A warning when the connection closed
// or was reset; a note when it was still open at the end of the capture,
// which may have cut the answer off. After a Terminate nothing more is
// expected: the Terminate says why (rdmap.terminate).
func (c *conn) unanswered() {
	sev := dissect.SeverityWarning
	var end string
	h := &c.connect
	switch {
	case c.rstSeen && h.rst != 0:
		end = "before " + c.endpoint(h.rstBy).String() + " reset the connection (RST, frame " + strconv.FormatUint(h.rst, 10) + ")"
	case c.rstSeen:
		end = "before the connection was reset"
	case c.finSeen[0] && c.finSeen[1] && h.fin != 0:
		end = "before the connection closed (" + c.endpoint(h.finBy).String() + " first, FIN in frame " + strconv.FormatUint(h.fin, 10) + ")"
	case c.finSeen[0] && c.finSeen[1]:
		end = "before the connection closed"
	case c.finSeen[0] || c.finSeen[1]:
		end = "before " + c.endpoint(c.finSide()).String() + " closed its side of the connection (FIN)"
	case c.quietToEnd >= int64(stallMin):
		// Not cut off by the end of the capture: it went on without an
		// answer (tcp.stall says what else was owed).
		end = "while the capture went on for " + seconds(time.Duration(c.quietToEnd)) + " after the connection's last packet"
	default:
		sev, end = dissect.SeverityNote, "by the end of the connection's packets in the capture"
	}
	if c.req != nil && c.rep == nil && c.fpdus == 0 && !c.rejected {
		c.finding(nil, sev, "mpa.no_reply",
			"the MPA Request of frame "+strconv.FormatUint(c.reqFrame, 10)+" got no MPA Reply "+end, "RFC 5044 §7.1", c.lastFrame, c.reqFrame)
	}
	live := c.reads.live()
	if len(live) == 0 || c.dirs[0].an.termFrame != 0 || c.dirs[1].an.termFrame != 0 || !c.tcp[0].nxtSet || !c.tcp[1].nxtSet {
		// (Nor when one side sent no packet the capture shows: its Read
		// Responses may be in the direction not captured.)
		return
	}
	first := live[0]
	n := strconv.Itoa(len(live)) + " RDMA Read Requests were"
	if len(live) == 1 {
		n = "an RDMA Read Request was"
	}
	c.finding(nil, sev, "rdmap.read_unanswered",
		n+" never answered "+end+": the first, frame "+strconv.FormatUint(first.frame, 10)+" from "+
			c.endpoint(first.requester).String()+", "+askedFor(first)+" into sink STag 0x"+strconv.FormatUint(uint64(first.sinkSTag), 16),
		"RFC 5040 §5.2.1", c.lastFrame, first.frame)
}

// askedFor says how many octets a Read Request asked for, if the capture
// has its size.
func askedFor(p pendingRead) string {
	if p.noSize {
		return "asked for an unknown size (the capture cut its header)"
	}
	return "asked for " + strconv.FormatUint(uint64(p.size), 10) + " octets"
}

// finSide is the side that sent a FIN (the first side if both did).
func (c *conn) finSide() side {
	if c.finSeen[0] {
		return 0
	}
	return 1
}

// forcedUnframed reports, for a connection --decode-as forced (Force),
// each direction that carried octets and never framed an FPDU with the
// settings given: without it, settings that do not fit the traffic made
// the connection vanish from the output. The connection then gets its
// conn record too, since the user said it is iWARP.
func (c *conn) forcedUnframed() {
	for s, d := range c.dirs {
		// The octets the direction carried: its stream offset past
		// the last one (scanned octets are consumed from the buffer).
		n := d.bufOff + uint64(len(d.buf()))
		if d.everLock || d.sawFPDU || n == 0 || c.req != nil || c.rep != nil {
			continue
		}
		var set []string
		if d.crcForced {
			set = append(set, "CRC "+onOff(d.crc))
		}
		if d.markersForced {
			set = append(set, "markers "+onOff(d.markersNeg))
		}
		what := "this connection"
		if len(set) > 0 {
			what = strings.Join(set, " and ") + " in this direction"
		}
		c.finding(nil, dissect.SeverityWarning, "mpa.forced_unframed",
			"--decode-as forced "+what+", but no FPDU could be framed in the "+strconv.FormatUint(n, 10)+
				" octets from "+c.endpoint(side(s)).String()+": the settings may not fit the traffic (without --decode-as the decoder guesses them)",
			"RFC 5044 §4", c.lastFrame)
	}
}

// isIWARP reports whether anything iWARP was seen on the connection.
func (c *conn) isIWARP() bool {
	return c.req != nil || c.rep != nil || c.fpdus > 0 || c.keyCut
}

// state says how far the connection got.
func (c *conn) state() string {
	switch {
	case c.connect.failed != "":
		return c.connect.failed
	case c.rejected:
		return "rejected"
	case c.fpdus > 0 && c.rstSeen:
		return "reset"
	case c.fpdus > 0 && c.finSeen[0] && c.finSeen[1]:
		return "closed"
	case c.fpdus > 0:
		return "established"
	case c.req != nil && c.rep != nil:
		return "negotiated"
	case c.req != nil:
		return "request_sent"
	}
	return "streaming"
}

package flows

import (
	"strconv"
	"strings"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect"
)

// Stalls (finding tcp.stall). An iWARP connection stalls when nothing moves
// on it for a while although something is owed: octets one side sent and
// the other has not acknowledged (RFC 9293 §3.10.7.4: the sender waits for
// its retransmission timer, RFC 6298), a zero window one side advertised
// (RFC 9293 §3.8.6.1: the peer may not send), or an RDMA Read Request not
// yet answered (RFC 5040 §4.4: the requester waits for the Read Response).
// The finding comes with the packet that ends the pause, and says how long
// it was, what was owed, and what ended it: a window opened again, new
// octets, an acknowledgement, a close or a reset; or what came without
// ending it, a retransmission (loss) or a probe, which makes the stall an
// episode (see episode).
//
// Pauses are between consecutive packets of the connection (tshark's
// tcp.time_delta), each counted once, whichever direction.

// stallMin is the shortest pause reported: Linux's minimum retransmission
// timeout (TCP_RTO_MIN), the shortest pause a lost segment costs there. A
// delayed acknowledgement waits less (Linux: at most 200 ms, 40 ms
// usually).
const stallMin = 200 * time.Millisecond

// tcpSide is what one side of a connection has sent, as far as the
// capture shows (the sequence space of RFC 9293 §3.4).
type tcpSide struct {
	nxt     uint32 // the sequence number after the last octet (SYN and FIN count) sent
	ack     uint32 // the highest acknowledgement number sent
	nxtSet  bool
	ackSet  bool
	zeroWin bool // the last segment advertised a zero window
}

// seqAfter reports whether sequence number a comes after b (RFC 9293
// §3.4, modulo 2^32).
func seqAfter(a, b uint32) bool { return int32(a-b) > 0 }

// watch looks at packet p, from side s, before the connection takes it:
// if it ends a stall, the finding says so; then p's sequence numbers,
// acknowledgement and window are noted.
func (c *conn) watch(p *capture.Packet, s side) {
	now := p.TS.UnixNano()
	if c.lastSet && now-c.lastNano >= int64(stallMin) && c.isIWARP() {
		c.stall(p, s, time.Duration(now-c.lastNano))
	} else if c.ep.open {
		c.episodeStep(p, s, now)
	}
	if !c.lastSet || now > c.lastNano {
		// (A timestamp that steps back starts no pause of its own.)
		c.lastNano, c.lastSet = now, true
	}
	t := &c.tcp[s]
	n := uint32(max(p.PayloadWireLen, len(p.Payload)))
	if p.Flags&capture.FlagSYN != 0 {
		n++
	}
	if p.Flags&capture.FlagFIN != 0 {
		n++
	}
	if n > 0 && t.nxtSet && seqAfter(t.nxt, p.Seq) && p.Flags&(capture.FlagSYN|capture.FlagRST) == 0 &&
		(n > 1 || p.Seq != t.nxt-1 || p.Flags&capture.FlagFIN != 0) {
		// Octets or a FIN sent again (TCPHealth.Retransmissions); one
		// octet just before the highest is a keep-alive or a probe.
		c.retrans++
	}
	if end := p.Seq + n; p.Flags&capture.FlagRST == 0 && (!t.nxtSet || seqAfter(end, t.nxt)) && !c.zeroWinProbe(p, s) {
		t.nxt, t.nxtSet = end, true
	}
	if p.Flags&capture.FlagACK != 0 && (!t.ackSet || seqAfter(p.Ack, t.ack)) {
		t.ack, t.ackSet = p.Ack, true
	}
	if p.Flags&(capture.FlagSYN|capture.FlagFIN|capture.FlagRST) == 0 {
		t.zeroWin = p.Window == 0
		if t.zeroWin {
			c.zeroWins++
		}
	}
	if p.Flags&capture.FlagRST != 0 && !c.rstSeen && c.isIWARP() && !(c.finSeen[0] && c.finSeen[1]) {
		c.reset(p, s)
	}
	if p.Flags&(capture.FlagSYN|capture.FlagRST|capture.FlagFIN) != 0 {
		c.handshake(p, s)
	}
	if p.CapLen > p.WireLen && c.isIWARP() {
		c.capLenAbove(p)
	}
}

// capLenAbove reports, once per connection, a record of the capture file
// that says more octets were captured than the frame had
// (cap.caplen_above_len): the file is damaged or its writer is at fault.
// The captured octets are decoded all the same, as tshark does.
func (c *conn) capLenAbove(p *capture.Packet) {
	f := strconv.FormatUint(p.Frame, 10)
	c.hint = frameTS{p.Frame, p.TS} // not in recent yet
	c.finding(nil, dissect.SeverityWarning, "cap.caplen_above_len",
		"the capture file's record of frame "+f+" says "+strconv.Itoa(p.CapLen)+" octets were captured of a frame "+
			strconv.Itoa(p.WireLen)+" octets long: the file is damaged, or the tool that wrote it is at fault. The "+
			strconv.Itoa(p.CapLen)+" captured octets are decoded, as tshark does; tshark -Y frame.len_lt_caplen lists every such frame",
		"draft-ietf-opsawg-pcap (Packet Record)", p.Frame)
}

// reset reports the reset (RST) of packet p, from side s, that aborts an
// iWARP connection (RFC 9293 §3.10.7): who reset it, and what was owed
// then, lost with it. A warning when something was owed; a note when
// nothing was (an abortive close), or after a Terminate or an MPA reject,
// which say why.
func (c *conn) reset(p *capture.Packet, s side) {
	who := c.endpoint(s).String()
	sev, msg := dissect.SeverityWarning, who+" reset the connection (RST)"
	owed := c.owed()
	if c.req != nil && c.rep == nil && !c.rejected {
		owed = append(owed, "the MPA Request of frame "+strconv.FormatUint(c.reqFrame, 10)+" unanswered")
	}
	switch term := min(c.dirs[0].an.termFrame-1, c.dirs[1].an.termFrame-1) + 1; {
	case term != 0:
		sev, msg = dissect.SeverityNote, msg+" after the Terminate of frame "+strconv.FormatUint(term, 10)
	case c.rejected:
		sev, msg = dissect.SeverityNote, msg+" after the MPA Reply rejected it"
	case len(owed) == 0:
		sev, msg = dissect.SeverityNote, msg+" with nothing owed: an abortive close"
	}
	if len(owed) > 0 {
		msg += " while " + strings.Join(owed, ", ")
	}
	c.hint = frameTS{p.Frame, p.TS} // not in recent yet
	c.finding(nil, sev, "tcp.reset", msg, "RFC 9293 §3.10.7.1", p.Frame)
}

// unacked returns how many octets side s sent that the peer has not
// acknowledged (0 when the capture does not show both).
func (c *conn) unacked(s side) uint32 {
	t, peer := &c.tcp[s], &c.tcp[1-s]
	if !t.nxtSet || !peer.ackSet || !seqAfter(t.nxt, peer.ack) {
		return 0
	}
	return t.nxt - peer.ack
}

// An episode is a stall that the packet ending its first pause did not
// end: a retransmission, a window probe or a segment that carried nothing
// new (progress says what does). Its later pauses, an RTO backing off or a
// zero window probed again and again, belong to it: rather than a finding
// each, the episode gets one more at its end, with its whole length, the
// packets sent in vain, and what ended it (or that nothing did by the end
// of the capture).
type episode struct {
	open   bool
	frame  uint64 // the frame of its first tcp.stall finding
	start  int64  // Unix nanoseconds of the packet before its first pause
	before uint64 // that packet's frame
	pauses int    // its pauses of stallMin or more
	resent int    // retransmissions during it
	probes int    // window probes and segments that carried nothing new
}

// stall reports the pause of length gap that packet p, from side s, ends,
// if something was owed during it.
func (c *conn) stall(p *capture.Packet, s side, gap time.Duration) {
	owed := c.owed()
	if len(owed) == 0 {
		if c.ep.open {
			c.endEpisode(p, s, p.TS.UnixNano())
		}
		return // nothing owed: the applications were idle
	}
	c.stalled += int64(gap)
	progress := c.progress(p, s)
	if c.ep.open {
		c.ep.pauses++
		c.episodeStep(p, s, p.TS.UnixNano())
		return
	}
	c.stalls++
	c.hint = frameTS{p.Frame, p.TS} // not in recent yet
	msg := "no packet for " + seconds(gap) + " while " + strings.Join(owed, ", ") + "; " + c.stallEnd(p, s)
	c.finding(nil, dissect.SeverityWarning, "tcp.stall", msg, "RFC 6298 §5; RFC 9293 §3.8.6.1; RFC 5040 §4.4", p.Frame, c.lastFrame)
	if !progress {
		c.ep = episode{open: true, frame: p.Frame, start: c.lastNano, before: c.lastFrame, pauses: 1}
		c.ep.count(c, p, s)
	}
}

// episodeStep takes packet p, from side s, at now (Unix nanoseconds), in
// the stall episode going on: the end of it, or one more packet in vain.
func (c *conn) episodeStep(p *capture.Packet, s side, now int64) {
	if c.progress(p, s) {
		c.endEpisode(p, s, now)
	} else {
		c.ep.count(c, p, s)
	}
}

// count notes packet p, from side s, which made no progress, in the
// episode: a retransmission, or a window probe or duplicate
// acknowledgement.
func (e *episode) count(c *conn, p *capture.Packet, s side) {
	if max(p.PayloadWireLen, len(p.Payload)) > 0 && c.tcp[s].nxtSet && seqAfter(c.tcp[s].nxt, p.Seq) {
		e.resent++
	} else {
		e.probes++
	}
}

// progress reports whether packet p, from side s, moves the connection on
// (RFC 9293 §3.10.7.4): new octets, an acknowledgement of octets not yet
// acknowledged, a window opened again, a close or a reset. A
// retransmission, a window probe or a duplicate acknowledgement does not.
func (c *conn) progress(p *capture.Packet, s side) bool {
	t := &c.tcp[s]
	if p.Flags&(capture.FlagFIN|capture.FlagRST) != 0 {
		return true
	}
	if n := uint32(max(p.PayloadWireLen, len(p.Payload))); n > 0 && (!t.nxtSet || seqAfter(p.Seq+n, t.nxt)) && !c.zeroWinProbe(p, s) {
		return true
	}
	if p.Flags&capture.FlagACK != 0 && t.ackSet && seqAfter(p.Ack, t.ack) {
		return true
	}
	return t.zeroWin && p.Window > 0 && p.Flags&capture.FlagSYN == 0
}

// endEpisode closes the stall episode, which packet p, from side s, ended
// at now (Unix nanoseconds). One pause was reported when it came; more
// are reported together.
func (c *conn) endEpisode(p *capture.Packet, s side, now int64) {
	e := c.ep
	c.ep = episode{}
	if e.pauses < 2 {
		return
	}
	c.hint = frameTS{p.Frame, p.TS} // not in recent yet
	msg := e.went(now) + "; " + c.stallEnd(p, s)
	c.finding(nil, dissect.SeverityWarning, "tcp.stall", msg, "RFC 6298 §5; RFC 9293 §3.8.6.1; RFC 5040 §4.4", p.Frame, e.frame)
}

// went says how long the episode went on until now, and what was sent in
// vain meanwhile.
func (e *episode) went(now int64) string {
	msg := "the stall of frame " + strconv.FormatUint(e.frame, 10) + " went on: no progress for " + seconds(time.Duration(now-e.start)) +
		" after frame " + strconv.FormatUint(e.before, 10) + " (" + plural(e.pauses, "pause") + " of 200 ms or more"
	if e.resent > 0 {
		msg += ", " + plural(e.resent, "retransmission") + " not acknowledged"
	}
	if e.probes == 1 {
		msg += ", 1 window probe or duplicate acknowledgement"
	} else if e.probes > 1 {
		msg += ", " + strconv.Itoa(e.probes) + " window probes or duplicate acknowledgements"
	}
	return msg + ")"
}

// stallToEnd reports, as the capture ends at end (Unix nanoseconds; its
// last frame endFrame, or 0 when a live capture stopped), a connection
// whose last packet came stallMin or more before it while something was
// owed: the stall that did not end while the capture ran, the usual sign
// of a peer or a path gone dead. The finding is the connection's last
// frame's.
func (c *conn) stallToEnd(end int64, endFrame uint64) {
	if c.lastSet {
		c.quietToEnd = end - c.lastNano
	}
	e := c.ep
	c.ep = episode{}
	if !c.lastSet || !e.open && end-c.lastNano < int64(stallMin) || !c.isIWARP() || c.rstSeen {
		return
	}
	owed := c.owed()
	if len(owed) == 0 {
		return
	}
	until := "until the capture stopped"
	if endFrame != 0 {
		until = "until the end of the capture (frame " + strconv.FormatUint(endFrame, 10) + ")"
	}
	msg := "no packet for " + seconds(time.Duration(end-c.lastNano)) + " " + until + " while " + strings.Join(owed, ", ") +
		"; nothing moved again while the capture ran"
	if e.open {
		// The episode never ended: one finding for all of it.
		msg = e.went(end) + " " + until + " while " + strings.Join(owed, ", ") + "; nothing moved again while the capture ran"
	} else {
		c.stalls++
	}
	c.stalled += max(end-c.lastNano, 0)
	c.finding(nil, dissect.SeverityWarning, "tcp.stall", msg, "RFC 6298 §5; RFC 9293 §3.8.6.1; RFC 5040 §4.4", c.lastFrame)
}

// owed says what was owed on the connection as its last packet left it.
func (c *conn) owed() []string {
	var owed []string
	for _, o := range [2]side{0, 1} {
		if n := c.unacked(o); n > 0 {
			owed = append(owed, plural(int(n), "octet")+" from "+c.endpoint(o).String()+" unacknowledged")
		}
	}
	for _, o := range [2]side{0, 1} {
		if c.tcp[o].zeroWin {
			owed = append(owed, c.endpoint(o).String()+" advertising a zero window")
		}
	}
	if live := c.reads.live(); len(live) > 0 && c.tcp[0].nxtSet && c.tcp[1].nxtSet {
		// (Only when both directions are captured: in a capture of one,
		// every Read Request looks unanswered.)
		owed = append(owed, plural(len(live), "RDMA Read Request")+" unanswered (the oldest in frame "+
			strconv.FormatUint(live[0].frame, 10)+")")
	}
	return owed
}

// stallEnd says what packet p, from side s, did to end a stall.
func (c *conn) stallEnd(p *capture.Packet, s side) string {
	who := c.endpoint(s).String()
	t := &c.tcp[s]
	data := max(p.PayloadWireLen, len(p.Payload)) > 0
	switch {
	case p.Flags&capture.FlagRST != 0:
		return "it ended with a reset from " + who
	case data && t.nxtSet && seqAfter(t.nxt, p.Seq):
		return "then " + who + " sent seq " + strconv.FormatUint(uint64(p.Seq), 10) +
			" again (a retransmission: octets or their acknowledgement were lost)"
	case t.zeroWin && p.Window > 0 && p.Flags&(capture.FlagSYN|capture.FlagFIN) == 0:
		return "it ended when " + who + " opened its window again"
	case c.zeroWinProbe(p, s):
		return "then " + who + " probed the zero window (1 octet)"
	case p.Flags&capture.FlagFIN != 0:
		return "it ended when " + who + " closed its side (FIN)"
	case data:
		return "it ended when " + who + " sent new octets"
	case p.Flags&capture.FlagACK != 0 && c.unacked(1-s) > 0 && seqAfter(p.Ack, c.tcp[s].ack):
		return "it ended when " + who + " acknowledged octets"
	}
	return "then a segment from " + who + " carried nothing new"
}

// zeroWinProbe reports whether packet p, from side s, is a zero window
// probe that carries an octet (RFC 9293 §3.8.6.1): one new octet, the
// next its side has to send, while the peer's last segment advertised a
// zero window (tshark's tcp.analysis.zero_window_probe). The peer may
// not take it, and its side sends the octet again once the window
// opens: it is neither progress nor new octets, and what comes again
// after it is no retransmission. (Linux probes with no octet, one
// sequence number below.)
func (c *conn) zeroWinProbe(p *capture.Packet, s side) bool {
	t := &c.tcp[s]
	return c.tcp[1-s].zeroWin && t.nxtSet && p.Seq == t.nxt && max(p.PayloadWireLen, len(p.Payload)) == 1 &&
		p.Flags&(capture.FlagSYN|capture.FlagFIN|capture.FlagRST) == 0
}

// seconds prints a duration in seconds, to the microsecond ("1.204512 s").
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 6, 64) + " s"
}

// plural prints n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

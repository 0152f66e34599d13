package flows

import (
	"strconv"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// msgKey identifies an RDMA message being gathered in one direction
// (RFC 5041 §5): untagged segments by queue and MSN, tagged ones by STag.
type msgKey struct {
	tagged bool
	stag   uint32
	qn     uint32
	msn    uint32
}

type msgState struct {
	r       Record        // the message record, allocated with the state; first (Decoder.recycle)
	m       MessageRecord // r.Message points here
	rec     *MessageRecord
	frame   uint64
	ts      time.Time
	lastTS  time.Time // when the segments so far were complete (the latest of their last frames)
	gap     uint64    // the frame of the first capture gap after the last segment (0: none)
	gapCut  bool      // that gap was cut by the snap length
	nextOff uint64    // expected MO or TO of the next segment
}

// messages gathers the segments of RDMA messages in one direction.
type messages struct {
	open_ map[msgKey]*msgState
	// The first frame of the oldest open message, kept up to date on
	// insertion and recomputed lazily after a deletion made it stale:
	// Decoder.release asks for it after every packet.
	oldestF     uint64
	oldestOK    bool
	oldestStale bool
	// last is the message the previous segment went to, under lastK: a
	// message's segments mostly come in a row, and the map's hash of the
	// key cost more than the rest of add. del clears it.
	last  *msgState
	lastK msgKey
}

// del removes an open message, marking the cached oldest frame stale when
// it was that message's.
func (m *messages) del(k msgKey, frame uint64) {
	delete(m.open_, k)
	if m.last != nil && m.lastK == k {
		m.last = nil
	}
	if m.oldestOK && frame <= m.oldestF {
		m.oldestStale = true
	}
}

func (m *messages) open() int { return len(m.open_) }

// oldest returns the first frame of the oldest message still being gathered.
func (m *messages) oldest() (uint64, bool) {
	if len(m.open_) == 0 {
		m.oldestOK, m.oldestStale = false, false
		return 0, false
	}
	if m.oldestStale || !m.oldestOK {
		var f uint64
		ok := false
		for _, s := range m.open_ {
			if !ok || s.frame < f {
				f, ok = s.frame, true
			}
		}
		m.oldestF, m.oldestOK, m.oldestStale = f, ok, false
	}
	return m.oldestF, m.oldestOK
}

// pendingRead is an RDMA Read Request waiting for its Read Response.
type pendingRead struct {
	requester side
	sinkSTag  uint32
	size      uint32
	noSize    bool // the capture cut the request's header before its size (rdmap.Segment.HdrCut)
	noTO      bool // the same, before its Data Sink TO
	sinkTO    uint64
	frame     uint64
	ts        time.Time
	// passedBy is the first frame of a Read Response that answered a
	// later Read Request of the same requester while this one was
	// outstanding, passedReq that request's frame (0: none).
	passedBy, passedReq uint64
}

// maxPendingReads bounds the Read Requests remembered per connection.
const maxPendingReads = 1024

// readQueue holds a connection's outstanding RDMA Read Requests, oldest
// first, at most maxPendingReads: the oldest goes when a new one would
// pass that. q[head:] is live; the room of the entries taken from the
// front is reused once it is half the slice. Dropping the oldest by
// moving the 1,023 others cost 82 % of the decode of a capture of Reads
// that were never answered (one captured direction, or a dead peer).
type readQueue struct {
	q    []pendingRead
	head int
	// unmatched remembers the last Read Responses that matched no
	// request: in a capture that starts mid-stream, the direction of the
	// responses may be framed before that of their requests, whose
	// records then come later (answeredEarly).
	unmatched  [4]earlyResponse
	nUnmatched int
}

// earlyResponse is a Read Response that came before its request was seen.
type earlyResponse struct {
	responder side
	stag      uint32
	frame     uint64
}

// early notes a Read Response from responder that matched no request.
func (r *readQueue) early(responder side, stag uint32, frame uint64) {
	r.unmatched[r.nUnmatched%len(r.unmatched)] = earlyResponse{responder, stag, frame}
	r.nUnmatched++
}

// answeredEarly reports whether a Read Request from requester at frame,
// for sinkSTag, was answered by a response already seen (early), and
// forgets that response.
func (r *readQueue) answeredEarly(requester side, sinkSTag uint32, frame uint64) bool {
	for i := range min(r.nUnmatched, len(r.unmatched)) {
		e := &r.unmatched[i]
		if e.frame != 0 && e.responder != requester && e.stag == sinkSTag && e.frame >= frame {
			*e = earlyResponse{}
			return true
		}
	}
	return false
}

// answer returns the index in live of the Read Request that a Read
// Response from responder, to Data Sink STag stag at TO to, answers: the
// oldest outstanding request of the other side for that STag and TO, or
// for that STag when none has that TO (a response whose first segment
// the capture lost). Read Responses come in the order of their requests
// (RFC 5040 §5.5), but the requests found by STag alone would pair two
// Reads into one buffer at different offsets wrongly when they do not.
func (r *readQueue) answer(responder side, stag uint32, to uint64) (int, bool) {
	first := -1
	for i, pr := range r.live() {
		if pr.requester == responder || pr.sinkSTag != stag {
			continue
		}
		if pr.noTO || pr.sinkTO == to {
			return i, true
		}
		if first < 0 {
			first = i
		}
	}
	return first, first >= 0
}

// passed notes, in the requests of live entry i's requester outstanding
// before it, that a Read Response (of frame resp) answered i first.
func (r *readQueue) passed(i int, resp uint64) {
	live := r.live()
	for j := range live[:i] {
		if p := &live[j]; p.requester == live[i].requester && p.passedBy == 0 {
			p.passedBy, p.passedReq = resp, live[i].frame
		}
	}
}

// live returns the outstanding Read Requests, oldest first.
func (r *readQueue) live() []pendingRead { return r.q[r.head:] }

// push adds the newest Read Request.
func (r *readQueue) push(p pendingRead) {
	if len(r.q)-r.head >= maxPendingReads {
		r.q[r.head] = pendingRead{}
		r.head++
	}
	if r.head > 0 && len(r.q) == cap(r.q) && r.head >= len(r.q)/2 {
		n := copy(r.q, r.q[r.head:])
		clear(r.q[n:])
		r.q, r.head = r.q[:n], 0
	}
	r.q = append(r.q, p)
}

// remove takes out live entry i, keeping the order of the others: it moves
// whichever side of it is shorter.
func (r *readQueue) remove(i int) {
	live := r.q[r.head:]
	if i < len(live)/2 {
		copy(live[1:i+1], live[:i])
		r.q[r.head] = pendingRead{}
		r.head++
	} else {
		copy(live[i:], live[i+1:])
		r.q[len(r.q)-1] = pendingRead{}
		r.q = r.q[:len(r.q)-1]
	}
	if r.head == len(r.q) {
		r.q, r.head = r.q[:0], 0
	}
}

// reset empties the queue, keeping its storage.
func (r *readQueue) reset() {
	clear(r.q[:cap(r.q)])
	r.q, r.head = r.q[:0], 0
	r.unmatched, r.nUnmatched = [4]earlyResponse{}, 0
}

// add files one decoded segment; end is the time of the last frame that
// carried its octets (a Read Response completes there).
func (m *messages) add(d *direction, rec *Record, end time.Time) {
	fr := rec.FPDU
	seg := &fr.Seg
	k := msgKey{tagged: seg.DDP.T}
	off := uint64(seg.DDP.MO)
	if seg.DDP.T {
		k.stag = seg.DDP.STag
		off = seg.DDP.TO
	} else {
		k.qn, k.msn = seg.DDP.QN, seg.DDP.MSN
	}
	last := fr.Frames[len(fr.Frames)-1]
	s := m.last
	if s == nil || m.lastK != k {
		s = m.open_[k]
	}
	if s == nil {
		if len(m.open_) >= d.c.d.opts.MaxMessages {
			m.evictOldest(d)
		}
		s = d.c.d.newMsg()
		s.m = MessageRecord{
			Opcode: seg.Opcode, FirstFrame: rec.Frame, Tagged: seg.DDP.T,
			STag: seg.DDP.STag, TO: seg.DDP.TO, QN: seg.DDP.QN, MSN: seg.DDP.MSN,
		}
		s.frame, s.ts, s.nextOff = rec.Frame, rec.TS, off
		s.rec = d.firstSegment(rec, &s.m)
		if seg.DDP.L {
			// A message of one segment (most Sends): complete at
			// once. Added to the map and deleted again, it would leave
			// the map, the oldest frame and the last message as they
			// are.
			s.m.Segments, s.m.Length, s.m.LastFrame = 1, uint64(fr.PayloadLen), last
			s.lastTS = end
			s.nextOff = off + uint64(fr.PayloadLen)
			m.complete(d, s, seg)
			return
		}
		if m.open_ == nil {
			m.open_ = make(map[msgKey]*msgState)
		}
		m.open_[k] = s
		if m.oldestOK && !m.oldestStale && rec.Frame < m.oldestF {
			m.oldestF = rec.Frame
		}
	} else if off != s.nextOff {
		what := "MO"
		if seg.DDP.T {
			what = "TO"
		}
		d.c.finding(rec, dissect.SeverityWarning, "ddp.offset_discontinuity",
			"segment "+what+" does not follow the previous segment of the message", "RFC 5041 §5", rec.Frame)
	}
	m.last, m.lastK = s, k
	s.rec.Segments++
	s.rec.Length += uint64(fr.PayloadLen)
	// The latest frame of any segment, not the last segment's: a segment
	// sent again after the last one (lost before the capture point) is
	// what completed the message at the receiver.
	s.rec.LastFrame = max(s.rec.LastFrame, last)
	if end.After(s.lastTS) {
		s.lastTS = end
	}
	s.nextOff = off + uint64(fr.PayloadLen)
	if seg.DDP.L {
		m.del(k, s.frame)
		m.complete(d, s, seg)
	}
}

// complete emits a gathered message.
func (m *messages) complete(d *direction, s *msgState, seg *rdmap.Segment) {
	c := d.c
	r := &s.r
	r.Type, r.Frame, r.TS = RecMessage, s.frame, s.ts
	d.fill(r)
	r.Message = s.rec
	var matched *pendingRead
	var hit pendingRead // matched points here: no allocation per Read
	switch s.rec.Opcode {
	case rdmap.OpReadRequest:
		if !c.reads.answeredEarly(d.side, seg.Read.SinkSTag, s.frame) {
			_, to, size, _, _ := rdmap.ReadRequestKnown(seg.HdrCut)
			c.reads.push(pendingRead{requester: d.side, sinkSTag: seg.Read.SinkSTag, size: seg.Read.Size, noSize: !size,
				sinkTO: seg.Read.SinkTO, noTO: !to, frame: s.frame, ts: s.ts})
		}
	case rdmap.OpReadResponse:
		if i, ok := c.reads.answer(d.side, s.rec.STag, s.rec.TO); ok {
			pr := c.reads.live()[i]
			s.rec.RequestFrame = pr.frame
			s.rec.Latency = s.lastTS.Sub(pr.ts)
			s.rec.RTR = pr.frame == c.rtrFrame
			hit = pr
			matched = &hit
			c.reads.passed(i, s.frame)
			c.reads.remove(i)
			c.readOrder(&hit, s.frame)
		}
		if matched == nil {
			c.reads.early(d.side, s.rec.STag, s.frame)
		}
	}
	c.analyzeMessage(d, r, matched)
	c.messages++
	c.d.push(r)
}

// readOrder reports a Read Response (its first frame resp) that answers
// pr after a response to a later request of the same requester: the
// responder sends RDMA Read Responses in the order of the requests (RFC
// 5040 §5.5 rule 20; Figure 17 of its draft, seed 004). A request never
// answered says nothing: its response may be what the capture lost.
func (c *conn) readOrder(pr *pendingRead, resp uint64) {
	if pr.passedBy == 0 {
		return
	}
	c.finding(nil, dissect.SeverityWarning, "rdmap.read_response_order",
		"this Read Response answers the Read Request of frame "+strconv.FormatUint(pr.frame, 10)+
			", but the Read Response of frame "+strconv.FormatUint(pr.passedBy, 10)+" answered a later request (frame "+
			strconv.FormatUint(pr.passedReq, 10)+") before it: Read Responses come in the order of their requests",
		"RFC 5040 §5.5", resp, pr.frame, pr.passedBy)
}

// evictOldest drops the oldest open message (its last segment never came).
func (m *messages) evictOldest(d *direction) {
	var ok bool
	var kk msgKey
	var f uint64
	for k, s := range m.open_ {
		if !ok || s.frame < f {
			kk, f, ok = k, s.frame, true
		}
	}
	if ok {
		// The message's first frame may be long past the connection's
		// recent frames: its time is the message's own (conn.tsOf).
		d.c.hint = frameTS{f, m.open_[kk].ts}
		m.del(kk, f)
		d.c.finding(nil, dissect.SeverityWarning, "ddp.message_incomplete",
			"an RDMA message never got its last segment (L=1) before the gather limit", "RFC 5041 §5", f)
		d.c.hint = frameTS{}
	}
}

// flush reports messages still open at the end of the capture.
func (m *messages) flush(d *direction) {
	for len(m.open_) > 0 {
		var kk msgKey
		var f uint64
		ok := false
		for k, s := range m.open_ {
			if !ok || s.frame < f || (s.frame == f && lessKey(k, kk)) {
				kk, f, ok = k, s.frame, true
			}
		}
		st := m.open_[kk]
		d.c.hint = frameTS{f, st.ts}
		last := st.rec.LastFrame
		m.del(kk, f)
		// Say why, when the capture shows it: a gap after the message's
		// last segment lost the rest of it, or a Terminate (from either
		// side) ended the connection before it.
		term := d.c.dirs[0].an.termFrame
		if t := d.c.dirs[1].an.termFrame; t != 0 && (term == 0 || t < term) {
			term = t
		}
		switch {
		case st.gap > last:
			lost := ") were lost in the capture gap of frame "
			if st.gapCut {
				lost = ") were cut by the snap length in frame "
			}
			d.c.finding(nil, dissect.SeverityNote, "ddp.message_incomplete",
				"an RDMA message was never completed (no segment with L=1): octets after its last segment (frame "+
					strconv.FormatUint(last, 10)+lost+strconv.FormatUint(st.gap, 10),
				"RFC 5041 §5", f, st.gap)
		case term > last:
			d.c.finding(nil, dissect.SeverityNote, "ddp.message_incomplete",
				"an RDMA message was never completed (no segment with L=1): the Terminate of frame "+
					strconv.FormatUint(term, 10)+" ended the connection after its last segment (frame "+strconv.FormatUint(last, 10)+")",
				"RFC 5041 §5; RFC 5040 §5.4", f, term)
		default:
			d.c.finding(nil, dissect.SeverityNote, "ddp.message_incomplete",
				"an RDMA message was still incomplete (no segment with L=1) when the capture or connection ended", "RFC 5041 §5", f)
		}
		d.c.hint = frameTS{}
	}
}

// gapped notes a capture gap, seen at frame, in the open messages that had
// none since their last segment: it may hold the rest of them (flush).
func (m *messages) gapped(frame uint64, cut bool) {
	for _, s := range m.open_ {
		if s.gap <= s.rec.LastFrame {
			s.gap, s.gapCut = frame, cut
		}
	}
}

// firstSegment runs the checks a message's first segment in the capture
// allows, and returns m, the message it starts: for an untagged message,
// the order of its MSN on its queue (RFC 5041 §5.3), here rather than at
// the message's last segment so that a message whose last segment the
// capture lost still counts as sent; and that its first segment is at MO
// 0 (RFC 5041 §4.1: the offset into the message) when nothing of this
// direction was lost or skipped before it (d.lossy), so that the segments
// before it would have been seen.
func (d *direction) firstSegment(rec *Record, m *MessageRecord) *MessageRecord {
	if m.Tagged {
		return m
	}
	c := d.c
	st := &d.an
	last, seen := st.msn.get(m.QN)
	switch {
	case !seen:
		if m.MSN != 1 && c.req != nil && !c.midstream {
			c.finding(nil, dissect.SeverityWarning, "ddp.msn_first",
				"the first message on queue "+strconv.Itoa(int(m.QN))+" has MSN "+strconv.FormatUint(uint64(m.MSN), 10)+", not 1",
				"RFC 5041 §5.3", m.FirstFrame)
		}
	case m.MSN == last:
		c.finding(nil, dissect.SeverityWarning, "ddp.msn_duplicate",
			"MSN "+strconv.FormatUint(uint64(m.MSN), 10)+" on queue "+strconv.Itoa(int(m.QN))+" was already used", "RFC 5041 §5.3", m.FirstFrame)
	case m.MSN != last+1:
		c.finding(nil, dissect.SeverityWarning, "ddp.msn_gap",
			"MSN jumps from "+strconv.FormatUint(uint64(last), 10)+" to "+strconv.FormatUint(uint64(m.MSN), 10)+
				" on queue "+strconv.Itoa(int(m.QN))+" (messages missing or out of order)", "RFC 5041 §5.3", m.FirstFrame)
	}
	st.msn.set(m.QN, m.MSN)
	if mo := rec.FPDU.Seg.DDP.MO; mo != 0 && !d.lossy && !d.midstream && c.req != nil && !c.midstream {
		c.finding(rec, dissect.SeverityWarning, "ddp.offset_discontinuity",
			"the first segment of this message (queue "+strconv.Itoa(int(m.QN))+", MSN "+strconv.FormatUint(uint64(m.MSN), 10)+
				") is at MO "+strconv.FormatUint(uint64(mo), 10)+", not 0, and nothing this side sent before it is missing from the capture",
			"RFC 5041 §4.1, §5", rec.Frame)
	}
	return m
}

func lessKey(a, b msgKey) bool {
	if a.tagged != b.tagged {
		return !a.tagged
	}
	if a.stag != b.stag {
		return a.stag < b.stag
	}
	if a.qn != b.qn {
		return a.qn < b.qn
	}
	return a.msn < b.msn
}

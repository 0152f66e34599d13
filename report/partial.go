package report

import (
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/iwarpkit/iwarpkit/flows"
)

// Partial does, in one worker of a flows.Parallel (it is a flows.Local),
// what a Collector does with the FPDU records whose effect on the Collector
// does not depend on the order the records come in: it counts them per
// connection, direction and opcode, notes the span of their timestamps and
// adds their octets to a throughput timeline. The Collector absorbs what a
// Partial flushes (Absorb), and ends up exactly as if it had added every
// record itself, in order: the records a Partial takes never have to cross
// goroutines to be ordered. Make Partials with Collector.Local.
//
// It also counts the message records of the same connections that are not
// RDMA Read Responses answering a Request (whose latency the Collector
// keeps), under the rules below but the timeline's; and it takes their
// conn records, under the same rules, noting the summary for the
// Collector to set when it absorbs the connection: a connection's row
// does not depend on where its conn record came, and a reset connection
// that retires (flows/settle.go) need not keep its conn record, packed,
// to the end of the capture (some 120 octets each).
//
// A Partial takes an FPDU record only when its order cannot matter:
//   - it has no finding (the Collector keeps findings in order, and the
//     first message of each code);
//   - its timestamp is neither zero nor slow (see wallOf): the span of
//     fast timestamps is a minimum and a maximum;
//   - the Collector's timeline has started, unless it keeps none
//     (NoTimeline): its origin is the timestamp of the first FPDU the
//     Collector adds, which the Partial buckets against (the buckets of
//     two timelines with one origin add up; see absorb);
//   - an earlier MPA or FPDU record of its connection, at the same frame or
//     an earlier one, settles the connection (a source address and a
//     direction):
//     the Collector notes a connection's endpoints and initiator from its
//     first such records, which the Partial therefore leaves to it.
//
// A Partial is used by one goroutine; the Collector, by another.
type Partial struct {
	shared *partShared
	t0     *time.Time // the timeline's origin, once the Collector has one
	conns  map[int]*partConn
	last   *partConn // conns[lastID]: runs of one connection's FPDUs are common
	lastID int
	tl     timeline
}

// partShared is what a Collector tells its Partials: the origin of its
// timeline, or that it keeps none.
type partShared struct {
	t0         atomic.Pointer[time.Time]
	noTimeline bool // set before the Partials are made
}

// publish gives the Partials the origin of tl once it has one.
func (s *partShared) publish(tl *timeline) {
	if tl.started && s.t0.Load() == nil {
		t0 := tl.t0
		s.t0.Store(&t0)
	}
}

// partConn is what a Partial knows of one connection.
type partConn struct {
	settle  uint64 // the lowest frame of a settling record
	settled bool
	taken   partCounts
}

// partCounts is what a Partial flushes for a connection.
type partCounts struct {
	records  int
	messages int
	span     span
	fpduCounts
	// The conn record's summary (takeConn).
	hasSum, sumInit      bool
	sum                  connSum
	initiator, responder netip.AddrPort
}

// Local returns a new Partial feeding c, for flows.Parallel.SetLocal (with
// c.Absorb). Call it before the records come.
func (c *Collector) Local() flows.Local {
	if c.shared == nil {
		c.shared = &partShared{noTimeline: c.noTimeline}
		c.shared.publish(&c.tl)
	}
	return &Partial{shared: c.shared, conns: make(map[int]*partConn), lastID: -1}
}

// conn returns what p knows of connection id, creating it.
func (p *Partial) conn(id int) *partConn {
	if id == p.lastID {
		return p.last
	}
	pc := p.conns[id]
	if pc == nil {
		pc = new(partConn)
		p.conns[id] = pc
	}
	p.last, p.lastID = pc, id
	return pc
}

// Take takes r if its order cannot matter to the Collector (see Partial),
// and notes when r settles its connection.
func (p *Partial) Take(r *flows.Record) bool {
	switch r.Type {
	case flows.RecMessage:
		return p.takeMessage(r)
	case flows.RecConn:
		return p.takeConn(r)
	}
	// Only TCP connections end with a Flush: MPA and FPDU records are
	// theirs alone. Settling records of other kinds are left out, which
	// only makes a Partial take less.
	if r.Conn < 0 || (r.Type != flows.RecFPDU && r.Type != flows.RecMPA) {
		return false
	}
	pc := p.conn(r.Conn)
	if r.Type == flows.RecFPDU && r.FPDU != nil && len(r.FPDU.Findings) == 0 && pc.settled && pc.settle <= r.Frame && !r.TS.IsZero() {
		if w, slow := wallOf(&r.TS); !slow && p.started() {
			n, pl, dir, op := fpduFacts(r)
			t := &pc.taken
			t.records++
			t.span.add(&r.TS, w, false)
			t.fpdus++
			t.octets += n
			h := t.ops.counting(nil)
			h[dir][op].n++
			h[dir][op].octets += pl
			if r.FPDU.CRCStatus == flows.CRCBad {
				t.crcErrors++
			}
			if p.t0 != nil {
				p.tl.add(&r.TS, w, false, r.Dir, n)
			}
			return true
		}
	}
	// What Collector.conn needs to settle a connection.
	if r.Src.IsValid() && (r.Dir == flows.DirI2R || r.Dir == flows.DirR2I) && (!pc.settled || r.Frame < pc.settle) {
		pc.settle, pc.settled = r.Frame, true
	}
	return false
}

// takeMessage takes message record r if its order cannot matter: its
// connection is one p has settled (so a TCP connection, whose MPA or FPDU
// records p has seen; a message of an SCTP association is left alone), its
// timestamp is fast, and it is not a Read Response with a latency.
func (p *Partial) takeMessage(r *flows.Record) bool {
	pc := p.last
	if r.Conn != p.lastID {
		pc = p.conns[r.Conn]
	}
	if pc == nil || !pc.settled || pc.settle > r.Frame || r.TS.IsZero() || r.Message == nil || r.Message.RequestFrame != 0 {
		return false
	}
	w, slow := wallOf(&r.TS)
	if slow {
		return false
	}
	t := &pc.taken
	t.records++
	t.messages++
	t.span.add(&r.TS, w, false)
	return true
}

// takeConn takes conn record r under takeMessage's rules (its timestamp
// may be zero), for the Collector to note its summary when it absorbs the
// connection.
func (p *Partial) takeConn(r *flows.Record) bool {
	pc := p.conns[r.Conn]
	if pc == nil || !pc.settled || pc.settle > r.Frame || r.Summary == nil {
		return false
	}
	t := &pc.taken
	if !r.TS.IsZero() {
		w, slow := wallOf(&r.TS)
		if slow {
			return false
		}
		t.span.add(&r.TS, w, false)
	}
	t.records++
	t.hasSum = true
	// As setSummary: a summary that does not know the initiator leaves
	// the one an earlier summary gave.
	sum, init, ini, resp := summaryOf(r.Summary)
	t.sum = sum
	if init {
		t.sumInit, t.initiator, t.responder = true, ini, resp
	} else if !t.sumInit {
		t.initiator, t.responder = ini, resp // the summary's A and B
	}
	return true
}

// started reports whether the Collector's timeline has an origin, and
// starts p's timeline at it; or whether the Collector keeps none.
func (p *Partial) started() bool {
	if p.t0 != nil || p.shared.noTimeline {
		return true
	}
	t0 := p.shared.t0.Load()
	if t0 == nil {
		return false
	}
	p.t0 = t0
	p.tl = timeline{started: true, t0: *t0, width: FirstBucketWidth}
	return true
}

// Flush returns what p took of connection conn (nil: nothing) and forgets
// it; for conn -1, the timeline.
func (p *Partial) Flush(conn int) any {
	if conn < 0 {
		if len(p.tl.b) == 0 {
			return nil
		}
		tl := p.tl
		p.tl = timeline{}
		return &tl
	}
	pc := p.conns[conn]
	delete(p.conns, conn)
	if p.lastID == conn {
		p.last, p.lastID = nil, -1
	}
	if pc == nil || pc.taken.records == 0 {
		return nil
	}
	// Only the cells in use: what is flushed may wait for the end of the
	// capture (a reset connection that retired, flows/settle.go).
	pc.taken.ops.pack(nil)
	return &pc.taken
}

// Absorb adds what a Partial flushed: for connection conn (the id the
// Collector's records carry), or the timeline (conn -1); or notes that
// connection conn has ended (Ends). It must be called
// from the goroutine that calls Add, after the records of the connection
// that came before the ones the Partial took (flows.Parallel does).
func (c *Collector) Absorb(conn int, v any) {
	switch x := v.(type) {
	case *partCounts:
		cs := c.absorbConn(conn)
		c.records += x.records
		if cs.other {
			c.untracked += x.records
		}
		if c.allSpan {
			c.span.absorb(&x.span)
		}
		cs.span.absorb(&x.span)
		c.messages += x.messages
		cs.messages += x.messages
		c.allCounts.absorb(&x.fpduCounts)
		cs.fpduCounts.absorb(&x.fpduCounts, &c.opPool)
		if x.hasSum && !cs.other {
			cs.setSummary(x.sum, x.sumInit, x.initiator, x.responder)
		}
		if !cs.other {
			// The connection has ended: at most its summary and
			// findings follow (before Absorb, or after it when it
			// retired, flows.Local), so its histogram is packed now
			// if its summary has not done it yet.
			cs.ops.pack(&c.opPool)
			cs.ended = true
			c.packRow(cs)
		}
	case connEnded:
		c.ended(conn)
	case *timeline:
		c.tl.absorb(x)
	}
}

// absorbConn returns the statistics of connection id, which the Collector
// has seen (a Partial takes nothing of a connection before it settles).
func (c *Collector) absorbConn(id int) *connStats {
	if uint(id) < uint(len(c.byID)) && c.byID[id] != nil {
		return c.byID[id]
	}
	if cs := c.conns[id]; cs != nil {
		return cs
	}
	if at, ok := c.packedAt.get(id); ok {
		return c.revive(id, at)
	}
	if c.other != nil {
		return c.other
	}
	// Not reached; keep the counts anyway.
	cs := &connStats{id: id}
	c.conns[id] = cs
	return cs
}

// absorb adds the span of o, all of whose timestamps are fast (wallOf), as
// adding its first and last timestamp would.
func (s *span) absorb(o *span) {
	if !o.haveTS {
		return
	}
	f, l := o.fw.time(), o.lw.time()
	s.add(&f, o.fw, false)
	s.add(&l, o.lw, false)
}

// absorb adds the buckets of o, a timeline with the same origin. A
// timestamp's bucket at width 2w is its bucket at width w halved (merge),
// so both are brought to the wider width and added. Each width is the
// smallest that fits the latest timestamp of its timeline into MaxBuckets,
// so the wider one is the smallest that fits both: what adding o's
// timestamps one by one would give, and no more than MaxBuckets buckets.
func (t *timeline) absorb(o *timeline) {
	if !o.started || len(o.b) == 0 {
		return
	}
	if !t.started {
		t.started, t.t0, t.width = true, o.t0, o.width
	}
	for t.width < o.width {
		t.merge()
	}
	for o.width < t.width {
		o.merge()
	}
	for len(t.b) < len(o.b) {
		t.b = append(t.b, [3]uint64{})
	}
	for i, v := range o.b {
		for d := range v {
			t.b[i][d] += v[d]
		}
	}
	t.cur, t.lo, t.hi = 0, wall{}, wall{}
}

package flows

import (
	"slices"
	"time"

	"github.com/iwarpkit/iwarpkit/internal/spill"
)

// A connection reset after octets has its summary at the end of the
// capture (the JSON Lines contract writes it there), and octets that were
// in flight when it was reset (a Terminate from the other side, above
// all) still belong to it for a while. What it keeps for those is small,
// except each direction's ring of the segments it sent (dirState.recent),
// which a Terminate is matched against: 32 KiB a direction once it has
// sent 1,024 segments. A capture of connections reset one after another
// kept that for every one of them, so its memory grew with the capture.
//
// Settling bounds that by time. A packet that comes more than
// settleWindow after the last packet of a reset connection that holds no
// octets starts a new connection (retirement, below); one that holds
// octets keeps it, but finds its rings empty (conn.late). Once the
// capture has moved on twice that (Decoder.settleResets), a connection
// that holds no octets retires, so that memory holds the connections
// reset in the last minutes of the capture, not all of them.
// Output never depends on when a sweep ran: before the window ends the
// connection is whole, after it a packet finds it retired or its rings
// empty either way (the margin of a second window covers timestamps that
// step back by less than one, as sweepFinished's does). Every worker of a
// Parallel sweeps at its own packets and still prints what one Decoder
// prints.

// settleWindow is how long after a reset connection's last packet a
// Terminate is still matched against the segments sent before it: one
// Maximum Segment Lifetime, as strayWindow. Octets in flight when a
// connection is reset arrive within a round trip; TCP gives the
// endpoints of a reset connection no state to send more from (RFC 9293
// §3.10.7.4).
const settleWindow = strayWindow

// resetRef is an entry of Decoder.resets: the connection, and its id
// when it was listed (a connection's storage is reused, Decoder.newConn).
type resetRef struct {
	c  *conn
	id int
}

// lastTime returns the time of the connection's last packet.
func (c *conn) lastTime() time.Time {
	a, b := c.dirs[0].lastTS, c.dirs[1].lastTS
	if b.After(a) {
		return b
	}
	return a
}

// late handles a packet at ts on a closed connection: one that comes more
// than settleWindow after the last packet of a reset connection finds it
// settled.
func (c *conn) late(ts time.Time) {
	if c.rstSeen && !c.d.noSettle && ts.Sub(c.lastTime()) > settleWindow {
		c.settle()
	}
}

// settle drops the rings of sent segments of a reset connection. It is
// listed again if a packet comes all the same (noteReset).
func (c *conn) settle() {
	for _, dir := range c.dirs {
		dir.an.recent, dir.an.recentPos = nil, 0
	}
	c.settled, c.listed = true, false
}

// noteReset lists c, reset after octets and so kept to the end of the
// capture, to be settled; now is the time of its packet. Past
// Options.MaxResets listed (shared out among the workers of a Parallel,
// as maxEmbryos shares MaxConns), the one listed the longest ago retires
// at once (retireOldest).
func (d *Decoder) noteReset(c *conn, now time.Time) {
	c.listed = true
	if d.noSettle {
		return
	}
	d.resets = append(d.resets, resetRef{c, c.id})
	d.settleResets(now)
	for len(d.resets)-d.resetHead > max(1, d.opts.MaxResets/d.workers) {
		d.retireOldest()
	}
}

// settleResets looks at the first two connections listed: one finished
// since (Decoder.finish) is forgotten; one whose last packet came more
// than twice settleWindow before now is settled, or, if it still holds
// octets that the flush at the end of the capture would frame, listed
// again at the end. Connections are listed in the order of their resets,
// so the first that is younger ends the look. Two for each one listed
// keeps the list to about the connections reset in the last two windows
// of the capture, at a cost of O(1) a connection.
func (d *Decoder) settleResets(now time.Time) {
	for range 2 {
		if d.resetHead == len(d.resets) {
			break
		}
		r := d.resets[d.resetHead]
		c := r.c
		gone := r.gone()
		if !gone && now.Sub(c.lastTime()) <= 2*settleWindow {
			break
		}
		d.popReset()
		switch {
		case gone:
		case c.drained():
			d.retire(c)
		default:
			d.resets = append(d.resets, r)
		}
	}
}

// gone reports whether the entry's connection was finished or settled
// since it was listed.
func (r resetRef) gone() bool { return r.c.id != r.id || r.c.summarised || !r.c.listed }

// popReset drops the first entry of the list.
func (d *Decoder) popReset() {
	d.resets[d.resetHead] = resetRef{}
	d.resetHead++
	if d.resetHead >= minResetShift && d.resetHead >= len(d.resets)/2 {
		n := copy(d.resets, d.resets[d.resetHead:])
		clear(d.resets[n:])
		d.resets, d.resetHead = d.resets[:n], 0
	}
}

// retireOldest retires the connection listed the longest ago, before its
// time: a packet on its endpoints now starts a new connection, and octets
// it holds are framed now rather than at the end of the capture. That
// differs from what a capture with fewer resets prints only if a packet
// comes there within minutes of the reset, which with a storm of resets
// this size is the lesser loss: each connection kept whole takes some
// 3.5 KB, and a storm is some thousands a second.
func (d *Decoder) retireOldest() {
	r := d.resets[d.resetHead]
	d.popReset()
	if !r.gone() {
		d.retire(r.c)
	}
}

// minResetShift is the fewest forgotten entries at the head of
// Decoder.resets that are shifted out.
const minResetShift = 64

// drained reports whether neither direction holds octets: nothing that
// the flush at the end of the capture would frame.
func (c *conn) drained() bool {
	for _, dir := range c.dirs {
		if dir.parsing || len(dir.buf()) > 0 || dir.stream.Buffered() > 0 {
			return false
		}
	}
	return true
}

// A settled connection still kept some 3 KB to the end of the capture
// (its two directions, reassembly streams and message state), for its
// summary and for octets that might still come: a capture with a reset
// now and then grew with its length (25,000 resets over a day: 74 MB of
// heap, 190 MB of RSS). Now a reset connection whose endpoints have been
// quiet for more than settleWindow, and that holds no octets, is done
// with: a packet on its endpoints after that starts a new connection,
// whatever the packet (RFC 9293 §3.10.7.4: a reset connection has no
// state to send from; TIME-WAIT ends after two MSL). So its summary can
// no longer change: it retires, keeping only the records it queues at the
// end of the capture (its conn record, with the findings and records the
// end would flush), which Close queues at the connection's turn among
// the others, in order of id, as it finished it before. The output is
// the same whenever the retirement came: at a sweep (settleResets, once
// the capture has moved on twice settleWindow), or at a packet on its
// endpoints (reused).

// A retired connection queues records at Close: its conn record, packed
// into Decoder.packs (retired.go) where it can be; the others in
// Decoder.retiredRecs, which few have.
// (Its recConnEnd, the last record of a Parallel's worker or of a Decoder
// with a Local, went at once, or is dropped: see retire.)

// retirable reports whether a packet at ts on c's endpoints finds it done
// with: reset, holding no octets, and quiet for more than settleWindow.
func (c *conn) retirable(ts time.Time) bool {
	return c.rstSeen && !c.summarised && !c.d.noSettle && ts.Sub(c.lastTime()) > settleWindow && c.drained()
}

// retire finishes c, keeping the records it queues for Close.
func (d *Decoder) retire(c *conn) {
	var recs []*Record
	d.saving = &recs
	d.finish(c)
	d.saving = nil
	if d.local != nil {
		// The Local takes what it may now, and flushes the connection:
		// it counts nothing of the connection after this. The
		// connection's records queued before are offered first (a
		// worker offers its records some at a time, and those it had
		// not offered yet were taken after the flush, and lost).
		d.offerQueued()
		recs = d.takeLocal(recs, 0)
	}
	packed := false
	var end *Record // recConnEnd: a worker's, or a Decoder's with a Local
	if n := len(recs); n > 0 && recs[n-1].Type == recConnEnd {
		end = recs[n-1]
		recs[n-1] = nil
		recs = recs[:n-1]
	}
	if n := len(recs); n > 0 && packable(recs[n-1]) {
		if d.packs == nil {
			d.packs = spill.New(d.spillBudget())
		}
		r := recs[n-1]
		d.packEnc = packConn(d.packEnc[:0], r, &d.strs)
		d.packs.Add(spill.Key{A: r.Frame, B: int64(r.Conn)}, d.packEnc)
		packed = true
		recs[n-1] = nil
		recs = recs[:n-1]
	}
	if len(recs) > 0 {
		if d.retiredRecs == nil {
			d.retiredRecs = make(map[int][]*Record)
		}
		d.retiredRecs[c.id] = slices.Clip(recs)
	}
	switch {
	case end != nil && len(recs) == 0 && !packed:
		// Nothing is left for Close (a Local took the conn record:
		// report's Partial does): the connection ends here, with its
		// recConnEnd and what the Local flushed, and keeps nothing to
		// the end of the capture, nor an id in a Parallel's merge.
		d.push(end)
		end = nil
	case end != nil && end.local != nil:
		// What the Local flushed goes to the tables now, in a record of
		// its own after the connection's records so far, rather than
		// wait for Close: some 300 octets a connection. The tables'
		// counts add up the same whenever they come (report's
		// TestPartialsSameOutput).
		l := mkRecord(recLocal, end.Frame, time.Time{})
		l.Conn, l.local = c.id, end.local
		d.push(l)
	}
	// Its recConnEnd, if any, is dropped: flushed already, it would only
	// have the merge of a Parallel forget the connection's id, which the
	// end of the capture does anyway (100,000 of them queued at Close
	// took 19 MB).
	// The idle heap may point at c until it next drops the entries of
	// finished connections (idle.go): what c holds goes now.
	c.dirs = [2]*direction{}
	c.req, c.rep, c.findingsByCode, c.reads = nil, nil, nil, readQueue{}
}

// offerQueued offers a worker's Local the records it queued at packets
// before the one being decoded, which nothing changes any more (takeLocal).
// (A single Decoder has offered them already, between packets.)
func (d *Decoder) offerQueued() {
	if !d.worker || d.local == nil {
		return
	}
	k := d.offered
	for k < len(d.out) && d.out[k].pkt < d.pkt {
		k++
	}
	if k == d.offered {
		return
	}
	n := len(d.out)
	kept := d.takeLocal(d.out[:k], d.offered)
	m := copy(d.out[len(kept):], d.out[k:])
	clear(d.out[len(kept)+m : n])
	d.out = d.out[:len(kept)+m]
	d.offered = len(kept)
}

// unretire queues the records of retired connection id but its packed
// conn record, at Close.
func (d *Decoder) unretire(id int) {
	for _, rec := range d.retiredRecs[id] {
		d.push(rec)
	}
	delete(d.retiredRecs, id)
}

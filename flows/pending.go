package flows

import "math"

// The Decoder releases a record once no connection can still queue one
// for an earlier frame: the limit is the least pendingFrame of the
// directions that hold octets or messages of earlier frames. Looking at
// each of them after every packet cost O(directions): 2,000 connections
// each in the middle of a multi-segment message spent three quarters of
// the decode there.
//
// So the directions with a pending frame are kept in a min-heap keyed by
// it (Decoder.pending, direction.pendIdx). A direction's pending frame
// changes only while a packet of its connection is decoded, or when the
// connection is finished (dropPending), so after each packet the two
// directions of its connection are keyed again (repend) and the top of the
// heap is the limit a look at every direction gives.

// addPending notes that dir may hold octets or messages of earlier frames.
func (d *Decoder) addPending(dir *direction) {
	if !dir.inPending {
		d.rekey(dir)
	}
}

// dropPending forgets dir (its connection is finished).
func (d *Decoder) dropPending(dir *direction) {
	if dir.inPending {
		d.pendRemove(dir)
	}
}

// repend keys the directions of c, whose packet was just decoded, again.
func (d *Decoder) repend(c *conn) {
	if c.summarised {
		return // finished: dropPending took its directions out
	}
	for _, dir := range c.dirs {
		if dir.inPending || dir.hasPending() {
			d.rekey(dir)
		}
	}
}

// rekey puts dir in the heap under its pending frame, or takes it out when
// it has none.
func (d *Decoder) rekey(dir *direction) {
	f, ok := dir.pendingFrame()
	switch {
	case !ok:
		if dir.inPending {
			d.pendRemove(dir)
		}
	case !dir.inPending:
		dir.inPending, dir.pendKey, dir.pendIdx = true, f, len(d.pending)
		d.pending = append(d.pending, dir)
		d.pendUp(dir.pendIdx)
	case f != dir.pendKey:
		old := dir.pendKey
		dir.pendKey = f
		if f < old {
			d.pendUp(dir.pendIdx)
		} else {
			d.pendDown(dir.pendIdx)
		}
	}
}

// pendingLimit is the earliest frame whose octets a connection (or a
// non-TCP association) still holds, math.MaxUint64 when none: a record
// may still be queued for that frame.
func (d *Decoder) pendingLimit() uint64 {
	limit := uint64(math.MaxUint64)
	if len(d.pending) > 0 {
		limit = d.pending[0].pendKey
	}
	if f, ok := d.extPending(); ok && f < limit {
		limit = f
	}
	return limit
}

func (d *Decoder) pendRemove(dir *direction) {
	i, n := dir.pendIdx, len(d.pending)-1
	dir.inPending = false
	if i != n {
		d.pending[i] = d.pending[n]
		d.pending[i].pendIdx = i
	}
	d.pending[n] = nil
	d.pending = d.pending[:n]
	if i < n {
		d.pendDown(i)
		d.pendUp(i)
	}
}

func (d *Decoder) pendUp(i int) {
	h := d.pending
	for i > 0 {
		p := (i - 1) / 2
		if h[p].pendKey <= h[i].pendKey {
			break
		}
		h[p], h[i] = h[i], h[p]
		h[p].pendIdx, h[i].pendIdx = p, i
		i = p
	}
}

func (d *Decoder) pendDown(i int) {
	h := d.pending
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].pendKey < h[l].pendKey {
			m = r
		}
		if h[i].pendKey <= h[m].pendKey {
			return
		}
		h[i], h[m] = h[m], h[i]
		h[i].pendIdx, h[m].pendIdx = i, m
		i = m
	}
}

package flows

import "container/heap"

// When the connection table is full (Options.MaxConns), the connection
// idle the longest, the one whose last packet is the earliest, makes room
// for the new one (evictIdle). Finding it by looking at every connection
// made each packet that opened a connection cost the whole table: a
// capture of 100,000 unanswered SYNs (a port scan, or a client retrying
// a dead server from new ports) took 211 s with the default cap of 65,536.
//
// idleHeap finds it in O(log n). Each connection has one entry, keyed by
// the frame of its last packet when the entry was made or last fixed.
// Packets change a connection's last frame without touching the heap (the
// decode of a packet costs nothing more); an entry whose key has gone
// stale is fixed when it comes to the top, once for all the packets since,
// so that the top is always the connection a look at every one would pick
// (the earliest last frame, then the lowest id). Entries of connections
// finished since are dropped when they come to the top, and all at once
// when they are as many as the table holds.

// idleEntry is a connection in the idle heap; id tells a connection from a
// later one made from its storage (Decoder.newConn).
type idleEntry struct {
	c    *conn
	id   int
	last uint64
}

type idleHeap []idleEntry

func (h idleHeap) Len() int { return len(h) }
func (h idleHeap) Less(i, j int) bool {
	return h[i].last < h[j].last || (h[i].last == h[j].last && h[i].id < h[j].id)
}
func (h idleHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *idleHeap) Push(x any)   { *h = append(*h, x.(idleEntry)) }
func (h *idleHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = idleEntry{}
	*h = old[:len(old)-1]
	return e
}

// gone reports whether the entry's connection was finished since.
func (e *idleEntry) gone() bool { return e.c.id != e.id || e.c.summarised }

// noteOpen adds c, just opened by the packet of frame, to the idle heap.
func (d *Decoder) noteOpen(c *conn, frame uint64) {
	heap.Push(&d.idle, idleEntry{c, c.id, frame})
	if n := len(d.idle); n >= 2*len(d.conns)+minIdleSweep {
		// Drop the entries of finished connections.
		live := d.idle[:0]
		for _, e := range d.idle {
			if !e.gone() {
				e.last = e.c.lastFrame
				live = append(live, e)
			}
		}
		clear(d.idle[len(live):n])
		d.idle = live
		heap.Init(&d.idle)
	}
}

// minIdleSweep is the fewest entries of finished connections that start a
// sweep of the idle heap.
const minIdleSweep = 1024

// idlest returns the connection in the table whose last packet is the
// earliest (the lowest id among equals), or nil for an empty table.
func (d *Decoder) idlest() *conn {
	for len(d.idle) > 0 {
		e := &d.idle[0]
		switch {
		case e.gone():
			heap.Pop(&d.idle)
		case e.last != e.c.lastFrame:
			e.last = e.c.lastFrame
			heap.Fix(&d.idle, 0)
		default:
			return e.c
		}
	}
	return nil
}

package flows

import (
	"strconv"
	"unsafe"
)

// Format renders a record for a Parallel's workers (SetFormat). It appends
// r's output to dst, all of it but the connection id, and returns where in
// out the id's decimal digits go (-1: the output has none); ok false
// leaves the record to the merge's emit, unformatted, and out is then
// ignored. The id is left out because a worker's ids are its own: the
// merge numbers connections in capture order (Parallel). Empty output
// writes nothing.
type Format func(dst []byte, r *Record) (out []byte, connAt int, ok bool)

// SetFormat has every worker render its FPDU and message records itself,
// with a Format of its own (newFormat is called once per worker), and the
// merge hand each one's octets to write in place of calling emit, with
// the connection id put in. Other records, and those a Format declines,
// still go to emit, in the same order. write and emit are called from the
// merge's goroutine only, never concurrently.
//
// Why: with emit formatting every record, the merge's goroutine formatted
// alone, and every record box crossed from a worker's core to the merge's
// and back (Options.Recycle). Two workers were no faster than one at JSON
// Lines on the workload of issue 6, and slower on small messages. Now a
// worker renders its records into a buffer it hands over with the part of
// the round (arena) and reuses their boxes at once; the merge holds each
// in frame order as a small record of its own (liteRec) that points into
// the buffer, or into a copy once the buffer goes back to the worker.
// Rendering into the boxes instead, which then crossed with their octets,
// was slower still (small messages 1.5 -> 2.2 s): the cores passed twice
// the cache lines back and forth.
//
// It must be called before the first packet, and not with SetLocal.
func (p *Parallel) SetFormat(newFormat func() Format, write func([]byte)) {
	for _, w := range p.workers {
		w.format, w.crowded = newFormat(), &p.crowded
	}
	p.write = write
}

// SetKeep has the merge decide, record by record, whether the octets a
// worker's Format rendered are written: for a display filter that reads
// the connection id, which a worker does not know (the merge numbers the
// connections; filter.Staged). newTag is called once per worker, and what
// it returns before the worker's Format renders each FPDU or message
// record: a tag for the merge, and false to drop the record at once, as
// a Format that renders nothing does. keep is called by the merge before
// it writes a rendered record, with the record numbered as the merge
// numbers it (its Type, Frame, Conn and TCPStream; nothing else of it is
// set) and the tag; false drops it. Records that go to emit instead (those a
// Format declines, or that the merge gets whole while it is crowded) are
// emit's to judge. It must be called with SetFormat, before the first
// packet.
//
// A worker asks keep itself, before rendering a record, once the merge
// has numbered the record's connection (the merge publishes its
// numbering, knownIDs, and the workers run ahead of it by a few parts):
// keep must be safe to call from several goroutines at once. Rendering
// every record that passed the tag, to have the merge drop most of them,
// left -j 2 no faster than -j 1 on a filter such as conn==1.
func (p *Parallel) SetKeep(newTag func() func(r *Record) (uint64, bool), keep func(r *Record, tag uint64) bool) {
	for _, w := range p.workers {
		w.tag, w.keep, w.known = newTag(), keep, new(knownIDs)
	}
	p.keep = keep
}

// pent is a record a worker rendered (SetFormat): its octets are
// arena[off:off+n] of its pround, the connection id going at at (-1:
// none), and the rest what the merge orders it by.
type pent struct {
	frame, order uint64
	tag          uint64 // SetKeep
	conn         int
	pkt          uint32
	off, n, at   int32
	typ          RecordType
	kept         bool // SetKeep: the worker's keep kept it already
}

// liteRec is a record the merge holds for its octets alone (SetFormat):
// enc is in its worker's arena until the merge is done with the part it
// came in (keepLites), then in buf. r must stay the first field (boxLite).
type liteRec struct {
	r    Record
	enc  []byte
	buf  []byte
	at   int32
	gen  uint32 // counts the times it was written: a liteRef is stale once it changes
	tag  uint64 // SetKeep
	kept bool   // SetKeep: pent.kept
}

// liteRef is a liteRec made from a part, as it was made (gen).
type liteRef struct {
	l   *liteRec
	gen uint32
}

// partArena is the capacity a worker's rendering buffer starts with; a
// worker hands a part over once its records take that much (cut), where
// segRecords of them take some 200 KB as JSON Lines: what waits for the
// merge in rounds and spare slices held 3 MB of buffers of 256 KB (2
// workers, 500 connections open at once, JSON Lines).
const partArena = 128 << 10

// formatOut renders the FPDU and message records queued since the last
// call, d.out[w.fmtFrom:], with the worker's Format into w.arena, lists
// them in w.fmts instead of d.out, and reuses their boxes at once. It is
// called between packets every few records (cut), while the records are
// still in the core's cache, as a Local is offered them.
func (w *pworker) formatOut() {
	d := w.dec
	if w.crowded.Load() {
		// The merge holds many records: they go over as records, which
		// it packs into a few dozen octets each (heldpack.go), where
		// their rendered octets would take hundreds (2,000 connections
		// open at once, JSON Lines: 8.8 MB held in liteRecs, the peak
		// 57 -> 71 MiB).
		w.fmtFrom = len(d.out)
		return
	}
	if w.arena == nil {
		w.arena = make([]byte, 0, partArena)
	}
	keep := d.out[:w.fmtFrom]
	for _, rec := range d.out[w.fmtFrom:] {
		if (rec.Type == RecFPDU || rec.Type == RecMessage) && len(w.arena) < maxArena {
			var tag uint64
			kept := false
			if w.tag != nil {
				t, ok := w.tag(rec)
				if g, st, known := w.known.get(rec.Conn); ok && known {
					// Numbered by the merge already: judged here.
					w.stub.Type, w.stub.Frame, w.stub.Conn, w.stub.stream = rec.Type, rec.Frame, g, st
					ok = w.keep(&w.stub, t)
					kept = ok
				}
				if !ok {
					// Not written: dropped, as a Format that renders
					// nothing.
					if d.opts.Recycle {
						d.recycle(rec)
					}
					continue
				}
				tag = t
			}
			n := len(w.arena)
			out, at, ok := w.format(w.arena, rec)
			if ok && n <= len(out) && len(out) <= maxArena && (at == -1 || n <= at && at <= len(out)) {
				if len(out) > n {
					e := pent{frame: rec.Frame, order: rec.order, tag: tag, conn: rec.Conn, pkt: rec.pkt,
						off: int32(n), n: int32(len(out) - n), at: -1, typ: rec.Type, kept: kept}
					if at >= 0 {
						e.at = int32(at - n)
					}
					w.fmts = append(w.fmts, e)
				}
				w.arena = out
				if d.opts.Recycle {
					d.recycle(rec)
				}
				continue
			}
			if n <= len(out) {
				w.arena = out[:n]
			}
		}
		keep = append(keep, rec)
	}
	clear(d.out[len(keep):])
	d.out = keep
	w.fmtFrom = len(keep)
}

// maxArena bounds a part's rendered octets (pent's offsets are int32); a
// record past it goes to emit.
const maxArena = 1 << 30

// lite makes the merge's record of e, a record worker w rendered into
// arena; made lists it until keepLites.
func (p *Parallel) lite(e *pent, w int, arena []byte, made *[]liteRef) *Record {
	var l *liteRec
	if k := len(p.lites); k > 0 {
		l = p.lites[k-1]
		p.lites = p.lites[:k-1]
		*l = liteRec{buf: l.buf[:0], gen: l.gen}
	} else {
		l = &liteRec{}
	}
	l.r.Type, l.r.Frame, l.r.Conn, l.r.box = e.typ, e.frame, e.conn, boxLite
	// Records of one frame all come from one worker: its queue order
	// breaks ties, its index riding along (as merge's take does).
	l.r.order = e.order<<8 | uint64(w)
	l.enc, l.at, l.tag, l.kept = arena[e.off:e.off+e.n:e.off+e.n], e.at, e.tag, e.kept
	*made = append(*made, liteRef{l, l.gen})
	p.liveLites++
	p.maxLites = max(p.maxLites, p.liveLites)
	return &l.r
}

// keepLites copies the octets of the liteRecs made from a part and not
// written yet out of the part's arena, which goes back to its worker, and
// empties made.
func keepLites(made *[]liteRef) {
	for i, m := range *made {
		if m.l.gen == m.gen {
			m.l.buf = append(m.l.buf[:0], m.l.enc...)
			m.l.enc = m.l.buf
		}
		(*made)[i] = liteRef{}
	}
	*made = (*made)[:0]
}

// writeLite hands the octets of r, a liteRec, to write with r.Conn put in,
// and keeps the liteRec for reuse.
func (p *Parallel) writeLite(r *Record) {
	l := (*liteRec)(unsafe.Pointer(r))
	switch {
	case p.keep != nil && !l.kept && !p.keep(r, l.tag):
	case l.at < 0:
		p.write(l.enc)
	default:
		p.write(l.enc[:l.at])
		p.wbuf = strconv.AppendInt(p.wbuf[:0], int64(r.Conn), 10)
		p.write(p.wbuf)
		p.write(l.enc[l.at:])
	}
	l.gen++
	l.enc = nil
	p.liveLites--
	if len(p.lites) < maxFreeBoxes {
		p.lites = append(p.lites, l)
	}
}

package report

import (
	"encoding/binary"
	"math"
	"net/netip"
	"slices"
	"time"

	"github.com/iwarpkit/iwarpkit/internal/varpack"
)

// A finished connection's row of the tables is packed (issue 6). Up to
// MaxConns rows are kept to the end of the capture, and as connStats each
// took 448 octets of heap (with its opcode cells, more): 29 MB of the 41
// MB live at the end of a capture of 100,000 short connections under -q
// -z conn. Once a row's connection has ended (its conn record came or,
// with Partials, what one flushed for it: done), packRow writes it into
// the Collector's rows arena as varints, some 60 to 100 octets, and drops
// the connStats; a later record of the connection (findings of the end, a
// retired connection's conn record) unpacks it again (revive), and it is
// packed again into its slot if it fits. The tables read packed rows one at a time
// into a scratch connStats (eachConn). It is written by hand, with
// internal/varpack, for the same reasons as flows' packed conn records
// (flows/retired.go): the encoding lives for one run of one process, and
// a general encoder would take more room and time for the same fields. A row it cannot pack (an address with
// a zone, a slow timestamp, see wallOf) stays a connStats.

// Flags of a packed row.
const (
	rowSettled = 1 << iota
	rowInitKnown
	rowHasSum
	rowReq
	rowRep
	rowCRC
	rowMI2R
	rowMR2I
	rowEnhanced
	rowRejected
	rowEnded
	rowHaveTS
	rowOpsPacked
	rowOpsDense
	rowLat
	rowSumHaveReq
	rowSumHaveRep
	rowSumInitKnown
	rowSumFPDUs
	rowSumCRC
	rowSumMI2R
	rowSumMR2I
	rowSumEnhanced
)

// maxRowStrs bounds the Collector's table of the strings of packed rows
// (states and check families, a handful); past it they are written out.
const maxRowStrs = 256

// rowEndsShift places two bits of a packed row's flags: how its initiator
// and responder relate to its a and b.
const rowEndsShift = 23

// How a row's initiator and responder relate to its a and b.
const (
	endsZero = iota // both the zero AddrPort
	endsAB          // initiator a, responder b
	endsBA          // initiator b, responder a
	endsOwn         // written out
)

// rowFlags lists the booleans of cs with their flags.
func rowFlags(cs *connStats) [21]struct {
	bit uint64
	v   *bool
} {
	return [...]struct {
		bit uint64
		v   *bool
	}{
		{rowSettled, &cs.settled}, {rowInitKnown, &cs.initKnown}, {rowHasSum, &cs.hasSum},
		{rowReq, &cs.req}, {rowRep, &cs.rep}, {rowCRC, &cs.crc}, {rowMI2R, &cs.mI2R},
		{rowMR2I, &cs.mR2I}, {rowEnhanced, &cs.enhanced}, {rowRejected, &cs.rejected},
		{rowEnded, &cs.ended}, {rowHaveTS, &cs.haveTS}, {rowOpsPacked, &cs.ops.packed},
		{rowSumHaveReq, &cs.sum.haveReq}, {rowSumHaveRep, &cs.sum.haveRep},
		{rowSumInitKnown, &cs.sum.initKnown}, {rowSumFPDUs, &cs.sum.fpdus},
		{rowSumCRC, &cs.sum.crc}, {rowSumMI2R, &cs.sum.mI2R}, {rowSumMR2I, &cs.sum.mR2I},
		{rowSumEnhanced, &cs.sum.enhanced},
	}
}

// packable reports whether cs can be packed and unpacked to the same
// value.
func packable(cs *connStats) bool {
	return !cs.other && cs.ext == "" && cs.a.Addr().Zone() == "" && cs.b.Addr().Zone() == "" &&
		cs.initiator.Addr().Zone() == "" && cs.responder.Addr().Zone() == "" &&
		!cs.fSlow && !cs.lSlow && cs.ft == (time.Time{}) && cs.lt == (time.Time{})
}

// packRow appends cs, packable, to b.
func (c *Collector) packRowTo(b []byte, cs *connStats) []byte {
	var flags uint64
	for _, f := range rowFlags(cs) {
		if *f.v {
			flags |= f.bit
		}
	}
	if cs.ops.open != nil {
		flags |= rowOpsDense
	}
	if cs.lat != nil {
		flags |= rowLat
	}
	ends := uint64(endsOwn)
	switch {
	case cs.initiator == (netip.AddrPort{}) && cs.responder == (netip.AddrPort{}):
		ends = endsZero
	case cs.initiator == cs.a && cs.responder == cs.b:
		ends = endsAB
	case cs.initiator == cs.b && cs.responder == cs.a:
		ends = endsBA
	}
	flags |= ends << rowEndsShift
	b = binary.AppendVarint(b, int64(cs.id))
	// Fixed width: a row packed again with its conn record's flags takes
	// no more room for them (rowRoom).
	b = binary.LittleEndian.AppendUint32(b, uint32(flags))
	b = varpack.AppendAddrPort(b, cs.a)
	b = varpack.AppendAddrPort(b, cs.b)
	if ends == endsOwn {
		b = varpack.AppendAddrPort(b, cs.initiator)
		b = varpack.AppendAddrPort(b, cs.responder)
	}
	b = varpack.AppendString(b, cs.sum.state, &c.strs, maxRowStrs)
	b = append(b, cs.sum.rev, cs.rev)
	for _, v := range [...]uint16{cs.sum.ird, cs.sum.ord, cs.ird, cs.ord} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	for _, v := range [...]int{cs.messages, cs.findings, cs.sev[0], cs.sev[1], cs.sev[2], cs.sev[3], cs.fpdus, cs.crcErrors} {
		b = binary.AppendVarint(b, int64(v))
	}
	b = binary.AppendUvarint(b, cs.octets)
	tcp := &cs.sum.tcp
	for _, v := range [...]int{tcp.Retransmissions, tcp.ZeroWindows, tcp.Stalls, tcp.Cut} {
		b = binary.AppendVarint(b, int64(v))
	}
	b = binary.AppendVarint(b, int64(tcp.Stalled))
	b = binary.AppendUvarint(b, uint64(len(cs.fam)))
	for _, f := range cs.fam {
		b = varpack.AppendString(b, f.fam, &c.strs, maxRowStrs)
		for _, v := range f.n {
			b = binary.AppendVarint(b, int64(v))
		}
	}
	// The opcode cells: the dense histogram's in use, in order, or the
	// packed ones.
	var n uint64
	cs.ops.each(func(int, int, opCount) { n++ })
	b = binary.AppendUvarint(b, n)
	cs.ops.each(func(dir, op int, v opCount) {
		b = append(b, uint8(dir), uint8(op))
		b = binary.AppendUvarint(b, v.n)
		b = binary.AppendUvarint(b, v.octets)
	})
	if h := cs.lat; h != nil {
		b = binary.AppendUvarint(b, h.n)
		b = binary.AppendUvarint(b, h.zero)
		for _, v := range [...]time.Duration{h.min, h.max, h.minPos} {
			b = binary.AppendVarint(b, int64(v))
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(h.sum))
		b = binary.AppendVarint(b, int64(h.off))
		b = binary.AppendUvarint(b, uint64(len(h.counts)))
		for _, v := range h.counts {
			b = binary.AppendUvarint(b, v)
		}
	}
	b = binary.AppendVarint(b, cs.fw.sec)
	b = binary.AppendVarint(b, int64(cs.fw.nsec))
	b = binary.AppendVarint(b, cs.lw.sec-cs.fw.sec)
	b = binary.AppendVarint(b, int64(cs.lw.nsec))
	return b
}

// unpackRow reads the row packed at the front of b into cs (which it
// overwrites, reusing the room of its slices and latency histogram: cs
// must be a scratch row or one packRow dropped), taking a dense opcode
// histogram from the pool when the row had one, and returns the rest of
// b.
func (c *Collector) unpackRow(b []byte, cs *connStats) ([]byte, error) {
	r := varpack.Reader{B: b}
	fam, cells, lat := cs.fam[:0], cs.ops.cells[:0], cs.lat
	*cs = connStats{id: r.Int()}
	flags := uint64(binary.LittleEndian.Uint32(r.Bytes(4)))
	for _, f := range rowFlags(cs) {
		*f.v = flags&f.bit != 0
	}
	cs.a, cs.b = r.AddrPort(), r.AddrPort()
	switch flags >> rowEndsShift & 3 {
	case endsAB:
		cs.initiator, cs.responder = cs.a, cs.b
	case endsBA:
		cs.initiator, cs.responder = cs.b, cs.a
	case endsOwn:
		cs.initiator, cs.responder = r.AddrPort(), r.AddrPort()
	}
	cs.sum.state = r.String(c.strs)
	revs := r.Bytes(2)
	cs.sum.rev, cs.rev = revs[0], revs[1]
	cs.sum.ird, cs.sum.ord, cs.ird, cs.ord = r.Uint16(), r.Uint16(), r.Uint16(), r.Uint16()
	for _, v := range [...]*int{&cs.messages, &cs.findings, &cs.sev[0], &cs.sev[1], &cs.sev[2], &cs.sev[3], &cs.fpdus, &cs.crcErrors} {
		*v = r.Int()
	}
	cs.octets = r.Uvarint()
	tcp := &cs.sum.tcp
	for _, v := range [...]*int{&tcp.Retransmissions, &tcp.ZeroWindows, &tcp.Stalls, &tcp.Cut} {
		*v = r.Int()
	}
	tcp.Stalled = time.Duration(r.Varint())
	if n := r.Uvarint(); n > 0 && n <= uint64(len(r.B)) {
		cs.fam = slices.Grow(fam, int(n))[:n]
		for k := range cs.fam {
			f := &cs.fam[k]
			f.fam = r.String(c.strs)

			for s := range f.n {
				f.n[s] = r.Int()
			}
		}
	} else if n > 0 {
		r.Fail()
	}
	n := r.Uvarint()
	if n > uint64(len(r.B)) {
		r.Fail()
		n = 0
	}
	if flags&rowOpsDense != 0 {
		cs.ops.open = cs.ops.counting(&c.opPool)
	} else if n > 0 {
		cs.ops.cells = slices.Grow(cells, int(n))
	}
	for ; n > 0 && r.Err == nil; n-- {
		k := r.Bytes(2)
		v := opCount{r.Uvarint(), r.Uvarint()}
		dir, op := int(k[0]), int(k[1])
		if dir >= 3 || op >= nOps {
			r.Fail()
			break
		}
		if h := cs.ops.open; h != nil {
			h[dir][op] = v
		} else {
			cs.ops.cells = append(cs.ops.cells, opCell{v, uint8(dir), uint8(op)})
		}
	}
	if flags&rowLat != 0 {
		h := lat
		if h == nil {
			h = new(latHist)
		}
		counts := h.counts[:0]
		*h = latHist{n: r.Uvarint(), zero: r.Uvarint()}
		h.min, h.max, h.minPos = time.Duration(r.Varint()), time.Duration(r.Varint()), time.Duration(r.Varint())
		h.sum = math.Float64frombits(binary.LittleEndian.Uint64(r.Bytes(8)))
		h.off = r.Int()
		if n := r.Uvarint(); n > uint64(len(r.B)) {
			r.Fail()
		} else if n > 0 {
			h.counts = slices.Grow(counts, int(n))[:n]
			for i := range h.counts {
				h.counts[i] = r.Uvarint()
			}
		}
		cs.lat = h
	}
	cs.fw.sec = r.Varint()
	cs.fw.nsec = int32(r.Varint())
	cs.lw.sec = cs.fw.sec + r.Varint()
	cs.lw.nsec = int32(r.Varint())
	if r.Err != nil {
		return nil, r.Err
	}
	return r.B, nil
}

// done reports whether cs's connection has ended: its conn record came
// or, where Partials count for the Collector, what they flushed for it
// (a reset connection that retired: its conn record comes at the end of
// the capture, and revives the row for a moment).
func (c *Collector) done(cs *connStats) bool {
	return !cs.other && (cs.ended || cs.hasSum && c.shared == nil)
}

// rowSlot is where a packed row is in the rows arena: n octets at at, its
// encoding and any room left after it (never none).
type rowSlot struct{ at, n uint32 }

// rowSlots maps connection ids to the slots of their packed rows. The ids
// flows gives are dense from 0: those below maxIndexed index a slice (a
// slot of 0 octets is none), 8 octets an id, others go to a map. A map for
// all took 2.3 MB for the 65,536 rows of 100,000 connections reset.
type rowSlots struct {
	idx  []rowSlot
	more map[int]rowSlot
	n    int
}

// get returns the slot of id's packed row, if it has one.
func (t *rowSlots) get(id int) (rowSlot, bool) {
	if uint(id) < uint(len(t.idx)) {
		s := t.idx[id]
		return s, s.n != 0
	}
	s, ok := t.more[id]
	return s, ok
}

// set sets the slot of id's packed row.
func (t *rowSlots) set(id int, s rowSlot) {
	if id >= 0 && id < maxIndexed {
		if id >= len(t.idx) {
			t.idx = append(t.idx, make([]rowSlot, min(max(id+1, 2*len(t.idx), 64), maxIndexed)-len(t.idx))...)
		}
		if t.idx[id].n == 0 {
			t.n++
		}
		t.idx[id] = s
		return
	}
	if t.more == nil {
		t.more = make(map[int]rowSlot)
	}
	if _, ok := t.more[id]; !ok {
		t.n++
	}
	t.more[id] = s
}

// del drops id's slot.
func (t *rowSlots) del(id int) {
	if uint(id) < uint(len(t.idx)) {
		if t.idx[id].n != 0 {
			t.n--
			t.idx[id] = rowSlot{}
		}
		return
	}
	if _, ok := t.more[id]; ok {
		t.n--
		delete(t.more, id)
	}
}

// len returns the number of packed rows.
func (t *rowSlots) len() int { return t.n }

// each calls fn with every id that has a slot, and its slot.
func (t *rowSlots) each(fn func(id int, s rowSlot)) {
	for id, s := range t.idx {
		if s.n != 0 {
			fn(id, s)
		}
	}
	for id, s := range t.more {
		fn(id, s)
	}
}

// rowRoom is the room left after a row packed before its conn record came
// (a reset connection that retired, whose conn record comes at the end of
// the capture): packed again with it, in its slot, the row takes a few
// octets more (IRD and ORD, the state), and appending every such row anew
// grew the arena by half at the end of the capture. A connection whose TCP
// had trouble (its conn record's retransmissions, stalls and their time,
// some 5 octets more) may not fit, and is appended anew.
const rowRoom = 8

// packRow packs cs, whose connection has ended, into the rows arena if it
// can, and drops it from the live rows. A row revived for a moment (its
// conn record, findings of the end) goes back into its slot if it fits.
func (c *Collector) packRow(cs *connStats) {
	if c.keepRows || !packable(cs) {
		return
	}
	if _, dup := c.packedAt.get(cs.id); dup {
		return // not reached: a packed row is revived before it changes
	}
	c.rowEnc = c.packRowTo(c.rowEnc[:0], cs)
	enc := c.rowEnc
	var slot rowSlot
	if r := c.revived; r.ok && r.id == cs.id && len(enc) <= int(r.n) {
		copy(c.rows.Bytes(r.at, int(r.n)), enc)
		slot = r.rowSlot
		c.deadRows -= int(r.n)
	} else {
		room := 0
		if !cs.hasSum {
			room = rowRoom
		}
		at, ok := c.rows.Add(enc, room)
		if !ok {
			return
		}
		slot = rowSlot{at, uint32(len(enc) + room)}
	}
	c.revived.ok = false
	c.packedAt.set(cs.id, slot)
	c.packedSpan.mergeFast(&cs.span)
	delete(c.conns, cs.id)
	if uint(cs.id) < uint(len(c.byID)) {
		c.byID[cs.id] = nil
	}
	if h := cs.ops.open; h != nil && len(c.opPool) < maxOpPool {
		*h = opHist{}
		c.opPool = append(c.opPool, h)
	}
	if len(c.spareRows) < maxSpareRows {
		c.spareRows = append(c.spareRows, cs)
	}
}

// maxSpareRows bounds the rows packRow keeps for revive to reuse.
const maxSpareRows = 16

// revive unpacks the row of connection id, packed in slot, back into the
// live rows and returns it.
func (c *Collector) revive(id int, slot rowSlot) *connStats {
	var cs *connStats
	if n := len(c.spareRows); n > 0 {
		cs, c.spareRows = c.spareRows[n-1], c.spareRows[:n-1]
	} else {
		cs = new(connStats)
	}
	if _, err := c.unpackRow(c.rows.Bytes(slot.at, int(slot.n)), cs); err != nil || cs.id != id {
		// Not reached: the arena holds what packRow wrote.
		*cs = connStats{id: id}
	}
	c.packedAt.del(id)
	c.deadRows += int(slot.n)
	c.revived.ok, c.revived.id, c.revived.rowSlot = true, id, slot
	c.conns[id] = cs
	if uint(id) < uint(len(c.byID)) {
		c.byID[id] = cs
	}
	if c.deadRows > 1<<20 && c.deadRows > c.rows.Len()/2 {
		c.compactRows()
	}
	return cs
}

// compactRows copies the packed rows into a new arena, without the slots
// of those revived since.
func (c *Collector) compactRows() {
	type idSlot struct {
		id int
		rowSlot
	}
	slots := make([]idSlot, 0, c.packedAt.len())
	c.packedAt.each(func(id int, s rowSlot) { slots = append(slots, idSlot{id, s}) })
	slices.SortFunc(slots, func(a, b idSlot) int { return int(a.at) - int(b.at) })
	var rows varpack.Arena
	for _, s := range slots {
		at, _ := rows.Add(c.rows.Bytes(s.at, int(s.n)), 0) // fewer octets than before
		c.packedAt.set(s.id, rowSlot{at, s.n})
	}
	c.rows, c.deadRows, c.revived.ok = rows, 0, false
}

// rowCount returns the number of connections with a row of their own.
func (c *Collector) rowCount() int {
	return len(c.conns) + c.packedAt.len()
}

// eachConn calls fn with every tabulated connection by id, then "other";
// a packed row is unpacked into a scratch connStats, valid during the
// call only.
func (c *Collector) eachConn(fn func(cs *connStats)) {
	ids := make([]int, 0, c.rowCount())
	for id := range c.conns {
		ids = append(ids, id)
	}
	c.packedAt.each(func(id int, _ rowSlot) { ids = append(ids, id) })
	slices.Sort(ids)
	var scratch connStats
	for _, id := range ids {
		if cs := c.conns[id]; cs != nil {
			fn(cs)
			continue
		}
		s, _ := c.packedAt.get(id)
		if _, err := c.unpackRow(c.rows.Bytes(s.at, int(s.n)), &scratch); err != nil {
			scratch = connStats{id: id} // not reached
		}
		fn(&scratch)
		if h := scratch.ops.open; h != nil && len(c.opPool) < maxOpPool {
			// The dense histogram goes back for the next row.
			*h = opHist{}
			c.opPool = append(c.opPool, h)
		}
	}
	if c.other != nil {
		fn(c.other)
	}
}

package synth

import (
	"cmp"
	"slices"
	"sort"
	"time"
)

// capSpan is the captured part of one data segment.
type capSpan struct {
	off   uint64
	n     int // payload octets in the capture
	frame uint64
}

// dirIndex finds which frames carry which octets of one direction.
type dirIndex struct {
	spans  []capSpan  // captured data, sorted by offset then frame
	maxLen int        // longest span
	orig   []*segment // original data segments (dropped ones too), by offset
}

func buildIndex(segs []*segment, d Dir) *dirIndex {
	ix := &dirIndex{}
	for _, s := range segs {
		if s.dir != d || len(s.payload) == 0 {
			continue
		}
		if s.copyOf == nil {
			ix.orig = append(ix.orig, s)
		}
		if s.frame != 0 && s.cap > 0 {
			ix.spans = append(ix.spans, capSpan{off: s.off, n: s.cap, frame: s.frame})
			ix.maxLen = max(ix.maxLen, s.cap)
		}
	}
	slices.SortFunc(ix.spans, func(a, b capSpan) int {
		return cmp.Or(cmp.Compare(a.off, b.off), cmp.Compare(a.frame, b.frame))
	})
	slices.SortStableFunc(ix.orig, func(a, b *segment) int { return cmp.Compare(a.off, b.off) })
	return ix
}

// where reports, for the stream range [off, off+n): every captured frame
// carrying some of it (ascending), whether every octet is captured, and the
// earliest frame carrying octet off with off's position in its payload
// (frame 0 when none does).
func (ix *dirIndex) where(off uint64, n int) (frames []uint64, complete bool, first uint64, pos int) {
	end := off + uint64(n)
	lo := uint64(0)
	if off > uint64(ix.maxLen) {
		lo = off - uint64(ix.maxLen)
	}
	i := sort.Search(len(ix.spans), func(i int) bool { return ix.spans[i].off >= lo })
	type iv struct{ a, b uint64 }
	var cov []iv
	frames = []uint64{}
	for ; i < len(ix.spans) && ix.spans[i].off < end; i++ {
		sp := ix.spans[i]
		a, b := max(sp.off, off), min(sp.off+uint64(sp.n), end)
		if a >= b {
			continue
		}
		frames = append(frames, sp.frame)
		cov = append(cov, iv{a, b})
		if a == off && (first == 0 || sp.frame < first) {
			first, pos = sp.frame, int(off-sp.off)
		}
	}
	slices.Sort(frames)
	frames = slices.Compact(frames)
	slices.SortFunc(cov, func(x, y iv) int { return cmp.Compare(x.a, y.a) })
	at := off
	for _, c := range cov {
		if c.a > at {
			break
		}
		at = max(at, c.b)
	}
	return frames, at >= end, first, pos
}

// slotOf returns the slot (see segment.slot) of the original segment that
// carries stream offset off, or fallback when none does.
func (ix *dirIndex) slotOf(off uint64, fallback uint64) uint64 {
	i := sort.Search(len(ix.orig), func(i int) bool {
		s := ix.orig[i]
		return s.off+uint64(len(s.payload)) > off
	})
	if i < len(ix.orig) && ix.orig[i].off <= off {
		return ix.orig[i].slot
	}
	return fallback
}

// sortKey orders the truth records: by the frame of the first octet, then
// by position in it; records and gaps not in the capture sort just before
// the next captured frame.
type sortKey struct {
	frame uint64
	sub   int64
	conn  int
	ord   int
}

func (a sortKey) compare(b sortKey) int {
	return cmp.Or(cmp.Compare(a.frame, b.frame), cmp.Compare(a.sub, b.sub), cmp.Compare(a.conn, b.conn), cmp.Compare(a.ord, b.ord))
}

// keyed is a truth record with its place in the file.
type keyed struct {
	k sortKey
	r Record
}

// tsTable holds the timestamps of a run of consecutive frames.
type tsTable struct {
	base uint64 // frame number of ts[0] minus one
	ts   []time.Time
}

func (t *tsTable) at(f uint64) string {
	if f <= t.base || f > t.base+uint64(len(t.ts)) {
		return ""
	}
	return formatTS(t.ts[f-t.base-1])
}

// connStats are the counts a connection summary needs, kept across
// batches.
type connStats struct {
	fpdusCaptured int
	crcErrors     int
	gaps          int
	handshake     bool
}

// assembleTruth turns every connection's records into truth records in file
// order, connection summaries last.
func assembleTruth(conns []*connGen, tst *tsTable) []Record {
	var out []keyed
	endSlot := tst.base + uint64(len(tst.ts)) + 1
	for ci, g := range conns {
		out = append(out, g.truth(ci, tst, endSlot, true)...)
	}
	slices.SortStableFunc(out, func(a, b keyed) int { return a.k.compare(b.k) })
	recs := make([]Record, 0, len(out)+len(conns))
	for _, k := range out {
		recs = append(recs, k.r)
	}
	for _, g := range conns {
		recs = append(recs, g.summary())
	}
	return recs
}

// truth converts the connection's current records (and, withGaps, its
// capture holes) into keyed truth records, updating g.stats.
func (g *connGen) truth(ci int, tst *tsTable, endSlot uint64, withGaps bool) []keyed {
	var out []keyed
	ix := [2]*dirIndex{buildIndex(g.segs, I2R), buildIndex(g.segs, R2I)}
	for _, s := range g.segs {
		if s.flags&flagSYN != 0 && s.drop == keep {
			g.stats.handshake = true
		}
	}
	for _, r := range g.recs {
		frames, complete, first, pos := ix[r.dir].where(r.off, r.wireLen)
		k := sortKey{frame: first, sub: int64(pos), conn: ci, ord: r.ordinal}
		if first == 0 {
			k.frame, k.sub = ix[r.dir].slotOf(r.off, endSlot), -1
		}
		src, dst := endpoints(g.c, r.dir)
		seq := g.seqOf(r.dir, r.off)
		switch r.kind {
		case recMPA:
			t := &TruthMPA{V: 1, Type: "mpa", Frame: first, TS: tst.at(first), Conn: ci, Src: src, Dst: dst, Dir: r.dir.String(),
				Seq: seq, Off: r.off, Len: r.wireLen, Frames: frames, Captured: complete}
			truthMPAFrame(t, &r.frame)
			out = append(out, keyed{k, t})
		case recFPDU:
			t := &TruthFPDU{V: 1, Type: "fpdu", Frame: first, TS: tst.at(first), Conn: ci, Src: src, Dst: dst, Dir: r.dir.String(),
				Seq: seq, Off: r.off, Len: r.wireLen, Frames: frames, Index: r.index, PayloadLen: r.payloadLen, Captured: complete}
			t.MPA = TruthFPDUMPA{ULPDULen: r.ulpduLen, Pad: r.pad, CRC: r.crc, Markers: []TruthMarker{}}
			for _, m := range r.markers {
				t.MPA.Markers = append(t.MPA.Markers, TruthMarker{
					Seq: g.seqOf(r.dir, m.off), Off: m.off, FPDUPtr: m.fpduptr,
					OK: m.rsvd == 0 && uint64(m.fpduptr) == (m.off-r.off)&0xFFFF,
				})
			}
			switch {
			case !complete:
				t.MPA.CRCStatus = "incomplete"
			case !r.crcOn:
				t.MPA.CRCStatus = "unchecked"
			case r.corrupted:
				t.MPA.CRCStatus = "bad"
				g.stats.crcErrors++
			default:
				t.MPA.CRCStatus = "ok"
			}
			if complete {
				g.stats.fpdusCaptured++
			}
			if !r.raw {
				t.DDP = truthDDP(r.seg.DDP, false)
				t.RDMAP = truthRDMAP(&r.seg)
			}
			out = append(out, keyed{k, t})
		}
	}
	if !withGaps {
		return out
	}
	// Gaps: octets of a direction after its capture start that no captured
	// frame holds.
	gord := 0
	for _, d := range []Dir{I2R, R2I} {
		for _, gp := range g.gaps(d, ix[d]) {
			gp.Conn = ci
			gp.Seq = g.seqOf(d, gp.Off)
			gp.TS = tst.at(gp.Frame)
			out = append(out, keyed{sortKey{frame: gp.Frame, sub: -2, conn: ci, ord: gord}, &gp})
			gord++
			g.stats.gaps++
		}
	}
	return out
}

// gaps lists the holes in direction d's captured stream. The range checked
// starts at 0, or with a mid-stream start at the first captured octet, and
// ends at the end of the stream.
func (g *connGen) gaps(d Dir, ix *dirIndex) []TruthGap {
	end := g.d[d].sent
	var lo uint64
	if g.c.Impair.StartAt != nil {
		if len(ix.spans) == 0 {
			return nil
		}
		lo = ix.spans[0].off
	}
	type iv struct{ a, b uint64 }
	var cov []iv
	for _, sp := range ix.spans {
		cov = append(cov, iv{sp.off, sp.off + uint64(sp.n)})
	}
	var holes []iv
	at := lo
	for _, c := range cov {
		if c.a > at {
			holes = append(holes, iv{at, c.a})
		}
		at = max(at, c.b)
	}
	if at < end {
		holes = append(holes, iv{at, end})
	}
	var out []TruthGap
	for _, h := range holes {
		gp := TruthGap{V: 1, Type: "gap", Dir: d.String(), Off: h.a, Len: h.b - h.a, Reason: "snaplen"}
		// The segment that should have carried the hole's first octet.
		for _, s := range ix.orig {
			if s.off <= h.a && h.a < s.off+uint64(len(s.payload)) {
				if s.drop != keep {
					gp.Reason = "drop"
					gp.Frame = s.slot
				} else {
					gp.Frame = s.frame
				}
				break
			}
		}
		out = append(out, gp)
	}
	return out
}

// summary builds the connection's TruthConn from its state and g.stats.
func (g *connGen) summary() *TruthConn {
	c := g.c
	t := &TruthConn{
		V: 1, Type: "conn", Conn: g.idx,
		Initiator: addrString(c.Initiator), Responder: addrString(c.Responder),
		State: g.state, DDPVersion: g.dv, RDMAPVersion: g.rv,
		RDMAC: c.MPA == nil, Midstream: c.Impair.StartAt != nil,
		ISNI: g.d[I2R].isn, ISNR: g.d[R2I].isn,
		Messages: g.msgs, OctetsI2R: g.d[I2R].sent, OctetsR2I: g.d[R2I].sent,
	}
	t.Handshake = g.stats.handshake
	t.FPDUsCaptured, t.CRCErrors, t.Gaps = g.stats.fpdusCaptured, g.stats.crcErrors, g.stats.gaps
	t.FPDUs = g.d[I2R].nFPDU + g.d[R2I].nFPDU
	m := &TruthConnMPA{CRC: g.d[I2R].crc, MarkersI2R: g.d[I2R].markers, MarkersR2I: g.d[R2I].markers, RTR: []string{}, Rejected: g.rejected}
	if p := c.MPA; p != nil {
		m.Rev = p.Request.Rev
		if !p.NoReply {
			m.RevReply = ptr(p.Reply.Rev)
			if p.Reply.Enhanced != nil {
				e := truthEnhanced(*p.Reply.Enhanced)
				m.Enhanced = true
				m.IRD, m.ORD = ptr(e.IRD), ptr(e.ORD)
				m.P2P = e.P2P && p.Request.Enhanced != nil && p.Request.Enhanced.A
				m.RTR = e.RTR
			}
		}
	}
	t.MPA = m
	if g.d[I2R].markers {
		t.OriginI2R = ptr(g.seqOf(I2R, g.d[I2R].grid.Origin))
	}
	if g.d[R2I].markers {
		t.OriginR2I = ptr(g.seqOf(R2I, g.d[R2I].grid.Origin))
	}
	return t
}

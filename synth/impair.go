package synth

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// retransDistance is how many frames of the connection a Duplicate or
// Conflict copy trails its original by.
const retransDistance = 3

// findData returns the position in segs of the original data segment r.
func findData(segs []*segment, r SegRef) (int, error) {
	for i, s := range segs {
		if s.copyOf == nil && s.dir == r.Dir && s.dataIdx == r.Index && s.dataIdx >= 0 {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%w: no data segment %v #%d", ErrBadImpair, r.Dir, r.Index)
}

// impair applies the connection's impairments to g.segs, in this order:
// Reorder, Duplicate, Conflict, Drop, StartAt.
func (g *connGen) impair() error {
	im := &g.c.Impair
	for _, d := range im.Drop {
		if slices.Contains(im.Duplicate, d) || slices.Contains(im.Conflict, d) {
			return fmt.Errorf("%w: segment %v #%d both dropped and retransmitted", ErrBadImpair, d.Dir, d.Index)
		}
	}
	segs := g.segs
	for _, r := range im.Reorder {
		i, err := findData(segs, r)
		if err != nil {
			return err
		}
		j := i + 1
		for j < len(segs) && !(segs[j].dir == r.Dir && len(segs[j].payload) > 0) {
			j++
		}
		if j == len(segs) {
			return fmt.Errorf("%w: reorder: nothing follows segment %v #%d", ErrBadImpair, r.Dir, r.Index)
		}
		segs[i], segs[j] = segs[j], segs[i]
	}
	retrans := func(r SegRef, conflict bool) error {
		i, err := findData(segs, r)
		if err != nil {
			return err
		}
		orig := segs[i]
		cp := *orig
		cp.copyOf = orig
		cp.gap, cp.pause = gapRetrans, 0
		if conflict {
			cp.conflict = true
			cp.payload = slices.Clone(orig.payload)
			cp.payload[len(cp.payload)/2] ^= 0xFF
		}
		at := min(i+1+retransDistance, len(segs))
		segs = slices.Insert(segs, at, &cp)
		return nil
	}
	for _, r := range im.Duplicate {
		if err := retrans(r, false); err != nil {
			return err
		}
	}
	for _, r := range im.Conflict {
		if err := retrans(r, true); err != nil {
			return err
		}
	}
	for _, r := range im.Drop {
		i, err := findData(segs, r)
		if err != nil {
			return err
		}
		segs[i].drop = dropLost
	}
	if sa := im.StartAt; sa != nil {
		first := min(sa.Frame, len(segs))
		if sa.Offset > 0 {
			first = -1
			for i, s := range segs {
				if s.dir == sa.Dir && len(s.payload) > 0 && s.off <= sa.Offset && sa.Offset < s.off+uint64(len(s.payload)) {
					first = i
					break
				}
			}
			if first < 0 {
				return fmt.Errorf("%w: start at: no segment carries %v offset %d", ErrBadImpair, sa.Dir, sa.Offset)
			}
		}
		for _, s := range segs[:first] {
			s.drop = dropBefore
		}
		// A conflicting copy whose original fell before the start would
		// show octets that were never the truth: leave it out too.
		for _, s := range segs[first:] {
			if s.conflict && s.copyOf.drop != keep {
				s.drop = dropBefore
			}
		}
	}
	g.segs = segs
	return nil
}

// Pause ranges in microseconds per gap class.
var gapRange = [...][2]int{
	gapHandshake: {30, 90},
	gapBurst:     {1, 12},
	gapTurn:      {15, 120},
	gapAck:       {2, 40},
	gapClose:     {20, 200},
	gapRetrans:   {200, 600},
}

// stamper gives segments their timestamps and IP IDs, in final order,
// continuing across calls.
type stamper struct {
	tr      *rand.Rand
	t       int64 // microseconds from the scenario start
	ipid    [2]uint16
	started bool
}

// newStamper starts a connection's clock at start (microseconds from the
// scenario start) plus a seeded jitter.
func newStamper(tr *rand.Rand, start int64) *stamper {
	st := &stamper{tr: tr}
	st.t = start + int64(between(tr, 0, 50))
	st.ipid[0], st.ipid[1] = uint16(tr.Uint32()), uint16(tr.Uint32())
	return st
}

func (st *stamper) stamp(segs []*segment) {
	for _, s := range segs {
		if st.started {
			r := gapRange[s.gap]
			st.t += int64(between(st.tr, r[0], r[1]))
		}
		st.t += s.pause
		st.started = true
		s.t = st.t
		s.ipid = st.ipid[s.dir]
		st.ipid[s.dir]++
	}
}

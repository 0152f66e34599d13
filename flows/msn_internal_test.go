package flows

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/iwarpkit/iwarpkit/dissect/ddp"
)

// TestMSNTable: msnTable answers as the map it replaced, for the queues
// it keeps in its array and for any other, and reset empties it.
func TestMSNTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	qns := []uint32{0, 1, 2, 3, 4, 5, 255, 1 << 31, ^uint32(0)}
	var tab msnTable
	ref := map[uint32]uint32{}
	for i := 0; i < 10000; i++ {
		qn := qns[rng.IntN(len(qns))]
		switch rng.IntN(10) {
		case 0:
			tab.reset()
			clear(ref)
		case 1, 2, 3, 4:
			msn := rng.Uint32()
			tab.set(qn, msn)
			ref[qn] = msn
		default:
			got, ok := tab.get(qn)
			want, wok := ref[qn]
			if got != want || ok != wok {
				t.Fatalf("step %d: get(%d) = %d, %v; want %d, %v", i, qn, got, ok, want, wok)
			}
		}
	}
}

// TestRecentRing: the ring of sent segments answers find as a search of
// the last recentSegs whole headers does, in 32 octets an entry and no
// more room than recentSegs of them.
func TestRecentRing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	head := func() ddp.Header {
		if rng.IntN(2) == 0 {
			return ddp.Header{T: true, STag: rng.Uint32N(4), TO: uint64(rng.IntN(4)), QN: rng.Uint32N(3), MSN: rng.Uint32N(3)}
		}
		return ddp.Header{QN: rng.Uint32N(3), MSN: rng.Uint32N(4), MO: rng.Uint32N(3), STag: rng.Uint32N(3), TO: uint64(rng.IntN(3))}
	}
	var s dirState
	var all []ddp.Header
	for frame := uint64(1); frame <= 3000; frame++ {
		h := head()
		s.remember(&h, 0, frame)
		all = append(all, h)
		q := head()
		want := uint64(0)
		for i := max(0, len(all)-recentSegs); i < len(all); i++ {
			h := all[i]
			same := h.T == q.T && (h.T && h.STag == q.STag && h.TO == q.TO || !h.T && h.QN == q.QN && h.MSN == q.MSN && h.MO == q.MO)
			if same {
				want = uint64(i + 1)
			}
		}
		if e, ok := s.find(q, 0, false); e.frame != want || ok != (want != 0) {
			got := e.frame
			t.Fatalf("frame %d: find(%+v) = %d, %v; want %d", frame, q, got, ok, want)
		}
	}
	if c := cap(s.recent); c != recentSegs {
		t.Errorf("the ring has room for %d entries, want %d", c, recentSegs)
	}
	if n := unsafe.Sizeof(sentSeg{}); n != 32 {
		t.Errorf("an entry takes %d octets, want 32", n)
	}
}

// TestFindBySegLen: of the segments with the terminated header, the one of
// the Terminate's DDP Segment Length (M set), read as the segment's length
// or as its payload's (Linux siw's: the 14-octet tagged header less), the
// most recent without one.
func TestFindBySegLen(t *testing.T) {
	var s dirState
	h := ddp.Header{T: true, STag: 0x77, TO: 0x1000}
	for i, n := range []uint16{114, 214, 114} {
		s.remember(&h, n, uint64(8+i))
	}
	for _, c := range []struct {
		segLen uint16
		valid  bool
		want   uint64
	}{{214, true, 9}, {114, true, 10}, {214, false, 10}, {999, true, 10}, {200, true, 9}, {100, true, 10}, {200, false, 10}} {
		if e, ok := s.find(h, c.segLen, c.valid); !ok || e.frame != c.want {
			t.Errorf("find(len %d, valid %v) = %d, %v; want %d", c.segLen, c.valid, e.frame, ok, c.want)
		}
	}
}

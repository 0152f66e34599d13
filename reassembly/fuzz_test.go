package reassembly

import (
	"slices"
	"strings"
	"testing"
)

type fuzzSeed struct {
	isn uint32
	ops []byte
}

// op encodes one operation for decodeOps: flags, offset from the ISN (+64),
// payload length and cut.
func op(flags byte, rel int, n, cut byte) []byte {
	r := uint16(rel + 64)
	return []byte{flags, byte(r >> 8), byte(r), n, cut}
}

func cat(ops ...[]byte) []byte {
	var b []byte
	for _, o := range ops {
		b = append(b, o...)
	}
	return b
}

func fuzzSeeds() []fuzzSeed {
	return []fuzzSeed{
		// SYN, in order, FIN.
		{1000, cat(op(0x01, 0, 0, 0), op(0, 1, 100, 0), op(0, 101, 100, 0), op(0x02, 201, 0, 0))},
		// Reordered, overlapping, conflicting, near the wrap.
		{0xFFFFFF00, cat(op(0x01, 0, 0, 0), op(0, 201, 100, 0), op(0, 1, 100, 0), op(0x10, 50, 200, 0),
			op(0, 101, 100, 0))},
		// Midstream with earlier data, a keepalive, truncation, flush.
		{7, cat(op(0, 100, 50, 0), op(0, 60, 50, 0), op(0, 149, 1, 0), op(0x08, 150, 200, 90),
			op(0x80, 0, 0, 0), op(0, 350, 10, 0))},
		// Truncated out of order, then late data, SYN conflicts, RST.
		{0x7FFFFFF0, cat(op(0x01, 0, 5, 0), op(0x08, 300, 100, 60), op(0, 6, 250, 0), op(0, 256, 44, 0), op(0x41, 900, 3, 0),
			op(0x04, 400, 0, 0), op(0, 340, 80, 0))},
		// Many small holes to fill the buffer.
		{42, cat(op(0x01, 0, 0, 0), op(0, 10, 5, 0), op(0, 20, 5, 0), op(0, 30, 5, 0), op(0, 40, 5, 0),
			op(0, 50, 5, 0), op(0, 60, 5, 0), op(0x02, 70, 5, 0), op(0, 1, 9, 0), op(0x80, 0, 0, 0))},
	}
}

// FuzzReassemble feeds random segment lists (any flags, overlaps,
// truncation, flushes, buffer caps and windows) and asserts the invariants:
// no panic; chunks and gaps tile the offsets contiguously from 0 with
// sequence numbers that follow the offsets; the buffer never exceeds its
// cap; after the final Flush nothing is buffered and, without FIN, the
// delivered octets plus the gaps cover exactly the range the segments
// reached.
func FuzzReassemble(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed.isn, seed.ops, uint16(300))
		f.Add(seed.isn, seed.ops, uint16(0))
	}
	f.Fuzz(func(t *testing.T, isn uint32, ops []byte, maxBuf uint16) {
		mb := int(maxBuf)
		if mb > 60000 {
			mb = -1
		}
		opts := Options{MaxBuffered: mb, Window: [...]int{0, -1, 1, 4, 100}[isn%5]}
		s := NewStream(opts)
		// Some runs also take acknowledgments from the peer, past the
		// segment just added by isn>>8 % 2048 octets, with the cost that
		// gives a hole up lowered so that it is reached.
		acks := isn&0x60 != 0
		s.ackHole = int(isn>>16) % 600
		c := newChecker(t)
		ref := newSlow()
		hasFIN := false
		for _, st := range decodeOps(SeqNum(isn), ops) {
			if st.flush {
				s.Flush(c)
				continue
			}
			hasFIN = hasFIN || st.seg.Flags&FIN != 0
			s.Add(&st.seg, c)
			ref.add(st.seg)
			if acks {
				s.PeerAck(st.seg.Seq.Add(int(isn>>8)%2048), c)
			}
			if s.bufCost > s.maxBuf || s.Buffered() > s.maxBuf || s.Buffered() < 0 {
				t.Fatalf("buffer holds %d octets (cost %d), cap %d", s.Buffered(), s.bufCost, s.maxBuf)
			}
			if len(s.hist) > s.window || len(s.free) > freeMax {
				t.Fatalf("history %d (window %d), free list %d", len(s.hist), s.window, len(s.free))
			}
		}
		s.Flush(c)
		if s.Buffered() != 0 || s.bufCost != 0 {
			t.Fatalf("after Flush: %d octets buffered, cost %d", s.Buffered(), s.bufCost)
		}
		if c.data+c.gaps != c.pos {
			t.Fatalf("delivered %d + gaps %d != %d", c.data, c.gaps, c.pos)
		}
		if !hasFIN && c.pos != uint64(ref.end) {
			t.Fatalf("covered [0, %d), segments reached %d", c.pos, ref.end)
		}
		if next, ok := s.NextSeq(); ok && !s.finDone && next != c.origin.Add(int(c.pos)) {
			t.Fatalf("NextSeq %d, want origin %d + %d", next, c.origin, c.pos)
		}
	})
}

// FuzzReset: a Stream used for one sequence of segments and then Reset
// hands its Handler, for a second sequence, what a new Stream does.
func FuzzReset(f *testing.F) {
	seeds := fuzzSeeds()
	for i, seed := range seeds {
		f.Add(seed.isn, seed.ops, seeds[(i+1)%len(seeds)].ops, uint16(300))
	}
	f.Fuzz(func(t *testing.T, isn uint32, first, second []byte, maxBuf uint16) {
		mb := int(maxBuf)
		if mb > 60000 {
			mb = -1
		}
		opts := Options{MaxBuffered: mb, Window: [...]int{0, -1, 1, 4, 100}[isn%5]}
		run := func(s *Stream, ops []byte, isn SeqNum) []string {
			var l logger
			for _, st := range decodeOps(isn, ops) {
				if st.flush {
					s.Flush(&l)
					continue
				}
				s.Add(&st.seg, &l)
			}
			s.Flush(&l)
			return l.log
		}
		used := NewStream(opts)
		// Left with pieces buffered: no Flush.
		for _, st := range decodeOps(SeqNum(isn), first) {
			if !st.flush {
				used.Add(&st.seg, &logger{})
			}
		}
		used.Reset(opts)
		got := run(used, second, SeqNum(isn^0x5a5a5a5a))
		want := run(NewStream(opts), second, SeqNum(isn^0x5a5a5a5a))
		if !slices.Equal(got, want) {
			t.Fatalf("after Reset:\n%s\nnew Stream:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

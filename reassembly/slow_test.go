package reassembly

import (
	"math/rand/v2"
	"testing"
)

// This file holds a slow, obviously correct reference reassembler (a map
// from stream offset to octet, first copy wins) and the decoding of fuzz
// inputs into segment lists shared by the fuzz targets, as netip's
// slow_test.go does for its parser.

// fuzzStep is one decoded fuzz operation.
type fuzzStep struct {
	seg   Segment
	flush bool
}

// content is the octet a well-behaved sender puts at sequence number x;
// variant senders (conflicting retransmissions) flip its bits.
func content(x SeqNum, variant bool) byte {
	b := byte(x*7) ^ byte(x>>8)
	if variant {
		b ^= 0x55
	}
	return b
}

// decodeOps turns fuzz bytes into segments near isn. Each operation takes 5
// octets: flags, a 12-bit relative sequence number (so all segments lie
// within a few KiB and never 2^31 apart), a payload length, and a cut.
func decodeOps(isn SeqNum, ops []byte) []fuzzStep {
	var steps []fuzzStep
	for i := 0; i+5 <= len(ops) && len(steps) < 512; i += 5 {
		f := ops[i]
		rel := int(uint16(ops[i+1])<<8|uint16(ops[i+2]))%4096 - 64
		n := int(ops[i+3])
		if f&0x80 != 0 {
			steps = append(steps, fuzzStep{flush: true})
			continue
		}
		var flags Flags
		if f&0x01 != 0 {
			flags |= SYN
		}
		if f&0x02 != 0 {
			flags |= FIN
		}
		if f&0x04 != 0 {
			flags |= RST
		}
		seq := isn.Add(rel)
		if f&0x01 != 0 && f&0x40 == 0 {
			seq = isn // most SYNs agree with each other
		}
		dataSeq := seq
		if flags&SYN != 0 {
			dataSeq = seq.Add(1)
		}
		payload := make([]byte, n)
		for j := range payload {
			payload[j] = content(dataSeq.Add(j), f&0x10 != 0)
		}
		wire := n
		if f&0x08 != 0 && n > 0 {
			payload = payload[:n-int(ops[i+4])%(n+1)]
		}
		steps = append(steps, fuzzStep{seg: Segment{
			Seq: seq, Flags: flags, Payload: payload, Frame: uint64(len(steps) + 1),
			WireLen: wire, Truncated: len(payload) < wire,
		}})
	}
	return steps
}

// slowState is the reference reassembler. It applies the same origin and
// SYN rules as Stream but keeps every octet: first copy wins, and octets the
// capture cut count as a (missing) copy.
type slowState struct {
	started, haveISN bool
	isn, origin      SeqNum
	oct              map[int64]int // offset -> octet, or -1 for missing
	end              int64         // one past the highest offset seen
}

func newSlow() *slowState { return &slowState{oct: map[int64]int{}} }

func (r *slowState) add(seg Segment) {
	wire := max(min(seg.WireLen, maxWireLen), len(seg.Payload))
	dataSeq := seg.Seq
	if seg.Flags&SYN != 0 {
		switch {
		case !r.started:
			r.started, r.haveISN, r.isn, r.origin = true, true, seg.Seq, seg.Seq.Add(1)
		case r.haveISN && seg.Seq == r.isn:
		case !r.haveISN && seg.Seq.Add(1) == r.origin:
			r.haveISN, r.isn = true, seg.Seq
		default:
			return
		}
		dataSeq = seg.Seq.Add(1)
	}
	if !r.started {
		if seg.Flags&FIN == 0 && wire <= 1 {
			return
		}
		r.started, r.origin = true, dataSeq
	}
	rel := int64(dataSeq.Diff(r.origin))
	for i := range wire {
		off := rel + int64(i)
		if off < 0 {
			continue
		}
		if _, ok := r.oct[off]; ok {
			continue
		}
		if i < len(seg.Payload) {
			r.oct[off] = int(seg.Payload[i])
		} else {
			r.oct[off] = -1
		}
		r.end = max(r.end, off+1)
	}
}

// checker is a Handler that asserts the stream invariants: chunks and gaps
// tile the offsets from 0 without overlap or hole, sequence numbers follow
// offsets, and it collects the delivered octets.
type checker struct {
	t       testing.TB
	origin  SeqNum
	haveOrg bool
	pos     uint64 // next offset expected
	got     map[uint64]byte
	gaps    uint64
	data    uint64
}

func newChecker(t testing.TB) *checker { return &checker{t: t, got: map[uint64]byte{}} }

func (c *checker) Data(ch *Chunk) {
	c.t.Helper()
	if len(ch.Data) == 0 {
		c.t.Fatalf("empty chunk at %d", ch.Off)
	}
	if ch.Off != c.pos {
		c.t.Fatalf("chunk at %d, want %d", ch.Off, c.pos)
	}
	if c.haveOrg && ch.Seq != c.origin.Add(int(ch.Off)) {
		c.t.Fatalf("chunk at %d has seq %d, want %d", ch.Off, ch.Seq, c.origin.Add(int(ch.Off)))
	}
	for i, b := range ch.Data {
		c.got[ch.Off+uint64(i)] = b
	}
	c.pos += uint64(len(ch.Data))
	c.data += uint64(len(ch.Data))
}

func (c *checker) Event(e Event) {
	c.t.Helper()
	switch e.Kind {
	case EvSYN:
		if !c.haveOrg {
			c.origin, c.haveOrg = e.Seq.Add(1), true
		} else if e.Seq.Add(1) != c.origin {
			c.t.Fatalf("SYN %d disagrees with origin %d", e.Seq, c.origin)
		}
	case EvMidstream:
		if c.haveOrg {
			c.t.Fatalf("midstream after origin")
		}
		c.origin, c.haveOrg = e.Seq, true
	case EvGap:
		if e.Len <= 0 || e.Off != c.pos {
			c.t.Fatalf("gap [%d, +%d) at position %d", e.Off, e.Len, c.pos)
		}
		if e.Seq != c.origin.Add(int(e.Off)) {
			c.t.Fatalf("gap at %d has seq %d, want %d", e.Off, e.Seq, c.origin.Add(int(e.Off)))
		}
		c.pos += uint64(e.Len)
		c.gaps += uint64(e.Len)
	case EvBufferFull:
		if e.Off != c.pos || e.Len <= 0 {
			c.t.Fatalf("buffer full [%d, +%d) at position %d", e.Off, e.Len, c.pos)
		}
	case EvFIN:
		if e.Off != c.pos {
			c.t.Fatalf("FIN at %d, position %d", e.Off, c.pos)
		}
	}
}

// differential feeds steps to a Stream with an unbounded buffer and to the
// reference, flushes at the end, and compares every offset.
func differential(t testing.TB, steps []fuzzStep) {
	s := NewStream(Options{MaxBuffered: 1 << 30})
	ref := newSlow()
	c := newChecker(t)
	for _, st := range steps {
		if st.flush {
			continue // a flush gives holes up: the reference cannot follow
		}
		st.seg.Flags &^= FIN // past-FIN rules depend on arrival order
		s.Add(&st.seg, c)
		ref.add(st.seg)
	}
	s.Flush(c)
	if c.pos != uint64(ref.end) {
		t.Fatalf("stream covers [0, %d), reference [0, %d)", c.pos, ref.end)
	}
	for off := int64(0); off < ref.end; off++ {
		want, ok := ref.oct[off]
		got, delivered := c.got[uint64(off)]
		switch {
		case ok && want >= 0 && !delivered:
			t.Fatalf("offset %d: reference has %#x, stream skipped it", off, want)
		case (!ok || want < 0) && delivered:
			t.Fatalf("offset %d: stream delivered %#x, reference has none", off, got)
		case delivered && int(got) != want:
			t.Fatalf("offset %d: stream delivered %#x, reference %#x", off, got, want)
		}
	}
	if s.Buffered() != 0 {
		t.Fatalf("%d octets still buffered after Flush", s.Buffered())
	}
}

func FuzzReassembleDifferential(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed.isn, seed.ops)
	}
	f.Fuzz(func(t *testing.T, isn uint32, ops []byte) {
		differential(t, decodeOps(SeqNum(isn), ops))
	})
}

// TestDifferentialRandom runs the differential check on random inputs as
// part of the ordinary test run.
func TestDifferentialRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		ops := make([]byte, 5*r.IntN(40))
		for i := range ops {
			ops[i] = byte(r.Uint32())
		}
		// Keep most segments close together so that they overlap.
		for i := 1; i+2 < len(ops); i += 5 {
			ops[i] = 0
			ops[i+1] = byte(r.IntN(200))
		}
		differential(t, decodeOps(SeqNum(r.Uint32()), ops))
	}
}

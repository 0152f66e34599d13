package reassembly

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestHistoryGrows: the history ring of delivered octets starts small and
// grows to the window, never more than four times the most octets it has
// had to hold (or minHist) unless it was given back by another stream,
// and a copy of delivered octets is reported as a
// conflict exactly when it differs from them within the last window,
// whatever size the ring had when they were delivered: windows of 64 KiB
// (a power of two), 10,000 and 5,000 octets, deliveries of 1 octet to more
// than a window, gaps and forgotten histories, after which the history
// starts afresh (in rings other streams filled and gave back).
func TestHistoryGrows(t *testing.T) {
	for _, w := range []int{DefaultWindow, 10000, 5000} {
		// Two collections empty the pools of rings given back.
		runtime.GC()
		runtime.GC()
		rng := rand.New(rand.NewPCG(uint64(w), 7))
		s := NewStream(Options{Window: w})
		var h countHandler
		s.Add(&Segment{Seq: 0, Flags: SYN}, &h)
		origin := SeqNum(1)
		var off, histStart uint64 // the next offset; where the history begins
		var most uint64           // the most octets since a beginning so far
		fresh := true             // no ring given back yet: each grows fourfold
		grown := 0
		payload := func(from uint64, n int) []byte {
			p := make([]byte, n)
			for i := range p {
				p[i] = content(origin.Add(int(from)+i), false)
			}
			return p
		}
		for step := range 4000 {
			switch r := rng.IntN(20); {
			case r < 11: // the next octets, in order
				n := 1 + rng.IntN(1500)
				if rng.IntN(60) == 0 {
					n = w + rng.IntN(3000)
				}
				s.Add(&Segment{Seq: origin.Add(int(off)), Payload: payload(off, n)}, &h)
				off += uint64(n)
				since := off - histStart
				most = max(most, since)
				if l := len(s.hist); l > w || uint64(l) < min(since, uint64(w)) || fresh && l > max(minHist, 4*int(most)) {
					t.Fatalf("window %d, step %d: ring of %d octets for %d octets since the history began", w, step, l, since)
				}
				grown = max(grown, len(s.hist))
			case r < 17: // a copy of delivered octets, one of them changed or not
				if off == 0 {
					continue
				}
				from := uint64(rng.IntN(int(off)))
				n := 1 + rng.IntN(int(min(off-from, 3000)))
				if n == 1 && from == off-1 {
					continue // a keepalive probe, never compared
				}
				p := payload(from, n)
				at := rng.IntN(n)
				changed := rng.IntN(2) == 0
				if changed {
					p[at] ^= 0x5a
				}
				s.Add(&Segment{Seq: origin.Add(int(from)), Payload: p}, &h)
				lo := histStart
				if off > uint64(w) {
					lo = max(lo, off-uint64(w))
				}
				want := EvRetransmit
				if changed && from+uint64(at) >= lo {
					want = EvConflict
				}
				if h.last != want {
					t.Fatalf("window %d, step %d: a copy of [%d, %d) changed at %d (%v), history from %d to %d: %v, want %v",
						w, step, from, from+uint64(n), from+uint64(at), changed, lo, off, h.last, want)
				}
			case r < 19:
				// The history forgotten (a reset, the FIN acknowledged),
				// and rings of other octets given back for reuse: what
				// comes after must not be compared with what they held.
				s.Forget()
				histStart, fresh = off, false
				o := NewStream(Options{Window: w})
				o.Add(&Segment{Seq: 0, Flags: SYN}, &h)
				junk := make([]byte, 2*w)
				for i := range junk {
					junk[i] = content(origin.Add(int(off)+i), true)
				}
				for k := 0; k < len(junk); k += 1000 {
					o.Add(&Segment{Seq: origin.Add(k), Payload: junk[k:min(k+1000, len(junk))]}, &h)
				}
				o.Forget()
			default: // a hole, given up: the history starts after it
				k := 1 + rng.IntN(2000)
				n := 1 + rng.IntN(1500)
				s.Add(&Segment{Seq: origin.Add(int(off) + k), Payload: payload(off+uint64(k), n)}, &h)
				s.Flush(&h)
				histStart = off + uint64(k)
				off = histStart + uint64(n)
			}
		}
		if grown != w {
			t.Errorf("window %d: the ring grew to %d octets at most", w, grown)
		}
	}
}

// TestShortStreamsNoAllocs: a stream reused for one short connection after
// another (Reset), each forgotten at its end as a reset connection's is,
// takes its history rings from those given back: no allocation once warm.
func TestShortStreamsNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops some of what it is given back")
	}
	s := NewStream(Options{})
	payload := make([]byte, 1460)
	var h nopHandler
	conn := func() {
		s.Reset(Options{})
		s.Add(&Segment{Seq: 0, Flags: SYN}, h)
		seq := SeqNum(1)
		for range 12 { // 17 KB: the ring grows to 16 KiB, then 64 KiB
			s.Add(&Segment{Seq: seq, Payload: payload}, h)
			seq = seq.Add(len(payload))
		}
		s.Forget()
	}
	conn()
	if n := testing.AllocsPerRun(200, conn); n != 0 {
		t.Errorf("a short connection on a reused stream allocates %v times, want 0", n)
	}
}

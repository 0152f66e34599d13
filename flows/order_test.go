package flows

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestOrderQueue checks the FIFO+heap queue against a sort of the same
// records, with pushes and pops interleaved: mostly in order, as a Decoder
// queues them, with some records for earlier frames and runs of equal frames.
func TestOrderQueue(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var q orderQueue
		var held []*Record
		var order, frame uint64
		// The reference: held is kept sorted (binary insertion), so the
		// record popped must be its first.
		check := func(r *Record) {
			t.Helper()
			if held[0] != r {
				t.Fatalf("seed %d: popped frame %d order %d, want frame %d order %d", seed, r.Frame, r.order, held[0].Frame, held[0].order)
			}
			held = held[1:]
		}
		pushes := 5 + int(seed%3) // in 10: the queue stays short or grows
		for i := 0; i < 6000; i++ {
			switch x := rng.IntN(10); {
			case x < pushes:
				if rng.IntN(3) > 0 {
					frame++
				}
				f := frame
				if rng.IntN(8) == 0 && f > 20 {
					f -= uint64(rng.IntN(20)) // a message record or a late finding
				}
				order++
				r := &Record{Frame: f, order: order}
				q.push(r)
				at, _ := slices.BinarySearchFunc(held, r, func(a, b *Record) int {
					if recLess(a, b) {
						return -1
					}
					return 1 // never equal: order is unique
				})
				held = slices.Insert(held, at, r)
			default:
				if q.len() != len(held) {
					t.Fatalf("seed %d: len %d, want %d", seed, q.len(), len(held))
				}
				if q.len() == 0 {
					continue
				}
				if p := q.peek(); p != q.peek() {
					t.Fatal("peek not stable")
				}
				p := q.peek()
				if r := q.pop(); r != p {
					t.Fatalf("seed %d: pop differs from peek", seed)
				} else {
					check(r)
				}
			}
		}
		for q.len() > 0 {
			check(q.pop())
		}
		if len(held) != 0 {
			t.Fatalf("seed %d: %d records lost", seed, len(held))
		}
	}
}

// recLess is the queue's order on records.
func recLess(a, b *Record) bool {
	if a.Frame != b.Frame {
		return a.Frame < b.Frame
	}
	return a.order < b.order
}

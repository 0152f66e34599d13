package flows

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestReadQueue: the queue of outstanding Read Requests holds what a plain
// slice does, the newest maxPendingReads in order, over random pushes and
// removals (responses), and its storage stays within a few times the
// bound.
func TestReadQueue(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	var q readQueue
	var ref []pendingRead
	for n := range 60000 {
		if rng.IntN(3) > 0 || len(ref) == 0 {
			p := pendingRead{frame: uint64(n), sinkSTag: uint32(n)}
			q.push(p)
			if len(ref) >= maxPendingReads {
				ref = ref[1:]
			}
			ref = append(ref, p)
		} else {
			i := rng.IntN(len(ref))
			if rng.IntN(2) == 0 {
				i = rng.IntN(min(len(ref), 4)) // responses mostly answer the oldest
			}
			q.remove(i)
			ref = slices.Delete(ref, i, i+1)
		}
		if n%97 == 0 || len(ref) < 3 {
			if !slices.Equal(q.live(), ref) {
				t.Fatalf("step %d: queue holds %d, want %d", n, len(q.live()), len(ref))
			}
		}
		if cap(q.q) > 4*maxPendingReads {
			t.Fatalf("step %d: storage for %d entries", n, cap(q.q))
		}
		if n == 30000 {
			q.reset()
			ref = nil
		}
	}
}

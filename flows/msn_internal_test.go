package flows

import (
	"math/rand/v2"
	"testing"
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

package flows

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestConnIDs checks connIDs against a map, with connections numbered in
// order and forgotten in any order, some never; numbers past 32 bits and
// out-of-order or far ids (not made by a worker) go to its map.
func TestConnIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		var m connIDs
		want := map[int]int{}
		local, global := 0, rng.IntN(1000)
		live := []int{}
		for step := range 5000 {
			switch {
			case rng.IntN(3) > 0 || len(live) == 0:
				if round%10 == 9 && step%500 == 0 {
					local += rng.IntN(3 * maxIDGap) // a gap, sometimes too far
				}
				g := global
				if round%5 == 4 && step%700 == 0 {
					g = math.MaxUint32 + step // past 32 bits
				}
				m.set(local, g)
				want[local] = g
				live = append(live, local)
				local++
				global += 1 + rng.IntN(3)
			default:
				i := rng.IntN(len(live))
				if round%2 == 0 {
					i = 0 // mostly in order: the window moves on
				}
				id := live[i]
				live = append(live[:i], live[i+1:]...)
				m.forget(id)
				delete(want, id)
			}
			if step%97 == 0 {
				for l := max(0, local-300); l < local+3; l++ {
					g, ok := m.get(l)
					wg, wok := want[l]
					if ok != wok || g != wg {
						t.Fatalf("round %d step %d: get(%d) = %d, %v; want %d, %v", round, step, l, g, ok, wg, wok)
					}
				}
			}
		}
		for l, wg := range want {
			if g, ok := m.get(l); !ok || g != wg {
				t.Fatalf("round %d: get(%d) = %d, %v; want %d", round, l, g, ok, wg)
			}
		}
		if g, ok := m.get(-1); ok {
			t.Fatalf("get(-1) = %d", g)
		}
	}
	// Forgotten in order, the window stays small.
	var m connIDs
	for i := range 100000 {
		m.set(i, i+7)
		if i >= 10 {
			m.forget(i - 10)
		}
	}
	if len(m.ids) > 11 || cap(m.ids) > 64 {
		t.Errorf("window of %d entries (capacity %d) for 11 connections", len(m.ids), cap(m.ids))
	}
	// A worker's out-of-order id (not made) is kept all the same.
	m.set(3, 4)
	if g, ok := m.get(3); !ok || g != 4 {
		t.Errorf("get(3) = %d, %v", g, ok)
	}
}

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

// TestKnownIDs: a published numbering reads back until a later local id
// of the same slot takes it over; numberings past the packed widths are
// not published, and nothing unpublished reads back.
func TestKnownIDs(t *testing.T) {
	var k knownIDs
	if _, _, ok := k.get(5); ok {
		t.Fatal("empty table gives local 5")
	}
	k.publish(5, 9, 3)
	k.publish(0, 0, 0) // global 0, no stream: still known
	for _, c := range []struct {
		local, global int
		stream        int32
	}{{5, 9, 3}, {0, 0, 0}} {
		if g, s, ok := k.get(c.local); !ok || g != c.global || s != c.stream {
			t.Errorf("get(%d) = %d, %d, %v; want %d, %d", c.local, g, s, ok, c.global, c.stream)
		}
	}
	// Same slot, later id: the slot is its.
	later := 5 + knownSlots
	k.publish(later, 70000, 1<<24-1)
	if _, _, ok := k.get(5); ok {
		t.Error("local 5 still known after a later id took its slot")
	}
	if g, s, ok := k.get(later); !ok || g != 70000 || s != 1<<24-1 {
		t.Errorf("get(%d) = %d, %d, %v", later, g, s, ok)
	}
	// Too wide to pack: not published, and the slot keeps what it had.
	for _, c := range []struct {
		local, global int
		stream        int32
	}{{7 + knownSlots<<16, 1, 1}, {7, 1<<24 - 1, 1}, {7, 1, 1 << 24}, {-1, 1, 1}, {7, -1, 1}} {
		k.publish(c.local, c.global, c.stream)
		if _, _, ok := k.get(c.local); ok {
			t.Errorf("publish(%d, %d, %d) was published", c.local, c.global, c.stream)
		}
	}
	if _, _, ok := k.get(7 + knownSlots<<16); ok {
		t.Error("a local id past 2^28 reads back")
	}
}

package flows

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestEmbryoTable checks embryoTable against a map and a list in order of
// the SYNs: embryos added, taken at random (they became connections) and
// dropped oldest first, through tables kept full as a flood keeps them.
func TestEmbryoTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	key := func(i int) flatKey {
		var k flatKey
		k.lo[15], k.lo[14], k.lo[13] = byte(i), byte(i>>8), byte(i>>16)
		k.lport, k.hport, k.loV4, k.hiV4 = uint16(i*7), 7174, true, true
		return k
	}
	for _, most := range []int{1, 5, 64, 1000} {
		var tab embryoTable
		model := map[flatKey]embryo{}
		var order []int // ids in order of put; -1 once gone
		byID := map[int]flatKey{}
		next := 0
		for step := range 20000 {
			switch r := rng.IntN(10); {
			case r < 6: // a SYN
				for tab.live >= most {
					e, ok := tab.dropOldest()
					if !ok {
						t.Fatalf("most %d step %d: nothing to drop with %d live", most, step, tab.live)
					}
					for i, id := range order {
						if id >= 0 {
							if id != e.id {
								t.Fatalf("most %d step %d: dropped %d, oldest is %d", most, step, e.id, id)
							}
							order[i] = -1
							delete(model, byID[id])
							break
						}
					}
				}
				k := key(next)
				e := embryo{id: next, frame: uint64(step)}
				tab.put(k, e, most)
				model[k], byID[next] = e, k
				order = append(order, next)
				next++
			case r < 9: // a second packet, on an embryo's endpoints or not
				i := rng.IntN(next + 1)
				k := key(i)
				e, ok := tab.take(k)
				we, wok := model[k]
				if ok != wok || e != we {
					t.Fatalf("most %d step %d: take(%d) = %v %v, want %v %v", most, step, i, e, ok, we, wok)
				}
				if ok {
					delete(model, k)
					for j, id := range order {
						if id == i {
							order[j] = -1
						}
					}
				}
			default: // drop the oldest
				e, ok := tab.dropOldest()
				if ok != (len(model) > 0) {
					t.Fatalf("most %d step %d: dropOldest %v with %d live", most, step, ok, len(model))
				}
				if ok {
					if byID[e.id] != key(e.id) || model[key(e.id)] != e {
						t.Fatalf("most %d step %d: dropped %v, not live", most, step, e)
					}
					delete(model, key(e.id))
					for j, id := range order {
						if id == e.id {
							order[j] = -1
						}
					}
				}
			}
			if tab.live != len(model) {
				t.Fatalf("most %d step %d: %d live, want %d", most, step, tab.live, len(model))
			}
			if len(tab.slots) > most+most/4+1 && len(tab.slots) > minEmbryoSlots {
				t.Fatalf("most %d: a ring of %d slots", most, len(tab.slots))
			}
		}
		for k, e := range model {
			if got, ok := tab.take(k); !ok || got != e {
				t.Fatalf("most %d: take at the end = %v %v, want %v", most, got, ok, e)
			}
		}
	}
	t.Logf("a slot: %d octets", unsafe.Sizeof(embryoSlot{}))
}

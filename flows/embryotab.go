package flows

import "hash/maphash"

// embryoTable holds a Decoder's embryos (embryo.go), oldest first, and
// finds them by their endpoints: a ring of slots in order of the SYNs and
// an index over it, open addressing with linear probing.
//
// A SYN flood keeps the table full: every SYN drops the oldest embryo and
// adds one. A Go map and a list in SYN order did that with 270 octets an
// embryo, 17.5 MB for 65,536: the map, with an entry deleted and one added
// at every SYN, grew to twice the slots its entries needed, and the list
// kept the entries of embryos that had become connections until it was
// compacted. Here an embryo takes its slot (88 octets), up to a quarter
// more for slots whose embryo became a connection or was dropped before
// the ring is compacted, and 8 to 16 octets of index: some 130 octets.
//
// Deleting from the index moves the entries after it back (no
// tombstones), so the index never fills with the embryos gone; the keys'
// hash is seeded per table, so a flood cannot be crafted to collide.
type embryoTable struct {
	slots []embryoSlot // a ring: n slots from head, in order of SYN
	head  int
	n     int
	live  int     // slots whose embryo is live
	index []int32 // the slot of a live embryo, plus one; 0: empty
	seed  maphash.Seed
}

// embryoSlot is a slot of the ring.
type embryoSlot struct {
	k    flatKey
	e    embryo
	h    uint32 // the key's hash
	live bool
}

// minEmbryoSlots is the ring's first size.
const minEmbryoSlots = 64

// hash returns k's hash.
func (t *embryoTable) hash(k flatKey) uint32 {
	return uint32(maphash.Comparable(t.seed, k))
}

// find returns the index position of the live embryo on k, or -1.
func (t *embryoTable) find(k flatKey, h uint32) int {
	if t.live == 0 {
		return -1
	}
	mask := len(t.index) - 1
	for i := int(h) & mask; t.index[i] != 0; i = (i + 1) & mask {
		if s := &t.slots[t.index[i]-1]; s.h == h && s.k == k {
			return i
		}
	}
	return -1
}

// take removes the embryo on k and returns it.
func (t *embryoTable) take(k flatKey) (embryo, bool) {
	i := t.find(k, t.hash(k))
	if i < 0 {
		return embryo{}, false
	}
	s := &t.slots[t.index[i]-1]
	e := s.e
	s.live = false
	t.live--
	t.unindex(i)
	return e, true
}

// unindex empties index position i, moving back the entries after it
// that belong before it.
func (t *embryoTable) unindex(i int) {
	mask := len(t.index) - 1
	for j := (i + 1) & mask; t.index[j] != 0; j = (j + 1) & mask {
		home := int(t.slots[t.index[j]-1].h) & mask
		// The entry at j stays if its home is cyclically in (i, j].
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t.index[i] = t.index[j]
			i = j
		}
	}
	t.index[i] = 0
}

// put adds embryo e on k, which has none, to a table that keeps at most
// most live embryos; room for it is made by compacting or growing the
// ring, never by dropping one (the Decoder drops the oldest first,
// dropOldest).
func (t *embryoTable) put(k flatKey, e embryo, most int) {
	if t.n == len(t.slots) {
		// Grown while the live embryos fill three quarters of it, up to
		// a quarter more than most; compacted otherwise, which frees a
		// quarter of the slots at least.
		size, limit := len(t.slots), most+most/4+1
		if t.live >= size*3/4 && size < limit {
			size = max(min(2*size, limit), minEmbryoSlots)
		}
		t.rebuild(size)
	}
	at := (t.head + t.n) % len(t.slots)
	h := t.hash(k)
	t.slots[at] = embryoSlot{k: k, e: e, h: h, live: true}
	t.n++
	t.live++
	t.place(h, at)
}

// place indexes slot at, whose key hashes to h.
func (t *embryoTable) place(h uint32, at int) {
	mask := len(t.index) - 1
	i := int(h) & mask
	for t.index[i] != 0 {
		i = (i + 1) & mask
	}
	t.index[i] = int32(at + 1)
}

// rebuild moves the live embryos, oldest first, to the start of a ring of
// size slots, and indexes them anew.
func (t *embryoTable) rebuild(size int) {
	if t.slots == nil {
		t.seed = maphash.MakeSeed()
	}
	slots := make([]embryoSlot, size)
	n := 0
	for i := 0; i < t.n; i++ {
		if s := t.slots[(t.head+i)%len(t.slots)]; s.live {
			slots[n] = s
			n++
		}
	}
	t.slots, t.head, t.n = slots, 0, n
	isize := 1
	for isize < 2*size {
		isize *= 2
	}
	t.index = make([]int32, isize)
	for at := range n {
		t.place(t.slots[at].h, at)
	}
}

// dropOldest removes the oldest live embryo and returns it.
func (t *embryoTable) dropOldest() (embryo, bool) {
	for t.n > 0 {
		at := t.head
		s := &t.slots[at]
		t.head = (t.head + 1) % len(t.slots)
		t.n--
		if !s.live {
			continue
		}
		e := s.e
		if i := t.find(s.k, s.h); i >= 0 {
			t.unindex(i)
		}
		s.live = false
		t.live--
		return e, true
	}
	return embryo{}, false
}

package flows

// orderQueue holds records until they are released in (Frame, order)
// order. Most records arrive already in that order (an FPDU record is
// queued at the frame that completes it, after the records before it), so
// they go to a FIFO, in O(1); a record that would sort before the FIFO's
// tail (a message record, which carries its first frame, or a finding about
// an earlier frame) goes to a binary min-heap. The least record is at the
// head of one or the other. The heap is hand-written rather than
// container/heap, whose interface calls cost a tenth of the decode.
type orderQueue struct {
	fifo []qent // sorted; live from head on
	head int
	heap []qent
	// pk, when set, packs the FPDU records held past heldPackAt
	// (heldpack.go): at push when pushed is set (the merge of a Parallel,
	// whose records are done with), else at packHeld.
	pk     *heldPack
	pushed bool
	seen   int // fifo[:seen] has been offered to pk (packHeld)
}

// qent is a record in the queue: r, or when r is nil the record packed at
// ref in pk.
type qent struct {
	frame, order uint64
	r            *Record
	ref          uint64
}

func entLess(a, b *qent) bool {
	if a.frame != b.frame {
		return a.frame < b.frame
	}
	return a.order < b.order
}

// len returns the number of records held.
func (q *orderQueue) len() int { return len(q.fifo) - q.head + len(q.heap) }

func (q *orderQueue) push(r *Record) {
	e := qent{frame: r.Frame, order: r.order, r: r}
	if q.pk != nil && q.pushed && q.len() >= heldPackAt {
		if ref, ok := q.pk.pack(r); ok {
			e.r, e.ref = nil, ref
		}
	}
	if n := len(q.fifo); n == q.head || !entLess(&e, &q.fifo[n-1]) {
		if q.head > 0 && q.head == n {
			// Drained: start again at the front.
			q.fifo, q.head, q.seen = q.fifo[:0], 0, 0
		} else if q.head >= 1024 && 2*q.head >= n {
			// Mostly consumed: move the live part down so that the
			// slice does not grow without bound.
			m := copy(q.fifo, q.fifo[q.head:])
			clear(q.fifo[m:])
			q.seen = max(q.seen-q.head, 0)
			q.fifo, q.head = q.fifo[:m], 0
		}
		q.fifo = append(q.fifo, e)
		return
	}
	h := append(q.heap, e)
	j := len(h) - 1
	for j > 0 {
		parent := (j - 1) / 2
		if !entLess(&h[j], &h[parent]) {
			break
		}
		h[j], h[parent] = h[parent], h[j]
		j = parent
	}
	q.heap = h
}

// packHeld packs the FPDU records pushed into the FIFO since its last call
// while more than heldPackAt are held. A Decoder calls it between packets:
// a record pushed during a packet may still change until the packet is
// decoded (a message adds a finding to the FPDU that broke its offsets).
func (q *orderQueue) packHeld() {
	if q.pk == nil {
		return
	}
	if q.len() >= heldPackAt {
		for i := max(q.seen, q.head); i < len(q.fifo); i++ {
			if e := &q.fifo[i]; e.r != nil {
				if ref, ok := q.pk.pack(e.r); ok {
					e.r, e.ref = nil, ref
				}
			}
		}
	}
	q.seen = len(q.fifo)
}

// fromHeap reports whether the least record is the heap's.
func (q *orderQueue) fromHeap() bool {
	if len(q.heap) == 0 {
		return false
	}
	return q.head == len(q.fifo) || entLess(&q.heap[0], &q.fifo[q.head])
}

// least returns the entry of the least record; the queue must not be
// empty.
func (q *orderQueue) least() *qent {
	if q.fromHeap() {
		return &q.heap[0]
	}
	return &q.fifo[q.head]
}

// peekFrame returns the least record's frame; the queue must not be empty.
func (q *orderQueue) peekFrame() uint64 { return q.least().frame }

// peek returns the least record, unpacked if it was packed; the queue must
// not be empty.
func (q *orderQueue) peek() *Record {
	e := q.least()
	if e.r == nil {
		e.r = q.pk.unpack(e.ref)
	}
	return e.r
}

// pop removes and returns the least record; the queue must not be empty.
func (q *orderQueue) pop() *Record {
	top := q.peek()
	if !q.fromHeap() {
		q.fifo[q.head] = qent{}
		q.head++
		return top
	}
	h := q.heap
	n := len(h) - 1
	h[0] = h[n]
	h[n] = qent{}
	h = h[:n]
	j := 0
	for {
		l := 2*j + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && entLess(&h[r], &h[l]) {
			m = r
		}
		if !entLess(&h[m], &h[j]) {
			break
		}
		h[j], h[m] = h[m], h[j]
		j = m
	}
	q.heap = h
	return top
}

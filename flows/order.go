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
	fifo []*Record // sorted; live from head on
	head int
	heap []*Record
}

func recLess(a, b *Record) bool {
	if a.Frame != b.Frame {
		return a.Frame < b.Frame
	}
	return a.order < b.order
}

// len returns the number of records held.
func (q *orderQueue) len() int { return len(q.fifo) - q.head + len(q.heap) }

func (q *orderQueue) push(r *Record) {
	if n := len(q.fifo); n == q.head || !recLess(r, q.fifo[n-1]) {
		if q.head > 0 && q.head == n {
			// Drained: start again at the front.
			q.fifo, q.head = q.fifo[:0], 0
		} else if q.head >= 1024 && 2*q.head >= n {
			// Mostly consumed: move the live part down so that the
			// slice does not grow without bound.
			m := copy(q.fifo, q.fifo[q.head:])
			clear(q.fifo[m:])
			q.fifo, q.head = q.fifo[:m], 0
		}
		q.fifo = append(q.fifo, r)
		return
	}
	h := append(q.heap, r)
	j := len(h) - 1
	for j > 0 {
		parent := (j - 1) / 2
		if !recLess(h[j], h[parent]) {
			break
		}
		h[j], h[parent] = h[parent], h[j]
		j = parent
	}
	q.heap = h
}

// fromHeap reports whether the least record is the heap's.
func (q *orderQueue) fromHeap() bool {
	if len(q.heap) == 0 {
		return false
	}
	return q.head == len(q.fifo) || recLess(q.heap[0], q.fifo[q.head])
}

// peek returns the least record; the queue must not be empty.
func (q *orderQueue) peek() *Record {
	if q.fromHeap() {
		return q.heap[0]
	}
	return q.fifo[q.head]
}

// pop removes and returns the least record; the queue must not be empty.
func (q *orderQueue) pop() *Record {
	if !q.fromHeap() {
		r := q.fifo[q.head]
		q.fifo[q.head] = nil
		q.head++
		return r
	}
	h := q.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = nil
	h = h[:n]
	j := 0
	for {
		l := 2*j + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && recLess(h[r], h[l]) {
			m = r
		}
		if !recLess(h[m], h[j]) {
			break
		}
		h[j], h[m] = h[m], h[j]
		j = m
	}
	q.heap = h
	return top
}

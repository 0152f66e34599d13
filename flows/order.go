package flows

// orderQueue is a binary min-heap of records on (Frame, order): the order
// in which a Decoder releases them. Hand-written rather than
// container/heap, whose interface calls cost a tenth of the decode.
type orderQueue []*Record

func recLess(a, b *Record) bool {
	if a.Frame != b.Frame {
		return a.Frame < b.Frame
	}
	return a.order < b.order
}

func (q *orderQueue) push(r *Record) {
	h := append(*q, r)
	j := len(h) - 1
	for j > 0 {
		parent := (j - 1) / 2
		if !recLess(h[j], h[parent]) {
			break
		}
		h[j], h[parent] = h[parent], h[j]
		j = parent
	}
	*q = h
}

func (q *orderQueue) pop() *Record {
	h := *q
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
	*q = h
	return top
}

func (q orderQueue) peek() *Record { return q[0] }

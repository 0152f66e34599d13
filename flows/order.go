package flows

import "container/heap"

// orderQueue is a min-heap of records by (Frame, order).
type orderQueue []*Record

func (q orderQueue) Len() int { return len(q) }
func (q orderQueue) Less(i, j int) bool {
	if q[i].Frame != q[j].Frame {
		return q[i].Frame < q[j].Frame
	}
	return q[i].order < q[j].order
}
func (q orderQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *orderQueue) Push(x any)   { *q = append(*q, x.(*Record)) }
func (q *orderQueue) Pop() any {
	old := *q
	n := len(old)
	r := old[n-1]
	old[n-1] = nil
	*q = old[:n-1]
	return r
}

func (q *orderQueue) push(r *Record) { heap.Push(q, r) }
func (q *orderQueue) pop() *Record   { return heap.Pop(q).(*Record) }
func (q orderQueue) peek() *Record   { return q[0] }

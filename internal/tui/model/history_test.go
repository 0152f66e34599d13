package model

import (
	"testing"
	"time"
)

// TestHistoryBounded: the history keeps the last HistoryLen places of
// the jumps, none of the arrows' moves, and Back walks them all, newest
// first.
func TestHistoryBounded(t *testing.T) {
	x := rpingIndex(t)
	s := NewState("rping", x, nil, nil)
	s.Sync(time.Time{})
	frames := []uint64{9, 13}
	for i := range HistoryLen + 44 {
		s.GotoFrame(frames[i%2])
		s.MoveList(1) // not a jump
		s.MoveList(-1)
	}
	if b, f := s.Hist.Len(); b != HistoryLen || f != 0 {
		t.Fatalf("history %d back, %d forward; want %d and 0", b, f, HistoryLen)
	}
	steps := 0
	for ; steps < 2*HistoryLen; steps++ {
		before := s.List.SelectedRecord()
		s.Back()
		if s.List.SelectedRecord() == before {
			break
		}
	}
	if steps != HistoryLen {
		t.Errorf("Back moved %d times, want %d", steps, HistoryLen)
	}
	if b, f := s.Hist.Len(); b != 0 || f != HistoryLen {
		t.Errorf("after going all the way back: %d back, %d forward", b, f)
	}
}

package model

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// TestParseHexOctets: the hex values Wireshark's Find takes, run
// together or separated, and what is not one.
func TestParseHexOctets(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []byte
	}{
		{"d666b900", []byte{0xd6, 0x66, 0xb9, 0x00}},
		{"d6 66 b9 00", []byte{0xd6, 0x66, 0xb9, 0x00}},
		{"D6:66:B9:00", []byte{0xd6, 0x66, 0xb9, 0x00}},
		{"0x002e", []byte{0x00, 0x2e}},
		{" 2e-41.41 ", []byte{0x2e, 0x41, 0x41}},
		{"d6 6", nil},
		{"abc", nil},
		{"stag", nil},
		{"", nil},
	} {
		got, err := ParseHexOctets(c.in)
		if !bytes.Equal(got, c.want) || (err != nil) != (c.want == nil) {
			t.Errorf("%q: %x, %v; want %x", c.in, got, err, c.want)
		}
	}
}

// TestSearchCancel: a search runs in the background, Sync with a
// deadline leaves it running with its progress, and CancelSearch stops
// its workers (no test runs after it returns); a new filter cancels a
// search too.
func TestSearchCancel(t *testing.T) {
	x := repeatedIndex(t)
	l := NewList(x)
	l.Sync(time.Time{})
	var calls atomic.Int64
	slow := func(_, _ int) (SearchHit, bool) {
		calls.Add(1)
		time.Sleep(50 * time.Microsecond)
		return SearchHit{}, false
	}
	l.SearchWith("x", ScopeDetails, true, slow)
	l.Sync(time.Now().Add(2 * time.Millisecond))
	if running, _ := l.SearchResult(); !running {
		t.Fatalf("a search of %d rows at 50µs a row is over after 2ms", l.Len())
	}
	if !l.CancelSearch() {
		t.Fatal("CancelSearch: no search")
	}
	n := calls.Load()
	time.Sleep(5 * time.Millisecond)
	if calls.Load() != n || n >= int64(l.Len()) {
		t.Errorf("%d rows tested after the cancel (%d before, of %d)", calls.Load()-n, n, l.Len())
	}
	if running, found := l.SearchResult(); running || found {
		t.Errorf("after cancel: running %v found %v", running, found)
	}
	l.SearchWith("x", ScopeDetails, true, slow)
	l.SetFilter("op", opcodeIs(1))
	if running, _ := l.SearchResult(); running {
		t.Error("a new filter left the search running")
	}
}

// TestSearchOrder: the hit is the first in search order whichever worker
// finds it: forward from the row after the selection, wrapping around,
// and backward.
func TestSearchOrder(t *testing.T) {
	x := repeatedIndex(t)
	l := NewList(x)
	l.Sync(time.Time{})
	n := l.Len()
	hits := map[int]bool{5: true, n / 2: true, n - 3: true}
	test := func(row, _ int) (SearchHit, bool) { return SearchHit{}, hits[row] }
	for _, c := range []struct {
		from int
		fwd  bool
		want int
	}{
		{0, true, 5}, {5, true, n / 2}, {n / 2, true, n - 3}, {n - 3, true, 5},
		{n - 1, false, n - 3}, {n / 2, false, 5}, {5, false, n - 3},
	} {
		l.Select(c.from)
		l.SearchWith("x", ScopeDetails, c.fwd, test)
		l.Sync(time.Time{})
		if running, found := l.SearchResult(); running || !found || l.Selected() != c.want || l.SearchHit().Row != c.want {
			t.Errorf("from %d forward %v: row %d (hit %+v, found %v), want %d", c.from, c.fwd, l.Selected(), l.SearchHit(), found, c.want)
		}
	}
}

// TestStateSearchProgress: while a search runs, the status line says how
// far it is and that Esc cancels it; cancelled, it says where it stopped.
func TestStateSearchProgress(t *testing.T) {
	x := repeatedIndex(t)
	s := NewState("t", x, nil, nil)
	s.Sync(time.Time{})
	s.List.SearchWith("stag", ScopeDetails, true, func(_, _ int) (SearchHit, bool) {
		time.Sleep(50 * time.Microsecond)
		return SearchHit{}, false
	})
	s.searching = true
	s.Sync(time.Now().Add(2 * time.Millisecond))
	if !strings.HasPrefix(s.Message, `searching the packet details for "stag": `) || !strings.HasSuffix(s.Message, "% (Esc cancels)") {
		t.Errorf("while searching: %q", s.Message)
	}
	if !s.CancelSearch() || !strings.HasPrefix(s.Message, `search for "stag" in the packet details cancelled after `) {
		t.Errorf("cancelled: %q", s.Message)
	}
	if s.CancelSearch() {
		t.Error("a second cancel found a search")
	}
}

// repeatedIndex indexes the rping capture's records 40 times over: rows
// enough for a search to be seen running.
func repeatedIndex(t *testing.T) *Index {
	t.Helper()
	x := NewIndex()
	recs := testutil.Decode(t, rping, flows.Options{})
	for range 40 {
		x.Add(recs...)
	}
	x.SetProgress(Progress{Done: true})
	return x
}

package model

import (
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/iwarpkit/iwarpkit/format"
)

// List is a filtered, virtualised view of an Index: the record indexes that
// pass the view's filters, in index order, the selected row, and a small
// cache of formatted rows. Only rows asked for with Row are ever formatted,
// so a list of millions of records costs 4 octets per row.
//
// The list follows the index as it grows and re-filters after a change in
// slices: call Sync, with a deadline, until it reports it has caught up.
type List struct {
	x *Index

	// Filters: an entry-level predicate (cheap, no decoding), the
	// connection restriction and the display filter.
	base  func(e *Entry) bool
	conn  int // -1: every connection
	expr  string
	match Matcher

	rows    []int32
	scanned int // records examined so far
	sel     int // selected row, -1 when the list is empty
	want    int // record to select once it is reached, -1 for none
	gen     int // bumped when rows are rebuilt
	top     int // first row on screen
	height  int // rows on screen at the last Window
	follow  bool

	cache map[int]Row
	times format.TimeFormat // the Time column's format (-t)

	search searchState
	job    *scanJob // the display filter's scan, run by worker goroutines
}

// scanChunk is how many records a filter worker takes at a time.
const scanChunk = 2048

// scanJob applies a display filter to the index on worker goroutines, a
// chunk of records at a time; Sync merges the chunks in order.
type scanJob struct {
	l       *List
	match   Matcher
	mu      sync.Mutex
	next    int // first record not handed out
	res     map[int]chunkResult
	running int // workers still running
	stop    bool
	wg      sync.WaitGroup
}

type chunkResult struct {
	end  int
	rows []int32
}

// start runs workers over the records not handed out yet, up to n.
func (j *scanJob) start(n int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.running > 0 || j.next >= n {
		return
	}
	w := max(runtime.GOMAXPROCS(0), 1)
	j.running = w
	j.wg.Add(w)
	for range w {
		go j.work(n)
	}
}

func (j *scanJob) work(n int) {
	defer j.wg.Done()
	for {
		j.mu.Lock()
		if j.stop || j.next >= n {
			j.running--
			j.mu.Unlock()
			return
		}
		from := j.next
		to := min(from+scanChunk, n)
		j.next = to
		j.mu.Unlock()
		var rows []int32
		for i := from; i < to; i++ {
			e := j.l.x.Entry(i)
			if !j.l.passesEntry(&e) {
				continue
			}
			if r := j.l.x.decode(i); r != nil && j.match.MatchRecord(r) {
				rows = append(rows, int32(i))
			}
		}
		j.mu.Lock()
		j.res[from] = chunkResult{end: to, rows: rows}
		j.mu.Unlock()
	}
}

// halt stops the workers (they finish their chunk).
func (j *scanJob) halt() {
	j.mu.Lock()
	j.stop = true
	j.mu.Unlock()
}

// NewList returns the default record list of x: every listed record
// (FlagListed), all connections, no display filter.
func NewList(x *Index) *List {
	return NewListOf(x, func(e *Entry) bool { return e.Flags&FlagListed != 0 })
}

// NewListOf returns a list of the records of x whose entries pass base.
func NewListOf(x *Index, base func(e *Entry) bool) *List {
	return &List{x: x, base: base, conn: -1, sel: -1, want: -1, cache: make(map[int]Row)}
}

// Index returns the index the list views.
func (l *List) Index() *Index { return l.x }

// Len returns the number of rows so far.
func (l *List) Len() int { return len(l.rows) }

// Gen changes whenever the rows are rebuilt (a filter change).
func (l *List) Gen() int { return l.gen }

// Record returns the record index of row i, or -1.
func (l *List) Record(i int) int {
	if i < 0 || i >= len(l.rows) {
		return -1
	}
	return int(l.rows[i])
}

// Row returns row i formatted (cached).
func (l *List) Row(i int) Row {
	rec := l.Record(i)
	if rec < 0 {
		return Row{Rec: -1}
	}
	if r, ok := l.cache[rec]; ok {
		return r
	}
	if len(l.cache) >= 1024 {
		clear(l.cache)
	}
	r := MakeRow(rec, l.x.Record(rec))
	if l.times != format.TimeUTC {
		r.Time = l.Time(i)
	}
	l.cache[rec] = r
	return r
}

// SetTimeFormat sets the format of the rows' times (iwarpdump -t).
func (l *List) SetTimeFormat(f format.TimeFormat) {
	if f != l.times {
		l.times = f
		clear(l.cache)
	}
}

// TimeFormat returns the format of the rows' times.
func (l *List) TimeFormat() format.TimeFormat { return l.times }

// Time returns the time of row i in the list's format: r counts from the
// capture's first packet (Index.First), dd from the row before (tshark's
// delta displayed: 0 for the first row).
func (l *List) Time(i int) string {
	rec := l.Record(i)
	if rec < 0 {
		return ""
	}
	o := format.TextOptions{Time: l.times}
	switch l.times {
	case format.TimeRelative:
		o.Ref = l.x.First()
	case format.TimeDelta:
		if prev := l.Record(i - 1); prev >= 0 {
			o.Prev = l.x.Record(prev).TS
		}
	}
	return TimeText(l.x.Record(rec).TS, o)
}

// Filter returns the display filter expression ("" for none).
func (l *List) Filter() string { return l.expr }

// Conn returns the connection the list is restricted to, or -1.
func (l *List) Conn() int { return l.conn }

// SetFilter replaces the display filter; m nil shows every record.
func (l *List) SetFilter(expr string, m Matcher) {
	l.expr, l.match = expr, m
	l.reset()
}

// SetConn restricts the list to connection c (-1: all).
func (l *List) SetConn(c int) {
	l.conn = c
	l.reset()
}

// reset starts the rows over, keeping the selected record in mind so
// that it is selected again (or the next one) when the scan reaches it.
func (l *List) reset() {
	if rec := l.Record(l.sel); rec >= 0 {
		l.want = rec
	}
	l.rows = l.rows[:0]
	l.scanned = 0
	l.sel = -1
	l.top = 0
	l.gen++
	clear(l.cache)
	// The search's workers read the rows: stop them before they change.
	l.CancelSearch()
	if l.job != nil {
		l.job.halt()
		l.job = nil
	}
	if l.match != nil {
		l.job = &scanJob{l: l, match: l.match, res: make(map[int]chunkResult)}
	}
}

// passesEntry applies the filters that need no decoding.
func (l *List) passesEntry(e *Entry) bool {
	if l.base != nil && !l.base(e) {
		return false
	}
	return l.conn < 0 || int(e.Conn) == l.conn
}

// Pending reports whether records of the index are still unexamined or a
// search is under way.
func (l *List) Pending() bool { return l.scanned < l.x.Len() || l.search.job != nil }

// Scanned returns how many records have been examined, for a progress
// report while a filter is applied.
func (l *List) Scanned() int { return l.scanned }

// Sync examines records added to the index since the last call, or not
// yet examined after a filter change, and goes on with a search, until
// the deadline (the zero time: no deadline, wait for everything). A
// display filter is applied by worker goroutines, so the Matcher must be
// safe for concurrent use; Sync merges their results in order. It reports
// whether it caught up with the index.
func (l *List) Sync(deadline time.Time) bool {
	n := l.x.Len()
	if l.job != nil {
		l.syncJob(n, deadline)
	} else {
		for l.scanned < n {
			end := min(n, l.scanned+4096)
			l.x.Entries(l.scanned, end, func(i int, e *Entry) {
				if l.passesEntry(e) {
					l.add(i)
				}
			})
			l.scanned = end
			if !deadline.IsZero() && time.Now().After(deadline) {
				return false
			}
		}
	}
	if l.scanned < n {
		return false
	}
	if l.want >= 0 && l.x.Progress().Done {
		// The record wanted is gone (filtered out): settle on the last row.
		l.want = -1
		if l.sel < 0 && len(l.rows) > 0 {
			l.sel = len(l.rows) - 1
			l.follow = true
		}
	}
	if l.search.job != nil {
		l.stepSearch(deadline)
	}
	return l.search.job == nil
}

// syncJob merges the filter workers' results and starts workers for
// records they have not seen.
func (l *List) syncJob(n int, deadline time.Time) {
	j := l.job
	for {
		j.start(n)
		j.mu.Lock()
		for {
			c, ok := j.res[l.scanned]
			if !ok {
				break
			}
			delete(j.res, l.scanned)
			for _, i := range c.rows {
				l.add(int(i))
			}
			l.scanned = c.end
		}
		running := j.running
		j.mu.Unlock()
		if l.scanned >= n || (!deadline.IsZero() && time.Now().After(deadline)) {
			return
		}
		if running > 0 {
			time.Sleep(200 * time.Microsecond)
		}
	}
}

func (l *List) add(i int) {
	l.rows = append(l.rows, int32(i))
	row := len(l.rows) - 1
	switch {
	case l.want >= 0 && i >= l.want:
		l.sel = row
		l.want = -1
		l.follow = true
	case l.sel < 0 && l.want < 0:
		l.sel = 0
		l.follow = true
	}
}

// Window returns the first row to show on a screen of height rows: the
// rows stay where they are unless the selection moved out of them.
func (l *List) Window(height int) int {
	height = max(height, 1)
	if height != l.height {
		// A resized window shows the selection, as a moved one does.
		l.height, l.follow = height, true
	}
	if l.follow && l.sel >= 0 {
		if l.sel < l.top {
			l.top = l.sel
		}
		if l.sel >= l.top+height {
			l.top = l.sel - height + 1
		}
	}
	l.follow = false
	l.top = max(min(l.top, len(l.rows)-height), 0)
	return l.top
}

// Scroll moves the window by delta rows without moving the selection (the
// mouse wheel).
func (l *List) Scroll(delta int) {
	l.top = max(l.top+delta, 0)
	l.follow = false
}

// Selected returns the selected row, or -1.
func (l *List) Selected() int { return l.sel }

// SelectedRecord returns the record index of the selected row, or -1.
func (l *List) SelectedRecord() int { return l.Record(l.sel) }

// Select selects row i, clamped to the rows there are.
func (l *List) Select(i int) {
	l.want = -1
	if len(l.rows) == 0 {
		l.sel = -1
		return
	}
	l.sel = min(max(i, 0), len(l.rows)-1)
	l.follow = true
}

// Move moves the selection by delta rows.
func (l *List) Move(delta int) {
	if l.sel < 0 {
		l.Select(0)
		return
	}
	l.Select(l.sel + delta)
}

// SelectRecord selects the row of record rec, or the first row after it
// (the last row when there is none). It reports whether rec itself has a
// row. When the list has not examined rec yet, the selection follows once
// it has.
func (l *List) SelectRecord(rec int) bool {
	i := sort.Search(len(l.rows), func(i int) bool { return int(l.rows[i]) >= rec })
	if i == len(l.rows) && l.scanned <= rec {
		l.want = rec
		return false
	}
	l.Select(i)
	return i < len(l.rows) && int(l.rows[i]) == rec
}

// Has reports whether record rec has a row, or may have one: the list's
// filters have not examined it yet.
func (l *List) Has(rec int) bool {
	i := sort.Search(len(l.rows), func(i int) bool { return int(l.rows[i]) >= rec })
	return i < len(l.rows) && int(l.rows[i]) == rec || l.scanned <= rec
}

// GotoFrame selects the first row of frame f or, when f has no row, the
// first row of the nearest frame after it (Index.AtFrame: the late records
// included). It reports whether a row of frame f was found.
func (l *List) GotoFrame(f uint64) bool {
	i := l.x.AtFrameOf(len(l.rows), func(i int) int { return int(l.rows[i]) }, f)
	if i == len(l.rows) {
		// No row yet: the first record of f or after it, once examined.
		l.SelectRecord(l.x.AtFrame(f))
	} else {
		l.Select(i)
	}
	r := l.Record(l.sel)
	return r >= 0 && l.x.Entry(r).Frame == f
}

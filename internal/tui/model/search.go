package model

import (
	"bytes"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/iwarpkit/iwarpkit/format"
)

// SearchScope is what a search looks at: the places Wireshark's Find
// (Ctrl-F) offers, the packet list, the packet details and the packet
// bytes.
type SearchScope uint8

// Search scopes.
const (
	ScopeList    SearchScope = iota // the rows' columns, as the list shows them
	ScopeDetails                    // the labels of the detail tree's nodes, collapsed or not
	ScopeBytes                      // the record's octets, as the octets pane shows them, given in hex
)

var scopeNames = [...]string{"packet list", "packet details", "packet bytes"}

// String names the scope as Wireshark's Find bar does ("packet details").
func (s SearchScope) String() string {
	if int(s) < len(scopeNames) {
		return scopeNames[s]
	}
	return "scope " + strconv.Itoa(int(s))
}

// Next returns the scope after s, in the order list, details, bytes.
func (s SearchScope) Next() SearchScope { return (s + 1) % SearchScope(len(scopeNames)) }

// SearchHit is where a search matched.
type SearchHit struct {
	Row int // the list row
	Rec int // its record
	// Path is the detail tree node matched (ScopeDetails) or the most
	// specific field holding the first octet matched (ScopeBytes; "" when
	// the layout places none).
	Path string
	// Off is the offset of the first octet matched (ScopeBytes): in the
	// record when it has a layout (an FPDU, an MPA Request or Reply), else
	// in Frame.
	Off   int
	Frame uint64 // the frame holding the first octet matched (ScopeBytes)
}

// Searcher tests record rec, of list row row, for a search. It runs on
// worker goroutines: it may read the Index and a FrameReader, nothing of
// the List.
type Searcher func(row, rec int) (SearchHit, bool)

// searchChunk is how many rows a search worker takes at a time; stopping
// a search waits for the chunks under way.
const searchChunk = 256

// searchJob runs a search over a snapshot of the list's rows on worker
// goroutines, in chunks of positions counted from the row after the
// selection (before it, backwards) and wrapping around once; List.Sync
// merges the chunks in order, so the hit is the first in search order.
type searchJob struct {
	rows  []int32 // the rows when the search started (read-only)
	start int     // the selected row then
	fwd   bool
	test  Searcher

	mu      sync.Mutex
	next    int                     // first position not handed out
	res     map[int]searchChunkDone // by first position
	hitAt   int                     // lowest position with a hit so far (len(rows): none)
	stop    bool
	running int
	wg      sync.WaitGroup
}

type searchChunkDone struct {
	end int
	hit *SearchHit
}

// row returns the row at search position k (0: the row after the start).
func (j *searchJob) row(k int) int {
	n := len(j.rows)
	if j.fwd {
		return (j.start + 1 + k) % n
	}
	return ((j.start-1-k)%n + n) % n
}

func (j *searchJob) run() {
	w := max(runtime.GOMAXPROCS(0), 1)
	j.running = w
	j.wg.Add(w)
	for range w {
		go j.work()
	}
}

func (j *searchJob) work() {
	defer j.wg.Done()
	n := len(j.rows)
	for {
		j.mu.Lock()
		if j.stop || j.next >= n || j.next > j.hitAt {
			j.running--
			j.mu.Unlock()
			return
		}
		from := j.next
		to := min(from+searchChunk, n)
		j.next = to
		j.mu.Unlock()
		var hit *SearchHit
		for k := from; k < to; k++ {
			row := j.row(k)
			if h, ok := j.test(row, int(j.rows[row])); ok {
				h.Row, h.Rec = row, int(j.rows[row])
				hit = &h
				break
			}
		}
		j.mu.Lock()
		j.res[from] = searchChunkDone{end: to, hit: hit}
		if hit != nil && from < j.hitAt {
			j.hitAt = from
		}
		j.mu.Unlock()
	}
}

// halt stops the workers and waits for the chunks under way.
func (j *searchJob) halt() {
	j.mu.Lock()
	j.stop = true
	j.mu.Unlock()
	j.wg.Wait()
}

// searchState is the list's search: the last one asked for and, while it
// runs, its job.
type searchState struct {
	text    string // lower case (ScopeList, ScopeDetails) or as typed (ScopeBytes)
	scope   SearchScope
	fwd     bool
	job     *searchJob
	merged  int // positions merged so far
	found   bool
	hit     SearchHit
	stopped bool // cancelled before the end
}

// Search starts looking for text (case-insensitive) in the rows' columns;
// see SearchWith.
func (l *List) Search(text string, forward bool) {
	text = strings.ToLower(text)
	l.SearchWith(text, ScopeList, forward, l.rowSearcher(text))
}

// SearchWith starts a search of scope for text with test, from the row
// after the selection (before it when backwards), wrapping around once,
// over the rows there are now. Worker goroutines run it; Sync merges
// their results and selects the row of the first hit. SearchResult tells
// the outcome, CancelSearch stops it.
func (l *List) SearchWith(text string, scope SearchScope, forward bool, test Searcher) {
	l.CancelSearch()
	l.search = searchState{text: text, scope: scope, fwd: forward}
	if text == "" || len(l.rows) == 0 {
		return
	}
	j := &searchJob{rows: l.rows[:len(l.rows):len(l.rows)], start: l.sel, fwd: forward, test: test,
		res: make(map[int]searchChunkDone)}
	if j.start < 0 {
		j.start = len(j.rows) - 1 // forward: from row 0
		if !forward {
			j.start = 0
		}
	}
	j.hitAt = len(j.rows)
	l.search.job = j
	j.run()
}

// CancelSearch stops a search under way and reports whether there was one.
func (l *List) CancelSearch() bool {
	j := l.search.job
	if j == nil {
		return false
	}
	j.halt()
	l.search.job = nil
	l.search.stopped = true
	return true
}

// SearchText returns the last search's text (lower case but for
// ScopeBytes).
func (l *List) SearchText() string { return l.search.text }

// SearchScope returns the last search's scope.
func (l *List) SearchScope() SearchScope { return l.search.scope }

// SearchResult reports whether a search is running, and when it has
// finished, whether it found a row.
func (l *List) SearchResult() (running, found bool) {
	return l.search.job != nil, l.search.found
}

// SearchHit returns where the last search matched (when it found a row).
func (l *List) SearchHit() SearchHit { return l.search.hit }

// SearchProgress returns how many rows of how many the running search
// has looked at.
func (l *List) SearchProgress() (done, total int) {
	if l.search.job == nil {
		return 0, 0
	}
	return l.search.merged, len(l.search.job.rows)
}

// stepSearch merges the search workers' results in order until the hit,
// the end or the deadline (zero: wait for the end).
func (l *List) stepSearch(deadline time.Time) {
	s := &l.search
	j := s.job
	for {
		j.mu.Lock()
		for {
			c, ok := j.res[s.merged]
			if !ok {
				break
			}
			delete(j.res, s.merged)
			s.merged = c.end
			if c.hit != nil {
				j.mu.Unlock()
				j.halt()
				s.job, s.found, s.hit = nil, true, *c.hit
				l.Select(c.hit.Row)
				return
			}
		}
		j.mu.Unlock()
		if s.merged >= len(j.rows) {
			j.halt()
			s.job, s.found = nil, false
			return
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// rowSearcher looks for text (lower case) in the columns of a row, as Row
// formats them (in the list's time format).
func (l *List) rowSearcher(text string) Searcher {
	x, times := l.x, l.times
	var first time.Time
	if times == format.TimeRelative {
		first = x.First()
	}
	rows := l.rows[:len(l.rows):len(l.rows)]
	return func(row, rec int) (SearchHit, bool) {
		r := x.decode(rec)
		if r == nil {
			return SearchHit{}, false
		}
		rw := MakeRow(rec, r)
		if times != format.TimeUTC {
			o := format.TextOptions{Time: times, Ref: first}
			if times == format.TimeDelta && row > 0 {
				if p := x.decode(int(rows[row-1])); p != nil {
					o.Prev = p.TS
				}
			}
			rw.Time = TimeText(r.TS, o)
		}
		return SearchHit{}, rowContains(&rw, text)
	}
}

func rowContains(r *Row, text string) bool {
	for c := range Columns {
		if strings.Contains(strings.ToLower(r.Cell(c)), text) {
			return true
		}
	}
	return false
}

// detailSearcher looks for text (lower case) in the labels of a record's
// detail tree, every node whether expanded or not, in the order the tree
// shows them.
func detailSearcher(x *Index, text string) Searcher {
	return func(_, rec int) (SearchHit, bool) {
		r := x.decode(rec)
		if r == nil {
			return SearchHit{}, false
		}
		if n := findLabel(buildTree(r), text); n != nil {
			return SearchHit{Path: n.Path}, true
		}
		return SearchHit{}, false
	}
}

// findLabel returns the first node, depth first, whose label contains
// text (lower case).
func findLabel(ns []*Node, text string) *Node {
	for _, n := range ns {
		if strings.Contains(strings.ToLower(n.Label), text) {
			return n
		}
		if c := findLabel(n.Children, text); c != nil {
			return c
		}
	}
	return nil
}

// ErrNotHex: a search of the packet bytes was not given hex octets.
var ErrNotHex = errors.New("packet bytes are searched for hex octets, e.g. d6 66 b9 00, d6:66:b9:00 or d666b900")

// ParseHexOctets reads octets written in hex as Wireshark's Find takes a
// hex value: pairs of digits, run together or separated by spaces, colons,
// dashes or dots, with an optional 0x before.
func ParseHexOctets(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		s = s[2:]
	}
	var out []byte
	var digits []byte
	flush := func() bool {
		if len(digits)%2 != 0 {
			return false
		}
		for i := 0; i < len(digits); i += 2 {
			out = append(out, unhex(digits[i])<<4|unhex(digits[i+1]))
		}
		digits = digits[:0]
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			digits = append(digits, c)
		case c == ' ' || c == ':' || c == '-' || c == '.':
			if !flush() {
				return nil, ErrNotHex
			}
		default:
			return nil, ErrNotHex
		}
	}
	if !flush() || len(out) == 0 {
		return nil, ErrNotHex
	}
	return out, nil
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// bytesSearcher looks for pat in the octets of a record as the octets
// pane shows them: an FPDU's or an MPA Request's or Reply's own octets,
// markers included (reassembled from its frames), else each frame's TCP
// payload, or the whole frame when it is not TCP.
func bytesSearcher(x *Index, fr FrameReader, pat []byte) Searcher {
	return func(_, rec int) (SearchHit, bool) {
		r := x.decode(rec)
		if r == nil || fr == nil {
			return SearchHit{}, false
		}
		fs := framesOf(r)
		if len(fs) == 0 {
			return SearchHit{}, false
		}
		raw, _ := fr.ReadAll(fs)
		return matchOctets(NewLayout(r), raw, pat)
	}
}

// matchOctets finds pat in the octets BuildHex would show for l and
// frames.
func matchOctets(l *Layout, frames []RawFrame, pat []byte) (SearchHit, bool) {
	if l == nil {
		for _, f := range frames {
			b, off := f.Data, 0
			if f.TCP {
				b, off = f.Payload, f.PayloadOff
			}
			if i := bytes.Index(b, pat); i >= 0 {
				return SearchHit{Off: off + i, Frame: f.Frame}, true
			}
		}
		return SearchHit{}, false
	}
	buf := make([]byte, l.Len)
	from := make([]uint64, l.Len) // the frame of each octet, 0 for none
	for _, f := range frames {
		if !f.TCP {
			continue
		}
		a := int(int32(f.Seq - l.Seq))
		for i := max(0, -a); i < len(f.Payload) && a+i < l.Len; i++ {
			if from[a+i] == 0 {
				buf[a+i], from[a+i] = f.Payload[i], f.Frame
			}
		}
	}
	for base := 0; base+len(pat) <= len(buf); {
		i := bytes.Index(buf[base:], pat)
		if i < 0 {
			break
		}
		i += base
		whole := true
		for k := i; k < i+len(pat); k++ {
			whole = whole && from[k] != 0
		}
		if whole {
			return SearchHit{Off: i, Frame: from[i], Path: l.FieldAt(i)}, true
		}
		base = i + 1
	}
	return SearchHit{}, false
}

// FieldAt returns the most specific field holding octet w (the one of the
// shortest span; of two as short, the longer path), "" when none does.
func (l *Layout) FieldAt(w int) string {
	best, bestLen := "", 0
	for p, spans := range l.fields {
		if p == "" {
			continue
		}
		for _, s := range spans {
			if w < s.Start || w >= s.End {
				continue
			}
			n := s.End - s.Start
			if best == "" || n < bestLen || n == bestLen && (len(p) > len(best) || len(p) == len(best) && p < best) {
				best, bestLen = p, n
			}
		}
	}
	return best
}

// Reveal makes the node at path current, expanding its parents; the
// nearest parent the tree has when it has no such node. It reports
// whether it found the node or a parent.
func (t *Tree) Reveal(path string) bool {
	for p := path; p != ""; p = parentPath(p) {
		chain := t.chain(p)
		if chain == nil {
			continue
		}
		for _, n := range chain[:len(chain)-1] {
			t.expanded[n.Path] = true
		}
		t.cur = p
		return true
	}
	return false
}

// chain returns the nodes from a root down to the node at path, nil when
// the tree has none.
func (t *Tree) chain(path string) []*Node {
	var walk func(ns []*Node, up []*Node) []*Node
	walk = func(ns []*Node, up []*Node) []*Node {
		for _, n := range ns {
			c := append(up[:len(up):len(up)], n)
			if n.Path == path {
				return c
			}
			if r := walk(n.Children, c); r != nil {
				return r
			}
		}
		return nil
	}
	return walk(t.Roots, nil)
}

// hitRecordName names the record of a hit for the status line.
func hitRecordName(x *Index, h SearchHit) string {
	e := x.Entry(h.Rec)
	return "frame " + strconv.FormatUint(e.Frame, 10) + " (row " + strconv.Itoa(h.Row+1) + ")"
}

package model

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// Screen is what fills the terminal.
type Screen uint8

// Screens.
const (
	ScreenMain     Screen = iota // list, detail tree and hex
	ScreenConns                  // the connection table
	ScreenFindings               // the findings
	ScreenLadder                 // one connection's RDMA messages
	ScreenStats                  // a statistics table (iwarpdump -z)
)

// Focus is the pane of the main screen that takes keys.
type Focus uint8

// Panes.
const (
	FocusList Focus = iota
	FocusTree
	FocusHex
)

// FrameReader reads frames of the capture again, for the hex pane
// (source.Frames implements it).
type FrameReader interface {
	ReadAll(frames []uint64) ([]RawFrame, error)
}

// State is everything iwarptui shows, and the actions on it. It is used
// from one goroutine; only the Index is filled from another.
type State struct {
	Name    string // the capture's name, for the title
	X       *Index
	List    *List
	Tree    *Tree
	Frames  FrameReader // nil: no octets for the hex pane
	Compile Compiler    // nil: display filters are not available

	Screen Screen
	Focus  Focus
	Help   bool // the help screen is up

	FilterErr  *FilterError // the last filter that did not compile
	FilterText string       // its text (the bar keeps it for editing)
	Message    string       // a one-off message for the status line

	ConnSel    int
	FindSel    int
	Ladder     *List
	LadderConn int

	// Stats are the statistics of every record indexed (nil: none kept);
	// StatTab is the table the statistics screen shows.
	Stats   *Stats
	StatTab StatTable

	// Hist is where jumps left from, for Back and Forward.
	Hist History

	// Scope is what the next search looks at (Tab in the search prompt
	// changes it).
	Scope SearchScope
	// searching: a search started by Search has not been reported yet;
	// searchFrom is where it started, for Back.
	searching  bool
	searchFrom Place

	detailRec int
	layout    *Layout
	raw       []RawFrame
	rawErr    error
	Hex       []HexLine
}

// NewState returns the state of a browser over x.
func NewState(name string, x *Index, frames FrameReader, compile Compiler) *State {
	return &State{Name: name, X: x, List: NewList(x), Tree: NewTree(), Frames: frames, Compile: compile,
		detailRec: -1, LadderConn: -1}
}

// Sync brings the lists up to date with the index (see List.Sync) and the
// detail panes with the selection. It reports whether nothing is left to
// do before the deadline (zero: none).
func (s *State) Sync(deadline time.Time) bool {
	done := s.List.Sync(deadline)
	if s.Ladder != nil {
		done = s.Ladder.Sync(deadline) && done
	}
	s.refreshDetail()
	if s.searching {
		if running, _ := s.List.SearchResult(); running {
			s.Message = s.searchMessage()
		} else {
			s.searchDone()
		}
	}
	return done && s.X.Progress().Done
}

// Layout returns the octet layout of the record in the detail panes.
func (s *State) Layout() *Layout { return s.layout }

// DetailRecord returns the record index shown in the detail panes, or -1.
func (s *State) DetailRecord() int { return s.detailRec }

// refreshDetail shows the selected record in the tree and hex panes when
// it changed.
func (s *State) refreshDetail() {
	rec := s.List.SelectedRecord()
	if rec == s.detailRec {
		return
	}
	s.detailRec = rec
	s.layout, s.raw, s.rawErr = nil, nil, nil
	if rec < 0 {
		s.Tree.SetRecord(nil)
		s.Hex = nil
		return
	}
	r := s.X.Record(rec)
	s.Tree.SetRecord(r)
	s.layout = NewLayout(r)
	if fs := framesOf(r); len(fs) > 0 && s.Frames != nil {
		s.raw, s.rawErr = s.Frames.ReadAll(fs)
	}
	s.rebuildHex()
}

// framesOf lists the frames whose octets the hex pane shows for r.
func framesOf(r *flows.Record) []uint64 {
	switch {
	case r.Type == flows.RecFPDU && r.FPDU != nil:
		return r.FPDU.Frames
	case r.Type == flows.RecMPA && r.MPA != nil:
		return r.MPA.Frames
	case r.Type == flows.RecFinding && r.Finding != nil:
		if len(r.Finding.Frames) > 0 {
			return r.Finding.Frames[:min(len(r.Finding.Frames), 4)]
		}
		return []uint64{r.Frame}
	case r.Type == flows.RecCM:
		return []uint64{r.Frame}
	case (r.Type == flows.RecDDPSCTP || r.Type == flows.RecSCTPSession) && r.SCTP != nil:
		if len(r.SCTP.Frames) > 0 {
			return r.SCTP.Frames[:min(len(r.SCTP.Frames), 4)]
		}
		return []uint64{r.Frame}
	}
	return nil
}

// HexNote says why the hex pane is empty or incomplete ("" when it is not).
func (s *State) HexNote() string {
	rec := s.detailRec
	if rec < 0 {
		return ""
	}
	r := s.X.Record(rec)
	switch {
	case r.Type == flows.RecMessage && r.Message != nil:
		return "an RDMA message has no octets of its own: its segments are the FPDUs of frames " +
			strconv.FormatUint(r.Message.FirstFrame, 10) + "-" + strconv.FormatUint(r.Message.LastFrame, 10)
	case r.Type == flows.RecConn || r.Type == flows.RecExtConn:
		return "a connection summary has no octets of its own"
	case s.Frames == nil:
		return "octets not available"
	case s.rawErr != nil:
		return "octets not available: " + s.rawErr.Error()
	case r.Type == flows.RecCM:
		return "a RoCE CM message (over UDP): its whole frame; the fields are not placed in it"
	case r.Type == flows.RecDDPSCTP:
		return "a DDP segment over SCTP: its whole frames; the fields are not placed in them"
	case r.Type == flows.RecSCTPSession:
		return "an SCTP session control message: its whole frames; the fields are not placed in them"
	}
	return ""
}

func (s *State) rebuildHex() {
	var hi []Span
	if n := s.Tree.Current(); n != nil && s.layout != nil {
		hi = s.layout.Spans(n.Path)
	}
	if s.layout == nil && len(s.raw) == 0 {
		s.Hex = nil
		return
	}
	s.Hex = BuildHex(s.layout, s.raw, hi)
}

// Highlight returns the octets of the current tree node, and whether the
// layout knows them: known with no spans is a field that has no octets
// in this record (a pad of 0 octets).
func (s *State) Highlight() ([]Span, bool) {
	if n := s.Tree.Current(); n != nil && s.layout != nil {
		return s.layout.Lookup(n.Path)
	}
	return nil, false
}

// MoveList moves the list selection by delta rows.
func (s *State) MoveList(delta int) { s.List.Move(delta); s.refreshDetail() }

// SelectRow selects list row i (a mouse click).
func (s *State) SelectRow(i int) { s.List.Select(i); s.refreshDetail() }

// ListHome and ListEnd select the first and last rows (jumps: Back
// returns).
func (s *State) ListHome() { s.jump(func() { s.List.Select(0); s.refreshDetail() }) }

// ListEnd selects the last row.
func (s *State) ListEnd() { s.jump(func() { s.List.Select(s.List.Len() - 1); s.refreshDetail() }) }

// TreeMove moves the current tree node by delta lines.
func (s *State) TreeMove(delta int) { s.Tree.Move(delta); s.rebuildHex() }

// TreeSelect makes the node at path current (a mouse click).
func (s *State) TreeSelect(path string) { s.Tree.SetCurrent(path); s.rebuildHex() }

// TreeExpand expands the current node.
func (s *State) TreeExpand() { s.Tree.Expand() }

// TreeCollapse collapses the current node or goes to its parent.
func (s *State) TreeCollapse() { s.Tree.Collapse(); s.rebuildHex() }

// TreeToggle expands or collapses the current node.
func (s *State) TreeToggle() { s.Tree.Toggle() }

// TreeExpandAll expands every node.
func (s *State) TreeExpandAll() { s.Tree.ExpandAll() }

// CycleFocus moves the focus to the next (or previous) pane.
func (s *State) CycleFocus(back bool) {
	if back {
		s.Focus = (s.Focus + 2) % 3
	} else {
		s.Focus = (s.Focus + 1) % 3
	}
}

// ApplyFilter compiles expr and applies it to the list; an empty expr
// removes the filter. It reports whether the filter compiled; when not,
// FilterErr says where the problem is and the list keeps its filter.
func (s *State) ApplyFilter(expr string) bool {
	expr = strings.TrimSpace(expr)
	s.FilterText = expr
	s.FilterErr = nil
	if expr == "" {
		s.List.SetFilter("", nil)
		s.Message = "filter cleared"
		return true
	}
	if s.Compile == nil {
		s.FilterErr = &FilterError{Pos: 0, Msg: "display filters are not available"}
		return false
	}
	m, err := s.Compile(expr)
	if err != nil {
		fe, ok := err.(*FilterError)
		if !ok {
			fe = &FilterError{Pos: 0, Msg: err.Error()}
		}
		s.FilterErr = fe
		s.Message = ""
		return false
	}
	s.List.SetFilter(expr, m)
	s.Message = ""
	return true
}

// SetTimeFormat sets the format of the times of the record list and the
// ladder (iwarpdump -t, tshark -t).
func (s *State) SetTimeFormat(f format.TimeFormat) {
	s.List.SetTimeFormat(f)
	if s.Ladder != nil {
		s.Ladder.SetTimeFormat(f)
	}
}

// ShowScreen switches to a screen.
func (s *State) ShowScreen(sc Screen) {
	s.Screen = sc
	s.Help = false
	if sc == ScreenConns {
		s.ConnSel = min(max(s.ConnSel, 0), max(len(s.X.Conns())-1, 0))
	}
	if sc == ScreenFindings {
		s.FindSel = min(max(s.FindSel, 0), max(s.X.NumFindings()-1, 0))
	}
}

// ShowStats shows statistics table t.
func (s *State) ShowStats(t StatTable) {
	s.ShowScreen(ScreenStats)
	s.StatTab = t
	if s.Stats == nil {
		s.Message = "no statistics kept"
	}
}

// StatsNote says what the statistics describe: every record of the
// capture whatever the display filter (as iwarpdump -z), and how far
// indexing has come while it goes on.
func (s *State) StatsNote() string {
	p := s.X.Progress()
	n := strconv.Itoa(s.X.Len())
	if !p.Done {
		return "indexing: " + strconv.Itoa(int(p.Fraction()*100)) + "% read, " + n + " records so far; the table follows"
	}
	if d := s.Damage(); d != "" {
		return d + "; the " + n + " records read"
	}
	return "the whole capture, " + n + " records; the display filter does not apply"
}

// ChooseConn restricts the list to the connection selected in the
// connection table and goes back to the main screen (a jump: Back
// returns to the table).
func (s *State) ChooseConn() { s.jump(s.chooseConn) }

func (s *State) chooseConn() {
	cs := s.X.Conns()
	if s.ConnSel < 0 || s.ConnSel >= len(cs) {
		return
	}
	s.List.SetConn(cs[s.ConnSel].ID)
	s.Screen = ScreenMain
	s.Message = "showing connection " + strconv.Itoa(cs[s.ConnSel].ID) + " only (x: all connections)"
}

// ClearConn shows every connection again.
func (s *State) ClearConn() {
	if s.List.Conn() >= 0 {
		s.List.SetConn(-1)
		s.Message = "showing all connections"
	}
}

// Follow opens the ladder of RDMA messages of connection c.
func (s *State) Follow(c int) {
	if c < 0 {
		return
	}
	if s.Ladder == nil || s.LadderConn != c {
		s.Ladder = NewLadder(s.X, c)
		s.Ladder.SetTimeFormat(s.List.TimeFormat())
		s.LadderConn = c
		s.Ladder.Sync(time.Time{})
	}
	s.Screen = ScreenLadder
}

// FollowSelected follows the connection of the selected record (main
// screen) or of the selected row of the connection table.
func (s *State) FollowSelected() {
	switch s.Screen {
	case ScreenConns:
		if cs := s.X.Conns(); s.ConnSel >= 0 && s.ConnSel < len(cs) {
			s.Follow(cs[s.ConnSel].ID)
		}
	default:
		switch rec := s.List.SelectedRecord(); {
		case rec >= 0:
			s.Follow(int(s.X.Entry(rec).Conn))
		case s.List.Conn() >= 0:
			s.Follow(s.List.Conn())
		case len(s.X.Conns()) == 1:
			s.Follow(0)
		default:
			s.Message = "select a record of the connection to follow"
		}
	}
}

// JumpToRecord shows record rec selected in the main list. When the list's
// filters hide it, the nearest following row is selected and the status
// line says so. Back returns to where it was called from.
func (s *State) JumpToRecord(rec int) { s.jump(func() { s.jumpToRecord(rec) }) }

func (s *State) jumpToRecord(rec int) {
	s.Screen = ScreenMain
	s.Focus = FocusList
	e := s.X.Entry(rec)
	if s.List.SelectRecord(rec) {
		s.Message = "frame " + strconv.FormatUint(e.Frame, 10)
	} else {
		s.Message = "frame " + strconv.FormatUint(e.Frame, 10) + "'s record is not in the list (filtered out): the next row is selected"
	}
	s.refreshDetail()
}

// JumpToFinding jumps to the record of the selected finding.
func (s *State) JumpToFinding() {
	if s.FindSel < 0 || s.FindSel >= s.X.NumFindings() {
		return
	}
	ref := s.X.Finding(s.FindSel)
	s.JumpToRecord(ref.Rec)
}

// JumpFromLadder jumps to the message selected in the ladder.
func (s *State) JumpFromLadder() {
	if s.Ladder == nil {
		return
	}
	if rec := s.Ladder.SelectedRecord(); rec >= 0 {
		// A message of one segment is not listed: go to its FPDU, the
		// first listed record of its frame on the connection.
		if s.X.Entry(rec).Flags&FlagListed == 0 {
			r := s.X.Record(rec)
			if alt := s.X.AtFrame(r.Message.FirstFrame); alt < s.X.Len() {
				rec = alt
			}
		}
		s.JumpToRecord(rec)
	}
}

// GotoFrame selects the first row of frame f or, when f has none, the
// next row after it. The status line says which: the frame, the next
// frame selected, or why nothing moved (no records, f past the last
// frame, no row at or after f). Back returns.
func (s *State) GotoFrame(f uint64) { s.jump(func() { s.gotoFrame(f) }) }

func (s *State) gotoFrame(f uint64) {
	s.Screen = ScreenMain
	p := s.X.Progress()
	n := strconv.FormatUint(f, 10)
	soFar := ""
	if !p.Done {
		soFar = " so far"
	}
	switch {
	case s.X.Len() == 0:
		s.Message = "no records" + soFar
	case p.Frames > 0 && f > p.Frames:
		s.Message = "frame " + n + " is past the last frame" + soFar + " (" + strconv.FormatUint(p.Frames, 10) + ")"
	case s.X.AtFrame(f) >= s.X.Len():
		s.Message = "no record in frame " + n + " or after it" + soFar
	case s.List.GotoFrame(f):
		s.Message = "frame " + n
	default:
		if rec := s.List.SelectedRecord(); rec >= 0 && s.X.Entry(rec).Frame > f {
			s.Message = "no row for frame " + n + ": the next one, frame " + strconv.FormatUint(s.X.Entry(rec).Frame, 10) + ", is selected"
		} else {
			s.Message = "no row for frame " + n + " or after it (filtered out)"
		}
	}
	s.refreshDetail()
}

// Search looks for text in the scope Scope names (the rows' columns, the
// detail trees' labels or the records' octets in hex), forwards or
// backwards from the selection. The search runs in the background
// (List.SearchWith) and Sync carries it on; it is given until a short
// deadline to finish at once. A match selects its row and, in the
// details or the bytes, puts the tree's cursor on the field matched,
// expanding its parents; Back returns from it.
func (s *State) Search(text string, forward bool) {
	s.Screen = ScreenMain
	var test Searcher
	switch s.Scope {
	case ScopeDetails:
		text = strings.ToLower(text)
		test = detailSearcher(s.X, text)
	case ScopeBytes:
		pat, err := ParseHexOctets(text)
		if err != nil {
			s.Message = err.Error()
			return
		}
		test = bytesSearcher(s.X, s.Frames, pat)
	default:
		s.List.Search(text, forward)
	}
	if test != nil {
		s.List.SearchWith(text, s.Scope, forward, test)
	}
	s.searchFrom, s.searching = s.here(), true
	s.Sync(time.Now().Add(searchWait))
}

// searchWait is how long Search waits for its result before it leaves the
// search to the background.
const searchWait = 50 * time.Millisecond

// CancelSearch stops a search under way; it reports whether there was
// one.
func (s *State) CancelSearch() bool {
	done, total := s.List.SearchProgress()
	if !s.List.CancelSearch() {
		return false
	}
	s.searching = false
	s.Message = "search for \"" + Safe(s.List.SearchText()) + "\" in the " + s.List.SearchScope().String() +
		" cancelled after " + strconv.Itoa(done) + " of " + strconv.Itoa(total) + " rows"
	return true
}

// searchDone shows the outcome of the search that ended: the row of the
// match selected (a jump, for Back), the tree's cursor on the field
// matched, and where the match is in the status line.
func (s *State) searchDone() {
	s.searching = false
	l := s.List
	text, scope := Safe(l.SearchText()), l.SearchScope()
	if _, found := l.SearchResult(); !found {
		s.Message = "\"" + text + "\" not found in the " + scope.String()
		return
	}
	h := l.SearchHit()
	s.refreshDetail()
	if h.Path != "" && s.Tree.Reveal(h.Path) {
		s.rebuildHex()
	}
	if here := s.here(); here != s.searchFrom {
		push(&s.Hist.back, s.searchFrom)
		s.Hist.fwd = s.Hist.fwd[:0]
	}
	s.Message = "\"" + text + "\" found in the " + scope.String() + ": " + hitRecordName(s.X, h)
	switch scope {
	case ScopeDetails:
		s.Message += ", field " + Safe(h.Path)
	case ScopeBytes:
		if s.layout != nil {
			s.Message += ", octet " + strconv.Itoa(h.Off) + " of the record (frame " + strconv.FormatUint(h.Frame, 10) + ")"
		} else {
			s.Message += ", frame " + strconv.FormatUint(h.Frame, 10) + " offset " + strconv.Itoa(h.Off)
		}
		if h.Path != "" {
			s.Message += ", field " + Safe(h.Path)
		}
	}
}

// FollowRef goes to the frame the current node of the detail tree refers
// to (Node.Frames: a Terminate's terminated segment, a Read Response's
// request, a finding's frames): the first of them that is not the
// record's own frame. It reports whether the node is such a reference.
func (s *State) FollowRef() bool {
	n := s.Tree.Current()
	if n == nil || len(n.Frames) == 0 {
		return false
	}
	var own uint64
	if s.detailRec >= 0 {
		own = s.X.Entry(s.detailRec).Frame
	}
	f := n.Frames[0]
	for _, g := range n.Frames {
		if g != own {
			f = g
			break
		}
	}
	s.GotoFrame(f)
	return true
}

// SearchNext repeats the last search, in its scope.
func (s *State) SearchNext(forward bool) {
	if t := s.List.SearchText(); t != "" {
		s.Scope = s.List.SearchScope()
		s.Search(t, forward)
	} else {
		s.Message = "no search yet (s or Ctrl-F to search)"
	}
}

// searchMessage is the status line's message while a search runs.
func (s *State) searchMessage() string {
	done, total := s.List.SearchProgress()
	return "searching the " + s.List.SearchScope().String() + " for \"" + Safe(s.List.SearchText()) + "\": " +
		strconv.Itoa(done*100/max(total, 1)) + "% (Esc cancels)"
}

// Title returns the title line: program, capture, counts and indexing
// progress.
func (s *State) Title() string { return s.title(Safe(s.Name)) }

func (s *State) title(name string) string {
	p := s.X.Progress()
	t := "iwarptui  " + name + "  " + strconv.FormatUint(p.Frames, 10) + " frames, " +
		strconv.Itoa(s.X.Len()) + " records"
	if !p.Done {
		t += "  indexing"
	}
	return t
}

// TitleFit returns the title line in at most w cells (0: no limit): when
// the whole does not fit, the capture's name loses its directories, then
// its beginning ("…/crc_v2_rping.pcap", "…ping.pcap"), so that the counts
// stay.
func (s *State) TitleFit(w int) string {
	t := s.Title()
	if w <= 0 || utf8.RuneCountInString(t) <= w {
		return t
	}
	name := Safe(s.Name)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = "…" + name[i:]
		if t := s.title(name); utf8.RuneCountInString(t) <= w {
			return t
		}
	}
	rest := utf8.RuneCountInString(s.title("")) + 1
	r := []rune(name)
	if keep := w - rest; keep >= 4 && keep < len(r) {
		return s.title("…" + string(r[len(r)-keep:]))
	}
	return s.title(name)
}

// StatusLine returns the status line: the selection, the filters, the
// message of the last action and a reminder of the help key.
func (s *State) StatusLine() string {
	var b strings.Builder
	switch s.Screen {
	case ScreenConns:
		b.WriteString("connections: " + strconv.Itoa(len(s.X.Conns())))
	case ScreenFindings:
		b.WriteString("findings: " + strconv.Itoa(s.X.NumFindings()))
	case ScreenStats:
		b.WriteString("statistics: -z " + s.StatTab.String())
	case ScreenLadder:
		b.WriteString("ladder of conn " + strconv.Itoa(s.LadderConn))
		if s.Ladder != nil {
			b.WriteString(": " + strconv.Itoa(s.Ladder.Len()) + " messages")
		}
	default:
		l := s.List
		b.WriteString("row " + strconv.Itoa(l.Selected()+1) + "/" + strconv.Itoa(l.Len()))
		if rec := l.SelectedRecord(); rec >= 0 {
			e := s.X.Entry(rec)
			b.WriteString(" · frame " + strconv.FormatUint(e.Frame, 10) + " · conn " + strconv.Itoa(int(e.Conn)))
		}
		if l.Conn() >= 0 {
			b.WriteString(" · only conn " + strconv.Itoa(l.Conn()))
		}
		if l.Filter() != "" {
			b.WriteString(" · filtered")
			if l.Pending() {
				b.WriteString(" " + strconv.Itoa(l.Scanned()*100/max(s.X.Len(), 1)) + "%")
			}
		}
	}
	if s.Message != "" {
		b.WriteString(" │ " + s.Message)
	} else if d := s.notices(); d != "" {
		// First, where a narrow screen does not cut it off.
		return d + " │ " + b.String() + " │ ? help"
	}
	b.WriteString(" │ ? help")
	return b.String()
}

// notices are what the status line leads with when no other message is
// up: Damage, then SnapHidden.
func (s *State) notices() string {
	d, h := s.Damage(), s.SnapHidden()
	if d != "" && h != "" {
		return d + " │ " + h
	}
	return d + h
}

// SnapHidden says how many TCP connections the capture's snap length left
// unknown, as iwarpdump says it on standard error: with less than 8 octets
// of a direction's first segment captured, no MPA key says whether the
// connection is iWARP, so it has no record, and a capture of nothing else
// shows an empty list; "" when there are none or indexing goes on.
func (s *State) SnapHidden() string {
	p := s.X.Progress()
	if !p.Done || p.SnapHidden == 0 {
		return ""
	}
	conns := " TCP connections"
	if p.SnapHidden == 1 {
		conns = " TCP connection"
	}
	return strconv.Itoa(p.SnapHidden) + conns + " not shown: the snap length cut the first segment before 8 octets of payload; capture with tcpdump -s 0"
}

// Damage says why indexing stopped before the end of the capture (a
// truncated or corrupt file), as iwarpdump reports it but for the file's
// name, and how many frames were read; "" while indexing or when the file
// was read to its end. The status line leads with it whenever no other
// message is up.
func (s *State) Damage() string {
	p := s.X.Progress()
	if !p.Done || p.Err == nil || errors.Is(p.Err, context.Canceled) {
		return ""
	}
	msg := p.Err.Error()
	if i := strings.Index(msg, s.Name+": "); i >= 0 && s.Name != "" {
		msg = msg[i+len(s.Name)+2:] // the title names the file
	}
	return "damaged: " + Safe(msg) + "; " + strconv.FormatUint(p.Frames, 10) + " frames read"
}

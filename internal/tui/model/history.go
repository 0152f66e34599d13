package model

import (
	"slices"
	"strconv"
)

// Place is where the user was: the screen, the record selected in the
// list and the selections of the table screens. The history of jumps
// (Wireshark's Go Back and Go Forward) is made of places.
type Place struct {
	Screen    Screen
	Rec       int // the list's selected record, -1 for none
	ConnSel   int
	FindSel   int
	LadderCon int // the ladder's connection, -1 for none
	LadderRec int // the ladder's selected message record, -1 for none
	StatTab   StatTable
}

// HistoryLen bounds each direction of the history.
const HistoryLen = 256

// History is the places the user jumped from (back) and came back from
// (forward), the nearest last. Only jumps make places (go to a frame, a
// search match, Enter on a finding, a connection, a ladder row or a frame
// reference, the first or last record), not the arrows.
type History struct {
	back, fwd []Place
}

// Len returns how many places there are back and forward.
func (h *History) Len() (back, forward int) { return len(h.back), len(h.fwd) }

func push(st *[]Place, p Place) {
	if n := len(*st); n > 0 && (*st)[n-1] == p {
		return
	}
	if len(*st) >= HistoryLen {
		*st = slices.Delete(*st, 0, len(*st)-HistoryLen+1)
	}
	*st = append(*st, p)
}

// here returns the current place.
func (s *State) here() Place {
	p := Place{Screen: s.Screen, Rec: s.List.SelectedRecord(), ConnSel: s.ConnSel, FindSel: s.FindSel,
		LadderCon: -1, LadderRec: -1, StatTab: s.StatTab}
	if s.Ladder != nil {
		p.LadderCon, p.LadderRec = s.LadderConn, s.Ladder.SelectedRecord()
	}
	return p
}

// jump runs a jump and, when it went somewhere, remembers where it left
// from for Back; the places forward are forgotten.
func (s *State) jump(f func()) {
	before := s.here()
	want := s.List.want
	f()
	if s.here() != before || s.List.want != want && s.List.want >= 0 {
		push(&s.Hist.back, before)
		s.Hist.fwd = s.Hist.fwd[:0]
	}
}

// Back goes to the place of the last jump (Wireshark's Go Back). A place
// whose record the list's filters hide is skipped, and the status line
// says so; so is a place that is where the user already is.
func (s *State) Back() { s.travel(&s.Hist.back, &s.Hist.fwd, "back") }

// Forward goes to the place Back left (Wireshark's Go Forward).
func (s *State) Forward() { s.travel(&s.Hist.fwd, &s.Hist.back, "forward") }

func (s *State) travel(from, to *[]Place, dir string) {
	cur := s.here()
	var passed []Place // the places skipped, nearest first
	hidden := 0
	for len(*from) > 0 {
		p := (*from)[len(*from)-1]
		*from = (*from)[:len(*from)-1]
		if p == cur {
			passed = append(passed, p)
			continue
		}
		if !s.placeShown(p) {
			passed = append(passed, p)
			hidden++
			continue
		}
		push(to, cur)
		for _, q := range passed {
			push(to, q)
		}
		s.restore(p)
		s.Message = dir + " to " + s.placeName(p)
		if hidden > 0 {
			s.Message += " (" + strconv.Itoa(hidden) + " filtered out, skipped)"
		}
		return
	}
	// Nowhere to go: leave the history as it was.
	for i := len(passed) - 1; i >= 0; i-- {
		*from = append(*from, passed[i])
	}
	switch {
	case hidden > 0:
		s.Message = "nothing " + dir + ": " + strconv.Itoa(hidden) + " place(s) filtered out (the filter or x hides their records)"
	default:
		s.Message = "nothing " + dir
	}
}

// placeShown reports whether p can be shown: a place in the list needs
// its record to have a row (or to be not yet examined by the filter).
func (s *State) placeShown(p Place) bool {
	if p.Screen != ScreenMain || p.Rec < 0 {
		return true
	}
	return s.List.Has(p.Rec)
}

// restore shows place p.
func (s *State) restore(p Place) {
	s.ConnSel, s.FindSel, s.StatTab = p.ConnSel, p.FindSel, p.StatTab
	if p.LadderCon >= 0 {
		s.Follow(p.LadderCon)
		if p.LadderRec >= 0 {
			s.Ladder.SelectRecord(p.LadderRec)
		}
	}
	s.ShowScreen(p.Screen) // clamps the selections
	if p.Rec >= 0 && s.List.Has(p.Rec) {
		s.List.SelectRecord(p.Rec)
	}
	if p.Screen == ScreenMain {
		s.Focus = FocusList
	}
	s.refreshDetail()
}

// placeName says where p is, for the status line.
func (s *State) placeName(p Place) string {
	frame := func(rec int) string {
		if rec < 0 || rec >= s.X.Len() {
			return "no record"
		}
		return "frame " + strconv.FormatUint(s.X.Entry(rec).Frame, 10)
	}
	switch p.Screen {
	case ScreenConns:
		return "the connections, row " + strconv.Itoa(p.ConnSel+1)
	case ScreenFindings:
		return "the findings, row " + strconv.Itoa(p.FindSel+1)
	case ScreenLadder:
		return "the ladder of conn " + strconv.Itoa(p.LadderCon) + ", " + frame(p.LadderRec)
	case ScreenStats:
		return "the statistics (-z " + p.StatTab.String() + ")"
	}
	return frame(p.Rec)
}

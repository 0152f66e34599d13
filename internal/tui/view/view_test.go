package view

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/tui/model"
)

// TestArrowWidth: every ladder arrow is exactly the ladder's width, wide
// or narrow, so that the right-hand lifeline lines up, whatever the
// label's length; a label too long is cut with "…" after a word (its STag
// first) and keeps its start.
func TestArrowWidth(t *testing.T) {
	long := "RDMA Read Response 4096 B in 3 segments STag 0x909e8900 and then some more text"
	for _, w := range []int{ladderWidth, ladderMinArrow} {
		tests := []struct {
			label string
			cut   bool
		}{
			{"Send 16 B", false},
			{strings.Repeat("x", w-8), false}, // the longest that fits
			{strings.Repeat("x", w-7), true},
			{long, true},
			{"RDMA Write 65536 B STag 0xf64d6400", w < 42},
		}
		for _, tc := range tests {
			for _, d := range []flows.Dir{flows.DirI2R, flows.DirR2I, flows.DirUnknown} {
				a := arrow(tc.label, d, w)
				if n := utf8.RuneCountInString(a); n != w {
					t.Errorf("dir %v, label of %d: arrow of %d cells, want %d: %q", d, len(tc.label), n, w, a)
				}
				if !strings.HasPrefix(a, "├") || !strings.HasSuffix(a, "┤") {
					t.Errorf("arrow %q lacks its lifelines", a)
				}
				kept := strings.TrimSpace(strings.TrimSuffix(elide(tc.label, w-8), "…"))
				if cut := strings.Contains(a, "…"); cut != tc.cut || !strings.Contains(a, kept) || !strings.HasPrefix(tc.label, kept) || tc.cut && len(kept) < (w-8)/2 {
					t.Errorf("width %d, label of %d in %q: cut %v, want %v", w, len(tc.label), a, cut, tc.cut)
				}
			}
		}
	}
	if e := elide("RDMA Write 64 B STag 0xf64d6400", 28); e != "RDMA Write 64 B …" {
		t.Errorf("the STag is not what goes first: %q", e)
	}
}

// TestLadderLayout: at 80 columns the ladder's columns and borders take
// 80 cells with the Time column and a detail column of ladderDetail; at
// 140 and wider the arrows keep ladderWidth, as before the narrow layout.
func TestLadderLayout(t *testing.T) {
	for _, c := range []struct {
		w, frame, arrow int
		time            bool
	}{
		{80, 6, 38, true},
		{60, 6, 34, false},
		{100, 6, 58, true},
		{140, 7, ladderWidth, true},
		{200, 7, ladderWidth, true},
	} {
		f, tm, a := ladderLayout(c.w, 15)
		if f != c.frame || tm != c.time || a != c.arrow {
			t.Errorf("%d columns: frame %d time %v arrow %d, want %d %v %d", c.w, f, tm, a, c.frame, c.time, c.arrow)
		}
		used := 2 + f + 1 + a + 1
		if tm {
			used += 15 + 1
		}
		if c.w < 140 && used+ladderDetail != c.w {
			t.Errorf("%d columns: %d used and %d for the detail", c.w, used, ladderDetail)
		}
	}
}

// TestCut: the Info column's text is cut one rune past the screen's
// width (the table still marks it cut), whole runes, and escape leaves
// text without brackets as it is.
func TestCut(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"Send QN 0 MSN 1", 0, "Send QN 0 MSN 1"},
		{"Send QN 0 MSN 1", 20, "Send QN 0 MSN 1"},
		{"Send QN 0 MSN 1", 5, "Send Q"},
		{"✖ Terminate", 2, "✖ T"},
	} {
		if got := cut(c.s, c.n); got != c.want {
			t.Errorf("cut(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
	if e := escape("a [red] b"); e != "a [red[] b" {
		t.Errorf("escape: %q", e)
	}
}

// TestProgressBar: a file's indexing shows its share read; a pipe's, whose
// size is unknown, the frames and octets read so far (it showed 0 % until
// the end).
func TestProgressBar(t *testing.T) {
	for _, c := range []struct {
		p    model.Progress
		want string
	}{
		{model.Progress{Read: 50, Total: 200, Frames: 7}, "indexing [lime]█████[gray]░░░░░░░░░░░░░░░[-] 25%"},
		{model.Progress{Read: 2_500_000, Frames: 1234}, "indexing [lime]1234 frames, 2.5 MB read[-]"},
		{model.Progress{Read: 2_500_000, Frames: 1234, Done: true}, "indexed [lime]████████████████████[gray][-] 100%"},
	} {
		if got := progressBar(c.p, 20); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}

package view

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/iwarpkit/iwarpkit/flows"
)

// TestArrowWidth: every ladder arrow is exactly the ladder's width, so that
// the right-hand lifeline lines up, whatever the label's length; a label
// too long is cut with "…" and keeps its start.
func TestArrowWidth(t *testing.T) {
	long := "RDMA Read Response 4096 B in 3 segments STag 0x909e8900 and then some more text"
	tests := []struct {
		label string
		cut   bool
	}{
		{"Send 16 B", false},
		{strings.Repeat("x", ladderWidth-8), false}, // the longest that fits
		{strings.Repeat("x", ladderWidth-7), true},
		{long, true},
	}
	for _, tc := range tests {
		for _, d := range []flows.Dir{flows.DirI2R, flows.DirR2I, flows.DirUnknown} {
			a := arrow(tc.label, d, ladderWidth)
			if n := utf8.RuneCountInString(a); n != ladderWidth {
				t.Errorf("dir %v, label of %d: arrow of %d cells, want %d: %q", d, len(tc.label), n, ladderWidth, a)
			}
			if !strings.HasPrefix(a, "├") || !strings.HasSuffix(a, "┤") {
				t.Errorf("arrow %q lacks its lifelines", a)
			}
			if cut := strings.Contains(a, "…"); cut != tc.cut || !strings.Contains(a, strings.TrimSuffix(clip(tc.label, ladderWidth-8), "…")) {
				t.Errorf("label of %d in %q: cut %v, want %v", len(tc.label), a, cut, tc.cut)
			}
		}
	}
}

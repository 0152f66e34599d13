package flows

import "testing"

func TestStreamNums(t *testing.T) {
	// Ids 0-9; x marks the ones that are not TCP connections'.
	for _, tc := range []struct {
		name string
		ext  string // one character per id: x not TCP, . TCP
		want []int  // the stream of each id, -1 for none
	}{
		{"tcp only", "....", []int{0, 1, 2, 3}},
		{"none tcp", "xxx", []int{-1, -1, -1}},
		{"leading", "xx..", []int{-1, -1, 0, 1}},
		{"runs", ".x.xx..x.", []int{0, -1, 1, -1, -1, 2, 3, -1, 4}},
		{"trailing", "..xx", []int{0, 1, -1, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s streamNums
			for id, c := range tc.ext {
				s.add(id, c == '.')
			}
			for id, w := range tc.want {
				if got := int(s.of(id)) - 1; got != w {
					t.Errorf("stream of id %d = %d, want %d", id, got, w)
				}
			}
			// Past the last id noted: TCP ids to come, numbered on.
			n := len(tc.ext)
			last := -1
			for _, w := range tc.want {
				last = max(last, w)
			}
			if got := int(s.of(n+2)) - 1; got != last+3 {
				t.Errorf("stream of id %d = %d, want %d", n+2, got, last+3)
			}
			if s.of(-1) != 0 {
				t.Errorf("a negative id has a stream")
			}
		})
	}
}

package filter

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// SyntaxError reports a filter expression that does not compile: a lexical
// or grammatical error, an unknown field name, or a value of the wrong type
// for its field. Pos is the 0-based byte offset of the offending token in
// the expression (len(expr) when the expression ended too early).
type SyntaxError struct {
	Pos int
	Msg string
}

// Error returns "filter: col N: msg", N being the 1-based column (Pos+1).
func (e *SyntaxError) Error() string {
	return "filter: col " + strconv.Itoa(e.Pos+1) + ": " + e.Msg
}

// Caret returns two lines for a person: the expression, then a '^' under
// the offending position. Control characters in the expression are shown
// as spaces so that the caret stays under its column; the caret counts
// characters (runes), not octets.
func (e *SyntaxError) Caret(expr string) string {
	pos := min(max(e.Pos, 0), len(expr))
	var b strings.Builder
	col := 0
	for i, r := range expr {
		if r < 0x20 || r == 0x7f {
			r = ' '
		}
		b.WriteRune(r)
		if i < pos {
			col++
		}
	}
	// A position inside a multi-octet character points at that character.
	if pos < len(expr) && !utf8.RuneStart(expr[pos]) && col > 0 {
		col--
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(" ", col))
	b.WriteByte('^')
	return b.String()
}

func errAt(pos int, msg string) error {
	return &SyntaxError{Pos: pos, Msg: msg}
}

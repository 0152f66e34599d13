package model

import (
	"strconv"

	"github.com/iwarpkit/iwarpkit/flows"
)

// Matcher decides whether a record passes a display filter. The project's
// filter package (*filter.Filter) implements it; the model depends only on
// this interface.
type Matcher interface {
	MatchRecord(r *flows.Record) bool
}

// Compiler turns a display-filter expression into a Matcher. A syntax
// error should be a *FilterError so that the filter bar can point at it.
type Compiler func(expr string) (Matcher, error)

// FilterError is a display filter that does not compile: Pos is the
// 0-based byte offset in the expression where the problem was found.
type FilterError struct {
	Pos int
	Msg string
}

// Error returns e.g. "column 7: unexpected ')'" (1-based column).
func (e *FilterError) Error() string {
	return "column " + strconv.Itoa(e.Pos+1) + ": " + e.Msg
}

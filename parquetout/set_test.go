package parquetout

import (
	"reflect"
	"testing"

	"github.com/iwarpkit/iwarpkit/format"
)

// TestEveryColumnSettable: every field of every row type has a column name
// of its own and a setter for some JSON Lines value, so that no column is
// silently left out of the mapping from keys (rows.go is the one place
// columns are declared).
func TestEveryColumnSettable(t *testing.T) {
	candidates := []format.Value{
		{Kind: format.KInt, I: -1},
		{Kind: format.KUint, U: 1},
		{Kind: format.KBool, B: true},
		{Kind: format.KString, S: "x"},
		{Kind: format.KList, List: []format.Value{{Kind: format.KUint, U: 2}}},
		{Kind: format.KList, List: []format.Value{{Kind: format.KString, S: "y"}}},
		{Kind: format.KList, List: []format.Value{{Kind: format.KObject}}},
	}
	for _, row := range []any{&MPARow{}, &FPDURow{}, &MessageRow{}, &FindingRow{}, &ConnRow{}} {
		rv := reflect.ValueOf(row).Elem()
		cols := columnsOf(rv.Type())
		if len(cols) != rv.NumField() {
			t.Errorf("%s: %d columns for %d fields", rv.Type(), len(cols), rv.NumField())
		}
		var a values
		for name, i := range cols {
			if name == "" {
				t.Errorf("%s.%s: no column name", rv.Type(), rv.Type().Field(i).Name)
			}
			ok := false
			for _, v := range candidates {
				ok = ok || a.set(cols, rv, name, v)
			}
			if !ok || rv.Field(i).IsZero() {
				t.Errorf("%s column %q: no setter", rv.Type(), name)
			}
		}
		if a.set(cols, rv, "no.such.column", candidates[0]) {
			t.Errorf("%s: set an unknown column", rv.Type())
		}
	}
}

package parquetout

import (
	"reflect"
	"strings"

	"github.com/iwarpkit/iwarpkit/format"
)

// values hands out pointers for the optional columns from chunks, so that a
// row costs a few allocations per thousand values rather than one per
// value. A chunk is never grown in place (that would move the values the
// rows point to): a full chunk is replaced by a new one.
type values struct {
	i []int64
	u []uint64
	b []bool
	s []string
}

const chunk = 1024

// alloc returns a pointer to a copy of x kept in the chunk *c.
func alloc[T any](c *[]T, x T) *T {
	if len(*c) == cap(*c) {
		*c = make([]T, 0, chunk)
	}
	*c = append(*c, x)
	return &(*c)[len(*c)-1]
}

// The setters below store one flattened JSON Lines value in a row field.
// Each returns false when the value's kind does not fit the column, which
// the Sink counts as an unknown key.

func (a *values) setInt(dst **int64, v format.Value) bool {
	var x int64
	if !setInt64(&x, v) {
		return false
	}
	*dst = alloc(&a.i, x)
	return true
}

func (a *values) setUint(dst **uint64, v format.Value) bool {
	if v.Kind != format.KUint {
		return false
	}
	*dst = alloc(&a.u, v.U)
	return true
}

func (a *values) setBool(dst **bool, v format.Value) bool {
	if v.Kind != format.KBool {
		return false
	}
	*dst = alloc(&a.b, v.B)
	return true
}

const hexDigits = "0123456789abcdef"

func (a *values) setStr(dst **string, v format.Value) bool {
	switch v.Kind {
	case format.KString:
		*dst = alloc(&a.s, v.S)
	case format.KBytes:
		// Lowercase hex, as the JSON Lines write byte strings.
		b := make([]byte, 2*len(v.Bytes))
		for i, c := range v.Bytes {
			b[2*i], b[2*i+1] = hexDigits[c>>4], hexDigits[c&15]
		}
		*dst = alloc(&a.s, string(b))
	default:
		return false
	}
	return true
}

func setInt64(dst *int64, v format.Value) bool {
	switch v.Kind {
	case format.KUint:
		*dst = int64(v.U)
	case format.KInt:
		*dst = v.I
	default:
		return false
	}
	return true
}

func setString(dst *string, v format.Value) bool {
	if v.Kind != format.KString {
		return false
	}
	*dst = v.S
	return true
}

func intList(dst *[]int64, v format.Value) bool {
	if v.Kind != format.KList {
		return false
	}
	l := make([]int64, 0, len(v.List))
	for _, e := range v.List {
		var x int64
		if !setInt64(&x, e) {
			return false
		}
		l = append(l, x)
	}
	*dst = l
	return true
}

func strList(dst *[]string, v format.Value) bool {
	if v.Kind != format.KList {
		return false
	}
	l := make([]string, 0, len(v.List))
	for _, e := range v.List {
		if e.Kind != format.KString {
			return false
		}
		l = append(l, e.S)
	}
	*dst = l
	return true
}

// objList stores a JSON Lines list of objects in dst: each element starts
// as elem() and gets each of its keys from setKey, which returns false for
// a key or a value that does not fit.
func objList[T any](dst *[]T, v format.Value, elem func() T, setKey func(x *T, key string, val format.Value) bool) bool {
	if v.Kind != format.KList {
		return false
	}
	l := make([]T, 0, len(v.List))
	for _, e := range v.List {
		if e.Kind != format.KObject {
			return false
		}
		x := elem()
		for _, kv := range e.Obj {
			if !setKey(&x, kv.Key, kv.Val) {
				return false
			}
		}
		l = append(l, x)
	}
	*dst = l
	return true
}

func markerList(dst *[]Marker, v format.Value) bool {
	return objList(dst, v, func() Marker { return Marker{} }, func(m *Marker, key string, val format.Value) bool {
		switch key {
		case "seq":
			return setInt64(&m.Seq, val)
		case "fpduptr":
			return setInt64(&m.FPDUPtr, val)
		case "ok":
			m.OK = val.B
			return val.Kind == format.KBool
		}
		return false
	})
}

func findingList(dst *[]Finding, v format.Value) bool {
	return objList(dst, v, func() Finding { return Finding{Frames: []int64{}} }, func(f *Finding, key string, val format.Value) bool {
		switch key {
		case "severity":
			return setString(&f.Severity, val)
		case "code":
			return setString(&f.Code, val)
		case "msg":
			return setString(&f.Msg, val)
		case "frames":
			return intList(&f.Frames, val)
		case "ref":
			return setString(&f.Ref, val)
		}
		return false
	})
}

// columns maps the column names of a table to the fields of its row type
// that hold them. A column's name is the first element of its field's
// parquet tag (rows.go), the flattened JSON Lines key (JSONL.md), and the
// setter follows from the field's Go type (see set): so each column is
// declared once, in rows.go, and the Parquet schema and the mapping from
// JSON Lines keys cannot disagree.
type columns map[string]int

// columnsOf returns the columns of the row struct type t.
func columnsOf(t reflect.Type) columns {
	c := make(columns, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("parquet"), ",")
		c[name] = i
	}
	return c
}

// set stores the value v of the JSON Lines key path in the field of row
// (an addressable row struct with the columns cols) that holds that column.
// It returns false when the table has no such column or the value's kind
// does not fit it.
func (a *values) set(cols columns, row reflect.Value, path string, v format.Value) bool {
	i, ok := cols[path]
	if !ok {
		return false
	}
	switch p := row.Field(i).Addr().Interface().(type) {
	case *int64: // the common columns v, frame, conn: never null
		return setInt64(p, v)
	case *string: // the common columns type, ts
		return setString(p, v)
	case **int64:
		return a.setInt(p, v)
	case **uint64:
		return a.setUint(p, v)
	case **bool:
		return a.setBool(p, v)
	case **string:
		return a.setStr(p, v)
	case *[]int64:
		return intList(p, v)
	case *[]string:
		return strList(p, v)
	case *[]Marker:
		return markerList(p, v)
	case *[]Finding:
		return findingList(p, v)
	}
	return false
}

// Package rowtest puts iwarpdump's two record outputs, JSON Lines and
// Parquet tables, in one notation for tests to compare value by value: a
// row is a map from the flattened key (objects joined with dots, as the
// Parquet columns are named) to the value in Canon's notation, nulls left
// out. JSON Lines is parsed with encoding/json and Parquet read with the
// Apache Arrow Go implementation, so neither side comes from the code that
// wrote the other (package parquetout uses parquet-go).
package rowtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Canon prints a value of either side in one notation: numbers in
// decimal, strings quoted, lists in brackets, objects with sorted keys
// (null members left out); a type neither side should give prints as
// "?type(value)".
func Canon(v any) string {
	switch v := v.(type) {
	case json.Number:
		return v.String()
	case int64:
		return strconv.FormatInt(v, 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case bool:
		return strconv.FormatBool(v)
	case string:
		return strconv.Quote(v)
	case []any:
		s := make([]string, len(v))
		for i, e := range v {
			s[i] = Canon(e)
		}
		return "[" + strings.Join(s, ",") + "]"
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			if v[k] != nil {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		s := make([]string, len(keys))
		for i, k := range keys {
			s[i] = k + ":" + Canon(v[k])
		}
		return "{" + strings.Join(s, ",") + "}"
	}
	return fmt.Sprintf("?%T(%v)", v, v)
}

// JSONRow flattens one JSON Lines record into a row.
func JSONRow(line []byte) (map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("bad JSON line %s: %w", line, err)
	}
	row := map[string]string{}
	flatten(row, "", obj)
	return row, nil
}

func flatten(row map[string]string, prefix string, obj map[string]any) {
	for k, v := range obj {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		switch v := v.(type) {
		case nil:
		case map[string]any:
			flatten(row, p, v)
		default:
			row[p] = Canon(v)
		}
	}
}

// Join prints a row as one string, "key=value;" in key order.
func Join(row map[string]string) string {
	keys := make([]string, 0, len(row))
	for k := range row {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + row[k] + ";")
	}
	return b.String()
}

// ReadParquet reads the Parquet file at path with Apache Arrow and returns
// its rows and its Arrow schema.
func ReadParquet(t testing.TB, path string) ([]map[string]string, *arrow.Schema) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl, err := pqarrow.ReadTable(context.Background(), f, nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("arrow: read %s: %v", path, err)
	}
	defer tbl.Release()
	rows := make([]map[string]string, tbl.NumRows())
	for i := range rows {
		rows[i] = map[string]string{}
	}
	for c := range int(tbl.NumCols()) {
		col := tbl.Column(c)
		base := 0
		for _, chunk := range col.Data().Chunks() {
			for i := range chunk.Len() {
				v, err := arrowValue(chunk, i)
				if err != nil {
					t.Fatalf("%s: column %s: %v", path, col.Name(), err)
				}
				if v != nil {
					rows[base+i][col.Name()] = Canon(v)
				}
			}
			base += chunk.Len()
		}
	}
	return rows, tbl.Schema()
}

// arrowValue reads row i of an Arrow array as a plain Go value (nil for
// null), descending into lists and structs.
func arrowValue(a arrow.Array, i int) (any, error) {
	if a.IsNull(i) {
		return nil, nil
	}
	switch a := a.(type) {
	case *array.Int64:
		return a.Value(i), nil
	case *array.Uint64:
		return a.Value(i), nil
	case *array.Boolean:
		return a.Value(i), nil
	case *array.String:
		return a.Value(i), nil
	case *array.List:
		start, end := a.ValueOffsets(i)
		l := make([]any, 0, end-start)
		for j := start; j < end; j++ {
			v, err := arrowValue(a.ListValues(), int(j))
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		m := map[string]any{}
		for f := range st.NumFields() {
			v, err := arrowValue(a.Field(f), i)
			if err != nil {
				return nil, err
			}
			m[st.Field(f).Name] = v
		}
		return m, nil
	}
	return nil, fmt.Errorf("unexpected Arrow array %T (%v)", a, a.DataType())
}

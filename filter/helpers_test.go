package filter

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// rec is a decoded record and its fields.
type rec struct {
	r   *flows.Record
	kvs []format.KV
}

var (
	decodedMu sync.Mutex
	decoded   = map[string][]rec{}
)

// siw decodes a real capture from testdata/siw (once per test binary).
func siw(t testing.TB, name string) []rec {
	t.Helper()
	return decodeFile(t, filepath.Join("siw", name))
}

// decodeFile decodes testdata/<name> (once per test binary).
func decodeFile(t testing.TB, name string) []rec {
	t.Helper()
	decodedMu.Lock()
	defer decodedMu.Unlock()
	if rs, ok := decoded[name]; ok {
		return rs
	}
	var rs []rec
	for _, r := range testutil.Decode(t, filepath.Join("..", "testdata", name), flows.Options{}) {
		rs = append(rs, rec{r, format.Fields(r)})
	}
	decoded[name] = rs
	return rs
}

// mustCompile compiles a filter or fails the test.
func mustCompile(t testing.TB, expr string) *Filter {
	t.Helper()
	f, err := Compile(expr)
	if err != nil {
		t.Fatalf("Compile(%q): %v", expr, err)
	}
	return f
}

// matchFull evaluates f on all of a record's fields and on the record (its
// endpoints): what MatchRecord must agree with, whatever it leaves out.
func matchFull(f *Filter, r rec) bool {
	if f.root == nil {
		return true
	}
	return f.root.eval(env{kvs: r.kvs, r: r.r})
}

// count returns how many records match.
func count(f *Filter, rs []rec) int {
	n := 0
	for _, r := range rs {
		if matchFull(f, r) {
			n++
		}
	}
	return n
}

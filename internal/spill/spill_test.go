package spill

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

type rec struct {
	k Key
	b []byte
}

// check adds recs to a Sorter of budget and compares what Sorted yields
// with a stable sort of recs; it returns how many runs the Sorter wrote.
func check(t testing.TB, budget int, recs []rec) (runs int) {
	t.Helper()
	s := New(budget)
	for _, r := range recs {
		s.Add(r.k, r.b)
	}
	if s.Len() != len(recs) {
		t.Fatalf("Len %d, want %d", s.Len(), len(recs))
	}
	want := slices.Clone(recs)
	slices.SortStableFunc(want, func(a, b rec) int { return a.k.Compare(b.k) })
	runs = s.Runs()
	it := s.Sorted()
	for i, w := range want {
		pk, ok := it.Peek()
		k, b, ok2 := it.Next()
		if !ok || !ok2 || pk != k {
			t.Fatalf("record %d of %d: none (peek %v %v, next %v)", i, len(want), pk, ok, ok2)
		}
		if k != w.k || !bytes.Equal(b, w.b) {
			t.Fatalf("record %d: key %v %q, want %v %q", i, k, b, w.k, w.b)
		}
	}
	if _, _, ok := it.Next(); ok {
		t.Fatal("a record after the last")
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return runs
}

// randRecs makes n records with keys from a few values (many equal, for
// the order of equal keys) and lengths 0 to 300.
func randRecs(rng *rand.Rand, n int) []rec {
	recs := make([]rec, n)
	for i := range recs {
		b := make([]byte, rng.IntN(300))
		for j := range b {
			b[j] = byte(i + j)
		}
		recs[i] = rec{Key{uint64(rng.IntN(50)), int64(rng.IntN(5)) - 2}, b}
	}
	return recs
}

// TestSorter: records come back in order of key, equal keys in the order
// they were added, whether they were all held, written in one run or in
// many; the memory held stays about the budget.
func TestSorter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		budget, n int
	}{{1 << 20, 500}, {4096, 500}, {MinBudget, 300}, {64 << 10, 20000}, {4096, 0}} {
		recs := randRecs(rng, c.n)
		runs := check(t, c.budget, recs)
		t.Logf("budget %d, %d records: %d runs", c.budget, c.n, runs)
		if c.budget < 8192 && c.n > 0 && runs < 2 {
			t.Errorf("budget %d, %d records: %d runs", c.budget, c.n, runs)
		}
	}
	// Nearly in order already, as flows adds them (retirement order).
	var recs []rec
	for i := range 50000 {
		recs = append(recs, rec{Key{uint64(i + rng.IntN(40)), int64(i)}, []byte{byte(i), byte(i >> 8), 1, 2, 3}})
	}
	s := New(64 << 10)
	for _, r := range recs {
		s.Add(r.k, r.b)
		if h := s.Held(); h > 3*(64<<10) {
			t.Fatalf("%d octets held for a budget of 64 KiB", h)
		}
	}
	s.Close()
	check(t, 64<<10, recs)
}

// TestSorterNoTempDir: where no temporary file can be made, the records
// are all held, and still sorted.
func TestSorterNoTempDir(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	if runs := check(t, MinBudget, randRecs(rand.New(rand.NewPCG(5, 6)), 400)); runs != 0 {
		t.Errorf("%d runs written with no temporary directory", runs)
	}
}

// TestSorterFileGone: the temporary file is not left in the directory,
// during the sort or after Close.
func TestSorterFileGone(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	s := New(MinBudget)
	for _, r := range randRecs(rand.New(rand.NewPCG(7, 8)), 100) {
		s.Add(r.k, r.b)
	}
	if s.Runs() == 0 {
		t.Fatal("no run written")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("%d files in the temporary directory while sorting", len(ents))
	}
	s.Close()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files left in the temporary directory", len(ents))
	}
}

// TestSorterReadError: a run that cannot be read back whole ends the
// records early with ErrRead, and no panic.
func TestSorterReadError(t *testing.T) {
	s := New(MinBudget)
	for _, r := range randRecs(rand.New(rand.NewPCG(9, 10)), 100) {
		s.Add(r.k, r.b)
	}
	if err := s.f.Truncate(s.end / 2); err != nil {
		t.Fatal(err)
	}
	it := s.Sorted()
	n := 0
	for {
		if _, _, ok := it.Next(); !ok {
			break
		}
		n++
	}
	if !errors.Is(s.Err(), ErrRead) {
		t.Errorf("Err %v after %d of 100 records", s.Err(), n)
	}
	it.Close()
}

// FuzzSorter: any records, any budget, sorted as a stable sort does.
func FuzzSorter(f *testing.F) {
	f.Add([]byte("\x05\x01abc\x03\x00\x02de\x05\x01\x00"), uint16(64))
	f.Add(bytes.Repeat([]byte("\x02\x01\x04wxyz"), 50), uint16(100))
	f.Fuzz(func(t *testing.T, data []byte, budget uint16) {
		var recs []rec
		for len(data) >= 3 {
			n := min(int(data[2]), len(data)-3)
			recs = append(recs, rec{Key{uint64(data[0] % 8), int64(int8(data[1])) % 3}, data[3 : 3+n]})
			data = data[3+n:]
		}
		check(t, int(budget), recs)
	})
}

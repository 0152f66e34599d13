// Package spill sorts more records than iwarpkit may hold in memory: an
// external merge sort. A Sorter keeps the records added to it, octet
// strings with a key, until they take more than its budget; it then sorts
// them and writes them to a temporary file as a run, and starts again.
// Sorted merges the runs and the records still held.
//
// flows keeps the conn record of every reset connection that retires
// (flows/settle.go) to the end of the capture, where the JSON Lines
// contract writes it, in frame order. Packed (flows/retired.go), 100,000
// of them took 5 MB and a million would take 50: memory would grow with
// the capture. With a Sorter they take the budget and a buffer per run.
//
// Nothing in the standard library or a well-kept module sorts octet
// strings through temporary files with a bounded buffer; this is the
// small part of that iwarpkit needs (one level of merging, the runs read
// back in order with a buffer each).
//
// The temporary file is removed as soon as it is made where the system
// allows (it lives on while open) and otherwise at Close. A Sorter that
// cannot make or write it keeps its records in memory instead: a full
// or read-only temporary directory costs memory, not records.
package spill

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"slices"
	"unsafe"
)

// Key orders records: by A, then B.
type Key struct {
	A uint64
	B int64
}

// Compare returns -1, 0 or +1 as k sorts before, with or after o.
func (k Key) Compare(o Key) int {
	return cmp.Or(cmp.Compare(k.A, o.A), cmp.Compare(k.B, o.B))
}

// ref is a held record: its key and its octets in Sorter.buf.
type ref struct {
	key   Key
	at, n int
}

// run is a sorted run in the file.
type run struct {
	off, n int64
}

// Sorter sorts records by key, holding at most about its budget of them
// in memory. Add records, then call Sorted once; Close removes the file.
// A Sorter is used by one goroutine at a time.
type Sorter struct {
	budget int
	buf    []byte
	refs   []ref
	runs   []run
	f      *os.File
	path   string // the file's name, until removed
	end    int64  // octets written
	inMem  bool   // the file could not be made or written: hold everything
	w      *bufio.Writer
	enc    []byte
	out    []byte // Iter.Next's copy of a record read back
	err    error  // the first error reading a run back (Sorted)
}

// MinBudget is the smallest budget a Sorter takes.
const MinBudget = 64

// New returns a Sorter that writes a run once its records take budget
// octets (at least MinBudget).
func New(budget int) *Sorter {
	return &Sorter{budget: max(budget, MinBudget)}
}

// Add adds rec (copied) with key k.
func (s *Sorter) Add(k Key, rec []byte) {
	s.refs = append(s.refs, ref{k, len(s.buf), len(rec)})
	s.buf = append(s.buf, rec...)
	if !s.inMem && len(s.buf)+len(s.refs)*refSize > s.budget {
		s.spill()
	}
}

// refSize is what a held record costs beside its octets.
const refSize = int(unsafe.Sizeof(ref{}))

// Held returns the octets the Sorter holds in memory for its records.
func (s *Sorter) Held() int { return cap(s.buf) + cap(s.refs)*refSize }

// Runs returns how many runs it wrote.
func (s *Sorter) Runs() int { return len(s.runs) }

// Len returns how many records were added.
func (s *Sorter) Len() int {
	n := len(s.refs)
	for _, r := range s.runs {
		n += int(r.n)
	}
	return n
}

func (s *Sorter) sortHeld() {
	slices.SortStableFunc(s.refs, func(a, b ref) int { return a.key.Compare(b.key) })
}

// spill writes the records held as a run.
func (s *Sorter) spill() {
	if s.f == nil {
		f, err := os.CreateTemp("", "iwarpkit-spill-*")
		if err != nil {
			s.inMem = true
			return
		}
		s.f, s.path = f, f.Name()
		if os.Remove(s.path) == nil {
			s.path = ""
		}
	}
	s.sortHeld()
	if s.w == nil {
		s.w = bufio.NewWriterSize(nil, 64<<10)
	}
	w := s.w
	w.Reset(io.NewOffsetWriter(s.f, s.end))
	var n int64
	for _, r := range s.refs {
		s.enc = binary.AppendUvarint(s.enc[:0], r.key.A)
		s.enc = binary.AppendVarint(s.enc, r.key.B)
		s.enc = binary.AppendUvarint(s.enc, uint64(r.n))
		w.Write(s.enc) // an error stays in w, for Flush
		w.Write(s.buf[r.at : r.at+r.n])
		n += int64(len(s.enc) + r.n)
	}
	if err := w.Flush(); err != nil {
		// Keep them: the run is not recorded, and nothing more is
		// written.
		s.inMem = true
		return
	}
	s.runs = append(s.runs, run{s.end, int64(len(s.refs))})
	s.end += n
	s.buf, s.refs = s.buf[:0], s.refs[:0]
}

// Iter yields a Sorter's records in order of key (records with equal
// keys in the order they were added, within a run).
type Iter struct {
	s    *Sorter
	srcs []*source
}

// source is one run being read back, or the records held.
type source struct {
	r    *bufio.Reader // a run; nil for the records held
	left int64         // records of the run still to read
	refs []ref         // the records held, from the next on
	key  Key
	rec  []byte
	ok   bool
}

// runBuf is the buffer of each run read back.
const runBuf = 16 << 10

// Sorted returns an Iter over the records added. Add no more after it.
func (s *Sorter) Sorted() *Iter {
	s.sortHeld()
	it := &Iter{s: s}
	for _, r := range s.runs {
		src := &source{r: bufio.NewReaderSize(io.NewSectionReader(s.f, r.off, s.end-r.off), runBuf), left: r.n}
		it.srcs = append(it.srcs, src)
	}
	it.srcs = append(it.srcs, &source{refs: s.refs})
	for _, src := range it.srcs {
		s.advance(src)
	}
	return it
}

// advance reads src's next record.
func (s *Sorter) advance(src *source) {
	src.ok = false
	if src.r == nil {
		if len(src.refs) == 0 {
			return
		}
		r := src.refs[0]
		src.refs = src.refs[1:]
		src.key, src.rec, src.ok = r.key, s.buf[r.at:r.at+r.n], true
		return
	}
	if src.left == 0 || s.err != nil {
		return
	}
	src.left--
	a, err := binary.ReadUvarint(src.r)
	if err != nil {
		s.fail(err)
		return
	}
	b, err := binary.ReadVarint(src.r)
	if err != nil {
		s.fail(err)
		return
	}
	n, err := binary.ReadUvarint(src.r)
	if err != nil || n > uint64(s.end) {
		s.fail(err)
		return
	}
	src.rec = slices.Grow(src.rec[:0], int(n))[:n]
	if _, err := io.ReadFull(src.r, src.rec); err != nil {
		s.fail(err)
		return
	}
	src.key, src.ok = Key{a, b}, true
}

// ErrRead is Err's error when a run could not be read back whole.
var ErrRead = errors.New("spill: a sorted run could not be read back from its temporary file")

func (s *Sorter) fail(err error) {
	if s.err == nil {
		s.err = errors.Join(ErrRead, err)
	}
}

// Peek returns the next record's key, and false when there is none. The
// sources are few (a run per budget's worth of records): the next is
// found by looking at each.
func (it *Iter) Peek() (Key, bool) {
	if src := it.next(); src != nil {
		return src.key, true
	}
	return Key{}, false
}

// next returns the source whose record comes next (the earliest run at
// equal keys), or nil.
func (it *Iter) next() *source {
	var best *source
	for _, src := range it.srcs {
		if src.ok && (best == nil || src.key.Compare(best.key) < 0) {
			best = src
		}
	}
	return best
}

// Next returns the next record and its key; rec is valid until the next
// call. ok is false at the end.
func (it *Iter) Next() (k Key, rec []byte, ok bool) {
	src := it.next()
	if src == nil {
		return Key{}, nil, false
	}
	k, rec = src.key, src.rec
	if src.r != nil {
		// The next read overwrites rec: hand out a copy that lives
		// until the next call.
		it.s.out = append(it.s.out[:0], rec...)
		rec = it.s.out
	}
	it.s.advance(src)
	return k, rec, true
}

// Close closes the Sorter (Sorter.Close).
func (it *Iter) Close() error { return it.s.Close() }

// Err returns the Sorter's error (Sorter.Err).
func (it *Iter) Err() error { return it.s.Err() }

// Err returns the error that ended the records early, if any.
func (s *Sorter) Err() error { return s.err }

// Close removes the temporary file and drops the records.
func (s *Sorter) Close() error {
	var err error
	if s.f != nil {
		err = s.f.Close()
		if s.path != "" {
			err = errors.Join(err, os.Remove(s.path))
		}
		s.f, s.path = nil, ""
	}
	s.buf, s.refs, s.runs = nil, nil, nil
	return err
}

package capture

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// errBoom is the read error of a failingReader that fails before the end.
var errBoom = errors.New("boom")

// failingReader returns data in reads of at most step octets up to failAt,
// then errBoom (io.EOF when failAt is the end) on every later read: a file
// cut short, or a gzip stream that goes bad.
type failingReader struct {
	data   []byte
	failAt int
	step   int
	off    int
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.off >= r.failAt {
		if r.failAt == len(r.data) {
			return 0, io.EOF
		}
		return 0, errBoom
	}
	n := copy(p[:min(len(p), r.step)], r.data[r.off:r.failAt])
	r.off += n
	return n, nil
}

// aheadLikeBufio runs ops over data, cut at failAt, through an aheadPeeker
// with blocks of size octets and through a bufio.Reader (large enough for
// every Peek), and fails at the first difference in octets, counts or
// errors. Each op is two octets: what (Peek, Discard, Read, or a Peek of
// what is buffered) and how many (scaled by scale).
func aheadLikeBufio(t testing.TB, data []byte, size, failAt, scale int, ops []byte) {
	t.Helper()
	a := newAheadPeeker(&failingReader{data: data, failAt: failAt, step: 1000}, size)
	defer a.close()
	b := bufio.NewReaderSize(&failingReader{data: data, failAt: failAt, step: 777}, aheadHeadroom+1)
	p := make([]byte, 256*scale)
	for i := 0; i+1 < len(ops); i += 2 {
		n := int(ops[i+1]) * scale
		switch ops[i] % 4 {
		case 0:
			got, gerr := a.Peek(n)
			want, werr := b.Peek(n)
			if !bytes.Equal(got, want) || gerr != werr {
				t.Fatalf("op %d: Peek(%d): %d octets, %v; bufio %d, %v", i/2, n, len(got), gerr, len(want), werr)
			}
		case 1:
			got, gerr := a.Discard(n)
			want, werr := b.Discard(n)
			if got != want || gerr != werr {
				t.Fatalf("op %d: Discard(%d): %d, %v; bufio %d, %v", i/2, n, got, gerr, want, werr)
			}
		case 2:
			// Read may return fewer octets than asked, and where a read
			// stops is the reader's own: the octets must be the next ones
			// of the stream, and none only at its end.
			k, gerr := a.Read(p[:n])
			want := make([]byte, k)
			w, werr := io.ReadFull(b, want)
			if w != k || !bytes.Equal(p[:k], want) {
				t.Fatalf("op %d: Read(%d): %d octets differ from bufio's %d (%v)", i/2, n, k, w, werr)
			}
			if k == 0 && n > 0 {
				rest, rerr := b.Peek(1)
				if gerr == nil || len(rest) != 0 || gerr != rerr {
					t.Fatalf("op %d: Read(%d): 0 octets, %v; bufio has %d, %v", i/2, n, gerr, len(rest), rerr)
				}
			}
		case 3:
			k := a.Buffered()
			got, gerr := a.Peek(k)
			want, werr := b.Peek(k)
			if gerr != nil || !bytes.Equal(got, want) || werr != nil {
				t.Fatalf("op %d: Peek(Buffered() = %d): %d octets, %v; bufio %d, %v", i/2, k, len(got), gerr, len(want), werr)
			}
		}
	}
	// The rest of the stream and its end.
	got, gerr := io.ReadAll(struct{ io.Reader }{a})
	want, werr := io.ReadAll(b)
	if !bytes.Equal(got, want) || (gerr == nil) != (werr == nil) || (gerr != nil && gerr != werr) {
		t.Fatalf("rest: %d octets, %v; bufio %d, %v", len(got), gerr, len(want), werr)
	}
}

// TestAheadPeeker compares the read-ahead with bufio.Reader, the peeker it
// stands in for, over random op sequences: block sizes from 1 octet to
// larger than the stream, Peeks spanning many blocks, streams ending
// cleanly or with an error, at a block boundary or inside one.
func TestAheadPeeker(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	data := make([]byte, 50_000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, size := range []int{1, 100, 4096, 60_000} {
		for _, failAt := range []int{len(data), 0, 10_000, len(data) - 1} {
			for _, scale := range []int{1, 40} {
				for range 3 {
					ops := make([]byte, 2*rng.IntN(200))
					for i := range ops {
						ops[i] = byte(rng.Uint32())
					}
					aheadLikeBufio(t, data, size, failAt, scale, ops)
				}
			}
		}
	}
	// A Peek longer than the headroom cannot be served, as bufio cannot
	// serve one longer than its buffer.
	a := newAheadPeeker(bytes.NewReader(make([]byte, 2*aheadHeadroom)), 1000)
	defer a.close()
	if b, err := a.Peek(aheadHeadroom + 1); err != bufio.ErrBufferFull || len(b) > aheadHeadroom {
		t.Errorf("Peek(aheadHeadroom+1): %d octets, %v", len(b), err)
	}
	if b, err := a.Peek(aheadHeadroom); err != nil || len(b) != aheadHeadroom {
		t.Errorf("Peek(aheadHeadroom): %d octets, %v", len(b), err)
	}
	if _, err := a.Peek(-1); err != bufio.ErrNegativeCount {
		t.Errorf("Peek(-1): %v", err)
	}
	if _, err := a.Discard(-1); err != bufio.ErrNegativeCount {
		t.Errorf("Discard(-1): %v", err)
	}
}

// FuzzAheadPeeker is TestAheadPeeker's comparison on any stream, block
// size, cut and op sequence.
func FuzzAheadPeeker(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789"), uint16(3), uint16(26), uint8(1), []byte{0, 5, 1, 3, 2, 9, 3, 0, 0, 30})
	f.Add(bytes.Repeat([]byte{0xa5}, 5000), uint16(1000), uint16(4000), uint8(20), []byte{0, 100, 1, 200, 0, 255, 2, 255})
	f.Fuzz(func(t *testing.T, data []byte, size, failAt uint16, scale uint8, ops []byte) {
		if size == 0 || len(ops) > 400 {
			return
		}
		aheadLikeBufio(t, data, int(size), min(int(failAt), len(data)), 1+int(scale)%64, ops)
	})
}

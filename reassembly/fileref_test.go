package reassembly

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// logger logs everything a Stream hands its Handler.
type logger struct{ log []string }

func (r *logger) Data(c *Chunk) {
	r.log = append(r.log, fmt.Sprintf("data off=%d seq=%d frame=%d %x", c.Off, c.Seq, c.Frame, c.Data))
}

func (r *logger) Event(e Event) {
	r.log = append(r.log, fmt.Sprintf("%v off=%d seq=%d len=%d frame=%d", e.Kind, e.Off, e.Seq, e.Len, e.Frame))
}

// sameFromFile feeds the same segments to two Streams: one copies what it
// delivers, the other is given a file holding every payload and each
// segment's FilePos in it, and reads the octets back from there. Both must
// hand their Handlers the same chunks and events, the retransmissions and
// conflicts they find included. It returns how many retransmissions and
// conflicts there were.
func sameFromFile(t *testing.T, isn SeqNum, ops []byte, window int) (compared int) {
	t.Helper()
	steps := decodeOps(isn, ops)
	file := []byte{0} // no payload at offset 0
	pos := make([]int64, len(steps))
	for i, st := range steps {
		if len(st.seg.Payload) > 0 {
			pos[i] = int64(len(file))
			file = append(file, st.seg.Payload...)
		}
	}
	copied := NewStream(Options{Window: window})
	filed := NewStream(Options{Window: window, File: bytes.NewReader(file)})
	rc, rf := &logger{}, &logger{}
	for i, st := range steps {
		if st.flush {
			copied.Flush(rc)
			filed.Flush(rf)
			continue
		}
		copied.Add(&st.seg, rc)
		seg := st.seg
		seg.FilePos = pos[i]
		filed.Add(&seg, rf)
		if n := len(filed.refs) - filed.rhead; n > maxRefs || n < 0 {
			t.Fatalf("%d refs", n)
		}
	}
	copied.Flush(rc)
	filed.Flush(rf)
	if !slices.Equal(rc.log, rf.log) {
		for i := range min(len(rc.log), len(rf.log)) {
			if rc.log[i] != rf.log[i] {
				t.Fatalf("window %d: at %d copied %q, from the file %q", window, i, rc.log[i], rf.log[i])
			}
		}
		t.Fatalf("window %d: %d records copied, %d from the file", window, len(rc.log), len(rf.log))
	}
	for _, l := range rc.log {
		if strings.HasPrefix(l, "Conflict") || strings.HasPrefix(l, "Retransmit") {
			compared++
		}
	}
	return compared
}

func TestFileSameAsCopied(t *testing.T) {
	for _, seed := range fuzzSeeds() {
		for _, w := range []int{0, -1, 1, 4, 100} {
			sameFromFile(t, SeqNum(seed.isn), seed.ops, w)
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	compared := 0
	for range 3000 {
		ops := make([]byte, 5*r.IntN(60))
		for i := range ops {
			ops[i] = byte(r.Uint32())
		}
		// Keep most segments close together so that they overlap, and
		// flushes rare.
		for i := 0; i+2 < len(ops); i += 5 {
			if r.IntN(40) > 0 {
				ops[i] &^= 0x80
			}
			ops[i+1] = 0
			ops[i+2] = byte(r.IntN(250))
		}
		compared += sameFromFile(t, SeqNum(r.Uint32()), ops, [...]int{0, 1, 7, 64, 200}[r.IntN(5)])
	}
	if compared < 3000 {
		t.Fatalf("only %d retransmissions and conflicts in the random runs", compared)
	}
	t.Logf("%d retransmissions and conflicts compared", compared)
}

func FuzzFileSameAsCopied(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed.isn, seed.ops, uint8(100))
	}
	f.Fuzz(func(t *testing.T, isn uint32, ops []byte, window uint8) {
		sameFromFile(t, SeqNum(isn), ops, int(window)-1)
	})
}

// TestFileNoCopy: octets of Segments with a FilePos are not copied; a
// retransmission is compared with the file, a changed one conflicts, and
// octets the file no longer has count as the same.
func TestFileNoCopy(t *testing.T) {
	file := make([]byte, 1+3000)
	for i := range file {
		file[i] = byte(i * 7)
	}
	rd := bytes.NewReader(file)
	s := NewStream(Options{Window: 1000, File: rd})
	var r logger
	for i := range 10 {
		s.Add(&Segment{Seq: SeqNum(1 + 300*i), Payload: file[1+300*i : 1+300*(i+1)], FilePos: int64(1 + 300*i)}, &r)
	}
	if s.hist != nil {
		t.Fatal("octets with a FilePos were copied")
	}
	// 3000 octets delivered: the refs of the last 1000 (four segments,
	// the first of them partly in the window) are kept.
	if n := len(s.refs) - s.rhead; n != 4 {
		t.Fatalf("%d refs kept, want 4", n)
	}
	r.log = nil
	s.Add(&Segment{Seq: SeqNum(1 + 300*8), Payload: slices.Clone(file[1+300*8 : 1+300*9])}, &r)
	bad := slices.Clone(file[1+300*9 : 1+300*10])
	bad[100]++
	s.Add(&Segment{Seq: SeqNum(1 + 300*9), Payload: bad}, &r)
	// A file cut short: what it no longer has cannot be compared.
	s.file = bytes.NewReader(file[:1+300*9])
	s.Add(&Segment{Seq: SeqNum(1 + 300*9), Payload: bad}, &r)
	want := []string{
		"Retransmit off=2400 seq=2401 len=300 frame=0",
		"Conflict off=2700 seq=2701 len=300 frame=0",
		"Retransmit off=2700 seq=2701 len=300 frame=0",
	}
	if !slices.Equal(r.log, want) {
		t.Fatalf("got %q, want %q", r.log, want)
	}
}

func TestFileInOrderNoAllocs(t *testing.T) {
	file := make([]byte, 1+1460)
	s := NewStream(Options{File: bytes.NewReader(file)})
	var h nopHandler
	seq := SeqNum(1)
	n := testing.AllocsPerRun(1000, func() {
		s.Add(&Segment{Seq: seq, Payload: file[1:], FilePos: 1}, h)
		seq = seq.Add(1460)
	})
	if n != 0 {
		t.Errorf("%v allocations per in-order segment", n)
	}
}

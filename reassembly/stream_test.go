package reassembly

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// out is one recorded Handler call: a chunk (Kind 0) or an event.
type out struct {
	Kind  EventKind
	Off   uint64
	Seq   SeqNum
	Len   int
	Data  string
	Frame uint64
	Cut   bool
}

func (o out) String() string {
	if o.Kind == 0 {
		return fmt.Sprintf("D(off=%d seq=%d %q f%d)", o.Off, o.Seq, o.Data, o.Frame)
	}
	if o.Cut {
		return fmt.Sprintf("%v(off=%d seq=%d len=%d f%d cut)", o.Kind, o.Off, o.Seq, o.Len, o.Frame)
	}
	return fmt.Sprintf("%v(off=%d seq=%d len=%d f%d)", o.Kind, o.Off, o.Seq, o.Len, o.Frame)
}

// D and E build expected outputs.
func D(off uint64, seq SeqNum, data string, frame uint64) out {
	return out{Off: off, Seq: seq, Len: len(data), Data: data, Frame: frame}
}

func E(k EventKind, off uint64, seq SeqNum, n int, frame uint64) out {
	return out{Kind: k, Off: off, Seq: seq, Len: n, Frame: frame}
}

// G is the EvGap of octets the capture cut (Event.Cut).
func G(off uint64, seq SeqNum, n int, frame uint64) out {
	return out{Kind: EvGap, Off: off, Seq: seq, Len: n, Frame: frame, Cut: true}
}

// recorder is a Handler that records everything and checks that TS is
// passed through with Frame (tests set TS from the frame number).
type recorder struct {
	t    testing.TB
	outs []out
}

func ts(frame uint64) time.Time { return time.Unix(int64(frame), 0) }

func (r *recorder) Data(c *Chunk) {
	if !c.TS.Equal(ts(c.Frame)) {
		r.t.Errorf("chunk frame %d has TS %v", c.Frame, c.TS)
	}
	r.outs = append(r.outs, out{Off: c.Off, Seq: c.Seq, Len: len(c.Data), Data: string(c.Data), Frame: c.Frame})
}

func (r *recorder) Event(e Event) {
	if !e.TS.Equal(ts(e.Frame)) {
		r.t.Errorf("event %v frame %d has TS %v", e.Kind, e.Frame, e.TS)
	}
	if e.Cut && e.Kind != EvGap {
		r.t.Errorf("event %v has Cut set", e.Kind)
	}
	r.outs = append(r.outs, out{Kind: e.Kind, Off: e.Off, Seq: e.Seq, Len: e.Len, Frame: e.Frame, Cut: e.Cut})
}

// step is one input of a scenario: a segment, or a Flush when flush is set.
type step struct {
	seq     SeqNum
	flags   Flags
	data    string
	wireLen int
	flush   bool
}

func seg(seq SeqNum, flags Flags, data string) step { return step{seq: seq, flags: flags, data: data} }
func cut(seq SeqNum, data string, wireLen int) step {
	return step{seq: seq, data: data, wireLen: wireLen}
}

var flush = step{flush: true}

// run feeds the steps, numbering frames from 1 in step order.
func run(t testing.TB, opts Options, steps []step) (*Stream, []out) {
	s := NewStream(opts)
	r := &recorder{t: t}
	for i, st := range steps {
		if st.flush {
			s.Flush(r)
			continue
		}
		f := uint64(i + 1)
		s.Add(&Segment{
			Seq: st.seq, Flags: st.flags, Payload: []byte(st.data), Frame: f, TS: ts(f),
			WireLen: st.wireLen, Truncated: st.wireLen > len(st.data),
		}, r)
	}
	return s, r.outs
}

func TestScenarios(t *testing.T) {
	const isn = 1000 // data starts at 1001
	syn := seg(isn, SYN, "")
	a10, b10, c10, b40 := strings.Repeat("a", 10), strings.Repeat("b", 10), strings.Repeat("c", 10), strings.Repeat("b", 40)
	tests := []struct {
		name  string
		opts  Options
		steps []step
		want  []out
	}{
		{
			name:  "in order",
			steps: []step{syn, seg(1001, ACK, "hello"), seg(1006, ACK|PSH, "world"), seg(1011, FIN|ACK, "")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), D(0, 1001, "hello", 2), D(5, 1006, "world", 3),
				E(EvFIN, 10, 1011, 0, 4)},
		},
		{
			name:  "data on SYN",
			steps: []step{seg(isn, SYN, "ab"), seg(1003, 0, "cd")},
			want:  []out{E(EvSYN, 0, 1000, 0, 1), D(0, 1001, "ab", 1), D(2, 1003, "cd", 2)},
		},
		{
			name:  "reorder",
			steps: []step{syn, seg(1006, 0, "world"), seg(1001, 0, "hello")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), E(EvOutOfOrder, 5, 1006, 5, 2),
				D(0, 1001, "hello", 3), D(5, 1006, "world", 2)},
		},
		{
			name:  "identical retransmission",
			steps: []step{syn, seg(1001, 0, "hello"), seg(1001, 0, "hello")},
			want:  []out{E(EvSYN, 0, 1000, 0, 1), D(0, 1001, "hello", 2), E(EvRetransmit, 0, 1001, 5, 3)},
		},
		{
			name:  "partial identical overlap",
			steps: []step{syn, seg(1001, 0, "hello"), seg(1004, 0, "loWOR")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), D(0, 1001, "hello", 2),
				E(EvRetransmit, 3, 1004, 2, 3), D(5, 1006, "WOR", 3)},
		},
		{
			name:  "partial conflicting overlap",
			steps: []step{syn, seg(1001, 0, "hello"), seg(1004, 0, "XYwo")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), D(0, 1001, "hello", 2),
				E(EvConflict, 3, 1004, 2, 3), D(5, 1006, "wo", 3)},
		},
		{
			// The held piece "world" wins over the later "WOR".
			name:  "out of order overlapping a held piece",
			steps: []step{syn, seg(1006, 0, "world"), seg(1002, 0, "elloWOR"), seg(1001, 0, "h")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), E(EvOutOfOrder, 5, 1006, 5, 2),
				E(EvOutOfOrder, 1, 1002, 7, 3), E(EvConflict, 5, 1006, 3, 3),
				D(0, 1001, "h", 4), D(1, 1002, "ello", 3), D(5, 1006, "world", 2)},
		},
		{
			name:  "in order segment overlapping a held piece",
			steps: []step{syn, seg(1006, 0, "wor"), seg(1001, 0, "helloWORLD")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), E(EvOutOfOrder, 5, 1006, 3, 2),
				D(0, 1001, "hello", 3), E(EvConflict, 5, 1006, 3, 3), D(5, 1006, "wor", 2),
				D(8, 1009, "LD", 3)},
		},
		{
			name:  "duplicate held piece",
			steps: []step{syn, seg(1006, 0, "world"), seg(1006, 0, "world"), flush},
			want: []out{E(EvSYN, 0, 1000, 0, 1), E(EvOutOfOrder, 5, 1006, 5, 2),
				E(EvOutOfOrder, 5, 1006, 5, 3), E(EvRetransmit, 5, 1006, 5, 3),
				E(EvGap, 0, 1001, 5, 2), D(5, 1006, "world", 2)},
		},
		{
			// After the gap [5, 10) the late octets are reported, not delivered.
			name:  "gap at flush, then late data",
			steps: []step{syn, seg(1001, 0, "hello"), seg(1011, 0, "world"), flush, seg(1006, 0, "XXXXX")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), D(0, 1001, "hello", 2), E(EvOutOfOrder, 10, 1011, 5, 3),
				E(EvGap, 5, 1006, 5, 3), D(10, 1011, "world", 3), E(EvRetransmit, 5, 1006, 5, 5)},
		},
		{
			name: "midstream",
			steps: []step{seg(5000, ACK, "abc"), seg(4997, ACK, "xyz"), seg(4998, ACK, "zzabcd"),
				seg(5000, ACK, "abX")},
			want: []out{E(EvMidstream, 0, 5000, 0, 1), D(0, 5000, "abc", 1),
				E(EvRetransmit, 0, 4997, 3, 2),
				E(EvRetransmit, 0, 4998, 2, 3), E(EvRetransmit, 0, 5000, 3, 3), D(3, 5003, "d", 3),
				E(EvConflict, 0, 5000, 3, 4)},
		},
		{
			name:  "midstream starting with a one-octet segment",
			steps: []step{seg(4999, ACK, "x"), seg(5000, ACK, ""), seg(5000, ACK, "abc")},
			want: []out{E(EvRetransmit, 0, 4999, 1, 1), E(EvMidstream, 0, 5000, 0, 3),
				D(0, 5000, "abc", 3)},
		},
		{
			name: "keepalive",
			steps: []step{syn, seg(1001, 0, "hello"), seg(1005, ACK, "Z"), seg(1005, ACK, ""),
				seg(1006, ACK, "")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), D(0, 1001, "hello", 2),
				E(EvRetransmit, 4, 1005, 1, 3), E(EvRetransmit, 4, 1005, 0, 4)},
		},
		{
			// ISN 2^32-3: the data's sequence numbers run 2^32-2, 2^32-1, 0, 1, ...
			name: "sequence wrap",
			steps: []step{seg(0xFFFFFFFD, SYN, ""), seg(0xFFFFFFFE, 0, "abcd"), seg(2, 0, "efgh"),
				seg(10, 0, "mnop"), seg(6, 0, "ijkl"), seg(14, FIN, "")},
			want: []out{E(EvSYN, 0, 0xFFFFFFFD, 0, 1), D(0, 0xFFFFFFFE, "abcd", 2), D(4, 2, "efgh", 3),
				E(EvOutOfOrder, 12, 10, 4, 4), D(8, 6, "ijkl", 5), D(12, 10, "mnop", 4),
				E(EvFIN, 16, 14, 0, 6)},
		},
		{
			name:  "truncated in order",
			steps: []step{syn, cut(1001, "hel", 5), seg(1006, 0, "world")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), E(EvTruncated, 3, 1004, 2, 2), D(0, 1001, "hel", 2),
				G(3, 1004, 2, 2), D(5, 1006, "world", 3)},
		},
		{
			name:  "truncated out of order",
			steps: []step{syn, cut(1006, "wo", 5), seg(1001, 0, "hello"), seg(1008, 0, "RLD!")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), E(EvTruncated, 7, 1008, 3, 2), E(EvOutOfOrder, 5, 1006, 5, 2),
				D(0, 1001, "hello", 3), D(5, 1006, "wo", 2), G(7, 1008, 3, 2),
				E(EvRetransmit, 7, 1008, 3, 4), D(10, 1011, "!", 4)},
		},
		{
			// The cut part of a segment around a held piece: the octets
			// before the piece were cut; the piece's own were captured.
			name:  "truncated around a held piece",
			steps: []step{syn, seg(1010, 0, "xyz"), cut(1001, "hel", 12), seg(1013, 0, "!")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), E(EvOutOfOrder, 9, 1010, 3, 2), E(EvTruncated, 3, 1004, 9, 3),
				D(0, 1001, "hel", 3), G(3, 1004, 6, 3), E(EvRetransmit, 9, 1010, 3, 3), D(9, 1010, "xyz", 2),
				D(12, 1013, "!", 4)},
		},
		{
			// Cost per piece: octets + 128. Two pieces (276) fit in 300, a
			// third (414) does not: the hole [0, 10) is given up; then the
			// third fits (276).
			name:  "buffer full",
			opts:  Options{MaxBuffered: 300},
			steps: []step{syn, seg(1011, 0, a10), seg(1031, 0, b10), seg(1051, 0, c10), flush},
			want: []out{E(EvSYN, 0, 1000, 0, 1), E(EvOutOfOrder, 10, 1011, 10, 2),
				E(EvOutOfOrder, 30, 1031, 10, 3),
				E(EvBufferFull, 0, 1001, 10, 4), E(EvGap, 0, 1001, 10, 2), D(10, 1011, a10, 2),
				E(EvOutOfOrder, 50, 1051, 10, 4),
				E(EvGap, 20, 1021, 10, 3), D(30, 1031, b10, 3), E(EvGap, 40, 1041, 10, 4), D(50, 1051, c10, 4)},
		},
		{
			// 138 + 168 > 200: after giving up [0, 10) the segment is in order.
			name:  "buffer full, segment becomes in order",
			opts:  Options{MaxBuffered: 200},
			steps: []step{syn, seg(1011, 0, a10), seg(1021, 0, b40)},
			want: []out{E(EvSYN, 0, 1000, 0, 1), E(EvOutOfOrder, 10, 1011, 10, 2),
				E(EvBufferFull, 0, 1001, 10, 3), E(EvGap, 0, 1001, 10, 2), D(10, 1011, a10, 2),
				D(20, 1021, b40, 3)},
		},
		{
			name:  "no buffering",
			opts:  Options{MaxBuffered: -1},
			steps: []step{syn, seg(1006, 0, "world"), seg(1001, 0, "hello")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), E(EvBufferFull, 0, 1001, 5, 2), E(EvGap, 0, 1001, 5, 2),
				D(5, 1006, "world", 2), E(EvRetransmit, 0, 1001, 5, 3)},
		},
		{
			// FIN at 1011 (offset 10). Data after it is past the FIN;
			// the FIN's retransmission is a retransmission.
			name: "FIN out of order, data past FIN, FIN retransmitted",
			steps: []step{syn, seg(1006, FIN, "world"), seg(1001, 0, "hello"), seg(1012, 0, "zz"),
				seg(1006, FIN, "world")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), E(EvOutOfOrder, 5, 1006, 5, 2),
				D(0, 1001, "hello", 3), D(5, 1006, "world", 2), E(EvFIN, 10, 1011, 0, 2),
				E(EvPastFIN, 11, 1012, 2, 4), E(EvRetransmit, 5, 1006, 5, 5)},
		},
		{
			name:  "held data past a later FIN is dropped",
			steps: []step{syn, seg(1009, 0, "xyz"), seg(1006, FIN, "ab"), seg(1001, 0, "hello")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), E(EvOutOfOrder, 8, 1009, 3, 2),
				E(EvOutOfOrder, 5, 1006, 2, 3), E(EvPastFIN, 8, 1009, 3, 2),
				D(0, 1001, "hello", 4), D(5, 1006, "ab", 3), E(EvFIN, 7, 1008, 0, 3)},
		},
		{
			name:  "FIN beyond a hole, at flush",
			steps: []step{syn, seg(1001, 0, "hello"), seg(1011, FIN, ""), flush},
			want: []out{E(EvSYN, 0, 1000, 0, 1), D(0, 1001, "hello", 2),
				E(EvGap, 5, 1006, 5, 3), E(EvFIN, 10, 1011, 0, 3)},
		},
		{
			name:  "second FIN elsewhere",
			steps: []step{syn, seg(1001, FIN, "hello"), seg(1003, FIN, "")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), D(0, 1001, "hello", 2), E(EvFIN, 5, 1006, 0, 2),
				E(EvConflict, 2, 1003, 0, 3)},
		},
		{
			name:  "RST",
			steps: []step{syn, seg(1001, 0, "hello"), seg(1006, RST, "")},
			want:  []out{E(EvSYN, 0, 1000, 0, 1), D(0, 1001, "hello", 2), E(EvRST, 5, 1006, 0, 3)},
		},
		{
			name:  "RST before anything",
			steps: []step{seg(77, RST, "")},
			want:  []out{E(EvRST, 0, 77, 0, 1)},
		},
		{
			// 7778 - 1001 = 6777.
			name:  "SYN retransmitted, then a different SYN",
			steps: []step{syn, seg(isn, SYN, ""), seg(7777, SYN, "zz"), seg(1001, 0, "ok")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), E(EvConflict, 6777, 7777, 0, 3),
				D(0, 1001, "ok", 4)},
		},
		{
			name:  "SYN after midstream data",
			steps: []step{seg(1001, 0, "abc"), seg(isn, SYN, "")},
			want:  []out{E(EvMidstream, 0, 1001, 0, 1), D(0, 1001, "abc", 1), E(EvSYN, 0, 1000, 0, 2)},
		},
		{
			name:  "zero-length segments",
			steps: []step{syn, seg(1001, ACK, ""), seg(1050, ACK, ""), seg(900, ACK, ""), seg(1001, 0, "a")},
			want:  []out{E(EvSYN, 0, 1000, 0, 1), D(0, 1001, "a", 5)},
		},
		{
			// Window 4: only offsets [6, 10) can be compared. The overlap
			// [0, 10) differs only at offset 0, which is outside the window.
			name:  "overlap older than the window",
			opts:  Options{Window: 4},
			steps: []step{syn, seg(1001, 0, "0123456789"), seg(1001, 0, "X123456789"), seg(1001, 0, "012345678X")},
			want: []out{E(EvSYN, 0, 1000, 0, 1), D(0, 1001, "0123456789", 2),
				E(EvRetransmit, 0, 1001, 10, 3), E(EvConflict, 0, 1001, 10, 4)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := run(t, tt.opts, tt.steps)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got:\n%s\nwant:\n%s", lines(got), lines(tt.want))
			}
		})
	}
}

func lines(o []out) string {
	var b strings.Builder
	for _, x := range o {
		b.WriteString("\t" + x.String() + "\n")
	}
	return b.String()
}

func TestAccessors(t *testing.T) {
	s := NewStream(Options{})
	if _, ok := s.NextSeq(); ok {
		t.Error("NextSeq ok before any segment")
	}
	if _, ok := s.ISN(); ok {
		t.Error("ISN ok before any segment")
	}
	r := &recorder{t: t}
	s.Add(&Segment{Seq: 1000, Flags: SYN, TS: ts(0)}, r)
	s.Add(&Segment{Seq: 1011, Payload: []byte("world"), TS: ts(0)}, r)
	if isn, ok := s.ISN(); !ok || isn != 1000 {
		t.Errorf("ISN = %d, %v; want 1000, true", isn, ok)
	}
	if n, ok := s.NextSeq(); !ok || n != 1001 {
		t.Errorf("NextSeq = %d, %v; want 1001, true", n, ok)
	}
	if s.Buffered() != 5 {
		t.Errorf("Buffered = %d, want 5", s.Buffered())
	}
	s.Add(&Segment{Seq: 1001, Payload: []byte("helloHELLO"), TS: ts(0)}, r)
	s.Add(&Segment{Seq: 1016, Flags: FIN, TS: ts(0)}, r)
	if s.Buffered() != 0 {
		t.Errorf("Buffered = %d, want 0", s.Buffered())
	}
	// Data up to 1016, FIN at 1016: next is 1017.
	if n, _ := s.NextSeq(); n != 1017 {
		t.Errorf("NextSeq after FIN = %d, want 1017", n)
	}
}

// TestLongStream crosses 2^32 octets of offset (and so wraps the sequence
// number once more) with in-order 64 KiB segments.
func TestLongStream(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 4 GiB")
	}
	const segLen = 64 << 10
	payload := make([]byte, segLen)
	s := NewStream(Options{})
	var h countHandler
	isn := SeqNum(0x80000000)
	s.Add(&Segment{Seq: isn, Flags: SYN}, &h)
	seq := isn.Add(1)
	const n = (1<<32)/segLen + 16
	for range n {
		s.Add(&Segment{Seq: seq, Payload: payload}, &h)
		seq = seq.Add(segLen)
	}
	total := uint64(n) * segLen
	if h.bytes != total || h.lastEnd != total || h.events != 1 {
		t.Fatalf("delivered %d octets ending at %d, %d events; want %d, %d, 1", h.bytes, h.lastEnd, h.events, total, total)
	}
	// (2^31 + 1 + 2^32 + 2^20) mod 2^32 = 2^31 + 1 + 2^20.
	if next, _ := s.NextSeq(); next != seq || next != SeqNum(0x80000000+1+16*segLen) {
		t.Fatalf("NextSeq = %d, want %d", next, 0x80000000+1+16*segLen)
	}
	// A retransmission of the last segment is recognised across the wraps.
	s.Add(&Segment{Seq: seq.Add(-segLen), Payload: payload}, &h)
	if h.last != EvRetransmit {
		t.Fatalf("last event %v, want Retransmit", h.last)
	}
}

type countHandler struct {
	bytes, lastEnd uint64
	events         int
	last           EventKind
}

func (h *countHandler) Data(c *Chunk) {
	h.bytes += uint64(len(c.Data))
	h.lastEnd = c.Off + uint64(len(c.Data))
}

func (h *countHandler) Event(e Event) { h.events++; h.last = e.Kind }

type nopHandler struct{}

func (nopHandler) Data(*Chunk) {}
func (nopHandler) Event(Event) {}

func TestInOrderNoAllocs(t *testing.T) {
	s := NewStream(Options{})
	payload := make([]byte, 1460)
	seq := SeqNum(1)
	var h nopHandler
	s.Add(&Segment{Seq: 0, Flags: SYN}, h)
	// The history ring grows to the window over the first segments.
	s.Add(&Segment{Seq: seq, Payload: payload}, h)
	for range 64 {
		seq = seq.Add(len(payload))
		s.Add(&Segment{Seq: seq, Payload: payload}, h)
	}
	seq = seq.Add(len(payload))
	now := time.Now()
	if n := testing.AllocsPerRun(1000, func() {
		s.Add(&Segment{Seq: seq, Flags: ACK | PSH, Payload: payload, Frame: 7, TS: now}, h)
		seq = seq.Add(len(payload))
	}); n != 0 {
		t.Errorf("in-order Add allocates %v times per segment, want 0", n)
	}
	// Retransmissions and keepalives do not allocate either.
	if n := testing.AllocsPerRun(1000, func() {
		s.Add(&Segment{Seq: seq.Add(-len(payload)), Payload: payload}, h)
		s.Add(&Segment{Seq: seq.Add(-1), Payload: payload[:1]}, h)
	}); n != 0 {
		t.Errorf("retransmission allocates %v times, want 0", n)
	}
}

func BenchmarkInOrder1460(b *testing.B) {
	s := NewStream(Options{})
	payload := make([]byte, 1460)
	var h nopHandler
	s.Add(&Segment{Seq: 0, Flags: SYN}, h)
	seq := SeqNum(1)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		s.Add(&Segment{Seq: seq, Flags: ACK, Payload: payload}, h)
		seq = seq.Add(len(payload))
	}
}

// BenchmarkReorder1460 swaps every pair of segments: half go through the
// buffer.
func BenchmarkReorder1460(b *testing.B) {
	s := NewStream(Options{})
	payload := make([]byte, 1460)
	var h nopHandler
	s.Add(&Segment{Seq: 0, Flags: SYN}, h)
	seq := SeqNum(1)
	b.SetBytes(2 * int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		s.Add(&Segment{Seq: seq.Add(len(payload)), Payload: payload}, h)
		s.Add(&Segment{Seq: seq, Payload: payload}, h)
		seq = seq.Add(2 * len(payload))
	}
}

// TestAcked: the history goes once the other side acknowledges the FIN,
// and not before: a conflicting copy of delivered octets is reported
// while the FIN is unacknowledged (or acknowledged short of it, or before
// the FIN was reached), and counts as equal once it is.
func TestAcked(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ack      SeqNum
		fin      bool // the FIN is sent and reached
		conflict bool
	}{
		{"fin acked", 106, true, false},
		{"fin not acked", 105, true, true},
		{"ack past the fin", 107, true, true}, // not an acknowledgment of this FIN
		{"no fin", 106, false, true},
		{"data acked, no fin", 105, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, file := range []bool{false, true} {
				s := NewStream(Options{})
				r := &recorder{t: t}
				add := func(f uint64, seq SeqNum, flags Flags, data string) {
					seg := Segment{Seq: seq, Flags: flags, Payload: []byte(data), Frame: f, TS: ts(f)}
					if file && len(data) > 0 {
						s.file = strings.NewReader("....hello")
						seg.FilePos = 4
					}
					s.Add(&seg, r)
				}
				add(1, 99, SYN, "")
				add(2, 100, ACK, "hello")
				if tc.fin {
					add(3, 105, FIN|ACK, "")
				}
				s.Acked(tc.ack)
				add(4, 100, ACK, "jello") // a copy that differs
				got := slices.ContainsFunc(r.outs, func(o out) bool { return o.Kind == EvConflict })
				if got != tc.conflict {
					t.Errorf("file %v: conflict %v, want %v: %v", file, got, tc.conflict, r.outs)
				}
			}
		})
	}
}

// TestPeerAck: a hole the peer acknowledges past (capture loss) is given
// up once ackedHoleCost octets wait behind it, with the EvGap and the
// frame of the first octets after it, and what follows is delivered; one
// it does not acknowledge past, or with an acknowledgment of octets not
// yet seen, waits for its octets (or the full buffer). A copy that comes
// before the cost is reached still fills the hole.
func TestPeerAck(t *testing.T) {
	const segLen = 1000
	payload := strings.Repeat("x", segLen)
	// Segment 0 (seq 1000) is missing; segments 1..n follow.
	feed := func(s *Stream, r *recorder, n int) {
		for i := 1; i <= n; i++ {
			f := uint64(i + 1)
			s.Add(&Segment{Seq: SeqNum(1000 + i*segLen), Flags: ACK, Payload: []byte(payload), Frame: f, TS: ts(f)}, r)
		}
	}
	enough := ackedHoleCost/(segLen+pieceCost) + 1
	for _, tc := range []struct {
		name   string
		held   int    // segments held behind the hole
		ack    SeqNum // the peer's acknowledgment
		filled bool   // the hole is given up
	}{
		{"acked past, enough held", enough, SeqNum(1000 + 2*segLen), true},
		{"acked past all held", enough, SeqNum(1000 + (enough+1)*segLen), true},
		{"acked past, too little held", enough - 2, SeqNum(1000 + 2*segLen), false},
		{"acked up to the hole", enough, SeqNum(1000), false},
		{"acked inside the hole", enough, SeqNum(1500), false},
		{"acked past what was seen", enough, SeqNum(1000 + (enough+1)*segLen + 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStream(Options{})
			r := &recorder{t: t}
			s.Add(&Segment{Seq: 999, Flags: SYN, Frame: 1, TS: ts(1)}, r)
			feed(s, r, tc.held)
			if !s.Holding() {
				t.Fatal("nothing held behind the hole")
			}
			r.outs = nil
			s.PeerAck(tc.ack, r)
			if got := !s.Holding(); got != tc.filled {
				t.Fatalf("given up %v, want %v: %v", got, tc.filled, r.outs)
			}
			if !tc.filled {
				if len(r.outs) != 0 {
					t.Errorf("events without giving up: %v", r.outs)
				}
				return
			}
			if len(r.outs) != 1+tc.held || r.outs[0] != E(EvGap, 0, 1000, segLen, 2) || r.outs[1] != D(segLen, 2000, payload, 2) {
				t.Errorf("got %d outputs, first %v; want the gap at frame 2 and %d segments", len(r.outs), r.outs[:min(2, len(r.outs))], tc.held)
			}
		})
	}
	// The missing segment comes (merged captures, clocks apart) while less
	// than the cost is held: it fills the hole.
	s := NewStream(Options{})
	r := &recorder{t: t}
	s.Add(&Segment{Seq: 999, Flags: SYN, Frame: 1, TS: ts(1)}, r)
	feed(s, r, 3)
	s.PeerAck(SeqNum(1000+4*segLen), r)
	s.Add(&Segment{Seq: 1000, Flags: ACK, Payload: []byte(payload), Frame: 9, TS: ts(9)}, r)
	if s.Holding() || slices.ContainsFunc(r.outs, func(o out) bool { return o.Kind == EvGap }) {
		t.Errorf("a late copy of the missing segment: %v", r.outs)
	}
}

// TestOtherSYN: a SYN belongs to the stream when it is the stream's own
// (its initial sequence number, or the one just before the first octet of
// a stream whose SYN was not seen: the SYN takes one sequence number,
// RFC 9293 §3.4); any other SYN, wrap included, belongs to a new
// connection on the same endpoints, and Add calls it a conflict.
func TestOtherSYN(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
		syn   SeqNum
		other bool
	}{
		{"not started", nil, 77, false},
		{"pure ACK gives no origin", []step{seg(1000, ACK, "")}, 77, false},
		{"same ISN", []step{seg(1000, SYN, ""), seg(1001, ACK, "abcd")}, 1000, false},
		{"new ISN", []step{seg(1000, SYN, ""), seg(1001, ACK, "abcd")}, 3000000000, true},
		{"new ISN one below", []step{seg(1000, SYN, ""), seg(1001, ACK, "abcd")}, 999, true},
		{"new ISN at the next octet", []step{seg(1000, SYN, ""), seg(1001, ACK, "abcd")}, 1005, true},
		{"wrapped ISN, same", []step{seg(0xffffffff, SYN, ""), seg(0, ACK, "abcd")}, 0xffffffff, false},
		{"mid-stream, its SYN", []step{seg(5001, ACK, "abcd")}, 5000, false},
		{"mid-stream, its SYN across the wrap", []step{seg(0, ACK, "abcd")}, 0xffffffff, false},
		{"mid-stream, another SYN", []step{seg(5001, ACK, "abcd")}, 9000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := run(t, Options{}, tc.steps)
			if got := s.OtherSYN(tc.syn); got != tc.other {
				t.Errorf("OtherSYN(%d) = %v, want %v", tc.syn, got, tc.other)
			}
			if tc.other {
				// Add agrees: the SYN is a conflict.
				r := &recorder{t: t}
				s.Add(&Segment{Seq: tc.syn, Flags: SYN, Frame: 99, TS: ts(99)}, r)
				if len(r.outs) != 1 || r.outs[0].Kind != EvConflict {
					t.Errorf("Add(SYN %d) = %v, want one EvConflict", tc.syn, r.outs)
				}
			}
		})
	}
}

package reassembly

import (
	"bytes"
	"io"
	"slices"
	"sync"
	"time"
)

const (
	// DefaultMaxBuffered is Options.MaxBuffered when left 0: 4 MiB.
	DefaultMaxBuffered = 4 << 20
	// DefaultWindow is Options.Window when left 0: 64 KiB.
	DefaultWindow = 64 << 10

	// pieceCost is the bookkeeping charged to the buffer cap per held piece
	// (its descriptor and allocation overhead), so that many tiny (or empty,
	// fully truncated) pieces stay bounded too.
	pieceCost = 128
	// Recycled piece buffers: at most freeMax of at most freeCap octets.
	freeMax = 16
	freeCap = 2048

	// maxWireLen caps Segment.WireLen, so that a corrupt length cannot
	// stretch a segment across half the sequence space.
	maxWireLen = 1 << 30
)

// piece is a run of out-of-order octets held in the buffer: data was
// captured, the miss octets after it were cut by the snaplen.
type piece struct {
	off   uint64
	seq   SeqNum
	data  []byte
	miss  int
	frame uint64
	ts    time.Time
}

func (p *piece) end() uint64 { return p.off + uint64(len(p.data)) + uint64(p.miss) }

// Stream reassembles one direction of a TCP connection. The zero value is
// not usable: call NewStream. A Stream is not safe for concurrent use.
type Stream struct {
	maxBuf int
	window int

	started   bool
	haveISN   bool
	isn       SeqNum
	originSeq SeqNum

	// The next octet the stream expects: offset and sequence number.
	nextOff uint64
	nextSeq SeqNum
	// ch is the Chunk handed to Handler.Data (handData).
	ch Chunk

	finKnown bool
	finDone  bool
	finAcked bool // Acked: the FIN was acknowledged
	finOff   uint64
	finSeq   SeqNum
	finFrame uint64
	finTS    time.Time

	// Out-of-order pieces, sorted by offset, disjoint, all after nextOff:
	// pieces[head:] are live.
	pieces   []piece
	head     int
	bufBytes int // captured octets held
	bufCost  int // bufBytes + pieceCost per piece
	ackHole  int // ackedHoleCost (tests lower it)
	free     [][]byte

	// Ring of the last window delivered octets: the octet at offset o is
	// hist[o % len(hist)] for histStart <= o < nextOff, o+window >=
	// nextOff, unless one of refs[rhead:] holds it. It grows to the
	// window as the octets since histStart need (remember), so it holds
	// all of them until it is a window long.
	hist      []byte
	histStart uint64
	// Delivered octets of Segments with a FilePos, in offset order: where
	// they are in file, instead of a copy in hist.
	file    io.ReaderAt
	refs    []fileRef
	rhead   int
	scratch []byte // what same reads back from file
}

// fileRef says that the n delivered octets at stream offset off are at
// offset pos of Options.File.
type fileRef struct {
	off uint64
	pos int64
	n   int
}

// maxRefs bounds the fileRefs a Stream keeps; past it, delivered octets
// are copied into the window as those of Segments without a FilePos are.
const maxRefs = 128

// scratchLen is the size of the buffer same reads File into.
const scratchLen = 4096

// NewStream returns an empty Stream.
func NewStream(opts Options) *Stream {
	s := new(Stream)
	s.init(opts)
	return s
}

// Reset makes s a new stream under opts, as NewStream does, keeping the
// storage of its out-of-order pieces for reuse.
func (s *Stream) Reset(opts Options) {
	pieces, free := s.pieces, s.free
	clear(pieces[:cap(pieces)])
	putRing(s.hist)
	*s = Stream{}
	s.init(opts)
	s.pieces, s.free = pieces[:0], free
}

func (s *Stream) init(opts Options) {
	s.maxBuf, s.window, s.file = opts.MaxBuffered, opts.Window, opts.File
	s.ackHole = ackedHoleCost
	switch {
	case s.maxBuf == 0:
		s.maxBuf = DefaultMaxBuffered
	case s.maxBuf < 0:
		s.maxBuf = 0
	}
	switch {
	case s.window == 0:
		s.window = DefaultWindow
	case s.window < 0:
		s.window = 0
	}
}

// NextSeq returns the sequence number the stream expects next (past the
// FIN once the FIN was reached) and whether the stream has started.
func (s *Stream) NextSeq() (SeqNum, bool) {
	if s.finDone {
		return s.nextSeq.Add(1), s.started
	}
	return s.nextSeq, s.started
}

// Acked tells the stream that the other side acknowledged its octets up to
// ack. Once that covers the FIN, every octet the stream will carry has been
// delivered and acknowledged: nothing but a spurious copy can come again,
// so the history of delivered octets kept to compare retransmissions with
// is given back (a copy that comes all the same counts as equal, as octets
// no longer in the history do). A capture of many short connections kept
// it for every connection it ever had.
func (s *Stream) Acked(ack SeqNum) {
	if !s.finDone || s.finAcked || ack != s.finSeq.Add(1) {
		return
	}
	s.finAcked = true
	s.Forget()
}

// FinAcked reports whether the stream reached its FIN and the other side
// acknowledged it (Acked): the stream is over.
func (s *Stream) FinAcked() bool { return s.finAcked }

// Forget gives back the history of delivered octets (see Acked): later
// retransmissions of them count as equal.
func (s *Stream) Forget() {
	putRing(s.hist)
	s.hist, s.histStart = nil, s.nextOff
	s.refs, s.rhead, s.scratch = nil, 0, nil
}

// ISN returns the initial sequence number, if the SYN was seen.
func (s *Stream) ISN() (SeqNum, bool) { return s.isn, s.haveISN }

// OtherSYN reports whether a SYN with sequence number seq contradicts what
// the stream knows of its start: the stream has started, and seq is
// neither its initial sequence number nor, when the SYN was not seen, the
// one just before its first octet. Such a SYN belongs to a new connection
// on the same endpoints (RFC 9293 §3.4: a new incarnation picks a new
// ISN); Add would report it as EvConflict.
func (s *Stream) OtherSYN(seq SeqNum) bool {
	if !s.started {
		return false
	}
	if s.haveISN {
		return seq != s.isn
	}
	return seq.Add(1) != s.originSeq
}

// Buffered returns the number of captured out-of-order octets held.
func (s *Stream) Buffered() int { return s.bufBytes }

// Add feeds one segment, in capture order. In-order octets go to h.Data at
// once, without copying; octets ahead of a hole are copied into the buffer
// and delivered when the hole fills (or is given up); octets already
// delivered are compared with the retained window and reported. See the
// package documentation for the events.
func (s *Stream) Add(seg *Segment, h Handler) {
	wire := max(min(seg.WireLen, maxWireLen), len(seg.Payload))
	seq := seg.Seq // sequence number of the first payload octet
	if seg.Flags&SYN != 0 {
		if !s.syn(seg, h) {
			return
		}
		seq = seg.Seq.Add(1)
	}
	if !s.started {
		if seg.Flags&FIN == 0 && wire <= 1 {
			// A pure ACK, a window probe or a keepalive gives no origin.
			if wire == 1 {
				s.event(h, EvRetransmit, 0, seq, 1, seg)
			}
			if seg.Flags&RST != 0 {
				s.event(h, EvRST, 0, seg.Seq, 0, seg)
			}
			return
		}
		s.begin(seq)
		s.event(h, EvMidstream, 0, seq, 0, seg)
	}
	if wire > 0 {
		s.data(seg, seq, wire, h)
	} else if seg.Flags&(SYN|FIN|RST) == 0 && !s.finDone && s.nextOff > 0 && s.offOf(seq) == int64(s.nextOff)-1 {
		s.event(h, EvRetransmit, s.nextOff-1, seq, 0, seg) // keepalive probe
	}
	if seg.Flags&FIN != 0 {
		s.fin(seq.Add(wire), seg, h)
	}
	s.settle(h)
	if seg.Flags&RST != 0 {
		s.event(h, EvRST, clampOff(s.offOf(seg.Seq)), seg.Seq, 0, seg)
	}
}

// ackedHoleCost is what a Stream holds (Stream.bufCost) behind a hole that
// the peer has acknowledged past before it gives the hole up (PeerAck).
const ackedHoleCost = 256 << 10

// Holding reports whether out-of-order octets wait behind a hole.
func (s *Stream) Holding() bool { return s.head < len(s.pieces) }

// PeerAck notes an acknowledgment number that the other direction sent:
// its receiver has every octet before it (RFC 9293 §3.4). A hole it
// acknowledges past was received but not captured (capture loss, as
// tcpdump's "dropped by kernel"), and no retransmission will fill it.
// Once ackedHoleCost of octets wait behind such a hole, it is given up
// (EvGap) and what follows is delivered, rather than held until the buffer
// is full (MaxBuffered, 4 MiB). Until then a copy of the octets may still
// come, from a capture merged from two hosts whose clocks differ. An
// acknowledgment past the octets held (of octets not yet seen) is ignored.
func (s *Stream) PeerAck(ack SeqNum, h Handler) {
	for s.head < len(s.pieces) && s.bufCost >= s.ackHole {
		p, last := &s.pieces[s.head], &s.pieces[len(s.pieces)-1]
		if ack.Diff(p.seq) < 0 || ack.Diff(last.seq.Add(int(last.end()-last.off))) > 0 {
			return
		}
		s.gap(p.off-s.nextOff, p.frame, p.ts, h)
		s.drain(h)
	}
}

// Flush gives up on every hole: each is reported as an EvGap and what is
// buffered is delivered in order, up to the FIN if one is known (which is
// then reported). Call it at the end of the capture, or after a FIN or RST
// when no more data is expected. The stream stays usable.
func (s *Stream) Flush(h Handler) {
	for s.head < len(s.pieces) {
		p := &s.pieces[s.head]
		if p.off > s.nextOff {
			s.gap(p.off-s.nextOff, p.frame, p.ts, h)
		}
		s.drain(h)
	}
	if s.finKnown && !s.finDone && s.finOff > s.nextOff {
		s.gap(s.finOff-s.nextOff, s.finFrame, s.finTS, h)
	}
	s.settle(h)
}

func (s *Stream) event(h Handler, k EventKind, off uint64, seq SeqNum, n int, seg *Segment) {
	h.Event(Event{Kind: k, Off: off, Seq: seq, Len: n, Frame: seg.Frame, TS: seg.TS})
}

// begin sets the stream origin: offset 0 is sequence number seq.
func (s *Stream) begin(seq SeqNum) {
	s.started = true
	s.originSeq = seq
	s.nextSeq = seq
	s.nextOff = 0
	s.histStart = 0
}

// offOf maps a sequence number to a (possibly negative) stream offset,
// relative to the next expected octet.
func (s *Stream) offOf(seq SeqNum) int64 {
	return int64(s.nextOff) + int64(seq.Diff(s.nextSeq))
}

func clampOff(off int64) uint64 {
	if off < 0 {
		return 0
	}
	return uint64(off)
}

// syn handles the SYN flag and reports whether the segment's data should
// be processed.
func (s *Stream) syn(seg *Segment, h Handler) bool {
	switch {
	case !s.started:
		s.haveISN, s.isn = true, seg.Seq
		s.begin(seg.Seq.Add(1))
	case s.haveISN:
		if seg.Seq == s.isn {
			return true // retransmitted SYN
		}
		s.event(h, EvConflict, clampOff(s.offOf(seg.Seq.Add(1))), seg.Seq, 0, seg)
		return false
	case seg.Seq.Add(1) == s.originSeq:
		// The SYN arrives after the first data of a stream that started
		// without it, and agrees with it.
		s.haveISN, s.isn = true, seg.Seq
	default:
		s.event(h, EvConflict, clampOff(s.offOf(seg.Seq.Add(1))), seg.Seq, 0, seg)
		return false
	}
	s.event(h, EvSYN, 0, seg.Seq, 0, seg)
	return true
}

// fin records the FIN at sequence number pos.
func (s *Stream) fin(pos SeqNum, seg *Segment, h Handler) {
	if s.finKnown && pos == s.finSeq {
		return // retransmitted FIN
	}
	off := s.offOf(pos)
	if s.finKnown || off < int64(s.nextOff) {
		// A second FIN elsewhere, or one before octets already delivered.
		s.event(h, EvConflict, clampOff(off), pos, 0, seg)
		return
	}
	s.finKnown = true
	s.finOff, s.finSeq = uint64(off), pos
	s.finFrame, s.finTS = seg.Frame, seg.TS
	s.cutPieces(s.finOff, h)
}

// settle reports the FIN once the stream has reached it.
func (s *Stream) settle(h Handler) {
	if s.finKnown && !s.finDone && s.nextOff == s.finOff {
		s.finDone = true
		h.Event(Event{Kind: EvFIN, Off: s.finOff, Seq: s.finSeq, Frame: s.finFrame, TS: s.finTS})
	}
}

// data handles the wire octets of a segment (payload, and the octets the
// capture cut after it) starting at sequence number seq.
func (s *Stream) data(seg *Segment, seq SeqNum, wire int, h Handler) {
	payload := seg.Payload
	rel := s.offOf(seq)
	if miss := wire - len(payload); miss > 0 {
		s.event(h, EvTruncated, clampOff(rel+int64(len(payload))), seq.Add(len(payload)), miss, seg)
	}
	// Keepalive probe: one octet just below the next expected one, often
	// garbage: not compared.
	if wire == 1 && !s.finDone && s.nextOff > 0 && rel == int64(s.nextOff)-1 {
		s.event(h, EvRetransmit, s.nextOff-1, seq, 1, seg)
		return
	}
	// skip drops the first n octets of the segment.
	skip := func(n int) {
		seq = seq.Add(n)
		rel += int64(n)
		wire -= n
		payload = payload[min(n, len(payload)):]
	}
	if rel < 0 {
		// Before the origin: never captured, never delivered.
		n := int(min(-rel, int64(wire)))
		s.event(h, EvRetransmit, 0, seq, n, seg)
		if skip(n); wire == 0 {
			return
		}
	}
	if s.finKnown && rel+int64(wire) > int64(s.finOff) {
		from := max(rel, int64(s.finOff))
		n := int(rel + int64(wire) - from)
		s.event(h, EvPastFIN, uint64(from), seq.Add(int(from-rel)), n, seg)
		wire -= n
		payload = payload[:min(len(payload), wire)]
		if wire == 0 {
			return
		}
	}
	for {
		if next := int64(s.nextOff); rel < next {
			n := int(min(next-rel, int64(wire)))
			s.overlapDelivered(uint64(rel), seq, payload[:min(n, len(payload))], n, seg, h)
			if skip(n); wire == 0 {
				return
			}
		}
		if uint64(rel) == s.nextOff {
			s.inOrder(seq, payload, wire, seg, h)
			return
		}
		if s.bufCost+s.cost(uint64(rel), len(payload), wire) <= s.maxBuf {
			s.hold(uint64(rel), seq, payload, wire, seg, h)
			return
		}
		s.forceSkip(uint64(rel), seg, h)
	}
}

// inOrder delivers a segment that starts at nextOff. Where held pieces
// overlap it, the pieces win (first copy wins).
func (s *Stream) inOrder(seq SeqNum, payload []byte, wire int, seg *Segment, h Handler) {
	off := s.nextOff
	end := off + uint64(wire)
	if s.head == len(s.pieces) || s.pieces[s.head].off >= end {
		// Fast path: nothing held inside this segment.
		s.deliverFrom(payload, seg, h)
		if miss := wire - len(payload); miss > 0 {
			s.cutGap(uint64(miss), seg.Frame, seg.TS, h)
		}
		s.drain(h)
		return
	}
	for s.nextOff < end {
		cur := s.nextOff
		if s.head < len(s.pieces) && s.pieces[s.head].off == cur {
			p := &s.pieces[s.head]
			s.overlapPiece(off, seq, payload, cur, min(end, p.end()), p, seg, h)
			s.deliverPiece(h)
			continue
		}
		pe := end
		if s.head < len(s.pieces) {
			pe = min(pe, s.pieces[s.head].off)
		}
		i0, i1 := cur-off, pe-off
		n := uint64(len(payload))
		if i0 < n {
			s.deliverFrom(payload[i0:min(i1, n)], seg, h)
		}
		if i1 > n {
			s.cutGap(i1-max(i0, n), seg.Frame, seg.TS, h)
		}
	}
	s.drain(h)
}

// deliverFrom hands in-order octets of seg, b (a part of its Payload), to
// the handler and remembers them: where they are in File, when seg has a
// FilePos, or a copy.
func (s *Stream) deliverFrom(b []byte, seg *Segment, h Handler) {
	if seg.FilePos <= 0 || s.file == nil || s.window <= 0 || len(b) == 0 || len(s.refs)-s.rhead >= maxRefs {
		s.deliver(b, seg.Frame, seg.TS, h)
		return
	}
	// b was cut from Payload without a capacity limit: its start is the
	// capacity it lost.
	i := cap(seg.Payload) - cap(b)
	if i < 0 || i >= len(seg.Payload) || &seg.Payload[i] != &b[0] {
		s.deliver(b, seg.Frame, seg.TS, h)
		return
	}
	s.handData(b, seg.Frame, seg.TS, h)
	s.keepRef(seg.FilePos+int64(i), len(b))
	s.nextOff += uint64(len(b))
	s.nextSeq = s.nextSeq.Add(len(b))
}

// keepRef remembers that the n octets delivered at nextOff are at offset
// pos of File, and forgets the refs that fall out of the window.
func (s *Stream) keepRef(pos int64, n int) {
	w := uint64(s.window)
	end := s.nextOff + uint64(n)
	for s.rhead < len(s.refs) && s.refs[s.rhead].off+uint64(s.refs[s.rhead].n)+w <= end {
		s.rhead++
	}
	if s.rhead == len(s.refs) {
		s.refs, s.rhead = s.refs[:0], 0
	} else if s.rhead >= maxRefs/2 {
		m := copy(s.refs, s.refs[s.rhead:])
		s.refs, s.rhead = s.refs[:m], 0
	}
	s.refs = append(s.refs, fileRef{off: s.nextOff, pos: pos, n: n})
}

// deliver hands in-order octets to the handler and remembers them.
func (s *Stream) deliver(b []byte, frame uint64, ts time.Time, h Handler) {
	if len(b) == 0 {
		return
	}
	s.handData(b, frame, ts, h)
	s.remember(b)
	s.nextOff += uint64(len(b))
	s.nextSeq = s.nextSeq.Add(len(b))
}

// handData hands h.Data the octets b at nextOff, from frame at ts, in
// s.ch set field by field: a Chunk literal passed by value is built aside
// and copied to the call's arguments, and the copy's loads stalled on the
// stores just made (a store-to-load forwarding failure; 1 % of a flows
// -j 1 profile's samples); a pointer to a local one would escape through
// the interface.
func (s *Stream) handData(b []byte, frame uint64, ts time.Time, h Handler) {
	c := &s.ch
	c.Off, c.Seq, c.Data, c.Frame, c.TS = s.nextOff, s.nextSeq, b, frame, ts
	h.Data(c)
	c.Data = nil // not kept past the call
}

// gap skips n octets that will never be delivered.
func (s *Stream) gap(n uint64, frame uint64, ts time.Time, h Handler) {
	s.skipGap(n, frame, ts, false, h)
}

// cutGap skips the n octets after a segment's captured payload that the
// capture cut (snap length).
func (s *Stream) cutGap(n uint64, frame uint64, ts time.Time, h Handler) {
	s.skipGap(n, frame, ts, true, h)
}

func (s *Stream) skipGap(n uint64, frame uint64, ts time.Time, cut bool, h Handler) {
	if n == 0 {
		return
	}
	h.Event(Event{Kind: EvGap, Off: s.nextOff, Seq: s.nextSeq, Len: int(n), Frame: frame, TS: ts, Cut: cut})
	s.nextOff += n
	s.nextSeq = s.nextSeq.Add(int(n))
	s.histStart = s.nextOff
	s.refs, s.rhead = s.refs[:0], 0
}

// remember copies delivered octets (at nextOff) into the history ring,
// growing it first if the octets since histStart no longer fit.
func (s *Stream) remember(b []byte) {
	w := s.window
	if w == 0 {
		return
	}
	off := s.nextOff
	if len(b) > w {
		off += uint64(len(b) - w)
		b = b[len(b)-w:]
	}
	if need := min(uint64(w), off+uint64(len(b))-s.histStart); need > uint64(len(s.hist)) {
		s.grow(int(need))
	}
	i := int(off % uint64(len(s.hist)))
	n := copy(s.hist[i:], b)
	copy(s.hist, b[n:])
}

// minHist is the history ring's first size. The ring starts small and
// grows fourfold up to the window: a ring of the whole window (64 KiB)
// for every direction of every connection, however few octets it carried,
// made 12.5 GB of garbage of 100,000 connections reset after 16 KB each
// (read from a pipe, or indexed by iwarptui, where the delivered octets
// are not read back from the file), and took 6.2 s against 2.6 s read
// from the file. (Doubling left more outgrown rings to collect: 2,000
// connections open at once peaked at 158 MiB rather than 136.)
const minHist = 4 << 10

// grow replaces the history ring with one of at least need octets (at
// most the window), four times as large or one given back, and moves the
// octets it holds to their places in it.
func (s *Stream) grow(need int) {
	old := s.hist
	n := max(4*len(old), minHist)
	for n < need {
		n *= 4
	}
	n = min(n, s.window)
	h := getRing(n, s.window)
	if l := uint64(len(old)); l > 0 {
		lo := s.histStart
		if s.nextOff > l {
			lo = max(lo, s.nextOff-l)
		}
		for o := lo; o < s.nextOff; {
			i, j := int(o%l), int(o%uint64(len(h)))
			k := min(int(s.nextOff-o), len(old)-i, len(h)-j)
			copy(h[j:j+k], old[i:i+k])
			o += uint64(k)
		}
	}
	s.hist = h
}

// The history rings of the sizes grow makes from minHist on, given back
// by streams whose history was forgotten (a reset, the FIN acknowledged)
// or that were reset for reuse, for the streams that come after: a
// capture of many short connections made rings for each of their
// directions where a few at a time are in use. A ring's octets are stale
// when it is taken: a Stream reads only those it wrote since (histStart,
// nextOff). (Rings outgrown are left to the collector: given back too,
// 2,000 connections open at once left theirs in the pools, and peaked at
// 168 MiB rather than 136.)
var rings [5]sync.Pool

// getRing returns a ring of n octets or, given back, of the first larger
// size that has one up to the window (within which a ring may have any
// size).
func getRing(n, window int) []byte {
	for c := n; c <= window; c *= 2 {
		switch c {
		case minHist:
			if p, _ := rings[0].Get().(*[minHist]byte); p != nil {
				return p[:]
			}
		case minHist << 1:
			if p, _ := rings[1].Get().(*[minHist << 1]byte); p != nil {
				return p[:]
			}
		case minHist << 2:
			if p, _ := rings[2].Get().(*[minHist << 2]byte); p != nil {
				return p[:]
			}
		case minHist << 3:
			if p, _ := rings[3].Get().(*[minHist << 3]byte); p != nil {
				return p[:]
			}
		case minHist << 4:
			if p, _ := rings[4].Get().(*[minHist << 4]byte); p != nil {
				return p[:]
			}
		default:
			return make([]byte, n)
		}
	}
	return make([]byte, n)
}

// putRing keeps b, a ring no Stream uses any more, for getRing.
func putRing(b []byte) {
	switch len(b) {
	case minHist:
		rings[0].Put((*[minHist]byte)(b))
	case minHist << 1:
		rings[1].Put((*[minHist << 1]byte)(b))
	case minHist << 2:
		rings[2].Put((*[minHist << 2]byte)(b))
	case minHist << 3:
		rings[3].Put((*[minHist << 3]byte)(b))
	case minHist << 4:
		rings[4].Put((*[minHist << 4]byte)(b))
	}
}

// same compares b, delivered at offset off, with the history; octets no
// longer (or never) in the history count as equal.
func (s *Stream) same(off uint64, b []byte) bool {
	if s.window == 0 {
		return true
	}
	lo := s.histStart
	if w := uint64(s.window); s.nextOff > w {
		lo = max(lo, s.nextOff-w)
	}
	if off < lo {
		if lo-off >= uint64(len(b)) {
			return true
		}
		b = b[lo-off:]
		off = lo
	}
	if end := off + uint64(len(b)); end > s.nextOff {
		b = b[:len(b)-int(end-s.nextOff)]
	}
	r := s.rhead
	for len(b) > 0 {
		for r < len(s.refs) && s.refs[r].off+uint64(s.refs[r].n) <= off {
			r++
		}
		if r < len(s.refs) && s.refs[r].off <= off {
			// In the file: read back a piece at a time.
			ref := &s.refs[r]
			k := int(off - ref.off)
			n := min(len(b), ref.n-k, scratchLen)
			if s.scratch == nil {
				s.scratch = make([]byte, scratchLen)
			}
			if m, _ := s.file.ReadAt(s.scratch[:n], ref.pos+int64(k)); m == n && !bytes.Equal(s.scratch[:n], b[:n]) {
				return false
			}
			b = b[n:]
			off += uint64(n)
			continue
		}
		n := len(b)
		if r < len(s.refs) {
			n = min(n, int(s.refs[r].off-off))
		}
		if l := len(s.hist); l > 0 {
			i := int(off % uint64(l))
			n = min(n, l-i)
			if !bytes.Equal(s.hist[i:i+n], b[:n]) {
				return false
			}
		}
		b = b[n:]
		off += uint64(n)
	}
	return true
}

// overlapDelivered reports n octets at offset off (before nextOff), whose
// captured part is b, as a retransmission or a conflict.
func (s *Stream) overlapDelivered(off uint64, seq SeqNum, b []byte, n int, seg *Segment, h Handler) {
	k := EvRetransmit
	if !s.same(off, b) {
		k = EvConflict
	}
	s.event(h, k, off, seq, n, seg)
}

// overlapPiece reports the octets [from, to) of a segment that starts at
// offset off with sequence number seq and captured payload, which overlap
// the held piece p, as a retransmission or a conflict.
func (s *Stream) overlapPiece(off uint64, seq SeqNum, payload []byte, from, to uint64, p *piece, seg *Segment, h Handler) {
	// Compare where both were captured.
	lo := from
	hi := min(to, off+uint64(len(payload)), p.off+uint64(len(p.data)))
	k := EvRetransmit
	if lo < hi && !bytes.Equal(payload[lo-off:hi-off], p.data[lo-p.off:hi-p.off]) {
		k = EvConflict
	}
	s.event(h, k, from, seq.Add(int(from-off)), int(to-from), seg)
}

// cost returns what holding the parts of a segment [off, off+wire) with
// captured octets [off, off+n) not already held would add to bufCost.
func (s *Stream) cost(off uint64, n, wire int) int {
	end := off + uint64(wire)
	capEnd := off + uint64(n)
	c := 0
	cur := off
	for i := s.find(off); cur < end; i++ {
		pe := end
		if i < len(s.pieces) {
			pe = min(pe, s.pieces[i].off)
		}
		if cur < pe {
			c += pieceCost
			if cur < capEnd {
				c += int(min(pe, capEnd) - cur)
			}
		}
		if i >= len(s.pieces) {
			break
		}
		cur = max(cur, s.pieces[i].end())
	}
	return c
}

// find returns the index of the first live piece that ends after off.
func (s *Stream) find(off uint64) int {
	live := s.pieces[s.head:]
	i, _ := slices.BinarySearchFunc(live, off, func(p piece, off uint64) int {
		if p.end() <= off {
			return -1
		}
		return 1
	})
	return s.head + i
}

// hold copies the parts of an out-of-order segment [off, off+wire) that no
// held piece covers into new pieces, and reports the overlaps.
func (s *Stream) hold(off uint64, seq SeqNum, payload []byte, wire int, seg *Segment, h Handler) {
	s.event(h, EvOutOfOrder, off, seq, wire, seg)
	end := off + uint64(wire)
	n := uint64(len(payload))
	cur := off
	i := s.find(off)
	for cur < end {
		if i < len(s.pieces) && s.pieces[i].off <= cur {
			p := &s.pieces[i]
			to := min(end, p.end())
			s.overlapPiece(off, seq, payload, cur, to, p, seg, h)
			cur = to
			i++
			continue
		}
		pe := end
		if i < len(s.pieces) {
			pe = min(pe, s.pieces[i].off)
		}
		i0, i1 := cur-off, pe-off
		var data []byte
		if i0 < n {
			src := payload[i0:min(i1, n)]
			data = append(s.alloc(len(src)), src...)
		}
		p := piece{
			off:   cur,
			seq:   seq.Add(int(i0)),
			data:  data,
			miss:  int(i1-i0) - len(data),
			frame: seg.Frame,
			ts:    seg.TS,
		}
		s.pieces = slices.Insert(s.pieces, i, p)
		s.bufBytes += len(data)
		s.bufCost += len(data) + pieceCost
		cur = pe
		i++
	}
}

// forceSkip makes room when a segment at off does not fit: it gives up on
// the hole at nextOff, up to the first held piece or to the segment,
// whichever comes first.
func (s *Stream) forceSkip(off uint64, seg *Segment, h Handler) {
	target, frame, ts := off, seg.Frame, seg.TS
	if s.head < len(s.pieces) && s.pieces[s.head].off < target {
		p := &s.pieces[s.head]
		target, frame, ts = p.off, p.frame, p.ts
	}
	s.event(h, EvBufferFull, s.nextOff, s.nextSeq, int(target-s.nextOff), seg)
	s.gap(target-s.nextOff, frame, ts, h)
	s.drain(h)
}

// drain delivers the held pieces that have become in order.
func (s *Stream) drain(h Handler) {
	for s.head < len(s.pieces) && s.pieces[s.head].off == s.nextOff {
		s.deliverPiece(h)
	}
}

// deliverPiece delivers the first held piece, which starts at nextOff.
func (s *Stream) deliverPiece(h Handler) {
	p := s.pieces[s.head]
	s.pieces[s.head] = piece{}
	s.head++
	if s.head == len(s.pieces) {
		s.pieces = s.pieces[:0]
		s.head = 0
	} else if s.head >= 64 && s.head*2 >= len(s.pieces) {
		n := copy(s.pieces, s.pieces[s.head:])
		clear(s.pieces[n:])
		s.pieces = s.pieces[:n]
		s.head = 0
	}
	s.bufBytes -= len(p.data)
	s.bufCost -= len(p.data) + pieceCost
	s.deliver(p.data, p.frame, p.ts, h)
	if p.miss > 0 {
		s.cutGap(uint64(p.miss), p.frame, p.ts, h)
	}
	s.release(p.data)
}

// cutPieces drops held octets at or after limit (past the FIN).
func (s *Stream) cutPieces(limit uint64, h Handler) {
	for len(s.pieces) > s.head {
		p := &s.pieces[len(s.pieces)-1]
		if p.end() <= limit {
			return
		}
		from := max(p.off, limit)
		h.Event(Event{Kind: EvPastFIN, Off: from, Seq: p.seq.Add(int(from - p.off)), Len: int(p.end() - from), Frame: p.frame, TS: p.ts})
		if p.off < limit {
			keep := int(limit - p.off)
			if keep < len(p.data) {
				s.bufBytes -= len(p.data) - keep
				s.bufCost -= len(p.data) - keep
				p.data = p.data[:keep]
			}
			p.miss = keep - len(p.data)
			return
		}
		s.bufBytes -= len(p.data)
		s.bufCost -= len(p.data) + pieceCost
		s.release(p.data)
		*p = piece{}
		s.pieces = s.pieces[:len(s.pieces)-1]
	}
	if s.head == len(s.pieces) {
		s.pieces, s.head = s.pieces[:0], 0
	}
}

// alloc returns an empty slice with room for n octets, recycled if possible.
func (s *Stream) alloc(n int) []byte {
	for i := len(s.free) - 1; i >= 0; i-- {
		if b := s.free[i]; cap(b) >= n {
			s.free[i] = s.free[len(s.free)-1]
			s.free[len(s.free)-1] = nil
			s.free = s.free[:len(s.free)-1]
			return b[:0]
		}
	}
	return make([]byte, 0, max(n, 64))
}

// release returns a piece's buffer for reuse.
func (s *Stream) release(b []byte) {
	if cap(b) == 0 || cap(b) > freeCap || len(s.free) >= freeMax {
		return
	}
	s.free = append(s.free, b[:0])
}

package flows

import (
	"context"
	"errors"
	"io"
	"math"
	"net/netip"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/internal/spill"
)

// Parallel decodes with several workers, one Decoder each, and hands the
// records to emit in the order, with the connection ids, a single Decoder
// would give: the output is byte for byte the same (issue 6).
//
// How: the caller's goroutine (Packet) copies each packet into a batch for
// the worker that owns its connection (a bucket of the unordered 4-tuple's
// shard.Hash, so both directions meet, dealt to the least loaded worker
// when first seen: balance.go); non-TCP packets (RoCEv2 CM, SCTP) all go
// to worker 0, whose exchanges are keyed across flows. A round of
// batches, one per worker, is cut every [parallelRound] octets. For a plain
// pcap or pcapng file, DecodeChunks instead hands every worker the same
// chunks of whole records with the owner of each (copied once per packet
// from pcapng, not at all from pcap). A connection's
// records depend only on its own packets (a Decoder shares nothing across
// connections but the id counter), so each worker decodes its share alone;
// instead of ordering its records it hands them over tagged with the packet
// that queued them (in parts of about segRecords, whatever the round
// holds), and notes after each packet the earliest frame its connections
// still hold octets of. The merge goroutine replays the round
// in capture order with one ordering queue, exactly as a single Decoder
// releases: after each packet, every record below min(next frame, earliest
// held frame over all workers), lowest (frame, queue order) first, and
// everything at Close. Connection ids: a worker queues an internal record
// where it allocates an id; the merge numbers them in capture order and
// rewrites Conn.
//
// With SetFormat, each worker renders its FPDU and message records itself
// and the merge writes the octets in order, the connection id put in
// (wformat.go).
//
// With SetLocal, each worker first offers its records to its own Local,
// which may consume FPDU records whose order does not matter to it (the
// counts of iwarpdump -q -z): those never reach the merge (local.go).
//
// Equal output holds while the connection caps are not reached: MaxConns
// applies per worker, to embryos MaxConns/N per worker (embryo.go), and
// MaxResets/N per worker (settle.go).
// Options.Payload is not supported (it would be called from several
// goroutines).
type Parallel struct {
	emit    func(*Record)
	absorb  func(conn int, v any) // SetLocal
	maxHeld int
	// unordered counts the records emitted past maxHeld (Unordered),
	// written by the merge, read once it is done.
	unordered uint64
	spillErr  error // SpillErr
	recycle   bool
	workers   []*pworker
	results   []chan pround  // per worker, in round order
	owners    chan pinfo     // per round, in capture order
	chunks    chan *chunkBuf // DecodeChunks: buffers for chunks
	// ownBufs returns a chunk round's owners and offsets from the merge
	// once it is done with the round (DecodeChunks): made afresh for every
	// chunk, they were garbage, and first touches of new memory.
	ownBufs chan pinfo
	merged  chan struct{}

	// SetFormat: write takes the records the workers rendered; wbuf is
	// where the merge puts their connection ids in.
	write func([]byte)
	wbuf  []byte
	keep  func(*Record, uint64) bool // SetKeep
	lites []*liteRec                 // the merge's liteRecs, for reuse
	// liveLites counts the liteRecs made and not written yet, maxLites
	// the most at once (tests).
	liveLites, maxLites int
	// crowded is set while the merge holds heldPackAt records or more:
	// the workers then hand their records over unrendered, for the merge
	// to pack (formatOut).
	crowded atomic.Bool

	// endTS and endFrame are the last packet's, for the workers' Decoders
	// at Close (Decoder.SetEnd).
	endTS    time.Time
	endFrame uint64

	bal     balancer  // which worker decodes each packet
	cur     []*pbatch // the round being filled, one batch per worker
	own     []uint8
	curSize int
	closed  bool
}

// parallelRound is the octets copied per round of batches.
const parallelRound = 256 << 10

// parallelBatches is the batches each worker has for Packet's rounds: one
// being filled, one decoding, one queued. DecodeChunks adds those its
// chunk buffers need.
const parallelBatches = 3

// MaxWorkers is the most workers a Parallel runs.
const MaxWorkers = 64

// ErrParallelPayload: Options.Payload cannot be used with several workers.
var ErrParallelPayload = errors.New("flows: Options.Payload needs a single Decoder")

// pbatch is one worker's share of a round: packets whose payload (TCP) or
// whole frame (anything else) is copied into arena.
type pbatch struct {
	pkts  []pmeta
	errs  []error // Packet.Err of KindBad packets, pmeta.err indexes it
	arena []byte
	last  bool // Close: end every connection after the packets
	// endTS and endFrame, with last: the capture's last packet's
	// (Decoder.SetEnd).
	endTS    time.Time
	endFrame uint64
	// chunk, instead of pkts: whole pcap records every worker shares
	// (DecodeChunks), decoding the packets it owns.
	chunk *capture.Chunk
	cbuf  *chunkBuf // chunk's buffer
	own   []uint8   // the owner of every record of chunk
	offs  []int32   // the offset of every record of chunk in its Data
}

// pmeta is a capture.Packet without pointers, so that batches copy and
// scan cheaply; start, end, payOff and payLen locate its octets in the
// arena (for a frame: where its payload sits in it).
type pmeta struct {
	frame                uint64
	sec                  int64
	nsec                 int32
	iface                int32
	capLen, wireLen      int64 // a damaged header may give any uint32
	payWire              int64
	start, end           int32
	payOff, payLen       int32
	err                  int32 // -1: none
	seq, ack             uint32
	sport, dport         uint16
	window               uint16
	kind                 capture.Kind
	flags                capture.TCPFlags
	ipv6, fragment       bool
	srcFamily, dstFamily uint8 // 0 invalid, 4, 6
	src, dst             [16]byte
}

// addrBits stores an address in a pmeta.
func addrBits(a netip.Addr) (uint8, [16]byte) {
	switch {
	case a.Is4():
		return 4, a.As16()
	case a.IsValid():
		return 6, a.As16()
	}
	return 0, [16]byte{}
}

// addrOf is the inverse of addrBits.
func addrOf(family uint8, b [16]byte) netip.Addr {
	switch family {
	case 4:
		return netip.AddrFrom4([4]byte(b[12:16]))
	case 6:
		return netip.AddrFrom16(b)
	}
	return netip.Addr{}
}

// packet rebuilds the capture.Packet.
func (m *pmeta) packet(b *pbatch) capture.Packet {
	p := capture.Packet{
		Frame:          m.frame,
		TS:             time.Unix(m.sec, int64(m.nsec)).UTC(),
		Interface:      int(m.iface),
		CapLen:         int(m.capLen),
		WireLen:        int(m.wireLen),
		Kind:           m.kind,
		IPv6:           m.ipv6,
		Fragment:       m.fragment,
		Seq:            m.seq,
		Ack:            m.ack,
		Flags:          m.flags,
		Window:         m.window,
		PayloadWireLen: int(m.payWire),
	}
	if m.err >= 0 {
		p.Err = b.errs[m.err]
	}
	if m.srcFamily != 0 {
		p.Src = netip.AddrPortFrom(addrOf(m.srcFamily, m.src), m.sport)
	}
	if m.dstFamily != 0 {
		p.Dst = netip.AddrPortFrom(addrOf(m.dstFamily, m.dst), m.dport)
	}
	o := b.arena[m.start:m.end:m.end]
	if m.kind == capture.KindTCP {
		p.Payload = o
	} else {
		p.Data = o
		p.Payload = o[m.payOff : m.payOff+m.payLen : m.payOff+m.payLen]
	}
	return p
}

// pstep is what a worker notes after a packet: its frame, and the earliest
// frame its connections still hold (math.MaxUint64: none).
type pstep struct{ frame, pend uint64 }

// pround is a worker's answer for one round, or for part of one: the
// records it queued, each tagged with the index in the round of the packet
// that queued it (the round's packet count for those queued at Close), and
// a step per packet. A worker that has queued segRecords records hands
// them over after the packet that reached it, and goes on with the round
// in a new pround: the last one of the round has end set.
type pround struct {
	recs  []*Record
	steps []pstep
	// SetFormat: the records the worker rendered (formatOut), in
	// queue order like recs, and their octets.
	fmts  []pent
	arena []byte
	final any  // the Local's Flush(-1), in the round of Close
	end   bool // the last part of the round
	// In the round of Close: the packed conn records of the connections
	// that retired, in frame order, and their strings (Decoder.lazy,
	// retired.go).
	lazy *spill.Iter
	strs []string
}

// segRecords is how many queued records make a worker hand them to the
// merge before the end of its round. Rounds are cut by octets, and a round
// of FPDUs of a few octets each (a 1 MiB chunk can hold 40,000) would
// otherwise wait whole for the merge, a few rounds of them, in every
// worker: memory would grow with the records per octet rather than be
// bounded.
var segRecords = 512 // a variable for tests

// localRecords is how many records queued since the last offer make a
// worker with a Local offer them to it (cut). Every 512 (segRecords), the
// FPDU records it reuses went round some 400 KB: the workload of issue 6
// under -j 2 -q -z conn took 0.199 s, and 0.187 s every 8 (median of 9
// interleaved rounds, with the owners recycled).
const localRecords = 8

// pinfo tells the merge about a round: the worker of each packet in capture
// order.
type pinfo struct {
	own  []uint8
	offs []int32 // DecodeChunks: the offsets of the records, recycled with own
}

type pworker struct {
	idx int
	dec *Decoder
	res chan<- pround
	// The worker's records of the round so far, d.out, are cut into
	// parts of about seg (segRecords): d.offered counts those offered
	// to the Local already, and mark is the length of d.out that makes
	// cut look again.
	seg, mark int
	maxPart   int                          // the most records handed at once (tests)
	walk      *capture.ChunkWalker         // DecodeChunks
	format    Format                       // SetFormat
	tag       func(*Record) (uint64, bool) // SetKeep
	// SetKeep: the merge's keep, the numbering it has published of this
	// worker's connections, and the record keep is asked about here.
	keep    func(*Record, uint64) bool
	known   *knownIDs
	stub    Record
	crowded *atomic.Bool // SetFormat: Parallel.crowded
	// SetFormat: the part's records rendered so far (formatOut), and
	// how many of d.out it has looked at.
	fmts    []pent
	arena   []byte
	fmtFrom int
	in      chan *pbatch
	free    chan *pbatch
	// back returns emitted FPDU record boxes from the merge
	// (Options.Recycle), and backFree the emptied slices to the merge;
	// spare returns the slices of rounds the merge is done with.
	back     chan []*Record
	backFree chan []*Record
	spare    chan pround
}

// NewParallel returns a Parallel with n workers (1 <= n <= MaxWorkers)
// that hands every record to emit in the order a Decoder would. emit is
// called from one goroutine, not the caller's, and never concurrently; it
// may keep the record.
func NewParallel(opts Options, n int, emit func(*Record)) (*Parallel, error) {
	if opts.Payload != nil {
		return nil, ErrParallelPayload
	}
	n = max(1, min(n, MaxWorkers))
	opts.fill()
	p := &Parallel{emit: emit, maxHeld: opts.MaxHeld, recycle: opts.Recycle,
		merged: make(chan struct{}), owners: make(chan pinfo, 8)}
	for i := 0; i < n; i++ {
		w := &pworker{idx: i, seg: segRecords, in: make(chan *pbatch, 8), free: make(chan *pbatch, 8), back: make(chan []*Record, 4),
			backFree: make(chan []*Record, 4), spare: make(chan pround, 8)}
		w.dec = NewDecoder(opts, nil)
		w.dec.worker = true
		w.dec.workers = n
		for range parallelBatches {
			w.free <- &pbatch{}
		}
		res := make(chan pround, 4)
		p.workers = append(p.workers, w)
		p.results = append(p.results, res)
		go w.run(res)
	}
	p.bal.n = n
	p.cur = make([]*pbatch, n)
	p.take()
	go p.merge()
	return p, nil
}

// take gets an empty batch for every worker.
func (p *Parallel) take() {
	for i, w := range p.workers {
		b := <-w.free
		clear(b.errs)
		b.pkts, b.errs, b.arena = b.pkts[:0], b.errs[:0], b.arena[:0]
		b.last = false
		p.cur[i] = b
	}
	p.own = make([]uint8, 0, 1024)
	p.curSize = 0
}

// Packet copies one packet into the batch of the worker that owns it.
// Like Decoder.Packet, the packet is not kept after Packet returns.
func (p *Parallel) Packet(pk *capture.Packet) {
	if p.closed {
		return
	}
	w := int(p.bal.Owner(pk))
	b := p.cur[w]
	p.endTS, p.endFrame = pk.TS, pk.Frame
	m := pmeta{
		frame: pk.Frame, sec: pk.TS.Unix(), nsec: int32(pk.TS.Nanosecond()),
		iface: int32(pk.Interface), capLen: int64(pk.CapLen), wireLen: int64(pk.WireLen),
		payWire: int64(pk.PayloadWireLen), err: -1, seq: pk.Seq, ack: pk.Ack,
		sport: pk.Src.Port(), dport: pk.Dst.Port(), window: pk.Window,
		kind: pk.Kind, flags: pk.Flags, ipv6: pk.IPv6, fragment: pk.Fragment,
	}
	m.srcFamily, m.src = addrBits(pk.Src.Addr())
	m.dstFamily, m.dst = addrBits(pk.Dst.Addr())
	if pk.Err != nil {
		m.err = int32(len(b.errs))
		b.errs = append(b.errs, pk.Err)
	}
	m.start = int32(len(b.arena))
	if pk.Kind == capture.KindTCP {
		b.arena = append(b.arena, pk.Payload...)
	} else {
		b.arena = append(b.arena, pk.Data...)
		m.payOff, m.payLen = int32(subOffset(pk.Data, pk.Payload)), int32(len(pk.Payload))
		if int(m.payOff)+int(m.payLen) > len(pk.Data) {
			m.payLen = 0
		}
	}
	m.end = int32(len(b.arena))
	b.pkts = append(b.pkts, m)
	p.own = append(p.own, uint8(w))
	p.curSize += int(m.end-m.start) + 64
	if p.curSize >= parallelRound {
		p.send(false)
	}
}

// subOffset is the offset of sub inside frame, or len(frame) when sub is
// empty or not inside it.
func subOffset(frame, sub []byte) int {
	if len(sub) == 0 || len(frame) == 0 {
		return len(frame)
	}
	f := uintptr(unsafe.Pointer(unsafe.SliceData(frame)))
	s := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	if s < f || s+uintptr(len(sub)) > f+uintptr(len(frame)) {
		return len(frame)
	}
	return int(s - f)
}

// send hands the current round to the workers and the merge.
func (p *Parallel) send(last bool) {
	p.owners <- pinfo{own: p.own}
	for i, w := range p.workers {
		b := p.cur[i]
		b.last = last
		if last {
			b.endTS, b.endFrame = p.endTS, p.endFrame
		}
		w.in <- b
	}
	if !last {
		p.take()
	}
}

// SetEnd says when the capture ended, if not at the last packet given to
// Packet (Decoder.SetEnd); it is called just before Close.
func (p *Parallel) SetEnd(ts time.Time, frame uint64) {
	p.endTS, p.endFrame = ts, frame
}

// Close decodes what is left, ends every connection and returns when
// every record has been emitted.
func (p *Parallel) Close() {
	if p.closed {
		return
	}
	p.closed = true
	p.send(true)
	close(p.owners)
	for _, w := range p.workers {
		close(w.in)
	}
	<-p.merged
}

// run decodes batches until the input closes.
func (w *pworker) run(res chan<- pround) {
	defer close(res)
	d := w.dec
	// SetLocal may come after the goroutine starts, before the first
	// batch: the mark is set for a Local at the first cut.
	w.res, w.mark = res, w.seg
	for b := range w.in {
		w.takeBack()
		npk := len(b.pkts)
		if b.chunk != nil {
			npk = w.walkChunk(b.chunk, b.own, b.offs)
			b.cbuf.done()
			b.chunk, b.own, b.offs, b.cbuf = nil, nil, nil, nil
		} else {
			for i := range b.pkts {
				pk := b.pkts[i].packet(b)
				d.pkt = uint32(i)
				d.Packet(&pk)
				if len(d.out) >= w.mark {
					w.cut()
				}
			}
		}
		if b.last {
			d.pkt = uint32(npk)
			if !b.endTS.IsZero() {
				d.SetEnd(b.endTS, b.endFrame)
			}
			d.Close()
		}
		var final any
		if d.local != nil {
			d.out = d.takeLocal(d.out, d.offered)
			if b.last {
				final = d.local.Flush(-1)
			}
		}
		r := pround{recs: d.out, steps: d.steps, final: final, end: true}
		if b.last {
			r.lazy, r.strs = d.lazy, d.strs
			d.packs, d.lazy, d.strs = nil, nil, nil
		}
		w.hand(r)
		w.free <- b
	}
}

// cut is called between packets when d.out has reached w.mark: it offers
// the records queued since the last offer to the Local, and hands the
// round's records so far to the merge once segRecords are left.
func (w *pworker) cut() {
	d := w.dec
	if w.format != nil {
		w.formatOut()
		if len(d.out)+len(w.fmts) < w.seg && len(w.arena) < partArena {
			w.mark = len(d.out) + localRecords
			return
		}
	}
	if d.local != nil {
		d.out = d.takeLocal(d.out, d.offered)
		d.offered = len(d.out)
		if len(d.out) < w.seg {
			w.mark = len(d.out) + localRecords
			return
		}
	}
	w.hand(pround{recs: d.out, steps: d.steps})
	w.takeBack()
}

// hand sends r to the merge, and takes slices for what follows from those
// the merge is done with.
func (w *pworker) hand(r pround) {
	d := w.dec
	w.maxPart = max(w.maxPart, len(r.recs))
	if w.format != nil {
		w.formatOut()
		r.recs, r.fmts, r.arena = d.out, w.fmts, w.arena
		w.fmts, w.arena, w.fmtFrom = nil, nil, 0
	}
	w.res <- r
	d.out, d.steps = nil, nil
	d.offered = 0
	w.resetMark()
	select {
	case sp := <-w.spare:
		d.out, d.steps = sp.recs[:0], sp.steps[:0]
		w.fmts, w.arena = sp.fmts[:0], sp.arena[:0]
	default:
	}
}

// resetMark sets w.mark for a new part of a round: with a Local, the
// records are offered to it every few (localRecords), so that the FPDU
// records it takes are reused while they are still in the core's cache, as
// a single Decoder offers them after every packet.
func (w *pworker) resetMark() {
	w.mark = w.seg
	if w.dec.local != nil || w.format != nil {
		w.mark = min(w.seg, localRecords)
	}
}

// takeBack reuses the record boxes the merge has emitted.
func (w *pworker) takeBack() {
	d := w.dec
	for {
		select {
		case rs := <-w.back:
			for _, r := range rs {
				d.recycle(r)
			}
			clear(rs)
			select {
			case w.backFree <- rs[:0]:
			default:
			}
		default:
			return
		}
	}
}

// merge replays each round in capture order and emits the records as a
// single Decoder would release them.
func (p *Parallel) merge() {
	defer close(p.merged)
	n := len(p.workers)
	var q orderQueue
	// The boxes of the records the queue packs (heldpack.go), to unpack
	// others into; a record unpacked goes back to its worker once emitted,
	// as the others do.
	var boxes []*fpduBox
	q.pushed = true // the records come whole from the workers
	q.pk = newHeldPack(func() *fpduBox {
		if k := len(boxes); k > 0 {
			b := boxes[k-1]
			boxes = boxes[:k-1]
			*b = fpduBox{}
			b.r.box = boxFPDU
			return b
		}
		return &fpduBox{r: Record{box: boxFPDU}}
	}, func(b *fpduBox) {
		if len(boxes) < maxFreeBoxes/4 {
			boxes = append(boxes, b)
		}
	})
	pend := make([]uint64, n)
	for i := range pend {
		pend[i] = math.MaxUint64
	}
	rounds := make([]pround, n)  // per worker: the part of the round at hand
	next := make([]int, n)       // per worker: the next record of rounds[w]
	nextF := make([]int, n)      // per worker: the next of rounds[w].fmts (SetFormat)
	made := make([][]liteRef, n) // per worker: the liteRecs made from rounds[w]
	crowded := false             // p.crowded as last stored
	step := make([]int, n)       // per worker: the next step of the round
	base := make([]int, n)       // per worker: the round's step of rounds[w].steps[0]
	ids := make([]connIDs, n)
	lookup := func(k [2]int) (int, bool) { return ids[k[0]].get(k[1]) }
	nextID := 0
	var streams streamNums         // the TCP stream numbers of the ids
	back := make([][]*Record, n)   // records to hand back to each worker
	var finals []any               // the Locals' Flush(-1)
	lazy := make([]*spill.Iter, n) // the workers' packed conn records, at Close
	strs := make([][]string, n)
	// take queues worker w's records up to packet k (inclusive).
	take := func(w int, k uint32) {
		f := rounds[w].fmts
		for nextF[w] < len(f) && f[nextF[w]].pkt <= k {
			q.push(p.lite(&f[nextF[w]], w, rounds[w].arena, &made[w]))
			nextF[w]++
		}
		recs := rounds[w].recs
		for next[w] < len(recs) && recs[next[w]].pkt <= k {
			r := recs[next[w]]
			recs[next[w]] = nil
			next[w]++
			// Records of one frame all come from one worker, so the
			// worker's queue order breaks ties; its index rides along.
			r.order = r.order<<8 | uint64(w)
			if r.Type == recNewID {
				ids[w].set(r.Conn, nextID)
				streams.add(nextID, !r.ext)
				if p.keep != nil {
					p.workers[w].known.publish(r.Conn, nextID, streams.of(nextID))
				}
				nextID++
			}
			q.push(r)
		}
	}
	out := func(r *Record) {
		k := [2]int{int(r.order & 0xff), r.Conn}
		switch r.Type {
		case recNewID:
			return
		case recLocal:
			if p.absorb != nil {
				if g, ok := lookup(k); ok {
					p.absorb(g, r.local)
				}
			}
			r.local = nil
			return
		case recConnEnd:
			if r.local != nil && p.absorb != nil {
				if g, ok := lookup(k); ok {
					p.absorb(g, r.local)
				}
				r.local = nil
			}
			ids[k[0]].forget(k[1])
			return
		}
		if g, ok := lookup(k); ok {
			r.Conn = g
			r.stream = streams.of(g)
		}
		if r.box == boxLite {
			p.writeLite(r)
			return
		}
		p.emit(r)
		if r.box != boxNone && p.recycle {
			// A worker keeps at most maxFreeBoxes: more would be
			// dropped there. The surplus of FPDU boxes serves the
			// unpacking here (2,000 connections open at once, JSON Lines
			// with two workers: 6 MB of boxes had been in flight back to
			// the workers).
			if w := k[0]; len(back[w]) < maxFreeBoxes {
				back[w] = append(back[w], r)
			} else if r.box == boxFPDU && len(boxes) < maxFreeBoxes/4 {
				boxes = append(boxes, (*fpduBox)(unsafe.Pointer(r)))
			}
		}
	}
	// giveBack returns the emitted record boxes to worker w; when its
	// channel is full, they wait for the next time, and out adds no more
	// than maxFreeBoxes. (They had been dropped, for the collector: with
	// the records going whole to emit, iwarpdump -j 2 -z conn on small
	// messages allocated 105-130 MB of boxes, 10-12 collections, where
	// some 2,300 FPDU boxes are all two workers need.)
	giveBack := func(w int) {
		if len(back[w]) == 0 {
			return
		}
		select {
		case p.workers[w].back <- back[w]:
			back[w] = nil
			select {
			case b := <-p.workers[w].backFree:
				back[w] = b
			default:
			}
		default:
		}
	}
	ended := 0 // the workers whose last part of the round has come
	receive := func(w int) {
		rounds[w] = <-p.results[w]
		next[w], nextF[w] = 0, 0
		if rounds[w].end {
			ended++
		}
	}
	// advance moves on to worker w's next part of the round, once every
	// record of the one at hand has been taken.
	advance := func(w int) {
		base[w] += len(rounds[w].steps)
		// Its slices go back to the worker for reuse.
		keepLites(&made[w])
		select {
		case p.workers[w].spare <- rounds[w]:
		default:
		}
		giveBack(w)
		receive(w)
	}
	for info := range p.owners {
		ended = 0
		for w := 0; w < n; w++ {
			step[w], base[w] = 0, 0
			receive(w)
		}
		own := info.own
		for _, w8 := range own {
			w := int(w8)
			k := step[w]
			step[w]++
			for k-base[w] >= len(rounds[w].steps) && !rounds[w].end {
				advance(w)
			}
			if recs := rounds[w].recs; next[w] < len(recs) && recs[next[w]].pkt <= uint32(k) {
				take(w, uint32(k))
			} else if f := rounds[w].fmts; nextF[w] < len(f) && f[nextF[w]].pkt <= uint32(k) {
				take(w, uint32(k))
			}
			st := rounds[w].steps[k-base[w]]
			pend[w] = st.pend
			if q.len() == 0 {
				continue // most packets under -q: nothing held
			}
			limit := st.frame + 1
			for _, f := range pend {
				limit = min(limit, f)
			}
			for q.len() > 0 && (q.peekFrame() < limit || q.len() > p.maxHeld) {
				if q.peekFrame() >= limit {
					p.unordered++
				}
				out(q.pop())
			}
			if c := q.len() >= heldPackAt; c != crowded && p.write != nil {
				crowded = c
				p.crowded.Store(c)
			}
		}
		// Records queued after the round's packets (at Close), and
		// parts of the round with none of its packets left.
		for w := 0; w < n; w++ {
			for take(w, math.MaxUint32); !rounds[w].end; take(w, math.MaxUint32) {
				advance(w)
			}
		}
		if info.offs != nil {
			// Every worker and the merge are done with the round.
			select {
			case p.ownBufs <- pinfo{own: own[:0], offs: info.offs[:0]}:
			default:
			}
		}
		for w := 0; w < n; w++ {
			if f := rounds[w].final; f != nil && p.absorb != nil {
				finals = append(finals, f)
			}
			if rounds[w].lazy != nil {
				lazy[w], strs[w] = rounds[w].lazy, rounds[w].strs
			}
			// The round's slices go back to the worker for reuse.
			keepLites(&made[w])
			select {
			case p.workers[w].spare <- rounds[w]:
			default:
			}
			rounds[w] = pround{}
			giveBack(w)
		}
	}
	// The workers' packed conn records (retired.go), merged with the
	// records queued at Close as a single Decoder merges its own
	// (releaseLazy): in frame order, the queued first at a frame. Each is
	// the record of the worker's connection id (order's low octet, as take
	// makes it).
	for {
		lw, lf := -1, uint64(0)
		for w, it := range lazy {
			if it == nil {
				continue
			}
			if k, ok := it.Peek(); ok && (lw < 0 || k.A < lf) {
				lw, lf = w, k.A
			}
		}
		if lw < 0 {
			break
		}
		for q.len() > 0 && q.peekFrame() <= lf {
			out(q.pop())
		}
		_, b, _ := lazy[lw].Next()
		r, _ := unpackConn(b, strs[lw])
		r.order = uint64(lw)
		out(r)
	}
	for _, it := range lazy {
		if it != nil {
			if err := it.Err(); err != nil && p.spillErr == nil {
				p.spillErr = err
			}
			it.Close()
		}
	}
	for q.len() > 0 {
		out(q.pop())
	}
	for _, f := range finals {
		p.absorb(-1, f)
	}
}

// Unordered returns how many records were emitted out of frame order
// because more than Options.MaxHeld waited, as Decoder.Unordered does: the
// same records, so the output is the same. Call it after Close.
func (p *Parallel) Unordered() uint64 { return p.unordered }

// SnapHidden is Decoder.SnapHidden over every worker; call it after Close.
func (p *Parallel) SnapHidden() int {
	n := 0
	for _, w := range p.workers {
		n += w.dec.snapHidden
	}
	return n
}

// SpillErr returns the error that lost packed conn records of retired
// connections, as Decoder.SpillErr does. Call it after Close.
func (p *Parallel) SpillErr() error { return p.spillErr }

// walkChunk decodes the packets of ch this worker owns (own and offs list
// the owner and the offset of every record) and returns how many there
// were.
func (w *pworker) walkChunk(ch *capture.Chunk, own []uint8, offs []int32) int {
	d := w.dec
	k := 0
	me := uint8(w.idx)
	w.walk.WalkOwned(*ch, own, offs, me, func(pk *capture.Packet) {
		d.pkt = uint32(k)
		k++
		d.Packet(pk)
		if len(d.out) >= w.mark {
			w.cut()
		}
	})
	return k
}

// chunkBuf is a buffer DecodeChunks reads chunks into; the last worker done
// with a chunk sends it home for the next. (The merge gave it back once it
// had every worker's records of the chunk: a merge running behind held the
// buffers while the workers waited for chunks.)
type chunkBuf struct {
	b    []byte
	left atomic.Int32 // workers still decoding the chunk
	home chan *chunkBuf
}

// done is called by each worker once it has decoded the chunk.
func (c *chunkBuf) done() {
	if c.left.Add(-1) == 0 {
		c.home <- c
	}
}

// DecodeChunks decodes a pcap or pcapng file read in chunks
// (capture.ChunkReader) instead of packets handed to Packet: every worker
// gets every chunk and decodes the packets it owns, so the reading
// goroutine decodes no headers (and copies no packet of a pcap file). The
// output is the same as with Packet. It stops early when ctx is
// done, then closes the Parallel (do not call Packet or Close afterwards)
// and returns the number of packets read and the reader's error (nil at a
// clean end of the file).
func (p *Parallel) DecodeChunks(ctx context.Context, cr *capture.ChunkReader) (uint64, error) {
	// Chunk buffers: enough for a worker to run some chunks ahead of
	// the other, whose share of a chunk may be all of it or none, and for
	// the reader, which waits for a core while both workers run, to have
	// the next chunks read before a worker needs them. Three (one a
	// worker still decodes, one the other has started, one being read)
	// left the workers blocked 27-42 ms of a 90-100 ms -j 2 -q -z conn
	// on the workload, waiting for a chunk while the reader waited for
	// the slower worker's buffer, and six 10 ms: 0.0845 s against 0.0939
	// s (7 interleaved rounds; 4: 0.0917, 5: 0.0860, 8: 0.0860). Sessions
	// 14-15 had measured 4 and 6 as no better, but then each worker had
	// only 3 batches (below), which held the reader to 2 chunks ahead
	// whatever the buffers.
	const bufs = 6
	p.chunks = make(chan *chunkBuf, bufs)
	// A batch per chunk in flight and the one p.cur holds for Close, in
	// every worker.
	for _, w := range p.workers {
		for range bufs + 1 - parallelBatches {
			w.free <- &pbatch{}
		}
	}
	// As many as can be in flight: a round queued for the merge
	// (p.owners), the merge's own and the reader's next. With room for
	// bufs alone, those the merge gave back past three were dropped and
	// made afresh when the merge lagged: 219 of -j 2's 1,870 page faults
	// on the workload.
	p.ownBufs = make(chan pinfo, cap(p.owners)+2)
	cbufs, release := capture.ChunkBuffers(bufs)
	for _, b := range cbufs {
		p.chunks <- &chunkBuf{b: b, home: p.chunks}
	}
	for _, w := range p.workers {
		w.walk = cr.Walker()
		if w.dec.opts.Reassembly.File == nil {
			// Retransmissions are compared with the file rather than
			// with copies (capture.Chunk.Pos).
			w.dec.opts.Reassembly.File = cr
		}
	}
	// The owners and the offsets of the records are worked out here,
	// once, so that each worker goes straight to its own records and
	// touches none of the others' octets.
	ow := cr.Walker()
	var n uint64
	var rerr error
	for ctx.Err() == nil {
		cb := <-p.chunks
		var ob pinfo
		select {
		case ob = <-p.ownBufs:
		default:
		}
		ch, own, offs, err := cr.NextOwners(cb.b, ow, ob.own, ob.offs, &p.bal)
		if err != nil {
			if err != io.EOF {
				rerr = err
			}
			break
		}
		n += uint64(ch.N)
		if ts, ok := ow.TS(ch, offs, ch.N-1); ok {
			p.endTS, p.endFrame = ts, ch.First+uint64(ch.N-1)
		}
		p.owners <- pinfo{own: own, offs: offs}
		cb.b = ch.Data[:0]
		cb.left.Store(int32(len(p.workers)))
		for _, w := range p.workers {
			b := <-w.free
			b.pkts, b.last = b.pkts[:0], false
			c := ch
			b.chunk, b.own, b.offs, b.cbuf = &c, own, offs, cb
			w.in <- b
		}
	}
	p.Close()
	// Every worker is done with the buffers: Close waits for the merge,
	// which waits for every worker's last round.
	release()
	return n, rerr
}

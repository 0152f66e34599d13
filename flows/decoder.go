package flows

import (
	"cmp"
	"encoding/binary"
	"net/netip"
	"slices"
	"time"
	"unsafe"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/internal/spill"
	"github.com/iwarpkit/iwarpkit/markers"
	"github.com/iwarpkit/iwarpkit/reassembly"
)

// Options configure a Decoder. The zero value is usable.
type Options struct {
	// Reassembly limits per TCP direction (out-of-order buffer).
	Reassembly reassembly.Options
	// Flags selects how the Enhanced data flags A-D are read: RFC 6581
	// (default) or the draft of seed 003.
	Flags mpa.FlagMeaning
	// MaxConns caps the connection table; the connection idle the longest
	// is evicted (with a finding) when a new one would exceed it. Default 65536.
	MaxConns int
	// MaxResets caps the connections reset after octets that are kept
	// whole for octets still in flight (a Terminate, above all): past it
	// the one reset the longest ago retires at once, as it would some
	// minutes later (settle.go). Default DefaultMaxResets.
	MaxResets int
	// MaxHeld caps the records held for ordering: records are emitted in
	// frame order, so a record waits while any connection may still emit
	// one about an earlier frame, such as the record of a message still
	// open, which is about its first frame. Past MaxHeld the oldest are
	// emitted anyway, ahead of the records still to come about earlier
	// frames (Unordered counts them): the message's record then comes
	// after its FPDUs, where it completes. Default DefaultMaxHeld.
	MaxHeld int
	// MaxMessages caps the RDMA messages being gathered per direction.
	// Default 4096.
	MaxMessages int
	// MaxFindingsPerCode caps how many findings of one code a connection
	// reports; the rest are counted in a cap.findings_suppressed finding.
	// Default 100.
	MaxFindingsPerCode int
	// Payload, when set, is called for every FPDU whose DDP segment was
	// decoded, with the ULP payload octets (after the DDP and RDMAP
	// headers). payload is only valid during the call; r is the record
	// that will be emitted (in order) later. The replay engine uses it.
	Payload func(r *Record, payload []byte)
	// Force overrides the MPA settings of matching connections
	// (iwarpdump --decode-as); the first match wins.
	Force []Force
	// Recycle promises that emit keeps neither the records it is given
	// nor anything they point to once it returns; the Decoder then reuses
	// the memory of FPDU records, which saves allocating and collecting
	// some 800 octets per FPDU.
	Recycle bool
}

// DefaultMaxHeld is Options.MaxHeld's default: 16,384 records, some
// 13 MB as FPDU records (816 octets each), 2-3 MB as the queue keeps them
// past 1,024 (packed, heldpack.go), so that a decode stays
// within issue 6's 64 MiB however long its messages are. A message spans
// that many records when it is some 23 MB long at an MSS of 1460, or when
// the connections around it send that many FPDUs before it completes.
// (It was 1<<20: a single 128 MiB RDMA Write held its 93,000 FPDU records
// until it completed, 105 MiB of RSS.)
const DefaultMaxHeld = 16384

// DefaultMaxResets is Options.MaxResets's default: 1,024 connections,
// some 3.5 MB (a connection reset after a few messages takes some 3.5 KB
// until it retires). Octets in flight when a connection is reset arrive
// within a round trip; past some hundred connections reset a second
// for the minutes a reset connection is kept whole (a storm of resets),
// the oldest retires at once. (Without a cap, 25,000 connections reset
// within 7 s took 218 MiB of RSS, and 100,000 filled the connection
// table, which evicted 34,464 of them, each with a finding; 4,096 took
// 20-30 MiB more than 1,024 on those.)
const DefaultMaxResets = 1024

func (o *Options) fill() {
	if o.MaxConns <= 0 {
		o.MaxConns = 65536
	}
	if o.MaxResets <= 0 {
		o.MaxResets = DefaultMaxResets
	}
	if o.MaxHeld <= 0 {
		o.MaxHeld = DefaultMaxHeld
	}
	if o.MaxMessages <= 0 {
		o.MaxMessages = 4096
	}
	if o.MaxFindingsPerCode <= 0 {
		o.MaxFindingsPerCode = 100
	}
}

// Decoder turns packets into records. It is not safe for concurrent use.
type Decoder struct {
	opts  Options
	emit  func(*Record)
	conns map[connKey]*conn
	// finished lists the connections finished when they closed (both
	// FINs acknowledged, or a reset before any octet; Decoder.closed),
	// with the capture time of the close in Unix
	// nanoseconds: a packet without payload or SYN on the same endpoints
	// within strayWindow of it (a retransmitted FIN or ACK) is part of what
	// was summarised, not a new connection. Entries older than twice that
	// are swept (sweepFinished) once the map has doubled, so that it holds
	// the connections closed in the last minutes of the capture, not every
	// one it had. With it, the sequence space each side used, to tell a
	// segment of its octets sent again.
	finished     map[flatKey]finishedConn
	finishedMark int // len(finished) that starts the next sweep
	// cache remembers recently used connections by a hash of the 4-tuple
	// (cacheIndex); an entry is checked against the packet's endpoints and
	// cleared when its connection is finished.
	cache       [connCacheSize]*conn
	noConnCache bool   // tests: always look up the map
	noSpare     bool   // tests: never reuse a closed connection's storage
	noSettle    bool   // tests: never settle a reset connection (settle.go)
	scanIdle    bool   // tests: find the connection to evict by looking at every one
	noEmbryo    bool   // tests: make a connection at its SYN (embryo.go)
	unordered   uint64 // records emitted past Options.MaxHeld (Unordered)
	snapHidden  int    // SnapHidden
	workers     int    // the workers of its Parallel, 1 for a single Decoder (maxEmbryos)
	// packs are the conn records of the reset connections retired
	// (settle.go), packed (retired.go) and sorted by frame; lazy, from
	// Close on, yields them; saving, while one retires, where push puts
	// its records.
	packs    *spill.Sorter
	lazy     *spill.Iter
	spillErr error    // packs' error reading them back (SpillErr)
	packEnc  []byte   // a record being packed
	strs     []string // the strings of packs (packString)
	// retiredRecs are the records a retired connection queues at Close
	// besides its conn record, by id: few have any.
	retiredRecs map[int][]*Record
	saving      *[]*Record
	// embryos are the connections that have sent a SYN and nothing else
	// (embryo.go).
	embryos embryoTable
	// idle orders the connections in the table by their last packet, for
	// evictIdle (idle.go).
	idle      idleHeap
	fullStrip bool // tests: strip the markers of every FPDU whole
	nextID    int
	queue     orderQueue
	order     uint64
	frame     uint64 // the frame being processed
	// endTS is the time the capture ended: the last packet's, or SetEnd's
	// (endFrame, endSet), for the connections stalled when it did.
	endTS    time.Time
	endFrame uint64
	endSet   bool
	// pending is a min-heap of the directions that may still emit records
	// about earlier frames, by the earliest such frame (pending.go).
	pending []*direction
	// recent remembers the timestamps of the last non-TCP frames seen, so
	// that findings about an earlier frame carry its time (TCP connections
	// keep their own, conn.recent).
	recent    [recentFrames]frameTS
	recentIdx int
	// ext is the state of the non-TCP transports (ext.go).
	ext extState
	// worker: the Decoder is one of a Parallel's. It hands every record
	// to out as it is queued, with the internal recNewID and recConnEnd
	// records, and notes after each packet the frame and its pending
	// limit in steps; the merge orders (parallel.go).
	worker bool
	// streams: the TCP stream numbers of the ids (not a worker's: the
	// merge numbers its connections).
	streams streamNums

	local  Local                 // a worker's Local (Parallel.SetLocal), or SetLocal's, or nil
	absorb func(conn int, v any) // SetLocal
	boxes  []*fpduBox            // Options.Recycle: emitted FPDU records to reuse
	made   int                   // the FPDU boxes newBox has allocated (tests)
	// stripBuf and stripFound: what plausible strips markers into.
	stripBuf   []byte
	stripFound []markers.Found
	// owns keeps the buffers of finished directions (direction.own) for
	// the next ones: on a capture of many short connections, growing one
	// for each connection was more than a quarter of what the decode
	// allocated.
	owns [][]byte
	// spare keeps connections finished when they closed, whose storage
	// newConn reuses.
	spare []*conn
	// resets[resetHead:] lists the connections reset after octets whose
	// rings of sent segments are held, in the order of their resets
	// (settle.go).
	resets    []resetRef
	resetHead int
	msgFree   []*msgState // and message records
	pkt       uint32
	out       []*Record
	offered   int // a Parallel's worker: out[:offered] were offered to its Local
	steps     []pstep
}

type frameTS struct {
	frame uint64
	ts    time.Time
}

const recentFrames = 4096

// frameTime returns the timestamp of a recent frame.
func (d *Decoder) frameTime(frame uint64) (time.Time, bool) {
	for i := 0; i < recentFrames; i++ {
		e := &d.recent[(d.recentIdx-1-i+2*recentFrames)%recentFrames]
		if e.frame == frame && frame != 0 {
			return e.ts, true
		}
		if e.frame != 0 && e.frame < frame {
			break
		}
	}
	return time.Time{}, false
}

// connKey identifies a TCP connection independent of direction: the two
// endpoints in a canonical order.
type connKey struct{ lo, hi netip.AddrPort }

func keyOf(a, b netip.AddrPort) connKey {
	if a.Compare(b) <= 0 {
		return connKey{a, b}
	}
	return connKey{b, a}
}

// connCacheBits sizes Decoder.cache: 1<<connCacheBits entries.
const (
	connCacheBits = 8
	connCacheSize = 1 << connCacheBits
)

// cacheIndex hashes a 4-tuple, in either direction, to an entry of
// Decoder.cache: cheaper than the map's hash of two netip.AddrPorts, which
// was a twentieth of the decode. IPv4 addresses are read as As4 gives
// them, in registers: As16's array, copied on the stack and read back,
// stalled each packet's lookup (a store-to-load forwarding failure).
func cacheIndex(a, b netip.AddrPort) int {
	var h uint64
	if x, y := a.Addr(), b.Addr(); x.Is4() && y.Is4() {
		xa, ya := x.As4(), y.As4()
		h = portHash(uint64(binary.LittleEndian.Uint32(xa[:])), a.Port()) +
			portHash(uint64(binary.LittleEndian.Uint32(ya[:])), b.Port())
	} else {
		h = endpointHash(a) + endpointHash(b)
	}
	return int(h * 0x9E3779B97F4A7C15 >> (64 - connCacheBits))
}

func endpointHash(a netip.AddrPort) uint64 {
	ip := a.Addr().As16()
	lo := binary.LittleEndian.Uint64(ip[8:])
	hi := binary.LittleEndian.Uint64(ip[:8])
	return portHash(lo^hi*0xC2B2AE3D27D4EB4F, a.Port())
}

func portHash(addr uint64, port uint16) uint64 {
	return (addr ^ uint64(port)<<17) * 0xFF51AFD7ED558CCD
}

// NewDecoder returns a Decoder that hands every record to emit, in frame
// order. emit may keep the record.
func NewDecoder(opts Options, emit func(*Record)) *Decoder {
	opts.fill()
	d := &Decoder{
		opts:    opts,
		emit:    emit,
		conns:   make(map[connKey]*conn),
		workers: 1,
	}
	if opts.Payload == nil {
		// Payload's caller is given the record to be emitted: it stays
		// the same record (heldpack.go).
		d.queue.pk = newHeldPack(d.newBox, func(b *fpduBox) { d.recycle(&b.r) })
	}
	return d
}

// Packet feeds one captured packet. Packets that are not TCP are ignored.
// The packet's payload is not kept after Packet returns.
func (d *Decoder) Packet(p *capture.Packet) {
	d.frame, d.endTS = p.Frame, p.TS
	if p.Kind != capture.KindTCP {
		// RoCEv2 connection management and DDP over SCTP (ext.go).
		d.recent[d.recentIdx] = frameTS{p.Frame, p.TS}
		d.recentIdx = (d.recentIdx + 1) % recentFrames
		d.otherPacket(p)
		d.release(false)
		return
	}
	ci := cacheIndex(p.Src, p.Dst)
	c := d.cache[ci]
	if d.noConnCache || c == nil || !((c.a == p.Src && c.b == p.Dst) || (c.a == p.Dst && c.b == p.Src)) {
		c = d.conns[keyOf(p.Src, p.Dst)]
		d.cache[ci] = c
	}
	syn := p.Flags&capture.FlagSYN != 0
	ack := p.Flags&capture.FlagACK != 0
	if c != nil && (c.closed || syn && !ack && c.newIncarnation(p)) && d.reused(c, p, syn && !ack) {
		// Port reuse: a new connection on the same 4-tuple (reused also
		// settles a reset connection a packet comes late to, settle.go).
		c = nil
	}
	if c == nil {
		// New, or nil: a FIN or ACK sent again after a close. (As many
		// lines above c.packet as before: default.pgo keys inlining to them.)
		if c = d.open(p, ci, syn); c == nil {
			d.release(false)
			return
		}
	}
	c.packet(p)
	d.repend(c)
	d.release(false)
}

// open starts the connection of packet p (whose cache slot is ci), or
// returns nil for a packet without SYN, and without payload or with
// octets the connection had sent, on the endpoints of a connection
// finished when it closed, within strayWindow of the close (a FIN, an ACK
// or octets sent again: the peer's acknowledgement was lost), and for a
// SYN that only makes an embryo
// (embryo.go).
func (d *Decoder) open(p *capture.Packet, ci int, syn bool) *conn {
	k := keyOf(p.Src, p.Dst)
	if f, gone := d.finished[flatKeyOf(k)]; gone {
		if !syn && (len(p.Payload) == 0 || f.sentBefore(p, k)) && p.TS.UnixNano()-f.at <= int64(strayWindow) {
			return nil
		}
		delete(d.finished, flatKeyOf(k))
	}
	if d.embryos.live > 0 {
		if e, ok := d.embryos.take(flatKeyOf(k)); ok && !d.abandoned(e, k, p) {
			return d.born(k, e, ci)
		}
	}
	if !d.noEmbryo && pureSYN(p) && d.conceive(k, p) {
		return nil
	}
	return d.add(k, d.newID(true), p.Src, p.Dst, p.Frame, p.TS, ci)
}

// abandoned reports whether packet p, on endpoints k, is a SYN without
// ACK from the side of embryo e, taken from the table, with another
// sequence number: not e's SYN sent again (TCP keeps the ISN of a SYN it
// retransmits, RFC 9293 §3.8.1) but a new connection attempt on the same
// endpoints, after e's went unanswered (a client that binds its port, as
// NFS/RDMA's reserved ports, and connects again). e is then done with,
// with no record, as an embryo dropped: given its SYN, the new
// connection took it for its own, contradicting (tcp.retransmit_conflict),
// and its octets for a tcp.gap of the distance between the ISNs.
func (d *Decoder) abandoned(e embryo, k connKey, p *capture.Packet) bool {
	if p.Flags&(capture.FlagSYN|capture.FlagACK) != capture.FlagSYN || (p.Src == k.lo) != e.fromLo || p.Seq == e.seq {
		return false
	}
	d.endEmbryo(e)
	return true
}

// add makes connection id, from a to b, whose first packet is frame at ts,
// on endpoints k and cache slot ci.
func (d *Decoder) add(k connKey, id int, a, b netip.AddrPort, frame uint64, ts time.Time, ci int) *conn {
	if len(d.conns) >= d.opts.MaxConns {
		d.evictIdle()
	}
	c := d.newConn(id, a, b, frame, ts)
	d.conns[k] = c
	if !d.scanIdle {
		d.noteOpen(c, frame)
	}
	d.cache[ci] = c
	return c
}

// reused handles a packet p on the endpoints of closed connection c: a SYN
// without ACK (syn) starts a new connection, and c is finished; any other
// packet belongs to c, which it may find settled (conn.late).
func (d *Decoder) reused(c *conn, p *capture.Packet, syn bool) bool {
	if c.retirable(p.TS) {
		// Its endpoints have been quiet for longer than TCP keeps a
		// reset connection's octets in flight: a new connection
		// (settle.go).
		d.retire(c)
		return true
	}
	if syn {
		d.finish(c)
		return true
	}
	c.late(p.TS)
	return false
}

// newIncarnation reports whether p, a SYN without ACK on the endpoints of
// connection c, which has not closed, starts a new connection there: its
// side of c already has another initial sequence number (or started at
// octets this SYN does not precede). The host restarted, or the capture
// missed the close (lost FINs or RST, or a side that closed only one
// way), and a new connection reuses the ports with a new ISN (RFC 9293
// §3.4); tshark starts a new tcp.stream at such a SYN. Taken for c, its
// SYN contradicted c's (tcp.retransmit_conflict) and its octets fell far
// from c's (a false tcp.gap of the distance between the ISNs).
func (c *conn) newIncarnation(p *capture.Packet) bool {
	return c.dirs[c.sideOf(p.Src)].stream.OtherSYN(reassembly.SeqNum(p.Seq))
}

// closed finishes connection c, which has closed both ways (conn.over), or
// was reset before any octet: summarised now, as the JSON Lines contract
// says ("written when it closes or the capture ends"), rather than at the
// end of the capture, so that memory does not grow with the connections a
// capture has had. Its endpoints are noted (finished) until a packet with
// a SYN or octets uses them again, or strayWindow has passed, and its
// storage is kept for the next connection (newConn).
func (d *Decoder) closed(c *conn) {
	d.finish(c)
	at := max(c.dirs[0].lastTS.UnixNano(), c.dirs[1].lastTS.UnixNano())
	if d.finished == nil {
		d.finished = make(map[flatKey]finishedConn)
	}
	if len(d.finished) >= d.finishedMark {
		d.sweepFinished(at)
	}
	k := keyOf(c.a, c.b)
	f := finishedConn{at: at}
	for s, t := range c.tcp {
		i := 0
		if c.endpoint(side(s)) != k.lo {
			i = 1
		}
		if dir := c.dirs[s]; t.nxtSet && dir.seqKnown {
			f.from[i], f.to[i], f.used[i] = dir.seqBase-1, t.nxt, true
		}
	}
	d.finished[flatKeyOf(k)] = f
	if len(d.spare) < maxSpare && !d.noSpare {
		d.spare = append(d.spare, c)
	}
}

// finishedConn is what Decoder.finished keeps of a connection finished
// when it closed: the capture time of the close (Unix nanoseconds) and,
// for each side (that of the key's lo endpoint first) that sent octets,
// the sequence numbers it used: from the SYN's (or the one before its
// first octet), to the one after its FIN.
type finishedConn struct {
	at       int64
	from, to [2]uint32
	used     [2]bool
}

// sentBefore reports whether the octets (and FIN) of packet p, on
// endpoints k, lie within what its side sent on the finished connection:
// a copy of a segment sent again, when the acknowledgement of the
// original was lost, and not a new connection's.
func (f *finishedConn) sentBefore(p *capture.Packet, k connKey) bool {
	i := 0
	if p.Src != k.lo {
		i = 1
	}
	n := uint32(max(p.PayloadWireLen, len(p.Payload)))
	if p.Flags&capture.FlagFIN != 0 {
		n++
	}
	span := f.to[i] - f.from[i]
	return f.used[i] && p.Seq-f.from[i] < span && p.Seq+n-f.from[i] <= span
}

// maxSpare bounds Decoder.spare.
const maxSpare = 16

// strayWindow is how long after a connection closed a packet without
// payload or SYN on its endpoints is taken for a copy of its last FIN or
// ACK: one Maximum Segment Lifetime (RFC 9293 §3.4.2: 2 minutes). A
// retransmission comes within a few retransmission timeouts; TIME-WAIT,
// which keeps the endpoints from a new connection, lasts two MSL (RFC 9293
// §3.6.1), 60 seconds on Linux.
const strayWindow = 2 * time.Minute

// sweepFinished forgets the finished connections that closed more than
// twice strayWindow before now (Unix nanoseconds), and sets the size of the
// map that starts the next sweep: twice what is left, so that sweeps cost
// O(1) a connection. An entry swept is one that strayWindow already
// excludes, for packets at or after now; the margin of another strayWindow
// keeps that so for captures whose timestamps step back by less than it,
// and keeps -j N's output equal to -j 1's (each worker sweeps at the
// closes of its own connections).
func (d *Decoder) sweepFinished(now int64) {
	for k, f := range d.finished {
		if now-f.at > 2*int64(strayWindow) {
			delete(d.finished, k)
		}
	}
	d.finishedMark = max(2*len(d.finished), 1024)
}

// SetEnd says when the capture ended, for the connections still stalled
// then (tcp.stall, stall.go): frame is its last frame, or 0 for a live
// capture stopped at ts. Without it, the last packet given to Packet
// ends it. It is called just before Close (flows.Parallel tells its
// workers the whole capture's end).
func (d *Decoder) SetEnd(ts time.Time, frame uint64) {
	d.endTS, d.endFrame, d.endSet = ts, frame, true
}

// Close ends the capture: every connection is flushed (buffered data
// delivered, gaps reported), summarised, and all records are emitted.
func (d *Decoder) Close() {
	endFrame := d.frame
	if d.endSet {
		endFrame = d.endFrame
	}
	// Finish in order of connection id for deterministic output.
	cs := make([]*conn, 0, len(d.conns))
	for _, c := range d.conns {
		cs = append(cs, c)
	}
	// Sorted, not inserted one by one: a capture of 20,000 connections
	// spent 0.8 s here.
	slices.SortFunc(cs, func(a, b *conn) int { return cmp.Compare(a.id, b.id) })
	// The connections retired (settle.go) take their turn among them, with
	// the records they queued when they retired; their packed conn
	// records are merged with the queue as it empties (releaseLazy).
	rids := make([]int, 0, len(d.retiredRecs))
	for id := range d.retiredRecs {
		rids = append(rids, id)
	}
	slices.Sort(rids)
	for _, c := range cs {
		for len(rids) > 0 && rids[0] < c.id {
			d.unretire(rids[0])
			rids = rids[1:]
		}
		if !d.endTS.IsZero() {
			c.stallToEnd(d.endTS.UnixNano(), endFrame)
		}
		d.finish(c)
	}
	for _, id := range rids {
		d.unretire(id)
	}
	if d.packs != nil {
		d.lazy = d.packs.Sorted()
	}
	d.closeEmbryos()
	d.closeExt()
	d.release(true)
	if !d.worker {
		// A worker hands them to the merge with its last records.
		d.endLazy()
	}
	if d.local != nil && !d.worker {
		if v := d.local.Flush(-1); v != nil {
			d.absorb(-1, v)
		}
	}
}

// finish flushes and summarises a connection and drops it from the table.
func (d *Decoder) finish(c *conn) {
	c.flush()
	c.summarise()
	delete(d.conns, keyOf(c.a, c.b))
	if ci := cacheIndex(c.a, c.b); d.cache[ci] == c {
		d.cache[ci] = nil
	}
	for _, dir := range c.dirs {
		d.dropPending(dir)
	}
	if d.worker || d.local != nil {
		r := mkRecord(recConnEnd, c.lastFrame, time.Time{})
		r.Conn = c.id
		d.push(r)
	}
}

// evictIdle removes the connection that has been idle the longest
// (idle.go); the test reference (scanIdle) looks at every one.
func (d *Decoder) evictIdle() {
	var victim *conn
	if d.scanIdle {
		for _, c := range d.conns {
			if victim == nil || c.lastFrame < victim.lastFrame || (c.lastFrame == victim.lastFrame && c.id < victim.id) {
				victim = c
			}
		}
	} else {
		victim = d.idlest()
	}
	if victim == nil {
		return
	}
	if victim.rstSeen && !d.noSettle {
		// Reset already: it retires before its time (settle.go), its
		// summary still at the end of the capture, as when
		// Options.MaxResets is reached.
		d.retire(victim)
		return
	}
	victim.finding(nil, dissect.SeverityWarning, "cap.conn_evicted",
		"connection table full: the connection idle the longest was closed early", "", victim.lastFrame)
	d.finish(victim)
}

// newID allocates a connection id, a TCP connection's or not (tcp), and
// notes which for the TCP stream numbers (streams.go). A Parallel worker
// queues a recNewID record at the current frame instead, so that the
// merge can number the connections of all workers in the order a single
// Decoder would.
func (d *Decoder) newID(tcp bool) int {
	id := d.nextID
	d.nextID++
	if d.worker {
		r := mkRecord(recNewID, d.frame, time.Time{})
		r.Conn = id
		r.ext = !tcp
		d.push(r)
	} else {
		d.streams.add(id, tcp)
	}
	return id
}

// ReleaseBefore emits the records held whose frames are older than t,
// even when a connection may still queue one for an earlier frame: for a
// live capture, whose records must not wait for a message that may never
// complete (a connection reset in the middle of an RDMA Write, a frame
// lost by the kernel), as a file's may. A record that comes later for an
// earlier frame is then written out of frame order (Unordered counts
// them).
func (d *Decoder) ReleaseBefore(t time.Time) {
	limit := d.pendingLimit()
	for d.queue.len() > 0 {
		if r := d.queue.peek(); !r.TS.IsZero() && !r.TS.Before(t) {
			break
		}
		if d.queue.peekFrame() >= limit {
			d.unordered++
		}
		d.emitQueued(d.queue.pop())
	}
}

// Unordered returns how many records were emitted out of frame order
// because more than Options.MaxHeld waited: each came ahead of a record
// about an earlier frame still to come (the record of a message, which
// is about its first frame, open all the while).
func (d *Decoder) Unordered() uint64 { return d.unordered }

// SnapHidden returns how many of the TCP connections summarised so far
// could not be told iWARP or not because the capture's snap length cut
// the first segment of a direction before half an MPA key (8 octets) of
// its payload: they have no records.
func (d *Decoder) SnapHidden() int { return d.snapHidden }

// push queues a record for ordered release.
func (d *Decoder) push(r *Record) {
	if d.saving != nil {
		// A connection retiring: its records are queued at Close.
		*d.saving = append(*d.saving, r)
		return
	}
	d.order++
	r.order = d.order
	if d.worker {
		// The merge orders records as this Decoder would (parallel.go).
		r.pkt = d.pkt
		d.out = append(d.out, r)
		return
	}
	if d.local != nil {
		// Offered to the Local between packets (release).
		d.out = append(d.out, r)
		return
	}
	d.queue.push(r)
}

// release emits queued records that no unfinished data can precede.
func (d *Decoder) release(all bool) {
	if d.worker {
		if !all {
			d.steps = append(d.steps, pstep{frame: d.frame, pend: d.pendingLimit()})
		}
		return
	}
	if d.local != nil && len(d.out) > 0 {
		d.out = d.takeLocal(d.out, 0)
		for _, r := range d.out {
			d.queue.push(r)
		}
		clear(d.out)
		d.out = d.out[:0]
	}
	if all && d.lazy != nil {
		d.releaseLazy()
		return
	}
	limit := min(d.frame+1, d.pendingLimit())
	for d.queue.len() > 0 {
		if !all && d.queue.peekFrame() >= limit {
			if d.queue.len() <= d.opts.MaxHeld {
				break
			}
			d.unordered++
		}
		r := d.queue.pop()
		// emitQueued, by hand: a call per record cost 4 % of -q.
		if r.Type == recConnEnd || r.Type == recLocal {
			if r.local != nil {
				d.absorb(r.Conn, r.local)
				r.local = nil
			}
			continue
		}
		r.stream = d.streams.of(r.Conn)
		d.emit(r)
		if d.opts.Recycle {
			d.recycle(r)
		}
	}
	d.queue.packHeld()
}

// emitQueued emits r, a record from the queue, or hands an internal
// record's counts to absorb.
func (d *Decoder) emitQueued(r *Record) {
	if r.Type == recConnEnd || r.Type == recLocal {
		// SetLocal: what the Local counted of the connection.
		if r.local != nil {
			d.absorb(r.Conn, r.local)
			r.local = nil
		}
		return
	}
	r.stream = d.streams.of(r.Conn)
	d.emit(r)
	if d.opts.Recycle {
		d.recycle(r)
	}
}

// releaseLazy is Close's release when retired connections left packed
// conn records (retired.go): it emits them and every record queued,
// merged in frame order, the queued first at a frame.
func (d *Decoder) releaseLazy() {
	for {
		k, ok := d.lazy.Peek()
		if !ok {
			break
		}
		for d.queue.len() > 0 && d.queue.peekFrame() <= k.A {
			d.emitQueued(d.queue.pop())
		}
		_, b, _ := d.lazy.Next()
		r, _ := unpackConn(b, d.strs)
		r.stream = d.streams.of(r.Conn)
		d.emit(r)
	}
	for d.queue.len() > 0 {
		d.emitQueued(d.queue.pop())
	}
	d.endLazy()
}

// endLazy notes the error of the packed conn records, if any, and drops
// them with their temporary file.
func (d *Decoder) endLazy() {
	if d.packs != nil {
		if err := d.packs.Err(); err != nil && d.spillErr == nil {
			d.spillErr = err
		}
		d.packs.Close()
	}
	d.packs, d.lazy = nil, nil
}

// retiredBudget is the memory the packed conn records of a Decoder's
// retired connections take before they go to a temporary file, shared
// out among a Parallel's workers (internal/spill).
const retiredBudget = 2 << 20

// testSpillBudget, when not 0, is every Decoder's share (tests).
var testSpillBudget int

// spillBudget returns the Decoder's share of retiredBudget.
func (d *Decoder) spillBudget() int {
	if testSpillBudget > 0 {
		return testSpillBudget
	}
	return max(retiredBudget/max(d.workers, 1), 256<<10)
}

// SpillErr returns the error that lost packed conn records of retired
// connections at Close, if any: their temporary file could not be read
// back (internal/spill).
func (d *Decoder) SpillErr() error { return d.spillErr }

// boxKind says what holds a record: its own allocation, an fpduBox or a
// msgState (which the Decoder can reuse under Options.Recycle; the record
// is the first field of both).
type boxKind uint8

const (
	boxNone boxKind = iota
	boxFPDU
	boxMsg
	boxLite // a Parallel merge's liteRec (SetFormat), never a Decoder's
)

// recycle keeps the holder of an emitted record for reuse.
func (d *Decoder) recycle(r *Record) {
	switch r.box {
	case boxFPDU:
		if len(d.boxes) < maxFreeBoxes {
			d.boxes = append(d.boxes, (*fpduBox)(unsafe.Pointer(r)))
		}
	case boxMsg:
		if len(d.msgFree) < maxFreeBoxes {
			d.msgFree = append(d.msgFree, (*msgState)(unsafe.Pointer(r)))
		}
	}
}

// newMsg returns a zeroed message state, reused when possible.
func (d *Decoder) newMsg() *msgState {
	var s *msgState
	if n := len(d.msgFree); n > 0 {
		s = d.msgFree[n-1]
		d.msgFree = d.msgFree[:n-1]
		*s = msgState{}
	} else {
		s = &msgState{}
	}
	s.r.box = boxMsg
	return s
}

// maxFreeBoxes bounds the FPDU records (and message states) kept for
// reuse. A -j N worker's boxes come back from the merge a round at a
// time, while it runs rounds ahead: with 1,024, a worker dropped the
// boxes of a round it got back past that and made new ones for the next
// (small messages, -j 2 -z conn: 41,000 dropped here, 91,000 made, 105
// MB). With 2,048 the two workers made some 2,300 FPDU boxes in all
// (4,096: as many, and 2,000 connections open at once held 2-4 MiB more).
const maxFreeBoxes = 2048

// Bounds of Decoder.owns.
const (
	maxOwns   = 64
	maxOwnCap = 64 << 10
)

// giveOwn keeps b, the emptied buffer of a direction, for another.
func (d *Decoder) giveOwn(b []byte) {
	if c := cap(b); c > 0 && c <= maxOwnCap && len(d.owns) < maxOwns {
		d.owns = append(d.owns, b[:0])
	}
}

// takeOwn returns an empty buffer for a direction, one given back when
// there is one.
func (d *Decoder) takeOwn() []byte {
	if n := len(d.owns); n > 0 {
		b := d.owns[n-1]
		d.owns[n-1] = nil
		d.owns = d.owns[:n-1]
		return b
	}
	return nil
}

// newBox returns a zeroed FPDU record box, reused when possible.
func (d *Decoder) newBox() *fpduBox {
	if n := len(d.boxes); n > 0 {
		b := d.boxes[n-1]
		d.boxes = d.boxes[:n-1]
		*b = fpduBox{}
		b.r.box = boxFPDU
		return b
	}
	d.made++
	b := &fpduBox{}
	b.r.box = boxFPDU
	return b
}

// tsOf is a helper for records built from a frame number and timestamp.
func mkRecord(t RecordType, frame uint64, ts time.Time) *Record {
	return &Record{Type: t, Frame: frame, TS: ts}
}

package synth

import (
	"fmt"
	"math/rand/v2"

	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/markers"
)

// TCP flag bits of segment.flags.
const (
	flagFIN = 1 << iota
	flagSYN
	flagRST
	flagPSH
	flagACK
)

// gapClass says what kind of pause precedes a frame, for the timestamps.
type gapClass uint8

const (
	gapHandshake gapClass = iota
	gapBurst              // next segment of the same burst
	gapTurn               // first segment after the other side spoke
	gapAck                // a pure ACK
	gapClose
	gapRetrans
)

// dropReason says why a segment is not in the capture.
type dropReason uint8

const (
	keep       dropReason = iota
	dropLost              // Impairments.Drop
	dropBefore            // before Impairments.StartAt
)

// segment is one TCP segment of a connection, before and after impairments.
type segment struct {
	dir      Dir
	off      uint64 // stream offset of the first payload octet (of the FIN for a FIN)
	seq      uint32
	ack      uint32
	flags    uint8
	payload  []byte
	mssOpt   uint16 // SYN and SYN-ACK: the MSS option
	dataIdx  int    // index among the direction's data segments, -1 if none
	gap      gapClass
	pause    int64    // microseconds of Op.Pause before it, on top of gap
	copyOf   *segment // a retransmission of this segment
	conflict bool     // a retransmission with different octets
	drop     dropReason

	// Set once the connection's frames are final.
	t     int64 // microseconds from the scenario start
	ipid  uint16
	frame uint64 // 1-based capture frame number, 0 when not captured
	slot  uint64 // frame number of the first captured frame at or after it
	cap   int    // payload octets in the capture (snaplen)
}

// recKind tells MPA frames from FPDUs.
type recKind uint8

const (
	recMPA recKind = iota
	recFPDU
)

// record is one MPA frame or FPDU as the generator encoded it: the truth.
type record struct {
	kind    recKind
	dir     Dir
	off     uint64 // stream offset of the first octet (a leading marker included)
	wireLen int
	ordinal int // creation order within the connection

	// recMPA
	frame mpa.Frame

	// recFPDU
	index      int // the FPDU's index in its direction
	ulpduLen   int
	pad        int
	markers    []markerTruth
	crc        uint32 // the CRC field as sent
	crcOn      bool
	corrupted  bool
	raw        bool // RawULPDU: no DDP header
	seg        rdmap.Segment
	payloadLen int
}

type markerTruth struct {
	off     uint64
	rsvd    uint16
	fpduptr uint16
}

// dirGen is the sending state of one direction.
type dirGen struct {
	isn     uint32
	off     uint64 // stream octets written by the ULP
	sent    uint64 // stream octets cut into segments
	pending []byte // octets [sent, off)
	exact   []int
	markers bool
	grid    markers.Grid
	crc     bool
	msn     map[uint32]uint32
	nData   int // data segments emitted
	nFPDU   int
	unacked int // data segments the peer has not ACKed yet
	fin     bool
}

// connGen turns one Conn into segments and records.
type connGen struct {
	c        *Conn
	idx      int
	mss      int
	ackEvery int
	win      uint16
	pay      *rand.Rand
	d        [2]dirGen
	cur      Dir
	segs     []*segment
	recs     []*record
	dv, rv   uint8
	corrupt  map[FPDURef]bool
	reverse  map[FPDURef]bool
	msgs     int
	state    string
	rejected bool
	spoke    bool // a data segment was emitted
	lastData Dir  // direction of the last data segment
	stats    connStats
	nrec     int    // records created so far (ordinals)
	pause    int64  // Op.Pause (microseconds) for the next segment
	buf      []byte // scratch for ULPDUs
	wire     []byte // scratch for FPDUs (write copies them)
}

// newConnGen validates c and sets up the negotiated parameters.
func newConnGen(c *Conn, idx int, seed int64) (*connGen, error) {
	if c.Initiator.Addr().Is4() != c.Responder.Addr().Is4() || !c.Initiator.IsValid() || !c.Responder.IsValid() {
		return nil, fmt.Errorf("%w (conn %d)", ErrAddrFamily, idx)
	}
	misc := newRand(seed, idx, streamMisc)
	g := &connGen{
		c:        c,
		idx:      idx,
		mss:      c.MSS,
		ackEvery: c.AckEvery,
		win:      c.Window,
		pay:      newRand(seed, idx, streamPayload),
		corrupt:  map[FPDURef]bool{},
		reverse:  map[FPDURef]bool{},
		state:    "open",
	}
	if g.mss <= 0 {
		g.mss = defaultMSS
	}
	if g.ackEvery == 0 {
		g.ackEvery = 2
	}
	// Draw every seeded number in a fixed order, used or not.
	isnI, isnR := misc.Uint32(), misc.Uint32()
	win := uint16(between(misc, 29200, 65535))
	if g.win == 0 {
		g.win = win
	}
	g.d[I2R].isn, g.d[R2I].isn = c.ISNI, c.ISNR
	if c.ISNI == 0 {
		g.d[I2R].isn = isnI
	}
	if c.ISNR == 0 {
		g.d[R2I].isn = isnR
	}
	for i := range g.d {
		g.d[i].msn = map[uint32]uint32{}
		g.d[i].exact = c.ExactSegments[i]
		for _, n := range g.d[i].exact {
			if n <= 0 {
				return nil, fmt.Errorf("%w: %d (conn %d)", ErrBadSegSizes, n, idx)
			}
		}
	}
	for _, r := range c.Impair.CorruptCRC {
		g.corrupt[r] = true
	}
	for _, r := range c.Impair.ReverseCRC {
		g.reverse[r] = true
	}

	// Negotiation (RFC 5044 §7.1.2, PROTOCOL.md A.2 and E).
	mI2R, mR2I, crc := true, true, true
	var v uint8
	if p := c.MPA; p != nil {
		mR2I = p.Request.M
		mI2R = !p.NoReply && p.Reply.M
		crc = p.Request.C || (!p.NoReply && p.Reply.C)
		v = 1
		if p.Request.Rev == 0 || (!p.NoReply && p.Reply.Rev == 0) {
			v = 0
		}
		g.rejected = p.NoReply || p.Reply.R
		if g.rejected && len(c.Ops) > 0 {
			return nil, fmt.Errorf("%w (conn %d)", ErrOpsRejected, idx)
		}
	}
	g.dv, g.rv = v, v
	if c.DV != nil {
		g.dv = *c.DV
	}
	if c.RV != nil {
		g.rv = *c.RV
	}
	if c.MarkersI2R != nil {
		mI2R = *c.MarkersI2R
	}
	if c.MarkersR2I != nil {
		mR2I = *c.MarkersR2I
	}
	if c.CRC != nil {
		crc = *c.CRC
	}
	g.d[I2R].markers, g.d[R2I].markers = mI2R, mR2I
	g.d[I2R].crc, g.d[R2I].crc = crc, crc
	return g, nil
}

// seqOf returns the absolute TCP sequence number of stream offset off in
// direction d: ISN + 1 + off, modulo 2^32.
func (g *connGen) seqOf(d Dir, off uint64) uint32 {
	return g.d[d].isn + 1 + uint32(off)
}

// ackFor is the acknowledgment number direction d sends: everything the
// other direction has put in segments so far (the receiver ACKs what it
// got; capture loss does not change that).
func (g *connGen) ackFor(d Dir) uint32 {
	o := &g.d[d.Other()]
	a := g.seqOf(d.Other(), o.sent)
	if o.fin {
		a++
	}
	return a
}

func (g *connGen) addSeg(s *segment) {
	s.pause, g.pause = g.pause, 0
	s.dataIdx = -1
	if len(s.payload) > 0 {
		s.dataIdx = g.d[s.dir].nData
		g.d[s.dir].nData++
	}
	g.segs = append(g.segs, s)
}

// handshake emits SYN, SYN-ACK, ACK.
func (g *connGen) handshake() {
	g.segs = append(g.segs,
		&segment{dir: I2R, seq: g.d[I2R].isn, flags: flagSYN, mssOpt: uint16(g.mss), dataIdx: -1, gap: gapHandshake},
		&segment{dir: R2I, seq: g.d[R2I].isn, ack: g.d[I2R].isn + 1, flags: flagSYN | flagACK, mssOpt: uint16(g.mss), dataIdx: -1, gap: gapHandshake},
		&segment{dir: I2R, seq: g.d[I2R].isn + 1, ack: g.d[R2I].isn + 1, flags: flagACK, dataIdx: -1, gap: gapHandshake},
	)
}

// write appends octets the ULP of direction d sends, and cuts segments as
// the segmentation mode allows.
func (g *connGen) write(d Dir, b []byte) {
	if d != g.cur {
		g.endBurst(g.cur)
		g.cur = d
	}
	dg := &g.d[d]
	dg.pending = append(dg.pending, b...)
	dg.off += uint64(len(b))
	switch g.c.Segmentation {
	case SegmentPerRecord:
		for len(dg.pending) > 0 {
			n := min(len(dg.pending), g.mss)
			g.emitData(d, n, n == len(dg.pending))
		}
	case SegmentExact:
		g.cutExact(d)
	default:
		for len(dg.pending) >= g.mss {
			g.emitData(d, g.mss, len(dg.pending) == g.mss)
		}
	}
}

// cutExact emits the exact-size segments whose octets are all written.
func (g *connGen) cutExact(d Dir) {
	dg := &g.d[d]
	for len(dg.exact) > 0 && len(dg.pending) >= dg.exact[0] {
		n := dg.exact[0]
		dg.exact = dg.exact[1:]
		g.emitData(d, n, n == len(dg.pending))
	}
	if len(dg.exact) == 0 {
		for len(dg.pending) >= g.mss {
			g.emitData(d, g.mss, len(dg.pending) == g.mss)
		}
	}
}

// endBurst flushes what direction d has written before the other side
// speaks (or the connection ends). With exact sizes left, the tail waits.
func (g *connGen) endBurst(d Dir) {
	dg := &g.d[d]
	if g.c.Segmentation == SegmentExact && len(dg.exact) > 0 {
		return
	}
	for len(dg.pending) > 0 {
		n := min(len(dg.pending), g.mss)
		g.emitData(d, n, n == len(dg.pending))
	}
}

// flushAll sends everything still pending, exact sizes or not.
func (g *connGen) flushAll(d Dir) {
	dg := &g.d[d]
	for len(dg.pending) > 0 {
		n := len(dg.pending)
		if len(dg.exact) > 0 {
			n = min(n, dg.exact[0])
			dg.exact = dg.exact[1:]
		} else {
			n = min(n, g.mss)
		}
		g.emitData(d, n, n == len(dg.pending))
	}
}

// emitData cuts n pending octets of direction d into a segment.
func (g *connGen) emitData(d Dir, n int, psh bool) {
	dg := &g.d[d]
	p := make([]byte, n)
	copy(p, dg.pending[:n])
	dg.pending = append(dg.pending[:0], dg.pending[n:]...)
	s := &segment{dir: d, off: dg.sent, seq: g.seqOf(d, dg.sent), ack: g.ackFor(d), flags: flagACK, payload: p, gap: gapBurst}
	if psh {
		s.flags |= flagPSH
	}
	if !g.spoke || g.lastData != d {
		s.gap = gapTurn
	}
	g.spoke, g.lastData = true, d
	dg.sent += uint64(n)
	g.addSeg(s)
	g.d[d.Other()].unacked = 0 // this segment carries the ACK
	dg.unacked++
	if g.ackEvery > 0 && dg.unacked >= g.ackEvery {
		g.pureAck(d.Other())
	}
}

// pureAck makes direction d acknowledge everything it has received.
func (g *connGen) pureAck(d Dir) {
	g.addSeg(&segment{dir: d, off: g.d[d].sent, seq: g.seqOf(d, g.d[d].sent), ack: g.ackFor(d), flags: flagACK, gap: gapAck})
	g.d[d.Other()].unacked = 0
}

// mpaFrames writes the MPA Request and Reply.
func (g *connGen) mpaFrames() error {
	p := g.c.MPA
	if err := g.mpaFrame(I2R, mpa.KindRequest, &p.Request); err != nil {
		return err
	}
	if !p.NoReply {
		return g.mpaFrame(R2I, mpa.KindReply, &p.Reply)
	}
	return nil
}

func (g *connGen) mpaFrame(d Dir, k mpa.Kind, f *MPAFrame) error {
	if len(f.PD)+mpa.EnhancedLen > 0xFFFF {
		return ErrPDTooLong
	}
	var pd []byte
	if f.Enhanced != nil {
		pd = mpa.AppendEnhanced(pd, *f.Enhanced)
	}
	pd = append(pd, f.PD...)
	fr := mpa.Frame{Kind: k, M: f.M, C: f.C, R: f.R, S: f.S || f.Enhanced != nil, Res: f.Res, Rev: f.Rev, PDLen: uint16(len(pd)), PD: pd}
	wire := mpa.AppendFrame(nil, fr)
	r := &record{kind: recMPA, dir: d, off: g.d[d].off, wireLen: len(wire), ordinal: g.nrec, frame: fr}
	g.nrec++
	g.recs = append(g.recs, r)
	g.write(d, wire)
	return nil
}

// setOrigins anchors the marker grids once the MPA frames are written.
func (g *connGen) setOrigins() {
	for i := range g.d {
		if g.c.Origin == OriginStreamStart {
			g.d[i].grid = markers.Grid{Origin: 0}
		} else {
			g.d[i].grid = markers.Grid{Origin: g.d[i].off}
		}
	}
}

// run generates the whole connection.
func (g *connGen) run() error {
	if g.c.Handshake {
		g.handshake()
	}
	if g.c.MPA != nil {
		if err := g.mpaFrames(); err != nil {
			return fmt.Errorf("conn %d: %w", g.idx, err)
		}
	}
	g.setOrigins()
	if g.rejected {
		g.state = "rejected"
		if g.c.MPA.NoReply {
			g.state = "no_reply"
		}
	}
	for i := range g.c.Ops {
		if err := g.op(&g.c.Ops[i]); err != nil {
			return fmt.Errorf("conn %d op %d: %w", g.idx, i, err)
		}
	}
	g.finish()
	return nil
}

// finish flushes both directions, ACKs the tail and closes.
func (g *connGen) finish() {
	g.flushAll(g.cur)
	g.flushAll(g.cur.Other())
	for _, d := range []Dir{g.cur, g.cur.Other()} {
		if g.d[d].unacked > 0 && g.ackEvery > 0 {
			g.pureAck(d.Other())
		}
	}
	cl := g.c.Close
	by := cl.By
	if g.rejected {
		by = R2I
	}
	switch cl.Kind {
	case CloseFIN:
		g.fin(by, flagFIN|flagACK)
		g.fin(by.Other(), flagFIN|flagACK)
		g.addSeg(&segment{dir: by, off: g.d[by].sent, seq: g.seqOf(by, g.d[by].sent) + 1, ack: g.ackFor(by), flags: flagACK, gap: gapClose})
		if !g.rejected {
			g.state = "closed"
		}
	case CloseRST:
		g.addSeg(&segment{dir: by, off: g.d[by].sent, seq: g.seqOf(by, g.d[by].sent), ack: g.ackFor(by), flags: flagRST | flagACK, gap: gapClose})
		if !g.rejected {
			g.state = "reset"
		}
	}
}

func (g *connGen) fin(d Dir, flags uint8) {
	g.addSeg(&segment{dir: d, off: g.d[d].sent, seq: g.seqOf(d, g.d[d].sent), ack: g.ackFor(d), flags: flags, gap: gapClose})
	g.d[d].fin = true
}

// maxPayload is the DDP payload one segment may carry in direction d after
// a header of hdr octets.
func (g *connGen) maxPayload(op *Op, d Dir, hdr int) int {
	if op.MaxULPDU > 0 {
		return op.MaxULPDU
	}
	if g.c.MaxULPDU > 0 {
		return g.c.MaxULPDU
	}
	return max(mpa.MULPDU(g.mss, g.d[d].markers)-hdr, 1)
}

// nextMSN returns the MSN for the next message on queue qn of direction d
// (RFC 5041 §5.1: the first message has MSN 1).
func (g *connGen) nextMSN(d Dir, qn uint32) uint32 {
	m := g.d[d].msn[qn] + 1
	g.d[d].msn[qn] = m
	return m
}

// op expands one operation into DDP segments and FPDUs.
func (g *connGen) op(op *Op) error {
	if op.Dir > R2I {
		return fmt.Errorf("%w: direction %d", ErrBadOp, op.Dir)
	}
	size := op.Size
	if size == 0 && op.Payload != nil {
		size = len(op.Payload)
	}
	if size < 0 {
		return fmt.Errorf("%w: negative size", ErrBadOp)
	}
	d := op.Dir
	if op.Pause < 0 {
		return fmt.Errorf("%w: negative pause", ErrBadOp)
	}
	if op.Pause > 0 {
		g.endBurst(g.cur)
		g.pause += op.Pause.Microseconds()
	}
	switch op.Kind {
	case Send, SendInv, SendSE, SendSEInv:
		opc := [...]rdmap.Opcode{rdmap.OpSend, rdmap.OpSendInvalidate, rdmap.OpSendSE, rdmap.OpSendSEInvalidate}[op.Kind-Send]
		s := rdmap.Segment{Opcode: opc}
		if opc.HasInvalidate() {
			s.InvalSTag = op.STag
		}
		return g.untagged(op, d, s, fillPayload(g.pay, op, size))
	case Write:
		return g.tagged(op, d, rdmap.OpWrite, op.STag, op.TO, fillPayload(g.pay, op, size))
	case Read:
		if size > 0xFFFFFFFF {
			return fmt.Errorf("%w: read size", ErrBadOp)
		}
		rr := rdmap.ReadRequest{SinkSTag: op.STag, SinkTO: op.TO, Size: uint32(size), SrcSTag: op.SrcSTag, SrcTO: op.SrcTO}
		if err := g.untagged(op, d, rdmap.Segment{Opcode: rdmap.OpReadRequest, Read: rr}, nil); err != nil {
			return err
		}
		if op.NoResponse {
			return nil
		}
		return g.tagged(op, d.Other(), rdmap.OpReadResponse, op.STag, op.TO, fillPayload(g.pay, op, size))
	case Terminate:
		return g.untagged(op, d, rdmap.Segment{Opcode: rdmap.OpTerminate, Term: op.Term}, nil)
	case Immediate, ImmediateSE:
		opc := rdmap.OpImmediate
		if op.Kind == ImmediateSE {
			opc = rdmap.OpImmediateSE
		}
		return g.untagged(op, d, rdmap.Segment{Opcode: opc, Immediate: op.Immediate}, nil)
	case Atomic:
		if err := g.untagged(op, d, rdmap.Segment{Opcode: rdmap.OpAtomicRequest, AtomicReq: op.AtomicReq}, nil); err != nil {
			return err
		}
		if op.NoResponse {
			return nil
		}
		return g.untagged(op, d.Other(), rdmap.Segment{Opcode: rdmap.OpAtomicResponse, AtomicResp: op.AtomicResp}, nil)
	case RawULPDU:
		return g.fpdu(d, append([]byte(nil), op.Payload...), &record{raw: true})
	}
	return fmt.Errorf("%w: kind %v", ErrBadOp, op.Kind)
}

// untagged sends one untagged message: s with its DDP header filled in,
// split into DDP segments of the payload.
func (g *connGen) untagged(op *Op, d Dir, s rdmap.Segment, payload []byte) error {
	qn, _ := s.Opcode.QN()
	if op.QN != nil {
		qn = *op.QN
	}
	msn := g.nextMSN(d, qn)
	hdr := ddp.UntaggedHeaderLen + s.Opcode.HeaderLen()
	if s.Opcode == rdmap.OpTerminate {
		hdr = ddp.UntaggedHeaderLen + len(rdmap.AppendTerminate(nil, s.Term))
	}
	max := g.maxPayload(op, d, hdr)
	g.msgs++
	for mo := 0; ; {
		n := min(len(payload)-mo, max)
		seg := s
		seg.RV = g.rv
		seg.DDP = ddp.Header{L: mo+n == len(payload), DV: g.dv, QN: qn, MSN: msn, MO: uint32(mo)}
		seg.Payload = payload[mo : mo+n]
		if err := g.segment(d, seg); err != nil {
			return err
		}
		mo += n
		if mo >= len(payload) {
			return nil
		}
	}
}

// tagged sends one tagged message (RDMA Write or Read Response).
func (g *connGen) tagged(op *Op, d Dir, opc rdmap.Opcode, stag uint32, to uint64, payload []byte) error {
	max := g.maxPayload(op, d, ddp.TaggedHeaderLen)
	g.msgs++
	for off := 0; ; {
		n := min(len(payload)-off, max)
		seg := rdmap.Segment{
			DDP:     ddp.Header{T: true, L: off+n == len(payload), DV: g.dv, STag: stag, TO: to + uint64(off)},
			RV:      g.rv,
			Opcode:  opc,
			Payload: payload[off : off+n],
		}
		if err := g.segment(d, seg); err != nil {
			return err
		}
		off += n
		if off >= len(payload) {
			return nil
		}
	}
}

// segment encodes one DDP segment as the ULPDU of an FPDU.
func (g *connGen) segment(d Dir, s rdmap.Segment) error {
	g.buf = rdmap.AppendSegment(g.buf[:0], s)
	return g.fpdu(d, g.buf, &record{seg: s, payloadLen: len(s.Payload)})
}

// fpdu frames ulpdu as the next FPDU of direction d with mpa.Framing, the
// encoder replay uses too (RFC 5044 §4.1, §4.4, §5.1), and records the truth:
// the CRC field as sent and the markers as written.
func (g *connGen) fpdu(d Dir, ulpdu []byte, r *record) error {
	if len(ulpdu) > mpa.MaxULPDULen {
		return ErrULPDUTooLong
	}
	dg := &g.d[d]
	start := dg.off
	fr := mpa.Framing{Markers: dg.markers, CRC: dg.crc, Grid: dg.grid}
	g.wire, _ = fr.AppendFPDU(g.wire[:0], ulpdu, start)
	wire := g.wire
	// The CRC field as sent; Impairments.CorruptCRC sends its complement,
	// ReverseCRC its octets in reverse order.
	ref := FPDURef{Dir: d, Index: dg.nFPDU}
	r.corrupted = g.corrupt[ref]
	offs := fr.CRCOffsets(start, len(ulpdu))
	if g.reverse[ref] {
		r.corrupted = r.corrupted || wire[offs[0]] != wire[offs[3]] || wire[offs[1]] != wire[offs[2]]
		wire[offs[0]], wire[offs[1]], wire[offs[2]], wire[offs[3]] = wire[offs[3]], wire[offs[2]], wire[offs[1]], wire[offs[0]]
	}
	var crc uint32
	for i, o := range offs {
		if g.corrupt[ref] {
			wire[o] ^= 0xFF
		}
		crc |= uint32(wire[o]) << (8 * i)
	}
	r.kind = recFPDU
	r.dir = d
	r.off = start
	r.wireLen = len(wire)
	r.ordinal = g.nrec
	g.nrec++
	r.index = dg.nFPDU
	r.ulpduLen = len(ulpdu)
	r.pad = mpa.PadLen(len(ulpdu))
	r.crc = crc
	r.crcOn = dg.crc
	if dg.markers {
		// The markers this FPDU holds: every grid point in
		// [start, start+len(wire)), read back from what was written.
		for p := dg.grid.Next(start); p < start+uint64(len(wire)); p += markers.Interval {
			i := int(p - start)
			r.markers = append(r.markers, markerTruth{
				off:     p,
				rsvd:    uint16(wire[i])<<8 | uint16(wire[i+1]),
				fpduptr: uint16(wire[i+2])<<8 | uint16(wire[i+3]),
			})
		}
	}
	dg.nFPDU++
	g.recs = append(g.recs, r)
	g.write(d, wire)
	return nil
}

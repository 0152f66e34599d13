package capture

import (
	"bufio"
	"encoding/binary"
	"io"
	"math/bits"
	"strconv"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// pcapng block types and minimum total lengths (draft-ietf-opsawg-pcapng
// §4, §4.1-§4.6, Appendix A for the obsolete Packet Block).
const (
	ngSHB        = 0x0a0d0d0a
	ngIDB        = 1
	ngPB         = 2
	ngSPB        = 3
	ngEPB        = 6
	ngBOM        = 0x1a2b3c4d
	ngMinBlock   = 12 // type, total length, trailing total length
	ngMinSHB     = 28
	ngPktHdr     = 28 // EPB and PB: 8-octet block header + 20 octets up to the data
	ngMinPktBlk  = ngPktHdr + 4
	ngSPBHdr     = 12
	ngGateBuffer = 16 << 10
)

// ngReader reads pcapng with pcapgo's NgReader, one block at a time, but
// for the Enhanced Packet Blocks it can read in place itself (readEPB).
//
// pcapgo reads ahead through any number of non-packet blocks until it finds
// a packet, so on its own it can say neither where a block starts nor stop
// a huge declared length before allocating for it. ngReader therefore walks
// the block boundaries itself (it peeks at each block header in raw) and
// lets pcapgo see exactly one block per call, through gate, a reader that
// ends where the block ends. pcapgo parses the section headers, the
// interfaces (their timestamp resolutions and offsets), and the packet
// blocks readEPB leaves to it.
// Knowing each block's extent also gives FileError its exact offset, tells a
// truncated file (the stream ended inside the block) from a malformed block
// (pcapgo wanted more than the block holds), and keeps the stream in step
// when pcapgo reads less than a block.
type ngReader struct {
	raw   ngInput       // the (decompressed) file
	gate  blockGate     // raw, cut off at the end of the current block
	br    *bufio.Reader // over gate, handed to pcapgo
	r     *pcapgo.NgReader
	big   bool  // byte order of the current section
	off   int64 // offset of the next block
	links []layers.LinkType
	// ifaces: what an Enhanced Packet Block needs of each interface of the
	// current section, for readEPB; slow turns readEPB off (tests).
	ifaces []ngIface
	// secondsRes lists, for each Interface Description Block of the
	// current section in order, whether its if_tsresol is 0 (whole
	// seconds), which pcapgo takes for the default of microseconds
	// (noteIDB).
	secondsRes []bool
	slow       bool
	// inPlace: the last packet was read in place (readEPB), its Data
	// ngPktHdr octets into its block.
	inPlace bool
	// win: the octets raw had buffered when readEPB last peeked at it;
	// win[0] is raw's next unread octet and the first pos octets are
	// blocks read since, not yet discarded from raw. read takes the
	// Enhanced Packet Blocks whole in win from it without a call into
	// raw, as pcapReader does with its records.
	win []byte
	pos int
	// roomFor, when set, says whether an Enhanced Packet Block of total
	// length blen, skip octets past raw's next one, may be read now;
	// read returns errChunkFull, the block unread, when it may not
	// (ChunkReader.nextRaw).
	roomFor func(blen uint32, skip int) bool
}

// ngInput is what an ngReader reads: a *bufio.Reader, or the mapping of
// the file (mappedPeeker).
type ngInput interface {
	peeker
	io.Reader
	// Size is the most octets Peek can return.
	Size() int
}

// ngIface is an interface's link type and timestamp scaling, worked out
// from its description in pcapgo: the units per second (10^n or 2^n, by
// if_tsresol, wrapping as pcapgo's do) and if_tsoffset.
type ngIface struct {
	link        layers.LinkType
	units, secs uint64
}

func newNgIface(ifc pcapgo.NgInterface) ngIface {
	f := ngIface{link: ifc.LinkType, secs: ifc.TimestampOffset}
	res := ifc.TimestampResolution
	if res == 0 {
		res = 6
	}
	if res.Binary() {
		f.units = 1 << res.Exponent()
	} else {
		f.units = 1
		for range res.Exponent() {
			f.units *= 10
		}
	}
	return f
}

func newNgReader(raw ngInput) (*ngReader, error) {
	n := &ngReader{raw: raw}
	n.gate.r = raw
	n.br = bufio.NewReaderSize(&n.gate, ngGateBuffer)
	h, err := raw.Peek(ngMinBlock)
	if len(h) < ngMinBlock {
		return nil, unexpected(err)
	}
	blen, err := n.shbLength(h)
	if err != nil {
		return nil, err
	}
	n.gate.open(blen)
	r, err := pcapgo.NewNgReader(n.br, pcapgo.NgReaderOptions{WantMixedLinkType: true})
	if err != nil {
		return nil, n.blockError(err)
	}
	n.r = r
	if err := n.finishBlock(blen); err != nil {
		return nil, err
	}
	return n, nil
}

// shbLength reads the byte order and total length of a Section Header Block.
func (n *ngReader) shbLength(h []byte) (uint32, error) {
	switch uint32(ngBOM) {
	case binary.BigEndian.Uint32(h[8:12]):
		n.big = true
	case binary.LittleEndian.Uint32(h[8:12]):
		n.big = false
	default:
		return 0, ErrBadBlock
	}
	blen := n.u32(h[4:8])
	if blen < ngMinSHB || blen%4 != 0 {
		return 0, ErrBadBlock
	}
	return blen, n.checkTrailer(blen)
}

// blockLength checks the total length blen of the block (not a Section
// Header Block) at the front of raw: at least the empty block's, a
// multiple of 4, and repeated at the block's end (checkTrailer).
func (n *ngReader) blockLength(blen uint32) error {
	if blen < ngMinBlock || blen%4 != 0 {
		return ErrBadBlock
	}
	return n.checkTrailer(blen)
}

// checkTrailer checks that the block at the front of raw, of total length
// blen, ends with its total length again (draft-ietf-opsawg-pcapng §3.1):
// where they differ, one lies, and the blocks after it cannot be found
// (tshark stops there too). A block larger than raw can hold is not
// checked, nor one the file ends inside (the read of it reports that).
// In a ChunkReader's input, a block that does not fit in this chunk
// gives bufio.ErrBufferFull: it is read with the next.
func (n *ngReader) checkTrailer(blen uint32) error {
	if int(blen) > n.raw.Size() {
		return nil
	}
	b, err := n.raw.Peek(int(blen))
	if len(b) < int(blen) {
		if err == bufio.ErrBufferFull {
			return err
		}
		return nil
	}
	if end := n.u32(b[blen-4:]); end != blen {
		return &blockLengthError{blen, end}
	}
	return nil
}

// blockLengthError is the ErrBadBlock of a block whose total length at
// its end is not the one at its start.
type blockLengthError struct{ start, end uint32 }

func (e *blockLengthError) Error() string {
	return "malformed pcapng block: total length " + strconv.FormatUint(uint64(e.start), 10) +
		" at its start, " + strconv.FormatUint(uint64(e.end), 10) + " at its end"
}

func (e *blockLengthError) Is(target error) bool { return target == ErrBadBlock }

func (n *ngReader) u32(b []byte) uint32 {
	if n.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

// iface returns what the current section says of interface iface, or nil.
func (n *ngReader) iface(iface int) *ngIface {
	if iface < 0 || iface >= len(n.ifaces) {
		return nil
	}
	return &n.ifaces[iface]
}

func (n *ngReader) linkType(iface int) layers.LinkType {
	if iface < 0 || iface >= len(n.links) {
		return LinkTypeUnknown
	}
	return n.links[iface]
}

// refreshLinks copies the current section's interface link types out of
// pcapgo; called after every non-packet block, the only ones that change
// them.
func (n *ngReader) refreshLinks() {
	n.links, n.ifaces = n.links[:0], n.ifaces[:0]
	for i := range n.r.NInterfaces() {
		ifc, err := n.r.Interface(i)
		if err != nil {
			break
		}
		n.links = append(n.links, ifc.LinkType)
		f := newNgIface(ifc)
		if i < len(n.secondsRes) && n.secondsRes[i] {
			f.units = 1
		}
		n.ifaces = append(n.ifaces, f)
	}
}

// noteIDB notes, before pcapgo reads the block of type typ and total
// length blen at the front of raw, whether it is an Interface Description
// Block whose if_tsresol (option 9) is 0: timestamps in whole seconds
// (draft-ietf-opsawg-pcapng §4.2), which pcapgo reads as microseconds
// (tshark: seconds). A Section Header Block starts the list again.
func (n *ngReader) noteIDB(typ, blen uint32) {
	switch typ {
	case ngSHB:
		n.secondsRes = n.secondsRes[:0]
		return
	case ngIDB:
	default:
		return
	}
	seconds := false
	if b, _ := n.raw.Peek(int(min(blen, uint32(n.raw.Size())))); uint32(len(b)) == blen && blen >= 20+4 {
		opts := b[16 : blen-4]
		for len(opts) >= 4 {
			code, l := n.u16(opts[0:2]), int(n.u16(opts[2:4]))
			if code == 0 || 4+l > len(opts) {
				break
			}
			if code == 9 && l >= 1 {
				seconds = opts[4] == 0
			}
			opts = opts[min(4+(l+3)&^3, len(opts)):]
		}
	}
	n.secondsRes = append(n.secondsRes, seconds)
}

func (n *ngReader) u16(b []byte) uint16 {
	if n.big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

// readEPB reads the Enhanced Packet Block of total length blen at the front
// of raw in place, without pcapgo: its octets are the bufio buffer's (or
// the mapped file's), as a pcap record's are (pcapReader), instead of being
// copied twice (into pcapgo's reader, then its packet buffer). Most pcapng files hold nothing
// else, so this is the pcapng read path: BenchmarkNextInto/pcapng went from
// 440-460 to 230-280 ns per packet, and -q on the issue 6 workload as
// pcapng from 1.28x to 1.05x the time it takes as pcap.
//
// It takes only blocks pcapgo would read without error and reports what
// pcapgo would report (TestNgInPlace and FuzzNgInPlace compare the two): a
// block whose interface is not described, whose packet does not fit, or
// that is larger than the buffer is left to pcapgo (ok false).
func (n *ngReader) readEPB(p *Packet, blen uint32) (layers.LinkType, bool) {
	if n.slow || blen < ngMinPktBlk || int(blen) > n.raw.Size() {
		return 0, false
	}
	b, _ := n.raw.Peek(int(blen))
	if len(b) < int(blen) {
		return 0, false
	}
	link, ok := n.epb(p, b)
	if !ok {
		return 0, false
	}
	// The octets stay in the buffer until the next Peek refills it: the
	// next read that does not find its block whole in the window, after
	// the caller is done with p.
	n.win, _ = n.raw.Peek(n.raw.Buffered())
	n.pos = int(blen)
	n.off += int64(blen)
	return link, true
}

// epb fills p from the Enhanced Packet Block b (of total length len(b),
// at least ngMinPktBlk, all in memory), or returns false for a block
// pcapgo would not read as readEPB does.
func (n *ngReader) epb(p *Packet, b []byte) (layers.LinkType, bool) {
	f, iface, caplen, ok := n.epbHead(b)
	if !ok {
		return 0, false
	}
	sec, ns := f.time(uint64(n.u32(b[12:16]))<<32 | uint64(n.u32(b[16:20])))
	p.TS = time.Unix(int64(sec), int64(ns)).UTC()
	p.Interface = int(iface)
	p.CapLen, p.WireLen = int(caplen), int(n.u32(b[24:28]))
	p.Data = b[ngPktHdr : ngPktHdr+caplen : ngPktHdr+caplen]
	return f.link, true
}

// epbHead returns the interface and captured length of the Enhanced Packet
// Block b (of total length len(b), at least ngMinPktBlk, all in memory),
// or false for a block pcapgo would not read as readEPB does: an
// interface not described, a packet that does not fit; or false for a
// block whose length at its end differs, which read's slow path reports.
func (n *ngReader) epbHead(b []byte) (f *ngIface, iface, caplen uint32, ok bool) {
	iface = n.u32(b[8:12])
	caplen = n.u32(b[20:24])
	if uint64(iface) >= uint64(len(n.ifaces)) || caplen > MaxRecordLength || ngMinPktBlk+(caplen+3)&^3 > uint32(len(b)) || n.u32(b[len(b)-4:]) != uint32(len(b)) {
		return nil, 0, 0, false
	}
	f = &n.ifaces[iface]
	if f.units == 0 {
		return nil, 0, 0, false
	}
	return f, iface, caplen, true
}

// time converts an Enhanced Packet Block's timestamp ts into the seconds
// and nanoseconds time.Unix takes, the fraction of a second rounded down
// to the nanosecond as tshark rounds it. (pcapgo scales the fraction by
// 1e9/units rounded down to an integer: 953 for 2^-20, where it is
// 953.67, which put the times of such a file up to 0.7 ms early.)
func (f *ngIface) time(ts uint64) (sec, ns uint64) {
	switch f.units {
	// Microseconds and nanoseconds, nearly every file: constant
	// divisors, no 64-bit division (two per packet otherwise).
	case 1e6:
		sec, ns = ts/1e6, ts%1e6*1e3
	case 1e9:
		sec, ns = ts/1e9, ts%1e9
	default:
		// (ts % units) * 1e9 / units in 128 bits: the high half of the
		// product is below units, so the quotient fits.
		hi, lo := bits.Mul64(ts%f.units, 1e9)
		sec, ns = ts/f.units, 0
		ns, _ = bits.Div64(hi, lo, f.units)
	}
	return sec + f.secs, ns
}

// epbNote reads the Enhanced Packet Block b (of total length len(b), at
// least ngMinPktBlk, all in memory) into m, a ChunkReader's note of its
// packet (putNote) but for the data's offset, as epb would read it into a
// Packet. It returns false for a block epb would not read or whose note
// would say other than the Packet: an interface beyond 16 bits, a
// timestamp time.Unix would normalize.
func (n *ngReader) epbNote(b []byte, m []byte) (caplen uint32, link layers.LinkType, ok bool) {
	f, iface, caplen, ok := n.epbHead(b)
	if !ok || iface > 0xffff {
		return 0, 0, false
	}
	sec, ns := f.time(uint64(n.u32(b[12:16]))<<32 | uint64(n.u32(b[16:20])))
	if ns >= 1e9 {
		return 0, 0, false
	}
	putNote(m, caplen, n.u32(b[24:28]), sec, uint32(ns), uint16(iface), f.link)
	return caplen, f.link, true
}

// sync discards from raw the blocks read from the window (read's common
// case) since raw was last peeked at, so that raw's next octet is the
// next block's (ChunkReader.nextNg reads the blocks in its buffer).
func (n *ngReader) sync() {
	if n.pos > 0 {
		_, _ = n.raw.Discard(n.pos) // octets already buffered: cannot fail
	}
	n.win, n.pos = nil, 0
}

func (n *ngReader) read(p *Packet) (layers.LinkType, int64, error) {
	// The common block: an Enhanced Packet Block whole in the window.
	if b := n.win[n.pos:]; len(b) >= ngMinPktBlk && n.u32(b[0:4]) == ngEPB {
		if blen := n.u32(b[4:8]); blen >= ngMinPktBlk && blen%4 == 0 && uint64(blen) <= uint64(len(b)) &&
			(n.roomFor == nil || n.roomFor(blen, n.pos)) {
			if link, ok := n.epb(p, b[:blen]); ok {
				off := n.off
				n.pos += int(blen)
				n.off += int64(blen)
				n.inPlace = true
				return link, off, nil
			}
		}
	}
	if n.pos > 0 {
		_, _ = n.raw.Discard(n.pos) // octets already buffered: cannot fail
	}
	n.win, n.pos = nil, 0
	for {
		off := n.off
		h, err := n.raw.Peek(ngMinBlock)
		if len(h) < ngMinBlock {
			if len(h) == 0 && err == io.EOF {
				return 0, off, io.EOF
			}
			return 0, off, unexpected(err)
		}
		typ := n.u32(h[0:4])
		var blen uint32
		if binary.BigEndian.Uint32(h[0:4]) == ngSHB {
			typ = ngSHB
			if blen, err = n.shbLength(h); err != nil {
				return 0, off, err
			}
		} else {
			blen = n.u32(h[4:8])
			if err = n.blockLength(blen); err != nil {
				return 0, off, err
			}
		}
		n.inPlace = false
		if typ == ngEPB {
			if n.roomFor != nil && !n.roomFor(blen, 0) {
				return 0, off, errChunkFull
			}
			if link, ok := n.readEPB(p, blen); ok {
				n.inPlace = true
				return link, off, nil
			}
		}
		packet := typ == ngEPB || typ == ngPB || typ == ngSPB
		if !packet {
			n.noteIDB(typ, blen)
		}
		n.gate.open(blen)
		var ts uint64 // an EPB's or PB's timestamp, as the block has it
		if packet {
			var err error
			if ts, err = n.checkPacketBlock(typ, blen); err != nil {
				return 0, off, err
			}
		}
		data, ci, err := n.r.ZeroCopyReadPacketData()
		if !packet && err == io.EOF {
			// pcapgo consumed the block and met the gate.
			err = nil
		}
		if err != nil {
			return 0, off, n.blockError(err)
		}
		if err := n.finishBlock(blen); err != nil {
			return 0, off, err
		}
		if !packet {
			n.refreshLinks()
			continue
		}
		p.TS, p.Interface = ci.Timestamp, ci.InterfaceIndex
		if f := n.iface(ci.InterfaceIndex); typ != ngSPB && f != nil && f.units != 0 {
			// Converted as the in-place read converts it, not as pcapgo does.
			sec, ns := f.time(ts)
			p.TS = time.Unix(int64(sec), int64(ns)).UTC()
		}
		p.CapLen, p.WireLen, p.Data = ci.CaptureLength, ci.Length, data
		return n.linkType(ci.InterfaceIndex), off, nil
	}
}

// checkPacketBlock validates a packet block's lengths before pcapgo reads
// it: the captured length must fit MaxRecordLength and the block. An
// Enhanced Packet Block's options (comments, flags, hashes...) are hidden
// from pcapgo, which would allocate for them on every packet: pcapgo is
// shown the block with its length patched to end after the packet data.
func (n *ngReader) checkPacketBlock(typ, blen uint32) (ts uint64, _ error) {
	var caplen, room uint32
	switch typ {
	case ngEPB, ngPB:
		if blen < ngMinPktBlk {
			return 0, ErrBadBlock
		}
		h, err := n.raw.Peek(ngPktHdr)
		if len(h) < ngPktHdr {
			return 0, unexpected(err)
		}
		caplen, room = n.u32(h[20:24]), blen-ngMinPktBlk
		ts = uint64(n.u32(h[12:16]))<<32 | uint64(n.u32(h[16:20]))
	case ngSPB:
		if blen < ngSPBHdr+4 {
			return 0, ErrBadBlock
		}
		h, err := n.raw.Peek(ngSPBHdr)
		if len(h) < ngSPBHdr {
			return 0, unexpected(err)
		}
		// pcapgo takes min(original length, snap length of interface 0),
		// as the pcapng specification says (§4.4).
		caplen, room = n.u32(h[8:12]), blen-ngSPBHdr-4
		if ifc, err := n.r.Interface(0); err == nil && ifc.SnapLength != 0 && caplen > ifc.SnapLength {
			caplen = ifc.SnapLength
		}
	}
	if caplen > MaxRecordLength {
		return 0, ErrRecordTooLong
	}
	if caplen > room {
		return 0, ErrBadBlock
	}
	if bare := ngMinPktBlk + (caplen+3)&^3; typ == ngEPB && bare < blen {
		h, _ := n.raw.Peek(8)
		n.gate.hide(h, n.big, bare)
	}
	return ts, nil
}

// blockError classifies an error pcapgo returned for the current block: the
// stream's own error when the file ended (or failed) inside the block,
// ErrBadBlock when pcapgo wanted more octets than the block holds, else
// pcapgo's error.
func (n *ngReader) blockError(err error) error {
	if n.gate.err != nil {
		return unexpected(n.gate.err)
	}
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return ErrBadBlock
	}
	return err
}

// finishBlock skips whatever pcapgo left of the block (nothing, for a
// well-formed block, but the options hidden from it) and moves the offset
// past the block.
func (n *ngReader) finishBlock(blen uint32) error {
	if b := n.br.Buffered(); b > 0 {
		_, _ = n.br.Discard(b)
	}
	if rest := int(n.gate.left + n.gate.hidden); rest > 0 {
		n.gate.left, n.gate.hidden = 0, 0
		if d, err := n.raw.Discard(rest); d < rest {
			return unexpected(err)
		}
	}
	n.off += int64(blen)
	return nil
}

// blockGate reads from r up to the end of the current block, then returns
// io.EOF. err keeps an error (io.EOF included) that r returned before the
// block ended: the file is truncated or unreadable there.
//
// hide makes the gate show a shorter block: it serves a copy of the block
// header with the total length patched, and stops that many octets into the
// block; the rest (hidden octets) stays in r for finishBlock to skip.
type blockGate struct {
	r      ngInput
	left   int64 // octets of the block still to serve
	hidden int64 // octets at the end of the block not served
	head   [8]byte
	patch  []byte // rest of the patched header, served before r
	err    error
}

func (g *blockGate) open(blen uint32) {
	g.left, g.hidden = int64(blen), 0
	g.patch = nil
	g.err = nil
}

// hide serves h (the block's first 8 octets, still unread in r) with the
// total length set to bare, and ends the block there.
func (g *blockGate) hide(h []byte, big bool, bare uint32) {
	copy(g.head[:], h)
	if big {
		binary.BigEndian.PutUint32(g.head[4:8], bare)
	} else {
		binary.LittleEndian.PutUint32(g.head[4:8], bare)
	}
	g.hidden = g.left - int64(bare)
	g.left = int64(bare)
	g.patch = g.head[:]
}

func (g *blockGate) Read(p []byte) (int, error) {
	if g.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > g.left {
		p = p[:g.left]
	}
	if len(g.patch) > 0 {
		n := copy(p, g.patch)
		g.patch = g.patch[n:]
		if d, err := g.r.Discard(n); d < n {
			g.err = unexpected(err)
			return 0, g.err
		}
		g.left -= int64(n)
		return n, nil
	}
	n, err := g.r.Read(p)
	g.left -= int64(n)
	if err != nil {
		g.err = err
	}
	return n, err
}

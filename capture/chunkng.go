package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// A pcapng file's chunks hold its blocks as read, in place, like a pcap
// file's: the reading goroutine reads the file into the chunk buffer and
// its ngReader reads the blocks there (ngChunkInput). For each Enhanced
// Packet Block it reads in place, it notes what the walkers need (ngMeta:
// the data's place, the timestamp, the lengths, the interface and its
// link type); at the end of the chunk the notes go to the end of the
// buffer, past the last block noted, where the octets read ahead were
// (those go to the next chunk), so that the chunk's octets are never
// copied by the reader.
// The packets the ngReader reads through pcapgo instead (Simple and
// obsolete Packet Blocks, a block larger than the buffer allows, an
// interface it has no description of) are not in the buffer: they go into
// chunks of repacked records (appendNgRecord), as every packet of a
// pcapng file went before, and as the packets of several merged files
// (NewMergeChunks) still go. On the workload of issue 6 as pcapng, the
// copying had been 0.10 s of the reader's 0.18 s under -j 2, which then
// took as long as -j 1.

// ngMeta is the size of a packet's note in a chunk of pcapng blocks,
// little-endian: the offset and length of its data in Chunk.Data, the
// timestamp's seconds (8 octets) and nanoseconds, the captured and
// original lengths, the interface (2 octets) and its link type (2).
const ngMeta = 32

// ngChunkInput is what the ngReader of a ChunkReader reads (ngInput): the
// buffer b, which it fills from f. Unless own (b is the reader's, whose
// octets Peek may move), b is a chunk's: the octets read stay where they
// are, for the walkers.
type ngChunkInput struct {
	f    io.Reader
	b    []byte // b[:w] read, b[r:w] not yet consumed; len(b) == cap(b)
	r, w int
	// lim: fill reads no further than b[lim] (nextRaw keeps the end of
	// a chunk's buffer for the notes); len(b) unless nextRaw sets it.
	lim int
	err error // f's error (io.EOF at its end), once met
	own bool
	// notes: the chunk's packets' ngMeta notes so far (nextRaw), and
	// the room they will take in b.
	notes []byte
}

func (in *ngChunkInput) fill(n int) {
	if in.own && in.r > 0 && len(in.b)-in.r < n {
		in.w = copy(in.b, in.b[in.r:in.w])
		in.r = 0
	}
	for in.w-in.r < n && in.w < in.lim && in.err == nil {
		k, err := in.f.Read(in.b[in.w:in.lim])
		in.w += k
		if err != nil {
			in.err = err
		} else if k == 0 {
			in.err = io.ErrNoProgress
		}
	}
}

// Peek returns the next n octets, as bufio.Reader.Peek does.
func (in *ngChunkInput) Peek(n int) ([]byte, error) {
	if in.w-in.r < n && in.err == nil {
		in.fill(n)
	}
	switch {
	case in.w-in.r >= n:
		return in.b[in.r : in.r+n : in.r+n], nil
	case in.err != nil:
		return in.b[in.r:in.w:in.w], in.err
	}
	return in.b[in.r:in.w:in.w], bufio.ErrBufferFull
}

func (in *ngChunkInput) Buffered() int { return in.w - in.r }

// Size is the most octets Peek can return.
func (in *ngChunkInput) Size() int {
	if in.own {
		return len(in.b)
	}
	return in.lim - in.r
}

// Discard skips n octets: those buffered, then the file's.
func (in *ngChunkInput) Discard(n int) (int, error) {
	if n <= in.w-in.r {
		in.r += n
		return n, nil
	}
	d := in.w - in.r
	in.r = in.w
	if in.err != nil {
		return d, in.err
	}
	k, err := io.CopyN(io.Discard, in.f, int64(n-d))
	if err != nil {
		in.err = err
	}
	return d + int(k), err
}

// Read reads the buffered octets, then the file's past them (a block too
// large to buffer, read by pcapgo).
func (in *ngChunkInput) Read(p []byte) (int, error) {
	if in.r < in.w {
		k := copy(p, in.b[in.r:in.w])
		in.r += k
		return k, nil
	}
	if in.err != nil {
		return 0, in.err
	}
	k, err := in.f.Read(p)
	if err != nil {
		in.err = err
	}
	return k, err
}

// errChunkFull: the Enhanced Packet Block at the front does not fit in
// what is left of the chunk buffer with the notes, but would in the next
// (roomFor).
var errChunkFull = errors.New("capture: chunk full")

// roomFor reports whether an Enhanced Packet Block of total length blen,
// skip octets past the next unread one, may be read now (ngReader.read):
// it fits in the chunk buffer with the notes of the packets before it and
// its own, or it is too large for the fresh buffer of the next chunk as
// well.
//
// A block must also end within lim, unless it is the chunk's first: lim
// is raised for a first block that does not fit under it, or a block
// larger than lim would never be read.
func (in *ngChunkInput) roomFor(blen uint32, skip int) bool {
	if in.own {
		return true
	}
	need := uint64(blen) + uint64(len(in.notes)+ngMeta)
	at := uint64(in.r + skip)
	if len(in.notes) == 0 && at+uint64(blen) > uint64(in.lim) {
		in.lim = len(in.b)
	}
	return (at+uint64(blen) <= uint64(in.lim) && at+need <= uint64(len(in.b))) || need > uint64(len(in.b))
}

// use makes b the input's buffer, its first octets the unread ones of the
// one before (tail). own: b is the reader's.
func (in *ngChunkInput) use(b []byte, tail []byte, own bool) {
	b = b[:cap(b)]
	in.b, in.r, in.w, in.own = b, 0, copy(b, tail), own
	in.lim = len(b)
	in.notes = in.notes[:0]
}

// ngOwnBuffer is the size of the ChunkReader's own buffer for a pcapng
// file: where the ngReader reads the section header when the file is
// opened, and the blocks whose packets are repacked.
const ngOwnBuffer = 512 << 10

// nextNg is Next for a pcapng file, or for the packets of a Merge.
func (c *ChunkReader) nextNg(buf []byte) (Chunk, error) {
	ch := Chunk{First: c.frame + 1}
	if c.m == nil && len(c.pend) == 0 && cap(buf) >= ChunkSize {
		if done := c.nextRaw(buf, &ch); done {
			return c.ended(ch)
		}
		// The first packet could not be read in place: this chunk
		// repacks.
	}
	buf = append(buf[:0], c.pend...)
	if len(c.pend) > 0 {
		c.pend = c.pend[:0]
		ch.N++
		c.frame++
	}
	if c.m == nil {
		if len(c.ownBuf) < 2*len(c.tail) {
			c.ownBuf = make([]byte, 2*len(c.tail))
		}
		c.in.use(c.ownBuf, c.tail, true)
		c.tail = c.tail[:0]
	}
	buf = c.repack(buf, &ch)
	if c.m == nil {
		// The next chunk reads its blocks in place again, from these.
		c.ng.sync()
		c.tail = append(c.tail[:0], c.in.b[c.in.r:c.in.w]...)
		c.in.r, c.in.w = 0, 0
	}
	ch.Data = buf
	return c.ended(ch)
}

// ended is the end of nextNg.
func (c *ChunkReader) ended(ch Chunk) (Chunk, error) {
	if c.limit != 0 && c.frame >= c.limit && c.err == nil && len(c.pend) == 0 {
		c.err = io.EOF
	}
	if ch.N == 0 && c.err != nil {
		return Chunk{}, c.err
	}
	return ch, nil
}

// nextRaw reads the blocks of a pcapng file into buf and notes the
// packets it reads in place (ngMeta) in ch, until the next block does not
// fit, the file ends or the next packet was not read in place; it reports
// whether ch is the chunk (false: no packet in place, and the first one,
// if any, waits repacked in c.pend).
func (c *ChunkReader) nextRaw(buf []byte, ch *Chunk) bool {
	in := &c.in
	c.ng.sync()
	in.use(buf, c.tail, false)
	c.tail = c.tail[:0]
	// The notes go at the end of the buffer, over the octets read past
	// the last block noted, which are copied out for the next chunk
	// first: reading up to the end of the buffer copied those twice,
	// some 3 % of the octets of the issue 6 workload as pcapng (its
	// chunks' notes are 20-30 KiB). So the reading stops short by the
	// room the last chunk's notes took, and a little more. Should the
	// notes need more, they still take it from the octets read ahead.
	in.lim = max(len(in.b)-c.notesRoom, in.w, len(in.b)/2)
	c.ng.roomFor = in.roomFor
	defer func() { c.ng.roomFor = nil }()
	dataEnd := 0 // the end of the last block noted
	// pos: the file offset of buf[0], from each packet read in place
	// (the offset of its block, ngPktHdr octets before its data); 0
	// before the first, -1 once two packets disagree, which reading the
	// file's octets in place rules out.
	pos := int64(0)
	ng := c.ng
	for c.limit == 0 || c.frame < c.limit {
		// The common block, read here as ng.read would: an Enhanced
		// Packet Block whole in ng's window (in.b from in.r), whose
		// timestamp needs no normalizing; in the issue 6 workload as
		// pcapng, every block but the first of each chunk.
		if b := ng.win[ng.pos:]; len(b) >= ngMinPktBlk && ng.u32(b[0:4]) == ngEPB {
			blen := ng.u32(b[4:8])
			if blen >= ngMinPktBlk && blen%4 == 0 && uint64(blen) <= uint64(len(b)) && in.roomFor(blen, ng.pos) {
				start := in.r + ng.pos
				end := start + int(blen)
				// The note is written in place (appending one built
				// on the stack cost a call to memmove a packet).
				in.notes = slices.Grow(in.notes, ngMeta)
				m := in.notes[len(in.notes) : len(in.notes)+ngMeta]
				if caplen, link, ok := ng.epbNote(b[:blen], m); ok && end+len(in.notes)+ngMeta <= len(in.b) {
					off := ng.off
					ng.pos += int(blen)
					ng.off += int64(blen)
					ng.inPlace = true
					dataEnd = end
					at := start + ngPktHdr
					pos = notedPos(pos, off, at, caplen)
					binary.LittleEndian.PutUint32(m[0:4], uint32(at))
					c.noted(ch, at, caplen, link)
					continue
				}
			}
		}
		var p Packet
		link, off, err := ng.read(&p)
		if err == errChunkFull || err == bufio.ErrBufferFull {
			// The block goes to the next chunk: it does not fit in
			// this one, or the end of the buffer cuts its header
			// (Peek, before the ngReader takes anything of it).
			break
		}
		if err != nil {
			c.setNgErr(off, err)
			break
		}
		// In place, the data is in the buffer (after any non-packet
		// blocks the ngReader read first), and the block ends pos
		// octets past in.r.
		at := int(uintptrOf(p.Data) - uintptrOf(in.b))
		end := in.r + ng.pos
		if !ng.inPlace || p.Interface > 0xffff || len(p.Data) != p.CapLen || at < 0 || at > in.w-len(p.Data) ||
			end+len(in.notes)+ngMeta > len(in.b) {
			c.pend = appendNgRecord(c.pend[:0], &p, link)
			break
		}
		dataEnd = end
		pos = notedPos(pos, off, at, uint32(len(p.Data)))
		in.notes = slices.Grow(in.notes, ngMeta)
		m := in.notes[len(in.notes) : len(in.notes)+ngMeta]
		binary.LittleEndian.PutUint32(m[0:4], uint32(at))
		putNote(m, uint32(p.CapLen), uint32(p.WireLen), uint64(p.TS.Unix()), uint32(p.TS.Nanosecond()), uint16(p.Interface), link)
		c.noted(ch, at, uint32(len(p.Data)), link)
	}
	c.ng.sync()
	// The octets read ahead go to the next chunk, and the notes at the
	// end of the buffer, past the last block noted.
	c.tail = append(c.tail[:0], in.b[in.r:in.w]...)
	if ch.N > 0 {
		// (The capacity stays the buffer's: callers take it back as
		// ch.Data[:0], as they do a pcap file's.)
		ch.Data = in.b[:dataEnd]
		at := len(in.b) - len(in.notes)
		ch.meta = in.b[at : at+copy(in.b[at:], in.notes)]
		ch.Pos = max(pos, 0)
		c.notesRoom = len(in.notes) + len(in.notes)/8 + 16*ngMeta
	}
	in.b, in.r, in.w = nil, 0, 0
	return ch.N > 0 || len(c.pend) == 0
}

// putNote writes a packet's note (ngMeta) into m but for the offset of its
// data (m[0:4]): its captured length twice (the length of its data, then
// as captured), its original length, the timestamp, the interface and its
// link type.
func putNote(m []byte, caplen, wirelen uint32, sec uint64, ns uint32, iface uint16, link layers.LinkType) {
	m = m[:ngMeta]
	le := binary.LittleEndian
	le.PutUint32(m[4:8], caplen)
	le.PutUint64(m[8:16], sec)
	le.PutUint32(m[16:20], ns)
	le.PutUint32(m[20:24], caplen)
	le.PutUint32(m[24:28], wirelen)
	le.PutUint16(m[28:30], iface)
	le.PutUint16(m[30:32], uint16(link))
}

// notedPos is nextRaw's pos after a packet of caplen octets read in place
// at at in the buffer, from its block at file offset off.
func notedPos(pos, off int64, at int, caplen uint32) int64 {
	// (An empty Data's pointer is its block's, not ngPktHdr octets
	// in: a slice of no capacity does not point past its array.)
	switch at0 := off + ngPktHdr - int64(at); {
	case caplen == 0:
	case pos == 0:
		return at0
	case pos != at0:
		return -1
	}
	return pos
}

// noted counts the packet just noted (ngMeta), whose caplen octets of link
// type link are at at in the buffer, in ch, and works out its worker when
// NextOwners asks.
func (c *ChunkReader) noted(ch *Chunk, at int, caplen uint32, link layers.LinkType) {
	in := &c.in
	in.notes = in.notes[:len(in.notes)+ngMeta]
	if c.ow != nil {
		wire := binary.LittleEndian.Uint32(in.notes[len(in.notes)-ngMeta+24:]) // putNote's
		c.offs = append(c.offs, int32(ch.N))
		c.own = append(c.own, c.ow.ngOwner(in.b[at:at+int(caplen):at+int(caplen)], wire, link, c.of))
	}
	ch.N++
	c.frame++
}

// setNgErr records err, met reading the block at file offset off.
func (c *ChunkReader) setNgErr(off int64, err error) {
	switch {
	case err == io.EOF:
		c.err = io.EOF
	case c.m != nil:
		c.err = err
	default:
		c.err = c.fileError(off, err)
	}
}

// repack reads packets with the ngReader (or from the Merge) and appends
// them to buf as repacked records (appendNgRecord) until the next would
// not fit, which waits in c.pend for the next chunk.
func (c *ChunkReader) repack(buf []byte, ch *Chunk) []byte {
	var p Packet
	for c.limit == 0 || c.frame < c.limit {
		p = Packet{}
		var link layers.LinkType
		var off int64
		var err error
		if c.m != nil {
			// The Merge numbers the frames and wraps its inputs'
			// errors itself.
			if err = c.m.NextInto(&p); err == nil {
				link = c.m.LinkType(p.Interface)
			}
		} else {
			link, off, err = c.ng.read(&p)
		}
		if err != nil {
			c.setNgErr(off, err)
			break
		}
		if len(buf)+ngRecordHdr+len(p.Data) > ChunkSize {
			// p's octets are the read buffer's until the next read.
			c.pend = appendNgRecord(c.pend[:0], &p, link)
			break
		}
		buf = appendNgRecord(buf, &p, link)
		ch.N++
		c.frame++
	}
	return buf
}

// metaPacket decodes the packet of record i of ch, a chunk of pcapng
// blocks, as frame, as Source.NextInto decodes what its ngReader reads.
func (w *ChunkWalker) metaPacket(ch *Chunk, i int, frame uint64) *Packet {
	m := ch.meta[ngMeta*i:]
	le := binary.LittleEndian
	off, n := le.Uint32(m[0:4]), le.Uint32(m[4:8])
	// Field by field: a composite literal is built on the stack and
	// copied, whose wide loads stalled on the narrower stores just made
	// (perf: 64 % of this function's samples on the copy, -j 2 on the
	// issue 6 workload as pcapng).
	p := &w.p
	*p = Packet{}
	p.Frame = frame
	p.TS = time.Unix(int64(le.Uint64(m[8:16])), int64(le.Uint32(m[16:20]))).UTC()
	p.Interface = int(le.Uint16(m[28:30]))
	p.CapLen, p.WireLen = int(le.Uint32(m[20:24])), int(le.Uint32(m[24:28]))
	p.Data = ch.Data[off : off+n : off+n]
	link := layers.LinkType(le.Uint16(m[30:32]))
	if !(link == layers.LinkTypeEthernet && !w.dec.noFast && fastTCP4(p, p.Data)) {
		w.dec.decode(p, link)
	}
	if ch.Pos > 0 && len(p.Payload) > 0 {
		payloadPos(p, ch.Pos+int64(off))
	}
	return p
}

// metaData returns the data and link type of record i of ch, a chunk of
// pcapng blocks.
func metaData(ch *Chunk, i int) ([]byte, layers.LinkType) {
	m := ch.meta[ngMeta*i:]
	le := binary.LittleEndian
	off, n := le.Uint32(m[0:4]), le.Uint32(m[4:8])
	return ch.Data[off : off+n : off+n], layers.LinkType(le.Uint16(m[30:32]))
}

package capture

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// ChunkReader reads a pcap file in chunks of whole records, for decoders
// that share the octets among goroutines: each goroutine walks every record
// of a chunk with its own ChunkWalker and takes the packets it owns, so
// the reading goroutine copies nothing per packet (issue 6's parallel
// decode). It delivers the same frames, with the same numbers, and the same
// *FileError after the last intact one, as a Source over the same file.
//
// A pcapng file is read into the chunks too, its blocks read there by an
// ngReader as a Source reads them, with a note of each packet at the
// chunk's end (chunkng.go); the few packets that cannot be read in place
// are copied into chunks of their own format (appendNgRecord). Only
// uncompressed pcap and pcapng files are read in chunks: OpenChunks
// returns ErrNotChunked for anything else, and the caller uses a Source.
// The packets of several files merged in time order (NewMergeChunks) are
// copied in that format, from the Merge.
type ChunkReader struct {
	name   string
	f      *os.File
	r      io.Reader
	hdr    [24]byte
	big    bool
	tail   []byte // octets of a record cut at the end of the last chunk
	off    int64  // file offset of tail[0] (or of the next octet)
	frame  uint64 // frames delivered so far
	limit  uint64 // stop after this many frames (0: no limit)
	err    error  // sticky: io.EOF or *FileError, returned after the data
	eof    bool
	ng     *ngReader // pcapng: the blocks are read with it (chunkng.go)
	in     ngChunkInput
	ownBuf []byte // pcapng: the buffer of in when a chunk repacks
	// notesRoom: pcapng, the room at the end of a chunk's buffer that
	// nextRaw does not read into, kept for the notes.
	notesRoom int
	pend      []byte // pcapng, Merge: a repacked record for the next chunk
	m         *Merge // NewMergeChunks: the packets are read from it and repacked
	// NextOwners, during Next: the walker and owner of the records, and
	// what it appends to.
	ow   *ChunkWalker
	of   Owner
	own  []uint8
	offs []int32
}

// NewMergeChunks reads the packets of m (several files, in timestamp
// order) in chunks, each packet repacked as a pcapng file's are, with the
// Merge's frame numbers, and the Merge's error after the last packet.
// limit > 0 stops after that many frames. Close closes m.
func NewMergeChunks(m *Merge, limit uint64) *ChunkReader {
	return &ChunkReader{name: "merge", m: m, limit: limit}
}

// Chunk is a run of whole pcap records, of whole pcapng blocks, or of
// repacked pcapng packets.
type Chunk struct {
	Data  []byte // the records, headers included
	First uint64 // frame number of the first record
	N     int    // number of records
	// Pos is the offset of Data[0] in the file, for the Packets'
	// PayloadPos (ChunkReader.ReadAt); 0 for repacked pcapng packets.
	Pos int64
	// meta: Data holds a pcapng file's blocks, and meta a note of
	// each packet (ngMeta); nil for repacked records (chunkng.go).
	meta []byte
}

// ErrNotChunked: the file is not an uncompressed pcap or pcapng file, or
// not a regular file (a pipe, a device), or its header is damaged (a
// Source reports how), or it is a pcap file older than version 2.4.
var ErrNotChunked = errors.New("capture: not an uncompressed pcap or pcapng file")

// ChunkSize is the size of the chunks ChunkReader.Next fills: room for at
// least two records of the longest length.
const ChunkSize = 1 << 20

// OpenChunks opens the pcap or pcapng file at path. limit > 0 stops after
// that many frames (iwarpdump -c). A path that is not a regular file (a
// pipe or a device: /dev/stdin, a process substitution's /dev/fd/63) gives
// ErrNotChunked before a read: the caller's Source over the same stream (as
// iwarpdump -j N opens one first) would otherwise lose the octets read here.
func OpenChunks(path string, limit uint64) (*ChunkReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, ErrNotChunked
	}
	c := &ChunkReader{name: path, f: f, r: newCachedFile(f), limit: limit}
	if _, err := io.ReadFull(c.r, c.hdr[:4]); err == nil && binary.BigEndian.Uint32(c.hdr[:4]) == magicPcapngSHB {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return nil, ErrNotChunked
		}
		c.ownBuf = make([]byte, ngOwnBuffer)
		c.in.f = c.r
		c.in.use(c.ownBuf, nil, true)
		if c.ng, err = newNgReader(&c.in); err != nil {
			f.Close()
			return nil, ErrNotChunked
		}
		// What follows the section header goes to the first chunk.
		c.tail = append(c.tail[:0], c.in.b[c.in.r:c.in.w]...)
		c.in.r, c.in.w = 0, 0
		return c, nil
	}
	if _, err := io.ReadFull(c.r, c.hdr[4:]); err != nil {
		f.Close()
		return nil, ErrNotChunked
	}
	switch binary.BigEndian.Uint32(c.hdr[:4]) {
	case magicPcapMicroBE, magicPcapNanoBE:
		c.big = true
	case magicPcapMicroLE, magicPcapNanoLE:
	default:
		f.Close()
		return nil, ErrNotChunked
	}
	// The header must be one a Source accepts (link type, version), and
	// its records' lengths in version 2.4's order: the walk below takes
	// them so. An older file is read by a Source.
	if pr, err := newPcapReader(&bytesPeeker{b: c.hdr[:]}); err != nil || pr.lens != 0 {
		f.Close()
		return nil, ErrNotChunked
	}
	c.off = 24
	return c, nil
}

// Close closes the file.
func (c *ChunkReader) Close() error {
	if c.m != nil {
		return c.m.Close()
	}
	return c.f.Close()
}

// Walker returns a ChunkWalker for the records of this file's chunks; each
// goroutine needs its own.
func (c *ChunkReader) Walker() *ChunkWalker {
	w := &ChunkWalker{name: c.name, ng: c.ng != nil || c.m != nil}
	if !w.ng {
		w.pr, _ = newPcapReader(&bytesPeeker{b: c.hdr[:]})
	}
	w.dec.init()
	return w
}

func (c *ChunkReader) u32(b []byte) uint32 {
	if c.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

// NextOwners is Next followed by w.Owners(ch, own, offs, of), in one walk
// over the records of a pcap file, or over the blocks of a pcapng file
// read in place, rather than two.
func (c *ChunkReader) NextOwners(buf []byte, w *ChunkWalker, own []uint8, offs []int32, of Owner) (Chunk, []uint8, []int32, error) {
	if c.m != nil || w.ng != (c.ng != nil) {
		ch, err := c.Next(buf)
		if err != nil {
			return ch, own, offs, err
		}
		own, offs = w.Owners(ch, own, offs, of)
		return ch, own, offs, nil
	}
	// The walk that reads the records (a pcap file's headers, a pcapng
	// file's blocks in place) works out their owners too.
	base := len(own)
	c.ow, c.of, c.own, c.offs = w, of, own, offs
	ch, err := c.Next(buf)
	own, offs = c.own, c.offs
	c.ow, c.of, c.own, c.offs = nil, nil, nil, nil
	if err != nil {
		return ch, own[:0], offs[:0], err
	}
	if c.ng != nil && ch.meta == nil {
		// A chunk of repacked pcapng records.
		own, offs = w.Owners(ch, own[:base], offs[:base], of)
	}
	return ch, own, offs, nil
}

// Next fills buf (of capacity at least ChunkSize) with whole records and
// returns them. After the last record it returns io.EOF, or the *FileError a
// Source would return at the same frame.
func (c *ChunkReader) Next(buf []byte) (Chunk, error) {
	if c.err != nil {
		return Chunk{}, c.err
	}
	if c.ng != nil || c.m != nil {
		return c.nextNg(buf)
	}
	buf = append(buf[:0], c.tail...)
	chunkOff := c.off
	var ioErr error
	if !c.eof {
		n, err := io.ReadFull(c.r, buf[len(buf):ChunkSize])
		buf = buf[:len(buf)+n]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			c.eof = true
		} else if err != nil {
			// A read error: the records before it are delivered, then
			// the error, at the first record it cut (as a Source).
			c.eof, ioErr = true, err
		}
	}
	ch := Chunk{First: c.frame + 1}
	pos := 0
	for c.limit == 0 || c.frame < c.limit {
		rest := buf[pos:]
		if len(rest) < pcapRecordHdrSize {
			c.cut(chunkOff+int64(pos), len(rest), ioErr)
			break
		}
		caplen := c.u32(rest[8:12])
		if caplen > MaxRecordLength {
			c.err = c.fileError(chunkOff+int64(pos), ErrRecordTooLong)
			break
		}
		n := pcapRecordHdrSize + int(caplen)
		if len(rest) < n {
			c.cut(chunkOff+int64(pos), len(rest), ioErr)
			break
		}
		if c.ow != nil {
			c.offs = append(c.offs, int32(pos))
			c.own = append(c.own, c.ow.pcapOwner(rest[:n:n], c.of))
		}
		pos += n
		ch.N++
		c.frame++
	}
	if c.limit != 0 && c.frame >= c.limit && c.err == nil {
		c.err = io.EOF
	}
	c.tail = append(c.tail[:0], buf[pos:]...)
	c.off = chunkOff + int64(pos)
	ch.Data, ch.Pos = buf[:pos], chunkOff
	if ch.N == 0 && c.err != nil {
		return Chunk{}, c.err
	}
	return ch, nil
}

// ngRecordHdr is the size of the header of a repacked pcapng packet: the
// timestamp's seconds (8 octets) and nanoseconds, the length of the octets
// that follow, the captured and original lengths, the interface and the
// link type (4 octets each), all little-endian.
const ngRecordHdr = 32

// appendNgRecord appends p, read from a pcapng file with link type link, to
// b as a repacked record, which ChunkWalker.ngPacket reads back.
func appendNgRecord(b []byte, p *Packet, link layers.LinkType) []byte {
	var h [ngRecordHdr]byte
	le := binary.LittleEndian
	le.PutUint64(h[0:8], uint64(p.TS.Unix()))
	le.PutUint32(h[8:12], uint32(p.TS.Nanosecond()))
	le.PutUint32(h[12:16], uint32(len(p.Data)))
	le.PutUint32(h[16:20], uint32(p.CapLen))
	le.PutUint32(h[20:24], uint32(p.WireLen))
	le.PutUint32(h[24:28], uint32(p.Interface))
	le.PutUint32(h[28:32], uint32(link))
	return append(append(b, h[:]...), p.Data...)
}

// ngRecordLen returns the length of the repacked record at the front of b.
func ngRecordLen(b []byte) int {
	return ngRecordHdr + int(binary.LittleEndian.Uint32(b[12:16]))
}

// cut handles the record at file offset off, of which only have octets are
// in the chunk: at the end of the file, or at a read error, the file ends
// there (as it would for a Source); otherwise the next chunk carries it.
func (c *ChunkReader) cut(off int64, have int, ioErr error) {
	switch {
	case ioErr != nil:
		c.err = c.fileError(off, ioErr)
	case c.eof && have == 0:
		c.err = io.EOF
	case c.eof:
		c.err = c.fileError(off, io.ErrUnexpectedEOF)
	}
}

func (c *ChunkReader) fileError(off int64, err error) *FileError {
	return &FileError{File: c.name, Offset: off, Frame: c.frame + 1, Err: err}
}

// ChunkWalker decodes the records of chunks into Packets, as Source.Next
// does. It is not safe for concurrent use.
type ChunkWalker struct {
	name string
	pr   *pcapReader // pcap
	ng   bool        // pcapng: the records are repacked (appendNgRecord)
	br   bytesPeeker
	dec  decoder
	p    Packet
}

// Walk calls fn with the records of ch, decoded; the Packet is valid
// during the call.
func (w *ChunkWalker) Walk(ch Chunk, fn func(p *Packet)) {
	if ch.meta != nil {
		for i := 0; i < ch.N && len(ch.meta) >= ngMeta*(i+1); i++ {
			fn(w.metaPacket(&ch, i, ch.First+uint64(i)))
		}
		return
	}
	if w.ng {
		b := ch.Data
		for i := 0; i < ch.N && len(b) >= ngRecordHdr; i++ {
			fn(w.ngPacket(b, ch.First+uint64(i)))
			b = b[ngRecordLen(b):]
		}
		return
	}
	// The whole chunk is the reader's window: every record is read in place
	// from it, with no call to the peeker.
	w.br.b = ch.Data
	w.pr.reset(&w.br, 0)
	w.pr.win = ch.Data
	for i := 0; i < ch.N; i++ {
		p, ok := w.next(ch.First + uint64(i))
		if !ok {
			return // cannot happen: Next checked every record
		}
		fn(p)
	}
}

// next reads and decodes the reader's next record, whole in its window, as
// frame; the Packet is the walker's own (fn is a function value, so a
// local one would escape, an allocation per record).
func (w *ChunkWalker) next(frame uint64) (*Packet, bool) {
	p := &w.p
	*p = Packet{}
	link, _, err := w.pr.read(p)
	if err != nil {
		return nil, false
	}
	p.Frame = frame
	switch { // as in Source.NextInto
	case p.Kind != 0:
	case link == layers.LinkTypeEthernet && !w.dec.noFast && fastTCP4(p, p.Data):
	default:
		w.dec.decode(p, link)
	}
	return p, true
}

// ngPacket decodes the repacked record at the front of b as frame, as
// Source.NextInto decodes what its ngReader reads.
func (w *ChunkWalker) ngPacket(b []byte, frame uint64) *Packet {
	le := binary.LittleEndian
	n := ngRecordLen(b)
	p := &w.p
	*p = Packet{Frame: frame, TS: time.Unix(int64(le.Uint64(b[0:8])), int64(le.Uint32(b[8:12]))).UTC(),
		Interface: int(le.Uint32(b[24:28])), CapLen: int(le.Uint32(b[16:20])), WireLen: int(le.Uint32(b[20:24])),
		Data: b[ngRecordHdr:n:n]}
	link := layers.LinkType(le.Uint32(b[28:32]))
	if !(link == layers.LinkTypeEthernet && !w.dec.noFast && fastTCP4(p, p.Data)) {
		w.dec.decode(p, link)
	}
	return p
}

// WalkOwned is Walk over the records of ch whose owner in own is me, with
// own and offs as Owners filled them: it goes straight from one such
// record to the next and touches none of the others' octets.
//
// Another core read the chunk, so a record's octets come from that core's
// cache. WalkOwned used to prefetch the next record of me while fn decoded
// one (2 KiB, in assembly), which helped when the decode was three times
// slower; measured again in session 46 with the
// prefetch switched on and off in one build, the decode was faster
// without it: -j 2 -q -z conn on the 512 MiB workload of issue 6 0.0716
// against 0.0739 s (paired median of 21 interleaved rounds 3.7 % less, CPU
// 4.1 % less), the pcapng 2.2 % less, -T jsonl 2.3 % less, the 2 GiB
// workload 4.3 % less (9 rounds), and small messages alike. The
// hardware prefetchers follow the records' octets, and the prefetch
// instructions stalled on misses of their own.
func (w *ChunkWalker) WalkOwned(ch Chunk, own []uint8, offs []int32, me uint8, fn func(p *Packet)) {
	n := min(ch.N, len(own), len(offs))
	if ch.meta != nil {
		n = min(n, len(ch.meta)/ngMeta)
	}
	own = own[:n]
	plain := ch.meta == nil && !w.ng
	if plain {
		w.pr.reset(&w.br, 0)
	}
	for i := nextOwned(own, -1, me); i < n; {
		j := nextOwned(own, i, me)
		var p *Packet
		switch {
		case ch.meta != nil:
			p = w.metaPacket(&ch, i, ch.First+uint64(i))
		case !plain:
			p = w.ngPacket(ch.Data[offs[i]:], ch.First+uint64(i))
		default:
			// The window starts at the record: read takes it in place,
			// or (a bad record) from the peeker, which starts there too.
			w.br.b = ch.Data[offs[i]:]
			w.pr.win, w.pr.pos = w.br.b, 0
			var ok bool
			if p, ok = w.next(ch.First + uint64(i)); !ok {
				return // cannot happen: Next checked every record
			}
			if ch.Pos > 0 && len(p.Payload) > 0 {
				payloadPos(p, ch.Pos+int64(offs[i])+pcapRecordHdrSize)
			}
		}
		fn(p)
		i = j
	}
}

// nextOwned returns the index of the first record after i whose owner is
// me, or len(own).
func nextOwned(own []uint8, i int, me uint8) int {
	for i++; i < len(own) && own[i] != me; i++ {
	}
	return i
}

// TS returns the timestamp of record i of ch, with offs as Owners filled
// it, reading only the record's header: the reader of iwarpdump -j N takes
// the capture's last timestamp from it, for the connections still stalled
// when the capture ends (flows.Decoder.SetEnd).
func (w *ChunkWalker) TS(ch Chunk, offs []int32, i int) (time.Time, bool) {
	le := binary.LittleEndian
	switch {
	case i < 0 || i >= min(ch.N, len(offs)):
		return time.Time{}, false
	case ch.meta != nil:
		if len(ch.meta) < ngMeta*(i+1) {
			return time.Time{}, false
		}
		m := ch.meta[ngMeta*i:]
		return time.Unix(int64(le.Uint64(m[8:16])), int64(le.Uint32(m[16:20]))).UTC(), true
	}
	hdr := pcapRecordHdrSize
	if w.ng {
		hdr = ngRecordHdr
	}
	if o := int(offs[i]); o < 0 || o+hdr > len(ch.Data) {
		return time.Time{}, false
	}
	b := ch.Data[offs[i]:]
	if w.ng {
		return time.Unix(int64(le.Uint64(b[0:8])), int64(le.Uint32(b[8:12]))).UTC(), true
	}
	return w.pr.timestamp(b), true
}

// ReadAt reads the file at offset off (io.ReaderAt), as the PayloadPos of
// the Packets of its pcap chunks gives it. It may be called from any
// goroutine.
func (c *ChunkReader) ReadAt(b []byte, off int64) (int, error) {
	if c.f == nil {
		return 0, ErrNotSeekable
	}
	return c.f.ReadAt(b, off)
}

// Owners appends to own, for every record of ch, the worker of its packet
// that of gives, and to offs the record's offset in ch.Data. It is Walk
// made cheap: the Ethernet/IPv4/TCP frames that fastTCP4 accepts go to
// of.OwnerTCP4 with their endpoints read straight from the octets, and
// only the other frames are decoded (of.Owner sees Kind, Src, Dst and
// Payload; the other fields may hold another record's values).
func (w *ChunkWalker) Owners(ch Chunk, own []uint8, offs []int32, of Owner) ([]uint8, []int32) {
	if w.ng {
		return w.ngOwners(ch, own, offs, of)
	}
	b := ch.Data
	for i := 0; i < ch.N; i++ {
		if len(b) < pcapRecordHdrSize {
			break
		}
		n := pcapRecordHdrSize + int(w.pr.u32(b[8:12]))
		offs = append(offs, int32(len(ch.Data)-len(b)))
		own = append(own, w.pcapOwner(b[:n:n], of))
		b = b[n:]
	}
	return own, offs
}

// pcapOwner returns the worker of the packet of rec, a whole pcap record
// (its header and its captured octets), that of gives.
func (w *ChunkWalker) pcapOwner(rec []byte, of Owner) uint8 {
	caplen, wirelen := w.pr.u32(rec[8:12]), w.pr.u32(rec[12:16])
	data := rec[pcapRecordHdrSize:]
	if caplen <= wirelen && w.pr.link == layers.LinkTypeEthernet {
		if length, doff, ok := fastTCP4Lengths(data); ok {
			ip := data[eth:]
			return of.OwnerTCP4([4]byte(ip[12:16]), [4]byte(ip[16:20]),
				binary.BigEndian.Uint16(ip[20:22]), binary.BigEndian.Uint16(ip[22:24]), length-20-doff)
		}
	}
	p := &w.p
	*p = Packet{CapLen: int(caplen), WireLen: int(wirelen), Data: data}
	w.dec.decode(p, w.pr.link)
	return of.Owner(p)
}

// ngOwners is Owners for pcapng chunks (offs: the records' indexes for
// chunks of blocks, whose records are at the end) and repacked records.
func (w *ChunkWalker) ngOwners(ch Chunk, own []uint8, offs []int32, of Owner) ([]uint8, []int32) {
	b := ch.Data
	for i := 0; i < ch.N; i++ {
		var data []byte
		var link layers.LinkType
		var wire uint32
		if ch.meta != nil {
			if len(ch.meta) < ngMeta*(i+1) {
				break
			}
			offs = append(offs, int32(i))
			data, link = metaData(&ch, i)
			wire = binary.LittleEndian.Uint32(ch.meta[ngMeta*i+24:])
		} else {
			if len(b) < ngRecordHdr {
				break
			}
			offs = append(offs, int32(len(ch.Data)-len(b)))
			n := ngRecordLen(b)
			data = b[ngRecordHdr:n:n]
			link = layers.LinkType(binary.LittleEndian.Uint32(b[28:32]))
			wire = binary.LittleEndian.Uint32(b[20:24])
			b = b[n:]
		}
		own = append(own, w.ngOwner(data, wire, link, of))
	}
	return own, offs
}

// ngOwner returns the worker of the packet of data, of link type link and
// original length wire, read from a pcapng file, that of gives.
func (w *ChunkWalker) ngOwner(data []byte, wire uint32, link layers.LinkType, of Owner) uint8 {
	if link == layers.LinkTypeEthernet {
		if length, doff, ok := fastTCP4Lengths(data); ok {
			ip := data[eth:]
			return of.OwnerTCP4([4]byte(ip[12:16]), [4]byte(ip[16:20]),
				binary.BigEndian.Uint16(ip[20:22]), binary.BigEndian.Uint16(ip[22:24]), length-20-doff)
		}
	}
	w.p = Packet{CapLen: len(data), WireLen: int(wire), Data: data}
	w.dec.decode(&w.p, link)
	return of.Owner(&w.p)
}

// Link returns a pcap file's link type, and LinkTypeUnknown for pcapng,
// whose link types are per interface.
func (w *ChunkWalker) Link() layers.LinkType {
	if w.ng {
		return LinkTypeUnknown
	}
	return w.pr.link
}

// bytesPeeker reads from a byte slice.
type bytesPeeker struct{ b []byte }

func (r *bytesPeeker) Peek(n int) ([]byte, error) {
	if n > len(r.b) {
		return r.b, io.EOF
	}
	return r.b[:n:n], nil
}

func (r *bytesPeeker) Buffered() int { return len(r.b) }

func (r *bytesPeeker) Discard(n int) (int, error) {
	n = min(n, len(r.b))
	r.b = r.b[n:]
	return n, nil
}

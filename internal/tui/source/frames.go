package source

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"sync"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/internal/tui/model"
)

// File formats Frames tells apart by their first octets.
const (
	fmtPcap = iota + 1
	fmtNg
	fmtGzip
	fmtStdin
)

const (
	pcapFileHdr  = 24
	pcapRecHdr   = 16
	ngBlockHdr   = 8
	ngSHB        = 0x0a0d0d0a
	ngIDB        = 1
	ngPB         = 2
	ngSPB        = 3
	ngEPB        = 6
	ngBOM        = 0x1a2b3c4d
	checkpointAt = 64                              // a checkpoint every 64 frames
	maxBlock     = capture.MaxRecordLength + 1<<16 // a packet block is never longer
)

// Kuznetzov's modified pcap: its records' headers have 8 more octets
// (capture reads it).
const (
	modifiedBE, modifiedLE = 0xa1b2cd34, 0x34cdb2a1
	modifiedRecHdr         = 24
)

// Frame cache bounds (gzip and standard input).
const (
	cacheFrames = 4096
	cacheOctets = 32 << 20
	window      = 256 // frames kept either side of one read from a gzip file
)

// ErrNotKept: the frame cannot be read again (standard input, past what
// was cached while indexing).
var ErrNotKept = errors.New("source: frame not kept (the capture was read from standard input)")

// ngDef is a pcapng block a packet block depends on: its section's Section
// Header Block or an Interface Description Block.
type ngDef struct {
	off     int64
	len     uint32
	shb     bool
	section int
	big     bool
}

// Frames reads single frames of a capture again. It is safe for concurrent
// use (reads are serialised).
type Frames struct {
	mu     sync.Mutex
	path   string
	format int
	f      *os.File

	pcapHdr []byte // pcap: the file header
	rec     int64  // pcap: the size of a record header
	big     bool   // pcap: big-endian record headers

	ckpt     []int64 // offset of frame k*checkpointAt+1
	frontier struct {
		off   int64
		frame uint64 // the frame starting at off (pcap) or the next frame number (pcapng)
		sect  int
		big   bool
	}
	defs []ngDef

	cache      map[uint64]model.RawFrame
	cacheOrder []uint64
	cacheBytes int

	// curs are decoders left open after reads of a pcap or pcapng file,
	// each before the frame it reads next, so that reading the frames
	// that follow (a move down the list, a search going through the
	// records) decodes one packet, where opening a capture.Source costs
	// some 750 KiB of buffers.
	curs  [numCursors]cursor
	clock uint64
}

// cursor is a capture.Source reading a file from a frame on.
type cursor struct {
	src  *capture.Source
	next uint64 // the frame src.Next returns
	used uint64 // Frames.clock at its last use
}

const (
	numCursors  = 4   // the list, and a search's workers
	cursorReach = 256 // frames a cursor reads past rather than a new one opened
)

// notCapture says why the file at path, whose first octets are head (as
// many as it has, up to a pcap file header), is no capture iwarptui reads.
func notCapture(path string, head []byte) error {
	switch {
	case len(head) == 0:
		return errors.New(path + " is empty, not a capture file")
	case len(head) < 4:
		return errors.New(path + ": " + strconv.Itoa(len(head)) + " octets, too short for a capture file")
	case len(head) < pcapFileHdr && isPcapMagic(binary.BigEndian.Uint32(head)):
		return errors.New(path + ": the pcap file header is cut short (" + strconv.Itoa(len(head)) + " of 24 octets)")
	}
	return fmt.Errorf("%s: not a pcap or pcapng file (magic 0x%08x)", path, binary.BigEndian.Uint32(head))
}

func isPcapMagic(m uint32) bool {
	switch m {
	case 0xa1b2c3d4, 0xa1b23c4d, 0xd4c3b2a1, 0x4d3cb2a1, modifiedBE, modifiedLE:
		return true
	}
	return false
}

// OpenFrames prepares random access to the frames of the capture at path
// ("-" for standard input: only what Offer kept).
func OpenFrames(path string) (*Frames, error) {
	fr := &Frames{path: path, cache: make(map[uint64]model.RawFrame)}
	if path == "-" {
		fr.format = fmtStdin
		return fr, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		_ = f.Close()
		return nil, errors.New(path + " is a directory, not a capture file")
	}
	var head [pcapFileHdr]byte
	n, _ := f.ReadAt(head[:], 0)
	switch {
	case n >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		fr.format = fmtGzip
	case n >= 4 && binary.BigEndian.Uint32(head[:]) == ngSHB:
		fr.format = fmtNg
		fr.frontier.frame = 1
		fr.frontier.sect = -1
	case n == pcapFileHdr:
		fr.rec = pcapRecHdr
		switch binary.BigEndian.Uint32(head[:]) {
		case 0xa1b2c3d4, 0xa1b23c4d:
			fr.big = true
		case 0xd4c3b2a1, 0x4d3cb2a1:
		case modifiedBE:
			fr.big, fr.rec = true, modifiedRecHdr
		case modifiedLE:
			fr.rec = modifiedRecHdr
		default:
			_ = f.Close()
			return nil, notCapture(path, head[:n])
		}
		fr.format = fmtPcap
		fr.pcapHdr = append([]byte(nil), head[:]...)
		fr.frontier.off, fr.frontier.frame = pcapFileHdr, 1
		fr.ckpt = []int64{pcapFileHdr}
	default:
		_ = f.Close()
		return nil, notCapture(path, head[:n])
	}
	if fr.format == fmtGzip {
		_ = f.Close()
		return fr, nil
	}
	fr.f = f
	return fr, nil
}

// Close releases the file.
func (fr *Frames) Close() error {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	for i := range fr.curs {
		fr.curs[i].close()
	}
	if fr.f != nil {
		err := fr.f.Close()
		fr.f = nil
		return err
	}
	return nil
}

// Offer keeps a copy of p for inputs that cannot be read at an offset
// (gzip, standard input), within the cache bounds. The indexing pass calls
// it for every packet.
func (fr *Frames) Offer(p *capture.Packet) {
	if fr.format != fmtGzip && fr.format != fmtStdin {
		return
	}
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if len(fr.cache) >= cacheFrames || fr.cacheBytes+len(p.Data) > cacheOctets {
		return
	}
	fr.put(rawOf(p))
}

func (fr *Frames) put(r model.RawFrame) {
	if _, ok := fr.cache[r.Frame]; ok {
		return
	}
	for len(fr.cacheOrder) > 0 && (len(fr.cache) >= cacheFrames || fr.cacheBytes+len(r.Data) > cacheOctets) {
		old := fr.cacheOrder[0]
		fr.cacheOrder = fr.cacheOrder[1:]
		fr.cacheBytes -= len(fr.cache[old].Data)
		delete(fr.cache, old)
	}
	fr.cache[r.Frame] = r
	fr.cacheOrder = append(fr.cacheOrder, r.Frame)
	fr.cacheBytes += len(r.Data)
}

// rawOf copies what the hex pane needs of a packet.
func rawOf(p *capture.Packet) model.RawFrame {
	data := append([]byte(nil), p.Data...)
	r := model.RawFrame{Frame: p.Frame, Data: data}
	if p.Kind != capture.KindTCP {
		return r
	}
	// Payload is a sub-slice of Data (capture aliases both to its buffer),
	// so the difference of capacities is its offset.
	off := cap(p.Data) - cap(p.Payload)
	if off < 0 || off+len(p.Payload) > len(data) {
		return r
	}
	r.TCP = true
	r.Seq = p.Seq
	r.PayloadOff = off
	r.Payload = data[off : off+len(p.Payload)]
	return r
}

// Read returns frame n (1-based).
func (fr *Frames) Read(n uint64) (model.RawFrame, error) {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if n == 0 {
		return model.RawFrame{}, errors.New("source: no frame 0")
	}
	if r, ok := fr.cache[n]; ok {
		return r, nil
	}
	switch fr.format {
	case fmtStdin:
		return model.RawFrame{}, ErrNotKept
	case fmtGzip:
		return fr.readSequential(n)
	}
	if r, ok := fr.readCursor(n); ok {
		return r, nil
	}
	if fr.format == fmtPcap {
		return fr.readPcap(n)
	}
	return fr.readNg(n)
}

// readCursor reads frame n with the cursor nearest before it, or a new
// one; the frames read on the way are cached. It reports false when the
// file cannot be read so, and the caller reads the frame alone.
func (fr *Frames) readCursor(n uint64) (model.RawFrame, bool) {
	fr.clock++
	var c *cursor
	for i := range fr.curs {
		k := &fr.curs[i]
		if k.src != nil && k.next <= n && n-k.next <= cursorReach && (c == nil || k.next > c.next) {
			c = k
		}
	}
	if c == nil {
		c = &fr.curs[0]
		for i := range fr.curs {
			if fr.curs[i].used < c.used {
				c = &fr.curs[i]
			}
		}
		c.close()
		src, err := fr.openAt(n)
		if err != nil {
			return model.RawFrame{}, false
		}
		c.src, c.next = src, n
	}
	c.used = fr.clock
	for {
		p, err := c.src.Next()
		if err != nil {
			c.close()
			return model.RawFrame{}, false
		}
		p.Frame = c.next
		c.next++
		if p.Frame < n {
			continue
		}
		r := rawOf(&p)
		fr.put(r)
		return r, true
	}
}

func (c *cursor) close() {
	if c.src != nil {
		_ = c.src.Close()
	}
	*c = cursor{}
}

// openAt opens a capture.Source on the file whose first packet is frame
// n: the file header (pcap) or the section's header blocks (pcapng)
// followed by the file from n's record on.
func (fr *Frames) openAt(n uint64) (*capture.Source, error) {
	var off int64
	var prefix []byte
	var err error
	if fr.format == fmtPcap {
		off, err = fr.pcapOffset(n)
		prefix = fr.pcapHdr
	} else {
		off, err = fr.ngOffset(n)
		if err == nil {
			prefix, err = fr.ngHeaders(off)
		}
	}
	if err != nil {
		return nil, err
	}
	r := io.MultiReader(bytes.NewReader(prefix), io.NewSectionReader(fr.f, off, 1<<62))
	return capture.NewSource(r, fr.path)
}

// ReadAll returns the frames listed, in order, skipping those that cannot
// be read; err is the first failure.
func (fr *Frames) ReadAll(ns []uint64) ([]model.RawFrame, error) {
	var out []model.RawFrame
	var first error
	for _, n := range ns {
		r, err := fr.Read(n)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		out = append(out, r)
	}
	return out, first
}

func (fr *Frames) u32(b []byte, big bool) uint32 {
	if big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func errFrame(n uint64, what string) error {
	return errors.New("source: frame " + strconv.FormatUint(n, 10) + ": " + what)
}

// pcapOffset walks record headers from the nearest checkpoint to frame n.
func (fr *Frames) pcapOffset(n uint64) (int64, error) {
	k := int((n - 1) / checkpointAt)
	var off int64
	var frame uint64
	if k < len(fr.ckpt) {
		off, frame = fr.ckpt[k], uint64(k)*checkpointAt+1
	} else {
		off, frame = fr.frontier.off, fr.frontier.frame
	}
	br := bufio.NewReaderSize(io.NewSectionReader(fr.f, off, 1<<62), 64<<10)
	h := make([]byte, fr.rec)
	for frame < n {
		if _, err := io.ReadFull(br, h); err != nil {
			return 0, errFrame(n, "beyond the end of the file")
		}
		caplen := fr.u32(h[8:12], fr.big)
		if caplen > capture.MaxRecordLength {
			return 0, errFrame(frame, "record too long")
		}
		if _, err := br.Discard(int(caplen)); err != nil {
			return 0, errFrame(n, "beyond the end of the file")
		}
		off += fr.rec + int64(caplen)
		frame++
		fr.note(off, frame)
	}
	return off, nil
}

// note records that frame starts at off, extending the checkpoints and the
// frontier.
func (fr *Frames) note(off int64, frame uint64) {
	if (frame-1)%checkpointAt == 0 && int((frame-1)/checkpointAt) == len(fr.ckpt) {
		fr.ckpt = append(fr.ckpt, off)
	}
	if frame > fr.frontier.frame {
		fr.frontier.off, fr.frontier.frame = off, frame
	}
}

func (fr *Frames) readPcap(n uint64) (model.RawFrame, error) {
	off, err := fr.pcapOffset(n)
	if err != nil {
		return model.RawFrame{}, err
	}
	var h [pcapRecHdr]byte
	if _, err := fr.f.ReadAt(h[:], off); err != nil {
		return model.RawFrame{}, errFrame(n, "beyond the end of the file")
	}
	caplen := fr.u32(h[8:12], fr.big)
	if caplen > capture.MaxRecordLength {
		return model.RawFrame{}, errFrame(n, "record too long")
	}
	buf := make([]byte, pcapFileHdr+int(fr.rec)+int(caplen))
	copy(buf, fr.pcapHdr)
	if _, err := fr.f.ReadAt(buf[pcapFileHdr:], off); err != nil {
		return model.RawFrame{}, errFrame(n, "truncated record")
	}
	return decodeOne(buf, n, fr.path)
}

// decodeOne decodes the single frame in the synthetic capture buf.
func decodeOne(buf []byte, n uint64, name string) (model.RawFrame, error) {
	src, err := capture.NewSource(bytes.NewReader(buf), name)
	if err != nil {
		return model.RawFrame{}, err
	}
	defer src.Close()
	p, err := src.Next()
	if err != nil {
		return model.RawFrame{}, err
	}
	p.Frame = n
	return rawOf(&p), nil
}

// ngOffset walks block headers from the nearest checkpoint to the packet
// block of frame n.
func (fr *Frames) ngOffset(n uint64) (int64, error) {
	k := int((n - 1) / checkpointAt)
	var off int64
	var frame uint64 // number of the next packet block at off
	sect, big := fr.frontier.sect, fr.frontier.big
	if k < len(fr.ckpt) {
		off, frame = fr.ckpt[k], uint64(k)*checkpointAt+1
		d := fr.sectionOf(off)
		sect, big = fr.defs[d].section, fr.defs[d].big
	} else {
		off, frame = fr.frontier.off, fr.frontier.frame
	}
	br := bufio.NewReaderSize(io.NewSectionReader(fr.f, off, 1<<62), 64<<10)
	var h [12]byte
	for {
		if _, err := io.ReadFull(br, h[:ngBlockHdr]); err != nil {
			return 0, errFrame(n, "beyond the end of the file")
		}
		typ := binary.BigEndian.Uint32(h[0:4])
		if typ == ngSHB {
			if _, err := io.ReadFull(br, h[8:12]); err != nil {
				return 0, errFrame(n, "truncated section header")
			}
			big = binary.BigEndian.Uint32(h[8:12]) == ngBOM
			sect++
		} else {
			typ = fr.u32(h[0:4], big)
		}
		blen := fr.u32(h[4:8], big)
		if blen < 12 || blen%4 != 0 || blen > maxBlock {
			return 0, errFrame(n, "malformed pcapng block")
		}
		known := off < fr.frontier.off
		switch typ {
		case ngSHB, ngIDB:
			if !known {
				fr.defs = append(fr.defs, ngDef{off: off, len: blen, shb: typ == ngSHB, section: sect, big: big})
			}
		case ngEPB, ngSPB, ngPB:
			if (frame-1)%checkpointAt == 0 && int((frame-1)/checkpointAt) == len(fr.ckpt) {
				fr.ckpt = append(fr.ckpt, off)
			}
			if frame == n {
				return off, nil
			}
			frame++
		}
		skip := int(blen) - ngBlockHdr
		if typ == ngSHB {
			skip -= 4
		}
		if _, err := br.Discard(skip); err != nil {
			return 0, errFrame(n, "beyond the end of the file")
		}
		off += int64(blen)
		if off > fr.frontier.off {
			fr.frontier.off, fr.frontier.frame, fr.frontier.sect, fr.frontier.big = off, frame, sect, big
		}
	}
}

// sectionOf returns the index in defs of the Section Header Block of the
// section holding offset off.
func (fr *Frames) sectionOf(off int64) int {
	i := sort.Search(len(fr.defs), func(i int) bool { return fr.defs[i].off >= off })
	for j := i - 1; j >= 0; j-- {
		if fr.defs[j].shb {
			return j
		}
	}
	return 0
}

func (fr *Frames) readNg(n uint64) (model.RawFrame, error) {
	off, err := fr.ngOffset(n)
	if err != nil {
		return model.RawFrame{}, err
	}
	if len(fr.defs) == 0 {
		return model.RawFrame{}, errFrame(n, "no section header")
	}
	s := fr.sectionOf(off)
	buf, err := fr.ngHeaders(off)
	if err != nil {
		return model.RawFrame{}, errFrame(n, err.Error())
	}
	var h [8]byte
	if _, err := fr.f.ReadAt(h[:], off); err != nil {
		return model.RawFrame{}, errFrame(n, "beyond the end of the file")
	}
	blen := fr.u32(h[4:8], fr.defs[s].big)
	b := make([]byte, blen)
	if _, err := fr.f.ReadAt(b, off); err != nil {
		return model.RawFrame{}, errFrame(n, "truncated block")
	}
	return decodeOne(append(buf, b...), n, fr.path)
}

// ngHeaders returns the Section Header Block and Interface Description
// Blocks that the packet block at off depends on.
func (fr *Frames) ngHeaders(off int64) ([]byte, error) {
	if len(fr.defs) == 0 {
		return nil, errors.New("no section header")
	}
	s := fr.sectionOf(off)
	var buf []byte
	for j := s; j < len(fr.defs) && fr.defs[j].off < off; j++ {
		d := fr.defs[j]
		if j > s && d.shb {
			break
		}
		b := make([]byte, d.len)
		if _, err := fr.f.ReadAt(b, d.off); err != nil {
			return nil, errors.New("cannot read its section's headers")
		}
		buf = append(buf, b...)
	}
	return buf, nil
}

// readSequential reads a gzip-compressed capture from the start up to
// frame n, keeping the frames around it.
func (fr *Frames) readSequential(n uint64) (model.RawFrame, error) {
	src, err := capture.Open(fr.path)
	if err != nil {
		return model.RawFrame{}, err
	}
	defer src.Close()
	lo := uint64(1)
	if n > window {
		lo = n - window
	}
	var got model.RawFrame
	found := false
	for {
		p, err := src.Next()
		if err != nil {
			break
		}
		if p.Frame < lo {
			continue
		}
		r := rawOf(&p)
		fr.put(r)
		if p.Frame == n {
			got, found = r, true
		}
		if p.Frame >= n+window {
			break
		}
	}
	if !found {
		return model.RawFrame{}, errFrame(n, "beyond the end of the file")
	}
	return got, nil
}

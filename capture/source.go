package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gopacket/gopacket/layers"
	"github.com/klauspost/compress/gzip"
)

// LinkTypeUnknown is what [Source.LinkType] returns for an interface the
// file has not described. (0xffff is not an assigned LINKTYPE_ value.)
const LinkTypeUnknown layers.LinkType = 0xffff

// File magics, as the first four octets read big-endian: the pcap magics in
// both byte orders, for microsecond and nanosecond timestamps, the pcapng
// Section Header Block type, Kuznetzov's modified pcap and gzip.
const (
	magicPcapMicroBE = 0xa1b2c3d4
	magicPcapMicroLE = 0xd4c3b2a1
	magicPcapNanoBE  = 0xa1b23c4d
	magicPcapNanoLE  = 0x4d3cb2a1
	magicModifiedBE  = 0xa1b2cd34
	magicModifiedLE  = 0x34cdb2a1
	magicPcapngSHB   = 0x0a0d0d0a
	gzipID1, gzipID2 = 0x1f, 0x8b
	// readerBufferSize exceeds MaxRecordLength (pcap records are read in
	// place) and is small enough to stay in a core's L2 cache beside the
	// decoder's state: -q on the issue 6 workload ran about 7 % faster
	// with 512 KiB than with 1 MiB (median of 21 interleaved rounds).
	readerBufferSize  = 1 << 19
	pcapRecordHdrSize = 16
)

// recordReader is one capture file format.
type recordReader interface {
	// read fills the capture fields of p (TS, Interface, CapLen, WireLen,
	// Data; p is zero on entry) from the next record and returns the link
	// type the frame is framed with. A record that is well framed but
	// unusable comes back with p.Kind KindBad and the reason in p.Err. It
	// returns io.EOF at the clean end of the file; any other error is fatal
	// and comes with the byte offset where the damage starts.
	read(p *Packet) (link layers.LinkType, off int64, err error)
	// linkType returns the link type of interface iface, or
	// LinkTypeUnknown.
	linkType(iface int) layers.LinkType
}

// Source reads packets from one pcap or pcapng file, or from a stream in
// either format. It is not safe for concurrent use.
type Source struct {
	name   string
	closer io.Closer
	gz     *gzip.Reader
	ahead  *aheadPeeker  // the read-ahead of a gzip file (OpenReadAhead), or nil
	mapped *mappedPeeker // the mapping of the file (OpenMapped), or nil
	rd     recordReader
	dec    decoder
	frame  uint64
	err    error // sticky: io.EOF, *FileError or ErrClosed
	// file is the capture file, when its offsets are those of the records
	// read (not compressed, a regular file): ReadAt reads it.
	file *os.File
}

// Open opens the capture file at path; "-" reads standard input. The format
// (pcap with either magic and byte order, or pcapng) is sniffed from the
// first octets, and gzip compression (magic 1f 8b) is undone transparently.
// A file that is not a capture yields a *FileError wrapping ErrFormat
// ("not a pcap or pcapng file (magic 0x...)"); a pcap file with a link type
// this package cannot decode, one wrapping ErrLinkType.
func Open(path string) (*Source, error) {
	return open(path, openPlain)
}

// How open reads a file.
const (
	openPlain     = iota // through a bufio.Reader
	openReadAhead        // a gzip file in another goroutine (OpenReadAhead)
	openMapped           // an uncompressed pcap file mapped (OpenMapped)
)

// OpenReadAhead is [Open] that, for a gzip-compressed regular file,
// decompresses the file in another goroutine, up to two 512 KiB blocks
// ahead of the caller, so that decompression and decoding overlap. The
// packets and errors are Open's. The read-ahead holds about 2.3 MiB more
// than Open does, until Close. An uncompressed file, standard input ("-")
// and files that are not regular (pipes, devices: a read from them can
// wait without end) are read as Open reads them.
func OpenReadAhead(path string) (*Source, error) {
	return open(path, openReadAhead)
}

// OpenMapped is [OpenReadAhead] that maps an uncompressed pcap or pcapng
// file into memory (on unix systems) instead of reading it: records are
// read from the file's pages in the page cache, with no read(2) and no
// copy, and the pages behind the reader are released, so memory stays
// bounded. The
// packets and errors are Open's, for the file as it was when it was
// opened (a file that grows meanwhile is read to its size then).
//
// The caller takes on what every reader of a mapped file does: if the
// file is truncated while it is read, touching a packet's octets beyond
// the new end faults (SIGBUS). A program that must survive that runs the
// goroutine that reads and decodes the packets under
// debug.SetPanicOnFault(true) and recovers (iwarpdump does). gzip files
// and files that cannot be mapped are read as OpenReadAhead reads them.
func OpenMapped(path string) (*Source, error) {
	return open(path, openMapped)
}

func open(path string, how int) (*Source, error) {
	if path == "-" {
		return newSource(os.Stdin, "-", nil, openPlain)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if how != openPlain {
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			how = openPlain
		}
	}
	s, err := newSource(f, path, f, how)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return s, nil
}

// firstRead is a reader whose first Read asks for at most n octets. A
// Source's first Peek, for the file's magic and header, had filled the
// whole 512 KiB buffer at once: iwarpdump -j N, whose chunks read the
// file again, never used those octets, and wrote 128 pages it had not
// touched before (page faults of some 15 us each on the VM of issue 6).
type firstRead struct {
	r io.Reader
	n int
}

// firstReadSize is what a Source reads first: a page, for the header.
const firstReadSize = 4096

func (f *firstRead) Read(p []byte) (int, error) {
	if f.n > 0 && len(p) > f.n {
		p = p[:f.n]
	}
	f.n = 0
	return f.r.Read(p)
}

// NewSource reads a capture from r; name is used in errors and returned by
// Name. See Open for the formats accepted. Close does not close r.
func NewSource(r io.Reader, name string) (*Source, error) {
	return newSource(r, name, nil, openPlain)
}

// newSource reads r as how says (the openPlain... constants).
func newSource(r io.Reader, name string, closer io.Closer, how int) (*Source, error) {
	s := &Source{name: name, closer: closer}
	if f, ok := r.(*os.File); ok && how == openMapped {
		if mp := mapFile(f); mp != nil {
			if m, _ := mp.Peek(4); len(m) == 4 {
				if magic := binary.BigEndian.Uint32(m); isPcapMagic(magic) || magic == magicPcapngSHB {
					return s.init(mp, magic)
				}
			}
			mp.unmap() // gzip or not a capture: read it
		}
		how = openReadAhead
	}
	br := bufio.NewReaderSize(&firstRead{r: r, n: firstReadSize}, readerBufferSize)
	if id, _ := br.Peek(2); len(id) == 2 && id[0] == gzipID1 && id[1] == gzipID2 {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, s.fileError(0, 0, err)
		}
		s.gz = gz
		br = bufio.NewReaderSize(gz, readerBufferSize)
	}
	m, err := br.Peek(4)
	if len(m) < 4 {
		if err == nil || err == io.EOF {
			err = &formatError{n: len(m)}
		}
		s.closeGzip()
		return nil, s.fileError(0, 0, err)
	}
	var pk peeker = br
	magic := binary.BigEndian.Uint32(m)
	if how == openReadAhead && s.gz != nil {
		s.ahead = newAheadPeeker(br, readerBufferSize)
		pk = s.ahead
		if magic == magicPcapngSHB {
			// The pcapng reader reads from a bufio.Reader: the blocks
			// are copied into it.
			br = bufio.NewReaderSize(s.ahead, readerBufferSize)
		}
	}
	var rd recordReader
	switch {
	case isPcapMagic(magic):
		rd, err = newPcapReader(pk)
	case magic == magicPcapngSHB:
		rd, err = newNgReader(br)
	default:
		err = &formatError{n: 4, magic: magic}
	}
	if err != nil {
		s.closeAhead()
		s.closeGzip()
		return nil, s.fileError(0, 0, err)
	}
	s.rd = rd
	s.dec.init()
	s.setFile(closer)
	return s, nil
}

// setFile keeps the capture file for ReadAt when the offsets of its
// records are file offsets: a regular file, not compressed.
func (s *Source) setFile(closer io.Closer) {
	if f, ok := closer.(*os.File); ok && s.gz == nil {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			s.file = f
		}
	}
}

// init makes s read the pcap or pcapng file of the given magic from the
// mapping mp.
func (s *Source) init(mp *mappedPeeker, magic uint32) (*Source, error) {
	var rd recordReader
	var err error
	if magic == magicPcapngSHB {
		rd, err = newNgReader(mp)
	} else {
		rd, err = newPcapReader(mp)
	}
	if err != nil {
		mp.unmap()
		return nil, s.fileError(0, 0, err)
	}
	s.mapped, s.rd = mp, rd
	s.dec.init()
	s.setFile(s.closer)
	return s, nil
}

// isPcapMagic reports whether magic (the first four octets, big-endian)
// starts a classic pcap file, or a modified one (modifiedRecordHdrSize).
func isPcapMagic(magic uint32) bool {
	switch magic {
	case magicPcapMicroBE, magicPcapMicroLE, magicPcapNanoBE, magicPcapNanoLE, magicModifiedBE, magicModifiedLE:
		return true
	}
	return false
}

// Mapped reports whether s reads its file from a memory mapping
// (OpenMapped): touching a packet's octets then faults if the file is
// truncated meanwhile.
func (s *Source) Mapped() bool { return s.mapped != nil }

// Name returns the name the source was opened with ("-" for standard input).
func (s *Source) Name() string { return s.name }

// LinkType returns the link-layer header type of interface iface: the
// file's link type for pcap (interface 0), the interface's for pcapng (in
// the current section). It returns LinkTypeUnknown for an interface the file
// has not described (yet).
func (s *Source) LinkType(iface int) layers.LinkType {
	if s.rd == nil {
		return LinkTypeUnknown
	}
	return s.rd.linkType(iface)
}

// Close releases the file (when Open opened it) and the decompressor. Later
// calls to Next return ErrClosed. Close is idempotent.
func (s *Source) Close() error {
	s.err = ErrClosed
	s.closeAhead()
	s.closeGzip()
	if s.mapped != nil {
		s.mapped.unmap()
		s.mapped = nil
	}
	c := s.closer
	s.closer = nil
	if c != nil {
		return c.Close()
	}
	return nil
}

// closeAhead stops the read-ahead, before what it reads is closed.
func (s *Source) closeAhead() {
	if s.ahead != nil {
		s.ahead.close()
		s.ahead = nil
	}
}

func (s *Source) closeGzip() {
	if s.gz != nil {
		_ = s.gz.Close()
		s.gz = nil
	}
}

// Next returns the next frame. It returns io.EOF at the clean end of the
// file. When the file is truncated or damaged, every intact frame before the
// damage is returned first, then a *FileError that unwraps to
// io.ErrUnexpectedEOF (truncation), ErrRecordTooLong, ErrBadBlock, or the
// error of pcapgo or of the underlying reader. Both io.EOF and a *FileError
// are sticky: later calls return them again.
//
// A frame that cannot be decoded is not an error of Next: it comes back with
// Kind KindBad and the reason in Packet.Err.
//
// The returned Packet's Data and Payload are valid until the next call.
// [Source.NextInto] does the same without copying the Packet.
func (s *Source) Next() (Packet, error) {
	var p Packet
	err := s.NextInto(&p)
	return p, err
}

// NextInto is [Source.Next] filling *p (every field: what p held before
// does not matter) instead of returning a Packet, so that a loop can reuse
// one Packet and copy none. On an error *p is zeroed. p's Data and Payload
// are valid until the next call.
func (s *Source) NextInto(p *Packet) error {
	*p = Packet{}
	if s.err != nil {
		return s.err
	}
	// A type switch, not an interface call: p does not escape through it
	// (Next's Packet stays on the stack) and pcap records take no dynamic
	// dispatch.
	var link layers.LinkType
	var off int64
	var err error
	switch rd := s.rd.(type) {
	case *pcapReader:
		link, off, err = rd.read(p)
	case *ngReader:
		link, off, err = rd.read(p)
	}
	if err != nil {
		*p = Packet{}
		if err == io.EOF {
			s.err = io.EOF
		} else {
			s.err = s.fileError(s.frame+1, off, err)
		}
		return s.err
	}
	s.frame++
	p.Frame = s.frame
	// A bad record comes with Kind set. The common frame takes the fast
	// path here, saving the call to decode (which would take it too).
	switch {
	case p.Kind != 0:
	case link == layers.LinkTypeEthernet && !s.dec.noFast && fastTCP4(p, p.Data):
	default:
		s.dec.decode(p, link)
	}
	if s.file != nil && len(p.Payload) > 0 {
		s.payloadPos(p, off)
	}
	return nil
}

// payloadPos sets p.PayloadPos, for a record read at file offset off
// whose payload lies in its Data (not a copy of it).
func (s *Source) payloadPos(p *Packet, off int64) {
	switch rd := s.rd.(type) {
	case *pcapReader:
		off += int64(rd.rec)
	case *ngReader:
		if !rd.inPlace {
			return
		}
		off += ngPktHdr
	default:
		return
	}
	payloadPos(p, off)
}

// payloadPos sets p.PayloadPos, for a frame whose Data is at file offset
// off, when its Payload lies in its Data (not a copy of it).
func payloadPos(p *Packet, off int64) {
	i := cap(p.Data) - cap(p.Payload)
	if i >= 0 && i < len(p.Data) && &p.Data[i] == &p.Payload[0] {
		p.PayloadPos = off + int64(i)
	}
}

// ReadAt reads the capture file at offset off (io.ReaderAt), as a
// Packet's PayloadPos gives it; it fails for a Source whose packets have
// no PayloadPos. A mapped file's octets still in memory are copied from
// the mapping, the others read with pread(2). Like NextInto, it is not
// safe for concurrent use.
func (s *Source) ReadAt(b []byte, off int64) (int, error) {
	if s.file == nil {
		return 0, ErrNotSeekable
	}
	if s.mapped != nil && s.mapped.readAt(b, off) {
		return len(b), nil
	}
	return s.file.ReadAt(b, off)
}

func (s *Source) fileError(frame uint64, off int64, err error) *FileError {
	return &FileError{File: s.name, Offset: off, Frame: frame, Err: err}
}

// FileError reports a capture file that cannot be read on: a bad header, a
// truncated or corrupt record. Frame is the 1-based number of the frame that
// could not be read (0 for the file header) and Offset the byte offset in the
// file (in the decompressed stream for gzip input) where the damaged header
// or record starts.
type FileError struct {
	File   string
	Offset int64
	Frame  uint64
	Err    error
}

// Error returns e.g. "capture: x.pcap: frame 7 at offset 1234: truncated
// record".
func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString("capture: ")
	b.WriteString(e.File)
	b.WriteString(": ")
	if e.Frame != 0 {
		b.WriteString("frame ")
		b.WriteString(strconv.FormatUint(e.Frame, 10))
		b.WriteString(" at offset ")
		b.WriteString(strconv.FormatInt(e.Offset, 10))
		b.WriteString(": ")
	}
	switch {
	case e.Err == nil:
		b.WriteString("damaged file")
	case errors.Is(e.Err, io.ErrUnexpectedEOF) && e.Frame != 0:
		b.WriteString("truncated record")
	case errors.Is(e.Err, io.ErrUnexpectedEOF):
		b.WriteString("truncated file header")
	default:
		b.WriteString(strings.TrimPrefix(e.Err.Error(), "capture: "))
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }

// formatError is the ErrFormat of a file with an unknown magic number.
type formatError struct {
	n     int // octets available (< 4: file too short)
	magic uint32
}

func (e *formatError) Error() string {
	if e.n < 4 {
		return "not a pcap or pcapng file (only " + strconv.Itoa(e.n) + " octets)"
	}
	return "not a pcap or pcapng file (magic 0x" + hex32(e.magic) + ")"
}

func (e *formatError) Is(target error) bool { return target == ErrFormat }

// linkTypeError is the ErrLinkType of a pcap file.
type linkTypeError struct{ lt layers.LinkType }

func (e *linkTypeError) Error() string {
	return "unsupported link type " + strconv.Itoa(int(e.lt)) + " (" + e.lt.String() + ")"
}

func (e *linkTypeError) Is(target error) bool { return target == ErrLinkType }

func hex32(v uint32) string {
	s := strconv.FormatUint(uint64(v), 16)
	return strings.Repeat("0", 8-len(s)) + s
}

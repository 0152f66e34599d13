// Package pcapwriter writes captured packets to pcapng (the default) or
// classic pcap files, with tcpdump's file rotation: a new file when the
// current one passes a size (-C), every so many seconds (-G, the name a
// strftime template), and a bounded number of files (-W: a ring of files
// with -C, an end of the capture with -G alone).
//
// Design goals:
//
//   - What tcpdump and Wireshark read. pcapng files have one Section Header
//     Block, an Interface Description Block (link type, snap length,
//     if_name, if_tsresol of nanoseconds) for the link type of the options
//     and one more for each other link type written (WritePacketLink:
//     packets merged from captures of several link types), and an Enhanced
//     Packet Block per packet; classic pcap files, which hold one link
//     type, use the microsecond or nanosecond magic. Both are little-endian.
//   - No allocation per packet: records are framed in a reused buffer and
//     written through a bufio.Writer.
//   - tcpdump's rotation semantics, including its file names: with -C the
//     first file is FILE and the next FILE1, FILE2...; with -W N they are
//     FILE0 ... FILE(N-1) zero-padded to the width of N-1 and reused in a
//     ring; with -G the name is first passed through strftime.
package pcapwriter

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// Format is a capture file format.
type Format uint8

const (
	// Pcapng is the pcapng format (draft-ietf-opsawg-pcapng), tcpdump's
	// and Wireshark's current default.
	Pcapng Format = iota
	// Pcap is the classic libpcap format.
	Pcap
)

// String returns "pcapng" or "pcap".
func (f Format) String() string {
	if f == Pcap {
		return "pcap"
	}
	return "pcapng"
}

// ErrFileLimit is returned by WritePacket when -G rotation without -C has
// written Options.MaxFiles files: tcpdump then ends the capture ("Maximum
// file limit reached").
var ErrFileLimit = errors.New("pcapwriter: maximum file limit reached")

// ErrLinkType is returned by WritePacketLink for a packet whose link type
// a classic pcap file cannot hold: not the one of its header.
var ErrLinkType = errors.New("a pcap file holds packets of one link type (pcapng holds several)")

// Options says what to write and when to rotate.
type Options struct {
	// Format is the file format; the zero value is Pcapng.
	Format Format
	// LinkType is the link-layer header type of the packets.
	LinkType layers.LinkType
	// Snaplen is the snapshot length recorded in the file header; 0 means
	// 262144.
	Snaplen int
	// Interface is the capture interface's name (pcapng if_name), if any.
	Interface string
	// Nanoseconds selects the nanosecond pcap magic (tcpdump
	// --time-stamp-precision=nano); pcapng files always carry nanoseconds.
	Nanoseconds bool
	// Application is written as the pcapng shb_userappl option.
	Application string

	// FileSize rotates to a new file before a packet when the current file
	// has more than FileSize octets (tcpdump -C, whose unit is 1,000,000
	// octets); 0 never rotates on size.
	FileSize int64
	// Rotate rotates to a new file before the first packet written at least
	// Rotate after the current file was opened (tcpdump -G); the file name
	// is then a strftime template, expanded in local time.
	Rotate time.Duration
	// MaxFiles (tcpdump -W) bounds the number of files: with FileSize, the
	// files are reused in a ring numbered 0 to MaxFiles-1; with Rotate
	// alone, WritePacket returns ErrFileLimit when MaxFiles files have been
	// written.
	MaxFiles int
	// Now is the clock for Rotate; nil means time.Now.
	Now func() time.Time
	// OnClose, if set, is called with the name of each file closed by a
	// rotation or by Close (tcpdump -z runs a command on it).
	OnClose func(name string)
}

// Writer writes packets to one file or a rotating series of files. It is
// not safe for concurrent use.
type Writer struct {
	opts     Options
	template string // the name given to Create; "" for NewWriter
	name     string // current file
	f        *os.File
	bw       *bufio.Writer
	size     int64 // octets written to the current file
	buf      []byte
	cCount   int               // -C file number
	gCount   int               // -G rotations so far
	gTime    time.Time         // when the current -G period started
	wChars   int               // digits of MaxFiles-1
	err      error             // sticky
	own      bool              // the writer opened the file
	links    []layers.LinkType // pcapng: the current file's interfaces
}

const (
	blockSHB     = 0x0a0d0d0a
	blockIDB     = 0x00000001
	blockEPB     = 0x00000006
	byteOrder    = 0x1a2b3c4d
	optEnd       = 0
	optIfName    = 2
	optIfTsresol = 9
	optUserAppl  = 4
	maxSnaplen   = 262144
	bufferSize   = 256 << 10
)

// NewWriter writes one capture to w, without rotation (the rotation
// options are ignored). Close flushes but does not close w.
func NewWriter(w io.Writer, opts Options) (*Writer, error) {
	wr := &Writer{opts: opts, bw: bufio.NewWriterSize(w, bufferSize), name: "-"}
	wr.fixOpts()
	if err := wr.writeHeader(); err != nil {
		return nil, err
	}
	return wr, nil
}

// Create opens the first file of a capture named name (a strftime
// template when opts.Rotate is set) and writes its header.
func Create(name string, opts Options) (*Writer, error) {
	w := &Writer{opts: opts, template: name, own: true}
	w.fixOpts()
	if opts.MaxFiles > 0 {
		w.wChars = len(strconv.Itoa(opts.MaxFiles - 1))
	}
	w.gTime = w.now()
	if err := w.open(w.fileName(0, w.numbered())); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Writer) fixOpts() {
	if w.opts.Snaplen <= 0 || w.opts.Snaplen > maxSnaplen {
		w.opts.Snaplen = maxSnaplen
	}
	if w.opts.Now == nil {
		w.opts.Now = time.Now
	}
	w.buf = make([]byte, 0, 64)
}

func (w *Writer) now() time.Time { return w.opts.Now() }

// numbered reports whether file names carry a number: with -C, or with -W.
func (w *Writer) numbered() bool { return w.opts.FileSize > 0 }

// fileName builds a file name as tcpdump's MakeFilename: the template
// through strftime when rotating on time, then the file number when
// numbering (zero-padded to the width of MaxFiles-1); the number 0 is left
// out when there is no -W.
func (w *Writer) fileName(cnt int, numbered bool) string {
	base := w.template
	if w.opts.Rotate > 0 {
		base = Strftime(base, w.gTime)
	}
	if !numbered || (cnt == 0 && w.wChars == 0) {
		return base
	}
	s := strconv.Itoa(cnt)
	for len(s) < w.wChars {
		s = "0" + s
	}
	return base + s
}

func (w *Writer) open(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w.f, w.name, w.size = f, name, 0
	if w.bw == nil {
		w.bw = bufio.NewWriterSize(f, bufferSize)
	} else {
		w.bw.Reset(f)
	}
	return w.writeHeader()
}

func (w *Writer) closeFile() error {
	if w.f == nil {
		return nil
	}
	err := w.bw.Flush()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	if w.opts.OnClose != nil {
		w.opts.OnClose(w.name)
	}
	return err
}

// Name returns the name of the file being written ("-" for NewWriter).
func (w *Writer) Name() string { return w.name }

// LinkType returns the link type the files are written with.
func (w *Writer) LinkType() layers.LinkType { return w.opts.LinkType }

func (w *Writer) le16(v uint16) { w.buf = binary.LittleEndian.AppendUint16(w.buf, v) }
func (w *Writer) le32(v uint32) { w.buf = binary.LittleEndian.AppendUint32(w.buf, v) }

// option appends a pcapng option, padded to 32 bits.
func (w *Writer) option(code uint16, val []byte) {
	w.le16(code)
	w.le16(uint16(len(val)))
	w.buf = append(w.buf, val...)
	for len(w.buf)%4 != 0 {
		w.buf = append(w.buf, 0)
	}
}

// block finishes a pcapng block started at start: total length at both
// ends.
func (w *Writer) block(start int) {
	n := len(w.buf) - start + 4
	binary.LittleEndian.PutUint32(w.buf[start+4:], uint32(n))
	w.le32(uint32(n))
}

func (w *Writer) writeHeader() error {
	w.buf = w.buf[:0]
	if w.opts.Format == Pcap {
		magic := uint32(0xa1b2c3d4)
		if w.opts.Nanoseconds {
			magic = 0xa1b23c4d
		}
		w.le32(magic)
		w.le16(2)
		w.le16(4)
		w.le32(0) // thiszone
		w.le32(0) // sigfigs
		w.le32(uint32(w.opts.Snaplen))
		w.le32(uint32(w.opts.LinkType))
	} else {
		// Section Header Block (pcapng §4.1).
		w.le32(blockSHB)
		w.le32(0)
		w.le32(byteOrder)
		w.le16(1)
		w.le16(0)
		w.buf = binary.LittleEndian.AppendUint64(w.buf, ^uint64(0)) // section length unknown
		if w.opts.Application != "" {
			w.option(optUserAppl, []byte(w.opts.Application))
		}
		w.option(optEnd, nil)
		w.block(0)
		w.links = w.links[:0]
		w.idb(w.opts.LinkType)
	}
	return w.write(w.buf)
}

// idb appends an Interface Description Block (§4.2) for link type lt to
// the buffer: interface len(w.links) of the file.
func (w *Writer) idb(lt layers.LinkType) {
	start := len(w.buf)
	w.le32(blockIDB)
	w.le32(0)
	w.le16(uint16(lt))
	w.le16(0)
	w.le32(uint32(w.opts.Snaplen))
	if w.opts.Interface != "" {
		w.option(optIfName, []byte(w.opts.Interface))
	}
	w.option(optIfTsresol, []byte{9})
	w.option(optEnd, nil)
	w.block(start)
	w.links = append(w.links, lt)
}

func (w *Writer) write(b []byte) error {
	n, err := w.bw.Write(b)
	w.size += int64(n)
	if err != nil {
		w.err = err
	}
	return err
}

// rotate applies tcpdump's -G then -C checks before a packet.
func (w *Writer) rotate() error {
	if w.template == "" {
		return nil
	}
	if w.opts.Rotate > 0 {
		if t := w.now(); t.Sub(w.gTime) >= w.opts.Rotate {
			w.gTime = t
			w.gCount++
			if err := w.closeFile(); err != nil {
				return err
			}
			if w.opts.FileSize == 0 && w.opts.MaxFiles > 0 && w.gCount >= w.opts.MaxFiles {
				return ErrFileLimit
			}
			w.cCount = 0
			if err := w.open(w.fileName(0, w.numbered())); err != nil {
				return err
			}
		}
	}
	if w.opts.FileSize > 0 && w.size > w.opts.FileSize {
		if err := w.closeFile(); err != nil {
			return err
		}
		w.cCount++
		if w.opts.MaxFiles > 0 && w.cCount >= w.opts.MaxFiles {
			w.cCount = 0
		}
		if err := w.open(w.fileName(w.cCount, true)); err != nil {
			return err
		}
	}
	return nil
}

// WritePacket writes one packet of the options' link type: its capture
// time, the octets captured and its length on the wire (at least
// len(data)). It rotates files first when the options say so, and returns
// ErrFileLimit at the -G/-W limit.
func (w *Writer) WritePacket(ts time.Time, data []byte, wireLen int) error {
	return w.WritePacketLink(ts, data, wireLen, w.opts.LinkType)
}

// WritePacketLink is WritePacket for a packet of link type lt: in pcapng,
// on an interface of that link type, described before the packet when the
// file has none yet; in pcap, ErrLinkType unless lt is the file's (the
// packet is not written, and the writer goes on).
func (w *Writer) WritePacketLink(ts time.Time, data []byte, wireLen int, lt layers.LinkType) error {
	if w.err != nil {
		return w.err
	}
	if w.opts.Format == Pcap && lt != w.opts.LinkType {
		return ErrLinkType
	}
	if err := w.rotate(); err != nil {
		w.err = err
		return err
	}
	iface := 0
	if w.opts.Format != Pcap {
		for iface < len(w.links) && w.links[iface] != lt {
			iface++
		}
		if iface == len(w.links) {
			w.buf = w.buf[:0]
			w.idb(lt)
			if err := w.write(w.buf); err != nil {
				return err
			}
		}
	}
	if len(data) > w.opts.Snaplen {
		data = data[:w.opts.Snaplen]
	}
	if wireLen < len(data) {
		wireLen = len(data)
	}
	w.buf = w.buf[:0]
	if w.opts.Format == Pcap {
		frac := uint32(ts.Nanosecond())
		if !w.opts.Nanoseconds {
			frac /= 1000
		}
		w.le32(uint32(ts.Unix()))
		w.le32(frac)
		w.le32(uint32(len(data)))
		w.le32(uint32(wireLen))
		if err := w.write(w.buf); err != nil {
			return err
		}
		return w.write(data)
	}
	// Enhanced Packet Block (§4.3), timestamps in nanoseconds.
	pad := (4 - len(data)%4) % 4
	total := 32 + len(data) + pad
	ns := uint64(ts.UnixNano())
	w.le32(blockEPB)
	w.le32(uint32(total))
	w.le32(uint32(iface))
	w.le32(uint32(ns >> 32))
	w.le32(uint32(ns))
	w.le32(uint32(len(data)))
	w.le32(uint32(wireLen))
	if err := w.write(w.buf); err != nil {
		return err
	}
	if err := w.write(data); err != nil {
		return err
	}
	w.buf = w.buf[:0]
	w.buf = append(w.buf, 0, 0, 0)[:pad]
	w.le32(uint32(total))
	return w.write(w.buf)
}

// Flush writes buffered data to the current file (tcpdump -U does it after
// every packet).
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Close flushes and closes the current file (for NewWriter, only
// flushes). It is idempotent.
func (w *Writer) Close() error {
	if !w.own {
		if w.bw == nil {
			return nil
		}
		err := w.bw.Flush()
		w.bw = nil
		return err
	}
	err := w.closeFile()
	if w.err == nil {
		w.err = os.ErrClosed
	}
	return err
}

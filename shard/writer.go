package shard

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/internal/tempfile"
)

// MaxWriterShards is the largest number of shards a [Writer] writes at once
// (each holds an open file and a write buffer).
const MaxWriterShards = 4096

// writeBufferSize is each shard file's write buffer.
const writeBufferSize = 64 << 10

// Format is the file format a [Writer] writes.
type Format uint8

// Formats.
const (
	// FormatPcap is the classic libpcap format: one link type per file.
	FormatPcap Format = iota
	// FormatPcapng is pcapng: one interface per link type, nanosecond
	// timestamps.
	FormatPcapng
)

// Ext returns the file name extension: ".pcap" or ".pcapng".
func (f Format) Ext() string {
	if f == FormatPcapng {
		return ".pcapng"
	}
	return ".pcap"
}

// Options say how a [Writer] writes its shards.
type Options struct {
	// Format is the file format.
	Format Format
	// LinkTypes are the link types of the packets to come. FormatPcap needs
	// exactly one; with FormatPcapng every shard starts with one interface
	// per entry, in this order, and a packet of another link type adds an
	// interface to its shard when it comes.
	LinkTypes []layers.LinkType
	// Nanos writes pcap timestamps with nanosecond resolution (magic
	// a1b23c4d) instead of microseconds. pcapng files always use
	// nanoseconds.
	Nanos bool
	// Snaplen is written in the pcap file header; 0 means
	// capture.MaxRecordLength.
	Snaplen uint32
}

// FormatFor chooses the output format that keeps the inputs' link types
// and timestamps: pcap when every input is a pcap file and they all have
// the same link type (nanosecond resolution when any of them has it),
// pcapng otherwise. links lists the link type of interface 0 of each
// input.
func FormatFor(formats []capture.FileFormat, links []layers.LinkType) Options {
	o := Options{Format: FormatPcap}
	for i, f := range formats {
		if f.Pcapng || links[i] != links[0] {
			o = Options{Format: FormatPcapng}
			break
		}
		o.Nanos = o.Nanos || f.Nanos
	}
	seen := map[layers.LinkType]bool{}
	for _, l := range links {
		if l != capture.LinkTypeUnknown && !seen[l] {
			seen[l] = true
			o.LinkTypes = append(o.LinkTypes, l)
		}
	}
	if o.Format == FormatPcap && len(o.LinkTypes) != 1 {
		o.Format = FormatPcapng
	}
	return o
}

// Errors of a Writer.
var (
	// ErrShards: the number of shards is not in [1, MaxWriterShards].
	ErrShards = errors.New("shard: number of shards must be from 1 to 4096")
	// ErrLinkTypeMismatch: a pcap Writer got a packet of another link type
	// than its file's.
	ErrLinkTypeMismatch = errors.New("shard: packet link type differs from the pcap file's (use pcapng)")
	// ErrPcapLinkTypes: FormatPcap needs exactly one link type.
	ErrPcapLinkTypes = errors.New("shard: a pcap file needs exactly one link type")
)

// out is one shard file being written.
type out struct {
	path, tmp string
	f         *os.File
	bw        *bufio.Writer
	pcap      *pcapgo.Writer
	ng        *pcapgo.NgWriter
	ifaces    map[layers.LinkType]int // pcapng interface ids
	packets   uint64
	octets    uint64
}

// Writer writes the packets of a capture into N files, one per shard:
// DIR/<base>.shard-I-of-N.pcap (or .pcapng), each holding, in input order,
// the packets that [Of] puts in its shard. The files are written under
// temporary names and renamed into place by Close, so that a rerun replaces
// complete files and a failed run leaves none behind.
type Writer struct {
	opts    Options
	outs    []out
	skipped uint64
	raised  uint64
	closed  bool
}

// Create starts writing n shard files into dir for an input called base.
func Create(dir, base string, n int, o Options) (*Writer, error) {
	if n < 1 || n > MaxWriterShards {
		return nil, ErrShards
	}
	if o.Format == FormatPcap && len(o.LinkTypes) != 1 {
		return nil, ErrPcapLinkTypes
	}
	if o.Snaplen == 0 {
		o.Snaplen = capture.MaxRecordLength
	}
	w := &Writer{opts: o, outs: make([]out, n)}
	for i := range w.outs {
		name := Selector{Index: i, Count: n}.Name(base) + o.Format.Ext()
		if n == 1 {
			name = base + ".shard-0-of-1" + o.Format.Ext()
		}
		if err := w.open(&w.outs[i], filepath.Join(dir, name)); err != nil {
			_ = w.Abort()
			return nil, err
		}
	}
	return w, nil
}

func (w *Writer) open(o *out, path string) error {
	f, err := tempfile.Beside(path)
	if err != nil {
		return err
	}
	o.path, o.tmp, o.f = path, f.Name(), f
	o.bw = bufio.NewWriterSize(f, writeBufferSize)
	if w.opts.Format == FormatPcap {
		if w.opts.Nanos {
			o.pcap = pcapgo.NewWriterNanos(o.bw)
		} else {
			o.pcap = pcapgo.NewWriter(o.bw)
		}
		return o.pcap.WriteFileHeader(w.opts.Snaplen, w.opts.LinkTypes[0])
	}
	// A section header without host details, so that the output depends
	// on the input alone.
	opts := pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "iwarpkit"}}
	o.ifaces = make(map[layers.LinkType]int)
	links := w.opts.LinkTypes
	if len(links) == 0 {
		links = []layers.LinkType{layers.LinkTypeEthernet}
	}
	ng, err := pcapgo.NewNgWriterInterface(o.bw, ngInterface(links[0], 0), opts)
	if err != nil {
		return err
	}
	o.ng = ng
	o.ifaces[links[0]] = 0
	for _, l := range links[1:] {
		if _, err := o.addInterface(l); err != nil {
			return err
		}
	}
	return nil
}

func ngInterface(l layers.LinkType, id int) pcapgo.NgInterface {
	return pcapgo.NgInterface{Name: "if" + strconv.Itoa(id), LinkType: l, TimestampResolution: 9}
}

func (o *out) addInterface(l layers.LinkType) (int, error) {
	id, err := o.ng.AddInterface(ngInterface(l, len(o.ifaces)))
	if err != nil {
		return 0, err
	}
	o.ifaces[l] = id
	return id, nil
}

// Write appends p, a frame of link type link, to the file of its shard
// ([Of]) and returns that shard. A record whose octets the capture does
// not hold cannot be written: it is skipped, counted by Skipped, and
// Write returns -1 and no error. A record whose captured length is above
// its original length (a damaged file) is written with its original
// length raised to its captured length, as iwarpdump -w writes it, and
// counted by Raised.
func (w *Writer) Write(p *capture.Packet, link layers.LinkType) (int, error) {
	if len(p.Data) != p.CapLen {
		w.skipped++
		return -1, nil
	}
	i := Of(p, len(w.outs))
	o := &w.outs[i]
	ci := gopacket.CaptureInfo{Timestamp: p.TS, CaptureLength: p.CapLen, Length: p.WireLen}
	if p.CapLen > p.WireLen {
		ci.Length = p.CapLen
		w.raised++
	}
	var err error
	if o.pcap != nil {
		if link != w.opts.LinkTypes[0] {
			return i, ErrLinkTypeMismatch
		}
		err = o.pcap.WritePacket(ci, p.Data)
	} else {
		id, ok := o.ifaces[link]
		if !ok {
			if id, err = o.addInterface(link); err != nil {
				return i, err
			}
		}
		ci.InterfaceIndex = id
		err = o.ng.WritePacket(ci, p.Data)
	}
	if err != nil {
		return i, err
	}
	o.packets++
	o.octets += uint64(p.CapLen)
	return i, nil
}

// Len returns the number of shards.
func (w *Writer) Len() int { return len(w.outs) }

// Path returns the final path of shard i's file.
func (w *Writer) Path(i int) string { return w.outs[i].path }

// Count returns the packets and captured octets written to shard i.
func (w *Writer) Count(i int) (packets, octets uint64) {
	return w.outs[i].packets, w.outs[i].octets
}

// Skipped returns the number of records Write could not write.
func (w *Writer) Skipped() uint64 { return w.skipped }

// Raised returns the number of records written with their original length
// raised to their captured length.
func (w *Writer) Raised() uint64 { return w.raised }

// Close flushes every shard file and renames it into place. On error the
// files not yet in place are removed.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	var first error
	for i := range w.outs {
		o := &w.outs[i]
		if o.f == nil {
			continue
		}
		var err error
		if o.ng != nil {
			err = o.ng.Flush() // its own buffer, then ours
		}
		if err == nil {
			err = o.bw.Flush()
		}
		if cerr := o.f.Close(); err == nil {
			err = cerr
		}
		o.f = nil
		if err == nil && first == nil {
			err = os.Rename(o.tmp, o.path)
		}
		if err != nil || first != nil {
			_ = os.Remove(o.tmp)
			if first == nil {
				first = err
			}
		}
	}
	w.closed = true
	return first
}

// Abort closes and removes every shard file not yet renamed into place.
func (w *Writer) Abort() error {
	for i := range w.outs {
		o := &w.outs[i]
		if o.f != nil {
			_ = o.f.Close()
			o.f = nil
			_ = os.Remove(o.tmp)
		}
	}
	w.closed = true
	return nil
}

// Split reads m to its end and writes its packets into n shard files in
// dir named after base (see [Writer]), in a format that keeps the inputs'
// link types and timestamps ([FormatFor]). It returns the closed Writer,
// for its counts and paths.
//
// A damaged input (m.Next returning a *capture.FileError) still yields
// complete shard files holding every intact packet: they are renamed into
// place and the error is returned with the Writer. A write error or the
// cancellation of ctx removes the files and returns the error with a nil
// Writer.
func Split(ctx context.Context, m *capture.Merge, dir, base string, n int) (*Writer, error) {
	formats := make([]capture.FileFormat, m.Len())
	links := make([]layers.LinkType, m.Len())
	for i := range formats {
		formats[i] = m.Format(i)
		links[i] = m.InputLinkType(i)
	}
	w, err := Create(dir, base, n, FormatFor(formats, links))
	if err != nil {
		return nil, err
	}
	var readErr error
	for k := 0; ; k++ {
		if k&1023 == 0 && ctx.Err() != nil {
			_ = w.Abort()
			return nil, ctx.Err()
		}
		p, err := m.Next()
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
		if _, err := w.Write(&p, m.LinkType(p.Interface)); err != nil {
			_ = w.Abort()
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return w, readErr
}

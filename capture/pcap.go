package capture

import (
	"bytes"
	"encoding/binary"
	"io"
	"strconv"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// pcapReader reads the classic libpcap format: pcapgo reads the file header;
// records are read in place from the bufio buffer (larger than any record),
// so no octet is copied twice. It knows each record's offset, refuses a
// record longer than MaxRecordLength before reading it, and steps over a
// record whose captured length exceeds its original length.
//
// The records are cut from a window: all the octets the buffer held when
// the reader last had to ask it for more. The octets of the records read
// from the window stay in the buffer (the caller's Packet aliases the last
// one) until a record does not fit in what is left; only then are they
// discarded and the buffer asked for that record, as many octets as it needs
// and no more, so that a stream (a pipe, a live capture) never waits for
// octets beyond the record it is reading. Most records thus cost no call
// into bufio at all.
type pcapReader struct {
	br    peeker
	win   []byte // octets peeked from br: win[0] is br's next unread octet
	pos   int    // octets of win read as records but not yet discarded from br
	r     *pcapgo.Reader
	big   bool  // big-endian file
	nanos bool  // nanosecond timestamps
	off   int64 // offset of the next record
	link  layers.LinkType
	// lens: how the record headers of an old file (version 2.3 or
	// earlier) hold the lengths (lensSwapped, lensMaybeSwapped); 0 for
	// version 2.4. Such a file is read by readBuffered alone.
	lens uint8
	// rec is the size of a record header: pcapRecordHdrSize, or
	// modifiedRecordHdrSize in Kuznetzov's modified pcap, which is read
	// by readBuffered alone too.
	rec int
}

// modifiedRecordHdrSize is the record header of Alexey Kuznetzov's
// modified pcap (magic 0xa1b2cd34, written by the patched tcpdump of some
// old Linux distributions and by editcap -F modpcap): the classic 16
// octets, then the interface index (4), the protocol (2), the packet type
// (1) and a pad octet, which the decode does not need. libpcap
// (sf-pcap.c) and Wireshark (wiretap/libpcap.c) read it.
const modifiedRecordHdrSize = 24

// How a pcap file older than version 2.4 holds a record's captured and
// original lengths. Before 2.3 they came in the other order (original
// length first); in 2.3 files both orders occur, and the captured length
// is the smaller one. libpcap (sf-pcap.c) and Wireshark read them so.
const (
	lensSwapped      = 1
	lensMaybeSwapped = 2
)

// peeker is what pcapReader reads from: a *bufio.Reader, or a chunk of
// records in memory (bytesPeeker).
type peeker interface {
	Peek(n int) ([]byte, error)
	Discard(n int) (int, error)
	Buffered() int
}

// newPcapReader reads the file header of a pcap file of either byte order
// and resolution, or a modified pcap file, and returns a reader of its
// records.
func newPcapReader(br peeker) (*pcapReader, error) {
	// pcapgo parses the 24-octet file header; the records are ours.
	peeked, err := br.Peek(24)
	if len(peeked) < 24 {
		return nil, unexpected(err)
	}
	hdr := [24]byte(peeked)
	magic := binary.BigEndian.Uint32(hdr[:4])
	big := magic == magicPcapMicroBE || magic == magicPcapNanoBE || magic == magicModifiedBE
	rec := pcapRecordHdrSize
	if magic == magicModifiedBE || magic == magicModifiedLE {
		// Its file header is the classic one (microseconds), which
		// pcapgo reads under the classic magic.
		rec = modifiedRecordHdrSize
		if big {
			binary.BigEndian.PutUint32(hdr[:4], magicPcapMicroBE)
		} else {
			binary.BigEndian.PutUint32(hdr[:4], magicPcapMicroLE)
		}
	}
	lens, err := pcapVersion(hdr[:], big)
	if err != nil {
		return nil, err
	}
	r, err := pcapgo.NewReader(bytes.NewReader(hdr[:]))
	if err != nil {
		return nil, err
	}
	_, _ = br.Discard(24)
	p := &pcapReader{br: br, r: r, big: big, off: 24, link: r.LinkType(), lens: lens, rec: rec}
	p.nanos = r.Resolution().Exponent == -9
	if !linkSupported(p.link) {
		return nil, &linkTypeError{p.link}
	}
	return p, nil
}

// pcapVersion checks the version of the pcap file header hdr: 2.4, or
// the older 2.0 to 2.3 that libpcap and Wireshark still read, whose record
// lengths may be swapped (the lens... constants). For those it sets the
// minor version in hdr to 4, for pcapgo, which reads only 2.4.
func pcapVersion(hdr []byte, big bool) (lens uint8, err error) {
	order := binary.ByteOrder(binary.LittleEndian)
	if big {
		order = binary.BigEndian
	}
	major, minor := order.Uint16(hdr[4:6]), order.Uint16(hdr[6:8])
	switch {
	case major != 2 || minor > 4:
		return 0, &versionError{major, minor}
	case minor == 4:
		return 0, nil
	case minor == 3:
		lens = lensMaybeSwapped
	default:
		lens = lensSwapped
	}
	order.PutUint16(hdr[6:8], 4)
	return lens, nil
}

// versionError is the ErrFormat of a pcap file of a version that is not
// read.
type versionError struct{ major, minor uint16 }

func (e *versionError) Error() string {
	return "unsupported pcap version " + strconv.Itoa(int(e.major)) + "." + strconv.Itoa(int(e.minor))
}

func (e *versionError) Is(target error) bool { return target == ErrFormat }

// recordLengths returns the captured and original lengths of the record
// header h, as the file's version orders them.
func (p *pcapReader) recordLengths(h []byte) (caplen, wirelen uint32) {
	caplen, wirelen = p.u32(h[8:12]), p.u32(h[12:16])
	if p.lens == lensSwapped || (p.lens == lensMaybeSwapped && caplen > wirelen) {
		caplen, wirelen = wirelen, caplen
	}
	return caplen, wirelen
}

func (p *pcapReader) u32(b []byte) uint32 {
	if p.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (p *pcapReader) linkType(iface int) layers.LinkType {
	if iface != 0 {
		return LinkTypeUnknown
	}
	return p.link
}

// reset makes the reader read from br, its next record at file offset off.
func (p *pcapReader) reset(br peeker, off int64) {
	p.br, p.win, p.pos, p.off = br, nil, 0, off
}

// read fills pk's capture fields from the next record (see recordReader).
func (p *pcapReader) read(pk *Packet) (layers.LinkType, int64, error) {
	if b := p.win[p.pos:]; len(b) >= pcapRecordHdrSize {
		caplen, wirelen := p.u32(b[8:12]), p.u32(b[12:16])
		// caplen is bounded before it is converted, so n cannot wrap.
		if caplen <= MaxRecordLength && pcapRecordHdrSize+int(caplen) <= len(b) {
			n := pcapRecordHdrSize + int(caplen)
			sec, frac := p.u32(b[0:4]), p.u32(b[4:8]) // timestamp, inlined
			ns := int64(frac)
			if !p.nanos {
				ns *= 1000
			}
			pk.TS = time.Unix(int64(sec), ns).UTC()
			pk.CapLen, pk.WireLen = int(caplen), int(wirelen)
			pk.Data = b[pcapRecordHdrSize:n:n]
			p.pos += n
			off := p.off
			p.off += int64(n)
			return p.link, off, nil
		}
	}
	return p.readBuffered(pk)
}

// readBuffered is read for a record that is not whole in the window (or is
// bad): it discards the records read from the window and asks the buffer for
// this one.
func (p *pcapReader) readBuffered(pk *Packet) (layers.LinkType, int64, error) {
	if p.pos > 0 {
		_, _ = p.br.Discard(p.pos) // octets already buffered: cannot fail
	}
	p.win, p.pos = nil, 0
	off := p.off
	h, err := p.br.Peek(p.rec)
	if len(h) < p.rec {
		if len(h) == 0 && err == io.EOF {
			return 0, off, io.EOF
		}
		return 0, off, unexpected(err)
	}
	caplen, wirelen := p.recordLengths(h)
	if caplen > MaxRecordLength {
		return 0, off, ErrRecordTooLong
	}
	// The record is read in place from the bufio buffer (larger than any
	// record, readerBufferSize): no copy. pcapgo's own reader would copy
	// every octet once more.
	n := p.rec + int(caplen)
	b, err := p.br.Peek(n)
	if len(b) < n {
		return 0, off, unexpected(err)
	}
	// h may be stale now: Peek(n) can have moved the buffered octets.
	pk.TS = p.timestamp(b)
	pk.CapLen, pk.WireLen = int(caplen), int(wirelen)
	pk.Data = b[p.rec:n:n]
	// The window: every octet buffered now (at least this record's; no
	// read is made for more). An old or a modified file's is this record
	// alone: read's in-window path, which takes the lengths and the header
	// as version 2.4 has them, never sees its records.
	p.win, _ = p.br.Peek(p.br.Buffered())
	if p.lens != 0 || p.rec != pcapRecordHdrSize {
		p.win = b
	}
	p.pos = n
	p.off += int64(n)
	return p.link, off, nil
}

// timestamp returns the time of the record whose header starts h.
func (p *pcapReader) timestamp(h []byte) time.Time {
	sec, frac := p.u32(h[0:4]), p.u32(h[4:8])
	ns := int64(frac)
	if !p.nanos {
		ns *= 1000
	}
	return time.Unix(int64(sec), ns).UTC()
}

// unexpected turns the io.EOF of a short read inside a record into
// io.ErrUnexpectedEOF; other errors pass through.
func unexpected(err error) error {
	if err == nil || err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

package capture

import (
	"bytes"
	"encoding/binary"
	"io"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// pcapReader reads the classic libpcap format: pcapgo reads the file header;
// records are read in place from the bufio buffer (larger than any record),
// so no octet is copied twice. It knows each record's offset, refuses a
// record longer than MaxRecordLength before reading it, and steps over a
// record whose captured length exceeds its original length.
type pcapReader struct {
	br    peeker
	r     *pcapgo.Reader
	big   bool  // big-endian file
	nanos bool  // nanosecond timestamps
	off   int64 // offset of the next record
	link  layers.LinkType
}

// peeker is what pcapReader reads from: a *bufio.Reader, or a memory-mapped
// file (mapped.go).
type peeker interface {
	Peek(n int) ([]byte, error)
	Discard(n int) (int, error)
}

func newPcapReader(br peeker, big bool) (*pcapReader, error) {
	// pcapgo parses the 24-octet file header; the records are ours.
	hdr, err := br.Peek(24)
	if len(hdr) < 24 {
		return nil, unexpected(err)
	}
	r, err := pcapgo.NewReader(bytes.NewReader(hdr))
	if err != nil {
		return nil, err
	}
	_, _ = br.Discard(24)
	p := &pcapReader{br: br, r: r, big: big, off: 24, link: r.LinkType()}
	p.nanos = r.Resolution().Exponent == -9
	if !linkSupported(p.link) {
		return nil, &linkTypeError{p.link}
	}
	return p, nil
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

func (p *pcapReader) read(pk *Packet) (layers.LinkType, int64, error) {
	off := p.off
	h, err := p.br.Peek(pcapRecordHdrSize)
	if len(h) < pcapRecordHdrSize {
		if len(h) == 0 && err == io.EOF {
			return 0, off, io.EOF
		}
		return 0, off, unexpected(err)
	}
	caplen, wirelen := p.u32(h[8:12]), p.u32(h[12:16])
	if caplen > MaxRecordLength {
		return 0, off, ErrRecordTooLong
	}
	if caplen > wirelen {
		// Well framed but impossible: skip it and say so.
		pk.TS = p.timestamp(h)
		pk.CapLen, pk.WireLen = int(caplen), int(wirelen)
		pk.Kind, pk.Err = KindBad, ErrCapLen
		n := pcapRecordHdrSize + int(caplen)
		if d, err := p.br.Discard(n); d < n {
			return 0, off, unexpected(err)
		}
		p.off += int64(n)
		return p.link, off, nil
	}
	// The record is read in place from the bufio buffer (larger than any
	// record, readerBufferSize): no copy. pcapgo's own reader would copy
	// every octet once more.
	n := pcapRecordHdrSize + int(caplen)
	b, err := p.br.Peek(n)
	if len(b) < n {
		return 0, off, unexpected(err)
	}
	// h may be stale now: Peek(n) can have moved the buffered octets.
	pk.TS = p.timestamp(b)
	pk.CapLen, pk.WireLen = int(caplen), int(wirelen)
	pk.Data = b[pcapRecordHdrSize:n:n]
	_, _ = p.br.Discard(n)
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

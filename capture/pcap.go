package capture

import (
	"bufio"
	"encoding/binary"
	"io"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// pcapReader reads the classic libpcap format with pcapgo. Before handing a
// record to pcapgo it peeks at the record header itself, so that it knows
// the record's offset, refuses a record longer than MaxRecordLength before
// pcapgo allocates for it, and steps over a record whose captured length
// exceeds its original length (pcapgo would stop there with the stream out
// of step).
type pcapReader struct {
	br    *bufio.Reader // shared with pcapgo, which uses it as is
	r     *pcapgo.Reader
	big   bool  // big-endian file
	nanos bool  // nanosecond timestamps
	off   int64 // offset of the next record
	link  layers.LinkType
}

func newPcapReader(br *bufio.Reader, big bool) (*pcapReader, error) {
	// pcapgo wraps its input in bufio.NewReader, which returns br itself as
	// br's buffer is larger than bufio's default: offsets stay exact.
	r, err := pcapgo.NewReader(br)
	if err != nil {
		return nil, err
	}
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

func (p *pcapReader) read(rec *record) (int64, error) {
	off := p.off
	h, err := p.br.Peek(pcapRecordHdrSize)
	if len(h) < pcapRecordHdrSize {
		if len(h) == 0 && err == io.EOF {
			return off, io.EOF
		}
		return off, unexpected(err)
	}
	caplen, wirelen := p.u32(h[8:12]), p.u32(h[12:16])
	if caplen > MaxRecordLength {
		return off, ErrRecordTooLong
	}
	if caplen > wirelen {
		// Well framed but impossible: skip it and say so.
		sec, frac := p.u32(h[0:4]), p.u32(h[4:8])
		ns := int64(frac)
		if !p.nanos {
			ns *= 1000
		}
		rec.ci.Timestamp = time.Unix(int64(sec), ns).UTC()
		rec.ci.CaptureLength = int(caplen)
		rec.ci.Length = int(wirelen)
		rec.ci.InterfaceIndex = 0
		rec.data = nil
		rec.link = p.link
		rec.bad = ErrCapLen
		n := pcapRecordHdrSize + int(caplen)
		if d, err := p.br.Discard(n); d < n {
			return off, unexpected(err)
		}
		p.off += int64(n)
		return off, nil
	}
	data, ci, err := p.r.ZeroCopyReadPacketData()
	if err != nil {
		return off, unexpected(err)
	}
	rec.data, rec.ci, rec.link = data, ci, p.link
	p.off += pcapRecordHdrSize + int64(caplen)
	return off, nil
}

// unexpected turns the io.EOF of a short read inside a record into
// io.ErrUnexpectedEOF; other errors pass through.
func unexpected(err error) error {
	if err == nil || err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

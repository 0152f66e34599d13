package damage

import (
	"encoding/binary"
)

// Sizes of the classic libpcap file format: the global header and a record
// header (timestamp seconds and fraction, captured length, original length).
const (
	pcapFileHdr   = 24
	pcapRecordHdr = 16
	// maxRecordLength is libpcap's MAXIMUM_SNAPLEN, the largest record
	// capture.Source accepts (capture.MaxRecordLength); absurd-length
	// damage straddles it.
	maxRecordLength = 262144
)

// record is one pcap record. Lengths are kept apart from data so that a
// damage can make the header lie about them; a parsed record has
// caplen == len(data).
type record struct {
	sec, frac       uint32
	caplen, origlen uint32
	data            []byte // shared with the source until written: copy before mutating
	off             int    // offset of the record header in the source, -1 if made up
}

// byteOrder is what binary.LittleEndian and binary.BigEndian both are.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// pcapFile is a parsed classic pcap file: its global header, its records
// and whatever trailing octets did not form a whole record.
type pcapFile struct {
	order byteOrder
	hdr   []byte // the 24-octet global header, shared with the source
	link  uint32
	nanos bool
	recs  []record
	tail  []byte
}

// parsePcap parses a classic pcap file in either byte order. It returns nil
// when b does not start with a pcap magic; records stop at the first one
// that does not fit, the rest goes to tail.
func parsePcap(b []byte) *pcapFile {
	if len(b) < pcapFileHdr {
		return nil
	}
	f := &pcapFile{hdr: b[:pcapFileHdr]}
	switch binary.LittleEndian.Uint32(b) {
	case 0xa1b2c3d4:
		f.order = binary.LittleEndian
	case 0xa1b23c4d:
		f.order, f.nanos = binary.LittleEndian, true
	case 0xd4c3b2a1:
		f.order = binary.BigEndian
	case 0x4d3cb2a1:
		f.order, f.nanos = binary.BigEndian, true
	default:
		return nil
	}
	f.link = f.order.Uint32(b[20:24])
	off := pcapFileHdr
	for len(b)-off >= pcapRecordHdr {
		h := b[off : off+pcapRecordHdr]
		caplen := f.order.Uint32(h[8:12])
		if uint64(caplen) > uint64(len(b)-off-pcapRecordHdr) {
			break
		}
		end := off + pcapRecordHdr + int(caplen)
		f.recs = append(f.recs, record{
			sec:     f.order.Uint32(h[0:4]),
			frac:    f.order.Uint32(h[4:8]),
			caplen:  caplen,
			origlen: f.order.Uint32(h[12:16]),
			data:    b[off+pcapRecordHdr : end],
			off:     off,
		})
		off = end
	}
	f.tail = b[off:]
	return f
}

// clone returns a copy of f whose record list may be changed freely (the
// records' data are still shared).
func (f *pcapFile) clone() *pcapFile {
	g := *f
	g.recs = append([]record(nil), f.recs...)
	return &g
}

// size returns the length of the file bytes would produce.
func (f *pcapFile) size() int {
	n := len(f.hdr) + len(f.tail)
	for i := range f.recs {
		n += pcapRecordHdr + len(f.recs[i].data)
	}
	return n
}

// bytes serializes f: the header, every record with its (possibly false)
// header fields followed by its data, then the tail.
func (f *pcapFile) bytes() []byte {
	out := make([]byte, 0, f.size())
	out = append(out, f.hdr...)
	for i := range f.recs {
		r := &f.recs[i]
		out = f.order.AppendUint32(out, r.sec)
		out = f.order.AppendUint32(out, r.frac)
		out = f.order.AppendUint32(out, r.caplen)
		out = f.order.AppendUint32(out, r.origlen)
		out = append(out, r.data...)
	}
	return append(out, f.tail...)
}

// recordOffsets returns the offset of every record header in bytes(), and
// the offset just past the last record.
func (f *pcapFile) recordOffsets() []int {
	offs := make([]int, 0, len(f.recs)+1)
	off := len(f.hdr)
	for i := range f.recs {
		offs = append(offs, off)
		off += pcapRecordHdr + len(f.recs[i].data)
	}
	return append(offs, off)
}

// own makes record i's data a private copy, so that it can be mutated.
func (f *pcapFile) own(i int) []byte {
	r := &f.recs[i]
	r.data = append([]byte(nil), r.data...)
	return r.data
}

// Link-layer header types this package can see through (the LINKTYPE_
// values of the tcpdump list).
const (
	linkNull     = 0
	linkEthernet = 1
	linkRaw12    = 12
	linkRaw14    = 14
	linkRaw      = 101
	linkLoop     = 108
	linkSLL      = 113
	linkIPv4     = 228
	linkIPv6     = 229
	linkSLL2     = 276
)

// tcpPayload locates the TCP payload in a frame of link type link: it
// returns the offsets [start, end) of the payload inside data, and ok when
// data holds an unfragmented IPv4 or IPv6 packet carrying TCP with at least
// one payload octet captured. It never reads past data.
func tcpPayload(link uint32, data []byte) (start, end int, ok bool) {
	off, etype := 0, uint16(0)
	u16 := func(o int) uint16 {
		if o+2 > len(data) {
			return 0
		}
		return binary.BigEndian.Uint16(data[o:])
	}
	switch link {
	case linkEthernet:
		off, etype = 14, u16(12)
		for (etype == 0x8100 || etype == 0x88a8) && off+4 <= len(data) {
			etype = u16(off + 2)
			off += 4
		}
	case linkSLL:
		off, etype = 16, u16(14)
	case linkSLL2:
		off, etype = 20, u16(0)
	case linkNull, linkLoop:
		if len(data) < 4 {
			return 0, 0, false
		}
		off = 4
		fam := binary.LittleEndian.Uint32(data)
		if fam > 0xffff {
			fam = binary.BigEndian.Uint32(data)
		}
		switch fam {
		case 2:
			etype = 0x0800
		case 24, 28, 30:
			etype = 0x86dd
		}
	case linkRaw, linkRaw12, linkRaw14, linkIPv4, linkIPv6:
		if len(data) < 1 {
			return 0, 0, false
		}
		switch data[0] >> 4 {
		case 4:
			etype = 0x0800
		case 6:
			etype = 0x86dd
		}
	default:
		return 0, 0, false
	}
	if off >= len(data) {
		return 0, 0, false
	}
	var tcp, ipEnd int
	switch etype {
	case 0x0800:
		ip := data[off:]
		if len(ip) < 20 || ip[0]>>4 != 4 || ip[9] != 6 {
			return 0, 0, false
		}
		ihl := int(ip[0]&0x0f) * 4
		total := int(binary.BigEndian.Uint16(ip[2:4]))
		if ihl < 20 || total < ihl || binary.BigEndian.Uint16(ip[6:8])&0x3fff != 0 {
			return 0, 0, false
		}
		tcp, ipEnd = off+ihl, off+total
	case 0x86dd:
		ip := data[off:]
		if len(ip) < 40 || ip[0]>>4 != 6 || ip[6] != 6 {
			return 0, 0, false
		}
		tcp, ipEnd = off+40, off+40+int(binary.BigEndian.Uint16(ip[4:6]))
	default:
		return 0, 0, false
	}
	if tcp+20 > len(data) {
		return 0, 0, false
	}
	doff := int(data[tcp+12]>>4) * 4
	if doff < 20 {
		return 0, 0, false
	}
	start, end = tcp+doff, min(ipEnd, len(data))
	if start >= end {
		return 0, 0, false
	}
	return start, end, true
}

// payloadRecords returns the indexes of f's records that carry TCP payload.
func (f *pcapFile) payloadRecords() []int {
	var idx []int
	for i := range f.recs {
		if _, _, ok := tcpPayload(f.link, f.recs[i].data); ok {
			idx = append(idx, i)
		}
	}
	return idx
}

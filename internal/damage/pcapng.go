package damage

import (
	"bytes"
	"encoding/binary"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// pcapng block types (draft-ietf-opsawg-pcapng §4, §11.1).
const (
	ngSHB = 0x0a0d0d0a
	ngIDB = 1
	ngEPB = 6
)

// ngSection fixes the Section Header Block options, so that the output does
// not depend on the machine (pcapgo's defaults name GOOS and GOARCH).
var ngSection = pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "iwarpkit internal/damage"}}

// timestamp returns a record's capture time.
func (f *pcapFile) timestamp(r *record) time.Time {
	ns := int64(r.frac)
	if !f.nanos {
		ns *= 1000
	}
	return time.Unix(int64(r.sec), ns).UTC()
}

// toPcapng writes f's records as a little-endian pcapng file with pcapgo's
// NgWriter: one Section Header Block, one Interface Description Block and an
// Enhanced Packet Block per record. Records whose header lies about their
// lengths are written with lengths that pcapgo accepts (the captured length
// is the data's). comment, when not nil, says which packets get an opt_comment
// option (which a reader must skip).
func (f *pcapFile) toPcapng(comment func(i int) bool) []byte {
	var buf bytes.Buffer
	intf := pcapgo.NgInterface{Name: "damage0", LinkType: layers.LinkType(f.link), TimestampResolution: 9}
	w, err := pcapgo.NewNgWriterInterface(&buf, intf, ngSection)
	if err != nil {
		return nil
	}
	for i := range f.recs {
		r := &f.recs[i]
		ci := gopacket.CaptureInfo{
			Timestamp:     f.timestamp(r),
			CaptureLength: len(r.data),
			Length:        max(int(r.origlen), len(r.data)),
		}
		var opts pcapgo.NgPacketOptions
		if comment != nil && comment(i) {
			opts.Comments = []string{"damage: comment option to skip"}
		}
		if err := w.WritePacketWithOptions(ci, r.data, opts); err != nil {
			return nil
		}
	}
	if err := w.Flush(); err != nil {
		return nil
	}
	return buf.Bytes()
}

// block is one pcapng block: its offset, total length and type.
type block struct {
	off, len int
	typ      uint32
}

// ngBlocks walks the blocks of a little-endian pcapng file written by
// toPcapng, up to the first one whose length does not fit.
func ngBlocks(b []byte) []block {
	var bs []block
	for off := 0; len(b)-off >= 12; {
		typ := binary.LittleEndian.Uint32(b[off:])
		n := int(binary.LittleEndian.Uint32(b[off+4:]))
		if n < 12 || n%4 != 0 || n > len(b)-off {
			break
		}
		bs = append(bs, block{off: off, len: n, typ: typ})
		off += n
	}
	return bs
}

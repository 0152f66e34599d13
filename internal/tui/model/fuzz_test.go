package model

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// fuzzRecord builds an FPDU record from fuzz input: header fields from the
// first octets, the DDP/RDMAP segment decoded from the rest.
func fuzzRecord(b []byte) *flows.Record {
	u32 := func(i int) uint32 {
		if len(b) >= i+4 {
			return binary.BigEndian.Uint32(b[i:])
		}
		return 0
	}
	f := &flows.FPDURecord{Seq: u32(0), Off: uint64(u32(4)), Len: int(u32(8) & 0xffff), ULPDULen: uint16(u32(12)),
		Pad: int(u32(16) & 3), CRC: u32(20), CRCStatus: flows.CRCStatus(u32(24) % 4)}
	f.Frames = []uint64{uint64(u32(28) & 0xffff), uint64(u32(28)&0xffff) + uint64(u32(32)&7)}
	for i := range int(u32(36) % 4) {
		f.Markers = append(f.Markers, flows.Marker{Seq: f.Seq + uint32(i)*512 + u32(40)&511, FPDUPtr: uint16(u32(44)), OK: i%2 == 0})
	}
	if len(b) > 48 {
		if seg, err := rdmap.Decode(b[48:]); err == nil || err == dissect.ErrUnknownOpcode {
			seg.Payload = nil
			f.Seg, f.SegOK, f.SegErr = seg, true, err
			f.PayloadLen = int(f.ULPDULen) - seg.HdrLen
		} else {
			f.SegErr = err
		}
	}
	if u32(24)&0x100 != 0 {
		f.Findings = []dissect.Finding{{Severity: dissect.SeverityError, Code: "x.y", Msg: string(b[:min(len(b), 9)]), Frames: f.Frames, Ref: "RFC"}}
	}
	return &flows.Record{Type: flows.RecFPDU, Frame: f.Frames[0], TS: time.Unix(int64(u32(4)), 0).UTC(), Conn: int(u32(8) % 7),
		Src: netip.MustParseAddrPort("192.0.2.1:1"), Dst: netip.MustParseAddrPort("[2001:db8::1]:2"), Dir: flows.Dir(u32(12) % 3), FPDU: f}
}

func fuzzSeeds(f *testing.F) {
	f.Add([]byte{})
	for _, r := range testutil.Decode(f, rping, flows.Options{}) {
		if r.Type == flows.RecFPDU && r.FPDU.SegOK {
			hdr := make([]byte, 48)
			binary.BigEndian.PutUint32(hdr, r.FPDU.Seq)
			binary.BigEndian.PutUint32(hdr[8:], uint32(r.FPDU.Len))
			binary.BigEndian.PutUint32(hdr[12:], uint32(r.FPDU.ULPDULen))
			f.Add(append(hdr, rdmap.AppendSegment(nil, r.FPDU.Seg)...))
		}
	}
}

// FuzzCodec: any FPDU record comes back from the index as it went in (its
// JSON Lines form), and decoding damaged arena octets never panics.
func FuzzCodec(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		r := fuzzRecord(b)
		x := NewIndex()
		x.Add(r)
		got := x.Record(0)
		if w, g := format.AppendJSON(nil, format.Fields(r)), format.AppendJSON(nil, format.Fields(got)); !bytes.Equal(w, g) {
			t.Fatalf("round trip:\n got %s\nwant %s", g, w)
		}
		c := newCodec()
		c.decode(b) // must not panic
	})
}

// FuzzLayoutHex: layouts of arbitrary FPDU records and hex panes of
// arbitrary frames stay within the record's octets and never panic.
func FuzzLayoutHex(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		r := fuzzRecord(b)
		l := NewLayout(r)
		if l == nil {
			t.Fatal("no layout for an FPDU")
		}
		tr := NewTree()
		tr.SetRecord(r)
		tr.ExpandAll()
		for _, v := range tr.Visible() {
			for _, s := range l.Spans(v.Node.Path) {
				if s.Start < 0 || s.End > l.Len || s.Start >= s.End {
					t.Fatalf("%s: span %+v outside 0-%d", v.Node.Path, s, l.Len)
				}
			}
		}
		fr := RawFrame{Frame: 1, TCP: true, Seq: r.FPDU.Seq - uint32(len(b)%7), Data: b, Payload: b}
		lines := BuildHex(l, []RawFrame{fr, fr}, l.Spans("rdmap"))
		n := 0
		for _, ln := range lines {
			for _, c := range ln.Cells {
				if c.Valid {
					n++
				}
			}
		}
		if n > l.Len {
			t.Fatalf("%d octets shown of a %d-octet record", n, l.Len)
		}
	})
}

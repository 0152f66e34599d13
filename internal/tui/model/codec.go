package model

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
)

// codec turns records into a compact varint encoding and back. It owns the
// tables the encoding refers to: endpoints, interned strings (finding codes
// and references) and connection summaries. Every field a record exposes
// through format.Fields survives the round trip except FPDURecord.Preview,
// which is dropped (the hex pane re-reads the capture).
//
// The DDP and RDMAP headers of an FPDU are kept in their wire form (RFC
// 5041 §4, RFC 5040 §4), written by rdmap.AppendSegment and read back by
// rdmap.Decode, whose round trip the rdmap package guarantees.
type codec struct {
	base    int64 // timestamps are stored relative to the first record's
	hasBase bool
	eps     []netip.AddrPort
	epID    map[netip.AddrPort]uint32
	strs    []string
	strID   map[string]uint32
	sums    []*flows.ConnSummary
	others  []*flows.Record // records of types the encoding does not know
}

func newCodec() codec {
	return codec{
		eps:   []netip.AddrPort{{}},
		epID:  map[netip.AddrPort]uint32{{}: 0},
		strs:  []string{""},
		strID: map[string]uint32{"": 0},
	}
}

func (c *codec) ep(a netip.AddrPort) uint32 {
	if id, ok := c.epID[a]; ok {
		return id
	}
	id := uint32(len(c.eps))
	c.eps = append(c.eps, a)
	c.epID[a] = id
	return id
}

func (c *codec) str(s string) uint32 {
	if id, ok := c.strID[s]; ok {
		return id
	}
	id := uint32(len(c.strs))
	c.strs = append(c.strs, s)
	c.strID[s] = id
	return id
}

// errs are the sentinels a SegErr may hold, by code (index + 1).
var errs = [...]error{
	dissect.ErrTruncated, dissect.ErrBadLength, dissect.ErrNotMPA, dissect.ErrBadCRC,
	dissect.ErrMarkerMismatch, dissect.ErrUnknownOpcode, dissect.ErrBadVersion,
}

const errOther = 0xff

func putU(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }
func putI(b []byte, v int64) []byte  { return binary.AppendVarint(b, v) }

func putBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func putBytes(b, v []byte) []byte {
	b = putU(b, uint64(len(v)))
	return append(b, v...)
}

// putFrames writes a frame list as deltas from ref.
func putFrames(b []byte, fs []uint64, ref uint64) []byte {
	b = putU(b, uint64(len(fs)))
	for _, f := range fs {
		b = putI(b, int64(f-ref))
		ref = f
	}
	return b
}

func (c *codec) putFindings(b []byte, fs []dissect.Finding, ref uint64) []byte {
	b = putU(b, uint64(len(fs)))
	for i := range fs {
		b = c.putFinding(b, &fs[i], ref)
	}
	return b
}

func (c *codec) putFinding(b []byte, f *dissect.Finding, ref uint64) []byte {
	b = append(b, byte(f.Severity))
	b = putU(b, uint64(c.str(f.Code)))
	b = putBytes(b, []byte(f.Msg))
	b = putFrames(b, f.Frames, ref)
	return putU(b, uint64(c.str(f.Ref)))
}

// encode appends the encoding of r to b.
func (c *codec) encode(b []byte, r *flows.Record) []byte {
	ts := r.TS.UnixNano()
	if r.TS.IsZero() {
		ts = 0
	}
	if !c.hasBase && ts != 0 {
		c.base, c.hasBase = ts, true
	}
	b = append(b, byte(r.Type), byte(r.Dir))
	b = putU(b, r.Frame)
	if r.TS.IsZero() {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = putI(b, ts-c.base)
	}
	b = putI(b, int64(r.Conn))
	st, ok := r.TCPStream()
	if !ok {
		st = -1
	}
	b = putI(b, int64(st))
	b = putU(b, uint64(c.ep(r.Src)))
	b = putU(b, uint64(c.ep(r.Dst)))
	switch r.Type {
	case flows.RecMPA:
		b = c.putMPA(b, r)
	case flows.RecFPDU:
		b = c.putFPDU(b, r)
	case flows.RecMessage:
		m := r.Message
		b = append(b, byte(m.Opcode))
		b = putU(b, uint64(m.Segments))
		b = putU(b, m.Length)
		b = putI(b, int64(m.FirstFrame-r.Frame))
		b = putI(b, int64(m.LastFrame-r.Frame))
		b = putBool(b, m.Tagged)
		b = putU(b, uint64(m.STag))
		b = putU(b, m.TO)
		b = putU(b, uint64(m.QN))
		b = putU(b, uint64(m.MSN))
		b = putU(b, m.RequestFrame)
		b = putI(b, int64(m.Latency))
		b = putBool(b, m.RTR)
		b = putBool(b, m.SCTP)
	case flows.RecFinding:
		if r.Finding == nil {
			b = append(b, 0)
		} else {
			b = append(b, 1)
			b = c.putFinding(b, r.Finding, r.Frame)
		}
	case flows.RecConn:
		c.sums = append(c.sums, r.Summary)
		b = putU(b, uint64(len(c.sums)-1))
	default:
		// A record type added to flows after this encoding: kept whole.
		c.others = append(c.others, r)
		b = putU(b, uint64(len(c.others)-1))
	}
	return b
}

func (c *codec) putMPA(b []byte, r *flows.Record) []byte {
	m := r.MPA
	f := m.Frame
	b = putU(b, uint64(m.Seq))
	var fl byte
	for i, v := range [...]bool{f.M, f.C, f.R, f.S} {
		if v {
			fl |= 1 << i
		}
	}
	b = append(b, byte(f.Kind), fl, f.Res, f.Rev)
	b = putU(b, uint64(f.PDLen))
	b = putBytes(b, f.PD)
	b = putBool(b, m.HasEnhanced)
	e := m.Enhanced
	var ef byte
	for i, v := range [...]bool{e.A, e.B, e.C, e.D} {
		if v {
			ef |= 1 << i
		}
	}
	b = putU(b, uint64(e.IRD))
	b = putU(b, uint64(e.ORD))
	b = append(b, ef)
	b = putBool(b, m.P2P)
	b = append(b, byte(m.RTR))
	b = putFrames(b, m.Frames, r.Frame)
	return c.putFindings(b, m.Findings, r.Frame)
}

func (c *codec) putFPDU(b []byte, r *flows.Record) []byte {
	f := r.FPDU
	b = putU(b, uint64(f.Seq))
	b = putU(b, f.Off)
	b = putU(b, uint64(f.Len))
	b = putFrames(b, f.Frames, r.Frame)
	b = putU(b, uint64(f.ULPDULen))
	b = putU(b, uint64(f.Pad))
	b = putU(b, uint64(len(f.Markers)))
	for _, m := range f.Markers {
		b = putU(b, uint64(m.Seq-f.Seq))
		b = putU(b, uint64(m.FPDUPtr))
		b = putU(b, uint64(m.Rsvd))
		b = putBool(b, m.OK)
	}
	b = binary.LittleEndian.AppendUint32(b, f.CRC)
	b = append(b, byte(f.CRCStatus))
	b = putBool(b, f.CRCCut)
	b = putBool(b, f.SegOK)
	code := byte(0)
	if f.SegErr != nil {
		code = errOther
		for i, e := range errs {
			if f.SegErr == e {
				code = byte(i + 1)
			}
		}
	}
	b = append(b, code)
	if code == errOther {
		b = putBytes(b, []byte(f.SegErr.Error()))
	}
	if f.SegOK {
		s := f.Seg
		s.Payload = nil
		n := len(b)
		b = append(b, 0) // length placeholder: headers are at most 70 octets
		b = rdmap.AppendSegment(b, s)
		b[n] = byte(len(b) - n - 1)
		// What the wire form cannot say: how much of a header the
		// capture cut (a cut Terminate's wire form would read back with
		// zeroed terminated headers, as if they had been captured).
		b = putU(b, uint64(s.HdrCut))
		b = putBool(b, s.Term.Cut)
		if s.Term.Cut {
			b = putBool(b, s.Term.HasDDP)
			b = putBool(b, s.Term.HasRDMA)
			b = putU(b, uint64(s.HdrLen))
		}
	}
	b = putU(b, uint64(f.PayloadLen))
	b = putU(b, f.TermFrame)
	return c.putFindings(b, f.Findings, r.Frame)
}

// reader is a sticky-error decoder over one encoded record.
type reader struct {
	b   []byte
	off int
	bad bool
}

func (r *reader) byte() byte {
	if r.off >= len(r.b) {
		r.bad = true
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *reader) bool() bool { return r.byte() != 0 }

func (r *reader) u() uint64 {
	if r.off > len(r.b) {
		r.bad = true
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.off += n
	return v
}

func (r *reader) i() int64 {
	if r.off > len(r.b) {
		r.bad = true
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.off += n
	return v
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || r.off+n > len(r.b) {
		r.bad = true
		return nil
	}
	v := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return v
}

func (r *reader) blob() []byte {
	n := r.u()
	if n > uint64(len(r.b)) {
		r.bad = true
		return nil
	}
	return r.bytes(int(n))
}

func (r *reader) frames(ref uint64) []uint64 {
	n := r.u()
	if n > uint64(len(r.b)) {
		r.bad = true
		return nil
	}
	out := make([]uint64, n)
	for i := range out {
		ref += uint64(r.i())
		out[i] = ref
	}
	return out
}

func (c *codec) strAt(id uint64) string {
	if id < uint64(len(c.strs)) {
		return c.strs[id]
	}
	return ""
}

func (c *codec) finding(r *reader, ref uint64) dissect.Finding {
	var f dissect.Finding
	f.Severity = dissect.Severity(r.byte())
	f.Code = c.strAt(r.u())
	f.Msg = string(r.blob())
	f.Frames = r.frames(ref)
	f.Ref = c.strAt(r.u())
	return f
}

func (c *codec) findings(r *reader, ref uint64) []dissect.Finding {
	n := r.u()
	if n == 0 || n > uint64(len(r.b)) {
		return nil
	}
	out := make([]dissect.Finding, n)
	for i := range out {
		out[i] = c.finding(r, ref)
	}
	return out
}

// decode rebuilds a record from its encoding. It reports false when the
// encoding is damaged (it never is unless the arena is corrupted).
func (c *codec) decode(b []byte) (*flows.Record, bool) {
	rd := &reader{b: b}
	rec := &flows.Record{Type: flows.RecordType(rd.byte()), Dir: flows.Dir(rd.byte())}
	rec.Frame = rd.u()
	if rd.bool() {
		rec.TS = time.Unix(0, c.base+rd.i()).UTC()
	}
	rec.Conn = int(rd.i())
	rec.SetTCPStream(int(rd.i()))
	if id := rd.u(); id < uint64(len(c.eps)) {
		rec.Src = c.eps[id]
	}
	if id := rd.u(); id < uint64(len(c.eps)) {
		rec.Dst = c.eps[id]
	}
	switch rec.Type {
	case flows.RecMPA:
		rec.MPA = c.getMPA(rd, rec.Frame)
	case flows.RecFPDU:
		rec.FPDU = c.getFPDU(rd, rec.Frame)
	case flows.RecMessage:
		m := &flows.MessageRecord{Opcode: rdmap.Opcode(rd.byte())}
		m.Segments = int(rd.u())
		m.Length = rd.u()
		m.FirstFrame = rec.Frame + uint64(rd.i())
		m.LastFrame = rec.Frame + uint64(rd.i())
		m.Tagged = rd.bool()
		m.STag = uint32(rd.u())
		m.TO = rd.u()
		m.QN = uint32(rd.u())
		m.MSN = uint32(rd.u())
		m.RequestFrame = rd.u()
		m.Latency = time.Duration(rd.i())
		m.RTR = rd.bool()
		m.SCTP = rd.bool()
		rec.Message = m
	case flows.RecFinding:
		f := dissect.Finding{}
		if rd.bool() {
			f = c.finding(rd, rec.Frame)
		}
		rec.Finding = &f
	case flows.RecConn:
		if i := rd.u(); i < uint64(len(c.sums)) {
			rec.Summary = c.sums[i]
		} else {
			rd.bad = true
		}
	default:
		if i := rd.u(); i < uint64(len(c.others)) {
			return c.others[i], !rd.bad
		}
		rd.bad = true
	}
	if rd.bad && rec.Type == flows.RecConn && rec.Summary == nil {
		rec.Summary = &flows.ConnSummary{}
	}
	return rec, !rd.bad
}

func (c *codec) getMPA(rd *reader, ref uint64) *flows.MPARecord {
	m := &flows.MPARecord{Seq: uint32(rd.u())}
	f := &m.Frame
	f.Kind = mpa.Kind(rd.byte())
	fl := rd.byte()
	f.M, f.C, f.R, f.S = fl&1 != 0, fl&2 != 0, fl&4 != 0, fl&8 != 0
	f.Res = rd.byte()
	f.Rev = rd.byte()
	f.PDLen = uint16(rd.u())
	if pd := rd.blob(); pd != nil {
		f.PD = append([]byte{}, pd...)
	}
	m.HasEnhanced = rd.bool()
	e := &m.Enhanced
	e.IRD = uint16(rd.u())
	e.ORD = uint16(rd.u())
	ef := rd.byte()
	e.A, e.B, e.C, e.D = ef&1 != 0, ef&2 != 0, ef&4 != 0, ef&8 != 0
	m.P2P = rd.bool()
	m.RTR = mpa.RTRSet(rd.byte())
	m.Frames = rd.frames(ref)
	m.Findings = c.findings(rd, ref)
	return m
}

func (c *codec) getFPDU(rd *reader, ref uint64) *flows.FPDURecord {
	f := &flows.FPDURecord{Seq: uint32(rd.u())}
	f.Off = rd.u()
	f.Len = int(rd.u())
	f.Frames = rd.frames(ref)
	f.ULPDULen = uint16(rd.u())
	f.Pad = int(rd.u())
	if n := rd.u(); n > 0 && n <= uint64(len(rd.b)) {
		f.Markers = make([]flows.Marker, n)
		for i := range f.Markers {
			m := &f.Markers[i]
			m.Seq = f.Seq + uint32(rd.u())
			m.FPDUPtr = uint16(rd.u())
			m.Rsvd = uint16(rd.u())
			m.OK = rd.bool()
		}
	}
	if crc := rd.bytes(4); crc != nil {
		f.CRC = binary.LittleEndian.Uint32(crc)
	}
	f.CRCStatus = flows.CRCStatus(rd.byte())
	f.CRCCut = rd.bool()
	f.SegOK = rd.bool()
	switch code := rd.byte(); {
	case code == errOther:
		f.SegErr = errors.New(string(rd.blob()))
	case code > 0 && int(code) <= len(errs):
		f.SegErr = errs[code-1]
	}
	if f.SegOK {
		n := int(rd.byte())
		seg, err := rdmap.Decode(rd.bytes(n))
		if err != nil && err != dissect.ErrUnknownOpcode {
			rd.bad = true
		}
		seg.Payload = nil
		seg.HdrCut = int(rd.u())
		if rd.bool() {
			t := &seg.Term
			t.Cut, t.HasDDP, t.HasRDMA = true, rd.bool(), rd.bool()
			if !t.HasDDP {
				t.DDP = ddp.Header{}
			}
			if !t.HasRDMA {
				t.RDMA = rdmap.ReadRequest{}
			}
			seg.HdrLen = int(rd.u())
		}
		f.Seg = seg
	}
	f.PayloadLen = int(rd.u())
	f.TermFrame = rd.u()
	f.Findings = c.findings(rd, ref)
	return f
}

package model

import (
	"sort"
	"strconv"
	"strings"

	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
)

//go:generate go tool stringer -type=Class -linecomment -output=class_string.go

// Class says what an octet of a record is, for colouring the hex pane.
type Class uint8

// Octet classes.
const (
	ClassNone    Class = iota // none
	ClassLength               // ulpdu_len
	ClassHeader               // header
	ClassPayload              // payload
	ClassPad                  // pad
	ClassCRC                  // crc
	ClassMarker               // marker
	ClassMPA                  // mpa
)

// Span is a range of octets [Start, End) of a record as it was on the wire
// (markers included), counted from the record's first octet.
type Span struct{ Start, End int }

// Layout maps the fields of a record to its octets on the wire. Seq is the
// TCP sequence number of octet 0 and Len the record's length.
type Layout struct {
	Seq     uint32
	Len     int
	classes []Class
	fields  map[string][]Span
	wire    []int // FPDU: plain offset -> wire offset
}

// Class returns the class of octet w.
func (l *Layout) Class(w int) Class {
	if w < 0 || w >= len(l.classes) {
		return ClassNone
	}
	return l.classes[w]
}

// Spans returns the octets of the field at path, a registry name with list
// indexes ("rdmap.read.sink_stag", "mpa.markers[1].fpduptr"). A path the
// layout does not know (a value derived from others, such as
// "mpa.markers[0].seq", or a field the layout does not place) falls back
// to its closest known parent; nil when none is known. A field the layout
// knows to have no octets in this record (a pad of 0 octets) has none: it
// does not fall back, see Lookup.
func (l *Layout) Spans(path string) []Span {
	s, _ := l.Lookup(path)
	return s
}

// Lookup is Spans, and reports whether the layout placed path or one of
// its parents at all: known with no spans means the field is empty in
// this record ("0 octets"), unknown that the layout cannot tell.
func (l *Layout) Lookup(path string) ([]Span, bool) {
	for p := path; p != ""; p = parentPath(p) {
		if s, ok := l.fields[p]; ok {
			return s, true
		}
	}
	return nil, false
}

// parentPath drops the last component of a path: "a.b[2].c" -> "a.b[2]" ->
// "a.b" -> "a" -> "".
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

// set records the octets of the field at path. A field set with no
// octets (an empty pad, a field cut off by the end of the record) is still
// recorded, as empty, so that Spans does not mistake it for an unknown
// field and light up its parent's octets.
func (l *Layout) set(path string, s ...Span) {
	out := l.fields[path]
	for _, x := range s {
		x.Start, x.End = max(x.Start, 0), min(x.End, l.Len)
		if x.Start < x.End {
			out = append(out, x)
		}
	}
	l.fields[path] = out
}

// plain maps the marker-free octets [a, b) of an FPDU to wire spans,
// split around the markers between them.
func (l *Layout) plain(a, b int) []Span {
	a, b = max(a, 0), min(b, len(l.wire))
	var out []Span
	for p := a; p < b; {
		w := l.wire[p]
		q := p + 1
		for q < b && l.wire[q] == w+(q-p) {
			q++
		}
		out = append(out, Span{w, w + (q - p)})
		p = q
	}
	return out
}

func (l *Layout) setPlain(path string, a, b int) { l.set(path, l.plain(a, b)...) }

func (l *Layout) classify(a, b int, c Class) {
	for _, s := range l.plain(a, b) {
		for w := s.Start; w < s.End && w < len(l.classes); w++ {
			l.classes[w] = c
		}
	}
}

// NewLayout returns the layout of an MPA Request/Reply or an FPDU record,
// or nil for other records (they have no octets of their own).
func NewLayout(r *flows.Record) *Layout {
	switch {
	case r.Type == flows.RecMPA && r.MPA != nil:
		return mpaLayout(r.MPA)
	case r.Type == flows.RecFPDU && r.FPDU != nil:
		return fpduLayout(r.FPDU)
	}
	return nil
}

// mpaLayout lays out an MPA Request/Reply frame (RFC 5044 §7.1): the
// 16-octet key, the flags octet (M, C, R, S and Res), Rev, PD_Length and
// the private data, whose first four octets are the Enhanced RDMA
// Connection Establishment data when S is set (RFC 6581 §9: IRD with the
// A and B flags, ORD with C and D).
func mpaLayout(m *flows.MPARecord) *Layout {
	n := mpa.HeaderLen + len(m.Frame.PD)
	l := &Layout{Seq: m.Seq, Len: n, classes: make([]Class, n), fields: make(map[string][]Span)}
	for i := range l.classes {
		l.classes[i] = ClassMPA
	}
	for i := mpa.HeaderLen; i < n; i++ {
		l.classes[i] = ClassPayload
	}
	l.set("", Span{0, n})
	l.set("kind", Span{0, mpa.KeyLen})
	for _, k := range [...]string{"m", "c", "r", "s", "res"} {
		l.set(k, Span{16, 17})
	}
	l.set("rev", Span{17, 18})
	l.set("pd_len", Span{18, 20})
	l.set("pd", Span{mpa.HeaderLen, n})
	if m.HasEnhanced {
		l.set("enhanced", Span{20, 24})
		for _, k := range [...]string{"ird", "a", "b", "p2p"} {
			l.set("enhanced."+k, Span{20, 22})
		}
		for _, k := range [...]string{"ord", "c", "d", "rtr"} {
			l.set("enhanced."+k, Span{22, 24})
		}
	}
	return l
}

// fpduLayout lays out an FPDU (RFC 5044 §4.1): ULPDU_Length, the DDP
// header (RFC 5041 §4.2-§4.4), the RDMAP header its opcode calls for (RFC
// 5040 §4.4 Read Request, §4.8 Terminate, RFC 7306), the payload, the pad
// and the CRC, with the markers (RFC 5044 §5.1) that fall among them.
func fpduLayout(f *flows.FPDURecord) *Layout {
	plainLen := mpa.LenFieldLen + int(f.ULPDULen) + f.Pad + mpa.CRCLen
	l := &Layout{Seq: f.Seq, Len: max(f.Len, plainLen), fields: make(map[string][]Span)}
	var mk []int
	for _, m := range f.Markers {
		if w := int(int32(m.Seq - f.Seq)); w >= 0 && w < l.Len {
			mk = append(mk, w)
		}
	}
	sort.Ints(mk)
	l.wire = make([]int, plainLen)
	w, j := 0, 0
	for p := range l.wire {
		for j < len(mk) && mk[j] <= w {
			w = max(w, mk[j]+4)
			j++
		}
		l.wire[p] = w
		w++
	}
	if w > l.Len {
		l.Len = w
	}
	l.classes = make([]Class, l.Len)
	l.set("", Span{0, l.Len})
	for _, k := range [...]string{"seq", "len", "frames"} {
		l.set(k, Span{0, l.Len})
	}

	ulpEnd := 2 + int(f.ULPDULen)
	padEnd := ulpEnd + f.Pad
	l.classify(0, 2, ClassLength)
	l.classify(2, ulpEnd, ClassPayload)
	l.classify(ulpEnd, padEnd, ClassPad)
	l.classify(padEnd, plainLen, ClassCRC)
	l.setPlain("mpa.ulpdu_len", 0, 2)
	l.setPlain("mpa.pad", ulpEnd, padEnd)
	l.setPlain("mpa.crc", padEnd, plainLen)
	l.setPlain("mpa.crc_status", padEnd, plainLen)
	l.setPlain("mpa", 0, 2)
	l.setPlain("mpa", ulpEnd, plainLen)
	for i, m := range f.Markers {
		w := int(int32(m.Seq - f.Seq))
		if w < 0 || w >= l.Len {
			continue
		}
		for x := w; x < w+4 && x < l.Len; x++ {
			l.classes[x] = ClassMarker
		}
		p := "mpa.markers[" + strconv.Itoa(i) + "]"
		l.set("mpa.markers", Span{w, w + 4})
		l.set("mpa", Span{w, w + 4})
		l.set(p, Span{w, w + 4})
		l.set(p+".fpduptr", Span{w + 2, w + 4}) // RFC 5044 §5.1: Reserved, then FPDUPTR
		l.set(p+".res", Span{w, w + 2})
	}
	if !f.SegOK {
		return l
	}
	s := &f.Seg
	hdrEnd := min(2+s.HdrLen, ulpEnd)
	l.classify(2, hdrEnd, ClassHeader)
	l.setPlain("payload_len", hdrEnd, ulpEnd)
	h := ddpFields(l, "ddp.", 2, s.DDP)
	l.setPlain("ddp", 2, h)
	l.setPlain("rdmap", 3, 4)
	l.setPlain("rdmap", h, hdrEnd)
	for _, k := range [...]string{"rv", "rsvd", "opcode", "name"} {
		l.setPlain("rdmap."+k, 3, 4)
	}
	if !s.DDP.T {
		l.setPlain("rdmap.inval_stag", 4, 8)
	}
	switch s.Opcode {
	case rdmap.OpReadRequest:
		readFields(l, "rdmap.read", h)
	case rdmap.OpTerminate:
		termFields(l, h, &s.Term)
	case rdmap.OpImmediate, rdmap.OpImmediateSE:
		l.setPlain("rdmap.immediate", h, h+rdmap.ImmediateDataLen)
	case rdmap.OpAtomicRequest, rdmap.OpAtomicResponse:
		l.setPlain("rdmap.atomic", h, hdrEnd)
	}
	return l
}

// ddpFields sets the fields of a DDP header at plain offset o (RFC 5041
// §4.2 control octet, §4.3 tagged STag and TO, §4.4 untagged QN, MSN, MO)
// and returns the offset after it.
func ddpFields(l *Layout, p string, o int, h ddp.Header) int {
	for _, k := range [...]string{"t", "l", "rsvd", "dv"} {
		l.setPlain(p+k, o, o+1)
	}
	if h.T {
		l.setPlain(p+"stag", o+2, o+6)
		l.setPlain(p+"to", o+6, o+14)
		return o + ddp.TaggedHeaderLen
	}
	l.setPlain(p+"qn", o+6, o+10)
	l.setPlain(p+"msn", o+10, o+14)
	l.setPlain(p+"mo", o+14, o+18)
	return o + ddp.UntaggedHeaderLen
}

// readFields sets the RDMA Read Request header at plain offset o (RFC
// 5040 §4.4): Data Sink STag, Data Sink TO, RDMA Read Message Size, Data
// Source STag, Data Source TO.
func readFields(l *Layout, p string, o int) {
	l.setPlain(p, o, o+rdmap.ReadRequestLen)
	l.setPlain(p+".sink_stag", o, o+4)
	l.setPlain(p+".sink_to", o+4, o+12)
	l.setPlain(p+".size", o+12, o+16)
	l.setPlain(p+".src_stag", o+16, o+20)
	l.setPlain(p+".src_to", o+20, o+28)
}

// termFields sets the Terminate header at plain offset o (RFC 5040 §4.8
// Figure 7): the control word (Layer, EType, Code, M, D, R), the DDP
// Segment Length when M or D, the Terminated DDP Header when D and the
// Terminated RDMA Header when R.
func termFields(l *Layout, o int, t *rdmap.Terminate) {
	p := "rdmap.term"
	l.setPlain(p, o, o+t.Len())
	for _, k := range [...]string{"layer", "etype", "code", "m", "d", "r", "text", "siw_layout"} {
		l.setPlain(p+"."+k, o, o+4)
	}
	n := o + 4
	if t.M || t.D {
		l.setPlain(p+".ddp_seg_len", n, n+2)
		n += 2
	}
	if t.D {
		end := ddpFields(l, p+".ddp.", n, t.DDP)
		l.setPlain(p+".ddp", n, end)
		for _, k := range [...]string{"rv", "opcode", "name"} {
			l.setPlain(p+".rdmap."+k, n+1, n+2)
		}
		l.setPlain(p+".rdmap", n+1, n+2)
		n = end
	}
	if t.R {
		l.setPlain(p+".rdmap", n, n+rdmap.ReadRequestLen)
		readFields(l, p+".rdmap.read", n)
	}
}

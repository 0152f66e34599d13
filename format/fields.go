package format

import (
	"net/netip"
	"strings"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
)

// SchemaVersion is the JSON Lines schema version (JSONL.md).
const SchemaVersion = 1

// tsLayout is the layout of Timestamp: RFC 3339 with nine fractional
// digits.
const tsLayout = "2006-01-02T15:04:05.000000000Z07:00"

// Timestamp formats a record time as RFC 3339 with nanoseconds, UTC.
func Timestamp(t time.Time) string {
	var b [30]byte
	return string(appendTimestamp(b[:0], t))
}

// appendTimestamp appends Timestamp(t), written digit by digit: Format
// parses its layout on every call, and formatting the timestamp was a
// sixth of listing an FPDU record's fields. Years outside 0-9999 go
// through Format (TestTimestamp, FuzzTimestamp compare the two).
func appendTimestamp(dst []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(dst, tsLayout)
	}
	h, mi, s := t.Clock()
	var b [30]byte
	two := func(i, v int) { b[i], b[i+1] = digitPairs[2*v], digitPairs[2*v+1] }
	two(0, y/100)
	two(2, y%100)
	b[4] = '-'
	two(5, int(mo))
	b[7] = '-'
	two(8, d)
	b[10] = 'T'
	two(11, h)
	b[13] = ':'
	two(14, mi)
	b[16] = ':'
	two(17, s)
	b[19] = '.'
	ns := t.Nanosecond()
	for i := 28; i >= 20; i-- {
		b[i] = byte('0' + ns%10)
		ns /= 10
	}
	b[29] = 'Z'
	return append(dst, b[:]...)
}

func addr(r *flows.Record, omit Omit) (string, string) {
	var s, d string
	if omit&OmitAddrs != 0 {
		return s, d
	}
	if r.Src.IsValid() {
		s = r.Src.String()
	}
	if r.Dst.IsValid() {
		d = r.Dst.String()
	}
	return s, d
}

// A Lister lists the fields of records as AppendFieldsOmit does, for a
// reader that is done with one record's fields before it lists the next
// (a display filter, the text tree of -v): it lends their lists (an fpdu
// record's frames, markers and Read Request, whose lists had been an
// allocation or more per record) room it reuses, and remembers the text
// of the last endpoints. Reset frees the room. A Lister is not safe for
// concurrent use.
type Lister struct {
	a fieldArena
}

// AppendFields is AppendFieldsOmit(out, r, omit). What it lists may be
// read until Reset.
func (l *Lister) AppendFields(out []KV, r *flows.Record, omit Omit) []KV {
	return appendFields(out, r, omit, &l.a)
}

// Reset frees the room lent since the last Reset: nothing listed before
// may be read after.
func (l *Lister) Reset() { l.a.reset() }

// fieldArena lends room to the lists of a record's fields and remembers
// the text of the last endpoints, for a reader that is done with the
// fields before it lists the next record's (iwarpdump -v, whose every
// line had allocated its frames, its markers and its endpoints' text).
// A nil *fieldArena allocates.
type fieldArena struct {
	vals  []Value
	kvs   []KV
	addrs [2]struct {
		a netip.AddrPort
		s string
	}
	next int // the entry of addrs the next new endpoint replaces
}

// reset makes the room lent before free again: nothing listed from it
// may be read after.
func (a *fieldArena) reset() {
	clear(a.vals)
	clear(a.kvs)
	a.vals, a.kvs = a.vals[:0], a.kvs[:0]
}

// values returns n Values.
func (a *fieldArena) values(n int) []Value {
	if a == nil {
		return make([]Value, n)
	}
	return lend(&a.vals, n)
}

// kvList returns n KVs.
func (a *fieldArena) kvList(n int) []KV {
	if a == nil {
		return make([]KV, n)
	}
	return lend(&a.kvs, n)
}

// lend returns n zero elements added to the end of *room. Once *room
// grows, what it lent before stays where it was.
func lend[T any](room *[]T, n int) []T {
	i := len(*room)
	if cap(*room)-i < n {
		// Not append(*room, make([]T, n)...): instrumented for the race
		// detector, that allocates every time.
		grown := make([]T, i, max(2*cap(*room), i+n, 16))
		copy(grown, *room)
		*room = grown
	}
	*room = (*room)[:i+n]
	lent := (*room)[i : i+n : i+n]
	clear(lent)
	return lent
}

// addr returns p's text, "" for the zero AddrPort, as addr does.
func (a *fieldArena) addr(p netip.AddrPort) string {
	if !p.IsValid() {
		return ""
	}
	if a == nil {
		return p.String()
	}
	for i := range a.addrs {
		if a.addrs[i].a == p && a.addrs[i].s != "" {
			return a.addrs[i].s
		}
	}
	e := &a.addrs[a.next]
	a.next = (a.next + 1) % len(a.addrs)
	e.a, e.s = p, p.String()
	return e.s
}

// Fields returns a record's values in schema order, named as in the field
// registry and JSONL.md.
func Fields(r *flows.Record) []KV {
	return AppendFields(make([]KV, 0, 32), r)
}

// AppendFields is Fields appending to dst, so that a caller rendering many
// records reuses one slice.
func AppendFields(out []KV, r *flows.Record) []KV { return AppendFieldsOmit(out, r, 0) }

// Omit names fields of a record that AppendFieldsOmit need not list, for a
// reader that does not look at them (a display filter that names other
// fields): listing every field of every FPDU made a filtered decode twice
// as slow as an unfiltered one, and formatting the timestamp and the
// endpoints as text was most of that.
type Omit uint16

// The fields Omit can name. The groups other than OmitTS and OmitAddrs are
// of fpdu records only.
const (
	OmitTS       Omit = 1 << iota // "ts"
	OmitAddrs                     // "src", "dst" and "dir" ("dir" of fpdu records only)
	OmitTCP                       // "seq", "len", "frames"
	OmitMPA                       // "mpa.*"
	OmitDDP                       // "ddp.*"
	OmitRDMAP                     // "rdmap.*", "payload_len"
	OmitFindings                  // "findings"
	// The objects "rdmap.read" and "rdmap.term" (of the rdmap.* OmitRDMAP
	// names): a filter on the opcode had listed every Read Request's,
	// an allocation each, a tenth of -Y rdmap.opcode==4 on the issue 6
	// workload.
	OmitRDMAPObjects

	OmitAll = OmitTS | OmitAddrs | OmitTCP | OmitMPA | OmitDDP | OmitRDMAP | OmitFindings | OmitRDMAPObjects
)

// Reads returns the groups of Omit that a reader of the top-level key key
// (or of a member of it: "rdmap.term.code") needs: none for the keys every
// record lists first ("v", "type", "frame", "conn"), every group for a key
// it does not know.
func Reads(key string) Omit {
	switch key {
	case "v", "type", "frame", "conn":
		return 0
	case "ts":
		return OmitTS
	case "src", "dst", "dir":
		return OmitAddrs
	case "seq", "len", "frames":
		return OmitTCP
	case "payload_len":
		return OmitRDMAP
	case "findings":
		return OmitFindings
	}
	switch {
	case strings.HasPrefix(key, "mpa."):
		return OmitMPA
	case strings.HasPrefix(key, "ddp."):
		return OmitDDP
	case key == "rdmap.read" || key == "rdmap.term" || key == "rdmap.atomic" ||
		strings.HasPrefix(key, "rdmap.read.") || strings.HasPrefix(key, "rdmap.term.") || strings.HasPrefix(key, "rdmap.atomic."):
		return OmitRDMAP | OmitRDMAPObjects
	case strings.HasPrefix(key, "rdmap."):
		return OmitRDMAP
	}
	return OmitAll
}

// AppendFieldsOmit is AppendFields without the fields omit names: they
// are left out, or listed as empty strings (ts, and the endpoints of mpa
// and message records). Its list is for a reader that ignores them (a
// display filter), not for output: every other field is listed as
// AppendFields lists it, in the same order (TestAppendFieldsOmit).
func AppendFieldsOmit(out []KV, r *flows.Record, omit Omit) []KV {
	return appendFields(out, r, omit, nil)
}

// appendFields is AppendFieldsOmit with the lists of an fpdu record's
// fields (its frames and markers) and its endpoints' text taken from a
// when it is not nil.
func appendFields(out []KV, r *flows.Record, omit Omit, a *fieldArena) []KV {
	ts := ""
	if omit&OmitTS == 0 {
		ts = Timestamp(r.TS)
	}
	out = append(out, kvu("v", SchemaVersion), kvs("type", r.Type.String()), kvu("frame", r.Frame),
		kvs("ts", ts), kvu("conn", uint64(r.Conn)))
	switch r.Type {
	case flows.RecMPA:
		out = mpaFields(out, r, omit)
	case flows.RecFPDU:
		out = fpduFields(out, r, omit, a)
	case flows.RecMessage:
		out = messageFields(out, r, omit, a)
	case flows.RecFinding:
		out = findingFields(out, *r.Finding)
	case flows.RecConn:
		out = connFields(out, r)
	default:
		out = extFields(out, r)
	}
	return out
}

func mpaFields(out []KV, r *flows.Record, omit Omit) []KV {
	m := r.MPA
	f := m.Frame
	src, dst := addr(r, omit)
	out = append(out, kvs("kind", f.Kind.String()), kvs("src", src), kvs("dst", dst), kvs("dir", r.Dir.String()),
		kvu("seq", uint64(m.Seq)), kvb("m", f.M), kvb("c", f.C), kvb("r", f.R), kvb("s", f.S),
		kvu("res", uint64(f.Res)), kvu("rev", uint64(f.Rev)), kvu("pd_len", uint64(f.PDLen)), kv("pd", Bytes(f.PD)))
	if m.HasEnhanced {
		e := m.Enhanced
		rtr := make([]Value, 0, 3)
		for _, n := range m.RTR.Names() {
			rtr = append(rtr, Str(n))
		}
		out = append(out, kv("enhanced", Object([]KV{
			kvu("ird", uint64(e.IRD)), kvu("ord", uint64(e.ORD)),
			kvb("a", e.A), kvb("b", e.B), kvb("c", e.C), kvb("d", e.D),
			kvb("p2p", m.P2P), kv("rtr", List(rtr)),
		})))
	}
	frames := make([]Value, len(m.Frames))
	for i, fr := range m.Frames {
		frames[i] = Uint(fr)
	}
	out = append(out, kv("frames", List(frames)))
	if len(m.Findings) > 0 {
		out = append(out, kv("findings", findingList(m.Findings)))
	}
	return out
}

func findingList(fs []dissect.Finding) Value {
	l := make([]Value, len(fs))
	for i, f := range fs {
		l[i] = Object(findingFields(nil, f))
	}
	return List(l)
}

func findingFields(out []KV, f dissect.Finding) []KV {
	frames := make([]Value, len(f.Frames))
	for i, fr := range f.Frames {
		frames[i] = Uint(fr)
	}
	return append(out, kvs("severity", f.Severity.String()), kvs("code", f.Code), kvs("msg", f.Msg),
		kv("frames", List(frames)), kvs("ref", f.Ref))
}

// ddpKeys are the keys of the DDP header fields: at top level, and inside
// a Terminate's terminated header. Constant strings: concatenating a
// prefix was six allocations per FPDU record.
var ddpKeys = [2]struct{ t, l, dv, rsvd, stag, to, qn, msn, mo string }{
	{"ddp.t", "ddp.l", "ddp.dv", "ddp.rsvd", "ddp.stag", "ddp.to", "ddp.qn", "ddp.msn", "ddp.mo"},
	{"t", "l", "dv", "rsvd", "stag", "to", "qn", "msn", "mo"},
}

// ddpFields appends the DDP header fields (RFC 5041 §4) named as at top
// level ("ddp.t", top) or inside a Terminate's terminated header ("t").
func ddpFields(out []KV, top bool, h ddp.Header) []KV {
	k := &ddpKeys[1]
	if top {
		k = &ddpKeys[0]
	}
	out = append(out, kvb(k.t, h.T), kvb(k.l, h.L), kvu(k.dv, uint64(h.DV)))
	if h.Rsvd != 0 {
		out = append(out, kvu(k.rsvd, uint64(h.Rsvd)))
	}
	if h.T {
		return append(out, kvu(k.stag, uint64(h.STag)), kvu(k.to, h.TO))
	}
	return append(out, kvu(k.qn, uint64(h.QN)), kvu(k.msn, uint64(h.MSN)), kvu(k.mo, uint64(h.MO)))
}

func readFields(rr rdmap.ReadRequest) []KV {
	return (*fieldArena)(nil).readFields(rr)
}

// readFields lists a Read Request's fields in room from a.
func (a *fieldArena) readFields(rr rdmap.ReadRequest) []KV {
	o := a.kvList(5)
	o[0], o[1], o[2] = kvu("sink_stag", uint64(rr.SinkSTag)), kvu("sink_to", rr.SinkTO), kvu("size", uint64(rr.Size))
	o[3], o[4] = kvu("src_stag", uint64(rr.SrcSTag)), kvu("src_to", rr.SrcTO)
	return o
}

// readCutFields are the fields of a Read Request header the capture cut
// (rdmap.Segment.HdrCut): those it holds whole, and how many of its 28
// octets it holds (captured).
func (a *fieldArena) readCutFields(s *rdmap.Segment) []KV {
	rr := &s.Read
	_, sinkTO, size, srcSTag, _ := rdmap.ReadRequestKnown(s.HdrCut)
	o := a.kvList(5)[:0]
	o = append(o, kvu("sink_stag", uint64(rr.SinkSTag)))
	if sinkTO {
		o = append(o, kvu("sink_to", rr.SinkTO))
	}
	if size {
		o = append(o, kvu("size", uint64(rr.Size)))
	}
	if srcSTag {
		o = append(o, kvu("src_stag", uint64(rr.SrcSTag)))
	}
	return append(o, kvu("captured", uint64(s.HdrCut)))
}

func fpduFields(out []KV, r *flows.Record, omit Omit, a *fieldArena) []KV {
	f := r.FPDU
	if omit&OmitAddrs == 0 {
		src, dst := a.addr(r.Src), a.addr(r.Dst)
		out = append(out, kvs("src", src), kvs("dst", dst), kvs("dir", r.Dir.String()))
	}
	if omit&OmitTCP == 0 {
		frames := a.values(len(f.Frames))
		for i, fr := range f.Frames {
			frames[i] = Uint(fr)
		}
		out = append(out, kvu("seq", uint64(f.Seq)), kvu("len", uint64(f.Len)), kv("frames", List(frames)))
	}
	if omit&OmitMPA == 0 {
		out = append(out, kvu("mpa.ulpdu_len", uint64(f.ULPDULen)), kvu("mpa.pad", uint64(f.Pad)))
		if len(f.Markers) > 0 {
			ms := a.values(len(f.Markers))
			for i, m := range f.Markers {
				o := a.kvList(3)
				o[0], o[1], o[2] = kvu("seq", uint64(m.Seq)), kvu("fpduptr", uint64(m.FPDUPtr)), kvb("ok", m.OK)
				ms[i] = Object(o)
			}
			out = append(out, kv("mpa.markers", List(ms)))
		}
		out = appendCRCFields(out, f)
	}
	if f.SegOK {
		s := &f.Seg
		if omit&OmitDDP == 0 {
			out = ddpFields(out, true, s.DDP)
		}
		if omit&OmitRDMAP != 0 {
			return fpduFindings(out, f, omit)
		}
		out = append(out, kvu("rdmap.rv", uint64(s.RV)), kvu("rdmap.opcode", uint64(s.Opcode)), kvs("rdmap.name", s.Opcode.String()))
		if s.Rsvd != 0 {
			out = append(out, kvu("rdmap.rsvd", uint64(s.Rsvd)))
		}
		switch s.Opcode {
		case rdmap.OpSendInvalidate, rdmap.OpSendSEInvalidate:
			out = append(out, kvu("rdmap.inval_stag", uint64(s.InvalSTag)))
		case rdmap.OpReadRequest:
			if omit&OmitRDMAPObjects == 0 && s.HdrCut > 0 {
				out = append(out, kv("rdmap.read", Object(a.readCutFields(s))))
			} else if omit&OmitRDMAPObjects == 0 {
				out = append(out, kv("rdmap.read", Object(a.readFields(s.Read))))
			}
		case rdmap.OpTerminate:
			if omit&OmitRDMAPObjects != 0 {
				break
			}
			tf := termFields(s.Term)
			if f.TermFrame != 0 {
				tf = append(tf, kvu("segment_frame", f.TermFrame))
			}
			out = append(out, kv("rdmap.term", Object(tf)))
		case rdmap.OpImmediate, rdmap.OpImmediateSE:
			if s.HdrCut == 0 { // a cut one has no value to give
				out = append(out, kvu("rdmap.immediate", s.Immediate))
			}
		case rdmap.OpAtomicRequest, rdmap.OpAtomicResponse:
			if omit&OmitRDMAPObjects == 0 {
				out = append(out, kv("rdmap.atomic", Object(atomicFields(s))))
			}
		}
		out = append(out, kvu("payload_len", uint64(f.PayloadLen)))
	}
	return fpduFindings(out, f, omit)
}

// atomicFields are the keys of an Atomic Request or Response header (RFC
// 7306 §6): jsonrec.go's atomic writes the same. Of a header the capture
// cut (rdmap.Segment.HdrCut), the fields it holds whole, and how many of
// its octets it holds (captured).
func atomicFields(s *rdmap.Segment) []KV {
	var o []KV
	if s.Opcode == rdmap.OpAtomicResponse {
		r := &s.AtomicResp
		id, orig := rdmap.AtomicResponseKnown(s.HdrCut)
		o = appendKnown(o, id, kvu("orig_req_id", uint64(r.ReqID)))
		o = appendKnown(o, orig, kvu("orig_value", r.OrigValue))
	} else {
		r := &s.AtomicReq
		op, id, stag, to, asd, asm, cd, cm := rdmap.AtomicRequestKnown(s.HdrCut)
		o = appendKnown(o, op, kvu("op", uint64(r.Op)))
		o = appendKnown(o, id, kvu("req_id", uint64(r.ReqID)))
		o = appendKnown(o, stag, kvu("remote_stag", uint64(r.RemoteSTag)))
		o = appendKnown(o, to, kvu("remote_to", r.RemoteTO))
		o = appendKnown(o, asd, kvu("add_swap_data", r.AddSwapData))
		o = appendKnown(o, asm, kvu("add_swap_mask", r.AddSwapMask))
		o = appendKnown(o, cd, kvu("compare_data", r.CompareData))
		o = appendKnown(o, cm, kvu("compare_mask", r.CompareMask))
	}
	if s.HdrCut > 0 {
		o = append(o, kvu("captured", uint64(s.HdrCut)))
	}
	return o
}

// appendKnown appends kv to o if known.
func appendKnown(o []KV, known bool, kv KV) []KV {
	if known {
		o = append(o, kv)
	}
	return o
}

func fpduFindings(out []KV, f *flows.FPDURecord, omit Omit) []KV {
	if len(f.Findings) > 0 && omit&OmitFindings == 0 {
		out = append(out, kv("findings", findingList(f.Findings)))
	}
	return out
}

func termFields(t rdmap.Terminate) []KV {
	o := []KV{kvu("layer", uint64(t.Layer)), kvu("etype", uint64(t.EType)), kvu("code", uint64(t.Code)),
		kvb("m", t.M), kvb("d", t.D), kvb("r", t.R)}
	if t.M || t.D {
		o = append(o, kvu("ddp_seg_len", uint64(t.DDPSegLen)))
	}
	if t.HasDDP {
		o = append(o, kv("ddp", Object(ddpFields(nil, false, t.DDP))))
		// The terminated segment's RDMAP control octet (RFC 5040 §4.8).
		c := rdmap.Control(t.DDP.ULPCtrl)
		o = append(o, kv("rdmap", Object(append([]KV{kvu("rv", uint64(c.RV())), kvu("opcode", uint64(c.Opcode())),
			kvs("name", c.Opcode().String())}, termRead(t)...))))
	} else if t.HasRDMA {
		o = append(o, kv("rdmap", Object(termRead(t))))
	}
	if t.SiwLayout {
		o = append(o, kvb("siw_layout", true))
	}
	return append(o, kvs("text", t.Explain()))
}

func interopValue(iv *flows.Interop) Value {
	if iv == nil {
		return Null()
	}
	var exp Value
	if iv.ExpectClose {
		exp = Str("close")
	} else {
		exp = Object([]KV{kvu("v", uint64(iv.ExpectV)), kvb("markers_i2r", iv.ExpectMarkersI2R), kvb("markers_r2i", iv.ExpectMarkersR2I)})
	}
	var obs Value
	switch {
	case iv.ObservedClose:
		obs = Str("close")
	case iv.ObservedV < 0:
		obs = Null()
	default:
		obs = Object([]KV{kvu("v", uint64(iv.ObservedV)), kvb("markers_i2r", iv.ObservedMarkersI2R), kvb("markers_r2i", iv.ObservedMarkersR2I)})
	}
	return Object([]KV{kvs("initiator", iv.Initiator), kvs("responder", iv.Responder), kvs("row", iv.Row),
		kv("expected", exp), kv("observed", obs), kvb("match", iv.Match)})
}

func termRead(t rdmap.Terminate) []KV {
	if !t.HasRDMA {
		return nil
	}
	return []KV{kv("read", Object(readFields(t.RDMA)))}
}

func messageFields(out []KV, r *flows.Record, omit Omit, a *fieldArena) []KV {
	m := r.Message
	src, dst := "", ""
	if omit&OmitAddrs == 0 {
		src, dst = a.addr(r.Src), a.addr(r.Dst)
	}
	out = append(out, kvs("src", src), kvs("dst", dst), kvs("dir", r.Dir.String()),
		kvu("opcode", uint64(m.Opcode)), kvs("name", m.Opcode.String()), kvu("segments", uint64(m.Segments)),
		kvu("length", m.Length), kvu("first_frame", m.FirstFrame), kvu("last_frame", m.LastFrame))
	if m.Tagged {
		out = append(out, kvu("stag", uint64(m.STag)), kvu("to", m.TO))
	} else {
		out = append(out, kvu("qn", uint64(m.QN)), kvu("msn", uint64(m.MSN)))
	}
	if m.Opcode == rdmap.OpReadResponse && m.RequestFrame != 0 {
		out = append(out, kvu("request_frame", m.RequestFrame), kv("latency_ns", Int(int64(m.Latency))))
	}
	return out
}

func connFields(out []KV, r *flows.Record) []KV {
	s := r.Summary
	ini, res := Null(), Null()
	if s.InitiatorKnown {
		ini, res = Str(s.Initiator.String()), Str(s.Responder.String())
	}
	out = append(out, kv("initiator", ini), kv("responder", res))
	if !s.InitiatorKnown && s.A.IsValid() {
		// markers_i2r is then from the first to the second.
		out = append(out, kv("endpoints", List([]Value{Str(s.A.String()), Str(s.B.String())})))
	}
	out = append(out, kvs("state", s.State))
	rtr := make([]Value, 0, 3)
	for _, n := range s.RTR.Names() {
		rtr = append(rtr, Str(n))
	}
	mpaObj := []KV{kvu("rev", uint64(s.Rev)), kvb("crc", s.CRC), kvb("markers_i2r", s.MarkersI2R), kvb("markers_r2i", s.MarkersR2I),
		kvb("enhanced", s.Enhanced), kvu("ird", uint64(s.IRD)), kvu("ord", uint64(s.ORD)), kvb("p2p", s.P2P),
		kv("rtr", List(rtr)), kvb("rejected", s.Rejected)}
	mv := Object(mpaObj)
	if !s.HaveRequest && !s.HaveReply {
		// No handshake captured: what is known comes from the data.
		mv = Object([]KV{kv("rev", Null()), kvb("crc", s.CRC), kvb("markers_i2r", s.MarkersI2R), kvb("markers_r2i", s.MarkersR2I),
			kvb("enhanced", false), kv("ird", Null()), kv("ord", Null()), kvb("p2p", false), kv("rtr", List(nil)), kvb("rejected", false)})
	}
	dv := Null()
	if s.DDPVersion >= 0 {
		dv = Uint(uint64(s.DDPVersion))
	}
	out = append(out, kv("mpa", mv), kv("ddp_version", dv), kv("interop", interopValue(s.Interop)), kvb("midstream", s.Midstream),
		kvu("fpdus", uint64(s.FPDUs)), kvu("messages", uint64(s.Messages)), kvu("octets", s.Octets),
		kvu("crc_errors", uint64(s.CRCErrors)), kvu("findings", uint64(s.Findings)),
		kvu("retransmissions", uint64(s.TCP.Retransmissions)), kvu("zero_windows", uint64(s.TCP.ZeroWindows)),
		kvu("stalls", uint64(s.TCP.Stalls)), kv("stalled_ns", Int(int64(s.TCP.Stalled))), kvu("cut_segments", uint64(s.TCP.Cut)),
		kvu("first_frame", s.FirstFrame), kvu("last_frame", s.LastFrame))
	return out
}

// appendCRCFields appends an FPDU's mpa.crc, which a CRC field the capture cut
// has not, and its mpa.crc_status. (A helper, so that the lines of the
// function that calls it, to which default.pgo keys its call sites, stay
// where they were.)
func appendCRCFields(out []KV, f *flows.FPDURecord) []KV {
	if f.CRCCut {
		return append(out, kvs("mpa.crc_status", f.CRCStatus.String()))
	}
	return append(out, kvu("mpa.crc", uint64(f.CRC)), kvs("mpa.crc_status", f.CRCStatus.String()))
}

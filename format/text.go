package format

import (
	"net/netip"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
)

// TextOptions select the text output style.
type TextOptions struct {
	Quiet   bool // -q: shorter lines, no attached findings
	Verbose bool // -v: the field tree under each line
	Hex     bool // -X: hex and ASCII of the payload's first octets (flows.PreviewLen)
	// Time is how a line gives its record's time (-t); Ref is the first
	// packet's time (for TimeRelative) and Prev the record time of the
	// previous line written (for TimeDelta, which the caller keeps).
	Time      TimeFormat
	Ref, Prev time.Time
}

// Format is a flows.Format for the workers of a flows.Parallel:
// AppendText of the FPDU and message records, whose lines and trees carry
// no connection id; the others are left to the merge.
func (o TextOptions) Format(dst []byte, r *flows.Record) ([]byte, int, bool) {
	switch r.Type {
	case flows.RecFPDU, flows.RecMessage:
		return AppendText(dst, r, o), -1, true
	}
	return dst, -1, false
}

// AppendText appends the record's text form: one line in tcpdump's manner
// (frame, time as o.Time says: UTC time of day by default, endpoints, what
// it is), then attached findings and,
// when verbose, the field tree, each on indented lines. Every string from the
// capture is escaped so that no control character reaches a terminal.
func AppendText(dst []byte, r *flows.Record, o TextOptions) []byte {
	start := len(dst)
	dst = strconv.AppendUint(dst, r.Frame, 10)
	dst = append(dst, ' ')
	dst = o.AppendTime(dst, r.TS)
	dst = append(dst, ' ')
	switch r.Type {
	case flows.RecMPA, flows.RecFPDU, flows.RecMessage:
		dst = appendEndpoint(dst, r.Src)
		dst = append(dst, " > "...)
		dst = appendEndpoint(dst, r.Dst)
		dst = append(dst, ": "...)
	default:
		dst = append(dst, "conn "...)
		dst = strconv.AppendInt(dst, int64(r.Conn), 10)
		dst = append(dst, ": "...)
	}
	var attached []dissect.Finding
	if r.Type == flows.RecMessage && !ShowMessageInText(r.Message) {
		return dst[:start]
	}
	switch r.Type {
	case flows.RecMPA:
		dst = appendMPALine(dst, r.MPA)
		attached = r.MPA.Findings
	case flows.RecFPDU:
		dst = appendFPDULine(dst, r.FPDU, o.Quiet)
		attached = r.FPDU.Findings
	case flows.RecMessage:
		dst = appendMessageLine(dst, r.Message)
	case flows.RecFinding:
		dst = appendFinding(dst, *r.Finding)
	case flows.RecConn:
		dst = appendConnLine(dst, r.Summary)
	default:
		dst = appendExtLine(dst, r)
		attached = ExtFindings(r)
	}
	dst = append(dst, '\n')
	if !o.Quiet {
		for _, f := range attached {
			if f.Code == rdmap.CodeTerminate && r.Type == flows.RecFPDU {
				// The line explains the Terminate already: the finding's
				// message (for the tables, reports and JSON) is not
				// printed a second time.
				f.Msg = "the sender ended the connection with this Terminate (explained above)"
			}
			dst = append(dst, "    "...)
			if o.Verbose {
				dst = appendFindingFrames(dst, f, r.Frame)
			} else {
				dst = appendFinding(dst, f)
			}
			dst = append(dst, '\n')
		}
	}
	if o.Verbose {
		// The tree leaves out the keys every record starts with, the
		// timestamp among them (OmitTS), and is listed into a pooled
		// slice: a fresh one of some 2 KB for every line, the timestamp's
		// text and a registry lookup for every number made -v four times
		// as slow as the line alone.
		t := trees.Get().(*treeScratch)
		dst = t.appendVerbose(dst, r, !o.Quiet)
		trees.Put(t)
	}
	if o.Hex && r.Type == flows.RecFPDU && len(r.FPDU.Preview) > 0 {
		dst = AppendHexDump(dst, r.FPDU.Preview)
	}
	return dst
}

// AppendHexDump appends octets in tcpdump -X's layout: offset, eight groups
// of two octets in hex, then the octets as ASCII with every non-printable
// octet shown as '.', so that no control character or escape sequence from
// the capture reaches the terminal.
func AppendHexDump(dst []byte, b []byte) []byte {
	for off := 0; off < len(b); off += 16 {
		line := b[off:min(off+16, len(b))]
		dst = append(dst, "\t0x"...)
		dst = append(dst, hexDigits[off>>12&15], hexDigits[off>>8&15], hexDigits[off>>4&15], hexDigits[off&15])
		dst = append(dst, ": "...)
		for i := 0; i < 16; i++ {
			if i%2 == 0 {
				dst = append(dst, ' ')
			}
			if i < len(line) {
				dst = append(dst, hexDigits[line[i]>>4], hexDigits[line[i]&15])
			} else {
				dst = append(dst, ' ', ' ')
			}
		}
		dst = append(dst, "  "...)
		for _, c := range line {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			dst = append(dst, c)
		}
		dst = append(dst, '\n')
	}
	return dst
}

// appendClock appends t's time of day in its own location,
// 15:04:05.000000.
func appendClock(dst []byte, t time.Time) []byte {
	dst = append2(dst, t.Hour())
	dst = append(dst, ':')
	dst = append2(dst, t.Minute())
	dst = append(dst, ':')
	dst = append2(dst, t.Second())
	dst = append(dst, '.')
	// The microseconds, six digits, written in place: strconv.Itoa's
	// string was an allocation per line.
	us := t.Nanosecond() / 1000
	var d [6]byte
	for i := 5; i >= 0; i-- {
		d[i] = byte('0' + us%10)
		us /= 10
	}
	return append(dst, d[:]...)
}

func append2(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/10), byte('0'+v%10))
}

// appendHdrCut appends, for a header of hdrLen octets of which the capture
// cut all but the first cut (rdmap.Segment.HdrCut; 0: the whole header),
// how much of it there was.
func appendHdrCut(dst []byte, cut, hdrLen int) []byte {
	if cut <= 0 {
		return dst
	}
	dst = append(dst, " (header cut by the capture: "...)
	dst = strconv.AppendUint(dst, uint64(cut), 10)
	dst = append(dst, " of its "...)
	dst = strconv.AppendUint(dst, uint64(hdrLen), 10)
	return append(dst, " octets)"...)
}

func appendHex(dst []byte, v uint64, width int) []byte {
	dst = append(dst, "0x"...)
	var b [16]byte
	s := strconv.AppendUint(b[:0], v, 16) // FormatUint's string was an allocation
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

func bit(b bool) byte {
	if b {
		return '1'
	}
	return '0'
}

func appendMPALine(dst []byte, m *flows.MPARecord) []byte {
	f := m.Frame
	dst = append(dst, "MPA "...)
	if f.Kind.String() == "request" {
		dst = append(dst, "Request"...)
	} else {
		dst = append(dst, "Reply"...)
	}
	dst = append(dst, " rev "...)
	dst = strconv.AppendUint(dst, uint64(f.Rev), 10)
	dst = append(dst, " M="...)
	dst = append(dst, bit(f.M))
	dst = append(dst, " C="...)
	dst = append(dst, bit(f.C))
	if f.R || f.Kind.String() == "reply" {
		dst = append(dst, " R="...)
		dst = append(dst, bit(f.R))
	}
	dst = append(dst, " S="...)
	dst = append(dst, bit(f.S))
	if f.Res != 0 {
		dst = append(dst, " Res="...)
		dst = appendHex(dst, uint64(f.Res), 1)
	}
	if m.HasEnhanced {
		dst = append(dst, " IRD "...)
		dst = strconv.AppendUint(dst, uint64(m.Enhanced.IRD), 10)
		dst = append(dst, " ORD "...)
		dst = strconv.AppendUint(dst, uint64(m.Enhanced.ORD), 10)
		if m.P2P {
			dst = append(dst, " P2P"...)
		}
		if m.RTR != 0 {
			dst = append(dst, " RTR "...)
			dst = append(dst, m.RTR.String()...)
		}
	}
	dst = append(dst, " pd_len "...)
	dst = strconv.AppendUint(dst, uint64(f.PDLen), 10)
	if len(f.PD) < int(f.PDLen) {
		// The snap length cut the private data (cap.snaplen).
		dst = append(dst, " ("...)
		dst = strconv.AppendUint(dst, uint64(len(f.PD)), 10)
		dst = append(dst, " captured)"...)
	}
	if f.R {
		dst = append(dst, " (rejected)"...)
	}
	return dst
}

func appendFPDULine(dst []byte, f *flows.FPDURecord, quiet bool) []byte {
	if !f.SegOK {
		dst = append(dst, "FPDU len "...)
		dst = strconv.AppendInt(dst, int64(f.ULPDULen), 10)
		if f.SegErr != nil {
			dst = append(dst, " (undecodable: "...)
			dst = appendSafe(dst, f.SegErr.Error())
			dst = append(dst, ')')
		}
		return appendCRC(dst, f.CRCStatus)
	}
	s := &f.Seg
	dst = append(dst, s.Opcode.String()...)
	h := s.DDP
	switch s.Opcode {
	case rdmap.OpReadRequest:
		rr := s.Read
		// A header the capture cut shows the fields it holds.
		sinkSTag, sinkTO, size, srcSTag, srcTO := rdmap.ReadRequestKnown(s.HdrCut)
		if sinkSTag {
			dst = append(dst, " sink STag "...)
			dst = appendHex(dst, uint64(rr.SinkSTag), 8)
		}
		if sinkTO {
			dst = append(dst, " TO "...)
			dst = appendHex(dst, rr.SinkTO, 1)
		}
		if size {
			dst = append(dst, " size "...)
			dst = strconv.AppendUint(dst, uint64(rr.Size), 10)
		}
		if !quiet && srcSTag {
			dst = append(dst, " src STag "...)
			dst = appendHex(dst, uint64(rr.SrcSTag), 8)
		}
		if !quiet && srcTO {
			dst = append(dst, " TO "...)
			dst = appendHex(dst, rr.SrcTO, 1)
		}
		dst = appendHdrCut(dst, s.HdrCut, rdmap.ReadRequestLen)
	case rdmap.OpTerminate:
		dst = append(dst, ' ')
		dst = appendSafe(dst, s.Term.Explain())
	default:
		if h.T {
			dst = append(dst, " STag "...)
			dst = appendHex(dst, uint64(h.STag), 8)
			dst = append(dst, " TO "...)
			dst = appendHex(dst, h.TO, 1)
		} else if !quiet {
			dst = append(dst, " QN "...)
			dst = strconv.AppendUint(dst, uint64(h.QN), 10)
			dst = append(dst, " MSN "...)
			dst = strconv.AppendUint(dst, uint64(h.MSN), 10)
			dst = append(dst, " MO "...)
			dst = strconv.AppendUint(dst, uint64(h.MO), 10)
		}
		if s.Opcode.HasInvalidate() {
			dst = append(dst, " inval STag "...)
			dst = appendHex(dst, uint64(s.InvalSTag), 8)
		}
		switch s.Opcode {
		case rdmap.OpAtomicRequest:
			// A header the capture cut shows the fields it holds.
			r := &s.AtomicReq
			op, id, stag, to, asd, _, cd, _ := rdmap.AtomicRequestKnown(s.HdrCut)
			if op {
				dst = append(dst, ' ')
				dst = append(dst, r.Op.String()...)
			}
			if id {
				dst = append(dst, " req "...)
				dst = strconv.AppendUint(dst, uint64(r.ReqID), 10)
			}
			if stag {
				dst = append(dst, " remote STag "...)
				dst = appendHex(dst, uint64(r.RemoteSTag), 8)
			}
			if to {
				dst = append(dst, " TO "...)
				dst = appendHex(dst, r.RemoteTO, 1)
			}
			if r.Op == rdmap.AtomicCmpSwap && cd {
				dst = append(dst, " compare "...)
				dst = strconv.AppendUint(dst, r.CompareData, 10)
			}
			switch {
			case !asd:
			case r.Op == rdmap.AtomicCmpSwap || r.Op == rdmap.AtomicSwap:
				dst = append(dst, " swap "...)
				dst = strconv.AppendUint(dst, r.AddSwapData, 10)
			default:
				dst = append(dst, " add "...)
				dst = strconv.AppendUint(dst, r.AddSwapData, 10)
			}
			dst = appendHdrCut(dst, s.HdrCut, rdmap.AtomicRequestLen)
		case rdmap.OpAtomicResponse:
			id, orig := rdmap.AtomicResponseKnown(s.HdrCut)
			if id {
				dst = append(dst, " req "...)
				dst = strconv.AppendUint(dst, uint64(s.AtomicResp.ReqID), 10)
			}
			if orig {
				dst = append(dst, " original value "...)
				dst = strconv.AppendUint(dst, s.AtomicResp.OrigValue, 10)
			}
			dst = appendHdrCut(dst, s.HdrCut, rdmap.AtomicResponseLen)
		case rdmap.OpImmediate, rdmap.OpImmediateSE:
			dst = appendHdrCut(dst, s.HdrCut, rdmap.ImmediateDataLen)
		}
		if s.HdrCut == 0 {
			dst = append(dst, " len "...)
			dst = strconv.AppendInt(dst, int64(f.PayloadLen), 10)
		}
	}
	if h.L {
		dst = append(dst, " [last]"...)
	}
	if h.DV != 1 {
		dst = append(dst, " DV "...)
		dst = strconv.AppendUint(dst, uint64(h.DV), 10)
	}
	if len(f.Markers) > 0 && !quiet {
		dst = append(dst, " markers "...)
		dst = strconv.AppendInt(dst, int64(len(f.Markers)), 10)
	}
	return appendCRC(dst, f.CRCStatus)
}

func appendCRC(dst []byte, s flows.CRCStatus) []byte {
	switch s {
	case flows.CRCBad:
		return append(dst, " CRC BAD"...)
	case flows.CRCIncomplete:
		return append(dst, " (incomplete)"...)
	}
	return dst
}

// ShowMessageInText reports whether the text output prints a message record:
// a message of one segment repeats its FPDU line, unless it is an RDMA Read
// Response whose latency the line adds.
func ShowMessageInText(m *flows.MessageRecord) bool {
	return m.Segments > 1 || m.RequestFrame != 0
}

func appendMessageLine(dst []byte, m *flows.MessageRecord) []byte {
	dst = append(dst, "message "...)
	dst = append(dst, m.Opcode.String()...)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, m.Length, 10)
	dst = append(dst, " octets in "...)
	dst = strconv.AppendInt(dst, int64(m.Segments), 10)
	if m.Segments == 1 {
		dst = append(dst, " segment"...)
	} else {
		dst = append(dst, " segments"...)
	}
	dst = append(dst, " frames "...)
	dst = strconv.AppendUint(dst, m.FirstFrame, 10)
	dst = append(dst, '-')
	dst = strconv.AppendUint(dst, m.LastFrame, 10)
	if m.RequestFrame != 0 {
		dst = append(dst, " latency "...)
		dst = append(dst, m.Latency.String()...)
		dst = append(dst, " (request frame "...)
		dst = strconv.AppendUint(dst, m.RequestFrame, 10)
		dst = append(dst, ')')
	}
	return dst
}

func appendFinding(dst []byte, f dissect.Finding) []byte {
	dst = append(dst, f.Severity.String()...)
	dst = append(dst, ' ')
	dst = appendSafe(dst, f.Code)
	dst = append(dst, ": "...)
	dst = appendSafe(dst, f.Msg)
	if f.Ref != "" {
		dst = append(dst, " ["...)
		dst = appendSafe(dst, f.Ref)
		dst = append(dst, ']')
	}
	return dst
}

// appendFindingFrames appends the finding as appendFinding does, with its
// frames before the reference ("... (frames 11, 10) [RFC 5040 §4.8]") when
// they name another frame than the record's own, own: -v prints them there,
// since its tree leaves the findings out.
func appendFindingFrames(dst []byte, f dissect.Finding, own uint64) []byte {
	other := false
	for _, n := range f.Frames {
		other = other || n != own
	}
	if !other {
		return appendFinding(dst, f)
	}
	ref := f.Ref
	f.Ref = ""
	dst = appendFinding(dst, f)
	dst = append(dst, " (frames "...)
	for i, n := range f.Frames {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = strconv.AppendUint(dst, n, 10)
	}
	dst = append(dst, ')')
	if ref != "" {
		dst = append(dst, " ["...)
		dst = appendSafe(dst, ref)
		dst = append(dst, ']')
	}
	return dst
}

func appendConnLine(dst []byte, s *flows.ConnSummary) []byte {
	if s.InitiatorKnown {
		dst = append(dst, s.Initiator.String()...)
		dst = append(dst, " > "...)
		dst = append(dst, s.Responder.String()...)
		dst = append(dst, ' ')
	} else {
		dst = append(dst, s.A.String()...)
		dst = append(dst, " <> "...)
		dst = append(dst, s.B.String()...)
		dst = append(dst, " (initiator unknown) "...)
	}
	dst = append(dst, s.State...)
	if s.HaveRequest || s.HaveReply {
		dst = append(dst, ", MPA rev "...)
		dst = strconv.AppendUint(dst, uint64(s.Rev), 10)
	} else if s.Midstream {
		dst = append(dst, ", mid-stream (no MPA exchange captured)"...)
	}
	// CRC and markers as -z conn shows them: known from the MPA exchange
	// or from the FPDUs, not for a connection that never carried one.
	if s.HaveRequest || s.HaveReply || s.FPDUs > 0 {
		dst = appendCRCMarkers(dst, s)
	}
	if s.Enhanced {
		dst = appendIRDORD(dst, uint64(s.IRD), uint64(s.ORD))
	}
	dst = append(dst, ", "...)
	dst = appendCount(dst, uint64(s.FPDUs), " FPDU")
	dst = append(dst, ", "...)
	dst = appendCount(dst, uint64(s.Messages), " message")
	dst = append(dst, ", "...)
	dst = appendCount(dst, s.Octets, " octet")
	dst = append(dst, ", "...)
	dst = appendCount(dst, uint64(s.CRCErrors), " CRC error")
	dst = append(dst, ", "...)
	dst = appendCount(dst, uint64(s.Findings), " finding")
	// TCP's troubles, when it had any.
	if h := s.TCP; h.Retransmissions > 0 {
		dst = append(dst, ", "...)
		dst = appendCount(dst, uint64(h.Retransmissions), " retransmission")
	}
	if h := s.TCP; h.ZeroWindows > 0 {
		dst = append(dst, ", "...)
		dst = appendCount(dst, uint64(h.ZeroWindows), " zero window")
	}
	if h := s.TCP; h.Stalls > 0 {
		dst = append(dst, ", "...)
		dst = appendCount(dst, uint64(h.Stalls), " stall")
		dst = append(dst, " ("...)
		dst = strconv.AppendFloat(dst, h.Stalled.Seconds(), 'f', 6, 64)
		dst = append(dst, " s)"...)
	}
	if h := s.TCP; h.Cut > 0 {
		dst = append(dst, ", "...)
		dst = appendCount(dst, uint64(h.Cut), " segment")
		dst = append(dst, " cut by the snap length"...)
	}
	return dst
}

// appendCount appends "1 finding", "2 findings": n and the noun, plural
// unless n is 1.
func appendCount(dst []byte, n uint64, noun string) []byte {
	dst = strconv.AppendUint(dst, n, 10)
	dst = append(dst, noun...)
	if n != 1 {
		dst = append(dst, 's')
	}
	return dst
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// appendSafe appends s with every control character, escape sequence
// introducer and invalid UTF-8 octet shown as a \x.. or \u.... escape.
func appendSafe(dst []byte, s string) []byte {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\' {
		i++ // the common case: printable ASCII, appended at once below
	}
	dst = append(dst, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || c == '\\' {
				if c == '\\' {
					dst = append(dst, '\\', '\\')
				} else {
					dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
				}
			} else {
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' || r == '\u202e' || r == '\u200f' {
			for j := 0; j < n; j++ {
				dst = append(dst, '\\', 'x', hexDigits[s[i+j]>>4], hexDigits[s[i+j]&15])
			}
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}

// appendEndpoint appends a.String() without allocating.
func appendEndpoint(dst []byte, a netip.AddrPort) []byte {
	if !a.IsValid() {
		return append(dst, a.String()...)
	}
	return a.AppendTo(dst)
}

// AppendTree appends the field tree: one "name: value" line per field,
// indented by depth, integers the registry marks as hex in hexadecimal.
func AppendTree(dst []byte, kvs []KV, depth int) []byte {
	var t treeScratch
	return t.appendTree(dst, kvs, depth, "")
}

// treeScratch is what AppendText's field tree reuses from line to line:
// the list of fields, and how the numbers of each name print.
type treeScratch struct {
	kvs   []KV
	list  Lister
	names map[nameKey]nameEntry
	// recent is a direct-mapped cache in front of names, picked by the
	// address of the names' text: a hit compares the strings by address.
	recent [64]struct {
		nameKey
		nameEntry
	}
	lines bool // appendVerbose's lines
}

// nameKey is a field name under a prefix ("" at the top).
type nameKey struct{ prefix, name string }

// nameEntry remembers a field's full name and how its numbers print: in
// hex with width digits or in decimal. The keys of records are a few dozen
// constant names: looking each up in the registry and joining nested names
// for every number made -v four times as slow as the line alone.
type nameEntry struct {
	full  string
	width int
	hex   bool
	namer func(uint64, []KV) string // nil: values without names
}

// maxNames bounds what a treeScratch remembers.
const maxNames = 1024

var trees = sync.Pool{New: func() any { return new(treeScratch) }}

// entry returns what t remembers of field name under prefix, looking the
// full name up in the registry (hexWidth) when it is not remembered.
func (t *treeScratch) entry(prefix, name string) nameEntry {
	h := uint64(uintptr(unsafe.Pointer(unsafe.StringData(name))))>>3 ^ uint64(uintptr(unsafe.Pointer(unsafe.StringData(prefix))))>>5 ^ uint64(len(name))
	r := &t.recent[h%uint64(len(t.recent))]
	k := nameKey{prefix, name}
	if r.nameKey == k && name != "" {
		return r.nameEntry
	}
	if e, ok := t.names[k]; ok {
		r.nameKey, r.nameEntry = k, e
		return e
	}
	if t.names == nil || len(t.names) >= maxNames {
		t.names = make(map[nameKey]nameEntry, 64)
	}
	full := join(prefix, name)
	w, hex := hexWidth(full)
	e := nameEntry{full: full, width: w, hex: hex, namer: namer(full)}
	t.names[k] = e
	r.nameKey, r.nameEntry = k, e
	return e
}

// appendVerbose appends the tree of r's fields, as -v shows it under its
// line, and leaves t empty. With lines, the record's findings were printed
// as lines under it, and a Terminate's explanation is its line: the tree
// does not repeat them.
func (t *treeScratch) appendVerbose(dst []byte, r *flows.Record, lines bool) []byte {
	t.kvs = t.list.AppendFields(t.kvs[:0], r, OmitTS)
	t.lines = lines
	dst = t.appendTree(dst, t.kvs, 1, "")
	clear(t.kvs)
	t.kvs = t.kvs[:0]
	t.list.Reset()
	return dst
}

func (t *treeScratch) appendTree(dst []byte, kvs []KV, depth int, prefix string) []byte {
	for _, e := range kvs {
		switch e.Key {
		case "v", "type", "frame", "ts", "conn":
			if depth == 1 {
				continue
			}
		case "findings":
			if depth == 1 && t.lines && e.Val.Kind == KList {
				continue
			}
		case "text":
			if prefix == "rdmap.term" {
				continue // the record's line explains the Terminate
			}
		}
		name := e.Key
		for i := 0; i < depth; i++ {
			dst = append(dst, "    "...)
		}
		dst = appendSafe(dst, name)
		switch e.Val.Kind {
		case KObject:
			dst = append(dst, '\n')
			dst = t.appendTree(dst, e.Val.Obj, depth+1, join(prefix, name))
			continue
		case KList:
			if len(e.Val.List) > 0 && e.Val.List[0].Kind == KObject {
				dst = append(dst, '\n')
				full := join(prefix, name)
				for i, it := range e.Val.List {
					for j := 0; j < depth+1; j++ {
						dst = append(dst, "    "...)
					}
					dst = append(dst, '[')
					dst = strconv.AppendInt(dst, int64(i), 10)
					dst = append(dst, "]\n"...)
					dst = t.appendTree(dst, it.Obj, depth+2, full)
				}
				continue
			}
		}
		dst = append(dst, ": "...)
		dst = t.appendTreeValue(dst, e.Val, prefix, name, kvs)
		dst = append(dst, '\n')
	}
	return dst
}

// join is the full name of field name under prefix.
func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// appendTreeValue appends a value of the tree: numbers as AppendNumber
// gives them, octets in hex, an empty list or octet string as "(none)".
func (t *treeScratch) appendTreeValue(dst []byte, v Value, prefix, name string, siblings []KV) []byte {
	switch v.Kind {
	case KUint:
		e := t.entry(prefix, name)
		if e.hex {
			dst = appendHex(dst, v.U, e.width)
		} else {
			dst = strconv.AppendUint(dst, v.U, 10)
		}
		if e.namer == nil {
			return dst
		}
		if vn := e.namer(v.U, siblings); vn != "" {
			dst = append(dst, " ("...)
			dst = append(dst, vn...)
			dst = append(dst, ')')
		}
		return dst
	case KString:
		return appendSafe(dst, v.S)
	case KNull:
		return append(dst, "(none)"...) // not known: a conn's rev without an MPA exchange
	case KBytes:
		// Octets in hex, as Wireshark's tree shows them ("Private data:
		// 0004...").
		if len(v.Bytes) == 0 {
			return append(dst, "(none)"...)
		}
		for _, o := range v.Bytes {
			dst = append(dst, hexDigits[o>>4], hexDigits[o&15])
		}
		return dst
	case KList:
		if len(v.List) == 0 {
			return append(dst, "(none)"...)
		}
		for i, e := range v.List {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = t.appendTreeValue(dst, e, prefix, name, siblings)
		}
		return dst
	}
	return appendJSONValue(dst, v)
}

// appendIRDORD appends ", IRD n ORD m" (MPA rev 2 Enhanced data, RFC 6581
// §5; or the SCTP enhanced session control, seed 003 §7).
func appendIRDORD(dst []byte, ird, ord uint64) []byte {
	dst = append(dst, ", IRD "...)
	dst = strconv.AppendUint(dst, ird, 10)
	dst = append(dst, " ORD "...)
	return strconv.AppendUint(dst, ord, 10)
}

// appendCRCMarkers appends a conn line's CRC and markers: per direction
// with the initiator known, else between the endpoints as A and B are.
func appendCRCMarkers(dst []byte, s *flows.ConnSummary) []byte {
	dst = append(dst, ", CRC "...)
	dst = append(dst, onOff(s.CRC)...)
	switch {
	case s.InitiatorKnown:
		dst = append(dst, ", markers i2r "...)
		dst = append(dst, onOff(s.MarkersI2R)...)
		dst = append(dst, " r2i "...)
		dst = append(dst, onOff(s.MarkersR2I)...)
	case s.MarkersI2R && s.MarkersR2I:
		dst = append(dst, ", markers both ways"...)
	case s.MarkersI2R:
		dst = append(dst, ", markers only from "...)
		dst = append(dst, s.A.String()...)
	case s.MarkersR2I:
		dst = append(dst, ", markers only from "...)
		dst = append(dst, s.B.String()...)
	default:
		dst = append(dst, ", markers off"...)
	}
	return dst
}

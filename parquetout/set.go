package parquetout

import (
	"github.com/iwarpkit/iwarpkit/format"
)

// values hands out pointers for the optional columns from chunks, so that a
// row costs a few allocations per thousand values rather than one per
// value. A chunk is never grown in place (that would move the values the
// rows point to): a full chunk is replaced by a new one.
type values struct {
	i []int64
	u []uint64
	b []bool
	s []string
}

const chunk = 1024

func (a *values) int(x int64) *int64 {
	if len(a.i) == cap(a.i) {
		a.i = make([]int64, 0, chunk)
	}
	a.i = append(a.i, x)
	return &a.i[len(a.i)-1]
}

func (a *values) uint(x uint64) *uint64 {
	if len(a.u) == cap(a.u) {
		a.u = make([]uint64, 0, chunk)
	}
	a.u = append(a.u, x)
	return &a.u[len(a.u)-1]
}

func (a *values) bool(x bool) *bool {
	if len(a.b) == cap(a.b) {
		a.b = make([]bool, 0, chunk)
	}
	a.b = append(a.b, x)
	return &a.b[len(a.b)-1]
}

func (a *values) str(x string) *string {
	if len(a.s) == cap(a.s) {
		a.s = make([]string, 0, chunk)
	}
	a.s = append(a.s, x)
	return &a.s[len(a.s)-1]
}

// The setters below store one flattened JSON Lines value in a row field.
// Each returns false when the value's kind does not fit the column, which
// the Sink counts as an unknown key.

func (a *values) setInt(dst **int64, v format.Value) bool {
	switch v.Kind {
	case format.KUint:
		*dst = a.int(int64(v.U))
	case format.KInt:
		*dst = a.int(v.I)
	default:
		return false
	}
	return true
}

func (a *values) setUint(dst **uint64, v format.Value) bool {
	if v.Kind != format.KUint {
		return false
	}
	*dst = a.uint(v.U)
	return true
}

func (a *values) setBool(dst **bool, v format.Value) bool {
	if v.Kind != format.KBool {
		return false
	}
	*dst = a.bool(v.B)
	return true
}

const hexDigits = "0123456789abcdef"

func (a *values) setStr(dst **string, v format.Value) bool {
	switch v.Kind {
	case format.KString:
		*dst = a.str(v.S)
	case format.KBytes:
		// Lowercase hex, as the JSON Lines write byte strings.
		b := make([]byte, 2*len(v.Bytes))
		for i, c := range v.Bytes {
			b[2*i], b[2*i+1] = hexDigits[c>>4], hexDigits[c&15]
		}
		*dst = a.str(string(b))
	default:
		return false
	}
	return true
}

func setInt64(dst *int64, v format.Value) bool {
	switch v.Kind {
	case format.KUint:
		*dst = int64(v.U)
	case format.KInt:
		*dst = v.I
	default:
		return false
	}
	return true
}

func setString(dst *string, v format.Value) bool {
	if v.Kind != format.KString {
		return false
	}
	*dst = v.S
	return true
}

func intList(dst *[]int64, v format.Value) bool {
	if v.Kind != format.KList {
		return false
	}
	l := make([]int64, 0, len(v.List))
	for _, e := range v.List {
		var x int64
		if !setInt64(&x, e) {
			return false
		}
		l = append(l, x)
	}
	*dst = l
	return true
}

func strList(dst *[]string, v format.Value) bool {
	if v.Kind != format.KList {
		return false
	}
	l := make([]string, 0, len(v.List))
	for _, e := range v.List {
		if e.Kind != format.KString {
			return false
		}
		l = append(l, e.S)
	}
	*dst = l
	return true
}

func markerList(dst *[]Marker, v format.Value) bool {
	if v.Kind != format.KList {
		return false
	}
	l := make([]Marker, 0, len(v.List))
	for _, e := range v.List {
		if e.Kind != format.KObject {
			return false
		}
		var m Marker
		for _, kv := range e.Obj {
			ok := false
			switch kv.Key {
			case "seq":
				ok = setInt64(&m.Seq, kv.Val)
			case "fpduptr":
				ok = setInt64(&m.FPDUPtr, kv.Val)
			case "ok":
				ok = kv.Val.Kind == format.KBool
				m.OK = kv.Val.B
			}
			if !ok {
				return false
			}
		}
		l = append(l, m)
	}
	*dst = l
	return true
}

func findingList(dst *[]Finding, v format.Value) bool {
	if v.Kind != format.KList {
		return false
	}
	l := make([]Finding, 0, len(v.List))
	for _, e := range v.List {
		if e.Kind != format.KObject {
			return false
		}
		f := Finding{Frames: []int64{}}
		for _, kv := range e.Obj {
			ok := false
			switch kv.Key {
			case "severity":
				ok = setString(&f.Severity, kv.Val)
			case "code":
				ok = setString(&f.Code, kv.Val)
			case "msg":
				ok = setString(&f.Msg, kv.Val)
			case "frames":
				ok = intList(&f.Frames, kv.Val)
			case "ref":
				ok = setString(&f.Ref, kv.Val)
			}
			if !ok {
				return false
			}
		}
		l = append(l, f)
	}
	*dst = l
	return true
}

// setCommon stores the keys every record has (JSONL.md).
func setCommon(v *int64, typ *string, frame *int64, ts *string, conn *int64, path string, val format.Value) (handled, ok bool) {
	switch path {
	case "v":
		return true, setInt64(v, val)
	case "type":
		return true, setString(typ, val)
	case "frame":
		return true, setInt64(frame, val)
	case "ts":
		return true, setString(ts, val)
	case "conn":
		return true, setInt64(conn, val)
	}
	return false, false
}

func (a *values) setMPA(r *MPARow, path string, v format.Value) bool {
	if h, ok := setCommon(&r.V, &r.Type, &r.Frame, &r.TS, &r.Conn, path, v); h {
		return ok
	}
	switch path {
	case "kind":
		return a.setStr(&r.Kind, v)
	case "src":
		return a.setStr(&r.Src, v)
	case "dst":
		return a.setStr(&r.Dst, v)
	case "dir":
		return a.setStr(&r.Dir, v)
	case "seq":
		return a.setInt(&r.Seq, v)
	case "m":
		return a.setBool(&r.M, v)
	case "c":
		return a.setBool(&r.C, v)
	case "r":
		return a.setBool(&r.R, v)
	case "s":
		return a.setBool(&r.S, v)
	case "res":
		return a.setInt(&r.Res, v)
	case "rev":
		return a.setInt(&r.Rev, v)
	case "pd_len":
		return a.setInt(&r.PDLen, v)
	case "pd":
		return a.setStr(&r.PD, v)
	case "enhanced.ird":
		return a.setInt(&r.EnhancedIRD, v)
	case "enhanced.ord":
		return a.setInt(&r.EnhancedORD, v)
	case "enhanced.a":
		return a.setBool(&r.EnhancedA, v)
	case "enhanced.b":
		return a.setBool(&r.EnhancedB, v)
	case "enhanced.c":
		return a.setBool(&r.EnhancedC, v)
	case "enhanced.d":
		return a.setBool(&r.EnhancedD, v)
	case "enhanced.p2p":
		return a.setBool(&r.EnhancedP2P, v)
	case "enhanced.rtr":
		return strList(&r.EnhancedRTR, v)
	case "frames":
		return intList(&r.Frames, v)
	case "findings":
		return findingList(&r.Findings, v)
	}
	return false
}

func (a *values) setFPDU(r *FPDURow, path string, v format.Value) bool {
	if h, ok := setCommon(&r.V, &r.Type, &r.Frame, &r.TS, &r.Conn, path, v); h {
		return ok
	}
	switch path {
	case "src":
		return a.setStr(&r.Src, v)
	case "dst":
		return a.setStr(&r.Dst, v)
	case "dir":
		return a.setStr(&r.Dir, v)
	case "seq":
		return a.setInt(&r.Seq, v)
	case "len":
		return a.setInt(&r.Len, v)
	case "frames":
		return intList(&r.Frames, v)
	case "mpa.ulpdu_len":
		return a.setInt(&r.MPAULPDULen, v)
	case "mpa.pad":
		return a.setInt(&r.MPAPad, v)
	case "mpa.markers":
		return markerList(&r.MPAMarkers, v)
	case "mpa.crc":
		return a.setInt(&r.MPACRC, v)
	case "mpa.crc_status":
		return a.setStr(&r.MPACRCStatus, v)
	case "ddp.t":
		return a.setBool(&r.DDPT, v)
	case "ddp.l":
		return a.setBool(&r.DDPL, v)
	case "ddp.dv":
		return a.setInt(&r.DDPDV, v)
	case "ddp.rsvd":
		return a.setInt(&r.DDPRsvd, v)
	case "ddp.stag":
		return a.setInt(&r.DDPSTag, v)
	case "ddp.to":
		return a.setUint(&r.DDPTO, v)
	case "ddp.qn":
		return a.setInt(&r.DDPQN, v)
	case "ddp.msn":
		return a.setInt(&r.DDPMSN, v)
	case "ddp.mo":
		return a.setInt(&r.DDPMO, v)
	case "rdmap.rv":
		return a.setInt(&r.RDMAPRV, v)
	case "rdmap.opcode":
		return a.setInt(&r.RDMAPOpcode, v)
	case "rdmap.name":
		return a.setStr(&r.RDMAPName, v)
	case "rdmap.rsvd":
		return a.setInt(&r.RDMAPRsvd, v)
	case "rdmap.inval_stag":
		return a.setInt(&r.RDMAPInvSTag, v)
	case "rdmap.read.sink_stag":
		return a.setInt(&r.ReadSinkSTag, v)
	case "rdmap.read.sink_to":
		return a.setUint(&r.ReadSinkTO, v)
	case "rdmap.read.size":
		return a.setInt(&r.ReadSize, v)
	case "rdmap.read.src_stag":
		return a.setInt(&r.ReadSrcSTag, v)
	case "rdmap.read.src_to":
		return a.setUint(&r.ReadSrcTO, v)
	case "rdmap.term.layer":
		return a.setInt(&r.TermLayer, v)
	case "rdmap.term.etype":
		return a.setInt(&r.TermEType, v)
	case "rdmap.term.code":
		return a.setInt(&r.TermCode, v)
	case "rdmap.term.m":
		return a.setBool(&r.TermM, v)
	case "rdmap.term.d":
		return a.setBool(&r.TermD, v)
	case "rdmap.term.r":
		return a.setBool(&r.TermR, v)
	case "rdmap.term.ddp_seg_len":
		return a.setInt(&r.TermSegLen, v)
	case "rdmap.term.ddp.t":
		return a.setBool(&r.TermDDPT, v)
	case "rdmap.term.ddp.l":
		return a.setBool(&r.TermDDPL, v)
	case "rdmap.term.ddp.dv":
		return a.setInt(&r.TermDDPDV, v)
	case "rdmap.term.ddp.rsvd":
		return a.setInt(&r.TermDDPRsvd, v)
	case "rdmap.term.ddp.stag":
		return a.setInt(&r.TermDDPSTag, v)
	case "rdmap.term.ddp.to":
		return a.setUint(&r.TermDDPTO, v)
	case "rdmap.term.ddp.qn":
		return a.setInt(&r.TermDDPQN, v)
	case "rdmap.term.ddp.msn":
		return a.setInt(&r.TermDDPMSN, v)
	case "rdmap.term.ddp.mo":
		return a.setInt(&r.TermDDPMO, v)
	case "rdmap.term.rdmap.rv":
		return a.setInt(&r.TermRV, v)
	case "rdmap.term.rdmap.opcode":
		return a.setInt(&r.TermOpcode, v)
	case "rdmap.term.rdmap.name":
		return a.setStr(&r.TermName, v)
	case "rdmap.term.rdmap.read.sink_stag":
		return a.setInt(&r.TermSinkSTag, v)
	case "rdmap.term.rdmap.read.sink_to":
		return a.setUint(&r.TermSinkTO, v)
	case "rdmap.term.rdmap.read.size":
		return a.setInt(&r.TermSize, v)
	case "rdmap.term.rdmap.read.src_stag":
		return a.setInt(&r.TermSrcSTag, v)
	case "rdmap.term.rdmap.read.src_to":
		return a.setUint(&r.TermSrcTO, v)
	case "rdmap.term.siw_layout":
		return a.setBool(&r.TermSiw, v)
	case "rdmap.term.text":
		return a.setStr(&r.TermText, v)
	case "rdmap.term.segment_frame":
		return a.setInt(&r.TermSegFrame, v)
	case "rdmap.immediate":
		return a.setUint(&r.RDMAPImm, v)
	case "payload_len":
		return a.setInt(&r.PayloadLen, v)
	case "findings":
		return findingList(&r.Findings, v)
	}
	return false
}

func (a *values) setMessage(r *MessageRow, path string, v format.Value) bool {
	if h, ok := setCommon(&r.V, &r.Type, &r.Frame, &r.TS, &r.Conn, path, v); h {
		return ok
	}
	switch path {
	case "src":
		return a.setStr(&r.Src, v)
	case "dst":
		return a.setStr(&r.Dst, v)
	case "dir":
		return a.setStr(&r.Dir, v)
	case "opcode":
		return a.setInt(&r.Opcode, v)
	case "name":
		return a.setStr(&r.Name, v)
	case "segments":
		return a.setInt(&r.Segments, v)
	case "length":
		return a.setInt(&r.Length, v)
	case "first_frame":
		return a.setInt(&r.FirstFrame, v)
	case "last_frame":
		return a.setInt(&r.LastFrame, v)
	case "stag":
		return a.setInt(&r.STag, v)
	case "to":
		return a.setUint(&r.TO, v)
	case "qn":
		return a.setInt(&r.QN, v)
	case "msn":
		return a.setInt(&r.MSN, v)
	case "request_frame":
		return a.setInt(&r.RequestFrame, v)
	case "latency_ns":
		return a.setInt(&r.LatencyNS, v)
	}
	return false
}

func (a *values) setFinding(r *FindingRow, path string, v format.Value) bool {
	if h, ok := setCommon(&r.V, &r.Type, &r.Frame, &r.TS, &r.Conn, path, v); h {
		return ok
	}
	switch path {
	case "severity":
		return a.setStr(&r.Severity, v)
	case "code":
		return a.setStr(&r.Code, v)
	case "msg":
		return a.setStr(&r.Msg, v)
	case "frames":
		return intList(&r.Frames, v)
	case "ref":
		return a.setStr(&r.Ref, v)
	}
	return false
}

func (a *values) setConn(r *ConnRow, path string, v format.Value) bool {
	if h, ok := setCommon(&r.V, &r.Type, &r.Frame, &r.TS, &r.Conn, path, v); h {
		return ok
	}
	switch path {
	case "initiator":
		return a.setStr(&r.Initiator, v)
	case "responder":
		return a.setStr(&r.Responder, v)
	case "state":
		return a.setStr(&r.State, v)
	case "mpa.rev":
		return a.setInt(&r.MPARev, v)
	case "mpa.crc":
		return a.setBool(&r.MPACRC, v)
	case "mpa.markers_i2r":
		return a.setBool(&r.MPAMarkersI2R, v)
	case "mpa.markers_r2i":
		return a.setBool(&r.MPAMarkersR2I, v)
	case "mpa.enhanced":
		return a.setBool(&r.MPAEnhanced, v)
	case "mpa.ird":
		return a.setInt(&r.MPAIRD, v)
	case "mpa.ord":
		return a.setInt(&r.MPAORD, v)
	case "mpa.p2p":
		return a.setBool(&r.MPAP2P, v)
	case "mpa.rtr":
		return strList(&r.MPARTR, v)
	case "mpa.rejected":
		return a.setBool(&r.MPARejected, v)
	case "ddp_version":
		return a.setInt(&r.DDPVersion, v)
	case "interop.initiator":
		return a.setStr(&r.IopInitiator, v)
	case "interop.responder":
		return a.setStr(&r.IopResponder, v)
	case "interop.row":
		return a.setStr(&r.IopRow, v)
	case "interop.expected":
		return a.setStr(&r.IopExpected, v)
	case "interop.expected.v":
		return a.setInt(&r.IopExpV, v)
	case "interop.expected.markers_i2r":
		return a.setBool(&r.IopExpMI2R, v)
	case "interop.expected.markers_r2i":
		return a.setBool(&r.IopExpMR2I, v)
	case "interop.observed":
		return a.setStr(&r.IopObserved, v)
	case "interop.observed.v":
		return a.setInt(&r.IopObsV, v)
	case "interop.observed.markers_i2r":
		return a.setBool(&r.IopObsMI2R, v)
	case "interop.observed.markers_r2i":
		return a.setBool(&r.IopObsMR2I, v)
	case "interop.match":
		return a.setBool(&r.IopMatch, v)
	case "midstream":
		return a.setBool(&r.Midstream, v)
	case "fpdus":
		return a.setInt(&r.FPDUs, v)
	case "messages":
		return a.setInt(&r.Messages, v)
	case "octets":
		return a.setInt(&r.Octets, v)
	case "crc_errors":
		return a.setInt(&r.CRCErrors, v)
	case "findings":
		return a.setInt(&r.Findings, v)
	case "first_frame":
		return a.setInt(&r.FirstFrame, v)
	case "last_frame":
		return a.setInt(&r.LastFrame, v)
	}
	return false
}

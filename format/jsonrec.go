package format

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
)

// JSONWriter renders records as JSON Lines objects, the same octets as
// AppendJSON(Fields(r)) (a test holds the two together over every bundled
// capture), faster: the FPDU and message records that make up almost all
// of a capture are written straight from the record, without building the
// generic key/value list, numbers are written in place (digits.go),
// timestamps reuse the text of the second they fall in, and endpoints the
// text of their last appearance. Other records, and FPDUs that carry findings or
// a Terminate, go through Fields. The keys are the field registry's names,
// as in fields.go. A JSONWriter is not safe for concurrent use.
type JSONWriter struct {
	kvs    []KV
	tsSec  int64
	tsText []byte // "2006-01-02T15:04:05." of second tsSec
	tsOK   bool
	addrs  addrCache
	// hole: head leaves the connection id out and notes where it goes
	// in connAt (Format).
	hole   bool
	connAt int
}

// Format is a flows.Format for the workers of a flows.Parallel: Append,
// but without the connection id, for the FPDU and message records Append
// writes straight from the record; the others are left to the merge.
func (w *JSONWriter) Format(dst []byte, r *flows.Record) ([]byte, int, bool) {
	switch {
	case r.Type == flows.RecFPDU && fastFPDU(r):
		w.hole = true
		dst = w.fpdu(dst, r)
	case r.Type == flows.RecMessage && plainAddrs(r):
		w.hole = true
		dst = w.message(dst, r)
	default:
		return dst, -1, false
	}
	w.hole = false
	return append(dst, '\n'), w.connAt, true
}

// Append appends r's JSON object (without a newline) to dst.
func (w *JSONWriter) Append(dst []byte, r *flows.Record) []byte {
	switch {
	case r.Type == flows.RecFPDU && fastFPDU(r):
		return w.fpdu(dst, r)
	case r.Type == flows.RecMessage && plainAddrs(r):
		return w.message(dst, r)
	}
	w.kvs = AppendFields(w.kvs[:0], r)
	return AppendJSON(dst, w.kvs)
}

// plainAddrs: the endpoints print without a zone, whose octets would need
// JSON escaping.
func plainAddrs(r *flows.Record) bool {
	return r.Src.Addr().Zone() == "" && r.Dst.Addr().Zone() == ""
}

// fastFPDU reports whether fpdu writes r (fpduFields lists its keys).
func fastFPDU(r *flows.Record) bool {
	f := r.FPDU
	if len(f.Findings) > 0 || !plainAddrs(r) {
		return false
	}
	if f.SegOK {
		switch f.Seg.Opcode {
		case rdmap.OpTerminate:
			return false
		}
	}
	return true
}

// head writes the keys every record starts with (AppendFields).
func (w *JSONWriter) head(dst []byte, r *flows.Record, typ string) []byte {
	dst = append(dst, `{"v":`...)
	dst = appendUint(dst, SchemaVersion)
	dst = append(dst, `,"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","frame":`...)
	dst = appendUint(dst, r.Frame)
	dst = append(dst, `,"ts":"`...)
	dst = w.appendTS(dst, r.TS)
	dst = append(dst, `","conn":`...)
	if w.hole {
		w.connAt = len(dst)
	} else {
		dst = appendUint(dst, uint64(r.Conn))
	}
	dst = append(dst, `,"src":`...)
	dst = w.addrs.append(dst, r.Src)
	dst = append(dst, `,"dst":`...)
	dst = w.addrs.append(dst, r.Dst)
	dst = append(dst, `,"dir":"`...)
	dst = append(dst, r.Dir.String()...)
	return append(dst, '"')
}

func appendAddrPort(dst []byte, a netip.AddrPort) []byte {
	dst = append(dst, '"')
	if a.IsValid() {
		dst = a.AppendTo(dst)
	}
	return append(dst, '"')
}

// appendTS is Timestamp(t) appended, with the part up to the second cached.
func (w *JSONWriter) appendTS(dst []byte, t time.Time) []byte {
	t = t.UTC()
	sec := t.Unix()
	if !w.tsOK || sec != w.tsSec {
		full := t.Truncate(time.Second).AppendFormat(w.tsText[:0], tsLayout)
		// Keep "....:05." (the nine zero digits and the zone are redone).
		if len(full) < 11 || full[len(full)-11] != '.' || full[len(full)-1] != 'Z' {
			return append(dst, Timestamp(t)...)
		}
		w.tsText, w.tsSec, w.tsOK = full[:len(full)-10], sec, true
	}
	dst = append(dst, w.tsText...)
	ns := t.Nanosecond()
	var d [9]byte
	for i := 8; i >= 0; i-- {
		d[i] = byte('0' + ns%10)
		ns /= 10
	}
	dst = append(dst, d[:]...)
	return append(dst, 'Z')
}

func appendFrames(dst []byte, frames []uint64) []byte {
	dst = append(dst, `,"frames":[`...)
	for i, f := range frames {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendUint(dst, f)
	}
	return append(dst, ']')
}

// fpdu writes an FPDU record as fpduFields names it.
func (w *JSONWriter) fpdu(dst []byte, r *flows.Record) []byte {
	f := r.FPDU
	dst = w.head(dst, r, "fpdu")
	dst = appendKV(dst, `,"seq":`, uint64(f.Seq))
	dst = appendKV(dst, `,"len":`, uint64(f.Len))
	dst = appendFrames(dst, f.Frames)
	dst = appendKV(dst, `,"mpa.ulpdu_len":`, uint64(f.ULPDULen))
	dst = appendKV(dst, `,"mpa.pad":`, uint64(f.Pad))
	if len(f.Markers) > 0 {
		dst = append(dst, `,"mpa.markers":[`...)
		for i, m := range f.Markers {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"seq":`...)
			dst = appendUint(dst, uint64(m.Seq))
			dst = appendKV(dst, `,"fpduptr":`, uint64(m.FPDUPtr))
			dst = appendKB(dst, `,"ok":`, m.OK)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = appendCRCKV(dst, f)
	dst = append(dst, `,"mpa.crc_status":"`...)
	dst = append(dst, f.CRCStatus.String()...)
	dst = append(dst, '"')
	if f.SegOK {
		s := &f.Seg
		h := s.DDP
		dst = appendKB(dst, `,"ddp.t":`, h.T)
		dst = appendKB(dst, `,"ddp.l":`, h.L)
		dst = appendKV(dst, `,"ddp.dv":`, uint64(h.DV))
		if h.Rsvd != 0 {
			dst = appendKV(dst, `,"ddp.rsvd":`, uint64(h.Rsvd))
		}
		if h.T {
			dst = appendKV(dst, `,"ddp.stag":`, uint64(h.STag))
			dst = appendKV(dst, `,"ddp.to":`, h.TO)
		} else {
			dst = appendKV(dst, `,"ddp.qn":`, uint64(h.QN))
			dst = appendKV(dst, `,"ddp.msn":`, uint64(h.MSN))
			dst = appendKV(dst, `,"ddp.mo":`, uint64(h.MO))
		}
		dst = appendKV(dst, `,"rdmap.rv":`, uint64(s.RV))
		dst = appendKV(dst, `,"rdmap.opcode":`, uint64(s.Opcode))
		dst = append(dst, `,"rdmap.name":`...)
		dst = appendJSONString(dst, s.Opcode.String())
		if s.Rsvd != 0 {
			dst = appendKV(dst, `,"rdmap.rsvd":`, uint64(s.Rsvd))
		}
		switch s.Opcode {
		case rdmap.OpSendInvalidate, rdmap.OpSendSEInvalidate:
			dst = appendKV(dst, `,"rdmap.inval_stag":`, uint64(s.InvalSTag))
		case rdmap.OpReadRequest:
			// readFields' keys. A workload's Read Requests (1.7 % of its
			// FPDUs) had taken a tenth of its JSON Lines time through
			// Fields, and under -j N all of it in the merge.
			rr := &s.Read
			if s.HdrCut > 0 {
				// A header the capture cut: the fields it holds, and how
				// many of its octets (readCutFields' keys).
				_, sinkTO, size, srcSTag, _ := rdmap.ReadRequestKnown(s.HdrCut)
				dst = appendKV(dst, `,"rdmap.read":{"sink_stag":`, uint64(rr.SinkSTag))
				if sinkTO {
					dst = appendKV(dst, `,"sink_to":`, rr.SinkTO)
				}
				if size {
					dst = appendKV(dst, `,"size":`, uint64(rr.Size))
				}
				if srcSTag {
					dst = appendKV(dst, `,"src_stag":`, uint64(rr.SrcSTag))
				}
				dst = appendKV(dst, `,"captured":`, uint64(s.HdrCut))
				dst = append(dst, '}')
				break
			}
			dst = appendKV(dst, `,"rdmap.read":{"sink_stag":`, uint64(rr.SinkSTag))
			dst = appendKV(dst, `,"sink_to":`, rr.SinkTO)
			dst = appendKV(dst, `,"size":`, uint64(rr.Size))
			dst = appendKV(dst, `,"src_stag":`, uint64(rr.SrcSTag))
			dst = appendKV(dst, `,"src_to":`, rr.SrcTO)
			dst = append(dst, '}')
		case rdmap.OpImmediate, rdmap.OpImmediateSE:
			if s.HdrCut == 0 { // a cut one has no value to give
				dst = appendKV(dst, `,"rdmap.immediate":`, s.Immediate)
			}
		case rdmap.OpAtomicRequest, rdmap.OpAtomicResponse:
			if s.HdrCut > 0 {
				// A header the capture cut: the fields it holds (rare:
				// through Fields).
				dst = append(dst, `,"rdmap.atomic":`...)
				dst = appendJSONValue(dst, Object(atomicFields(s)))
				break
			}
			if s.Opcode == rdmap.OpAtomicResponse {
				dst = appendKV(dst, `,"rdmap.atomic":{"orig_req_id":`, uint64(s.AtomicResp.ReqID))
				dst = appendKV(dst, `,"orig_value":`, s.AtomicResp.OrigValue)
				dst = append(dst, '}')
				break
			}
			// atomicFields' keys.
			r := &s.AtomicReq
			dst = appendKV(dst, `,"rdmap.atomic":{"op":`, uint64(r.Op))
			dst = appendKV(dst, `,"req_id":`, uint64(r.ReqID))
			dst = appendKV(dst, `,"remote_stag":`, uint64(r.RemoteSTag))
			dst = appendKV(dst, `,"remote_to":`, r.RemoteTO)
			dst = appendKV(dst, `,"add_swap_data":`, r.AddSwapData)
			dst = appendKV(dst, `,"add_swap_mask":`, r.AddSwapMask)
			dst = appendKV(dst, `,"compare_data":`, r.CompareData)
			dst = appendKV(dst, `,"compare_mask":`, r.CompareMask)
			dst = append(dst, '}')
		}
		dst = appendKV(dst, `,"payload_len":`, uint64(f.PayloadLen))
	}
	return append(dst, '}')
}

// message writes a message record as messageFields names it.
func (w *JSONWriter) message(dst []byte, r *flows.Record) []byte {
	m := r.Message
	dst = w.head(dst, r, "message")
	dst = appendKV(dst, `,"opcode":`, uint64(m.Opcode))
	dst = append(dst, `,"name":`...)
	dst = appendJSONString(dst, m.Opcode.String())
	dst = appendKV(dst, `,"segments":`, uint64(m.Segments))
	dst = appendKV(dst, `,"length":`, m.Length)
	dst = appendKV(dst, `,"first_frame":`, m.FirstFrame)
	dst = appendKV(dst, `,"last_frame":`, m.LastFrame)
	if m.Tagged {
		dst = appendKV(dst, `,"stag":`, uint64(m.STag))
		dst = appendKV(dst, `,"to":`, m.TO)
	} else {
		dst = appendKV(dst, `,"qn":`, uint64(m.QN))
		dst = appendKV(dst, `,"msn":`, uint64(m.MSN))
	}
	if m.Opcode == rdmap.OpReadResponse && m.RequestFrame != 0 {
		dst = appendKV(dst, `,"request_frame":`, m.RequestFrame)
		dst = append(dst, `,"latency_ns":`...)
		dst = strconv.AppendInt(dst, int64(m.Latency), 10)
	}
	return append(dst, '}')
}

// appendCRCKV appends an FPDU's mpa.crc, which a CRC field the capture cut
// has not. (A helper, so that the lines of the function that calls it,
// to which default.pgo keys its call sites, stay where they were.)
func appendCRCKV(dst []byte, f *flows.FPDURecord) []byte {
	if f.CRCCut {
		return dst
	}
	return appendKV(dst, `,"mpa.crc":`, uint64(f.CRC))
}

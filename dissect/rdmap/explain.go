package rdmap

import "strconv"

// lowerHex is used for STags and tagged offsets, printed lowercase as
// tshark does.
const lowerHex = "0123456789abcdef"

// hex32 formats v as "0x" and eight lowercase hex digits.
func hex32(v uint32) string {
	var b [10]byte
	b[0], b[1] = '0', 'x'
	for i := 9; i >= 2; i-- {
		b[i] = lowerHex[v&0xF]
		v >>= 4
	}
	return string(b[:])
}

// hexTO formats a tagged offset as "0x" and its lowercase hex digits
// without leading zeros, as the FPDU's text line prints TOs.
func hexTO(v uint64) string {
	return "0x" + strconv.FormatUint(v, 16)
}

// Explain describes the Terminate in plain words for a storage engineer:
// which layer found which error, what it means, and which message it
// terminated. For example:
//
//	RDMAP Remote Protection Error: Invalid STag (the STag in the request was not valid at the receiver)
//
// followed, when the Terminate carries them, by the terminated segment
// ("; terminated segment: RDMA Write, STag 0x..., TO 0x..., 64 octets")
// and Read Request, and by a note when the control word was in Linux
// siw's layout. Codes the tables do not define are given in hex.
func (t Terminate) Explain() string {
	b := make([]byte, 0, 160)
	b = append(b, LayerName(t.Layer)...)
	b = append(b, ' ')
	etName, etOK := etypeName(t.Layer, t.EType)
	b = append(b, etName...)
	e, ok := lookupErr(t.Layer, t.EType, t.Code)
	switch {
	case ok && e.code == anyCode:
		b = append(b, " ("...)
		b = append(b, e.hint...)
		b = append(b, ')')
	case ok:
		b = append(b, ": "...)
		b = append(b, e.name...)
		b = append(b, " ("...)
		b = append(b, e.hint...)
		b = append(b, ')')
	case etOK:
		b = append(b, ": unknown error code "...)
		b = append(b, hex2(t.Code)...)
	default:
		b = append(b, ", error code "...)
		b = append(b, hex2(t.Code)...)
	}
	if t.HasDDP {
		h := t.DDP
		op := Control(h.ULPCtrl).Opcode()
		b = append(b, "; terminated segment: "...)
		b = append(b, op.String()...)
		if h.T {
			b = append(b, ", STag "...)
			b = append(b, hex32(h.STag)...)
			b = append(b, ", TO "...)
			b = append(b, hexTO(h.TO)...)
		} else {
			b = append(b, ", QN "...)
			b = strconv.AppendUint(b, uint64(h.QN), 10)
			b = append(b, ", MSN "...)
			b = strconv.AppendUint(b, uint64(h.MSN), 10)
			b = append(b, ", MO "...)
			b = strconv.AppendUint(b, uint64(h.MO), 10)
			if op.HasInvalidate() {
				b = append(b, ", invalidate STag "...)
				b = append(b, hex32(h.ULPRsvd)...)
			}
		}
		if !h.L {
			b = append(b, ", not the last segment"...)
		}
	}
	if t.M && !(t.Cut && t.DDPSegLen == 0) {
		b = append(b, ", "...)
		b = strconv.AppendUint(b, uint64(t.DDPSegLen), 10)
		b = append(b, " octets"...)
	}
	if t.HasRDMA {
		r := t.RDMA
		b = append(b, "; terminated RDMA Read Request: "...)
		b = strconv.AppendUint(b, uint64(r.Size), 10)
		b = append(b, " octets from STag "...)
		b = append(b, hex32(r.SrcSTag)...)
		b = append(b, " TO "...)
		b = append(b, hexTO(r.SrcTO)...)
		b = append(b, " to STag "...)
		b = append(b, hex32(r.SinkSTag)...)
		b = append(b, " TO "...)
		b = append(b, hexTO(r.SinkTO)...)
	}
	if t.Cut && (t.D && !t.HasDDP || t.R && !t.HasRDMA) {
		b = append(b, "; the terminated headers it includes were cut by the capture"...)
	}
	if t.SiwLayout {
		b = append(b, " [control word in Linux siw's little-endian bitfield layout]"...)
	}
	return string(b)
}

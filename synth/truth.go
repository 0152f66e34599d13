package synth

import (
	"encoding/hex"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// Record is one line of the ground-truth file: a *TruthMPA, *TruthFPDU,
// *TruthGap or *TruthConn. Key names follow the iwarpdump JSON Lines
// contract (JSONL.md, schema v1) where it has them; keys it lacks (off,
// index, captured, reason, ...) are additions.
type Record interface {
	// RecordType returns the value of the "type" key.
	RecordType() string
}

// TruthMPA is an MPA Request or Reply as sent (RFC 5044 §7.1.1).
type TruthMPA struct {
	V     int    `json:"v"`
	Type  string `json:"type"` // "mpa"
	Frame uint64 `json:"frame"`
	TS    string `json:"ts"`
	Conn  int    `json:"conn"`
	Kind  string `json:"kind"` // "request" or "reply"
	Src   string `json:"src"`
	Dst   string `json:"dst"`
	Dir   string `json:"dir"`
	// Seq is the absolute TCP sequence number of the frame's first octet;
	// Off is the same position as a stream offset (0 = the octet after the
	// SYN).
	Seq      uint32         `json:"seq"`
	Off      uint64         `json:"off"`
	Len      int            `json:"len"`
	Frames   []uint64       `json:"frames"`
	M        bool           `json:"m"`
	C        bool           `json:"c"`
	R        bool           `json:"r"`
	S        bool           `json:"s"`
	Res      uint8          `json:"res"`
	Rev      uint8          `json:"rev"`
	PDLen    int            `json:"pd_len"`
	PD       string         `json:"pd"`
	Enhanced *TruthEnhanced `json:"enhanced,omitempty"`
	Captured bool           `json:"captured"`
}

// TruthEnhanced is the Enhanced RDMA Connection Establishment Data
// (RFC 6581 §9), flags read with the RFC's meanings.
type TruthEnhanced struct {
	IRD uint16   `json:"ird"`
	ORD uint16   `json:"ord"`
	A   bool     `json:"a"`
	B   bool     `json:"b"`
	C   bool     `json:"c"`
	D   bool     `json:"d"`
	P2P bool     `json:"p2p"`
	RTR []string `json:"rtr"`
}

// TruthFPDU is one FPDU as sent (RFC 5044 §4) and the DDP segment in it.
type TruthFPDU struct {
	V     int    `json:"v"`
	Type  string `json:"type"` // "fpdu"
	Frame uint64 `json:"frame"`
	TS    string `json:"ts"`
	Conn  int    `json:"conn"`
	Src   string `json:"src"`
	Dst   string `json:"dst"`
	Dir   string `json:"dir"`
	// Seq and Off locate the FPDU's first octet, a leading marker
	// included; Len counts markers, length field, ULPDU, pad and CRC.
	Seq uint32 `json:"seq"`
	Off uint64 `json:"off"`
	Len int    `json:"len"`
	// Frames lists every captured frame carrying any of its octets,
	// retransmissions included, ascending.
	Frames []uint64 `json:"frames"`
	// Index is the FPDU's 0-based index in its direction (FPDURef.Index).
	Index      int          `json:"index"`
	MPA        TruthFPDUMPA `json:"mpa"`
	DDP        *TruthDDP    `json:"ddp,omitempty"`
	RDMAP      *TruthRDMAP  `json:"rdmap,omitempty"`
	PayloadLen int          `json:"payload_len"`
	// Captured is false when some octet of the FPDU is not in the capture.
	Captured bool `json:"captured"`
}

// TruthFPDUMPA holds the MPA fields of an FPDU.
type TruthFPDUMPA struct {
	ULPDULen  int           `json:"ulpdu_len"`
	Pad       int           `json:"pad"`
	Markers   []TruthMarker `json:"markers"`
	CRC       uint32        `json:"crc"`
	CRCStatus string        `json:"crc_status"` // ok, bad, unchecked, incomplete
}

// TruthMarker is one marker inside an FPDU (RFC 5044 §5.1): where it is
// and the FPDUPTR written in it. OK says Rsvd is 0 and FPDUPTR is the
// distance from the FPDU's first octet (a leading marker included) to the
// marker. On a grid not aligned with the FPDUs (marker-split-len) that
// distance is not a multiple of 4; a decoder that insists on it disagrees
// with OK there by design.
type TruthMarker struct {
	Seq     uint32 `json:"seq"`
	Off     uint64 `json:"off"`
	FPDUPtr uint16 `json:"fpduptr"`
	OK      bool   `json:"ok"`
}

// TruthDDP is a DDP header (RFC 5041 §4). Tagged headers have STag and
// TO, untagged ones QN, MSN and MO.
type TruthDDP struct {
	T    bool    `json:"t"`
	L    bool    `json:"l"`
	Rsvd uint8   `json:"rsvd"`
	DV   uint8   `json:"dv"`
	STag *uint32 `json:"stag,omitempty"`
	TO   *uint64 `json:"to,omitempty"`
	QN   *uint32 `json:"qn,omitempty"`
	MSN  *uint32 `json:"msn,omitempty"`
	MO   *uint32 `json:"mo,omitempty"`
	// ULPCtrl is octet 1; only in a Terminate's terminated DDP header.
	ULPCtrl *uint8 `json:"ulp_ctrl,omitempty"`
}

// TruthRDMAP is the RDMAP part of a DDP segment (RFC 5040 §4, RFC 7306).
type TruthRDMAP struct {
	RV        uint8        `json:"rv"`
	Opcode    uint8        `json:"opcode"`
	Name      string       `json:"name"`
	InvalSTag *uint32      `json:"inval_stag,omitempty"`
	Read      *TruthRead   `json:"read,omitempty"`
	Term      *TruthTerm   `json:"term,omitempty"`
	Immediate *uint64      `json:"immediate,omitempty"`
	Atomic    *TruthAtomic `json:"atomic,omitempty"`
}

// TruthRead is an RDMA Read Request header (RFC 5040 §4.4).
type TruthRead struct {
	SinkSTag uint32 `json:"sink_stag"`
	SinkTO   uint64 `json:"sink_to"`
	Size     uint32 `json:"size"`
	SrcSTag  uint32 `json:"src_stag"`
	SrcTO    uint64 `json:"src_to"`
}

// TruthTerm is a Terminate header (RFC 5040 §4.8).
type TruthTerm struct {
	Layer     uint8      `json:"layer"`
	EType     uint8      `json:"etype"`
	Code      uint8      `json:"code"`
	M         bool       `json:"m"`
	D         bool       `json:"d"`
	R         bool       `json:"r"`
	DDPSegLen *uint16    `json:"ddp_seg_len,omitempty"`
	DDP       *TruthDDP  `json:"ddp,omitempty"`
	RDMAP     *TruthRead `json:"rdmap,omitempty"`
	SiwLayout bool       `json:"siw_layout,omitempty"`
}

// TruthAtomic is an Atomic Request or Response header (RFC 7306).
type TruthAtomic struct {
	Op          *uint8  `json:"op,omitempty"`
	ReqID       uint32  `json:"req_id"`
	RemoteSTag  *uint32 `json:"remote_stag,omitempty"`
	RemoteTO    *uint64 `json:"remote_to,omitempty"`
	AddSwapData *uint64 `json:"add_swap_data,omitempty"`
	AddSwapMask *uint64 `json:"add_swap_mask,omitempty"`
	CompareData *uint64 `json:"compare_data,omitempty"`
	CompareMask *uint64 `json:"compare_mask,omitempty"`
	OrigValue   *uint64 `json:"orig_value,omitempty"`
}

// TruthGap is a range of a direction's stream missing from the capture.
type TruthGap struct {
	V    int    `json:"v"`
	Type string `json:"type"` // "gap"
	// Frame is the first captured frame after the gap (the one in which a
	// decoder can notice it), or the truncated frame for snaplen gaps.
	Frame  uint64 `json:"frame"`
	TS     string `json:"ts"`
	Conn   int    `json:"conn"`
	Dir    string `json:"dir"`
	Seq    uint32 `json:"seq"`
	Off    uint64 `json:"off"`
	Len    uint64 `json:"len"`
	Reason string `json:"reason"` // "drop" or "snaplen"
}

// TruthConn summarises a connection; written after all other records.
type TruthConn struct {
	V         int    `json:"v"`
	Type      string `json:"type"` // "conn"
	Conn      int    `json:"conn"`
	Initiator string `json:"initiator"`
	Responder string `json:"responder"`
	// State: closed, reset, open, rejected or no_reply.
	State        string        `json:"state"`
	MPA          *TruthConnMPA `json:"mpa"`
	DDPVersion   uint8         `json:"ddp_version"`
	RDMAPVersion uint8         `json:"rdmap_version"`
	// RDMAC is true for a stream without MPA Request/Reply.
	RDMAC bool `json:"rdmac"`
	// Midstream is true when the capture starts after the connection did.
	Midstream bool   `json:"midstream"`
	Handshake bool   `json:"handshake"`
	ISNI      uint32 `json:"isn_i"`
	ISNR      uint32 `json:"isn_r"`
	// OriginI2R and OriginR2I are the sequence numbers where each marker
	// grid starts (present only for directions with markers).
	OriginI2R     *uint32 `json:"marker_origin_i2r,omitempty"`
	OriginR2I     *uint32 `json:"marker_origin_r2i,omitempty"`
	FPDUs         int     `json:"fpdus"`
	FPDUsCaptured int     `json:"fpdus_captured"`
	Messages      int     `json:"messages"`
	OctetsI2R     uint64  `json:"octets_i2r"`
	OctetsR2I     uint64  `json:"octets_r2i"`
	CRCErrors     int     `json:"crc_errors"`
	Gaps          int     `json:"gaps"`
}

// TruthConnMPA is the negotiated MPA state of a connection.
type TruthConnMPA struct {
	Rev        uint8    `json:"rev"`
	RevReply   *uint8   `json:"rev_reply,omitempty"`
	CRC        bool     `json:"crc"`
	MarkersI2R bool     `json:"markers_i2r"`
	MarkersR2I bool     `json:"markers_r2i"`
	Enhanced   bool     `json:"enhanced"`
	IRD        *uint16  `json:"ird,omitempty"`
	ORD        *uint16  `json:"ord,omitempty"`
	P2P        bool     `json:"p2p"`
	RTR        []string `json:"rtr"`
	Rejected   bool     `json:"rejected"`
}

// RecordType implements Record.
func (*TruthMPA) RecordType() string { return "mpa" }

// RecordType implements Record.
func (*TruthFPDU) RecordType() string { return "fpdu" }

// RecordType implements Record.
func (*TruthGap) RecordType() string { return "gap" }

// RecordType implements Record.
func (*TruthConn) RecordType() string { return "conn" }

// formatTS renders a timestamp as JSONL.md asks: RFC 3339, nanoseconds, UTC.
func formatTS(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
}

func ptr[T any](v T) *T { return &v }

// truthDDP converts a DDP header.
func truthDDP(h ddp.Header, withCtrl bool) *TruthDDP {
	t := &TruthDDP{T: h.T, L: h.L, Rsvd: h.Rsvd, DV: h.DV}
	if h.T {
		t.STag, t.TO = ptr(h.STag), ptr(h.TO)
	} else {
		t.QN, t.MSN, t.MO = ptr(h.QN), ptr(h.MSN), ptr(h.MO)
	}
	if withCtrl {
		t.ULPCtrl = ptr(h.ULPCtrl)
	}
	return t
}

func truthRead(r rdmap.ReadRequest) *TruthRead {
	return &TruthRead{SinkSTag: r.SinkSTag, SinkTO: r.SinkTO, Size: r.Size, SrcSTag: r.SrcSTag, SrcTO: r.SrcTO}
}

// truthRDMAP converts what the generator handed to rdmap.AppendSegment.
func truthRDMAP(s *rdmap.Segment) *TruthRDMAP {
	t := &TruthRDMAP{RV: s.RV, Opcode: uint8(s.Opcode), Name: s.Opcode.String()}
	switch s.Opcode {
	case rdmap.OpSendInvalidate, rdmap.OpSendSEInvalidate:
		t.InvalSTag = ptr(s.InvalSTag)
	case rdmap.OpReadRequest:
		t.Read = truthRead(s.Read)
	case rdmap.OpTerminate:
		tm := s.Term
		tt := &TruthTerm{Layer: tm.Layer, EType: tm.EType, Code: tm.Code, M: tm.M, D: tm.D, R: tm.R, SiwLayout: tm.SiwLayout}
		if tm.M || tm.D {
			tt.DDPSegLen = ptr(tm.DDPSegLen)
		}
		if tm.D {
			tt.DDP = truthDDP(tm.DDP, true)
		}
		if tm.R {
			tt.RDMAP = truthRead(tm.RDMA)
		}
		t.Term = tt
	case rdmap.OpImmediate, rdmap.OpImmediateSE:
		t.Immediate = ptr(s.Immediate)
	case rdmap.OpAtomicRequest:
		a := s.AtomicReq
		t.Atomic = &TruthAtomic{Op: ptr(uint8(a.Op)), ReqID: a.ReqID, RemoteSTag: ptr(a.RemoteSTag), RemoteTO: ptr(a.RemoteTO),
			AddSwapData: ptr(a.AddSwapData), AddSwapMask: ptr(a.AddSwapMask), CompareData: ptr(a.CompareData), CompareMask: ptr(a.CompareMask)}
	case rdmap.OpAtomicResponse:
		t.Atomic = &TruthAtomic{ReqID: s.AtomicResp.ReqID, OrigValue: ptr(s.AtomicResp.OrigValue)}
	}
	return t
}

// truthEnhanced converts Enhanced data.
func truthEnhanced(e mpa.Enhanced) *TruthEnhanced {
	rtr := e.RTR(mpa.FlagsRFC6581).Names()
	if rtr == nil {
		rtr = []string{}
	}
	return &TruthEnhanced{IRD: e.IRD, ORD: e.ORD, A: e.A, B: e.B, C: e.C, D: e.D, P2P: e.P2P(mpa.FlagsRFC6581), RTR: rtr}
}

// truthMPAFrame fills the frame fields of an MPA record.
func truthMPAFrame(t *TruthMPA, f *mpa.Frame) {
	t.Kind = f.Kind.String()
	t.M, t.C, t.R, t.S = f.M, f.C, f.R, f.S
	t.Res, t.Rev = f.Res, f.Rev
	t.PDLen = len(f.PD)
	t.PD = hex.EncodeToString(f.PD)
	if e, _, ok := f.Enhanced(); ok {
		t.Enhanced = truthEnhanced(e)
	}
}

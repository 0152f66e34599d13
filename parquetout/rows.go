package parquetout

// The row types: one Go struct per table, its parquet tags naming the
// columns after the JSON Lines v1 keys (JSONL.md), flattened with dots.
// Every column but the five common ones is optional (null where the JSON
// Lines record has no such key, or has null). Integers are INT64; the
// 64-bit values that may exceed 2^63 (tagged offsets, RFC 5041 §4.4, and
// Immediate Data, RFC 7306 §4) are INT64 annotated UINT(64). Byte strings
// are lowercase hex text, as in the JSON Lines.

// Marker is one element of fpdus."mpa.markers" (RFC 5044 §5.1).
type Marker struct {
	Seq     int64 `parquet:"seq"`
	FPDUPtr int64 `parquet:"fpduptr"`
	OK      bool  `parquet:"ok"`
}

// Finding is one element of a "findings" list attached to an FPDU or an
// MPA frame (the columns of the findings table, minus the common ones).
type Finding struct {
	Severity string  `parquet:"severity"`
	Code     string  `parquet:"code"`
	Msg      string  `parquet:"msg"`
	Frames   []int64 `parquet:"frames,list"`
	Ref      string  `parquet:"ref"`
}

// MPARow is a row of the mpa table: one MPA Request or Reply (RFC 5044
// §7.1, RFC 6581 §8-§9).
type MPARow struct {
	V     int64  `parquet:"v"`
	Type  string `parquet:"type,dict"`
	Frame int64  `parquet:"frame"`
	TS    string `parquet:"ts"`
	Conn  int64  `parquet:"conn"`

	Kind        *string   `parquet:"kind,optional,dict"`
	Src         *string   `parquet:"src,optional,dict"`
	Dst         *string   `parquet:"dst,optional,dict"`
	Dir         *string   `parquet:"dir,optional,dict"`
	Seq         *int64    `parquet:"seq,optional"`
	M           *bool     `parquet:"m,optional"`
	C           *bool     `parquet:"c,optional"`
	R           *bool     `parquet:"r,optional"`
	S           *bool     `parquet:"s,optional"`
	Res         *int64    `parquet:"res,optional"`
	Rev         *int64    `parquet:"rev,optional"`
	PDLen       *int64    `parquet:"pd_len,optional"`
	PD          *string   `parquet:"pd,optional"`
	EnhancedIRD *int64    `parquet:"enhanced.ird,optional"`
	EnhancedORD *int64    `parquet:"enhanced.ord,optional"`
	EnhancedA   *bool     `parquet:"enhanced.a,optional"`
	EnhancedB   *bool     `parquet:"enhanced.b,optional"`
	EnhancedC   *bool     `parquet:"enhanced.c,optional"`
	EnhancedD   *bool     `parquet:"enhanced.d,optional"`
	EnhancedP2P *bool     `parquet:"enhanced.p2p,optional"`
	EnhancedRTR []string  `parquet:"enhanced.rtr,optional,list"`
	Frames      []int64   `parquet:"frames,optional,list"`
	Findings    []Finding `parquet:"findings,optional,list"`
}

// FPDURow is a row of the fpdus table: one FPDU (RFC 5044 §4) and the DDP
// segment (RFC 5041 §4) and RDMAP header (RFC 5040 §4) in it.
type FPDURow struct {
	V     int64  `parquet:"v"`
	Type  string `parquet:"type,dict"`
	Frame int64  `parquet:"frame"`
	TS    string `parquet:"ts"`
	Conn  int64  `parquet:"conn"`

	Src          *string   `parquet:"src,optional,dict"`
	Dst          *string   `parquet:"dst,optional,dict"`
	Dir          *string   `parquet:"dir,optional,dict"`
	Seq          *int64    `parquet:"seq,optional"`
	Len          *int64    `parquet:"len,optional"`
	Frames       []int64   `parquet:"frames,optional,list"`
	MPAULPDULen  *int64    `parquet:"mpa.ulpdu_len,optional"`
	MPAPad       *int64    `parquet:"mpa.pad,optional"`
	MPAMarkers   []Marker  `parquet:"mpa.markers,optional,list"`
	MPACRC       *int64    `parquet:"mpa.crc,optional"`
	MPACRCStatus *string   `parquet:"mpa.crc_status,optional,dict"`
	DDPT         *bool     `parquet:"ddp.t,optional"`
	DDPL         *bool     `parquet:"ddp.l,optional"`
	DDPDV        *int64    `parquet:"ddp.dv,optional"`
	DDPRsvd      *int64    `parquet:"ddp.rsvd,optional"`
	DDPSTag      *int64    `parquet:"ddp.stag,optional"`
	DDPTO        *uint64   `parquet:"ddp.to,optional"`
	DDPQN        *int64    `parquet:"ddp.qn,optional"`
	DDPMSN       *int64    `parquet:"ddp.msn,optional"`
	DDPMO        *int64    `parquet:"ddp.mo,optional"`
	RDMAPRV      *int64    `parquet:"rdmap.rv,optional"`
	RDMAPOpcode  *int64    `parquet:"rdmap.opcode,optional"`
	RDMAPName    *string   `parquet:"rdmap.name,optional,dict"`
	RDMAPRsvd    *int64    `parquet:"rdmap.rsvd,optional"`
	RDMAPInvSTag *int64    `parquet:"rdmap.inval_stag,optional"`
	ReadSinkSTag *int64    `parquet:"rdmap.read.sink_stag,optional"`
	ReadSinkTO   *uint64   `parquet:"rdmap.read.sink_to,optional"`
	ReadSize     *int64    `parquet:"rdmap.read.size,optional"`
	ReadSrcSTag  *int64    `parquet:"rdmap.read.src_stag,optional"`
	ReadSrcTO    *uint64   `parquet:"rdmap.read.src_to,optional"`
	ReadCaptured *int64    `parquet:"rdmap.read.captured,optional"`
	AtomicOp     *int64    `parquet:"rdmap.atomic.op,optional"`
	AtomicReqID  *int64    `parquet:"rdmap.atomic.req_id,optional"`
	AtomicSTag   *int64    `parquet:"rdmap.atomic.remote_stag,optional"`
	AtomicTO     *uint64   `parquet:"rdmap.atomic.remote_to,optional"`
	AtomicData   *uint64   `parquet:"rdmap.atomic.add_swap_data,optional"`
	AtomicMask   *uint64   `parquet:"rdmap.atomic.add_swap_mask,optional"`
	AtomicCmp    *uint64   `parquet:"rdmap.atomic.compare_data,optional"`
	AtomicCmpM   *uint64   `parquet:"rdmap.atomic.compare_mask,optional"`
	AtomicOrigID *int64    `parquet:"rdmap.atomic.orig_req_id,optional"`
	AtomicOrig   *uint64   `parquet:"rdmap.atomic.orig_value,optional"`
	AtomicCut    *int64    `parquet:"rdmap.atomic.captured,optional"`
	TermLayer    *int64    `parquet:"rdmap.term.layer,optional"`
	TermEType    *int64    `parquet:"rdmap.term.etype,optional"`
	TermCode     *int64    `parquet:"rdmap.term.code,optional"`
	TermM        *bool     `parquet:"rdmap.term.m,optional"`
	TermD        *bool     `parquet:"rdmap.term.d,optional"`
	TermR        *bool     `parquet:"rdmap.term.r,optional"`
	TermSegLen   *int64    `parquet:"rdmap.term.ddp_seg_len,optional"`
	TermDDPT     *bool     `parquet:"rdmap.term.ddp.t,optional"`
	TermDDPL     *bool     `parquet:"rdmap.term.ddp.l,optional"`
	TermDDPDV    *int64    `parquet:"rdmap.term.ddp.dv,optional"`
	TermDDPRsvd  *int64    `parquet:"rdmap.term.ddp.rsvd,optional"`
	TermDDPSTag  *int64    `parquet:"rdmap.term.ddp.stag,optional"`
	TermDDPTO    *uint64   `parquet:"rdmap.term.ddp.to,optional"`
	TermDDPQN    *int64    `parquet:"rdmap.term.ddp.qn,optional"`
	TermDDPMSN   *int64    `parquet:"rdmap.term.ddp.msn,optional"`
	TermDDPMO    *int64    `parquet:"rdmap.term.ddp.mo,optional"`
	TermRV       *int64    `parquet:"rdmap.term.rdmap.rv,optional"`
	TermOpcode   *int64    `parquet:"rdmap.term.rdmap.opcode,optional"`
	TermName     *string   `parquet:"rdmap.term.rdmap.name,optional,dict"`
	TermSinkSTag *int64    `parquet:"rdmap.term.rdmap.read.sink_stag,optional"`
	TermSinkTO   *uint64   `parquet:"rdmap.term.rdmap.read.sink_to,optional"`
	TermSize     *int64    `parquet:"rdmap.term.rdmap.read.size,optional"`
	TermSrcSTag  *int64    `parquet:"rdmap.term.rdmap.read.src_stag,optional"`
	TermSrcTO    *uint64   `parquet:"rdmap.term.rdmap.read.src_to,optional"`
	TermSiw      *bool     `parquet:"rdmap.term.siw_layout,optional"`
	TermText     *string   `parquet:"rdmap.term.text,optional,dict"`
	TermSegFrame *int64    `parquet:"rdmap.term.segment_frame,optional"`
	RDMAPImm     *uint64   `parquet:"rdmap.immediate,optional"`
	PayloadLen   *int64    `parquet:"payload_len,optional"`
	Findings     []Finding `parquet:"findings,optional,list"`
}

// MessageRow is a row of the messages table: one RDMA message, its DDP
// segments gathered (RFC 5041 §5, RFC 5040 §4).
type MessageRow struct {
	V     int64  `parquet:"v"`
	Type  string `parquet:"type,dict"`
	Frame int64  `parquet:"frame"`
	TS    string `parquet:"ts"`
	Conn  int64  `parquet:"conn"`

	Src          *string `parquet:"src,optional,dict"`
	Dst          *string `parquet:"dst,optional,dict"`
	Dir          *string `parquet:"dir,optional,dict"`
	Opcode       *int64  `parquet:"opcode,optional"`
	Name         *string `parquet:"name,optional,dict"`
	Segments     *int64  `parquet:"segments,optional"`
	Length       *int64  `parquet:"length,optional"`
	FirstFrame   *int64  `parquet:"first_frame,optional"`
	LastFrame    *int64  `parquet:"last_frame,optional"`
	STag         *int64  `parquet:"stag,optional"`
	TO           *uint64 `parquet:"to,optional"`
	QN           *int64  `parquet:"qn,optional"`
	MSN          *int64  `parquet:"msn,optional"`
	RequestFrame *int64  `parquet:"request_frame,optional"`
	LatencyNS    *int64  `parquet:"latency_ns,optional"`
}

// FindingRow is a row of the findings table.
type FindingRow struct {
	V     int64  `parquet:"v"`
	Type  string `parquet:"type,dict"`
	Frame int64  `parquet:"frame"`
	TS    string `parquet:"ts"`
	Conn  int64  `parquet:"conn"`

	Severity *string `parquet:"severity,optional,dict"`
	Code     *string `parquet:"code,optional,dict"`
	Msg      *string `parquet:"msg,optional,dict"`
	Frames   []int64 `parquet:"frames,optional,list"`
	Ref      *string `parquet:"ref,optional,dict"`
}

// ConnRow is a row of the conns table: a connection's summary. "mpa.rev",
// "mpa.ird", "mpa.ord", "ddp_version", "initiator", "responder" and the
// "interop.*" columns are null where the JSON Lines have null. The
// JSON Lines "interop.expected" and "interop.observed" are either the
// string "close" (column "interop.expected") or an object (columns
// "interop.expected.v", ...).
type ConnRow struct {
	V     int64  `parquet:"v"`
	Type  string `parquet:"type,dict"`
	Frame int64  `parquet:"frame"`
	TS    string `parquet:"ts"`
	Conn  int64  `parquet:"conn"`

	Initiator     *string  `parquet:"initiator,optional,dict"`
	Responder     *string  `parquet:"responder,optional,dict"`
	Endpoints     []string `parquet:"endpoints,optional,list"` // when the initiator is unknown
	State         *string  `parquet:"state,optional,dict"`
	MPARev        *int64   `parquet:"mpa.rev,optional"`
	MPACRC        *bool    `parquet:"mpa.crc,optional"`
	MPAMarkersI2R *bool    `parquet:"mpa.markers_i2r,optional"`
	MPAMarkersR2I *bool    `parquet:"mpa.markers_r2i,optional"`
	MPAEnhanced   *bool    `parquet:"mpa.enhanced,optional"`
	MPAIRD        *int64   `parquet:"mpa.ird,optional"`
	MPAORD        *int64   `parquet:"mpa.ord,optional"`
	MPAP2P        *bool    `parquet:"mpa.p2p,optional"`
	MPARTR        []string `parquet:"mpa.rtr,optional,list"`
	MPARejected   *bool    `parquet:"mpa.rejected,optional"`
	DDPVersion    *int64   `parquet:"ddp_version,optional"`
	IopInitiator  *string  `parquet:"interop.initiator,optional,dict"`
	IopResponder  *string  `parquet:"interop.responder,optional,dict"`
	IopRow        *string  `parquet:"interop.row,optional,dict"`
	IopExpected   *string  `parquet:"interop.expected,optional,dict"`
	IopExpV       *int64   `parquet:"interop.expected.v,optional"`
	IopExpMI2R    *bool    `parquet:"interop.expected.markers_i2r,optional"`
	IopExpMR2I    *bool    `parquet:"interop.expected.markers_r2i,optional"`
	IopObserved   *string  `parquet:"interop.observed,optional,dict"`
	IopObsV       *int64   `parquet:"interop.observed.v,optional"`
	IopObsMI2R    *bool    `parquet:"interop.observed.markers_i2r,optional"`
	IopObsMR2I    *bool    `parquet:"interop.observed.markers_r2i,optional"`
	IopMatch      *bool    `parquet:"interop.match,optional"`
	Midstream     *bool    `parquet:"midstream,optional"`
	FPDUs         *int64   `parquet:"fpdus,optional"`
	Messages      *int64   `parquet:"messages,optional"`
	Octets        *int64   `parquet:"octets,optional"`
	CRCErrors     *int64   `parquet:"crc_errors,optional"`
	Findings      *int64   `parquet:"findings,optional"`
	Retrans       *int64   `parquet:"retransmissions,optional"`
	ZeroWindows   *int64   `parquet:"zero_windows,optional"`
	Stalls        *int64   `parquet:"stalls,optional"`
	StalledNS     *int64   `parquet:"stalled_ns,optional"`
	CutSegments   *int64   `parquet:"cut_segments,optional"`
	FirstFrame    *int64   `parquet:"first_frame,optional"`
	LastFrame     *int64   `parquet:"last_frame,optional"`
}

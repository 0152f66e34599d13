package flows

import (
	"net/netip"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// RecordType names what a Record describes (JSONL.md "type").
type RecordType uint8

// Record types.
const (
	RecMPA RecordType = iota + 1
	RecFPDU
	RecMessage
	RecFinding
	RecConn
)

// Internal record types a Parallel worker queues for the merge; they never
// reach a consumer.
const (
	recLocal   RecordType = 252 // what a Local flushed for a connection that retired (settle.go)
	recNewID   RecordType = 254 // a connection id was allocated at Frame
	recConnEnd RecordType = 255 // the connection was finished
)

var recNames = [...]string{"", "mpa", "fpdu", "message", "finding", "conn",
	RecCM: "cm", RecDDPSCTP: "ddp", RecSCTPSession: "sctp_session", RecExtConn: "conn"}

// String returns the JSON Lines type name.
func (t RecordType) String() string {
	if int(t) < len(recNames) && recNames[t] != "" {
		return recNames[t]
	}
	return "unknown"
}

// Dir is the direction of a record on its connection.
type Dir uint8

// Directions. DirUnknown when neither a SYN nor an MPA Request told which
// side initiated.
const (
	DirUnknown Dir = iota
	DirI2R
	DirR2I
)

// String returns "i2r", "r2i" or "".
func (d Dir) String() string {
	switch d {
	case DirI2R:
		return "i2r"
	case DirR2I:
		return "r2i"
	}
	return ""
}

// Reverse returns the opposite direction.
func (d Dir) Reverse() Dir {
	switch d {
	case DirI2R:
		return DirR2I
	case DirR2I:
		return DirI2R
	}
	return DirUnknown
}

// CRCStatus is the verdict on an FPDU's CRC field (RFC 5044 §4.1).
type CRCStatus uint8

// CRC verdicts.
const (
	CRCUnchecked  CRCStatus = iota // CRC not negotiated: the field is not checked
	CRCOK                          // matches
	CRCBad                         // does not match
	CRCIncomplete                  // octets of the FPDU are missing from the capture
)

var crcNames = [...]string{"unchecked", "ok", "bad", "incomplete"}

// String returns the JSON value: ok, bad, unchecked, incomplete.
func (s CRCStatus) String() string {
	if int(s) < len(crcNames) {
		return crcNames[s]
	}
	return "unknown"
}

// Record is one event for consumers: an MPA Request/Reply, an FPDU with its
// DDP/RDMAP headers, a gathered RDMA message, a finding, or a connection
// summary. Records never alias decoder buffers: a consumer may keep them.
type Record struct {
	Type RecordType
	// stream is the TCP stream number plus one, 0 for none (TCPStream);
	// set as the record is emitted (streams.go).
	stream int32

	Frame uint64    // frame holding the record's first octet
	TS    time.Time // that frame's timestamp
	Conn  int       // connection id, 0-based in order of first appearance
	Src   netip.AddrPort
	Dst   netip.AddrPort
	Dir   Dir

	MPA     *MPARecord
	FPDU    *FPDURecord
	Message *MessageRecord
	Finding *dissect.Finding
	Summary *ConnSummary
	CM      *CMRecord   // RecCM, and RecExtConn of a CM exchange (record_ext.go)
	SCTP    *SCTPRecord // RecDDPSCTP, RecSCTPSession, and RecExtConn of an SCTP association

	order uint64  // tie-breaker for deterministic output order
	box   boxKind // what holds the record, for Options.Recycle
	// flushed: recConnEnd's Local was flushed (takeLocal)
	flushed bool
	ext     bool   // recNewID: the id is not a TCP connection's (streams.go)
	pkt     uint32 // Parallel: index in its worker's batch of the packet that queued it
	local   any    // Parallel: what the worker's Local flushed for the connection (recConnEnd)
}

// MPARecord is an MPA Request or Reply frame (RFC 5044 §7.1).
type MPARecord struct {
	Seq         uint32 // absolute TCP sequence number of the frame's first octet
	Frame       mpa.Frame
	HasEnhanced bool
	Enhanced    mpa.Enhanced
	P2P         bool
	RTR         mpa.RTRSet
	Frames      []uint64
	Findings    []dissect.Finding
}

// Marker is one MPA marker found inside an FPDU (RFC 5044 §5.1).
type Marker struct {
	Seq     uint32
	FPDUPtr uint16
	Rsvd    uint16
	OK      bool
}

// FPDURecord is one FPDU and the DDP segment in it.
type FPDURecord struct {
	Seq       uint32   // absolute TCP sequence number of the first octet, a leading marker included
	Off       uint64   // stream offset of the same octet
	Len       int      // octets on the wire: markers, length field, ULPDU, pad, CRC
	Frames    []uint64 // every frame that carried octets of this FPDU
	ULPDULen  uint16
	Pad       int
	Markers   []Marker
	CRC       uint32
	CRCStatus CRCStatus
	// CRCCut: the capture does not hold the CRC field (snap length, a
	// gap): CRC is 0, not a value read, and CRCStatus is CRCIncomplete.
	CRCCut bool
	// Seg is the decoded DDP segment; Seg.Payload is nil (records do not keep
	// payload), PayloadLen says how long it was. SegOK is false when the
	// ULPDU could not be decoded (SegErr says why).
	Seg        rdmap.Segment
	SegOK      bool
	SegErr     error
	PayloadLen int
	// Preview holds the first octets of the payload (at most PreviewLen), for
	// the hex view; the text output escapes it.
	Preview    []byte
	Findings   []dissect.Finding
	previewBuf [PreviewLen]byte
	// TermFrame, for a Terminate, is the frame of the segment it
	// terminates, found by matching the terminated DDP header against the
	// segments the other side sent (0 when not found).
	TermFrame uint64
}

// PreviewLen is how many payload octets an FPDURecord keeps.
const PreviewLen = 64

// MessageRecord is one RDMA message, its DDP segments gathered (RFC 5041 §5).
type MessageRecord struct {
	Opcode     rdmap.Opcode
	Segments   int
	Length     uint64
	FirstFrame uint64
	LastFrame  uint64
	// Tagged messages: the STag and the TO of the first segment.
	Tagged bool
	STag   uint32
	TO     uint64
	// Untagged messages: queue and message sequence number.
	QN, MSN uint32
	// RDMA Read Response: the frame of the Read Request it answers and the
	// time from the request's frame to the frame that completes the
	// response's last segment; RequestFrame is 0 when the request was not
	// seen.
	RequestFrame uint64
	Latency      time.Duration
	// RTR: the Read Request answered is the zero-length RDMA Read a
	// peer-to-peer setup sends as its RTR (RFC 6581 §4): its latency is
	// the peer's connection set-up, not a data transfer's.
	RTR bool
	// SCTP: the message came over an SCTP association (DDP over SCTP,
	// RFC 5043), not over MPA and TCP. Not a JSON key: the connection's
	// conn record names the transport.
	SCTP bool
}

// ConnSummary describes a connection when it closes or the capture ends.
type ConnSummary struct {
	Initiator, Responder netip.AddrPort // zero when unknown
	InitiatorKnown       bool
	A, B                 netip.AddrPort // the endpoints, in order of first appearance
	State                string
	HaveRequest          bool
	HaveReply            bool
	Rev                  uint8
	CRC                  bool
	// MarkersI2R and MarkersR2I say whether the FPDUs of each direction
	// carry MPA markers: as negotiated, or as found in the FPDUs of a
	// capture without the MPA exchange (a mid-stream capture's recovered
	// grid). When the initiator is unknown, I2R is from A to B.
	MarkersI2R bool
	MarkersR2I bool
	Enhanced   bool
	IRD, ORD   uint16
	P2P        bool
	RTR        mpa.RTRSet
	Rejected   bool
	DDPVersion int // -1 when no FPDU was seen
	Midstream  bool
	FPDUs      int
	Messages   int
	Octets     uint64
	CRCErrors  int
	Findings   int
	TCP        TCPHealth
	FirstFrame uint64
	LastFrame  uint64
	// Interop is the verdict under the RNIC interoperability matrix (nil
	// without a captured MPA exchange, or for a rejected connection).
	Interop *Interop
}

// TCPHealth counts what went wrong underneath the iWARP connection, as
// the capture shows it (flows/stall.go).
type TCPHealth struct {
	// Retransmissions counts the segments (octets or a FIN) that started
	// before the highest sequence number their side had already sent:
	// retransmissions, and segments that overtook one another on the way
	// (tshark's tcp.analysis.retransmission, fast_retransmission,
	// spurious_retransmission and out_of_order). Window probes and
	// keep-alives (one octet or none, just before it) are not counted,
	// nor the octet of a zero window probe (tshark's
	// zero_window_probe) when it is sent again as the window opens.
	Retransmissions int
	// ZeroWindows counts the segments that advertised a zero window
	// (tshark's tcp.analysis.zero_window).
	ZeroWindows int
	// Stalls counts the tcp.stall pauses, to the end of the capture
	// included, and Stalled is their time.
	Stalls  int
	Stalled time.Duration
	// Cut counts the segments whose end the capture's snap length cut
	// (cap.snaplen): their FPDUs are incomplete, their CRCs unchecked.
	Cut int
}

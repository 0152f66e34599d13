package synth

import (
	"errors"
	"net/netip"
	"strconv"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// Scenario describes one capture: its connections, what each connection
// carries and how the capture is damaged. The same Scenario (Seed included)
// always yields byte-identical pcap and truth files.
type Scenario struct {
	// Name identifies the scenario (Named sets it); it does not change the
	// output.
	Name string
	// Seed drives every choice not fixed by the scenario: ISNs left at zero,
	// payload octets, IP IDs, TCP windows and frame timestamps.
	Seed int64
	// Start is the timestamp of the capture's first frame; the zero value
	// means 2024-01-01T00:00:00Z.
	Start time.Time
	// Conns are the TCP connections, numbered 0, 1, ... in this order (the
	// "conn" key of the truth records).
	Conns []Conn
	// LinkType is the pcap link type; the zero value is Ethernet.
	LinkType LinkType
	// Snaplen cuts every frame to this many octets (link header included)
	// and is written in the pcap file header; 0 means 262144, no cut.
	Snaplen int
}

// LinkType selects the link-layer framing of the pcap file.
type LinkType uint8

// Link types.
const (
	// LinkEthernet is DLT_EN10MB (1), Ethernet II frames with locally
	// administered MAC addresses derived from the IP addresses.
	LinkEthernet LinkType = iota
	// LinkRaw is DLT_RAW (101): every frame starts with the IPv4 or IPv6
	// header.
	LinkRaw
	// LinkSLL is DLT_LINUX_SLL (113), the Linux "cooked" header of
	// tcpdump -i any.
	LinkSLL
)

var linkTypeNames = [...]string{"ethernet", "raw", "sll"}

// String returns "ethernet", "raw" or "sll".
func (l LinkType) String() string {
	if int(l) < len(linkTypeNames) {
		return linkTypeNames[l]
	}
	return "linktype(" + strconv.Itoa(int(l)) + ")"
}

// Dir is the direction of a segment or operation: initiator to responder
// (the initiator sends the SYN and the MPA Request) or back.
type Dir uint8

// Directions.
const (
	I2R Dir = 0 // initiator -> responder
	R2I Dir = 1 // responder -> initiator
)

// String returns "i2r" or "r2i", the values of the truth "dir" key.
func (d Dir) String() string {
	if d == R2I {
		return "r2i"
	}
	return "i2r"
}

// Other returns the opposite direction.
func (d Dir) Other() Dir { return d ^ 1 }

// Conn is one TCP connection carrying iWARP.
//
// The zero value of most fields means "the usual": DV and RV follow the
// negotiated MPA revision, markers and CRC follow the M and C bits, MSS is
// 1448 and every DDP segment is sized to fit one TCP segment.
type Conn struct {
	// Initiator and Responder are the endpoints, both IPv4 or both IPv6.
	// The initiator sends the SYN and the MPA Request.
	Initiator, Responder netip.AddrPort
	// ISNI and ISNR are the initial sequence numbers; 0 derives them from
	// the seed. Values near 2^32 make the stream wrap (RFC 1982).
	ISNI, ISNR uint32
	// Handshake emits SYN, SYN-ACK and ACK before the data.
	Handshake bool
	// StartDelay delays the connection's first frame from Scenario.Start.
	StartDelay time.Duration

	// MPA describes the MPA Request/Reply exchange (RFC 5044 §7.1). nil
	// means an RDMAC (MPA v1.0) stream: no Request or Reply, markers and
	// CRC in both directions and DV = RV = 0 (PROTOCOL.md E).
	MPA *MPAParams

	// DV and RV override the DDP and RDMAP version (RFC 5041 §4.2, RFC 5040
	// §4.2). nil derives them: 0 for RDMAC streams or when either MPA frame
	// has Rev 0, else 1.
	DV, RV *uint8
	// MarkersI2R, MarkersR2I and CRC override the negotiated values. nil
	// derives them (RFC 5044 §7.1.2): the Reply's M bit turns on markers
	// initiator->responder, the Request's M bit responder->initiator, and
	// CRC is on when either frame has C.
	MarkersI2R, MarkersR2I, CRC *bool
	// Origin places the marker grid (RFC 5044 §5.1); the zero value puts it
	// at each direction's first FPDU octet.
	Origin GridOrigin

	// Ops are the RDMA operations, in the order the applications post them.
	Ops []Op

	// MSS is the largest TCP payload; 0 means 1448.
	MSS int
	// Segmentation chooses how the byte stream is cut into TCP segments.
	Segmentation Segmentation
	// ExactSegments, for SegmentExact, lists the TCP payload sizes of each
	// direction's data segments in order (index I2R, R2I); when a list runs
	// out, MSS segmentation takes over. A segment leaves once all its
	// octets are written, so it may carry parts of several writes, and a
	// direction's tail may wait while the other side speaks.
	ExactSegments [2][]int
	// MaxULPDU caps the DDP payload octets carried by one DDP segment (the
	// ULPDU is this plus the 14- or 18-octet DDP/RDMAP header); longer
	// messages are split into several segments (MO/TO advance, L on the
	// last). 0 derives it per direction from MULPDU (RFC 5044 §8) so that
	// an FPDU fits one TCP segment.
	MaxULPDU int
	// AckEvery makes the receiver send a pure ACK after this many data
	// segments; 0 means 2, -1 sends no pure ACKs (data still carries ACK).
	AckEvery int
	// Window is the TCP window both sides advertise; 0 picks one from the
	// seed.
	Window uint16

	// Impair damages what the capture shows.
	Impair Impairments
	// Close ends the connection.
	Close Close
}

// GridOrigin says where a direction's 512-octet marker grid starts.
type GridOrigin uint8

// Grid origins (PROTOCOL.md A.6).
const (
	// OriginFirstFPDU anchors the grid at the first octet after the MPA
	// Request (initiator->responder) or Reply (responder->initiator), as RFC
	// 5044 §5.1 does.
	OriginFirstFPDU GridOrigin = iota
	// OriginStreamStart anchors it at the first octet after the SYN
	// (ISN+1), the alternative reading for RDMAC streams. With MPA frames
	// whose length is not a multiple of 4 the markers then fall at
	// unaligned FPDU offsets, for example inside ULPDU_Length.
	OriginStreamStart
)

// MPAParams is the MPA Request/Reply exchange (RFC 5044 §7.1, RFC 6581).
type MPAParams struct {
	// Request is sent by the initiator.
	Request MPAFrame
	// Reply is sent by the responder, unless NoReply. Reply.R rejects the
	// connection: no FPDU follows and Ops must be empty.
	Reply MPAFrame
	// NoReply leaves the Request unanswered (the responder just closes, as
	// siw does for Rev 3 or a bad key).
	NoReply bool
}

// MPAFrame is one MPA Request or Reply (RFC 5044 §7.1.1, RFC 6581 §8).
type MPAFrame struct {
	// Rev is written as is: 0 (RDMAC interop), 1 (RFC 5044), 2 (RFC 6581)
	// or anything else.
	Rev uint8
	// M asks the peer to send markers; C asks for CRC; R (Reply only)
	// rejects the connection.
	M, C, R bool
	// S sets the Enhanced flag without adding Enhanced data (malformed on
	// purpose); Enhanced != nil sets it with data.
	S bool
	// Enhanced, when not nil, sets S and starts the Private Data with the
	// Enhanced RDMA Connection Establishment Data (RFC 6581 §9).
	Enhanced *mpa.Enhanced
	// Res holds the four reserved bits of the flags octet.
	Res uint8
	// PD is the ULP's private data (after the Enhanced data, if any).
	PD []byte
}

// Segmentation is how a direction's byte stream becomes TCP segments.
type Segmentation uint8

// Segmentation modes.
const (
	// SegmentMSS coalesces consecutive writes in one direction and cuts the
	// byte stream at MSS boundaries, whatever the FPDU boundaries: FPDUs
	// span segments and segments hold several FPDUs.
	SegmentMSS Segmentation = iota
	// SegmentPerRecord sends each MPA frame and each FPDU in a segment of
	// its own (cut at the MSS only when it is larger), as siw does without
	// GSO.
	SegmentPerRecord
	// SegmentExact cuts each direction's stream at Conn.ExactSegments.
	SegmentExact
)

// OpKind is the kind of RDMA operation.
type OpKind uint8

// Operation kinds (RFC 5040 §4, RFC 7306).
const (
	Send      OpKind = iota // Send (untagged, QN 0)
	SendInv                 // Send with Invalidate (STag = the STag to invalidate)
	SendSE                  // Send with Solicited Event
	SendSEInv               // Send with SE and Invalidate
	Write                   // RDMA Write (tagged: STag, TO)
	// Read is an RDMA Read Request in Dir (QN 1) and, unless NoResponse,
	// the RDMA Read Response segments back (tagged with the sink STag/TO).
	Read
	// Terminate sends a Terminate (QN 2) with Op.Term.
	Terminate
	Immediate   // RFC 7306 Immediate Data (8 octets in Op.Immediate)
	ImmediateSE // RFC 7306 Immediate Data with Solicited Event
	// Atomic is an RFC 7306 Atomic Request in Dir and, unless NoResponse,
	// the Atomic Response back.
	Atomic
	// RawULPDU sends Op.Payload as the whole ULPDU of one FPDU, with no
	// DDP header added (for zero-length FPDUs and malformed segments). Its
	// truth record has no ddp or rdmap keys.
	RawULPDU
)

var opKindNames = [...]string{"send", "send_inv", "send_se", "send_se_inv", "write", "read", "terminate", "immediate", "immediate_se", "atomic", "raw_ulpdu"}

// String returns the lowercase kind name.
func (k OpKind) String() string {
	if int(k) < len(opKindNames) {
		return opKindNames[k]
	}
	return "opkind(" + strconv.Itoa(int(k)) + ")"
}

// Op is one RDMA operation.
type Op struct {
	// Dir is the direction the operation's first message travels.
	Dir  Dir
	Kind OpKind
	// Size is the message payload length (Read: the RDMA Read Message
	// Size). When Payload is set and Size is 0, Size is len(Payload).
	Size int
	// STag and TO: the Data Sink STag and tagged offset of a Write or a Read
	// (the Read Response goes there); the STag to invalidate for SendInv
	// and SendSEInv.
	STag uint32
	TO   uint64
	// SrcSTag and SrcTO are a Read's Data Source STag and tagged offset.
	SrcSTag uint32
	SrcTO   uint64
	// Payload, when not nil, is the payload (repeated to Size when
	// shorter); otherwise Pattern fills it.
	Payload []byte
	// Pattern fills the payload when Payload is nil.
	Pattern Pattern
	// Term is the Terminate header of a Terminate.
	Term rdmap.Terminate
	// Immediate is the data of an Immediate op.
	Immediate uint64
	// AtomicReq and AtomicResp are the headers of an Atomic op.
	AtomicReq  rdmap.AtomicRequest
	AtomicResp rdmap.AtomicResponse
	// NoResponse omits the Read Response or Atomic Response.
	NoResponse bool
	// MaxULPDU overrides Conn.MaxULPDU for this operation.
	MaxULPDU int
	// QN overrides the queue number of an untagged message (nil: the
	// RDMAP queue for the opcode).
	QN *uint32
	// Pause is the time the application waits before posting the
	// operation (think time): what the direction that was sending has
	// written is sent first, and the operation's first segment comes
	// Pause (at microsecond resolution) later than it would have. With
	// SegmentExact, octets waiting for their exact segment size go out
	// after the pause.
	Pause time.Duration
}

// Pattern chooses the payload octets when Op.Payload is nil.
type Pattern uint8

// Payload patterns.
const (
	PatternSeeded  Pattern = iota // pseudo-random octets from the seed
	PatternCounter                // octet i of the message is i mod 256
	PatternZero                   // all zero
	PatternText                   // printable ASCII text
)

// SegRef names a data segment: the Index-th (0-based) TCP segment carrying
// payload in direction Dir, counted before any impairment.
type SegRef struct {
	Dir   Dir
	Index int
}

// FPDURef names the Index-th (0-based) FPDU sent in direction Dir.
type FPDURef struct {
	Dir   Dir
	Index int
}

// Impairments damage what the capture shows of a connection. Segment
// references count data segments before any impairment; a segment may
// appear in more than one list except Drop with Duplicate or Conflict.
type Impairments struct {
	// Drop removes segments from the capture; they are never seen (the
	// receiver still ACKs them: capture loss, not network loss).
	Drop []SegRef
	// Duplicate adds an identical retransmission a few frames later.
	Duplicate []SegRef
	// Conflict adds a retransmission of the same sequence range a few
	// frames later whose middle octet is inverted (the first copy is the
	// truth).
	Conflict []SegRef
	// Reorder swaps each listed segment with the next data segment of the
	// same direction in capture order.
	Reorder []SegRef
	// CorruptCRC inverts the CRC field of these FPDUs (after markers and
	// CRC are computed).
	CorruptCRC []FPDURef
	// ReverseCRC sends the CRC field of these FPDUs with its four octets
	// in reverse order (most significant first), as a sender that writes
	// the CRC32c in the wrong byte order does (PROTOCOL.md A.5).
	ReverseCRC []FPDURef
	// StartAt starts the capture mid-stream; nil captures from the start.
	StartAt *StartAt
}

// StartAt says where the capture of a connection starts.
type StartAt struct {
	// Frame drops the connection's first Frame frames (counted after the
	// other impairments).
	Frame int
	// When Offset > 0, capture starts at the first frame that carries
	// stream offset Offset (0 = the first octet after the SYN) in direction
	// Dir, and Frame is ignored.
	Dir    Dir
	Offset uint64
}

// CloseKind is how a connection ends.
type CloseKind uint8

// Close kinds.
const (
	CloseFIN  CloseKind = iota // FIN both ways, then the last ACK
	CloseRST                   // one RST
	CloseNone                  // the capture ends with the connection open
)

// Close ends a connection.
type Close struct {
	Kind CloseKind
	// By is the side that closes first (or resets). For a rejected
	// connection the responder closes whatever By says.
	By Dir
}

// Errors returned by Generate for scenarios that cannot be built.
var (
	ErrNoConns      = errors.New("synth: scenario has no connections")
	ErrAddrFamily   = errors.New("synth: initiator and responder differ in address family")
	ErrOpsRejected  = errors.New("synth: rejected connection has operations")
	ErrBadOp        = errors.New("synth: invalid operation")
	ErrBadImpair    = errors.New("synth: invalid impairment")
	ErrBadSegSizes  = errors.New("synth: invalid exact segment size")
	ErrULPDUTooLong = errors.New("synth: ULPDU longer than 65535 octets")
	ErrPDTooLong    = errors.New("synth: MPA private data longer than 65535 octets")
)

// U8 returns a pointer to v, for Conn.DV and Conn.RV.
func U8(v uint8) *uint8 { return &v }

// U32 returns a pointer to v, for Op.QN.
func U32(v uint32) *uint32 { return &v }

// Bool returns a pointer to v, for Conn.MarkersI2R, MarkersR2I and CRC.
func Bool(v bool) *bool { return &v }

// defaultStart is the timestamp of the first frame when Scenario.Start is zero.
var defaultStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	defaultMSS     = 1448
	defaultSnaplen = 262144
)

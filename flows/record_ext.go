package flows

import (
	"net/netip"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ibcm"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/dissect/sctp"
)

// Record types of the transports other than MPA over TCP (JSONL.md "cm",
// "ddp", "sctp_session"; RecExtConn is written with type "conn").
const (
	// RecCM is one InfiniBand CM message over RoCEv2 or native
	// InfiniBand (Record.CM).
	RecCM RecordType = iota + 100
	// RecDDPSCTP is one DDP segment carried in SCTP DATA chunks of PPID 16
	// (Record.SCTP; RFC 5043).
	RecDDPSCTP
	// RecSCTPSession is one DDP Stream Session Control message, an SCTP
	// DATA chunk of PPID 17 (Record.SCTP; RFC 5043, seed 003 §7).
	RecSCTPSession
	// RecExtConn summarises a CM exchange (Record.CM.Summary, transport
	// "ib_cm") or an SCTP association carrying DDP (Record.SCTP.Summary,
	// transport "sctp") at the end of the capture. Its JSON type is "conn".
	RecExtConn
)

// Transport names of RecExtConn summaries (JSON "transport").
const (
	TransportIBCM = "ib_cm"
	TransportSCTP = "sctp"
)

// CMRecord is one Communication Management message carried over RoCEv2
// (IBA Annex A17) or native InfiniBand, and what the decoder made of it,
// or (Summary set) the summary of the CM exchange a RecExtConn record
// describes.
//
// Over RoCEv2 the record's Src and Dst are the IP addresses with the UDP
// ports. Over native InfiniBand (HasLRH) there is no IP: the LRH's SLID
// and DLID name the ends, and Src and Dst are the GRH's source and
// destination GIDs (port 0) when the packet has a GRH, the zero AddrPort
// otherwise. Dir is i2r for messages from the side that sent the REQ (or
// SIDR_REQ).
type CMRecord struct {
	// LRH and GRH are the routing headers of a native InfiniBand packet
	// (IBA Vol. 1 §7.7, §8.3): HasLRH is set for every native packet,
	// HasGRH when it had a Global Route Header. RoCEv2 has neither.
	HasLRH, HasGRH bool
	LRH            ibcm.LRH
	GRH            ibcm.GRH
	BTH            ibcm.BTH
	DETH           ibcm.DETH
	MAD            ibcm.MAD
	// Msg is the message; Msg.PrivateData is a copy, owned by the record.
	Msg ibcm.Message
	// PD is the private data read with the layout the exchange's service
	// ID calls for (PD.Consumer aliases Msg.PrivateData).
	PD ibcm.PrivateData
	// ServiceID is the exchange's service ID (from its REQ or SIDR_REQ),
	// HasService false when that was not captured.
	ServiceID  ibcm.ServiceID
	HasService bool
	// ICRC is the invariant CRC as carried; ICRCStatus says whether it
	// matches the packet: ok or bad over RoCEv2, incomplete when the
	// capture cut the packet, unchecked over native InfiniBand (whose ICRC
	// is not computed, see Decoder) or when the IP header was not found.
	ICRC       uint32
	ICRCStatus CRCStatus
	Findings   []dissect.Finding
	Summary    *CMSummary
}

// CMSummary describes a CM exchange: the messages tied together by
// communication ID (REQ -> [MRA] -> REP -> RTU ... DREQ -> DREP, or REJ),
// or a SIDR_REQ and its SIDR_REP by request ID.
type CMSummary struct {
	// Initiator and Responder are the REQ's source and destination: IP
	// addresses over RoCEv2; over native InfiniBand (Native) the GIDs of
	// the last packet with a GRH, invalid when no packet had one.
	Initiator, Responder netip.Addr
	InitiatorKnown       bool // false when the REQ was not captured
	// Native is set for an exchange over native InfiniBand, whose ends
	// are InitiatorLID and ResponderLID (the LRH's SLID and DLID).
	Native                     bool
	InitiatorLID, ResponderLID uint16
	// State: requested, replied, established, rejected, disconnecting,
	// closed, sidr_requested, sidr_resolved or sidr_rejected.
	State string
	SIDR  bool
	// LocalCommID is the initiator's communication ID (the request ID for
	// SIDR), RemoteCommID the responder's.
	LocalCommID, RemoteCommID uint32
	ServiceID                 ibcm.ServiceID
	HasService                bool
	PDKind                    ibcm.PDKind // of the REQ's private data
	// QPNs and starting PSNs of the initiator (REQ) and responder (REP,
	// or the SIDR_REP's QPN).
	QPNI, QPNR         uint32
	PSNI, PSNR         uint32
	HaveREQ, HaveREP   bool
	ResponderResources uint8 // the REP's, else the REQ's
	InitiatorDepth     uint8
	Rejected           bool
	Reason             ibcm.RejectReason
	Messages           int
	// DataPackets and DataOctets count the packets sent to the two QPs
	// after the CM exchange named them, and their octets from the BTH to
	// the ICRC (the UDP payload over RoCEv2; without LRH, GRH and VCRC
	// over native InfiniBand).
	DataPackets, DataOctets uint64
	Findings                int
	FirstFrame, LastFrame   uint64
}

// SCTPRecord is one DDP segment or DDP Stream Session Control message
// carried over SCTP (RFC 5043), or (Summary set) the summary of an SCTP
// association that carried DDP.
type SCTPRecord struct {
	// The DATA chunk (the first one when the user message was fragmented).
	Stream uint16
	SSN    uint16
	TSN    uint32
	PPID   uint32
	Flags  uint8
	// Frames lists the frames of every fragment of the user message.
	Frames []uint64
	// DDP segments (RecDDPSCTP): as FPDURecord's fields of the same names.
	Seg        rdmap.Segment
	SegOK      bool
	SegErr     error
	PayloadLen int
	// Session control (RecSCTPSession); Session.PD is a copy.
	Session     sctp.SessionControl
	HasEnhanced bool
	Enhanced    mpa.Enhanced // read with seed 003's flag meanings
	RTR         mpa.RTRSet
	Findings    []dissect.Finding
	Summary     *SCTPSummary
}

// SCTPSummary describes an SCTP association that carried DDP.
type SCTPSummary struct {
	Initiator, Responder netip.AddrPort // the side that sent INIT or the session Initiate
	InitiatorKnown       bool
	A, B                 netip.AddrPort // the endpoints in order of first appearance
	// State: initiated, accepted, rejected, terminated, or streaming (DDP
	// segments without session control).
	State          string
	Enhanced       bool
	IRD, ORD       uint16
	RTR            mpa.RTRSet
	DDPVersion     int // -1 when no segment was seen
	Segments       int
	Messages       int
	Octets         uint64
	ChecksumErrors int
	Findings       int
	FirstFrame     uint64
	LastFrame      uint64
}

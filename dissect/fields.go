package dissect

import "strings"

// FieldType says how a field's value is represented in JSON, compared in
// display filters and printed in the text tree.
type FieldType uint8

// Field types.
const (
	TypeNone   FieldType = iota // a protocol or subtree: present or not
	TypeBool                    // true/false
	TypeUint                    // unsigned integer, printed in decimal
	TypeHex                     // unsigned integer, printed in hexadecimal (STags, offsets, CRCs)
	TypeString                  // text (enums are lowercase strings)
	TypeBytes                   // octets, lowercase hex in JSON
	TypeList                    // a JSON array
	TypeObject                  // a JSON object
)

var typeNames = [...]string{"none", "bool", "uint", "hex", "string", "bytes", "list", "object"}

// String returns the type's name.
func (t FieldType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "unknown"
}

// Field describes one named field. Name is the project's name, which is also
// the JSON Lines key and the display-filter name; Aliases are Wireshark's
// names for the same field (iwarp_mpa.*, iwarp_ddp.*, iwarp_rdma.*), accepted
// wherever a field name is.
type Field struct {
	Name    string
	Aliases []string
	Type    FieldType
	Desc    string
	Ref     string // the RFC section that defines the field
	// Bits is the width on the wire of a TypeHex field (32 for an STag, 64
	// for a tagged offset, 24 for a QPN): iwarpdump -T fields prints its
	// value with Bits/4 hex digits, as tshark prints a field of that width.
	Bits uint8
}

// fields is the registry. It is unexported and never modified: Fields returns
// a copy and Lookup reads it.
var fields = [...]Field{
	// Record-level keys (JSONL.md "Keys every record has" and fpdu keys).
	{Name: "v", Type: TypeUint, Desc: "JSON Lines schema version (1)"},
	{Name: "type", Type: TypeString, Desc: "record type: mpa, fpdu, message, finding, conn"},
	{Name: "frame", Aliases: []string{"frame.number"}, Type: TypeUint, Desc: "1-based number of the frame holding the record's first octet"},
	{Name: "ts", Type: TypeString, Desc: "timestamp of that frame, RFC 3339 with nanoseconds, UTC"},
	{Name: "conn", Type: TypeUint, Desc: "connection id, 0-based, in order of first appearance"},
	{Name: "src", Type: TypeString, Desc: "source endpoint ip:port"},
	{Name: "dst", Type: TypeString, Desc: "destination endpoint ip:port"},
	{Name: "dir", Type: TypeString, Desc: "direction: i2r (initiator to responder), r2i, or empty when unknown"},
	{Name: "seq", Aliases: []string{"tcp.seq_raw"}, Type: TypeUint, Desc: "absolute TCP sequence number of the record's first octet"},
	{Name: "len", Type: TypeUint, Desc: "octets on the wire (FPDU: markers, length field, ULPDU, pad and CRC)"},
	{Name: "frames", Type: TypeList, Desc: "every frame that carried octets of this record"},
	{Name: "payload_len", Type: TypeUint, Desc: "ULP payload octets in this DDP segment"},
	{Name: "findings", Type: TypeList, Desc: "findings attached to this record"},

	// MPA Request/Reply (RFC 5044 §7.1, RFC 6581 §9).
	{Name: "mpa", Aliases: []string{"iwarp_mpa"}, Type: TypeNone, Desc: "Marker PDU Aligned framing", Ref: "RFC 5044"},
	{Name: "kind", Aliases: []string{"mpa.kind"}, Type: TypeString, Desc: "MPA frame kind: request or reply", Ref: "RFC 5044 §7.1"},
	{Name: "m", Aliases: []string{"mpa.m", "iwarp_mpa.marker_flag"}, Type: TypeBool, Desc: "M: the sender of this frame wants to receive markers", Ref: "RFC 5044 §7.1"},
	{Name: "c", Aliases: []string{"mpa.c", "iwarp_mpa.crc_flag"}, Type: TypeBool, Desc: "C: the sender prefers CRC32c", Ref: "RFC 5044 §7.1"},
	{Name: "r", Aliases: []string{"mpa.r", "iwarp_mpa.rej_flag"}, Type: TypeBool, Desc: "R: the responder rejects the connection", Ref: "RFC 5044 §7.1"},
	{Name: "s", Aliases: []string{"mpa.s"}, Type: TypeBool, Desc: "S: Enhanced RDMA Connection Establishment data follows (rev 2)", Ref: "RFC 6581 §9"},
	{Name: "res", Aliases: []string{"mpa.res", "iwarp_mpa.res"}, Type: TypeUint, Desc: "remaining reserved flag bits of octet 16", Ref: "RFC 5044 §7.1"},
	{Name: "rev", Aliases: []string{"mpa.rev", "iwarp_mpa.rev"}, Type: TypeUint, Desc: "MPA revision", Ref: "RFC 5044 §7.1"},
	{Name: "pd_len", Aliases: []string{"mpa.pd_len", "iwarp_mpa.pdlength"}, Type: TypeUint, Desc: "private data length", Ref: "RFC 5044 §7.1"},
	{Name: "pd", Aliases: []string{"mpa.pd", "iwarp_mpa.privatedata"}, Type: TypeBytes, Desc: "private data", Ref: "RFC 5044 §7.1"},
	{Name: "enhanced", Aliases: []string{"mpa.enhanced"}, Type: TypeObject, Desc: "Enhanced RDMA Connection Establishment data", Ref: "RFC 6581 §9"},
	{Name: "enhanced.ird", Aliases: []string{"mpa.ird", "iwarp_mpa.ird"}, Type: TypeUint, Desc: "inbound RDMA Read queue depth offered", Ref: "RFC 6581 §9"},
	{Name: "enhanced.ord", Aliases: []string{"mpa.ord", "iwarp_mpa.ord"}, Type: TypeUint, Desc: "outbound RDMA Read queue depth offered", Ref: "RFC 6581 §9"},
	{Name: "enhanced.a", Type: TypeBool, Desc: "control flag A (RFC 6581: peer-to-peer)", Ref: "RFC 6581 §9"},
	{Name: "enhanced.b", Type: TypeBool, Desc: "control flag B (RFC 6581: zero-length Send RTR)", Ref: "RFC 6581 §9"},
	{Name: "enhanced.c", Type: TypeBool, Desc: "control flag C (RFC 6581: zero-length RDMA Write RTR)", Ref: "RFC 6581 §9"},
	{Name: "enhanced.d", Type: TypeBool, Desc: "control flag D (RFC 6581: zero-length RDMA Read RTR)", Ref: "RFC 6581 §9"},
	{Name: "enhanced.p2p", Type: TypeBool, Desc: "peer-to-peer mode requested", Ref: "RFC 6581 §9"},
	{Name: "enhanced.rtr", Type: TypeList, Desc: "RTR message types allowed: send, write, read", Ref: "RFC 6581 §9"},

	// FPDU (RFC 5044 §4).
	{Name: "mpa.ulpdu_len", Aliases: []string{"iwarp_mpa.ulpdulength"}, Type: TypeUint, Desc: "ULPDU_Length: octets of the DDP segment", Ref: "RFC 5044 §4.1"},
	{Name: "mpa.pad", Aliases: []string{"iwarp_mpa.pad"}, Type: TypeUint, Desc: "pad octets after the ULPDU", Ref: "RFC 5044 §4.1"},
	{Name: "mpa.markers", Aliases: []string{"iwarp_mpa.markers"}, Type: TypeList, Desc: "markers inside the FPDU: seq, fpduptr, ok", Ref: "RFC 5044 §5"},
	{Name: "mpa.marker.fpduptr", Aliases: []string{"iwarp_mpa.marker_fpduptr"}, Type: TypeUint, Desc: "marker FPDUPTR: octets back to the FPDU's first octet", Ref: "RFC 5044 §5.1"},
	{Name: "mpa.marker.res", Aliases: []string{"iwarp_mpa.marker_res"}, Type: TypeUint, Desc: "marker reserved field", Ref: "RFC 5044 §5.1"},
	{Name: "mpa.crc", Aliases: []string{"iwarp_mpa.crc"}, Type: TypeHex, Bits: 32, Desc: "CRC field, read least significant octet first", Ref: "RFC 5044 §4.1"},
	{Name: "mpa.crc_status", Aliases: []string{"iwarp_mpa.crc_check"}, Type: TypeString, Desc: "CRC verdict: ok, bad, unchecked (not negotiated), incomplete (octets missing)", Ref: "RFC 5044 §4.1"},

	// DDP (RFC 5041 §4).
	{Name: "ddp", Aliases: []string{"iwarp_ddp", "iwarp_ddp_rdmap"}, Type: TypeNone, Desc: "Direct Data Placement", Ref: "RFC 5041"},
	{Name: "ddp.t", Aliases: []string{"iwarp_ddp.tagged_flag"}, Type: TypeBool, Desc: "T: tagged buffer model", Ref: "RFC 5041 §4.2"},
	{Name: "ddp.l", Aliases: []string{"iwarp_ddp.last_flag"}, Type: TypeBool, Desc: "L: last segment of the message", Ref: "RFC 5041 §4.2"},
	{Name: "ddp.rsvd", Aliases: []string{"iwarp_ddp.rsvd"}, Type: TypeUint, Desc: "reserved control bits", Ref: "RFC 5041 §4.2"},
	{Name: "ddp.dv", Aliases: []string{"iwarp_ddp.dv"}, Type: TypeUint, Desc: "DDP version: 1 IETF, 0 RDMAC", Ref: "RFC 5041 §4.2"},
	{Name: "ddp.stag", Aliases: []string{"iwarp_ddp.stag"}, Type: TypeHex, Bits: 32, Desc: "Data Sink STag (tagged)", Ref: "RFC 5041 §4.3"},
	{Name: "ddp.to", Aliases: []string{"iwarp_ddp.tagged_offset"}, Type: TypeHex, Bits: 64, Desc: "Data Sink tagged offset (tagged)", Ref: "RFC 5041 §4.3"},
	{Name: "ddp.qn", Aliases: []string{"iwarp_ddp.qn"}, Type: TypeUint, Desc: "queue number (untagged)", Ref: "RFC 5041 §4.4"},
	{Name: "ddp.msn", Aliases: []string{"iwarp_ddp.msn"}, Type: TypeUint, Desc: "message sequence number (untagged)", Ref: "RFC 5041 §4.4"},
	{Name: "ddp.mo", Aliases: []string{"iwarp_ddp.mo"}, Type: TypeUint, Desc: "message offset (untagged)", Ref: "RFC 5041 §4.4"},

	// RDMAP (RFC 5040 §4, RFC 7306).
	{Name: "rdmap", Aliases: []string{"iwarp_rdma"}, Type: TypeNone, Desc: "RDMA Protocol", Ref: "RFC 5040"},
	{Name: "rdmap.rv", Aliases: []string{"iwarp_rdma.version"}, Type: TypeUint, Desc: "RDMAP version: 1 IETF, 0 RDMAC", Ref: "RFC 5040 §4.1"},
	{Name: "rdmap.rsvd", Aliases: []string{"iwarp_rdma.rsv"}, Type: TypeUint, Desc: "reserved control bits", Ref: "RFC 5040 §4.1"},
	{Name: "rdmap.opcode", Aliases: []string{"iwarp_rdma.opcode"}, Type: TypeUint, Desc: "RDMAP opcode", Ref: "RFC 5040 §4.1"},
	{Name: "rdmap.name", Type: TypeString, Desc: "opcode name", Ref: "RFC 5040 §4.1"},
	{Name: "rdmap.inval_stag", Aliases: []string{"iwarp_rdma.inval_stag"}, Type: TypeHex, Bits: 32, Desc: "STag to invalidate (Send with Invalidate)", Ref: "RFC 5040 §4.1"},
	{Name: "rdmap.read", Aliases: []string{"iwarp_rdma.rr"}, Type: TypeObject, Desc: "RDMA Read Request header", Ref: "RFC 5040 §4.4"},
	{Name: "rdmap.read.sink_stag", Aliases: []string{"iwarp_rdma.sinkstag"}, Type: TypeHex, Bits: 32, Desc: "Data Sink STag", Ref: "RFC 5040 §4.4"},
	{Name: "rdmap.read.sink_to", Aliases: []string{"iwarp_rdma.sinkto"}, Type: TypeHex, Bits: 64, Desc: "Data Sink tagged offset", Ref: "RFC 5040 §4.4"},
	{Name: "rdmap.read.size", Aliases: []string{"iwarp_rdma.rdmardsz"}, Type: TypeUint, Desc: "RDMA Read message size", Ref: "RFC 5040 §4.4"},
	{Name: "rdmap.read.src_stag", Aliases: []string{"iwarp_rdma.srcstag"}, Type: TypeHex, Bits: 32, Desc: "Data Source STag", Ref: "RFC 5040 §4.4"},
	{Name: "rdmap.read.src_to", Aliases: []string{"iwarp_rdma.srcto"}, Type: TypeHex, Bits: 64, Desc: "Data Source tagged offset", Ref: "RFC 5040 §4.4"},
	{Name: "rdmap.read.captured", Type: TypeUint, Desc: "octets of the header captured, when the capture cut it (snap length); the fields past them are absent", Ref: "RFC 5040 §4.4"},
	{Name: "rdmap.immediate", Type: TypeHex, Bits: 64, Desc: "immediate data (8 octets); absent when the capture cut them (snap length)", Ref: "RFC 7306 §5.1"},
	{Name: "rdmap.atomic", Type: TypeObject, Desc: "atomic request or response header", Ref: "RFC 7306 §6"},
	{Name: "rdmap.atomic.op", Aliases: []string{"iwarp_rdma.atomic.opcode"}, Type: TypeUint, Desc: "atomic operation: 0 FetchAdd, 1 Swap, 2 CmpSwap (request)", Ref: "RFC 7306 §6.1"},
	{Name: "rdmap.atomic.req_id", Aliases: []string{"iwarp_rdma.atomic.request_identifier"}, Type: TypeUint, Desc: "request identifier (request)", Ref: "RFC 7306 §6.1"},
	{Name: "rdmap.atomic.remote_stag", Aliases: []string{"iwarp_rdma.atomic.remote_stag"}, Type: TypeHex, Bits: 32, Desc: "STag of the remote buffer (request)", Ref: "RFC 7306 §6.1"},
	{Name: "rdmap.atomic.remote_to", Aliases: []string{"iwarp_rdma.atomic.remote_tagged_offset"}, Type: TypeHex, Bits: 64, Desc: "tagged offset of the remote 8 octets (request)", Ref: "RFC 7306 §6.1"},
	{Name: "rdmap.atomic.add_swap_data", Type: TypeUint, Desc: "add data (FetchAdd) or swap data (Swap, CmpSwap) (request)", Ref: "RFC 7306 §6.1"},
	{Name: "rdmap.atomic.add_swap_mask", Type: TypeHex, Bits: 64, Desc: "add or swap mask (request)", Ref: "RFC 7306 §6.1"},
	{Name: "rdmap.atomic.compare_data", Type: TypeUint, Desc: "compare data (CmpSwap) (request)", Ref: "RFC 7306 §6.1"},
	{Name: "rdmap.atomic.compare_mask", Type: TypeHex, Bits: 64, Desc: "compare mask (CmpSwap) (request)", Ref: "RFC 7306 §6.1"},
	{Name: "rdmap.atomic.orig_req_id", Aliases: []string{"iwarp_rdma.atomic.original_request_identifier"}, Type: TypeUint, Desc: "identifier of the request answered (response)", Ref: "RFC 7306 §6.2"},
	{Name: "rdmap.atomic.orig_value", Aliases: []string{"iwarp_rdma.atomic.original_remote_data_value"}, Type: TypeUint, Desc: "the remote 8 octets before the operation (response)", Ref: "RFC 7306 §6.2"},
	{Name: "rdmap.atomic.captured", Type: TypeUint, Desc: "octets of the header captured, when the capture cut it (snap length); the fields past them are absent", Ref: "RFC 7306 §6"},

	// Terminate (RFC 5040 §4.8).
	{Name: "rdmap.term", Aliases: []string{"iwarp_rdma.terminate"}, Type: TypeObject, Desc: "Terminate header", Ref: "RFC 5040 §4.8"},
	{Name: "rdmap.term.layer", Aliases: []string{"iwarp_rdma.term_layer"}, Type: TypeUint, Desc: "layer that detected the error: 0 RDMAP, 1 DDP, 2 LLP", Ref: "RFC 5040 §4.8"},
	{Name: "rdmap.term.etype", Aliases: []string{"iwarp_rdma.term_etype", "iwarp_rdma.term_etype_rdma", "iwarp_rdma.term_etype_ddp", "iwarp_rdma.term_etype_llp"}, Type: TypeUint, Desc: "error type", Ref: "RFC 5040 §4.8"},
	{Name: "rdmap.term.code", Aliases: []string{"iwarp_rdma.term_errcode", "iwarp_rdma.term_errcode_rdma", "iwarp_rdma.term_errcode_ddp_tagged", "iwarp_rdma.term_errcode_ddp_untagged", "iwarp_rdma.term_errcode_llp"}, Type: TypeUint, Desc: "error code", Ref: "RFC 5040 §4.8"},
	{Name: "rdmap.term.m", Aliases: []string{"iwarp_rdma.term_hdrct_m"}, Type: TypeBool, Desc: "M: the DDP segment length is valid", Ref: "RFC 5040 §4.8"},
	{Name: "rdmap.term.d", Aliases: []string{"iwarp_rdma.hdrct_d"}, Type: TypeBool, Desc: "D: the terminated DDP header is included", Ref: "RFC 5040 §4.8"},
	{Name: "rdmap.term.r", Aliases: []string{"iwarp_rdma.hdrct_r"}, Type: TypeBool, Desc: "R: the terminated RDMA header is included", Ref: "RFC 5040 §4.8"},
	{Name: "rdmap.term.ddp_seg_len", Aliases: []string{"iwarp_rdma.term_ddp_seg_len"}, Type: TypeUint, Desc: "length of the terminated DDP segment", Ref: "RFC 5040 §4.8"},
	{Name: "rdmap.term.ddp", Aliases: []string{"iwarp_rdma.term_ddp_h"}, Type: TypeObject, Desc: "terminated DDP header", Ref: "RFC 5040 §4.8"},
	{Name: "rdmap.term.rdmap", Aliases: []string{"iwarp_rdma.term_rdma_h"}, Type: TypeObject, Desc: "terminated RDMA header (Read Request)", Ref: "RFC 5040 §4.8"},
	{Name: "rdmap.term.text", Type: TypeString, Desc: "the error in plain words", Ref: "RFC 5040 §4.8"},
	{Name: "rdmap.term.segment_frame", Type: TypeUint, Desc: "frame of the segment the Terminate terminates (matched by its DDP header)", Ref: "RFC 5040 §4.8"},
	{Name: "rdmap.term.siw_layout", Type: TypeBool, Desc: "control word laid out as Linux siw 6.1 writes it (little-endian bitfields)"},

	// Other transports: InfiniBand CM over RoCEv2 (seed 002, IBTA) and DDP over SCTP (RFC 5043),
	// and the keys of message and conn records.
	{Name: "transport", Type: TypeString, Desc: "transport of a conn record: ib_cm or sctp (absent for MPA/TCP)"},
	{Name: "state", Type: TypeString, Desc: "how far the connection got"},
	{Name: "initiator", Type: TypeString, Desc: "the side that initiated the connection"},
	{Name: "responder", Type: TypeString, Desc: "the side that accepted or rejected it"},
	{Name: "endpoints", Type: TypeList, Desc: "a conn record's two endpoints when its initiator is unknown, in order of first appearance: mpa.markers_i2r is then from the first to the second"},
	{Name: "messages", Type: TypeUint, Desc: "RDMA messages on the connection"},
	{Name: "octets", Type: TypeUint, Desc: "octets carried"},
	{Name: "first_frame", Type: TypeUint, Desc: "first frame of the record or connection"},
	{Name: "last_frame", Type: TypeUint, Desc: "last frame of the record or connection"},
	{Name: "ddp_version", Type: TypeUint, Desc: "DDP version seen on the connection", Ref: "RFC 5041 §4.2"},
	{Name: "transaction_id", Type: TypeHex, Bits: 64, Desc: "MAD transaction ID", Ref: "IBTA vol 1 §13.4"},
	{Name: "local_comm_id", Type: TypeHex, Bits: 32, Desc: "CM local communication ID", Ref: "IBTA vol 1 §12.6"},
	{Name: "remote_comm_id", Type: TypeHex, Bits: 32, Desc: "CM remote communication ID", Ref: "IBTA vol 1 §12.6"},
	{Name: "service_id", Type: TypeHex, Bits: 64, Desc: "CM service ID (IP form: port space and port)", Ref: "IBTA Annex A11"},
	{Name: "port_space", Type: TypeString, Desc: "RDMA IP CM port space (tcp, udp, ib, ipoib)", Ref: "IBTA Annex A11"},
	{Name: "port", Type: TypeUint, Desc: "port of the IP-based service ID"},
	{Name: "service", Type: TypeString, Desc: "well-known name of the service port (nfs, iser, nvme, ...)"},
	{Name: "qpn", Type: TypeHex, Bits: 24, Desc: "queue pair number", Ref: "IBTA vol 1 §12.6"},
	{Name: "start_psn", Type: TypeHex, Bits: 24, Desc: "starting packet sequence number", Ref: "IBTA vol 1 §12.6"},
	{Name: "responder_resources", Type: TypeUint, Desc: "responder resources (RDMA Read depth)", Ref: "IBTA vol 1 §12.6.5"},
	{Name: "initiator_depth", Type: TypeUint, Desc: "initiator depth (outstanding RDMA Reads)", Ref: "IBTA vol 1 §12.6.5"},
	{Name: "transport_service_type", Type: TypeUint, Desc: "transport service type", Ref: "IBTA vol 1 §12.6.5"},
	{Name: "path_mtu", Type: TypeUint, Desc: "path MTU code", Ref: "IBTA vol 1 §12.6.5"},
	{Name: "pkey", Type: TypeHex, Bits: 16, Desc: "partition key", Ref: "IBTA vol 1 §12.6.5"},
	{Name: "ca_guid", Type: TypeHex, Bits: 64, Desc: "channel adapter GUID", Ref: "IBTA vol 1 §12.6.8"},
	{Name: "reason", Type: TypeUint, Desc: "REJ reason code", Ref: "IBTA vol 1 §12.6.7"},
	{Name: "reason_name", Type: TypeString, Desc: "REJ reason in words", Ref: "IBTA vol 1 §12.6.7"},
	{Name: "message_rejected", Type: TypeUint, Desc: "which message a REJ rejects", Ref: "IBTA vol 1 §12.6.7"},
	{Name: "message_mraed", Type: TypeUint, Desc: "which message an MRA acknowledges", Ref: "IBTA vol 1 §12.6.6"},
	{Name: "service_timeout", Type: TypeUint, Desc: "MRA service timeout", Ref: "IBTA vol 1 §12.6.6"},
	{Name: "remote_qpn", Type: TypeHex, Bits: 24, Desc: "remote QPN (DREQ)", Ref: "IBTA vol 1 §12.6.10"},
	{Name: "sidr_status", Type: TypeUint, Desc: "SIDR_REP status", Ref: "IBTA vol 1 §12.11"},
	{Name: "sidr_status_name", Type: TypeString, Desc: "SIDR_REP status in words", Ref: "IBTA vol 1 §12.11"},
	{Name: "ip_cm", Type: TypeObject, Desc: "deployed RDMA IP CM private-data header", Ref: "IBTA Annex A11"},
	{Name: "ip_cm.majv", Type: TypeUint, Desc: "IP CM header major version", Ref: "IBTA Annex A11"},
	{Name: "ip_cm.minv", Type: TypeUint, Desc: "IP CM header minor version", Ref: "IBTA Annex A11"},
	{Name: "ip_cm.ipv", Type: TypeUint, Desc: "IP version of the addresses (4 or 6)", Ref: "IBTA Annex A11"},
	{Name: "ip_cm.port", Type: TypeUint, Desc: "the active side source port", Ref: "IBTA Annex A11"},
	{Name: "ip_cm.src", Type: TypeString, Desc: "source IP address", Ref: "IBTA Annex A11"},
	{Name: "ip_cm.dst", Type: TypeString, Desc: "destination IP address", Ref: "IBTA Annex A11"},
	{Name: "hello", Type: TypeObject, Desc: "Hello private data (seed 002 proposal)", Ref: "seed 002"},
	{Name: "hello.majv", Type: TypeUint, Desc: "Hello major version", Ref: "seed 002"},
	{Name: "hello.minv", Type: TypeUint, Desc: "Hello minor version", Ref: "seed 002"},
	{Name: "hello.ipv", Type: TypeUint, Desc: "Hello IP version", Ref: "seed 002"},
	{Name: "hello.invalidate", Type: TypeBool, Desc: "INVALIDATE capability", Ref: "seed 002"},
	{Name: "hello.zbva", Type: TypeBool, Desc: "ZBVA capability", Ref: "seed 002"},
	{Name: "hello.src", Type: TypeString, Desc: "Hello source address", Ref: "seed 002"},
	{Name: "hello.dst", Type: TypeString, Desc: "Hello destination address", Ref: "seed 002"},
	{Name: "hello_ack", Type: TypeObject, Desc: "HelloAck private data (seed 002 proposal)", Ref: "seed 002"},
	{Name: "hello_ack.majv", Type: TypeUint, Desc: "HelloAck major version", Ref: "seed 002"},
	{Name: "hello_ack.minv", Type: TypeUint, Desc: "HelloAck minor version", Ref: "seed 002"},
	{Name: "hello_ack.invalidate", Type: TypeBool, Desc: "INVALIDATE capability", Ref: "seed 002"},
	{Name: "hello_ack.zbva", Type: TypeBool, Desc: "ZBVA capability", Ref: "seed 002"},
	{Name: "psn", Type: TypeHex, Bits: 24, Desc: "BTH packet sequence number", Ref: "IBTA vol 1 §9.2"},
	{Name: "icrc", Type: TypeHex, Bits: 32, Desc: "RoCEv2 invariant CRC", Ref: "IBTA Annex A17"},
	{Name: "icrc_status", Type: TypeString, Desc: "ICRC verdict: ok, bad, or unchecked (native InfiniBand)", Ref: "IBTA Annex A17"},
	{Name: "slid", Type: TypeUint, Desc: "source LID of a native InfiniBand packet (Local Route Header)", Ref: "IBTA vol 1 §7.7"},
	{Name: "dlid", Type: TypeUint, Desc: "destination LID of a native InfiniBand packet (Local Route Header)", Ref: "IBTA vol 1 §7.7"},
	{Name: "initiator_lid", Type: TypeUint, Desc: "LID of the side that sent the CM REQ (native InfiniBand)", Ref: "IBTA vol 1 §7.7"},
	{Name: "responder_lid", Type: TypeUint, Desc: "LID of the side that answered the CM REQ (native InfiniBand)", Ref: "IBTA vol 1 §7.7"},
	{Name: "sidr", Type: TypeBool, Desc: "a SIDR exchange (UD service ID resolution)", Ref: "IBTA vol 1 §12.11"},
	{Name: "pd_format", Type: TypeString, Desc: "private-data format of the CM exchange: ip_cm, hello or raw"},
	{Name: "qpn_i", Type: TypeHex, Bits: 24, Desc: "initiator QPN"},
	{Name: "qpn_r", Type: TypeHex, Bits: 24, Desc: "responder QPN"},
	{Name: "start_psn_i", Type: TypeHex, Bits: 24, Desc: "initiator starting PSN"},
	{Name: "start_psn_r", Type: TypeHex, Bits: 24, Desc: "responder starting PSN"},
	{Name: "rejected", Type: TypeBool, Desc: "the connection was rejected"},
	{Name: "data_packets", Type: TypeUint, Desc: "data packets on the connection"},
	{Name: "data_octets", Type: TypeUint, Desc: "data octets on the connection"},
	{Name: "sctp", Type: TypeObject, Desc: "SCTP DATA chunk carrying the DDP segment", Ref: "RFC 4960 §3.3.1; RFC 5043"},
	{Name: "sctp.stream", Type: TypeUint, Desc: "SCTP stream identifier", Ref: "RFC 4960 §3.3.1"},
	{Name: "sctp.ssn", Type: TypeUint, Desc: "SCTP stream sequence number", Ref: "RFC 4960 §3.3.1"},
	{Name: "sctp.tsn", Type: TypeUint, Desc: "SCTP transmission sequence number", Ref: "RFC 4960 §3.3.1"},
	{Name: "sctp.ppid", Type: TypeUint, Desc: "payload protocol identifier (16 DDP segment, 17 DDP stream session control)", Ref: "RFC 5043"},
	{Name: "sctp.u", Type: TypeBool, Desc: "unordered flag", Ref: "RFC 4960 §3.3.1"},
	{Name: "function", Type: TypeUint, Desc: "DDP stream session control function code", Ref: "RFC 5043; seed 003 §7"},
	{Name: "name", Type: TypeString, Desc: "name of an opcode, message or function"},
	{Name: "ird", Type: TypeUint, Desc: "IRD of enhanced session control", Ref: "seed 003 §7"},
	{Name: "ord", Type: TypeUint, Desc: "ORD of enhanced session control", Ref: "seed 003 §7"},
	{Name: "a", Type: TypeBool, Desc: "enhanced control flag A", Ref: "seed 003 §7"},
	{Name: "b", Type: TypeBool, Desc: "enhanced control flag B", Ref: "seed 003 §7"},
	{Name: "d", Type: TypeBool, Desc: "enhanced control flag D", Ref: "seed 003 §7"},
	{Name: "rtr", Type: TypeList, Desc: "RTR message types allowed", Ref: "seed 003 §7"},
	{Name: "segments", Type: TypeUint, Desc: "DDP segments of the message or association"},
	{Name: "checksum_errors", Type: TypeUint, Desc: "SCTP checksum errors"},

	// Findings.
	{Name: "severity", Aliases: []string{"finding.severity"}, Type: TypeString, Desc: "finding severity: error, warning, note"},
	{Name: "code", Aliases: []string{"finding.code"}, Type: TypeString, Desc: "stable dotted finding code"},
	{Name: "msg", Aliases: []string{"finding.msg"}, Type: TypeString, Desc: "finding text; of a cm record, its CM message (req, rep, rej, ...)"},
	{Name: "ref", Aliases: []string{"finding.ref"}, Type: TypeString, Desc: "RFC section or seed rule the finding rests on"},
}

// Fields returns a copy of the registry, in its canonical order.
func Fields() []Field {
	out := make([]Field, len(fields))
	copy(out, fields[:])
	return out
}

// Lookup finds a field by its name or by any of its aliases (Wireshark's
// names). Names are case-sensitive, as in Wireshark.
func Lookup(name string) (Field, bool) {
	if i, ok := byName[name]; ok {
		return fields[i], true
	}
	return Field{}, false
}

// byName indexes the registry for Lookup: every name and alias, a name
// before an alias and the first field before later ones, as a search of
// the names and then of the aliases finds them. The text tree looks a name
// up for every number it prints; scanning the registry took a fifth of
// iwarpdump -v.
var byName = func() map[string]int {
	m := make(map[string]int, 2*len(fields))
	for i := len(fields) - 1; i >= 0; i-- {
		for _, a := range fields[i].Aliases {
			m[a] = i
		}
	}
	for i := len(fields) - 1; i >= 0; i-- {
		m[fields[i].Name] = i
	}
	return m
}()

// LookupPath finds the field of a path in a record's tree: the key of a
// nested value with its parents' keys ("rdmap.term.ddp.stag",
// "mpa.markers[0].fpduptr"). List indexes are dropped, marker items are
// named as the registry names them (mpa.marker.*), and when the path itself
// is not a name, ever shorter suffixes are tried: "rdmap.term.ddp.stag" is
// described by ddp.stag. The text tree and the TUI's tree both use it.
func LookupPath(path string) (Field, bool) {
	if f, ok := Lookup(path); ok {
		return f, true
	}
	p := stripIndexes(path)
	p = strings.Replace(p, "mpa.markers.", "mpa.marker.", 1)
	for {
		if f, ok := Lookup(p); ok {
			return f, true
		}
		i := strings.IndexByte(p, '.')
		if i < 0 {
			return Field{}, false
		}
		p = p[i+1:]
	}
}

// stripIndexes drops the list indexes of a path ("a[0].b" is "a.b").
func stripIndexes(p string) string {
	if strings.IndexByte(p, '[') < 0 {
		return p
	}
	b := make([]byte, 0, len(p))
	depth := 0
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth == 0:
			b = append(b, c)
		}
	}
	return string(b)
}

// Canonical maps a name or alias to the registry name ("" when unknown).
func Canonical(name string) string {
	f, ok := Lookup(name)
	if !ok {
		return ""
	}
	return f.Name
}

// Layer of a field name: the part before the first dot for namespaced
// fields ("ddp" for "ddp.stag"), "mpa" for the MPA Request/Reply keys.
func FieldLayer(name string) string {
	if i := strings.IndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return name
}

// Package sctp is the wire format of the Stream Control Transmission
// Protocol (RFC 9260) as far as DDP over SCTP needs it (RFC 5043, "SCTP
// Direct Data Placement Adaptation"), extended by the enhanced session
// control of draft-ietf-storm-mpa-peer-connect-01 §7 (seed 003):
//
//   - the common header and its CRC32c checksum ([Header], [Checksum],
//     RFC 9260 §3.1 and Appendix A);
//   - chunks, walked without copying ([NextChunk], RFC 9260 §3.2), the DATA
//     chunk ([Data], RFC 9260 §3.3.1) and the INIT/INIT ACK fixed part with
//     the Adaptation Layer Indication parameter ([Init], RFC 9260 §3.3.2,
//     RFC 5061 §4.2.7);
//   - the two payload protocol identifiers of RFC 5043: DDP segments
//     ([PPIDDDPSegment] = 16) and DDP Stream Session Control
//     ([PPIDDDPSessionControl] = 17), as registered by IANA;
//   - the DDP Stream Session Control message ([SessionControl]) with its
//     function codes: Initiate, Accept, Reject, Terminate (RFC 5043) and
//     the enhanced Initiate, Accept and Reject (0x05, 0x06, 0x07, seed 003
//     §7), whose private data begins with the Enhanced RDMA Connection
//     Establishment Data carrying IRD and ORD (seed 003 §8, read with
//     package mpa).
//
// The DDP segment inside a DATA chunk of PPID 16 is decoded with packages
// ddp and rdmap, exactly as the ULPDU of an MPA FPDU.
//
// What was verified, and what was not: the PPID values 16 and 17 come from
// the IANA "SCTP Payload Protocol Identifiers" registry (reference RFC
// 5043), and the enhanced function codes 0x05-0x07 and the existence of the
// Initiate and Accept codes from seed 003 §7. The text of RFC 5043 §4-§5
// was not available when this package was written: the session control
// layout (a 16-bit function code, a 16-bit private data length, then the
// private data) and the values 0x01-0x04 are recalled from it [rfc-mem]
// and sit in one place ([SessionControlHeaderLen], the Func constants) so
// that a correction is a one-line change. A second search (the rfc-editor,
// datatracker and tech-invite copies of RFC 5043 and the draft-ietf-rddp-sctp
// diffs are indexed only by their first page; no repository holds
// rfc5043.txt or code for the session control message; Wireshark has no
// DDP-over-SCTP dissector, only the two PPIDs) found nothing to confirm
// or correct them.
//
// # Design goals
//
// Zero copy and zero allocation: the decoders return views into the input
// ([Chunk.Value], [Data.UserData], [SessionControl.PD]) and allocate
// nothing; they never panic and never read past the slice, and return the
// sentinels of package dissect unwrapped. Encoders append to a caller's
// buffer. No state: association tracking, TSN order and reassembly of
// fragmented user messages belong to package flows.
package sctp

// Package reassembly turns the TCP segments of one direction of a connection
// into an ordered byte stream in which every octet keeps its absolute TCP
// sequence number, the frame it came from and its timestamp.
//
// # Why not gopacket's reassembly
//
// iwarpkit uses gopacket for link, IP and TCP decoding but writes its own
// reassembler. gopacket's reassembly package never tells the consumer the
// TCP sequence number of the octets it delivers, buffers out-of-order data
// without bound by default, and has a history of flush and close bugs. MPA
// markers sit on a 512-octet grid in TCP sequence space (RFC 5044 §5.1), so
// the framer needs exact sequence numbers, also across lost data; and a
// 100 GB capture must go through in constant memory.
//
// # Model
//
// A [Stream] is one direction. [Stream.Add] takes segments in capture order
// and calls a [Handler] with [Chunk]s of in-order octets and with [Event]s:
// SYN, FIN, RST, a stream that starts mid-connection, gaps (octets never
// captured), retransmissions (identical overlaps), conflicts (overlaps with
// different content: the first copy wins), out-of-order arrival, a full
// buffer and snaplen truncation.
//
// Offsets: every octet has a 64-bit stream offset, Off. Offset 0 is the
// first octet after the SYN or, when the SYN was not captured, the first
// octet seen. Offsets never wrap; sequence numbers do, and the mapping
// between them uses serial arithmetic (RFC 1982) relative to the next
// expected octet, so a segment must lie within 2^31 octets of it. The SYN
// and the FIN each take one sequence number (RFC 9293 §3.4) but no offset.
// Chunks and gaps tile the offsets without overlap: each chunk or EvGap
// starts where the previous one ended.
//
// # Design goals
//
//   - Zero copy and zero allocation for in-order data: a Chunk's Data is a
//     sub-slice of the Segment's Payload, valid only during the callback.
//     This is tested with testing.AllocsPerRun.
//   - Bounded memory: out-of-order octets are copied into a buffer capped by
//     [Options].MaxBuffered per direction; when it is full the stream skips
//     ahead and reports the exact range skipped as a gap. A hole that the
//     other direction acknowledges past ([Stream.PeerAck]) was lost by the
//     capture, not the network: it is given up once 256 KiB wait behind
//     it. Besides that
//     buffer a stream keeps only the last Options.Window delivered octets
//     (64 KiB by default) to tell identical retransmissions from conflicting
//     ones. Memory never grows with the length of the stream.
//   - Exact reporting: every octet of the covered range is either delivered
//     once or reported in an EvGap, and every event carries the offset,
//     sequence number, frame and timestamp it concerns.
//
// # Limits
//
// Overlaps with delivered data older than the window (or from before a
// gap) cannot be compared and are reported as EvRetransmit. Octets that
// arrive after their offset was skipped as a gap are reported and dropped,
// never delivered late. A capture that starts mid-connection takes its
// origin from the first segment of two octets or more (a one-octet segment
// is likely a keepalive probe); a later segment with an earlier sequence
// number is a retransmission of uncaptured data. When its sequence number
// lies before the origin it has no offset: such events carry Off 0 and the
// exact Seq.
package reassembly

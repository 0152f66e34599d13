// Package synth generates iWARP captures whose contents are known exactly:
// a Scenario (connections, MPA negotiation, RDMA operations, segmentation
// and capture damage) becomes TCP/IP frames in a pcap file, and a ground
// truth file lists every MPA Request/Reply (RFC 5044 §7.1, RFC 6581) and
// every FPDU (RFC 5044 §4) with its markers (§5.1), CRC (§4.4), DDP header
// (RFC 5041 §4) and RDMAP header (RFC 5040 §4, RFC 7306).
//
// It is the oracle iwarpkit's decoders are tested against, so:
//
//   - The truth is what the generator encoded: each record comes from the
//     values handed to the encoders (dissect/mpa, dissect/ddp, dissect/rdmap,
//     markers) and from the octets they produced, never from a decoder.
//     Marker values and the CRC field are read back from the octets
//     written, so the truth says what is on the wire even when the encoder
//     is wrong; the package tests then check those octets independently.
//   - Output is deterministic: the same Scenario (Seed included) gives
//     byte-identical pcap and truth files on every platform. Randomness
//     comes from math/rand/v2's PCG, one stream per connection and purpose.
//   - Anything a capture can do to a decoder can be asked for: markers in
//     one or both directions on a grid that may be unaligned, FPDUs that
//     straddle TCP segments or share them, slivers of 1 octet, sequence
//     numbers wrapping through 2^32, loss, duplicate and conflicting
//     retransmissions, reordering, corrupted CRCs, mid-stream starts, short
//     snaplens, several interleaved connections, IPv4 and IPv6, Ethernet,
//     raw IP and Linux SLL link types.
//
// # Model
//
// Each connection runs in order: the TCP handshake, the MPA Request and
// Reply (or none, for RDMAC streams), then Conn.Ops. Every operation becomes
// DDP segments (MO/TO advancing, L on the last; MSN from 1 per queue and
// direction), each framed as an FPDU: ULPDU_Length, ULPDU, PAD, markers
// inserted on the 512-octet grid, then the CRC-32C over the wire octets
// from the FPDU's first octet through the PAD, markers included. The
// octets of a direction are cut into TCP segments (at the MSS, one record a
// segment, or at explicit sizes); the receiver ACKs every few segments.
// Impairments then edit the list of segments; frames get seeded timestamps
// and connections are merged by time.
//
// Stream offsets are 64-bit, 0 being the first octet after the SYN; the
// absolute TCP sequence number of offset o is ISN+1+o modulo 2^32.
//
// # Truth file
//
// NAME.truth.jsonl holds one JSON object a line (see Record), ordered by
// the frame that carries each record's first octet ("mpa", "fpdu" and "gap"
// records), then one "conn" summary per connection. Keys follow the
// iwarpdump JSON Lines contract (schema v1), nested as its key paths say
// ("mpa": {"crc_status": ...}); keys it does not define (off, index,
// captured, reason, ...) are additions. Records not (fully) in the capture
// are listed with "captured": false.
//
// # Size
//
// Generate keeps a scenario in memory, which suits the small library
// scenarios (Named). WriteLarge streams one long connection in batches and
// uses constant memory whatever its size.
package synth

//go:generate go test -run ^TestGolden$ -update .

// Package replay plays the iWARP connections of a capture again, over real
// TCP sockets or into a new capture file, regenerating MPA framing for the new
// connection. tcpreplay cannot replay a TCP connection against a live stack
// (sequence numbers, ACKs and the peer's state all differ); this package works
// one layer up, as an MPA/DDP/RDMAP endpoint (RFC 5044, RFC 5041, RFC 5040).
//
// # Scripts
//
// Load decodes a capture with package flows and turns each selected
// connection (by id, or by a display filter of package filter) into a
// Script: the MPA Request and Reply with their private data (RFC 5044
// §7.1.1, RFC 6581 §8), and the RDMA messages of both directions with their
// payloads (their DDP segments gathered, RFC 5041 §5), in causal order. The
// causal order is the frame order of each message's first segment: a message
// waits until every message of the other direction that the capture shows
// before it has been received. So a Read Response follows its Read Request
// and a Send follows what it answers, whatever the timing of the replay.
//
// Memory is bounded: payload octets are kept up to LoadOptions.MaxPayload (64
// MiB by default) over the whole load; past it a message keeps only its
// length and SHA-256 digest, and the replay sends generated octets of the
// same length (the digest of what is sent then differs from the recording:
// the engine knows both, and compares a real peer's payload with the
// recorded digest). The number of segments is capped too
// (LoadOptions.MaxSegments). While it runs, an endpoint holds one FPDU of
// received data and the digests of the messages received; a replay holds
// that for each connection open, at most Options.MaxConns at a time.
//
// # Modes
//
//   - Loopback plays both ends over sockets on a loopback address (it refuses
//     any other), and each end compares what it receives with the recording;
//   - Connect plays the initiator against a responder at an address the
//     caller names, and reports how the responder's messages differ from the
//     recording (opcode, length, payload digest, the STag and TO of
//     tagged messages and the header of RDMA Read Requests, order: Diff),
//     and how its MPA Reply differs from the recorded one; a responder that
//     rejects, or whose Reply the initiator must refuse (RFC 6581 §9), where
//     the recording went to FPDU mode leaves every recorded message of it
//     missing;
//   - Listen plays the responder to initiators that connect;
//   - WritePcap runs both ends in memory and writes the traffic as a pcap
//     file, without sockets; pacing moves its timestamps.
//
// # Concurrency
//
// Connections run as they ran in the capture. With Options.Speed set, each
// starts (its dial, its SYN in WritePcap) at its recorded start
// (Script.First, its SYN) from the first connection's, divided by the
// speed, and keeps its own recorded gaps, so connections that overlapped
// overlap again; as fast as possible (Speed 0) they start at once. Either
// way a connection waits for every connection that had ended before it
// started in the recording (Script.End before its First): connections that
// did not overlap do not overlap in the replay either, however much slower
// than the recording it runs, as the messages of a connection keep their
// causal order. At most Options.MaxConns are open at once. A connection
// that starts later than due says so (ConnReport.Due, Start, Held).
//
// Listen accepts initiators as they connect and gives each the script whose
// MPA Request it sends (the same Request, else the same private data, else
// the next in start order; identical Requests are matched in the order
// they come, the recording's when the initiators start as recorded).
// WritePcap simulates the connections one at a time, each in its own
// virtual time from its start, and merges their frames in time order, as a
// capture of the concurrent replay would show them. Options.Serial replays
// the connections one after the other in connection order instead.
//
// Reports list connections in connection order whatever the order they
// end in; a connection's error or mismatches do not stop the others;
// cancelling the context stops every connection open, and the report
// leaves out those not started yet.
//
// The MPA negotiation can be changed (Negotiation: revision 0, 1 or 2,
// markers per direction, CRC, Rev 2 IRD/ORD, peer-to-peer and RTR type), and
// either end can emulate an RNIC kind of the interoperability draft
// (draft-carrier-rddp-rnic-interop, RNIC: rdmac, ietf, ietf-permissive),
// answering and closing as the matrix of PROTOCOL.md section E says. The
// replayed messages carry the negotiated DDP/RDMAP version, their MSNs are
// renumbered from 1 per queue, and the RTR of peer-to-peer mode is
// regenerated for the new negotiation (RFC 6581 §4).
//
// # Design goals
//
// One implementation of the wire format: FPDUs are built by Framer with
// mpa.Framing, the encoder package synth uses too (markers inserted with
// markers.Grid.Insert, then the CRC over the wire octets, markers included:
// RFC 5044 §4.4), DDP segments by rdmap.AppendSegment, MPA frames by
// mpa.AppendFrame and mpa.AppendEnhanced; received octets are read back
// with Deframer (markers.Grid.Strip, markers.CheckPtr) and the dissect
// decoders. Stream offsets count from the first octet after the SYN, so each
// direction's marker grid starts at the length of the MPA frame it sent
// (RFC 5044 §5.1).
//
// An endpoint, not a byte pump: each side parses what it receives and answers
// an invalid FPDU with a Terminate carrying the right error (RFC 5040 §4.8):
// LLP/MPA 0x02 for a bad CRC, 0x03 for a marker that does not point at its
// FPDU, DDP 0x04/0x06 for an invalid DDP version, DDP 0x01 for an invalid
// queue, DDP Untagged 0x03 for an MSN out of range and 0x04 for an MO that
// does not start or continue the message, RDMAP Remote Operation 0x05 for an invalid RDMAP version and 0x06 for
// an unexpected opcode; and a Reply that is not MPA with LLP/MPA 0x04, as
// Linux siw does.
//
// Safe by default: traffic goes only to the address the caller names
// (Loopback insists on a loopback one); every wait (connect, accept, the MPA
// exchange, each causal wait, each write, the end of the connection, its
// whole life) has a timeout (Timeouts); a peer that sends garbage or resets
// the connection ends that connection with an error that says so. Cancelling
// the context stops a replay at once: the report covers what was replayed,
// says it was interrupted (Report.Interrupted, the context's cause) and
// does not count as missing the messages after the last one received.
package replay

// Package shard partitions captures by connection, so that N workers can
// decode one capture (or a fleet's worth) without sharing anything.
//
// A connection is the unit of iWARP decoding: its MPA Request and Reply
// (RFC 5044 §7.1, RFC 6581 §8) decide how every later FPDU is framed
// (markers, CRC, RFC 5044 §4 and §5), and DDP and RDMAP state (RFC 5041 §5,
// RFC 5040 §5) runs across the whole byte stream. A capture is therefore
// never cut by byte range: every packet of a connection, in both
// directions, goes to the same shard, chosen by a symmetric hash of the
// connection's endpoints ([Hash], [Of]).
//
// Design goals:
//
//   - Symmetric and stable. [Hash](a, b) == [Hash](b, a), and the hash is a
//     fixed function of the addresses and ports (documented on [Hash]), the
//     same on every machine and in every version: shard I of N names the same
//     connections for every worker and every rerun, so N workers can each read
//     all the files and keep their share (iwarpdump --shard I/N), or one pass
//     can write N smaller captures (iwarpdump split, [Writer]).
//   - Close to read speed. Sharding needs only the link, IP and transport
//     headers that [capture.Source] decodes anyway; [Of] hashes five 64-bit
//     words and allocates nothing, and [Writer] copies frames through a
//     buffered writer with gopacket's pcapgo.
//   - Lossless splits. A split writes every packet exactly once, with its
//     timestamp, original length and link type: pcap with the input's link
//     type and timestamp resolution when the inputs allow it, pcapng (one
//     interface per link type) otherwise.
//
// What goes where ([Of]):
//
//   - TCP: the 4-tuple (both addresses and ports), direction-independent;
//     a segment whose TCP header is malformed too, when its ports were
//     captured (capture.Packet.BadTCP), so that its connection's decode
//     can report it.
//   - UDP: the 4-tuple, except RoCEv2 (either port 4791, its IANA port):
//     the address pair only. RoCEv2 carries a flow-entropy value in the UDP
//     source port (the destination port is always 4791), which may differ
//     between a connection's CM messages (sent on QP1) and its data.
//   - Other IP packets (SCTP, ICMP, IP fragments, ...): the address pair,
//     ports counted as 0. capture does not decode SCTP ports, so an SCTP
//     association stays with its hosts; ICMP errors and fragments follow
//     their host pair, not the connection they concern (the decoder ignores
//     them).
//   - Frames with no IP addresses (ARP, LLDP, other undecodable frames): shard 0,
//     so that the shards of a split still hold every frame of the input.
package shard

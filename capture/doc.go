// Package capture reads packets from pcap and pcapng files and decodes their
// link, IP and transport headers far enough for TCP reassembly: addresses,
// ports, sequence numbers, flags and the TCP (or UDP) payload.
//
// Design goals:
//
//   - Streaming and zero-copy. [Source.Next] returns one [Packet] at a time;
//     its Data and Payload alias the reader's buffer and stay valid until the
//     next call. [Source.NextInto] and [Merge.NextInto] fill a Packet the
//     caller reuses instead, so that a read loop copies no Packet at all.
//     Reading a pcap file does not allocate per packet (tested with
//     testing.AllocsPerRun); a 100 GB capture goes through in constant
//     memory. [OpenMapped] reads a pcap file from a memory mapping of it,
//     without read(2)'s copy, releasing the pages behind the reader.
//   - Pure Go. File headers, pcapng sections and interfaces are read with
//     github.com/gopacket/gopacket/pcapgo; pcap records and pcapng Enhanced
//     Packet Blocks are read in place from the read buffer (pcapgo copies
//     every octet once or twice more), and headers decoded with gopacket's DecodingLayerParser over preallocated
//     layers (Ethernet with 802.1Q and 802.1ad tags, Linux cooked SLL and
//     SLL2, BSD loopback, raw IPv4/IPv6, IPv6 extension headers, TCP, UDP).
//     Native InfiniBand captures ([LinkTypeInfiniBand]) are passed through
//     whole as [KindIB] packets for package dissect/ibcm.
//   - Honest lengths. The payload never extends past the IP total length
//     (Ethernet padding of short frames does not leak into it) nor past the
//     captured bytes; [Packet.PayloadWireLen] says how long it was on the wire
//     when the snap length cut it.
//   - Damage is reported, not hidden. A truncated or corrupt file ends with a
//     *[FileError] naming the file, the byte offset where the damage starts and
//     the frame that could not be read, after every intact frame before it.
//     A frame whose headers cannot be decoded is still returned, with
//     [KindBad] and the reason in [Packet.Err] (a *dissect.DecodeError).
//   - Bounded memory on hostile input. Records longer than [MaxRecordLength]
//     are refused before anything is allocated for them.
//
// Frames are numbered from 1 in file order, as Wireshark numbers them: every
// pcap record and every pcapng packet block (enhanced, simple or obsolete
// packet block) is one frame, whatever it holds. (tshark 4.0 also counts a
// pcapng Custom Block as a frame, and tcpdump does not; this package does
// not, so in a file with custom blocks the frames after one are numbered
// as tcpdump numbers them, one less than tshark.)
//
// Per-packet metadata beyond the timestamp and lengths (pcapng packet block
// options such as comments, flags and hashes) is skipped, as are the
// interface index, protocol and packet type of the records of a modified
// (Kuznetzov) pcap file, which reads as a classic one otherwise (read by a
// Source: [OpenChunks] leaves it to one).
//
// Gzip-compressed captures are decompressed transparently, with
// github.com/klauspost/compress/gzip (about 1.5x as fast as compress/gzip
// on the issue 6 workload); offsets in a [FileError] then count bytes of
// the decompressed stream. [OpenReadAhead] (and [OpenMerge] with one file)
// decompresses in another goroutine while the caller decodes.
package capture

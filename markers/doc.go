// Package markers is the arithmetic of the MPA marker grid (RFC 5044 §5.1).
//
// When markers are negotiated for a direction of an MPA connection, the
// sender places a 4-octet marker every 512 octets of TCP sequence space,
// starting at the first octet of the first FPDU of that direction (the grid
// origin). A marker holds 16 reserved bits (sent as zero) and FPDUPTR, the
// backward distance in stream octets from the first octet of the
// ULPDU_Length field of the FPDU the marker sits in to the first octet of
// the marker itself; earlier markers of the same FPDU count toward it. A
// marker exactly at the first octet of an FPDU belongs to that FPDU
// (FPDUPTR 0); one exactly after its last CRC octet belongs to the next.
// Markers are excluded from ULPDU_Length and from the pad computation and
// included in the CRC and in TCP sequence space (RFC 5044 §5.1 as summarised
// in PROTOCOL.md A.3, A.4 and A.6; the rules match Wireshark's
// packet-iwarp-mpa.c and the OSC software iWARP, which were read; the RFC
// text itself was not available to check the wording).
//
// All positions in this package are 64-bit stream offsets, the same Off as
// reassembly.Chunk carries: a uint64 count of octets from the start of the
// captured stream, so the grid needs no serial arithmetic and never wraps.
//
// Design goals:
//   - pure arithmetic on a value type ([Grid]), no I/O and no state;
//   - [Grid.Strip] and [Grid.Insert] append into caller-provided buffers and
//     do not allocate when those have capacity;
//   - never panic and never read past a slice, whatever the input;
//   - the receiver side ([Grid.Strip], [CheckPtr], [FindPhase]) and the
//     encoder side ([Grid.Insert], used by synth/ and replay/) are one
//     implementation, so Strip(Insert(x)) == x is a tested property.
//
// Limits: FPDUPTR is a 16-bit field, so a marker further than 65535 octets
// from the start of its FPDU cannot be represented; [Grid.Insert] then writes
// the distance modulo 2^16 and [CheckPtr] rejects it. MULPDU (RFC 5044)
// keeps conforming FPDUs far below that.
package markers

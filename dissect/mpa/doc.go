// Package mpa is the wire format of MPA, Marker PDU Aligned Framing for TCP
// (RFC 5044), with the Enhanced RDMA Connection Establishment of MPA
// revision 2 (RFC 6581) and the private-data conventions seen inside MPA
// Request/Reply frames ([MS-SMBD] IRD/ORD negotiation, RFC 8797
// RPC-over-RDMA CM private data).
//
// It covers, as pure decode and encode functions:
//
//   - MPA Request and Reply frames (RFC 5044 §7.1.1, RFC 6581 §8):
//     [DecodeFrame], [AppendFrame], [IsKeyPrefix], and [Frame.Check] for
//     protocol findings;
//   - the Enhanced RDMA Connection Establishment Data (RFC 6581 §9) with
//     both the final RFC and the draft-01 flag meanings: [DecodeEnhanced],
//     [Enhanced.RTR], [Enhanced.P2P];
//   - FPDU framing on marker-free octets (RFC 5044 §4.1): [DecodeFPDU],
//     [AppendFPDU], [PadLen], [PlainLen], [MULPDU];
//   - the MPA CRC-32C (RFC 5044 §4.4): [CRC32C], [UpdateCRC32C];
//   - the 4-octet marker (RFC 5044 §4.2): [DecodeMarker], [AppendMarker].
//     Where markers sit in the stream is the business of package markers;
//   - FPDUs as they go on the wire, markers and CRC included (RFC 5044
//     §4.1, §4.4, §5.1): [Framing.AppendFPDU], [Framing.WireLen],
//     [Framing.CRCOffsets], the one encoder that synth and replay share.
//     It places markers with markers.Grid.Insert.
//
// # Design goals
//
// Zero copy: every slice a decoder returns (Frame.PD, FPDU.ULPDU, ...)
// aliases the input buffer, capped so that appending to it cannot overwrite
// the octets that follow. Keep the input alive and unchanged for as long as
// you use the result.
//
// Zero allocation: the decoders allocate nothing (tested with
// testing.AllocsPerRun) and return the sentinel errors of package dissect
// unwrapped ([dissect.ErrTruncated], [dissect.ErrNotMPA]); on error the
// returned value is the zero value. They never panic and never read past
// the slice.
//
// No state and no I/O: the package knows nothing about connections,
// directions or TCP sequence numbers. Negotiation, the marker grid's
// arithmetic and stream reassembly belong to other packages; [Framing]
// takes the negotiated outcome and a stream offset as plain values.
//
// Round trip: for every header, decoding what the matching Append function
// produced gives back the same value; the fuzz targets check that
// decode → encode → decode is stable on arbitrary input.
//
// Multi-octet fields are big-endian, except the CRC field of an FPDU, which
// is the CRC-32C value written least significant octet first.
package mpa

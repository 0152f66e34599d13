// Package rdmap is the wire format of the Remote Direct Memory Access
// Protocol (RFC 5040) and its extensions (RFC 7306), as carried in one DDP
// segment, i.e. one MPA ULPDU.
//
// It covers, as pure decode and encode functions:
//
//   - the RDMAP control octet and opcodes (RFC 5040 §4.1 Figure 4, RFC 7306):
//     [Control], [Opcode] and what each opcode expects of DDP
//     ([Opcode.Tagged], [Opcode.QN]);
//   - the RDMAP headers that follow the DDP header: RDMA Read Request
//     ([ReadRequest], RFC 5040 §4.4), Terminate ([Terminate], RFC 5040
//     §4.8), and RFC 7306's Immediate Data, Atomic Request and Atomic
//     Response ([AtomicRequest], [AtomicResponse]);
//   - a whole DDP segment at once: [Decode], [AppendSegment];
//   - the Terminate error tables of all three layers (RFC 5040 Figure 9,
//     RFC 5041, RFC 5044 and RFC 6581), in names and in plain words:
//     [LayerName], [ETypeName], [CodeText], [Terminate.Explain];
//   - stateless validation as findings: [Segment.Check] (RFC 5040 §7.2,
//     RFC 5041) and [Terminate.CheckHeaders] (seed 004 Figure 10).
//
// Linux siw (6.1) writes the Terminate control word with C bitfields that
// come out in the wrong order on little-endian hosts; [DecodeTerminate]
// recognises that layout and says so in [Terminate.SiwLayout].
//
// # Design goals
//
// Zero copy: [Segment.Payload] aliases the input, capped so that appending
// to it cannot overwrite what follows. Keep the input alive and unchanged
// while you use it.
//
// Zero allocation: [Decode] and the header decoders allocate nothing
// (tested with testing.AllocsPerRun) and return the sentinels of package
// dissect unwrapped ([dissect.ErrTruncated], [dissect.ErrUnknownOpcode]).
// They never panic and never read past the slice. Explain and Check build
// strings and may allocate; they are meant for reports, not the per-packet
// path.
//
// No state and no I/O: the package looks at one segment. Sequence numbers,
// message reassembly and Read Request/Response matching belong to the
// packages that call this one.
//
// Round trip: decoding what the Append functions wrote gives the same
// value back; the fuzz targets check decode → encode → decode on arbitrary
// input.
//
// All multi-octet fields are big-endian (network order).
package rdmap

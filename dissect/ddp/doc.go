// Package ddp is the wire format of the Direct Data Placement protocol
// header (RFC 5041 §4): the tagged header (14 octets, T=1) and the
// untagged header (18 octets, T=0) that open every DDP segment, i.e. every
// MPA ULPDU.
//
// DDP leaves the octets it reserves for its upper layer (RsvdULP) to that
// layer. iWARP's upper layer is RDMAP (RFC 5040), which uses the first of
// them as its control octet and, in untagged headers, the next four as the
// Invalidate STag; this package returns those octets raw in
// [Header.ULPCtrl] and [Header.ULPRsvd] and leaves their meaning to package
// [github.com/iwarpkit/iwarpkit/dissect/rdmap].
//
// # Design goals
//
// Zero copy and zero allocation: [Decode] reads from the caller's slice,
// allocates nothing (tested with testing.AllocsPerRun) and returns
// [dissect.ErrTruncated] unwrapped when the slice is shorter than the
// header its T bit announces; on error the returned Header is the zero
// value. It never panics and never reads past the slice.
//
// No validation: Decode accepts any version, reserved bits and queue
// number, because a dissector must show what is on the wire. Judging the
// values is the job of rdmap's Segment.Check, which knows which queue and
// buffer model each RDMAP message must use.
//
// Round trip: [Append] writes exactly the octets Decode read, so
// decode → encode → decode is stable (checked by FuzzDDPDecode).
//
// All multi-octet fields are big-endian (network order).
package ddp

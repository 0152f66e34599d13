// Package model is the pure state of iwarptui, the terminal browser of iWARP
// captures: the record index, the filtered and virtualised record list and
// its selection, the detail tree, the hex layout of a record's octets, the
// connection table, the RDMA message ladder and the findings. It imports no
// terminal library; every piece is unit-tested without a screen.
//
// Design goals:
//
//   - Bounded memory on big captures. The [Index] keeps no decoded
//     records: each record is a fixed 24-octet [Entry] (frame, type, kind,
//     direction, connection, flags) and a compact varint encoding of its
//     fields in chunked arenas (about 40 octets for an FPDU: the DDP and
//     RDMAP headers are kept in their wire form, RFC 5041 §4 and RFC 5040
//     §4, and re-decoded on demand; payload previews are dropped, the hex
//     pane re-reads the capture instead). A record is decoded back into a
//     *flows.Record only when it is shown or filtered.
//   - Work in slices. Filtering, searching and following the index while it
//     grows are incremental ([List.Sync] takes a deadline), so a 512 MiB
//     capture never blocks the screen.
//   - Octet-exact layout. [Layout] maps every registry field of an FPDU or
//     MPA Request/Reply to its octets (RFC 5044 §4.1 and §7.1, RFC 5041 §4,
//     RFC 5040 §4), with markers (RFC 5044 §5.1), pad and CRC told apart,
//     and [BuildHex] lays the octets out frame by frame as the capture
//     carried them.
//
// Concurrency: an [Index] may be appended to by one goroutine while others
// read it. Everything else is used from one goroutine (the UI's).
package model

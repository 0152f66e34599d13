// Package dissect holds what every iWARP layer decoder shares: the field
// registry (one name per field, used by the text tree, JSON Lines keys,
// display filters and the TUI), the structured decode error, and the
// finding record that protocol problems are reported as.
//
// The wire formats themselves live in the sub-packages, one per layer:
// [github.com/iwarpkit/iwarpkit/dissect/mpa] (RFC 5044, RFC 6581),
// [github.com/iwarpkit/iwarpkit/dissect/ddp] (RFC 5041) and
// [github.com/iwarpkit/iwarpkit/dissect/rdmap] (RFC 5040, RFC 7306).
// Those packages do no I/O, keep no state, and decode from []byte
// without allocating; they report malformed input with the sentinel
// errors below, which the pipeline wraps in a [DecodeError] that names the
// frame and offset.
package dissect

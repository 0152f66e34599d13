// Package damage makes damaged capture files from good ones, for testing
// that iwarpdump survives what it meets in the field (issue 11): bit flips,
// truncations, splices of two captures, random TCP payloads, reordered and
// duplicated records, lying record lengths, zero-length records, timestamps
// going backwards and corrupt pcapng blocks.
//
// Design goals:
//
//   - Deterministic. [Variants] and [Generate] depend only on the seed, the
//     variant's index and the source bytes: variant i of seed s is the same
//     file on every run, so a failure is reproduced from its name alone.
//     Each variant draws from its own PCG stream (seed, i), so a variant does
//     not change when n or the other kinds change.
//   - Structure-aware. Besides blind damage (bit flips anywhere, truncation
//     at any offset), most kinds parse the source's pcap records and TCP
//     headers and keep the file framing valid, so that the damage reaches the
//     MPA, DDP and RDMAP decoders instead of stopping at the pcap reader.
//   - Honest about what was hit. [Variant.FileHeader] says when the damage
//     reached the file header (the pcap global header or the pcapng Section
//     Header Block), the one case in which a reader may refuse the whole
//     file as not being a capture.
//
// The package is for tests; it is not part of iwarpkit's API and makes no
// promise about speed (it allocates freely).
package damage

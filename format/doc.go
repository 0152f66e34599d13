// Package format renders flows records for people and scripts: the JSON
// Lines record contract (schema v1, shared/JSONL.md), tcpdump-style one-line
// text, and the verbose field tree.
//
// Every record is first turned into an ordered list of named values
// ([Fields]); the names are the field registry's names
// (github.com/iwarpkit/iwarpkit/dissect), so the JSON keys, the tree and the
// display filters all agree. Output is deterministic: the same record gives
// the same octets.
package format

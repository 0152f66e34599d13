// Package source connects iwarptui to a capture file: Run reads the file
// once through the project's pipeline (capture, then flows) into a
// model.Index, in the background, reporting progress; Frames re-reads
// single frames for the hex pane.
//
// The decoder keeps no payloads and capture.Source cannot seek, so Frames
// keeps its own small index of where frames start: for pcap it walks the
// 16-octet record headers (every 64th frame's offset is remembered, about
// 0.13 octets per frame), for pcapng the block headers (remembering also
// the Section Header and Interface Description Blocks a packet block
// depends on). A frame is then read with one ReadAt and decoded by
// capture.NewSource over the file header (pcap) or the section's header
// blocks (pcapng) followed by the frame's record, so its link, IP and TCP
// headers are decoded exactly as the indexing pass decoded them. The walk
// is lazy: it goes as far as the frames asked for.
//
// Gzip-compressed captures cannot be read at an offset: their frames are
// found by reading the file again from the start, keeping a window of
// frames around the one asked for in a bounded cache. Standard input
// cannot be read again: only the frames cached while indexing are there.
package source

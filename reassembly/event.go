package reassembly

import (
	"io"
	"time"
)

//go:generate go tool stringer -type=EventKind -trimprefix=Ev

// Segment is one TCP segment of a direction, as the capture layer decoded it.
type Segment struct {
	// Seq is the segment's sequence number: that of the SYN when SYN is
	// set, else that of Payload[0].
	Seq   SeqNum
	Flags Flags
	// Payload holds the captured TCP payload. Add does not keep it past the
	// call: in-order octets are handed to the Handler as sub-slices of it,
	// out-of-order ones are copied.
	Payload []byte
	// Frame is the capture's frame number, passed through to Chunks and
	// Events.
	Frame uint64
	TS    time.Time
	// Truncated reports that the capture cut the payload (snaplen). It is
	// informative: the reassembler relies on WireLen.
	Truncated bool
	// WireLen is the number of payload octets on the wire. When it exceeds
	// len(Payload), the octets in between were not captured: they are
	// reported as EvTruncated and, when the stream reaches them, EvGap.
	// Values below len(Payload) (0 included) mean len(Payload); values
	// above 2^30 are taken as 2^30.
	WireLen int
	// FilePos is the offset of Payload[0] in Options.File, where the
	// Stream can read the octets again instead of copying them for the
	// comparison of retransmissions; 0 when they are not there.
	FilePos int64
}

// Options configures a Stream. The zero value gives the defaults.
type Options struct {
	// MaxBuffered caps the out-of-order octets held per direction, plus 128
	// octets of bookkeeping charged per held piece (a run of octets from one
	// segment). 0 means 4 MiB; a negative value
	// holds nothing (every hole is skipped as soon as later data arrives).
	MaxBuffered int
	// Window is how many of the most recently delivered octets are kept to
	// compare retransmissions against. 0 means 64 KiB; a negative value
	// keeps none (every overlap is then reported as EvRetransmit).
	Window int
	// File, when set, is the capture file the Segments' FilePos refer to
	// (capture.Source.ReadAt). The delivered octets of a Segment with a
	// FilePos are then not copied into the window: the Stream keeps where
	// they are, and reads them back when a retransmission overlaps them.
	// File must stay readable while the Stream is used. Octets it can no
	// longer read count as the same.
	File io.ReaderAt
}

// Chunk is a run of contiguous in-order octets, all from one frame. Off is
// the 64-bit stream offset of Data[0] (0 = the first octet after the SYN,
// or the first octet seen when the SYN was not captured) and Seq its TCP
// sequence number. The Chunk and its Data are valid only during the
// Handler call: Data aliases the Segment's Payload or the Stream's buffer,
// and the Stream reuses the Chunk.
type Chunk struct {
	Off   uint64
	Seq   SeqNum
	Data  []byte
	Frame uint64
	TS    time.Time
}

// EventKind says what an Event reports.
type EventKind uint8

// Event kinds. Off, Seq and Len of the Event give the range concerned.
const (
	_ EventKind = iota
	// EvSYN: the SYN was seen. Seq is the initial sequence number, Off 0.
	EvSYN
	// EvFIN: the stream reached the FIN. Off is the offset after the last
	// octet, Seq the FIN's sequence number. Reported once, in order.
	EvFIN
	// EvRST: a reset. Seq is the RST's sequence number, Off its offset
	// (0 when it lies before the origin).
	EvRST
	// EvMidstream: the first segment had no SYN; Off 0 is its first
	// octet, Seq that octet's sequence number.
	EvMidstream
	// EvGap: octets [Off, Off+Len) were never captured (lost, cut by the
	// snaplen, or skipped because the buffer was full). The stream goes on
	// at Off+Len.
	EvGap
	// EvRetransmit: octets [Off, Off+Len) arrived again with the same
	// content (or content that can no longer be compared), or a keepalive
	// probe (Len 0 or 1 just below the next octet). Not delivered.
	EvRetransmit
	// EvConflict: octets [Off, Off+Len) arrived again with different
	// content; the first copy wins and this one is dropped. Also a SYN or
	// FIN that contradicts an earlier one (Len 0).
	EvConflict
	// EvOutOfOrder: a segment [Off, Off+Len) arrived ahead of a hole and
	// was buffered.
	EvOutOfOrder
	// EvBufferFull: the out-of-order buffer hit Options.MaxBuffered, so the
	// stream gives up on the hole [Off, Off+Len), which follows as an
	// EvGap.
	EvBufferFull
	// EvTruncated: the capture cut a segment: its octets [Off, Off+Len)
	// were on the wire but not captured. They become an EvGap when the
	// stream reaches them.
	EvTruncated
	// EvPastFIN: octets [Off, Off+Len) lie past the stream's FIN, in a
	// segment that came after it or one held out of order when it came
	// (new data after a hole, to tshark): not delivered. (Numbered after
	// the others so that their values stay.)
	EvPastFIN
)

// Event is something the reassembler reports besides data: see EventKind
// for what Off, Seq and Len mean for each kind. Frame and TS are those of
// the segment that caused the event; for an EvGap, those of the data that
// follows the gap (or of the truncated segment).
type Event struct {
	Kind  EventKind
	Off   uint64
	Seq   SeqNum
	Len   int
	Frame uint64
	TS    time.Time
	// Cut marks an EvGap whose octets were on the wire but cut by the
	// capture's snap length (the end of a truncated segment), rather than
	// missing from it.
	Cut bool
}

// Handler receives a Stream's output, in stream order for Data.
type Handler interface {
	Data(c *Chunk)
	Event(e Event)
}

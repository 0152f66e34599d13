package reassembly_test

import (
	"fmt"
	"net/netip"

	"github.com/iwarpkit/iwarpkit/reassembly"
)

// printer is a Handler that prints what the stream reports.
type printer struct{}

func (printer) Data(c *reassembly.Chunk) {
	fmt.Printf("data  off=%d seq=%d %q (frame %d)\n", c.Off, c.Seq, c.Data, c.Frame)
}

func (printer) Event(e reassembly.Event) {
	fmt.Printf("%-6s off=%d seq=%d len=%d (frame %d)\n", e.Kind, e.Off, e.Seq, e.Len, e.Frame)
}

// One direction of a connection whose segments arrive reordered, with a
// retransmission, and one segment lost.
func ExampleStream() {
	s := reassembly.NewStream(reassembly.Options{})
	var h printer
	for _, seg := range []reassembly.Segment{
		{Seq: 4294967290, Flags: reassembly.SYN, Frame: 1},               // ISN near the wrap
		{Seq: 4294967296 - 1, Payload: []byte("MPA "), Frame: 2},         // ahead: buffered
		{Seq: 4294967291, Payload: []byte("iWAR"), Frame: 3},             // fills the hole
		{Seq: 4294967291, Payload: []byte("iWAR"), Frame: 4},             // retransmission
		{Seq: 13, Payload: []byte("!"), Flags: reassembly.FIN, Frame: 5}, // after a lost segment
	} {
		s.Add(&seg, h)
	}
	s.Flush(h) // end of capture: give up the hole
	// Output:
	// SYN    off=0 seq=4294967290 len=0 (frame 1)
	// OutOfOrder off=4 seq=4294967295 len=4 (frame 2)
	// data  off=0 seq=4294967291 "iWAR" (frame 3)
	// data  off=4 seq=4294967295 "MPA " (frame 2)
	// Retransmit off=0 seq=4294967291 len=4 (frame 4)
	// OutOfOrder off=18 seq=13 len=1 (frame 5)
	// Gap    off=8 seq=3 len=10 (frame 5)
	// data  off=18 seq=13 "!" (frame 5)
	// FIN    off=19 seq=14 len=0 (frame 5)
}

func ExampleFlowKey() {
	k := reassembly.FlowKey{
		Src: netip.MustParseAddrPort("192.0.2.1:7471"),
		Dst: netip.MustParseAddrPort("[2001:db8::2]:40000"),
	}
	fmt.Println(k)
	fmt.Println(k.Reverse())
	// Output:
	// 192.0.2.1:7471->[2001:db8::2]:40000
	// [2001:db8::2]:40000->192.0.2.1:7471
}

func ExampleSeqNum() {
	a := reassembly.SeqNum(4294967290)
	b := a.Add(10) // wraps to 4
	fmt.Println(b, b.Diff(a), a.Less(b), b.Compare(a))
	// Output: 4 10 true 1
}

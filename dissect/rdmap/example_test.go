package rdmap_test

import (
	"fmt"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// The ULPDU of the Terminate Linux siw sent in term_badwrite.pcap frame 11.
var badWriteTerminate = []byte{
	0x41, 0x47, 0, 0, 0, 0, // DDP untagged, L, DV 1; RDMAP RV 1, Terminate
	0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, // QN 2, MSN 1, MO 0
	0x11, 0x00, 0x03, 0x00, // Terminate control, siw layout
	0x00, 0x40, // DDP Segment Length 64
	0xc1, 0x40, 0x07, 0xbf, 0x16, 0x00, // terminated RDMA Write header
	0, 0, 0x7f, 0xe0, 0xb8, 0x34, 0x70, 0,
}

func ExampleDecode() {
	s, err := rdmap.Decode(badWriteTerminate)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Opcode, "on queue", s.DDP.QN)
	fmt.Println(s.Term.Explain())
	// Output:
	// Terminate on queue 2
	// DDP Tagged Buffer Error: Invalid STag (a tagged segment (RDMA Write or Read Response) named an STag the receiver does not know); terminated segment: RDMA Write, STag 0x07bf1600, TO 0x7fe0b8347000, 64 octets [control word in Linux siw's little-endian bitfield layout]
}

func ExampleSegment_Check() {
	s, _ := rdmap.Decode(badWriteTerminate)
	for _, f := range s.Check(nil) {
		fmt.Println(f.Severity, f.Code)
	}
	// Output:
	// error rdmap.terminate
	// note rdmap.term_siw_layout
}

func ExampleDecodeTerminate() {
	// The same error in the RFC 5040 layout: M and D are 0x80 and 0x40.
	t, n, err := rdmap.DecodeTerminate(badWriteTerminate[18:])
	fmt.Println(rdmap.LayerName(t.Layer), rdmap.ETypeName(t.Layer, t.EType), t.SiwLayout, n, err)
	rfc := t
	rfc.SiwLayout = false
	fmt.Printf("% x\n", rdmap.AppendTerminate(nil, rfc)[:4])
	// Output:
	// DDP Tagged Buffer Error true 20 <nil>
	// 11 00 c0 00
}

func ExampleAppendSegment() {
	s := rdmap.Segment{Opcode: rdmap.OpSend, RV: rdmap.VersionIETF, Payload: []byte("hello")}
	s.DDP.L, s.DDP.DV, s.DDP.MSN = true, 1, 1
	fmt.Printf("% x\n", rdmap.AppendSegment(nil, s))
	// Output: 41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 68 65 6c 6c 6f
}

func ExampleExpectedHeaders() {
	d, r := rdmap.ExpectedHeaders(0, 1) // RDMAP Remote Protection Error
	fmt.Println(d, "/", r)
	// Output: Yes, if possible / Yes
}

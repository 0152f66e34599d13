package markers_test

import (
	"fmt"

	"github.com/iwarpkit/iwarpkit/markers"
)

// An FPDU of 12 marker-free octets starting 8 octets before a grid position:
// the encoder inserts a marker after 8 octets, the receiver strips it again
// and checks its FPDUPTR.
func ExampleGrid_Insert() {
	g := markers.Grid{Origin: 0}
	plain := []byte{0x00, 0x06, 'i', 'W', 'A', 'R', 'P', '!', 0xC1, 0xC2, 0xC3, 0xC4}
	wire := g.Insert(nil, plain, 504)
	fmt.Printf("% x\n", wire)
	fmt.Println(g.WireLen(504, len(plain)))

	back, found := g.Strip(nil, wire, 504, nil)
	fmt.Printf("%q\n", back[2:8])
	fmt.Printf("%+v %v\n", found[0], markers.CheckPtr(found[0], 504))
	// Output:
	// 00 06 69 57 41 52 50 21 00 00 00 08 c1 c2 c3 c4
	// 16
	// "iWARP!"
	// {Off:512 Rsvd:0 FPDUPtr:8} true
}

// The two octets of ULPDU_Length when a (non-conforming) FPDU starts one
// octet before a grid position: the marker separates them.
func ExampleGrid_WireOffset() {
	g := markers.Grid{Origin: 0}
	fmt.Println(g.WireOffset(511, 0), g.WireOffset(511, 1))
	// Output: 0 5
}

// Recovering the grid of a capture that starts in the middle of a
// marker-enabled stream.
func ExampleFindPhase() {
	g := markers.Grid{Origin: 0}
	var wire []byte
	for len(wire) < 3000 {
		plain := make([]byte, 100) // ULPDU_Length 94, PAD 0, CRC
		plain[1] = 94
		wire = g.Insert(wire, plain, uint64(len(wire)))
	}
	base := uint64(1000) // the capture missed the first 1000 octets
	data := wire[base:]
	cands := markers.FindPhase(data, base, func(s uint64) bool {
		i := s - base
		return i+2 <= uint64(len(data)) && data[i] == 0 && data[i+1] == 94
	})
	fmt.Printf("%+v\n", cands[0])
	// Output: {Grid:{Origin:0} Confirmed:4}
}

package replay_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/iwarpkit/iwarpkit/replay"
)

// Load a real Linux siw capture and replay it over loopback sockets with
// markers turned on from initiator to responder.
func ExampleLoopback() {
	scripts, err := replay.Load("../testdata/siw/crc_v2_iwtest_ops.pcap", replay.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	on := true
	rep, err := replay.Loopback(context.Background(), scripts, replay.Options{
		Negotiation: replay.Negotiation{MarkersI2R: &on},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := rep.Conns[0]
	fmt.Println(c.Outcome)
	fmt.Println("messages:", rep.Messages, "mismatches:", rep.Mismatches)
	// Output:
	// V=1 markers i2r on r2i off CRC on, matrix row 6
	// messages: 13 mismatches: 0
}

// Write the regenerated traffic to a capture, with an RDMAC initiator
// meeting a permissive IETF responder (interop matrix row 3).
func ExampleWritePcap() {
	scripts, err := replay.Load("../testdata/siw/crc_v2_iwtest_ops.pcap", replay.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	var out bytes.Buffer
	rep, err := replay.WritePcap(context.Background(), &out, scripts, replay.Options{
		Initiator: replay.RNICRDMAC,
		Responder: replay.RNICIETFPermissive,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Conns[0].Outcome)
	// Output:
	// V=0 markers i2r on r2i on CRC on, matrix row 3
}

// Compare two message lists as Connect does.
func ExampleDiff() {
	a := replay.MessageInfo{Opcode: 3, Length: 16}
	b := replay.MessageInfo{Opcode: 0, Length: 64}
	for _, m := range replay.Diff(replay.R2I, []replay.MessageInfo{a, b}, []replay.MessageInfo{b}) {
		fmt.Println(m)
	}
	// Output:
	// r2i message 0 missing: Send 16 octets [0000000000000000]
}

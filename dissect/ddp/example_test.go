package ddp_test

import (
	"fmt"

	"github.com/iwarpkit/iwarpkit/dissect/ddp"
)

func ExampleDecode() {
	// An untagged DDP header (a Send, L=1, QN 0, MSN 1, MO 0) followed by
	// the payload "hello" (PROTOCOL.md G.3).
	ulpdu := []byte{
		0x41, 0x43, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
		'h', 'e', 'l', 'l', 'o',
	}
	h, n, err := ddp.Decode(ulpdu)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("tagged=%v last=%v dv=%d qn=%d msn=%d mo=%d payload=%q\n",
		h.T, h.L, h.DV, h.QN, h.MSN, h.MO, ulpdu[n:])
	// Output: tagged=false last=true dv=1 qn=0 msn=1 mo=0 payload="hello"
}

func ExampleAppend() {
	h := ddp.Header{T: true, L: true, DV: ddp.VersionIETF, ULPCtrl: 0x40, STag: 0x4d93c500, TO: 0x5588df645ed0}
	fmt.Printf("% x\n", ddp.Append(nil, h))
	// Output: c1 40 4d 93 c5 00 00 00 55 88 df 64 5e d0
}

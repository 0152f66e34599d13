package mpa_test

import (
	"fmt"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/markers"
)

// An MPA revision 2 Request as Linux siw sends it for iwtest: CRC wanted,
// the Enhanced data (IRD 4, ORD 4), then the application's private data.
func ExampleDecodeFrame() {
	wire := []byte("MPA ID Req Frame\x50\x02\x00\x1a" +
		"\x00\x04\x00\x04iwtest-client-request\x00")
	f, n, err := mpa.DecodeFrame(wire)
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Kind, "rev", f.Rev, "crc", f.C, "markers", f.M, "octets", n)
	if e, ulp, ok := f.Enhanced(); ok {
		fmt.Println("IRD", e.IRD, "ORD", e.ORD, "p2p", e.P2P(mpa.FlagsRFC6581))
		fmt.Printf("ulp private data %q\n", ulp)
	}
	fmt.Println("findings:", len(f.Check(nil)))
	// Output:
	// request rev 2 crc true markers false octets 46
	// IRD 4 ORD 4 p2p false
	// ulp private data "iwtest-client-request\x00"
	// findings: 0
}

// Reading the peer-to-peer flags of an Enhanced data word under both
// meanings of the flags.
func ExampleEnhanced_RTR() {
	e, _ := mpa.DecodeEnhanced([]byte{0x80, 0x01, 0x80, 0x01})
	fmt.Println("RFC 6581:", e.P2P(mpa.FlagsRFC6581), e.RTR(mpa.FlagsRFC6581))
	fmt.Println("draft-01:", e.P2P(mpa.FlagsDraft01), e.RTR(mpa.FlagsDraft01))
	// Output:
	// RFC 6581: true write
	// draft-01: true send,read
}

// Building an FPDU and reading it back.
func ExampleAppendFPDU() {
	// PROTOCOL.md G.3: an untagged DDP Send (control 0x41 0x43, Inval
	// STag 0, QN 0, MSN 1, MO 0) carrying "hello".
	ulpdu := []byte("\x41\x43\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00hello")
	wire := mpa.AppendFPDU(nil, ulpdu, true)
	fmt.Printf("% x\n", wire)
	p, n, _ := mpa.DecodeFPDU(wire)
	fmt.Println(n, p.ULPDULen, len(p.Pad), p.CRCOK())
	// Output:
	// 00 17 41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 68 65 6c 6c 6f 00 00 00 b9 90 b1 0c
	// 32 23 3 true
}

// The PROTOCOL.md G.3 FPDU on a connection with markers, starting 28
// octets before a grid position: the marker (FPDUPTR 28) falls between the
// PAD and the CRC, which covers it.
func ExampleFraming_AppendFPDU() {
	ulpdu := []byte("\x41\x43\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00hello")
	f := mpa.Framing{Markers: true, CRC: true, Grid: markers.Grid{Origin: 20}}
	start := uint64(20 + 512 - 28)
	wire, err := f.AppendFPDU(nil, ulpdu, start)
	if err != nil {
		panic(err)
	}
	fmt.Printf("% x\n", wire[20:]) // "hello", PAD, marker, CRC
	fmt.Println(len(wire), f.WireLen(start, len(ulpdu)), f.CRCOffsets(start, len(ulpdu)))
	// Output:
	// 68 65 6c 6c 6f 00 00 00 00 00 00 1c bb 53 73 4c
	// 36 36 [32 33 34 35]
}

// Checksumming an FPDU in pieces, as it lies on the wire around a marker.
func ExampleUpdateCRC32C() {
	a, b := []byte("1234"), []byte("56789")
	fmt.Printf("%#08x %#08x\n", mpa.CRC32C([]byte("123456789")), mpa.UpdateCRC32C(mpa.UpdateCRC32C(0, a), b))
	// Output:
	// 0xe3069283 0xe3069283
}

func ExampleMULPDU() {
	fmt.Println(mpa.MULPDU(1460, true), mpa.MULPDU(1448, false))
	// Output:
	// 1442 1442
}

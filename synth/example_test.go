package synth_test

import (
	"bytes"
	"fmt"
	"net/netip"

	"github.com/iwarpkit/iwarpkit/synth"
)

// Generate a hand-written scenario: one MPA rev 1 connection with CRC and
// markers from the responder, carrying a Send and an RDMA Read.
func ExampleGenerate() {
	s := synth.Scenario{
		Seed: 42,
		Conns: []synth.Conn{{
			Initiator: netip.MustParseAddrPort("192.0.2.2:40000"),
			Responder: netip.MustParseAddrPort("192.0.2.1:7174"),
			Handshake: true,
			MPA: &synth.MPAParams{
				Request: synth.MPAFrame{Rev: 1, M: true, C: true},
				Reply:   synth.MPAFrame{Rev: 1, C: true},
			},
			Ops: []synth.Op{
				{Dir: synth.I2R, Kind: synth.Send, Size: 100},
				{Dir: synth.I2R, Kind: synth.Read, Size: 3000, STag: 0x10, SrcSTag: 0x20},
			},
		}},
	}
	var pcap, truth bytes.Buffer
	res, err := synth.Generate(s, &pcap, &truth)
	if err != nil {
		panic(err)
	}
	for _, r := range res.Records {
		if f, ok := r.(*synth.TruthFPDU); ok {
			fmt.Printf("%s %-18s len %4d markers %d crc %s\n", f.Dir, f.RDMAP.Name, f.Len, len(f.MPA.Markers), f.MPA.CRCStatus)
		}
	}
	// Output:
	// i2r Send               len  124 markers 0 crc ok
	// i2r RDMA Read Request  len   52 markers 0 crc ok
	// r2i RDMA Read Response len 1448 markers 3 crc ok
	// r2i RDMA Read Response len 1448 markers 3 crc ok
	// r2i RDMA Read Response len  192 markers 1 crc ok
}

// Build a library scenario and look at its connection summary.
func ExampleNamed() {
	s, _ := synth.Named("marker-split-len", 1)
	res, err := synth.Generate(s, nil, nil)
	if err != nil {
		panic(err)
	}
	c := res.Records[len(res.Records)-1].(*synth.TruthConn)
	fmt.Println(c.State, c.MPA.Rev, c.DDPVersion, c.MPA.MarkersI2R, c.MPA.MarkersR2I, c.FPDUs)
	// Output: closed 0 0 true true 4
}

// Stream a large capture in constant memory.
func ExampleWriteLarge() {
	var pcap bytes.Buffer
	if err := synth.WriteLarge(&pcap, nil, 1<<20, 1); err != nil {
		panic(err)
	}
	fmt.Println(pcap.Len() >= 1<<20)
	// Output: true
}

package bpf_test

import (
	"errors"
	"fmt"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/bpf"
)

func ExampleCompile() {
	prog, err := bpf.Compile("tcp dst port 7174 or 7175", layers.LinkTypeEthernet, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := prog.NewMatcher()
	if err != nil {
		fmt.Println(err)
		return
	}
	// An Ethernet frame: IPv4, TCP from port 40000 to port 7174.
	frame := []byte{
		2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00, // Ethernet
		0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, // IPv4
		0x9c, 0x40, 0x1c, 0x06, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0, // TCP
	}
	fmt.Println(m.Match(frame))
	// Output: true
}

func ExampleCompile_unsupported() {
	_, err := bpf.Compile("ip6 protochain 6", layers.LinkTypeEthernet, 0)
	fmt.Println(errors.Is(err, bpf.ErrUnsupported))
	// Output: true
}

func ExampleParseRaw() {
	// The output of `tcpdump -ddd -y EN10MB ip6`.
	prog, err := bpf.ParseRaw("4\n40 0 0 12\n21 0 1 34525\n6 0 0 262144\n6 0 0 0\n")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(prog)
	// Output:
	// (000) ldh [12]
	// (001) jneq #34525,1
	// (002) ret #262144
	// (003) ret #0
}

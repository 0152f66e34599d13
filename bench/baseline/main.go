// Command baseline is the floor issue 6 measures iwarpdump against: read a
// capture, decode Ethernet/IP/TCP (the capture package, gopacket's
// DecodingLayerParser) and compute CRC32c over every TCP payload octet.
// Nothing iWARP is done. Usage: baseline FILE.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: baseline FILE")
		os.Exit(2)
	}
	src, err := capture.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var crc uint32
	var packets, octets uint64
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		packets++
		octets += uint64(len(p.Payload))
		crc ^= mpa.CRC32C(p.Payload)
	}
	fmt.Printf("%d packets, %d payload octets, crc %08x\n", packets, octets, crc)
}

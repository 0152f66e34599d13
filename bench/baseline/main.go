// Command baseline is the floor issue 6 measures iwarpdump against, as the
// issue defines it: read a pcap file and decode Ethernet/IP/TCP with
// gopacket (pcapgo's zero-copy reader and a DecodingLayerParser, the
// fastest way gopacket offers), and compute CRC32c over every TCP payload
// octet. Nothing iWARP is done, and none of iwarpkit's own capture code is
// used, so the floor does not move when that code gets faster.
// Usage: baseline FILE.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: baseline FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	r, err := pcapgo.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var (
		eth   layers.Ethernet
		ip4   layers.IPv4
		ip6   layers.IPv6
		tcp   layers.TCP
		types = make([]gopacket.LayerType, 0, 8)
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip4, &ip6, &tcp)
	parser.IgnoreUnsupported = true
	var crc uint32
	var packets, octets uint64
	for {
		data, _, err := r.ZeroCopyReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		packets++
		_ = parser.DecodeLayers(data, &types)
		for _, t := range types {
			if t == layers.LayerTypeTCP {
				octets += uint64(len(tcp.Payload))
				crc ^= mpa.CRC32C(tcp.Payload)
			}
		}
	}
	fmt.Printf("%d packets, %d payload octets, crc %08x\n", packets, octets, crc)
}

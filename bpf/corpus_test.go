package bpf

import (
	"encoding/binary"
	"net/netip"

	"github.com/gopacket/gopacket/layers"
)

// A corpus of generated frames for the differential tests: every
// combination of network protocol, transport, address and port that the
// primitives tell apart, IPv4 options and fragments, IPv6 Fragment and
// Hop-by-Hop headers, 802.1Q/802.1ad tags, ARP and RARP, and frames cut
// short at the places where the programs load.

var (
	corpusV4 = []netip.Addr{
		netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2"),
		netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("192.168.1.1"),
		netip.MustParseAddr("1.2.3.4"), netip.MustParseAddr("0.0.0.80"),
		netip.MustParseAddr("11.0.0.9"),
	}
	corpusV6 = []netip.Addr{
		netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("::1"),
		netip.MustParseAddr("fe80::1"), netip.MustParseAddr("::ffff:1.2.3.4"),
		netip.MustParseAddr("2001:db8:0:1::5"),
	}
	corpusPorts = []uint16{80, 443, 22, 100, 150, 200, 201, 1000, 5, 10, 7174}
)

func be16(b []byte, v uint16) { binary.BigEndian.PutUint16(b, v) }

// transport returns a TCP, UDP or SCTP header (and a little payload).
func transport(proto byte, sp, dp uint16) []byte {
	var h []byte
	switch proto {
	case protoTCP:
		h = make([]byte, 20+4)
		h[12] = 5 << 4
		h[13] = 0x18
	case protoUDP:
		h = make([]byte, 8+4)
		be16(h[4:], 12)
	case protoSCTP:
		h = make([]byte, 12+4)
	default: // ICMP and others: no ports, but octets where ports would be
		h = make([]byte, 8)
		h[0], h[1] = 8, 0
		return h
	}
	be16(h[0:], sp)
	be16(h[2:], dp)
	return h
}

func ipv4Packet(src, dst netip.Addr, proto byte, options int, fragField uint16, payload []byte) []byte {
	hl := 20 + 4*options
	b := make([]byte, hl+len(payload))
	b[0] = 0x40 | byte(hl/4)
	be16(b[2:], uint16(len(b)))
	be16(b[4:], 0x1234)
	be16(b[6:], fragField)
	b[8] = 64
	b[9] = proto
	s, d := src.As4(), dst.As4()
	copy(b[12:], s[:])
	copy(b[16:], d[:])
	for i := 20; i < hl; i++ {
		b[i] = 1 // NOP options
	}
	copy(b[hl:], payload)
	return b
}

func ipv6Packet(src, dst netip.Addr, nh byte, payload []byte) []byte {
	b := make([]byte, 40+len(payload))
	b[0] = 0x60
	be16(b[4:], uint16(len(payload)))
	b[6] = nh
	b[7] = 64
	s, d := src.As16(), dst.As16()
	copy(b[8:], s[:])
	copy(b[24:], d[:])
	copy(b[40:], payload)
	return b
}

func ext6(nh byte, kind byte, fragOff uint16, more bool, payload []byte) []byte {
	h := make([]byte, 8, 8+len(payload))
	h[0] = nh
	if kind == protoFrag6 {
		v := fragOff << 3
		if more {
			v |= 1
		}
		be16(h[2:], v)
	}
	return append(h, payload...)
}

func arpPacket(op uint16, spa, tpa netip.Addr) []byte {
	b := make([]byte, 28)
	be16(b[0:], 1)
	be16(b[2:], etherIPv4)
	b[4], b[5] = 6, 4
	be16(b[6:], op)
	s, t := spa.As4(), tpa.As4()
	copy(b[14:], s[:])
	copy(b[24:], t[:])
	return b
}

// netPacket is a network-layer packet and its ethertype.
type netPacket struct {
	etype uint16
	data  []byte
}

func corpusNet() []netPacket {
	var out []netPacket
	protos := []byte{protoTCP, protoUDP, protoSCTP, protoICMP, 47}
	// IPv4: address pairs x protocols x port pairs, with and without options.
	for i, s := range corpusV4 {
		for j, d := range corpusV4 {
			if (i+j)%2 == 1 && i != 0 {
				continue
			}
			for k, pr := range protos {
				for pi, sp := range corpusPorts {
					dp := corpusPorts[(pi+k+i)%len(corpusPorts)]
					opts := (i + j + pi) % 3 // 0, 1 or 2 option words
					out = append(out, netPacket{etherIPv4, ipv4Packet(s, d, pr, opts, 0, transport(pr, sp, dp))})
				}
			}
		}
	}
	// IPv4 fragments: first (MF, offset 0), middle and last.
	for _, sp := range []uint16{80, 443, 150} {
		for _, ff := range []uint16{0x2000, 0x2000 | 185, 370, 0x4000 /* DF */} {
			out = append(out, netPacket{etherIPv4, ipv4Packet(corpusV4[0], corpusV4[1], protoTCP, 0, ff, transport(protoTCP, sp, 22))})
			out = append(out, netPacket{etherIPv4, ipv4Packet(corpusV4[1], corpusV4[0], protoUDP, 1, ff, transport(protoUDP, 22, sp))})
		}
	}
	// IPv6.
	for i, s := range corpusV6 {
		for j, d := range corpusV6 {
			for k, pr := range append(protos, protoICMPv6) {
				for pi, sp := range corpusPorts {
					if (pi+i+j)%2 == 1 {
						continue
					}
					dp := corpusPorts[(pi+k+j)%len(corpusPorts)]
					out = append(out, netPacket{etherIPv6, ipv6Packet(s, d, pr, transport(pr, sp, dp))})
				}
			}
		}
	}
	// IPv6 behind a Fragment header (first and later fragments) and a
	// Hop-by-Hop header.
	for _, pr := range []byte{protoTCP, protoUDP, protoSCTP, protoICMPv6} {
		for _, sp := range []uint16{80, 443, 150} {
			tr := transport(pr, sp, 22)
			out = append(out,
				netPacket{etherIPv6, ipv6Packet(corpusV6[0], corpusV6[1], protoFrag6, ext6(pr, protoFrag6, 0, true, tr))},
				netPacket{etherIPv6, ipv6Packet(corpusV6[0], corpusV6[1], protoFrag6, ext6(pr, protoFrag6, 100, false, tr))},
				netPacket{etherIPv6, ipv6Packet(corpusV6[1], corpusV6[0], 0, ext6(pr, 0, 0, false, tr))})
		}
	}
	// ARP and RARP, requests and replies.
	for i, s := range corpusV4 {
		d := corpusV4[(i+3)%len(corpusV4)]
		out = append(out, netPacket{etherARP, arpPacket(1, s, d)}, netPacket{etherARP, arpPacket(2, d, s)})
		out = append(out, netPacket{etherRARP, arpPacket(3, s, d)})
	}
	// Another ethertype.
	out = append(out, netPacket{0x88cc, make([]byte, 46)})
	return out
}

func etherFrame(tags []uint16, np netPacket) []byte {
	b := make([]byte, 12, 14+4*len(tags)+len(np.data))
	for i := range 6 {
		b[i] = 0x02
		b[6+i] = byte(0x10 + i)
	}
	for i, tpid := range tags {
		vid := uint16(100 + i*100)
		b = append(b, byte(tpid>>8), byte(tpid), byte(vid>>8), byte(vid))
	}
	b = append(b, byte(np.etype>>8), byte(np.etype))
	return append(b, np.data...)
}

func sllFrame(np netPacket) []byte {
	b := make([]byte, 16, 16+len(np.data))
	be16(b[2:], 1)
	be16(b[4:], 6)
	copy(b[6:], []byte{2, 0, 0, 0, 0, 1})
	be16(b[14:], np.etype)
	return append(b, np.data...)
}

func sll2Frame(np netPacket) []byte {
	b := make([]byte, 20, 20+len(np.data))
	be16(b[0:], np.etype)
	binary.BigEndian.PutUint32(b[4:], 3)
	be16(b[8:], 1)
	b[11] = 6
	return append(b, np.data...)
}

// corpus returns the frames for link type lt, whole and cut short.
func corpus(lt layers.LinkType) [][]byte {
	var frames [][]byte
	for i, np := range corpusNet() {
		switch lt {
		case layers.LinkTypeEthernet:
			frames = append(frames, etherFrame(nil, np))
			switch i % 4 {
			case 0:
				frames = append(frames, etherFrame([]uint16{ether8021Q}, np))
			case 1:
				frames = append(frames, etherFrame([]uint16{ether8021AD, ether8021Q}, np))
			case 2:
				frames = append(frames, etherFrame([]uint16{etherQinQ}, np))
			}
		case layers.LinkTypeLinuxSLL:
			frames = append(frames, sllFrame(np))
		case layers.LinkTypeLinuxSLL2:
			frames = append(frames, sll2Frame(np))
		case layers.LinkTypeRaw, layers.LinkTypeIPv4, layers.LinkTypeIPv6:
			if (np.etype == etherIPv4 && lt != layers.LinkTypeIPv6) || (np.etype == etherIPv6 && lt != layers.LinkTypeIPv4) {
				frames = append(frames, append([]byte(nil), np.data...))
			}
		}
	}
	// Truncated copies of every 7th frame at the offsets where headers end.
	n := len(frames)
	for i := 0; i < n; i += 7 {
		f := frames[i]
		for _, cut := range []int{1, 13, 20, 24, 30, 34, 38, 40, 50, 54, 56, 60, 62} {
			if cut < len(f) {
				frames = append(frames, f[:cut])
			}
		}
	}
	return frames
}

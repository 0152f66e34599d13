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
	dst   []byte // the Ethernet destination, when not 02:02:02:02:02:02
}

// etherLLC is the netPacket etype of an 802.2 LLC packet: a length on
// Ethernet, LINUX_SLL_P_802_2 in a cooked header.
const etherLLC = 4

// tcpSegment is a TCP header with flags, data offset doff (words) and a
// payload.
func tcpSegment(sp, dp uint16, flags byte, doff int, payload []byte) []byte {
	h := make([]byte, 4*doff, 4*doff+len(payload))
	be16(h[0:], sp)
	be16(h[2:], dp)
	h[12] = byte(doff) << 4
	h[13] = flags
	for i := 20; i < len(h); i++ {
		h[i] = 1 // NOP options
	}
	return append(h, payload...)
}

// corpusExtra are packets for the accessor, length and link-layer
// primitives: TCP flags and payloads, ICMP and ICMPv6 types, multicast and
// broadcast destinations, 802.2 LLC, other IP protocols.
func corpusExtra() []netPacket {
	var out []netPacket
	a, b := corpusV4[0], corpusV4[1]
	flags := []byte{0x02, 0x12, 0x11, 0x04, 0x10, 0x18, 0xc2, 0x29}
	for i, fl := range flags {
		doff := 5 + 3*(i%2)
		pl := []byte("GET / HTTP/1.0")
		if i%3 == 2 {
			pl = []byte("POST")
		}
		tr := tcpSegment(uint16(1000+i), 80, fl, doff, pl)
		out = append(out, netPacket{etype: etherIPv4, data: ipv4Packet(a, b, protoTCP, i%2, 0, tr)})
		out = append(out, netPacket{etype: etherIPv6, data: ipv6Packet(corpusV6[0], corpusV6[1], protoTCP, tr)})
	}
	for i, v := range []uint16{0x1234, 0x4321, 0x1234} {
		u := transport(protoUDP, 5000, uint16(53+i))
		be16(u[8:], v)
		out = append(out, netPacket{etype: etherIPv4, data: ipv4Packet(b, a, protoUDP, i, 0, u)})
		out = append(out, netPacket{etype: etherIPv6, data: ipv6Packet(corpusV6[1], corpusV6[0], protoUDP, u)})
	}
	for _, tc := range [][2]byte{{0, 0}, {3, 1}, {3, 3}, {11, 0}, {8, 0}} {
		ic := []byte{tc[0], tc[1], 0, 0, 0, 1, 0, 1, 0xaa, 0xbb}
		out = append(out, netPacket{etype: etherIPv4, data: ipv4Packet(a, b, protoICMP, 0, 0, ic)})
	}
	for _, ty := range []byte{128, 129, 135, 1} {
		ic := []byte{ty, 0, 0, 0, 0, 0, 0, 0}
		out = append(out, netPacket{etype: etherIPv6, data: ipv6Packet(corpusV6[2], corpusV6[0], protoICMPv6, ic)})
	}
	// Multicast and broadcast, at the link and network layers.
	bcast := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	mcast4 := []byte{0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb}
	mcast6 := []byte{0x33, 0x33, 0x00, 0x00, 0x00, 0x01}
	udp := transport(protoUDP, 5353, 5353)
	out = append(out,
		netPacket{etype: etherIPv4, data: ipv4Packet(a, netip.MustParseAddr("224.0.0.251"), protoUDP, 0, 0, udp), dst: mcast4},
		netPacket{etype: etherIPv4, data: ipv4Packet(a, netip.MustParseAddr("239.1.2.3"), protoUDP, 1, 0, udp), dst: mcast4},
		netPacket{etype: etherIPv4, data: ipv4Packet(a, netip.MustParseAddr("255.255.255.255"), protoUDP, 0, 0, udp), dst: bcast},
		netPacket{etype: etherIPv4, data: ipv4Packet(a, netip.MustParseAddr("223.255.255.255"), protoUDP, 0, 0, udp), dst: nil},
		netPacket{etype: etherIPv6, data: ipv6Packet(corpusV6[2], netip.MustParseAddr("ff02::1"), protoICMPv6, []byte{134, 0, 0, 0, 0, 0, 0, 0}), dst: mcast6},
		netPacket{etype: etherIPv6, data: ipv6Packet(corpusV6[2], netip.MustParseAddr("ff02::fb"), protoUDP, udp), dst: mcast6},
		netPacket{etype: etherARP, data: arpPacket(1, a, b), dst: bcast},
		netPacket{etype: etherARP, data: arpPacket(1, b, a), dst: []byte{0x10, 0x11, 0x12, 0x13, 0x14, 0x15}}, // to its source
	)
	// Other IP protocols: IGMP, PIM, VRRP, AH, ESP, IGRP.
	for _, pr := range []byte{2, 103, 112, 51, 50, 9} {
		pl := []byte{0x11, 0x64, 0, 0, 224, 0, 0, 1}
		out = append(out, netPacket{etype: etherIPv4, data: ipv4Packet(b, netip.MustParseAddr("224.0.0.1"), pr, 0, 0, pl), dst: mcast4})
		out = append(out, netPacket{etype: etherIPv6, data: ipv6Packet(corpusV6[1], corpusV6[4], pr, pl)})
	}
	// A later IGMP fragment.
	out = append(out, netPacket{etype: etherIPv4, data: ipv4Packet(b, a, 2, 0, 185, []byte{0x11, 0, 0, 0, 0, 0, 0, 0})})
	// 802.2 LLC: STP (DSAP 0x42), SAP 0x64, SNAP.
	for _, sap := range []byte{0x42, 0x64, 0xaa} {
		out = append(out, netPacket{etype: etherLLC, data: []byte{sap, sap, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}})
	}
	// Other ethertypes: loopback, DECnet, a VLAN tag as the protocol.
	out = append(out, netPacket{etype: 0x9000, data: make([]byte, 46)}, netPacket{etype: 0x6003, data: make([]byte, 46)})
	// Long packets, for len, less and greater.
	long := make([]byte, 1200)
	out = append(out, netPacket{etype: etherIPv4, data: ipv4Packet(a, b, protoUDP, 0, 0, append(transport(protoUDP, 9, 9), long...))})
	out = append(out, netPacket{etype: etherIPv6, data: ipv6Packet(corpusV6[0], corpusV6[1], protoTCP, append(tcpSegment(9, 9, 0x10, 5, nil), long[:500]...))})
	return out
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
					out = append(out, netPacket{etype: etherIPv4, data: ipv4Packet(s, d, pr, opts, 0, transport(pr, sp, dp))})
				}
			}
		}
	}
	// IPv4 fragments: first (MF, offset 0), middle and last.
	for _, sp := range []uint16{80, 443, 150} {
		for _, ff := range []uint16{0x2000, 0x2000 | 185, 370, 0x4000 /* DF */} {
			out = append(out, netPacket{etype: etherIPv4, data: ipv4Packet(corpusV4[0], corpusV4[1], protoTCP, 0, ff, transport(protoTCP, sp, 22))})
			out = append(out, netPacket{etype: etherIPv4, data: ipv4Packet(corpusV4[1], corpusV4[0], protoUDP, 1, ff, transport(protoUDP, 22, sp))})
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
					out = append(out, netPacket{etype: etherIPv6, data: ipv6Packet(s, d, pr, transport(pr, sp, dp))})
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
				netPacket{etype: etherIPv6, data: ipv6Packet(corpusV6[0], corpusV6[1], protoFrag6, ext6(pr, protoFrag6, 0, true, tr))},
				netPacket{etype: etherIPv6, data: ipv6Packet(corpusV6[0], corpusV6[1], protoFrag6, ext6(pr, protoFrag6, 100, false, tr))},
				netPacket{etype: etherIPv6, data: ipv6Packet(corpusV6[1], corpusV6[0], 0, ext6(pr, 0, 0, false, tr))})
		}
	}
	// ARP and RARP, requests and replies.
	for i, s := range corpusV4 {
		d := corpusV4[(i+3)%len(corpusV4)]
		out = append(out, netPacket{etype: etherARP, data: arpPacket(1, s, d)}, netPacket{etype: etherARP, data: arpPacket(2, d, s)})
		out = append(out, netPacket{etype: etherRARP, data: arpPacket(3, s, d)})
	}
	// Another ethertype.
	out = append(out, netPacket{etype: 0x88cc, data: make([]byte, 46)})
	return append(out, corpusExtra()...)
}

func etherFrame(tags []uint16, np netPacket) []byte {
	b := make([]byte, 12, 14+4*len(tags)+len(np.data))
	for i := range 6 {
		b[i] = 0x02
		b[6+i] = byte(0x10 + i)
	}
	if np.dst != nil {
		copy(b, np.dst)
	}
	if np.etype == etherLLC {
		np.etype = uint16(len(np.data))
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
	frames := corpusWhole(lt)
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

// corpusWhole returns the frames for link type lt, none cut short.
func corpusWhole(lt layers.LinkType) [][]byte {
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
	return frames
}

package synth

import (
	"encoding/binary"
	"net"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// sllHeaderLen is the size of the Linux cooked (SLL) header.
const sllHeaderLen = 16

// frameBuilder serialises segments into link-layer frames with gopacket,
// IPv4 header and TCP checksums computed. It reuses its buffers.
type frameBuilder struct {
	link LinkType
	buf  gopacket.SerializeBuffer
	opts gopacket.SerializeOptions
	eth  layers.Ethernet
	ip4  layers.IPv4
	ip6  layers.IPv6
	tcp  layers.TCP
	pay  gopacket.Payload
	ls   []gopacket.SerializableLayer
}

func newFrameBuilder(link LinkType) *frameBuilder {
	return &frameBuilder{
		link: link,
		buf:  gopacket.NewSerializeBuffer(),
		opts: gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
	}
}

// linkType returns the pcap link type of l.
func (l LinkType) linkType() layers.LinkType {
	switch l {
	case LinkRaw:
		return layers.LinkTypeRaw
	case LinkSLL:
		return layers.LinkTypeLinuxSLL
	}
	return layers.LinkTypeEthernet
}

// macFor derives a locally administered unicast MAC address from an IP
// address: 02:00 followed by the address's last four octets.
func macFor(a netip.Addr) net.HardwareAddr {
	b := a.As16()
	return net.HardwareAddr{0x02, 0x00, b[12], b[13], b[14], b[15]}
}

// build returns the frame of segment s of a connection from src to dst (the
// endpoints of s.dir). The slice is valid until the next call.
func (fb *frameBuilder) build(src, dst netip.AddrPort, s *segment, win uint16) ([]byte, error) {
	fb.tcp = layers.TCP{
		SrcPort: layers.TCPPort(src.Port()),
		DstPort: layers.TCPPort(dst.Port()),
		Seq:     s.seq,
		Ack:     s.ack,
		FIN:     s.flags&flagFIN != 0,
		SYN:     s.flags&flagSYN != 0,
		RST:     s.flags&flagRST != 0,
		PSH:     s.flags&flagPSH != 0,
		ACK:     s.flags&flagACK != 0,
		Window:  win,
	}
	if s.mssOpt != 0 {
		fb.tcp.Options = []layers.TCPOption{{
			OptionType:   layers.TCPOptionKindMSS,
			OptionLength: 4,
			OptionData:   binary.BigEndian.AppendUint16(nil, s.mssOpt),
		}}
	}
	fb.ls = fb.ls[:0]
	var ethType layers.EthernetType
	if src.Addr().Is4() {
		fb.ip4 = layers.IPv4{
			Version:  4,
			IHL:      5,
			Id:       s.ipid,
			Flags:    layers.IPv4DontFragment,
			TTL:      64,
			Protocol: layers.IPProtocolTCP,
			SrcIP:    src.Addr().AsSlice(),
			DstIP:    dst.Addr().AsSlice(),
		}
		if err := fb.tcp.SetNetworkLayerForChecksum(&fb.ip4); err != nil {
			return nil, err
		}
		ethType = layers.EthernetTypeIPv4
	} else {
		fb.ip6 = layers.IPv6{
			Version:    6,
			NextHeader: layers.IPProtocolTCP,
			HopLimit:   64,
			SrcIP:      src.Addr().AsSlice(),
			DstIP:      dst.Addr().AsSlice(),
		}
		if err := fb.tcp.SetNetworkLayerForChecksum(&fb.ip6); err != nil {
			return nil, err
		}
		ethType = layers.EthernetTypeIPv6
	}
	if fb.link == LinkEthernet {
		fb.eth = layers.Ethernet{SrcMAC: macFor(src.Addr()), DstMAC: macFor(dst.Addr()), EthernetType: ethType}
		fb.ls = append(fb.ls, &fb.eth)
	}
	if src.Addr().Is4() {
		fb.ls = append(fb.ls, &fb.ip4)
	} else {
		fb.ls = append(fb.ls, &fb.ip6)
	}
	fb.pay = s.payload
	fb.ls = append(fb.ls, &fb.tcp, &fb.pay)
	if err := gopacket.SerializeLayers(fb.buf, fb.opts, fb.ls...); err != nil {
		return nil, err
	}
	if fb.link == LinkSLL {
		h, err := fb.buf.PrependBytes(sllHeaderLen)
		if err != nil {
			return nil, err
		}
		// Packet type: 4 = sent by us (initiator side), 0 = to us.
		pt := uint16(0)
		if s.dir == I2R {
			pt = 4
		}
		binary.BigEndian.PutUint16(h[0:], pt)
		binary.BigEndian.PutUint16(h[2:], 1) // ARPHRD_ETHER
		binary.BigEndian.PutUint16(h[4:], 6)
		copy(h[6:14], append(macFor(src.Addr()), 0, 0))
		binary.BigEndian.PutUint16(h[14:], uint16(ethType))
	}
	return fb.buf.Bytes(), nil
}

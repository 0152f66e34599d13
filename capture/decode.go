package capture

import (
	"encoding/binary"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// Link types beyond gopacket's named constants: DLT_RAW as written by old
// libpcaps (12 on most platforms, where OpenBSD uses 12 for DLT_LOOP; 14 on
// OpenBSD and BSD/OS). See the LINKTYPE_RAW and LINKTYPE_LOOP entries of
// the tcpdump link-type list and Wireshark's wiretap/pcap-common.c.
const (
	linkTypeRaw12 layers.LinkType = 12
	linkTypeRaw14 layers.LinkType = 14
)

// LinkTypeInfiniBand is LINKTYPE_INFINIBAND (DLT_INFINIBAND, 247): "Raw
// InfiniBand packets, starting with the Local Routing Header" (libpcap
// pcap/dlt.h and the tcpdump link-type list; Wireshark reads it as its
// WTAP_ENCAP_INFINIBAND). gopacket has no name for it. Its frames become
// [KindIB] packets.
//
// IP over InfiniBand (LINKTYPE_IPOIB, 242, RFC 4391) is a different link
// type, not supported: it carries IP, not the InfiniBand transport.
const LinkTypeInfiniBand layers.LinkType = 247

// ibLRHLen is the size of the Local Route Header (IBA Vol. 1 §7.7) that
// starts every LinkTypeInfiniBand frame.
const ibLRHLen = 8

// linkSupported reports whether decode understands link type lt.
func linkSupported(lt layers.LinkType) bool {
	switch lt {
	case layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeLinuxSLL2,
		layers.LinkTypeNull, layers.LinkTypeLoop,
		layers.LinkTypeRaw, linkTypeRaw12, linkTypeRaw14,
		layers.LinkTypeIPv4, layers.LinkTypeIPv6, LinkTypeInfiniBand:
		return true
	}
	return false
}

// The first layer of a frame, by link type; indexes decoder.parsers.
const (
	firstEthernet = iota
	firstSLL
	firstSLL2
	firstLoopback
	firstIPv4
	firstIPv6
	firstCount
)

var firstLayerTypes = [firstCount]gopacket.LayerType{
	firstEthernet: layers.LayerTypeEthernet,
	firstSLL:      layers.LayerTypeLinuxSLL,
	firstSLL2:     layers.LayerTypeLinuxSLL2,
	firstLoopback: layers.LayerTypeLoopback,
	firstIPv4:     layers.LayerTypeIPv4,
	firstIPv6:     layers.LayerTypeIPv6,
}

// etherTypeQinQOld is the EtherType 0x9100 that switches used for the
// outer (and inner) tag of stacked VLANs before IEEE 802.1ad gave 0x88a8;
// tshark decodes its tag as an 802.1Q tag. gopacket does not know it.
const etherTypeQinQOld layers.EthernetType = 0x9100

// ethernet is gopacket's Ethernet layer, with a tag of EtherType 0x9100
// decoded as an 802.1Q tag (etherTypeQinQOld).
type ethernet struct{ layers.Ethernet }

func (e *ethernet) NextLayerType() gopacket.LayerType {
	if e.EthernetType == etherTypeQinQOld {
		return layers.LayerTypeDot1Q
	}
	return e.Ethernet.NextLayerType()
}

// dot1q is gopacket's 802.1Q tag, with a next tag of EtherType 0x9100
// decoded as one (etherTypeQinQOld).
type dot1q struct{ layers.Dot1Q }

func (d *dot1q) NextLayerType() gopacket.LayerType {
	if d.Type == etherTypeQinQOld {
		return layers.LayerTypeDot1Q
	}
	return d.Dot1Q.NextLayerType()
}

// decoder decodes link, IP and transport headers with gopacket's
// DecodingLayerParser over layers allocated once. All parsers share the
// layers and one container; they differ only in the first layer.
type decoder struct {
	eth   ethernet
	dot1q dot1q // 802.1Q, 802.1ad and 0x9100 (QinQ) tags alike, reused per tag
	sll   layers.LinuxSLL
	sll2  layers.LinuxSLL2
	loop  layers.Loopback
	ip4   layers.IPv4
	ip6   layers.IPv6 // decodes a leading Hop-by-Hop header itself
	ext   layers.IPv6ExtensionSkipper
	frag  layers.IPv6Fragment
	tcp   layers.TCP
	udp   layers.UDP

	noFast  bool // tests: always use the layer parser
	dlc     gopacket.DecodingLayerContainer
	parsers [firstCount]*gopacket.DecodingLayerParser
	decoded []gopacket.LayerType
}

func (d *decoder) init() {
	dlc := gopacket.DecodingLayerContainer(gopacket.DecodingLayerSparse(nil))
	for _, l := range []gopacket.DecodingLayer{
		&d.eth, &d.dot1q, &d.sll, &d.sll2, &d.loop, &d.ip4, &d.ip6,
		&d.ext,  // Hop-by-Hop (not first), Routing, Destination Options
		&d.frag, // after ext: takes LayerTypeIPv6Fragment over from it
		&d.tcp, &d.udp,
	} {
		dlc = dlc.Put(l)
	}
	d.dlc = dlc
	for i, first := range firstLayerTypes {
		p := gopacket.NewDecodingLayerParser(first)
		p.SetDecodingLayerContainer(dlc)
		// Stop quietly at a layer we do not decode (ARP, ICMP, a port's
		// application protocol...): the decoded list says how far we got.
		p.IgnoreUnsupported = true
		d.parsers[i] = p
	}
	d.decoded = make([]gopacket.LayerType, 0, 16)
}

// firstLayer picks the parser for a frame of link type lt. Raw IP link
// types carry IPv4 or IPv6, told apart by the version nibble; 12 is raw IP
// unless the frame starts like an OpenBSD DLT_LOOP header (a 4-octet
// address family in network byte order, so a zero first octet).
func firstLayer(lt layers.LinkType, data []byte) (int, error) {
	switch lt {
	case layers.LinkTypeEthernet:
		return firstEthernet, nil
	case layers.LinkTypeLinuxSLL:
		return firstSLL, nil
	case layers.LinkTypeLinuxSLL2:
		return firstSLL2, nil
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		return firstLoopback, nil
	case layers.LinkTypeIPv4:
		return firstIPv4, nil
	case layers.LinkTypeIPv6:
		return firstIPv6, nil
	case layers.LinkTypeRaw, linkTypeRaw12, linkTypeRaw14:
		switch data[0] >> 4 {
		case 4:
			return firstIPv4, nil
		case 6:
			return firstIPv6, nil
		}
		if lt == linkTypeRaw12 && data[0] == 0 {
			return firstLoopback, nil
		}
		return 0, dissect.ErrBadVersion
	}
	return 0, ErrLinkType
}

// layerOf maps a gopacket layer type to the dissect layer it belongs to.
func layerOf(t gopacket.LayerType) dissect.Layer {
	switch t {
	case layers.LayerTypeIPv4, layers.LayerTypeIPv6, layers.LayerTypeIPv6HopByHop,
		layers.LayerTypeIPv6Routing, layers.LayerTypeIPv6Destination, layers.LayerTypeIPv6Fragment:
		return dissect.LayerIP
	case layers.LayerTypeTCP, layers.LayerTypeUDP:
		return dissect.LayerTCP // the transport layer, TCP or UDP
	}
	return dissect.LayerLink
}

// offsetIn returns the offset of sub within frame. Every slice the layers
// hand out is a plain reslice of the frame, so the difference of capacities
// is the offset of its first octet.
func offsetIn(frame, sub []byte) int {
	off := cap(frame) - cap(sub)
	if sub == nil || off < 0 || off > len(frame) {
		return len(frame)
	}
	return off
}

// headerProblem says why data cannot hold the header of layer t, when the
// reason is a length: dissect.ErrTruncated when the octets end before the
// header does (the snap length, or a frame cut short), dissect.ErrBadLength
// when a length field is impossible. It returns nil when the header's
// lengths are fine (gopacket's own error then says what is wrong).
func headerProblem(t gopacket.LayerType, data []byte) error {
	n := len(data)
	need := 0
	switch t {
	case layers.LayerTypeEthernet:
		need = 14
	case layers.LayerTypeDot1Q, layers.LayerTypeLoopback:
		need = 4
	case layers.LayerTypeLinuxSLL:
		need = 16
	case layers.LayerTypeLinuxSLL2:
		need = 20
	case layers.LayerTypeIPv4:
		// RFC 791 §3.1: IHL counts 32-bit words, at least 5, and the
		// header lies within the total length (0 is taken as "unknown",
		// as TSO captures write it).
		if n < 20 {
			return dissect.ErrTruncated
		}
		hl, tl := int(data[0]&0x0f)*4, int(binary.BigEndian.Uint16(data[2:4]))
		if hl < 20 || (tl != 0 && hl > tl) {
			return dissect.ErrBadLength
		}
		need = hl
	case layers.LayerTypeIPv6:
		need = 40
	case layers.LayerTypeIPv6Fragment:
		need = 8
	case layers.LayerTypeIPv6HopByHop, layers.LayerTypeIPv6Routing, layers.LayerTypeIPv6Destination:
		// RFC 8200 §4.3: Hdr Ext Len counts 8-octet units beyond the first.
		if n < 2 {
			return dissect.ErrTruncated
		}
		need = (int(data[1]) + 1) * 8
	case layers.LayerTypeTCP:
		// RFC 9293 §3.1: Data Offset counts 32-bit words, at least 5.
		if n < 20 {
			return dissect.ErrTruncated
		}
		if data[12]>>4 < 5 {
			return dissect.ErrBadLength
		}
		need = int(data[12]>>4) * 4
	case layers.LayerTypeUDP:
		// RFC 768: Length counts the 8-octet header (0: jumbogram, RFC 2675).
		if n < 8 {
			return dissect.ErrTruncated
		}
		if l := binary.BigEndian.Uint16(data[4:6]); l != 0 && l < 8 {
			return dissect.ErrBadLength
		}
	}
	if n < need {
		return dissect.ErrTruncated
	}
	return nil
}

// optionsCut decodes the TCP header at the front of tcp, within frame
// data whose IP packet ends at ipEnd, when the capture's snap length cut
// it within its options: its fixed 20 octets (RFC 9293 §3.1) give the
// ports, sequence and acknowledgment numbers, flags and window, and its
// payload is all cut (PayloadWireLen from the IP length), as tshark
// decodes such a segment ("Packet size limited during capture"). A header
// whose Data Offset runs past its IP packet, or past a frame captured
// whole, is malformed instead: optionsCut leaves p alone.
func optionsCut(p *Packet, data, tcp []byte, ipEnd int) bool {
	if len(tcp) < 20 || len(data) >= p.WireLen {
		return false
	}
	off, doff := offsetIn(data, tcp), int(tcp[12]>>4)*4
	if doff < 20 || len(tcp) >= doff || off+doff > ipEnd {
		return false
	}
	p.Kind = KindTCP
	p.Src = netip.AddrPortFrom(p.Src.Addr(), binary.BigEndian.Uint16(tcp[0:2]))
	p.Dst = netip.AddrPortFrom(p.Dst.Addr(), binary.BigEndian.Uint16(tcp[2:4]))
	p.Seq, p.Ack = binary.BigEndian.Uint32(tcp[4:8]), binary.BigEndian.Uint32(tcp[8:12])
	p.Flags = TCPFlags(tcp[13])
	p.Window = binary.BigEndian.Uint16(tcp[14:16])
	p.Payload = data[len(data):]
	p.PayloadWireLen = max(min(ipEnd, p.WireLen)-(off+doff), 0)
	return true
}

// bad marks p undecodable at layer t, whose header starts at rem.
func (d *decoder) bad(p *Packet, t gopacket.LayerType, rem []byte, cause error) {
	p.Kind = KindBad
	p.Err = &dissect.DecodeError{Layer: layerOf(t), Frame: p.Frame, Offset: offsetIn(p.Data, rem), Err: cause}
}

// decode fills p's Kind, Err and header fields from p.Data framed as link
// type lt. It does not allocate for well-formed frames.
func (d *decoder) decode(p *Packet, lt layers.LinkType) {
	data := p.Data
	if len(data) == 0 {
		if !linkSupported(lt) {
			p.Kind, p.Err = KindBad, ErrLinkType
			return
		}
		d.bad(p, layers.LayerTypeEthernet, data, dissect.ErrTruncated) // a link-layer error
		return
	}
	if lt == layers.LinkTypeEthernet && !d.noFast && fastTCP4(p, data) {
		return
	}
	if lt == LinkTypeInfiniBand {
		// No IP below: the frame is the InfiniBand packet. Only check that
		// it holds a Local Route Header.
		if len(data) < ibLRHLen {
			d.bad(p, layers.LayerTypeEthernet, data, dissect.ErrTruncated) // a link-layer error
			return
		}
		p.Kind, p.Payload, p.PayloadWireLen = KindIB, data, max(p.WireLen, len(data))
		return
	}
	first, err := firstLayer(lt, data)
	if err != nil {
		if err == ErrLinkType {
			p.Kind, p.Err = KindBad, ErrLinkType
			return
		}
		d.bad(p, layers.LayerTypeIPv4, data, err)
		return
	}
	err = d.parsers[first].DecodeLayers(data, &d.decoded)

	// Where decoding stopped: the layer after the last one decoded, and the
	// octets it would have been decoded from.
	next, rem := firstLayerTypes[first], data
	if n := len(d.decoded); n > 0 {
		last, _ := d.dlc.Decoder(d.decoded[n-1])
		next, rem = last.NextLayerType(), last.LayerPayload()
	}

	var ip gopacket.LayerType
	var hasTCP, hasUDP, hasFrag bool
	for _, t := range d.decoded {
		switch t {
		case layers.LayerTypeIPv4, layers.LayerTypeIPv6:
			ip = t
		case layers.LayerTypeTCP:
			hasTCP = true
		case layers.LayerTypeUDP:
			hasUDP = true
		case layers.LayerTypeIPv6Fragment:
			hasFrag = true
		}
	}

	ipEnd := len(data)
	switch ip {
	case layers.LayerTypeIPv4:
		src, dst := [4]byte(d.ip4.SrcIP), [4]byte(d.ip4.DstIP)
		p.Src = netip.AddrPortFrom(netip.AddrFrom4(src), 0)
		p.Dst = netip.AddrPortFrom(netip.AddrFrom4(dst), 0)
		p.Fragment = d.ip4.Flags&layers.IPv4MoreFragments != 0 || d.ip4.FragOffset != 0
		ipEnd = offsetIn(data, d.ip4.Contents) + int(d.ip4.Length)
		if err == nil && d.ip4.Version != 4 {
			d.bad(p, layers.LayerTypeIPv4, d.ip4.Contents, dissect.ErrBadVersion)
			return
		}
	case layers.LayerTypeIPv6:
		src, dst := [16]byte(d.ip6.SrcIP), [16]byte(d.ip6.DstIP)
		p.Src = netip.AddrPortFrom(netip.AddrFrom16(src), 0)
		p.Dst = netip.AddrPortFrom(netip.AddrFrom16(dst), 0)
		p.IPv6 = true
		p.Fragment = hasFrag && (d.frag.FragmentOffset != 0 || d.frag.MoreFragments)
		if d.ip6.Length != 0 {
			ipEnd = offsetIn(data, d.ip6.Contents) + 40 + int(d.ip6.Length)
		} else {
			ipEnd = p.WireLen // jumbogram (RFC 2675): trust the frame length
		}
		if err == nil && d.ip6.Version != 6 {
			d.bad(p, layers.LayerTypeIPv6, d.ip6.Contents, dissect.ErrBadVersion)
			return
		}
	}

	switch {
	case err != nil:
		if next == layers.LayerTypeTCP && optionsCut(p, data, rem, ipEnd) {
			return
		}
		if cause := headerProblem(next, rem); cause != nil {
			err = cause
		}
		d.bad(p, next, rem, err)
		if next == layers.LayerTypeTCP && len(rem) >= 4 {
			// The ports, to tell the connection the bad segment was of.
			p.Src = netip.AddrPortFrom(p.Src.Addr(), binary.BigEndian.Uint16(rem[0:2]))
			p.Dst = netip.AddrPortFrom(p.Dst.Addr(), binary.BigEndian.Uint16(rem[2:4]))
		}
		return
	case p.Fragment:
		p.Kind = KindOther
		return
	case len(rem) == 0 && !hasTCP && !hasUDP:
		// The parser stops quietly at an empty payload; if it stopped
		// before a header we decode (the IP header after a link header,
		// TCP after IP...), that header was cut off.
		if dl, ok := d.dlc.Decoder(next); ok && dl != nil {
			d.bad(p, next, rem, dissect.ErrTruncated)
			return
		}
	}

	wireEnd := min(ipEnd, p.WireLen)
	switch {
	case hasTCP:
		p.Kind = KindTCP
		p.Src = netip.AddrPortFrom(p.Src.Addr(), uint16(d.tcp.SrcPort))
		p.Dst = netip.AddrPortFrom(p.Dst.Addr(), uint16(d.tcp.DstPort))
		p.Seq, p.Ack = d.tcp.Seq, d.tcp.Ack
		p.Flags = TCPFlags(d.tcp.Contents[13])
		p.Window = d.tcp.Window
		p.Payload = d.tcp.Payload
	case hasUDP:
		p.Kind = KindUDP
		p.Src = netip.AddrPortFrom(p.Src.Addr(), uint16(d.udp.SrcPort))
		p.Dst = netip.AddrPortFrom(p.Dst.Addr(), uint16(d.udp.DstPort))
		p.Payload = d.udp.Payload
		if d.udp.Length >= 8 {
			wireEnd = min(wireEnd, offsetIn(data, d.udp.Contents)+int(d.udp.Length))
		}
	default:
		p.Kind = KindOther
		return
	}
	p.PayloadWireLen = max(wireEnd-offsetIn(data, p.Payload), len(p.Payload))
}

package capture_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect"
)

// readAll reads every packet of a capture held in memory, copying the
// slices that alias the reader's buffer. It returns the error that ended
// the file (nil for a clean io.EOF).
func readAll(t testing.TB, file []byte) ([]capture.Packet, error) {
	t.Helper()
	s, err := capture.NewSource(bytes.NewReader(file), "mem")
	if err != nil {
		t.Fatalf("NewSource: %v", err)
	}
	defer s.Close()
	var out []capture.Packet
	for {
		p, err := s.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		p.Payload = bytes.Clone(p.Payload)
		p.Data = bytes.Clone(p.Data)
		out = append(out, p)
	}
}

// readOne reads a one-frame pcap of link type link holding frame.
func readOne(t *testing.T, link layers.LinkType, frame []byte) capture.Packet {
	t.Helper()
	pkts, err := readAll(t, writePcap(t, true, link, frame))
	if err != nil || len(pkts) != 1 {
		t.Fatalf("got %d packets, err %v", len(pkts), err)
	}
	return pkts[0]
}

var (
	v4a = netip.MustParseAddr("192.0.2.1")
	v4b = netip.MustParseAddr("192.0.2.2")
	v6a = netip.MustParseAddr("2001:db8::1")
	v6b = netip.MustParseAddr("2001:db8::2")
)

func checkTCP(t *testing.T, p capture.Packet, v6 bool, payload []byte) {
	t.Helper()
	a, b := v4a, v4b
	if v6 {
		a, b = v6a, v6b
	}
	if p.Kind != capture.KindTCP || p.Err != nil {
		t.Fatalf("kind %v err %v, want TCP", p.Kind, p.Err)
	}
	if p.Src != netip.AddrPortFrom(a, sport) || p.Dst != netip.AddrPortFrom(b, dport) {
		t.Errorf("src %v dst %v", p.Src, p.Dst)
	}
	if p.IPv6 != v6 || p.Fragment {
		t.Errorf("IPv6 %v Fragment %v", p.IPv6, p.Fragment)
	}
	if p.Seq != seq || p.Ack != ack || p.Window != window {
		t.Errorf("seq %#x ack %#x window %d", p.Seq, p.Ack, p.Window)
	}
	if p.Flags != capture.FlagACK|capture.FlagPSH {
		t.Errorf("flags %v", p.Flags)
	}
	if !bytes.Equal(p.Payload, payload) || p.PayloadWireLen != len(payload) {
		t.Errorf("payload %q (wire %d), want %q", p.Payload, p.PayloadWireLen, payload)
	}
}

func TestLinkTypes(t *testing.T) {
	payload := []byte("iWARP over every link type")
	v4, v6 := ipv4TCP(t, payload), ipv6TCP(t, payload)
	le, be := binary.LittleEndian, binary.BigEndian
	tests := []struct {
		name  string
		link  layers.LinkType
		frame []byte
		v6    bool
	}{
		{"ethernet/v4", layers.LinkTypeEthernet, ether(t, v4), false},
		{"ethernet/v6", layers.LinkTypeEthernet, ether(t, v6), true},
		{"vlan/v4", layers.LinkTypeEthernet, ether(t, v4, layers.EthernetTypeDot1Q), false},
		{"vlan/v6", layers.LinkTypeEthernet, ether(t, v6, layers.EthernetTypeDot1Q), true},
		{"qinq/v4", layers.LinkTypeEthernet, ether(t, v4, layers.EthernetTypeQinQ, layers.EthernetTypeDot1Q), false},
		{"qinq/v6", layers.LinkTypeEthernet, ether(t, v6, layers.EthernetTypeQinQ, layers.EthernetTypeDot1Q), true},
		{"dot1q-dot1q/v4", layers.LinkTypeEthernet, ether(t, v4, layers.EthernetTypeDot1Q, layers.EthernetTypeDot1Q), false},
		{"sll/v4", layers.LinkTypeLinuxSLL, sll(v4), false},
		{"sll/v6", layers.LinkTypeLinuxSLL, sll(v6), true},
		{"sll2/v4", layers.LinkTypeLinuxSLL2, sll2(v4), false},
		{"sll2/v6", layers.LinkTypeLinuxSLL2, sll2(v6), true},
		{"null-le/v4", layers.LinkTypeNull, null(v4, 2, le), false},
		{"null-be/v4", layers.LinkTypeNull, null(v4, 2, be), false},
		{"null-le/v6-bsd", layers.LinkTypeNull, null(v6, 24, le), true},
		{"null-le/v6-freebsd", layers.LinkTypeNull, null(v6, 28, le), true},
		{"null-le/v6-darwin", layers.LinkTypeNull, null(v6, 30, le), true},
		{"loop/v4", layers.LinkTypeLoop, null(v4, 2, be), false},
		{"loop/v6", layers.LinkTypeLoop, null(v6, 24, be), true},
		{"dlt12-openbsd-loop/v4", 12, null(v4, 2, be), false},
		{"dlt12-openbsd-loop/v6", 12, null(v6, 24, be), true},
		{"dlt12-raw/v4", 12, v4, false},
		{"dlt12-raw/v6", 12, v6, true},
		{"dlt14-raw/v4", 14, v4, false},
		{"dlt14-raw/v6", 14, v6, true},
		{"raw101/v4", layers.LinkTypeRaw, v4, false},
		{"raw101/v6", layers.LinkTypeRaw, v6, true},
		{"ipv4-228", layers.LinkTypeIPv4, v4, false},
		{"ipv6-229", layers.LinkTypeIPv6, v6, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := readOne(t, tc.link, tc.frame)
			checkTCP(t, p, tc.v6, payload)
			if p.Frame != 1 || p.CapLen != len(tc.frame) || p.WireLen != len(tc.frame) || !bytes.Equal(p.Data, tc.frame) {
				t.Errorf("frame %d caplen %d wirelen %d", p.Frame, p.CapLen, p.WireLen)
			}
		})
	}
}

func TestUDP(t *testing.T) {
	payload := []byte("RoCEv2 BTH goes here")
	for _, tc := range []struct {
		name  string
		frame []byte
		v6    bool
	}{
		{"v4", ether(t, ipv4UDP(t, payload)), false},
		{"v6", ether(t, ipv6UDP(t, payload)), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := readOne(t, layers.LinkTypeEthernet, tc.frame)
			if p.Kind != capture.KindUDP || p.IPv6 != tc.v6 {
				t.Fatalf("kind %v IPv6 %v err %v", p.Kind, p.IPv6, p.Err)
			}
			if p.Src.Port() != sport || p.Dst.Port() != dport || !bytes.Equal(p.Payload, payload) || p.PayloadWireLen != len(payload) {
				t.Errorf("src %v dst %v payload %q wire %d", p.Src, p.Dst, p.Payload, p.PayloadWireLen)
			}
		})
	}
}

// Ethernet pads frames shorter than 60 octets (64 with the FCS); the
// padding follows the IP packet and must not show up in the payload
// (IEEE 802.3 §3.2.8, RFC 894).
func TestEthernetPadding(t *testing.T) {
	for _, tc := range []struct {
		name string
		ip   []byte
		n    int
	}{
		{"v4-4-octets", ipv4TCP(t, []byte("abcd")), 4},
		{"v4-empty", ipv4TCP(t, nil), 0},
		{"v4-udp-1-octet", ipv4UDP(t, []byte("x")), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if 14+len(tc.ip) >= 60 {
				t.Fatalf("frame of %d octets needs no padding", 14+len(tc.ip))
			}
			// gopacket pads to the 60-octet minimum itself; fill the
			// padding with non-zero octets and add an FCS as well.
			frame := ether(t, tc.ip)
			if len(frame) != 60 {
				t.Fatalf("ethernet frame of %d octets, want 60", len(frame))
			}
			padded := append(bytes.Clone(frame[:14+len(tc.ip)]), bytes.Repeat([]byte{0xee}, 60-14-len(tc.ip))...)
			padded = append(padded, 0xde, 0xad, 0xbe, 0xef)
			p := readOne(t, layers.LinkTypeEthernet, padded)
			if len(p.Payload) != tc.n || p.PayloadWireLen != tc.n {
				t.Errorf("payload %x (wire %d), want %d octets", p.Payload, p.PayloadWireLen, tc.n)
			}
		})
	}
}

// The snap length cut the frame inside the payload: the payload is what
// was captured, PayloadWireLen what the IP total length says.
func TestSnaplenCut(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789"), 146) // 1460 octets
	for _, v6 := range []bool{false, true} {
		ip := ipv4TCP(t, payload)
		if v6 {
			ip = ipv6TCP(t, payload)
		}
		frame := ether(t, ip)
		const snap = 96
		f := newPcapFile(binary.LittleEndian, false, snap, layers.LinkTypeEthernet)
		f.record(t0, snap, uint32(len(frame)), frame[:snap])
		pkts, err := readAll(t, f.bytes())
		if err != nil || len(pkts) != 1 {
			t.Fatalf("v6=%v: %d packets, %v", v6, len(pkts), err)
		}
		p := pkts[0]
		hdr := 14 + 20 + 20
		if v6 {
			hdr = 14 + 40 + 20
		}
		if p.Kind != capture.KindTCP || len(p.Payload) != snap-hdr || p.PayloadWireLen != len(payload) {
			t.Errorf("v6=%v: kind %v payload %d wire %d, want %d and %d", v6, p.Kind, len(p.Payload), p.PayloadWireLen, snap-hdr, len(payload))
		}
		if !bytes.Equal(p.Payload, payload[:snap-hdr]) || p.CapLen != snap || p.WireLen != len(frame) {
			t.Errorf("v6=%v: caplen %d wirelen %d", v6, p.CapLen, p.WireLen)
		}
	}
}

// An IP total length larger than the frame on the wire is not believed.
func TestLyingIPLength(t *testing.T) {
	ip := ipv4TCP(t, []byte("hello"))
	binary.BigEndian.PutUint16(ip[2:4], 1500)
	p := readOne(t, layers.LinkTypeRaw, ip)
	if p.Kind != capture.KindTCP || string(p.Payload) != "hello" || p.PayloadWireLen != 5 {
		t.Errorf("kind %v payload %q wire %d", p.Kind, p.Payload, p.PayloadWireLen)
	}
}

func TestIPv4Fragments(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flags  layers.IPv4Flag
		offset uint16
	}{
		{"first", layers.IPv4MoreFragments, 0},
		{"middle", layers.IPv4MoreFragments, 185},
		{"last", 0, 370},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: ip4a, DstIP: ip4b, Flags: tc.flags, FragOffset: tc.offset}
			frame := ether(t, serialize(t, ip, gopacket.Payload(bytes.Repeat([]byte{7}, 64))))
			p := readOne(t, layers.LinkTypeEthernet, frame)
			if p.Kind != capture.KindOther || !p.Fragment || p.Err != nil {
				t.Errorf("kind %v fragment %v err %v", p.Kind, p.Fragment, p.Err)
			}
			if p.Src.Addr() != v4a || p.Dst.Addr() != v4b || p.Payload != nil || p.Seq != 0 {
				t.Errorf("src %v dst %v payload %x", p.Src, p.Dst, p.Payload)
			}
		})
	}
}

// v6ext returns an IPv6 packet whose extension header chain is exts
// (already encoded, the last one's Next Header = TCP), then TCP.
func v6ext(t *testing.T, first layers.IPProtocol, exts []byte, payload []byte) []byte {
	ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP, SrcIP: ip6a, DstIP: ip6b}
	tcp := tcpLayer()
	_ = tcp.SetNetworkLayerForChecksum(ip)
	seg := serialize(t, tcp, gopacket.Payload(payload))
	ip.NextHeader = first
	return serialize(t, ip, gopacket.Payload(append(bytes.Clone(exts), seg...)))
}

// Extension headers, RFC 8200 §4.3-§4.6: Next Header, Hdr Ext Len (in
// 8-octet units, not counting the first 8), then options or fields.
var (
	extHopByHop = func(next byte) []byte { return []byte{next, 0, 1, 4, 0, 0, 0, 0} } // PadN
	extRouting  = func(next byte) []byte { return []byte{next, 0, 0, 0, 0, 0, 0, 0} } // type 0, segments left 0
	extDestOpts = func(next byte) []byte { return []byte{next, 1, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0} }
	extFragment = func(next byte, off uint16, more bool) []byte {
		b := []byte{next, 0, 0, 0, 0, 0, 0, 42}
		binary.BigEndian.PutUint16(b[2:4], off<<3)
		if more {
			b[3] |= 1
		}
		return b
	}
)

func TestIPv6ExtensionHeaders(t *testing.T) {
	const tcpP, hbh, rt, dst, frag = 6, 0, 43, 60, 44
	payload := []byte("behind extension headers")
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	for _, tc := range []struct {
		name     string
		first    layers.IPProtocol
		exts     []byte
		kind     capture.Kind
		fragment bool
	}{
		{"hop-by-hop", hbh, extHopByHop(tcpP), capture.KindTCP, false},
		{"routing", rt, extRouting(tcpP), capture.KindTCP, false},
		{"destination", dst, extDestOpts(tcpP), capture.KindTCP, false},
		{"all-three", hbh, cat(extHopByHop(dst), extDestOpts(rt), extRouting(tcpP)), capture.KindTCP, false},
		{"atomic-fragment", frag, extFragment(tcpP, 0, false), capture.KindTCP, false},
		{"first-fragment", frag, extFragment(tcpP, 0, true), capture.KindOther, true},
		{"later-fragment", hbh, cat(extHopByHop(frag), extFragment(tcpP, 100, false)), capture.KindOther, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ip := v6ext(t, tc.first, tc.exts, payload)
			p := readOne(t, layers.LinkTypeEthernet, ether(t, ip))
			if p.Kind != tc.kind || p.Fragment != tc.fragment || !p.IPv6 {
				t.Fatalf("kind %v fragment %v err %v", p.Kind, p.Fragment, p.Err)
			}
			if tc.kind == capture.KindTCP {
				checkTCP(t, p, true, payload)
			}
		})
	}
}

func TestOtherKinds(t *testing.T) {
	arp := serialize(t,
		&layers.Ethernet{SrcMAC: mac1, DstMAC: mac2, EthernetType: layers.EthernetTypeARP},
		&layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
			Operation: 1, SourceHwAddress: mac1, SourceProtAddress: ip4a, DstHwAddress: mac2, DstProtAddress: ip4b})
	icmp := serialize(t,
		&layers.Ethernet{SrcMAC: mac1, DstMAC: mac2, EthernetType: layers.EthernetTypeIPv4},
		&layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolICMPv4, SrcIP: ip4a, DstIP: ip4b},
		&layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0)}, gopacket.Payload("ping"))
	sctp := ether(t, serialize(t,
		&layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolSCTP, SrcIP: ip6a, DstIP: ip6b},
		gopacket.Payload(bytes.Repeat([]byte{0}, 12))))
	for _, tc := range []struct {
		name  string
		frame []byte
		addr  netip.Addr
	}{
		{"arp", arp, netip.Addr{}},
		{"icmp", icmp, v4a},
		{"sctp-v6", sctp, v6a},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := readOne(t, layers.LinkTypeEthernet, tc.frame)
			if p.Kind != capture.KindOther || p.Err != nil || p.Src.Addr() != tc.addr || p.Src.Port() != 0 {
				t.Errorf("kind %v err %v src %v", p.Kind, p.Err, p.Src)
			}
		})
	}
}

func TestBadFrames(t *testing.T) {
	good := ipv4TCP(t, []byte("data"))
	badOffset := bytes.Clone(good)
	badOffset[20+12] = 3 << 4 // TCP data offset 3 < 5
	badVersion := bytes.Clone(good)
	badVersion[0] = 0x65 // version 6 in an IPv4 header
	ihlLong := bytes.Clone(good)
	ihlLong[0] = 0x4f // IHL 15: 60-octet header, past the total length
	v6 := ipv6TCP(t, nil)
	sllAddrLen := sll(good)
	sllAddrLen[5] = 9 // address length 9: more than the 8-octet field
	for _, tc := range []struct {
		name  string
		link  layers.LinkType
		frame []byte
		layer dissect.Layer
		off   int
		cause error // nil: gopacket's own error
	}{
		{"empty-frame", layers.LinkTypeEthernet, []byte{}, dissect.LayerLink, 0, dissect.ErrTruncated},
		{"short-ethernet", layers.LinkTypeEthernet, ether(t, good)[:10], dissect.LayerLink, 0, dissect.ErrTruncated},
		{"ethernet-only", layers.LinkTypeEthernet, ether(t, good)[:14], dissect.LayerIP, 14, dissect.ErrTruncated},
		{"short-vlan", layers.LinkTypeEthernet, ether(t, good, layers.EthernetTypeDot1Q)[:16], dissect.LayerLink, 14, dissect.ErrTruncated},
		{"short-ipv4", layers.LinkTypeEthernet, ether(t, good)[:14+12], dissect.LayerIP, 14, dissect.ErrTruncated},
		{"ipv4-only", layers.LinkTypeEthernet, ether(t, good)[:14+20], dissect.LayerTCP, 34, dissect.ErrTruncated},
		{"short-tcp", layers.LinkTypeEthernet, ether(t, good)[:14+20+13], dissect.LayerTCP, 34, dissect.ErrTruncated},
		{"short-ipv6", layers.LinkTypeRaw, v6[:30], dissect.LayerIP, 0, dissect.ErrTruncated},
		{"short-sll", layers.LinkTypeLinuxSLL, sll(good)[:15], dissect.LayerLink, 0, dissect.ErrTruncated},
		{"short-sll2", layers.LinkTypeLinuxSLL2, sll2(good)[:19], dissect.LayerLink, 0, dissect.ErrTruncated},
		{"short-null", layers.LinkTypeNull, []byte{2, 0}, dissect.LayerLink, 0, dissect.ErrTruncated},
		{"tcp-data-offset", layers.LinkTypeRaw, badOffset, dissect.LayerTCP, 20, dissect.ErrBadLength},
		{"ipv4-version", layers.LinkTypeIPv4, badVersion, dissect.LayerIP, 0, dissect.ErrBadVersion},
		{"ipv4-ihl", layers.LinkTypeRaw, ihlLong, dissect.LayerIP, 0, dissect.ErrBadLength},
		{"sll-address-length", layers.LinkTypeLinuxSLL, sllAddrLen, dissect.LayerLink, 0, nil},
		{"raw-version", layers.LinkTypeRaw, append([]byte{0x50}, good[1:]...), dissect.LayerIP, 0, dissect.ErrBadVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := readOne(t, tc.link, tc.frame)
			if p.Kind != capture.KindBad {
				t.Fatalf("kind %v, want Bad", p.Kind)
			}
			var de *dissect.DecodeError
			if !errors.As(p.Err, &de) {
				t.Fatalf("err %v (%T), want *dissect.DecodeError", p.Err, p.Err)
			}
			if de.Layer != tc.layer || de.Offset != tc.off || de.Frame != 1 {
				t.Errorf("err %v: layer %v offset %d, want %v %d", de, de.Layer, de.Offset, tc.layer, tc.off)
			}
			switch {
			case tc.cause != nil && !errors.Is(p.Err, tc.cause):
				t.Errorf("err %v, want %v", p.Err, tc.cause)
			case tc.cause == nil && (errors.Is(p.Err, dissect.ErrTruncated) || errors.Is(p.Err, dissect.ErrBadLength) || de.Err == nil):
				t.Errorf("err %v, want gopacket's own error", p.Err)
			}
			if p.Payload != nil {
				t.Errorf("payload %x on a bad frame", p.Payload)
			}
		})
	}
}

func TestTCPFlagsString(t *testing.T) {
	for _, tc := range []struct {
		f    capture.TCPFlags
		want string
	}{
		{0, "0"},
		{capture.FlagSYN, "SYN"},
		{capture.FlagSYN | capture.FlagACK, "SYN|ACK"},
		{0xff, "FIN|SYN|RST|PSH|ACK|URG|ECE|CWR"},
	} {
		if got := tc.f.String(); got != tc.want {
			t.Errorf("%#x: %q, want %q", uint8(tc.f), got, tc.want)
		}
	}
	// Same bit values as the TCP header, RFC 9293 §3.1.
	if capture.FlagFIN != 0x01 || capture.FlagSYN != 0x02 || capture.FlagRST != 0x04 || capture.FlagPSH != 0x08 || capture.FlagACK != 0x10 {
		t.Error("flag values differ from the TCP header")
	}
	if !(capture.FlagSYN | capture.FlagACK).Has(capture.FlagACK) || capture.FlagSYN.Has(capture.FlagACK) {
		t.Error("Has")
	}
	if capture.KindTCP.String() != "TCP" || capture.KindBad.String() != "Bad" {
		t.Error("Kind.String")
	}
}

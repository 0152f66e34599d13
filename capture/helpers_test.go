package capture_test

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Ground truth used by the frame builders below. Expected values in the
// tests come from these inputs to gopacket's serializers, not from the
// decoder's output.
var (
	mac1 = net.HardwareAddr{0x02, 0, 0, 0, 0, 1}
	mac2 = net.HardwareAddr{0x02, 0, 0, 0, 0, 2}
	ip4a = net.IP{192, 0, 2, 1}
	ip4b = net.IP{192, 0, 2, 2}
	ip6a = net.ParseIP("2001:db8::1")
	ip6b = net.ParseIP("2001:db8::2")
	t0   = time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
)

const (
	sport  = 40000
	dport  = 4791
	seq    = 0x11223344
	ack    = 0x55667788
	window = 512
)

func serialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(buf.Bytes())
}

func tcpLayer() *layers.TCP {
	return &layers.TCP{SrcPort: sport, DstPort: dport, Seq: seq, Ack: ack, ACK: true, PSH: true, Window: window, DataOffset: 5}
}

// ipv4TCP returns an IPv4 packet carrying a TCP segment with payload.
func ipv4TCP(t testing.TB, payload []byte) []byte {
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: ip4a, DstIP: ip4b}
	tcp := tcpLayer()
	_ = tcp.SetNetworkLayerForChecksum(ip)
	return serialize(t, ip, tcp, gopacket.Payload(payload))
}

// ipv6TCP returns an IPv6 packet carrying a TCP segment with payload.
func ipv6TCP(t testing.TB, payload []byte) []byte {
	ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP, SrcIP: ip6a, DstIP: ip6b}
	tcp := tcpLayer()
	_ = tcp.SetNetworkLayerForChecksum(ip)
	return serialize(t, ip, tcp, gopacket.Payload(payload))
}

func ipv4UDP(t testing.TB, payload []byte) []byte {
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: ip4a, DstIP: ip4b}
	udp := &layers.UDP{SrcPort: sport, DstPort: dport}
	_ = udp.SetNetworkLayerForChecksum(ip)
	return serialize(t, ip, udp, gopacket.Payload(payload))
}

func ipv6UDP(t testing.TB, payload []byte) []byte {
	ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolUDP, SrcIP: ip6a, DstIP: ip6b}
	udp := &layers.UDP{SrcPort: sport, DstPort: dport}
	_ = udp.SetNetworkLayerForChecksum(ip)
	return serialize(t, ip, udp, gopacket.Payload(payload))
}

// ether frames an IP packet in Ethernet II, with 802.1Q tags in between
// when tpids is not empty (0x8100, or 0x88a8 for an 802.1ad outer tag).
func ether(t testing.TB, ipPacket []byte, tpids ...layers.EthernetType) []byte {
	inner := layers.EthernetTypeIPv4
	if ipPacket[0]>>4 == 6 {
		inner = layers.EthernetTypeIPv6
	}
	ls := []gopacket.SerializableLayer{}
	first := inner
	if len(tpids) > 0 {
		first = tpids[0]
	}
	ls = append(ls, &layers.Ethernet{SrcMAC: mac1, DstMAC: mac2, EthernetType: first})
	for i := range tpids {
		next := inner
		if i+1 < len(tpids) {
			next = tpids[i+1]
		}
		ls = append(ls, &layers.Dot1Q{VLANIdentifier: uint16(100 + i), Type: next})
	}
	ls = append(ls, gopacket.Payload(ipPacket))
	return serialize(t, ls...)
}

func etherType(ipPacket []byte) uint16 {
	if ipPacket[0]>>4 == 6 {
		return 0x86dd
	}
	return 0x0800
}

// sll frames an IP packet in a Linux cooked (v1) header: packet type (2),
// ARPHRD type (2), address length (2), address (8), protocol (2)
// (LINKTYPE_LINUX_SLL).
func sll(ipPacket []byte) []byte {
	h := make([]byte, 16)
	binary.BigEndian.PutUint16(h[0:2], 4)   // outgoing
	binary.BigEndian.PutUint16(h[2:4], 772) // ARPHRD_LOOPBACK
	binary.BigEndian.PutUint16(h[4:6], 6)
	copy(h[6:14], mac1)
	binary.BigEndian.PutUint16(h[14:16], etherType(ipPacket))
	return append(h, ipPacket...)
}

// sll2 frames an IP packet in a Linux cooked v2 header: protocol (2),
// reserved (2), interface index (4), ARPHRD type (2), packet type (1),
// address length (1), address (8) (LINKTYPE_LINUX_SLL2).
func sll2(ipPacket []byte) []byte {
	h := make([]byte, 20)
	binary.BigEndian.PutUint16(h[0:2], etherType(ipPacket))
	binary.BigEndian.PutUint32(h[4:8], 3)
	binary.BigEndian.PutUint16(h[8:10], 1) // ARPHRD_ETHER
	h[10] = 0                              // to us
	h[11] = 6
	copy(h[12:20], mac1)
	return append(h, ipPacket...)
}

// null frames an IP packet with a 4-octet address family in the given byte
// order (LINKTYPE_NULL uses the writer's host order, LINKTYPE_LOOP and
// OpenBSD's DLT_LOOP network order).
func null(ipPacket []byte, af uint32, order binary.ByteOrder) []byte {
	h := make([]byte, 4)
	order.PutUint32(h, af)
	return append(h, ipPacket...)
}

// pcapFile builds pcap files byte by byte, in either byte order, including
// records pcapgo.Writer refuses to write.
type pcapFile struct {
	buf   bytes.Buffer
	order binary.ByteOrder
	nanos bool
}

func newPcapFile(order binary.ByteOrder, nanos bool, snaplen uint32, link layers.LinkType) *pcapFile {
	f := &pcapFile{order: order, nanos: nanos}
	h := make([]byte, 24)
	magic := uint32(0xa1b2c3d4)
	if nanos {
		magic = 0xa1b23c4d
	}
	order.PutUint32(h[0:4], magic)
	order.PutUint16(h[4:6], 2)
	order.PutUint16(h[6:8], 4)
	order.PutUint32(h[16:20], snaplen)
	order.PutUint32(h[20:24], uint32(link))
	f.buf.Write(h)
	return f
}

func (f *pcapFile) record(ts time.Time, caplen, wirelen uint32, data []byte) {
	h := make([]byte, 16)
	frac := uint32(ts.Nanosecond())
	if !f.nanos {
		frac /= 1000
	}
	f.order.PutUint32(h[0:4], uint32(ts.Unix()))
	f.order.PutUint32(h[4:8], frac)
	f.order.PutUint32(h[8:12], caplen)
	f.order.PutUint32(h[12:16], wirelen)
	f.buf.Write(h)
	f.buf.Write(data)
}

func (f *pcapFile) add(ts time.Time, data []byte) {
	f.record(ts, uint32(len(data)), uint32(len(data)), data)
}

func (f *pcapFile) bytes() []byte { return f.buf.Bytes() }

// writePcap writes frames with pcapgo.Writer, microsecond or nanosecond.
func writePcap(t testing.TB, nanos bool, link layers.LinkType, frames ...[]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := pcapgo.NewWriter(&b)
	if nanos {
		w = pcapgo.NewWriterNanos(&b)
	}
	if err := w.WriteFileHeader(262144, link); err != nil {
		t.Fatal(err)
	}
	for i, f := range frames {
		ci := gopacket.CaptureInfo{Timestamp: t0.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(f), Length: len(f)}
		if err := w.WritePacket(ci, f); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// ngFile builds pcapng files block by block, in either byte order
// (pcapng specification §3-§4).
type ngFile struct {
	buf   bytes.Buffer
	order binary.ByteOrder
}

func newNgFile(order binary.ByteOrder) *ngFile {
	f := &ngFile{order: order}
	body := make([]byte, 16)
	order.PutUint32(body[0:4], 0x1a2b3c4d)
	order.PutUint16(body[4:6], 1)
	order.PutUint16(body[6:8], 0)
	order.PutUint64(body[8:16], 0xffffffffffffffff) // section length unknown
	f.block(0x0a0d0d0a, body)
	return f
}

// block appends a block of type typ around body (padded to 32 bits) and
// returns its offset.
func (f *ngFile) block(typ uint32, body []byte) int {
	off := f.buf.Len()
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	h := make([]byte, 8)
	f.order.PutUint32(h[0:4], typ)
	f.order.PutUint32(h[4:8], uint32(12+len(body)))
	f.buf.Write(h)
	f.buf.Write(body)
	f.buf.Write(h[4:8])
	return off
}

// option encodes one option (code, length, value padded to 32 bits).
func (f *ngFile) option(code uint16, val []byte) []byte {
	o := make([]byte, 4, 4+len(val)+3)
	f.order.PutUint16(o[0:2], code)
	f.order.PutUint16(o[2:4], uint16(len(val)))
	o = append(o, val...)
	for len(o)%4 != 0 {
		o = append(o, 0)
	}
	return o
}

// idb adds an interface; tsresol 0 omits if_tsresol (microseconds).
func (f *ngFile) idb(link layers.LinkType, snaplen uint32, tsresol byte) int {
	body := make([]byte, 8)
	f.order.PutUint16(body[0:2], uint16(link))
	f.order.PutUint32(body[4:8], snaplen)
	if tsresol != 0 {
		body = append(body, f.option(9, []byte{tsresol})...)
		body = append(body, 0, 0, 0, 0) // opt_endofopt
	}
	return f.block(1, body)
}

// epb adds an Enhanced Packet Block with the timestamp in units of 10^-res
// seconds.
func (f *ngFile) epb(iface uint32, ts time.Time, res int, caplen, wirelen uint32, data []byte) int {
	units := uint64(ts.Unix())
	frac := uint64(ts.Nanosecond())
	for range res {
		units *= 10
	}
	for i := 9; i > res; i-- {
		frac /= 10
	}
	units += frac
	body := make([]byte, 20)
	f.order.PutUint32(body[0:4], iface)
	f.order.PutUint32(body[4:8], uint32(units>>32))
	f.order.PutUint32(body[8:12], uint32(units))
	f.order.PutUint32(body[12:16], caplen)
	f.order.PutUint32(body[16:20], wirelen)
	body = append(body, data...)
	return f.block(6, body)
}

// epbOptions adds an Enhanced Packet Block (nanosecond timestamp) carrying
// an epb_flags option (inbound, §4.3.1) and a comment.
func (f *ngFile) epbOptions(iface uint32, ts time.Time, data []byte) int {
	ns := uint64(ts.UnixNano())
	body := make([]byte, 20)
	f.order.PutUint32(body[0:4], iface)
	f.order.PutUint32(body[4:8], uint32(ns>>32))
	f.order.PutUint32(body[8:12], uint32(ns))
	f.order.PutUint32(body[12:16], uint32(len(data)))
	f.order.PutUint32(body[16:20], uint32(len(data)))
	body = append(body, data...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	flags := make([]byte, 4)
	f.order.PutUint32(flags, 1)
	body = append(body, f.option(2, flags)...)
	body = append(body, f.option(1, []byte("a comment"))...)
	body = append(body, 0, 0, 0, 0)
	return f.block(6, body)
}

// pb adds an obsolete Packet Block (pcapng Appendix A) with a timestamp in
// the units of the interface's if_tsresol, here microseconds.
func (f *ngFile) pb(iface uint16, ts time.Time, data []byte) int {
	us := uint64(ts.UnixMicro())
	body := make([]byte, 20)
	f.order.PutUint16(body[0:2], iface)
	f.order.PutUint32(body[4:8], uint32(us>>32))
	f.order.PutUint32(body[8:12], uint32(us))
	f.order.PutUint32(body[12:16], uint32(len(data)))
	f.order.PutUint32(body[16:20], uint32(len(data)))
	return f.block(2, append(body, data...))
}

// spb adds a Simple Packet Block.
func (f *ngFile) spb(wirelen uint32, data []byte) int {
	body := make([]byte, 4)
	f.order.PutUint32(body, wirelen)
	return f.block(3, append(body, data...))
}

// isb adds an Interface Statistics Block without options.
func (f *ngFile) isb(iface uint32) int {
	body := make([]byte, 12)
	f.order.PutUint32(body[0:4], iface)
	return f.block(5, body)
}

func (f *ngFile) bytes() []byte { return f.buf.Bytes() }

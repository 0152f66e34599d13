package flows

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestFindIP locates the IP header behind the link layers the capture
// package accepts (Ethernet with and without VLAN tags, Linux SLL, raw IP)
// and skips IPv6 extension headers.
func TestFindIP(t *testing.T) {
	src4, dst4 := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	ip4 := []byte{0x45, 0, 0, 28, 0, 0, 0, 0, 64, 132, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2, 1, 2, 3, 4, 5, 6, 7, 8}
	src6, dst6 := netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::2")
	ip6 := []byte{0x60, 0, 0, 0, 0, 12, 60, 64}
	ip6 = append(ip6, src6.AsSlice()...)
	ip6 = append(ip6, dst6.AsSlice()...)
	ip6 = append(ip6, 132, 0, 0, 0, 0, 0, 0, 0) // destination options, 8 octets
	ip6 = append(ip6, 9, 9, 9, 9)
	cases := []struct {
		name   string
		prefix int
		ip     []byte
		src    netip.Addr
		dst    netip.Addr
		hdr    int
		l4     int
	}{
		{"raw4", 0, ip4, src4, dst4, 20, 8},
		{"eth4", 14, ip4, src4, dst4, 20, 8},
		{"vlan4", 18, ip4, src4, dst4, 20, 8},
		{"qinq4", 22, ip4, src4, dst4, 20, 8},
		{"sll6", 16, ip6, src6, dst6, 48, 4},
		{"sll2-6", 20, ip6, src6, dst6, 48, 4},
	}
	for _, c := range cases {
		data := append(make([]byte, c.prefix), c.ip...)
		data = append(data, 0, 0, 0, 0) // link trailer: not part of the IP packet
		p := capture.Packet{Kind: capture.KindOther, Data: data,
			Src: netip.AddrPortFrom(c.src, 0), Dst: netip.AddrPortFrom(c.dst, 0)}
		ip, l4, proto, ok := findIP(&p)
		if !ok || proto != 132 || len(ip) != c.hdr || len(l4) != c.l4 {
			t.Errorf("%s: ok %v proto %d header %d transport %d", c.name, ok, proto, len(ip), len(l4))
		}
	}
	p := capture.Packet{Kind: capture.KindOther, Data: ip4[:10], Src: netip.AddrPortFrom(src4, 0), Dst: netip.AddrPortFrom(dst4, 0)}
	if _, _, _, ok := findIP(&p); ok {
		t.Error("short packet")
	}
}

// TestExtPending: while an RDMA message over SCTP is being gathered (or a
// fragmented user message reassembled), extPending names its first frame,
// so that the ordering queue can hold later records back.
func TestExtPending(t *testing.T) {
	s, _ := synth.NamedExt("sctp-ddp-enhanced", 1)
	var buf bytes.Buffer
	if _, err := s.Generate(&buf, nil); err != nil {
		t.Fatal(err)
	}
	src, err := capture.NewSource(bytes.NewReader(buf.Bytes()), "x")
	if err != nil {
		t.Fatal(err)
	}
	var msgFirst []uint64
	d := NewDecoder(Options{}, func(r *Record) {
		if r.Type == RecMessage && r.Message.Segments > 1 {
			msgFirst = append(msgFirst, r.Frame)
		}
	})
	held := map[uint64]bool{}
	for {
		p, err := src.Next()
		if err != nil {
			break
		}
		d.Packet(&p)
		if f, ok := d.extPending(); ok {
			if f > p.Frame {
				t.Fatalf("frame %d: pending frame %d is in the future", p.Frame, f)
			}
			held[f] = true
		}
	}
	d.Close()
	if len(msgFirst) == 0 {
		t.Fatal("no multi-segment message")
	}
	for _, f := range msgFirst {
		if !held[f] {
			t.Errorf("message starting at frame %d was never pending", f)
		}
	}
	if _, ok := d.extPending(); ok {
		t.Error("still pending after Close")
	}
}

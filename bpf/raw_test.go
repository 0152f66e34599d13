package bpf

import (
	"errors"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

func TestParseRaw(t *testing.T) {
	// tcpdump -ddd -y EN10MB ip (tcpdump 4.99.3).
	const ip = "4\n40 0 0 12\n21 0 1 2048\n6 0 0 262144\n6 0 0 0\n"
	p, err := ParseRaw(ip)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := p.Raw()
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatRaw(raw); got != ip {
		t.Errorf("round trip: got %q, want %q", got, ip)
	}
	m, err := p.NewMatcher()
	if err != nil {
		t.Fatal(err)
	}
	v4 := etherFrame(nil, netPacket{etype: etherIPv4, data: ipv4Packet(corpusV4[0], corpusV4[1], protoTCP, 0, 0, transport(protoTCP, 1, 2))})
	if !m.Match(v4) || m.Match(etherFrame(nil, netPacket{etype: etherARP, data: arpPacket(1, corpusV4[0], corpusV4[1])})) {
		t.Error("raw program verdicts wrong")
	}
	// Comma-separated, as iptables' bpf match takes it.
	if _, err := ParseRaw(strings.ReplaceAll(strings.TrimSpace(ip), "\n", ",")); err != nil {
		t.Errorf("comma form: %v", err)
	}
	// A trailing separator, as `tcpdump -ddd udp | tr '\n' ,` leaves
	// (tcpdump 4.99.3, EN10MB), and other separators around the lines.
	const udpCommas = "12,40 0 0 12,21 0 2 2048,48 0 0 23,21 6 7 17,21 0 6 34525,48 0 0 20,21 3 0 17,21 0 3 44,48 0 0 54,21 0 1 17,6 0 0 262144,6 0 0 0,"
	for _, text := range []string{
		udpCommas, udpCommas + " ", udpCommas + "\n", udpCommas + ",", " " + udpCommas,
		strings.ReplaceAll(udpCommas, ",", ", "), strings.ReplaceAll(udpCommas, ",", ";"),
		strings.ReplaceAll(udpCommas, ",", "\r\n"), strings.ReplaceAll(udpCommas, ",", ",\n"),
	} {
		p, err := ParseRaw(text)
		if err != nil {
			t.Errorf("ParseRaw(%q): %v", text, err)
			continue
		}
		if len(p.Instructions) != 12 {
			t.Errorf("ParseRaw(%q): %d instructions, want 12", text, len(p.Instructions))
		}
	}
	for _, bad := range []string{"", "x", "2\n6 0 0 1\n", "1\n6 0 0\n", "1\n6 0 0 z\n", "1\n65536 0 0 0\n", "0\n"} {
		if _, err := ParseRaw(bad); err == nil {
			t.Errorf("ParseRaw(%q) accepted", bad)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"port 99999", "illegal port number 99999 > 65535"},
		{"tcp host 1.2.3.4", "'tcp' modifier applied to host"},
		{"host", "unexpected end"},
		{"(tcp", "unexpected end"},
		{"tcp)", "unbalanced"},
		{"vlan 4096", "VLAN tag 4096 greater than maximum 4095"},
		{"net 10.0.0.1/8", `non-network bits set in "10.0.0.1/8"`},
		{"tcp[0:3] = 1", "data size must be 1, 2, or 4"},
		{"tcp[0] / 0 = 1", "division by zero"},
		{"tcp[0] % (1 - 1) = 1", "modulus by zero"},
		{"ip[0] >> 32 = 1", "shift by more than 31 bits"},
		{"ip[0] = 0x100000000", "overflows 32 bits"},
		{"len", "syntax error"},
		{"ip[0] = 1 and 2", "no qualifiers to inherit"},
		{"port nosuchservice", "unknown port 'nosuchservice'"},
		{"host 02:00:00:00:00:01", "ethernet address used in non-ether expression"},
		{"ether host 1.2.3.4", "illegal link layer address"},
		{"ip6 broadcast", "only link-layer/IP broadcast filters supported"},
		{"ether proto \\tcp", "unknown ether proto 'tcp'"},
		{"host foo.example", `unsupported "foo.example"`},
		// libpcap reads 2 to 4 dotted numbers as an address, never as a
		// host name: "invalid IPv4 address", not "not looked up".
		{"host 10.0.0.256", "invalid IPv4 address 10.0.0.256"},
		{"net 10.0.0.256/24", "invalid IPv4 address 10.0.0.256"},
		{"src 300.1.1.1", "invalid IPv4 address 300.1.1.1"},
		{"host 10.256", "invalid IPv4 address 10.256"},
		{"net 10.0.0.0 mask 255.256.0.0", "invalid IPv4 address 255.256.0.0"},
		{"host 10.0.0.1.2", `unsupported "10.0.0.1.2": host names are not looked up`},
		// Keywords after a protocol qualifier: unsupported, not a bare
		// syntax error.
		{"ip broadcast", `unsupported "ip broadcast": ip broadcast not supported (it depends on the interface's netmask)`},
		{"ip protochain 6", `unsupported "ip protochain": protochain not supported`},
		{"tcp and ip6 protochain 6", `unsupported "ip6 protochain": protochain not supported`},
	} {
		_, err := Compile(tc.expr, layers.LinkTypeEthernet, 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%q): got %v, want an error containing %q", tc.expr, err, tc.want)
		}
	}
	if _, err := Compile("vlan", layers.LinkTypeLinuxSLL, 0); err == nil || !strings.Contains(err.Error(), "no VLAN support") {
		t.Errorf("vlan on SLL: %v", err)
	}
	for _, expr := range []string{"ether host 02:00:00:00:00:01", "broadcast", "ether multicast"} {
		if _, err := Compile(expr, layers.LinkTypeLinuxSLL, 0); err == nil || errors.Is(err, ErrUnsupported) {
			t.Errorf("%q on SLL: %v, want libpcap's error", expr, err)
		}
	}
	if _, err := Compile("tcp", layers.LinkTypeFDDI, 0); err == nil {
		t.Error("FDDI accepted")
	}
}

func TestSnaplenAndVLANFlag(t *testing.T) {
	p, err := Compile("vlan and tcp", layers.LinkTypeEthernet, 96)
	if err != nil {
		t.Fatal(err)
	}
	if !p.VLAN {
		t.Error("VLAN not set")
	}
	m, _ := p.NewMatcher()
	f := etherFrame([]uint16{ether8021Q}, netPacket{etype: etherIPv4, data: ipv4Packet(corpusV4[0], corpusV4[1], protoTCP, 0, 0, transport(protoTCP, 1, 2))})
	if got := m.Run(f); got != 96 {
		t.Errorf("accepting return value %d, want the snaplen 96", got)
	}
	if p, _ := Compile("tcp", layers.LinkTypeEthernet, 0); p.VLAN {
		t.Error("VLAN set without a vlan primitive")
	}
}

// TestLongProgram checks far jumps: a conditional jump can skip at most
// 255 instructions.
func TestLongProgram(t *testing.T) {
	var b strings.Builder
	b.WriteString("(tcp or udp) and (")
	for i := 0; i < 60; i++ {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString("portrange ")
		b.WriteString(strings.Repeat("1", 1))
		b.WriteString("0")
		b.WriteString(string(rune('0' + i%10)))
		b.WriteString("-2000")
	}
	b.WriteString(")")
	p, err := Compile(b.String(), layers.LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Instructions) < 300 {
		t.Fatalf("program only %d instructions long", len(p.Instructions))
	}
	m, err := p.NewMatcher()
	if err != nil {
		t.Fatal(err)
	}
	hit := etherFrame(nil, netPacket{etype: etherIPv4, data: ipv4Packet(corpusV4[0], corpusV4[1], protoUDP, 0, 0, transport(protoUDP, 1500, 3))})
	miss := etherFrame(nil, netPacket{etype: etherIPv4, data: ipv4Packet(corpusV4[0], corpusV4[1], protoUDP, 0, 0, transport(protoUDP, 5, 3))})
	if !m.Match(hit) || m.Match(miss) {
		t.Error("wrong verdicts across far jumps")
	}
}

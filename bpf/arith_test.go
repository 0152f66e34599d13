package bpf

import (
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
	xbpf "golang.org/x/net/bpf"
)

// TestNamedNumbers checks every named number (tcpflags, tcp-syn,
// icmp-echo, icmp6-echo...) against the value tcpdump compiles it to.
func TestNamedNumbers(t *testing.T) {
	bin := needTcpdump(t)
	names := make([]string, 0, len(numNames))
	for n := range numNames {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		expr := "ip[8] = " + n
		want, _, msg := tcpdumpProgram(t, bin, "EN10MB", expr)
		if msg != "" {
			t.Errorf("%q: tcpdump refuses it: %s", expr, msg)
			continue
		}
		v, found := uint32(0), false
		for _, ins := range want.Instructions {
			if j, ok := ins.(xbpf.JumpIf); ok && j.Val != etherIPv4 {
				v, found = j.Val, true
			}
		}
		if !found || v != numNames[n] {
			t.Errorf("%s: tcpdump's value %d (found %v), ours %d", n, v, found, numNames[n])
		}
	}
}

// TestNegate: the VM of golang.org/x/net/bpf runs "neg" as a no-op;
// Matcher must not.
func TestNegate(t *testing.T) {
	p, err := Compile("-ip[8] = -64", layers.LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	hasNeg := false
	for _, ins := range p.Instructions {
		if _, ok := ins.(xbpf.NegateA); ok {
			hasNeg = true
		}
	}
	m, _ := p.NewMatcher()
	f := etherFrame(nil, netPacket{etype: etherIPv4, data: ipv4Packet(corpusV4[0], corpusV4[1], protoTCP, 0, 0, transport(protoTCP, 1, 2))})
	if !hasNeg || !m.Match(f) {
		t.Errorf("neg: program has neg %v, matches a TTL 64 packet %v\n%s", hasNeg, m.Match(f), p)
	}
}

// TestServicesBuiltin: without /etc/services, the built-in table resolves
// the common names as Debian's netbase does.
func TestServicesBuiltin(t *testing.T) {
	saved := servicesFile
	defer func() {
		servicesFile = saved
		loadServices()
	}()
	servicesFile = "/nonexistent/services"
	loadServices()
	for _, tc := range []struct {
		name        string
		port, proto uint32
	}{{"http", 80, protoTCP}, {"www", 80, protoTCP}, {"domain", 53, 0}, {"ntp", 123, protoUDP}, {"https", 443, 0}, {"ssh", 22, protoTCP}, {"7174", 7174, 0}} {
		port, proto, ok := lookupService(tc.name)
		if !ok || port != tc.port || proto != tc.proto {
			t.Errorf("%s: %d/%d %v, want %d/%d", tc.name, port, proto, ok, tc.port, tc.proto)
		}
	}
	if _, _, ok := lookupService("nosuchservice"); ok {
		t.Error("nosuchservice resolved")
	}
}

// TestServicesFile: /etc/services, where it exists, wins over the table;
// tcpdump resolves through it too (checked by the differential test).
func TestServicesFile(t *testing.T) {
	if _, err := exec.LookPath("getent"); err != nil {
		t.Skip("no getent")
	}
	out, err := exec.Command("getent", "services", "http/tcp").Output()
	if err != nil {
		t.Skip("getent services http/tcp:", err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		t.Skip("getent output:", string(out))
	}
	port, _, ok := lookupService("http")
	if !ok || f[1] != strconv.Itoa(int(port))+"/tcp" {
		t.Errorf("http: %d %v, getent says %s", port, ok, f[1])
	}
}

// TestMatchWire: len is the wire length of a packet cut by a snap length.
func TestMatchWire(t *testing.T) {
	f := etherFrame(nil, netPacket{etype: etherIPv4, data: ipv4Packet(corpusV4[0], corpusV4[1], protoTCP, 0, 0, transport(protoTCP, 1, 2))})
	for _, tc := range []struct {
		expr         string
		wire         int
		match, whole bool
	}{
		{"len > 100", 1500, true, false},
		{"greater 1000 and tcp", 1500, true, false},
		{"less 100", 1500, false, true},
		{"len > 100 and ip[100] = 0", 1500, false, false}, // a load past the captured octets
		{"tcp", 1500, true, true},
		{"len = 58", len(f), true, true},
	} {
		p, err := Compile(tc.expr, layers.LinkTypeEthernet, 0)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := p.NewMatcher()
		if got := m.MatchWire(f, tc.wire); got != tc.match {
			t.Errorf("%q: MatchWire(%d) %v", tc.expr, tc.wire, got)
		}
		if got := m.Match(f); got != tc.whole {
			t.Errorf("%q: Match %v", tc.expr, got)
		}
	}
}

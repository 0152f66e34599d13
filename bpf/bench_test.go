package bpf

import (
	"testing"

	"github.com/gopacket/gopacket/layers"
)

func BenchmarkMatch(b *testing.B) {
	p, err := Compile("tcp port 7174 or (host 10.0.0.1 and portrange 4000-5000)", layers.LinkTypeEthernet, 0)
	if err != nil {
		b.Fatal(err)
	}
	m, _ := p.NewMatcher()
	f := etherFrame(nil, netPacket{etype: etherIPv4, data: ipv4Packet(corpusV4[1], corpusV4[2], protoTCP, 0, 0, transport(protoTCP, 40000, 7174))})
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		if !m.Match(f) {
			b.Fatal("no match")
		}
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile("tcp port 7174 or (host 10.0.0.1 and portrange 4000-5000)", layers.LinkTypeEthernet, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMatchNoAllocs(t *testing.T) {
	p, _ := Compile("vlan or tcp port 80 or net 10.0.0.0/8", layers.LinkTypeEthernet, 0)
	m, _ := p.NewMatcher()
	f := etherFrame(nil, netPacket{etype: etherIPv4, data: ipv4Packet(corpusV4[1], corpusV4[2], protoTCP, 1, 0, transport(protoTCP, 40000, 80))})
	if n := testing.AllocsPerRun(100, func() { m.Match(f) }); n != 0 {
		t.Errorf("Match allocates %v times", n)
	}
}

package bpf

import (
	"errors"
	"testing"

	"github.com/gopacket/gopacket/layers"
	xbpf "golang.org/x/net/bpf"
)

// FuzzCompile: any expression either fails with an *Error or compiles to a
// program the VM accepts and that runs on any packet without panicking.
func FuzzCompile(f *testing.F) {
	for _, e := range diffExprs {
		f.Add(e, []byte{0x45, 0, 0, 20})
	}
	for _, e := range unsupportedExprs {
		f.Add(e, []byte{})
	}
	f.Add("vlan and vlan and vlan and port 80", etherFrame([]uint16{ether8021Q}, netPacket{etype: etherIPv4, data: ipv4Packet(corpusV4[0], corpusV4[1], protoTCP, 1, 0, transport(protoTCP, 80, 2))}))
	f.Fuzz(func(t *testing.T, expr string, pkt []byte) {
		for _, lt := range []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeRaw} {
			p, err := Compile(expr, lt, 0)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) && !errors.Is(err, errTooLong) {
					t.Fatalf("%q: error %T %v", expr, err, err)
				}
				continue
			}
			m, err := p.NewMatcher()
			if err != nil {
				t.Fatalf("%q: VM refuses the program: %v\n%s", expr, err, p)
			}
			m.Match(pkt)
			if lt == layers.LinkTypeLinuxSLL {
				raw, err := p.Raw()
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := CookedForKernel(raw); !ok && !readsCookedHeader(p) {
					t.Fatalf("%q: cooked program not rewritable for the kernel", expr)
				}
			}
		}
	})
}

// FuzzParseRaw: no panic, and a parsed program formats back to itself.
func FuzzParseRaw(f *testing.F) {
	f.Add("4\n40 0 0 12\n21 0 1 2048\n6 0 0 262144\n6 0 0 0\n")
	f.Add("1,6 0 0 -1")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseRaw(text)
		if err != nil {
			return
		}
		raw, err := p.Raw()
		if err != nil {
			return // decodable but not re-assemblable (e.g. unknown opcodes)
		}
		q, err := ParseRaw(FormatRaw(raw))
		if err != nil {
			t.Fatalf("formatted program does not parse: %v", err)
		}
		raw2, _ := q.Raw()
		if FormatRaw(raw2) != FormatRaw(raw) {
			t.Fatal("format/parse not stable")
		}
	})
}

// readsCookedHeader: the program loads the packet length or octets of the
// cooked header other than the protocol and packet type, which a socket
// filter cannot (libpcap filters such programs in user space).
func readsCookedHeader(p *Program) bool {
	for _, ins := range p.Instructions {
		switch ins := ins.(type) {
		case xbpf.LoadExtension:
			return true
		case xbpf.LoadAbsolute:
			if ins.Off < sllHeaderLen && !(ins.Size == 2 && (ins.Off == 0 || ins.Off == 14)) {
				return true
			}
		case xbpf.LoadIndirect:
			if ins.Off < sllHeaderLen {
				return true
			}
		}
	}
	return false
}

package bpf

import (
	"encoding/binary"
	"testing"

	"github.com/gopacket/gopacket/layers"
	xbpf "golang.org/x/net/bpf"
)

// skb is what a Linux socket filter sees of a packet: the data and the
// metadata ancillary loads read.
type skb struct {
	data     []byte
	protocol uint16
	pktType  uint32
	ifindex  uint32
}

// runKernel interprets the classic BPF subset our programs use, with the
// Linux ancillary loads (net/core/filter.c semantics: an out-of-range load
// rejects the packet).
func runKernel(t *testing.T, prog []xbpf.RawInstruction, s skb) uint32 {
	t.Helper()
	var a, x uint32
	load := func(off uint32, size int) (uint32, bool) {
		if off >= skfADOff {
			switch off - skfADOff {
			case skfADProtocol:
				return uint32(s.protocol), true
			case skfADPktType:
				return s.pktType, true
			case skfADIfIndex:
				return s.ifindex, true
			}
			t.Fatalf("ancillary load %d not modelled", off-skfADOff)
		}
		if uint64(off)+uint64(size) > uint64(len(s.data)) {
			return 0, false
		}
		b := s.data[off:]
		switch size {
		case 1:
			return uint32(b[0]), true
		case 2:
			return uint32(binary.BigEndian.Uint16(b)), true
		}
		return binary.BigEndian.Uint32(b), true
	}
	sizes := map[uint16]int{0x00: 4, 0x08: 2, 0x10: 1}
	var mem [16]uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		var ok bool
		switch cls := in.Op & 7; cls {
		case 0x00: // LD
			switch in.Op & 0xe0 {
			case 0x20:
				a, ok = load(in.K, sizes[in.Op&0x18])
			case 0x40:
				a, ok = load(in.K+x, sizes[in.Op&0x18])
			case 0x00:
				a, ok = in.K, true
			case 0x60:
				a, ok = mem[in.K&15], true
			default:
				t.Fatalf("op %#x not modelled", in.Op)
			}
			if !ok {
				return 0
			}
		case 0x01: // LDX
			switch in.Op & 0xe0 {
			case 0xa0:
				v, ok := load(in.K, 1)
				if !ok {
					return 0
				}
				x = 4 * (v & 0xf)
			case 0x00:
				x = in.K
			case 0x60:
				x = mem[in.K&15]
			default:
				t.Fatalf("op %#x not modelled", in.Op)
			}
		case 0x02: // ST
			mem[in.K&15] = a
		case 0x03: // STX
			mem[in.K&15] = x
		case 0x04: // ALU
			v := in.K
			if in.Op&0x08 != 0 {
				v = x
			}
			switch in.Op & 0xf0 {
			case 0x00:
				a += v
			case 0x10:
				a -= v
			case 0x20:
				a *= v
			case 0x30, 0x90:
				if v == 0 {
					return 0
				}
				if in.Op&0xf0 == 0x30 {
					a /= v
				} else {
					a %= v
				}
			case 0x40:
				a |= v
			case 0x50:
				a &= v
			case 0x60:
				a <<= v
			case 0x70:
				a >>= v
			case 0x80:
				a = -a
			case 0xa0:
				a ^= v
			default:
				t.Fatalf("op %#x not modelled", in.Op)
			}
		case 0x05: // JMP
			v := in.K
			if in.Op&0x08 != 0 {
				v = x
			}
			var c bool
			switch in.Op & 0xf0 {
			case 0x00:
				pc += int(in.K)
				continue
			case 0x10:
				c = a == v
			case 0x20:
				c = a > v
			case 0x30:
				c = a >= v
			case 0x40:
				c = a&v != 0
			}
			if c {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case 0x06:
			return in.K
		case 0x07: // MISC
			if in.Op&0xf8 == 0 {
				x = a
			} else {
				a = x
			}
		default:
			t.Fatalf("op %#x not modelled", in.Op)
		}
	}
	return 0
}

// TestCookedForKernel checks that a program compiled for DLT_LINUX_SLL and
// rewritten for a SOCK_DGRAM socket gives, on the kernel's view of each
// packet (network header first, protocol and packet type as metadata), the
// verdict the original gives on the cooked frame.
func TestCookedForKernel(t *testing.T) {
	frames := corpus(layers.LinkTypeLinuxSLL)
	for _, expr := range diffExprs {
		prog, err := Compile(expr, layers.LinkTypeLinuxSLL, 0)
		if err != nil {
			continue
		}
		raw, err := prog.Raw()
		if err != nil {
			t.Fatal(err)
		}
		kern, ok := CookedForKernel(raw)
		if !ok {
			if !readsCookedHeader(prog) {
				t.Errorf("%q: not rewritable for the kernel", expr)
			}
			continue
		}
		m, _ := prog.NewMatcher()
		for _, f := range frames {
			if len(f) < sllHeaderLen {
				continue
			}
			s := skb{data: f[sllHeaderLen:], protocol: binary.BigEndian.Uint16(f[14:]), pktType: uint32(binary.BigEndian.Uint16(f[0:]))}
			got := runKernel(t, kern, s) != 0
			if want := m.Match(f); got != want {
				t.Fatalf("%q on % x: kernel view %v, cooked %v", expr, f, got, want)
			}
		}
	}
	// A program that reads the cooked header's address cannot be rewritten.
	if _, ok := CookedForKernel([]xbpf.RawInstruction{{Op: 0x20, K: 6}, {Op: 0x06, K: 1}}); ok {
		t.Error("a load of the cooked header's address was rewritten")
	}
	// Nor one that uses the packet length.
	if _, ok := CookedForKernel([]xbpf.RawInstruction{{Op: 0x80}, {Op: 0x06, K: 1}}); ok {
		t.Error("a length load was rewritten")
	}
}

func TestDropOutgoing(t *testing.T) {
	accept := []xbpf.RawInstruction{{Op: 0x06, K: 100}}
	for _, tc := range []struct {
		ifindex       int
		pktType, ifno uint32
		want          uint32
	}{
		{0, packetOutgoing, 1, 0},
		{0, 0, 1, 100},
		{1, packetOutgoing, 1, 0},
		{1, packetOutgoing, 2, 100},
		{1, 0, 1, 100},
		{1, 3, 2, 100},
	} {
		got := runKernel(t, DropOutgoing(accept, tc.ifindex), skb{data: []byte{1}, pktType: tc.pktType, ifindex: tc.ifno})
		if got != tc.want {
			t.Errorf("ifindex %d, packet type %d on %d: got %d, want %d", tc.ifindex, tc.pktType, tc.ifno, got, tc.want)
		}
	}
}

package capture_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/capture"
)

// loopReader serves head once, then body over and over: an endless
// capture file held in memory.
type loopReader struct {
	head, body []byte
	off        int
	inBody     bool
}

func (l *loopReader) Read(p []byte) (int, error) {
	if !l.inBody {
		n := copy(p, l.head[l.off:])
		l.off += n
		if l.off == len(l.head) {
			l.inBody, l.off = true, 0
		}
		return n, nil
	}
	n := copy(p, l.body[l.off:])
	l.off = (l.off + n) % len(l.body)
	return n, nil
}

// endlessPcap returns a Source over an endless pcap of frame, repeated.
func endlessPcap(t testing.TB, link layers.LinkType, frame []byte) *capture.Source {
	frames := make([][]byte, 64)
	for i := range frames {
		frames[i] = frame
	}
	file := writePcap(t, true, link, frames...)
	s, err := capture.NewSource(&loopReader{head: file[:24], body: file[24:]}, "loop")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// endlessPcapng returns a Source over an endless pcapng of frame, repeated,
// with an interface of link type link; with options, every EPB carries
// epb_flags and a comment.
func endlessPcapng(t testing.TB, link layers.LinkType, frame []byte, options bool) *capture.Source {
	f := newNgFile(binary.LittleEndian)
	f.idb(link, 0, 9)
	head := len(f.bytes())
	for range 64 {
		if options {
			f.epbOptions(0, t0, frame)
		} else {
			f.epb(0, t0, 9, uint32(len(frame)), uint32(len(frame)), frame)
		}
	}
	file := f.bytes()
	s, err := capture.NewSource(&loopReader{head: file[:head], body: file[head:]}, "loop")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNextNoAllocs(t *testing.T) {
	payload := bytes.Repeat([]byte{0xa5}, 1460)
	for _, tc := range []struct {
		name string
		src  func() *capture.Source
		max  float64
	}{
		{"pcap-ethernet-ipv4-tcp", func() *capture.Source {
			return endlessPcap(t, layers.LinkTypeEthernet, ether(t, ipv4TCP(t, payload)))
		}, 0},
		{"pcap-qinq-ipv6-tcp", func() *capture.Source {
			return endlessPcap(t, layers.LinkTypeEthernet, ether(t, ipv6TCP(t, payload), layers.EthernetTypeQinQ, layers.EthernetTypeDot1Q))
		}, 0},
		{"pcap-sll2-ipv4-tcp", func() *capture.Source {
			return endlessPcap(t, layers.LinkTypeLinuxSLL2, sll2(ipv4TCP(t, payload)))
		}, 0},
		{"pcap-raw-ipv6-udp", func() *capture.Source {
			return endlessPcap(t, layers.LinkTypeRaw, ipv6UDP(t, payload))
		}, 0},
		{"pcapng-ethernet-ipv4-tcp", func() *capture.Source {
			return endlessPcapng(t, layers.LinkTypeEthernet, ether(t, ipv4TCP(t, payload)), false)
		}, 0},
		{"pcapng-epb-options", func() *capture.Source {
			return endlessPcapng(t, layers.LinkTypeEthernet, ether(t, ipv4TCP(t, payload)), true)
		}, 0},
		{"pcapng-vlan-ipv6-tcp", func() *capture.Source {
			return endlessPcapng(t, layers.LinkTypeEthernet, ether(t, ipv6TCP(t, payload), layers.EthernetTypeDot1Q), false)
		}, 0},
		{"pcapng-sll-ipv4-tcp", func() *capture.Source {
			return endlessPcapng(t, layers.LinkTypeLinuxSLL, sll(ipv4TCP(t, payload)), false)
		}, 0},
		// pcapgo stores the interface's link type in an interface{} per
		// packet; a value above 255 (SLL2 is 276) costs a 2-octet
		// allocation there.
		{"pcapng-sll2-ipv4-tcp", func() *capture.Source {
			return endlessPcapng(t, layers.LinkTypeLinuxSLL2, sll2(ipv4TCP(t, payload)), false)
		}, 1},
		{"pcap-infiniband", func() *capture.Source {
			return endlessPcap(t, capture.LinkTypeInfiniBand, ibFrame(1460-8))
		}, 0},
		{"pcapng-infiniband", func() *capture.Source {
			return endlessPcapng(t, capture.LinkTypeInfiniBand, ibFrame(1460-8), false)
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.src()
			for range 200 { // warm up: buffers grow once
				if p, err := s.Next(); err != nil || p.Kind == capture.KindOther || p.Kind == capture.KindBad || len(p.Payload) != 1460 {
					t.Fatalf("%v %v %d", err, p.Kind, len(p.Payload))
				}
			}
			allocs := testing.AllocsPerRun(1000, func() {
				if _, err := s.Next(); err != nil {
					t.Fatal(err)
				}
			})
			t.Logf("%v allocations per packet", allocs)
			if allocs > tc.max {
				t.Errorf("%v allocations per packet, want at most %v", allocs, tc.max)
			}
		})
	}
}

// benchSource names an endless Source of one frame, in pcap or pcapng.
type benchSource struct {
	name string
	src  func() *capture.Source
}

func benchSources(b *testing.B, frame []byte) []benchSource {
	return []benchSource{
		{"pcap", func() *capture.Source { return endlessPcap(b, layers.LinkTypeEthernet, frame) }},
		{"pcapng", func() *capture.Source { return endlessPcapng(b, layers.LinkTypeEthernet, frame, false) }},
	}
}

func BenchmarkNext(b *testing.B) {
	payload := bytes.Repeat([]byte{0xa5}, 1460)
	frame := ether(b, ipv4TCP(b, payload))
	for _, bc := range benchSources(b, frame) {
		b.Run(bc.name, func(b *testing.B) {
			s := bc.src()
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNextInto is BenchmarkNext through the fill-in API, one Packet
// reused (iwarpdump's loop), and through a single-input Merge (what
// iwarpdump -r FILE reads).
func BenchmarkNextInto(b *testing.B) {
	payload := bytes.Repeat([]byte{0xa5}, 1460)
	frame := ether(b, ipv4TCP(b, payload))
	for _, bc := range benchSources(b, frame) {
		b.Run(bc.name, func(b *testing.B) {
			s := bc.src()
			var p capture.Packet
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if err := s.NextInto(&p); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"-merge", func(b *testing.B) {
			m := capture.NewMerge(bc.src())
			var p capture.Packet
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if err := m.NextInto(&p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestNextIntoNoAllocs: the fill-in API allocates nothing per packet either,
// for a Source and for a Merge of one or several inputs.
func TestNextIntoNoAllocs(t *testing.T) {
	payload := bytes.Repeat([]byte{0xa5}, 1460)
	frame := ether(t, ipv4TCP(t, payload))
	for _, n := range []int{1, 3} {
		srcs := make([]*capture.Source, n)
		for i := range srcs {
			srcs[i] = endlessPcap(t, layers.LinkTypeEthernet, frame)
		}
		s0, m := srcs[0], capture.NewMerge(srcs...)
		var p capture.Packet
		for range 200 {
			if err := m.NextInto(&p); err != nil || p.Kind != capture.KindTCP {
				t.Fatal(err, p.Kind)
			}
		}
		if allocs := testing.AllocsPerRun(1000, func() {
			if err := m.NextInto(&p); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("merge of %d: %v allocations per packet, want 0", n, allocs)
		}
		if n == 1 {
			if allocs := testing.AllocsPerRun(1000, func() {
				if err := s0.NextInto(&p); err != nil {
					t.Fatal(err)
				}
			}); allocs != 0 {
				t.Errorf("source: %v allocations per packet, want 0", allocs)
			}
		}
	}
}

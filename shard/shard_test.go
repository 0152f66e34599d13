package shard_test

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/shard"
)

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// TestHashVectors pins Hash to values computed by an independent
// implementation of the documented algorithm (testdata/hashref.py, plain
// Python integers), so that the function other tools may reimplement never
// changes silently.
func TestHashVectors(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want uint64
	}{
		{"192.0.2.2:40001", "192.0.2.1:7174", 0xe0e9e6380e9585ff},
		{"[2001:db8::2]:40020", "[2001:db8::1]:7174", 0xdc82d2ecbb4db17b},
		{"10.0.0.1:1", "10.0.0.1:2", 0x0aaefc45ed1d689f},
		{"0.0.0.0:0", "0.0.0.0:0", 0x43b83c875c243a6b},
		{"198.51.100.2:0", "198.51.100.1:0", 0x5e0fd7fd6eacd2fa},
	} {
		a, b := ap(tc.a), ap(tc.b)
		if got := shard.Hash(a, b); got != tc.want {
			t.Errorf("Hash(%s, %s) = %#x, want %#x", a, b, got, tc.want)
		}
		if got := shard.Hash(b, a); got != tc.want {
			t.Errorf("Hash(%s, %s) = %#x, want %#x (symmetry)", b, a, got, tc.want)
		}
		if got := shard.HashAny(a, b); got != tc.want {
			t.Errorf("generic Hash(%s, %s) = %#x, want %#x", a, b, got, tc.want)
		}
		if a.Addr().Is4() && b.Addr().Is4() {
			if got := shard.HashIPv4(b.Addr().As4(), a.Addr().As4(), b.Port(), a.Port()); got != tc.want {
				t.Errorf("HashIPv4(%s, %s) = %#x, want %#x", b, a, got, tc.want)
			}
		}
	}
}

// BenchmarkHash: the IPv4 fast path against the generic hash.
func BenchmarkHash(b *testing.B) {
	x, y := ap("192.0.2.2:40001"), ap("192.0.2.1:7174")
	var sink uint64
	b.Run("Hash", func(b *testing.B) {
		for b.Loop() {
			sink += shard.Hash(x, y)
		}
	})
	b.Run("HashIPv4", func(b *testing.B) {
		xa, ya := x.Addr().As4(), y.Addr().As4()
		for b.Loop() {
			sink += shard.HashIPv4(xa, ya, x.Port(), y.Port())
		}
	})
	b.Run("generic", func(b *testing.B) {
		for b.Loop() {
			sink += shard.HashAny(x, y)
		}
	})
	_ = sink
}

func randAddrPort(r *rand.Rand) netip.AddrPort {
	var a netip.Addr
	if r.IntN(2) == 0 {
		a = netip.AddrFrom4([4]byte{10, byte(r.IntN(4)), byte(r.IntN(256)), byte(r.IntN(256))})
	} else {
		var b [16]byte
		b[0], b[1], b[15] = 0x20, 0x01, byte(r.IntN(256))
		a = netip.AddrFrom16(b)
	}
	return netip.AddrPortFrom(a, uint16(r.IntN(65536)))
}

// TestHashSymmetricAndUniform: both directions hash alike, and random
// connections spread evenly over N shards (within 10% of the mean for
// 80,000 connections; a binomial deviation of 10% is over 8 sigma).
func TestHashSymmetricAndUniform(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 3, 8, 10, 64} {
		counts := make([]int, n)
		const conns = 80000
		for range conns {
			a, b := randAddrPort(r), randAddrPort(r)
			h := shard.Hash(a, b)
			if h != shard.Hash(b, a) {
				t.Fatalf("Hash(%s, %s) not symmetric", a, b)
			}
			counts[h%uint64(n)]++
		}
		mean := conns / n
		for i, c := range counts {
			if c < mean*9/10 || c > mean*11/10 {
				t.Errorf("N=%d: shard %d got %d connections, mean %d", n, i, c, mean)
			}
		}
	}
	// Ports alone must spread too (one host pair, many connections).
	counts := make([]int, 4)
	for p := range 4000 {
		counts[shard.Hash(ap("192.0.2.1:7174"), netip.AddrPortFrom(netip.MustParseAddr("192.0.2.2"), uint16(40000+p)))%4]++
	}
	for i, c := range counts {
		if c < 900 || c > 1100 {
			t.Errorf("ports only: shard %d got %d of 4000", i, c)
		}
	}
}

func TestOf(t *testing.T) {
	a, b := ap("192.0.2.2:40001"), ap("192.0.2.1:7174")
	tcp := func(src, dst netip.AddrPort) *capture.Packet {
		return &capture.Packet{Kind: capture.KindTCP, Src: src, Dst: dst}
	}
	const n = 16
	want := int(shard.Hash(a, b) % n)
	for _, tc := range []struct {
		name string
		p    *capture.Packet
		want int
	}{
		{"tcp", tcp(a, b), want},
		{"tcp-reverse", tcp(b, a), want},
		{"udp", &capture.Packet{Kind: capture.KindUDP, Src: a, Dst: b}, want},
		{"roce-to", &capture.Packet{Kind: capture.KindUDP, Src: ap("192.0.2.2:51000"), Dst: ap("192.0.2.1:4791")},
			int(shard.Hash(ap("192.0.2.2:0"), ap("192.0.2.1:0")) % n)},
		{"roce-from-other-port", &capture.Packet{Kind: capture.KindUDP, Src: ap("192.0.2.1:4791"), Dst: ap("192.0.2.2:61234")},
			int(shard.Hash(ap("192.0.2.2:0"), ap("192.0.2.1:0")) % n)},
		{"sctp", &capture.Packet{Kind: capture.KindOther, Src: ap("192.0.2.2:0"), Dst: ap("192.0.2.1:0")},
			int(shard.Hash(ap("192.0.2.2:0"), ap("192.0.2.1:0")) % n)},
		{"arp", &capture.Packet{Kind: capture.KindOther}, 0},
		{"bad", &capture.Packet{Kind: capture.KindBad, Src: a, Dst: b}, 0},
		{"bad-tcp-header", &capture.Packet{Kind: capture.KindBad, Src: a, Dst: b,
			Err: &dissect.DecodeError{Layer: dissect.LayerTCP, Err: dissect.ErrBadLength}}, want},
		{"bad-ip-header", &capture.Packet{Kind: capture.KindBad, Src: a, Dst: b,
			Err: &dissect.DecodeError{Layer: dissect.LayerIP, Err: dissect.ErrBadLength}}, 0},
	} {
		if got := shard.Of(tc.p, n); got != tc.want {
			t.Errorf("%s: Of = %d, want %d", tc.name, got, tc.want)
		}
		if got := shard.Of(tc.p, 1); got != 0 {
			t.Errorf("%s: Of(p, 1) = %d", tc.name, got)
		}
		if got := shard.Of(tc.p, 0); got != 0 {
			t.Errorf("%s: Of(p, 0) = %d", tc.name, got)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want shard.Selector
		ok   bool
	}{
		{"0/1", shard.Selector{Index: 0, Count: 1}, true},
		{"3/8", shard.Selector{Index: 3, Count: 8}, true},
		{" 7/8 ", shard.Selector{Index: 7, Count: 8}, true},
		{"65535/65536", shard.Selector{Index: 65535, Count: 65536}, true},
		{"8/8", shard.Selector{}, false},
		{"-1/8", shard.Selector{}, false},
		{"1/0", shard.Selector{}, false},
		{"0/65537", shard.Selector{}, false},
		{"3", shard.Selector{}, false},
		{"a/b", shard.Selector{}, false},
		{"3/8/9", shard.Selector{}, false},
		{"", shard.Selector{}, false},
	} {
		got, err := shard.Parse(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, shard.ErrSelector) {
			t.Errorf("Parse(%q): error %v is not ErrSelector", tc.in, err)
		}
		if tc.ok && tc.want.Count > 1 && got.String() != trim(tc.in) {
			t.Errorf("String() = %q, want %q", got.String(), trim(tc.in))
		}
	}
}

func trim(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

func TestSelector(t *testing.T) {
	p := &capture.Packet{Kind: capture.KindTCP, Src: ap("192.0.2.2:40001"), Dst: ap("192.0.2.1:7174")}
	var zero shard.Selector
	if !zero.All() || !zero.Keep(p) || zero.String() != "" || zero.Name("x") != "x" {
		t.Errorf("zero selector: All %v Keep %v String %q Name %q", zero.All(), zero.Keep(p), zero.String(), zero.Name("x"))
	}
	kept := 0
	for i := range 5 {
		s := shard.Selector{Index: i, Count: 5}
		if s.Keep(p) {
			kept++
		}
	}
	if kept != 1 {
		t.Errorf("packet kept by %d of 5 shards, want exactly 1", kept)
	}
	if got := (shard.Selector{Index: 2, Count: 8}).Name("cap"); got != "cap.shard-2-of-8" {
		t.Errorf("Name = %q", got)
	}
}

func TestOfNoAllocs(t *testing.T) {
	p := &capture.Packet{Kind: capture.KindTCP, Src: ap("[2001:db8::2]:40001"), Dst: ap("[2001:db8::1]:7174")}
	if a := testing.AllocsPerRun(1000, func() { _ = shard.Of(p, 8) }); a != 0 {
		t.Errorf("Of: %v allocations", a)
	}
}

func BenchmarkOf(b *testing.B) {
	for _, bc := range []struct{ name, src, dst string }{
		{"ipv4", "192.0.2.2:40001", "192.0.2.1:7174"},
		{"ipv6", "[2001:db8::2]:40001", "[2001:db8::1]:7174"},
	} {
		p := &capture.Packet{Kind: capture.KindTCP, Src: ap(bc.src), Dst: ap(bc.dst)}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			s := 0
			for b.Loop() {
				s += shard.Of(p, 8)
			}
			_ = s
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0/1", "3/8", "8/8", "-1/2", "x", "1/65536", " 2/3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := shard.Parse(s)
		if err != nil {
			if sel != (shard.Selector{}) {
				t.Fatalf("error with a non-zero selector %+v", sel)
			}
			return
		}
		if sel.Index < 0 || sel.Index >= sel.Count || sel.Count > shard.MaxCount {
			t.Fatalf("Parse(%q) = %+v out of range", s, sel)
		}
		again, err := shard.Parse(sel.String())
		if sel.Count > 1 && (err != nil || again != sel) {
			t.Fatalf("round trip of %+v: %+v, %v", sel, again, err)
		}
	})
}

func FuzzHash(f *testing.F) {
	f.Add([]byte{192, 0, 2, 1}, uint16(7174), []byte{192, 0, 2, 2}, uint16(40001), uint8(8))
	f.Add(make([]byte, 16), uint16(0), make([]byte, 16), uint16(0), uint8(1))
	f.Add([]byte{10, 0, 0, 1}, uint16(9), []byte{10, 0, 0, 1}, uint16(7), uint8(2))
	f.Add([]byte{10, 0, 0, 2}, uint16(1), []byte{10, 0, 0, 1}, uint16(7), uint8(2))
	f.Fuzz(func(t *testing.T, a []byte, pa uint16, b []byte, pb uint16, n uint8) {
		x, ok1 := netip.AddrFromSlice(a)
		y, ok2 := netip.AddrFromSlice(b)
		if !ok1 || !ok2 {
			return
		}
		u, v := netip.AddrPortFrom(x, pa), netip.AddrPortFrom(y, pb)
		if shard.Hash(u, v) != shard.Hash(v, u) {
			t.Fatalf("Hash(%s, %s) not symmetric", u, v)
		}
		if h, g := shard.Hash(u, v), shard.HashAny(u, v); h != g {
			t.Fatalf("Hash(%s, %s) = %#x, the generic hash %#x", u, v, h, g)
		}
		if x.Is4() && y.Is4() {
			if h, g := shard.HashIPv4(x.As4(), y.As4(), pa, pb), shard.HashAny(u, v); h != g {
				t.Fatalf("HashIPv4(%s, %s) = %#x, the generic hash %#x", u, v, h, g)
			}
		}
		p := capture.Packet{Kind: capture.KindTCP, Src: u, Dst: v}
		q := capture.Packet{Kind: capture.KindTCP, Src: v, Dst: u}
		i := shard.Of(&p, int(n))
		if i != shard.Of(&q, int(n)) || i < 0 || (n > 0 && i >= int(n)) {
			t.Fatalf("Of = %d for N=%d", i, n)
		}
	})
}

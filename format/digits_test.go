package format

import (
	"math"
	"net/netip"
	"strconv"
	"testing"
)

// TestAppendUint: appendUint writes what strconv does, at every length
// and around every power of ten, after a prefix and into full buffers.
func TestAppendUint(t *testing.T) {
	vals := []uint64{0, 1, 9, math.MaxUint64, math.MaxUint64 - 1, math.MaxUint32, math.MaxUint16}
	for p := uint64(10); ; p *= 10 {
		vals = append(vals, p-1, p, p+1)
		if p > math.MaxUint64/10 {
			break
		}
	}
	for i := 0; i < 64; i++ {
		vals = append(vals, 1<<i, 1<<i-1, 1<<i+1)
	}
	for _, v := range vals {
		want := strconv.AppendUint([]byte("x:"), v, 10)
		if got := appendUint([]byte("x:"), v); string(got) != string(want) {
			t.Errorf("appendUint(%d) = %q, want %q", v, got, want)
		}
		full := make([]byte, 2) // no room: appendUint grows it
		full[0], full[1] = 'x', ':'
		if got := appendUint(full, v); string(got) != string(want) {
			t.Errorf("appendUint(%d) into a full slice = %q, want %q", v, got, want)
		}
		if n := decimalLen(v); n != len(strconv.FormatUint(v, 10)) {
			t.Errorf("decimalLen(%d) = %d", v, n)
		}
	}
}

func FuzzAppendUint(f *testing.F) {
	f.Add(uint64(0), 0)
	f.Add(uint64(math.MaxUint64), 3)
	f.Add(uint64(99), 1)
	f.Fuzz(func(t *testing.T, v uint64, spare int) {
		dst := make([]byte, 1, 1+spare&31)
		want := strconv.AppendUint(append([]byte(nil), dst...), v, 10)
		if got := appendUint(dst, v); string(got) != string(want) {
			t.Fatalf("appendUint(%d) = %q, want %q", v, got, want)
		}
	})
}

// TestAddrCache: the cached text is appendAddrPort's, for endpoints that
// collide in the cache, IPv6 ones and the invalid one.
func TestAddrCache(t *testing.T) {
	var c addrCache
	var eps []netip.AddrPort
	for i := 0; i < 300; i++ {
		eps = append(eps, netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), uint16(4000+i%7)))
	}
	eps = append(eps, netip.MustParseAddrPort("[2001:db8::1]:7174"), netip.MustParseAddrPort("[fe80::1%eth0]:1"), netip.AddrPort{},
		netip.AddrPortFrom(netip.MustParseAddr("::ffff:10.0.0.1"), 9))
	for round := 0; round < 3; round++ {
		for i, a := range eps {
			if round == 1 && i%2 == 0 {
				continue
			}
			want := appendAddrPort([]byte("p"), a)
			if got := c.append([]byte("p"), a); string(got) != string(want) {
				t.Fatalf("%v: %q, want %q", a, got, want)
			}
		}
	}
}

package varpack

import (
	"encoding/binary"
	"math"
	"net/netip"
	"testing"
)

// TestRoundTrip: what the Append functions write, the Reader reads back,
// and cut anywhere short it reads with ErrCut and no panic.
func TestRoundTrip(t *testing.T) {
	addrs := []netip.AddrPort{{}, netip.MustParseAddrPort("10.0.0.1:4791"),
		netip.MustParseAddrPort("[2001:db8::7]:65535"), netip.AddrPortFrom(netip.MustParseAddr("::ffff:10.1.2.3"), 1)}
	strs := []string{"reset", "ietf", "reset", "", "closed"}
	var table []string
	full := []string{"a", "b"}
	var b []byte
	for _, a := range addrs {
		b = AppendAddrPort(b, a)
	}
	for _, s := range strs {
		b = AppendString(b, s, &table, 8)
		b = AppendString(b, s, &full, 2)
	}
	b = binary.AppendVarint(b, math.MinInt64)
	b = binary.AppendUvarint(b, math.MaxUint16)
	if len(table) != 4 || len(full) != 2 {
		t.Fatalf("tables %q and %q", table, full)
	}
	read := func(b []byte) (*Reader, bool) {
		r := &Reader{B: b}
		ok := true
		for _, a := range addrs {
			ok = ok && r.AddrPort() == a
		}
		for _, s := range strs {
			ok = ok && r.String(table) == s
			ok = ok && r.String(full) == s
		}
		ok = ok && r.Int() == math.MinInt64 && r.Uint16() == math.MaxUint16
		return r, ok
	}
	if r, ok := read(b); !ok || r.Err != nil || len(r.B) != 0 {
		t.Fatalf("read back: ok %v, err %v, %d octets left", ok, r.Err, len(r.B))
	}
	for n := range len(b) {
		if r, _ := read(b[:n]); r.Err != ErrCut {
			t.Fatalf("cut to %d of %d octets: err %v", n, len(b), r.Err)
		}
	}
}

// TestRange: values that do not fit, an unknown address length and an
// index past the table fail.
func TestRange(t *testing.T) {
	r := &Reader{B: binary.AppendUvarint(nil, math.MaxUint16+1)}
	if r.Uint16(); r.Err != ErrCut {
		t.Error("a uint16 of 65536 reads without an error")
	}
	r = &Reader{B: []byte{5, 1, 2, 3, 4, 5, 0, 0}}
	if r.AddrPort(); r.Err != ErrCut {
		t.Error("an address of 5 octets reads without an error")
	}
	r = &Reader{B: binary.AppendUvarint(nil, 3)} // index 1
	if r.String([]string{"x"}); r.Err != ErrCut {
		t.Error("an index past the table reads without an error")
	}
	if got := (&Reader{B: AppendString(nil, "y", &[]string{"x"}, 1)}).String([]string{"x"}); got != "y" {
		t.Errorf("a string written out reads %q", got)
	}
}

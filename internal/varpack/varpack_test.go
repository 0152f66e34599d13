package varpack

import (
	"bytes"
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

// TestArena writes records of many sizes into an Arena and reads them all
// back; a record larger than a block gets its own.
func TestArena(t *testing.T) {
	var a Arena
	type ent struct {
		at uint32
		p  []byte
	}
	var ents []ent
	total := 0
	for i := range 20000 {
		n := i % 300
		if i%5000 == 4999 {
			n = ArenaBlock + 100
		}
		p := make([]byte, n)
		for j := range p {
			p[j] = byte(i + j)
		}
		at, ok := a.Add(p, i%3)
		if !ok {
			t.Fatalf("record %d: no room", i)
		}
		total += n + i%3
		ents = append(ents, ent{at, p})
	}
	for i, e := range ents {
		got := a.Bytes(e.at, len(e.p)+i%3)
		if !bytes.Equal(got[:len(e.p)], e.p) || !bytes.Equal(got[len(e.p):], make([]byte, i%3)) {
			t.Fatalf("record %d differs", i)
		}
	}
	if a.Len() != total {
		t.Errorf("Len %d, want %d", a.Len(), total)
	}
	var held int
	for _, b := range a.blocks {
		held += cap(b)
	}
	if held > total+total/20+4*ArenaBlock {
		t.Errorf("%d octets of blocks for %d", held, total)
	}
	// Out of range: nil, no panic.
	for _, c := range []struct {
		at uint32
		n  int
	}{{0, -1}, {0xffffffff, 1}, {uint32(len(a.blocks)) << arenaShift, 0}, {ents[0].at, 1 << 20}} {
		if b := a.Bytes(c.at, c.n); b != nil {
			t.Errorf("Bytes(%#x, %d) = %d octets", c.at, c.n, len(b))
		}
	}
	// Writing into what Bytes returns cannot reach the next record.
	b := a.Bytes(ents[1].at, len(ents[1].p))
	if cap(b) != len(b) {
		t.Errorf("Bytes' capacity %d beyond its %d octets", cap(b), len(b))
	}
}

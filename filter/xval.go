package filter

import (
	"math"
	"math/bits"
	"net/netip"
	"strings"
	"sync"
	"unsafe"

	"github.com/iwarpkit/iwarpkit/format"
)

// xkind is the kind of a value in an expression (expr.go). Numbers have
// the four kinds of tshark 4.0's integer arithmetic (epan/ftypes, read for
// facts, and checked with tshark -Y on the bundled captures): a field of up
// to 32 bits (FT_UINT8 to FT_UINT32) computes in 32 bits, a wider one in 64,
// and a difference below zero, or a negation, is signed.
type xkind uint8

const (
	xNone  xkind = iota // no value of its own (an object: count only)
	xU32                // unsigned, 32 bits
	xS32                // signed, 32 bits
	xU64                // unsigned, 64 bits
	xS64                // signed, 64 bits
	xBool               // false < true
	xStr                // a string
	xBytes              // octets
	xAddr               // an IPv4 or IPv6 address, or a literal's subnet
	xTime               // a time in nanoseconds, relative (frame.time_relative, frame.time_epoch)
	xDate               // an absolute time in nanoseconds since the epoch (frame.time)
)

// xval is a value in an expression. Numbers and times are in u: a 32-bit
// kind's bit pattern zero-extended (tshark's union of integers, which an
// operation of the left operand's kind reads whatever the right one's),
// a signed value in two's complement; booleans 0 and 1. Strings and octets
// are in s (octets as a string of them, not copied: see scratch).
type xval struct {
	k xkind
	u uint64
	s string
	p netip.Prefix
}

func (v *xval) isNum() bool { return v.k >= xU32 && v.k <= xS64 }

// signed reports whether a number kind is signed.
func (k xkind) signed() bool { return k == xS32 || k == xS64 }

// wide reports whether a number kind has 64 bits.
func (k xkind) wide() bool { return k == xU64 || k == xS64 }

// toU64 reads a number as tshark converts it for an unsigned comparison: a
// negative value has none.
func (v *xval) toU64() (uint64, bool) {
	switch v.k {
	case xU32:
		return uint64(uint32(v.u)), true
	case xS32:
		if int32(uint32(v.u)) < 0 {
			return 0, false
		}
		return uint64(uint32(v.u)), true
	case xS64:
		if int64(v.u) < 0 {
			return 0, false
		}
	}
	return v.u, true
}

// toS64 reads a number as tshark converts it for a signed comparison: an
// unsigned value past the int64 range has none.
func (v *xval) toS64() (int64, bool) {
	switch v.k {
	case xU32:
		return int64(uint32(v.u)), true
	case xS32:
		return int64(int32(uint32(v.u))), true
	case xU64:
		if v.u > math.MaxInt64 {
			return 0, false
		}
	}
	return int64(v.u), true
}

// cmpX orders a against b; ok is false when they do not compare (tshark's
// comparison fails: a negative number against an unsigned one, values of
// other kinds). The left operand's kind decides, as in tshark: unsigned
// compares as uint64, signed as int64.
func cmpX(a, b *xval) (int, bool) {
	switch {
	case a.isNum():
		if !b.isNum() {
			return 0, false
		}
		if a.k.signed() {
			x, ok1 := a.toS64()
			y, ok2 := b.toS64()
			if !ok1 || !ok2 {
				return 0, false
			}
			return cmpI(x, y), true
		}
		x, ok1 := a.toU64()
		y, ok2 := b.toU64()
		if !ok1 || !ok2 {
			return 0, false
		}
		return cmpU(x, y), true
	case a.k != b.k:
		return 0, false
	case a.k == xBool:
		return cmpU(a.u, b.u), true
	case a.k == xTime, a.k == xDate:
		return cmpI(int64(a.u), int64(b.u)), true
	case a.k == xStr, a.k == xBytes:
		return strings.Compare(a.s, b.s), true
	case a.k == xAddr:
		return a.p.Addr().Compare(b.p.Addr()), true
	}
	return 0, false
}

// eqX reports whether a equals b (ok: they compare). An address equals a
// subnet that holds it, as in tshark (ip.addr == 192.0.2.0/24).
func eqX(a, b *xval) (eq, ok bool) {
	if a.k == xAddr && b.k == xAddr && (!a.p.IsSingleIP() || !b.p.IsSingleIP()) {
		if a.p.Addr().Is4() != b.p.Addr().Is4() {
			return false, false
		}
		return a.p.Overlaps(b.p), true
	}
	c, ok := cmpX(a, b)
	return ok && c == 0, ok
}

func cmpI(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// nonzero reports whether a value is true as a test on its own (tshark's
// bare arithmetic: ddp.stag & 0x80): a number or time other than zero,
// octets or an address with a bit set.
func (v *xval) nonzero() bool {
	switch v.k {
	case xU32, xS32:
		return uint32(v.u) != 0
	case xU64, xS64, xTime, xDate, xBool:
		return v.u != 0
	case xBytes, xStr:
		for i := 0; i < len(v.s); i++ {
			if v.s[i] != 0 {
				return true
			}
		}
		return false
	case xAddr:
		return !v.p.Addr().IsUnspecified()
	}
	return false
}

// arith computes a op b as tshark 4.0 does, or ok is false (an overflow, a
// division by zero: tshark drops the value). The left operand's kind
// decides; the right one is read in its width.
func arith(op byte, a, b *xval, sc *scratch) (xval, bool) {
	switch a.k {
	case xU32:
		x, y := uint32(a.u), uint32(b.u)
		switch op {
		case '+':
			r := uint64(x) + uint64(y)
			return xval{k: xU32, u: r}, r <= math.MaxUint32
		case '-':
			if y > x {
				// Below zero: signed, for operands that fit an int32.
				if x > math.MaxInt32 || y > math.MaxInt32 {
					return xval{}, false
				}
				return s32(int64(x) - int64(y))
			}
			return xval{k: xU32, u: uint64(x - y)}, true
		case '*':
			r := uint64(x) * uint64(y)
			return xval{k: xU32, u: r}, r <= math.MaxUint32
		case '/', '%':
			if y == 0 {
				return xval{}, false
			}
			if op == '/' {
				return xval{k: xU32, u: uint64(x / y)}, true
			}
			return xval{k: xU32, u: uint64(x % y)}, true
		case '&':
			return xval{k: xU32, u: uint64(x & y)}, true
		}
	case xS32:
		x, y := int64(int32(uint32(a.u))), int64(int32(uint32(b.u)))
		switch op {
		case '+':
			return s32(x + y)
		case '-':
			return s32(x - y)
		case '*':
			return s32(x * y)
		case '/', '%':
			if y == 0 || x == math.MinInt32 && y == -1 {
				return xval{}, false
			}
			if op == '/' {
				return s32(x / y)
			}
			return s32(x % y)
		case '&':
			return s32(x & y)
		}
	case xU64:
		x, y := a.u, b.u
		switch op {
		case '+':
			r, c := bits.Add64(x, y, 0)
			return xval{k: xU64, u: r}, c == 0
		case '-':
			if y > x {
				if x > math.MaxInt64 || y > math.MaxInt64 {
					return xval{}, false
				}
				return xval{k: xS64, u: uint64(int64(x) - int64(y))}, true
			}
			return xval{k: xU64, u: x - y}, true
		case '*':
			hi, lo := bits.Mul64(x, y)
			return xval{k: xU64, u: lo}, hi == 0
		case '/', '%':
			if y == 0 {
				return xval{}, false
			}
			if op == '/' {
				return xval{k: xU64, u: x / y}, true
			}
			return xval{k: xU64, u: x % y}, true
		case '&':
			return xval{k: xU64, u: x & y}, true
		}
	case xS64:
		x, y := int64(a.u), int64(b.u)
		var r int64
		ok := true
		switch op {
		case '+':
			r = x + y
			ok = (r > x) == (y > 0)
		case '-':
			r = x - y
			ok = (r < x) == (y > 0)
		case '*':
			r = x * y
			ok = x == 0 || r/x == y && !(x == -1 && y == math.MinInt64) && !(y == -1 && x == math.MinInt64)
		case '/', '%':
			if y == 0 || x == math.MinInt64 && y == -1 {
				return xval{}, false
			}
			if op == '/' {
				r = x / y
			} else {
				r = x % y
			}
		case '&':
			r = x & y
		}
		return xval{k: xS64, u: uint64(r)}, ok
	case xTime:
		x, y := int64(a.u), int64(b.u)
		switch op {
		case '+':
			return xval{k: xTime, u: uint64(x + y)}, true
		case '-':
			return xval{k: xTime, u: uint64(x - y)}, true
		}
	case xBytes:
		if op == '&' && b.k == xBytes {
			// As long as the shorter operand (tshark: 00:01:00:01 & ff:ff
			// is 00:01).
			n := min(len(a.s), len(b.s))
			start := len(sc.arena)
			for i := 0; i < n; i++ {
				sc.arena = append(sc.arena, a.s[i]&b.s[i])
			}
			return xval{k: xBytes, s: sc.str(start)}, true
		}
	case xAddr:
		if op == '&' && b.k == xAddr {
			x, y := a.p.Addr(), b.p.Addr()
			if x.Is4() != y.Is4() {
				return xval{}, false
			}
			xs, ys := x.As16(), y.As16()
			for i := range xs {
				xs[i] &= ys[i]
			}
			r := netip.AddrFrom16(xs)
			if x.Is4() {
				r = r.Unmap()
			}
			return xval{k: xAddr, p: netip.PrefixFrom(r, r.BitLen())}, true
		}
	}
	return xval{}, false
}

// s32 returns x as a signed 32-bit value, or ok false past the int32 range.
func s32(x int64) (xval, bool) {
	return xval{k: xS32, u: uint64(uint32(int32(x)))}, x >= math.MinInt32 && x <= math.MaxInt32
}

// neg computes -a as tshark does: an unsigned value becomes signed, and has
// no negation past the signed range.
func neg(a *xval) (xval, bool) {
	switch a.k {
	case xU32:
		if uint32(a.u) > math.MaxInt32 {
			return xval{}, false
		}
		return s32(-int64(uint32(a.u)))
	case xS32:
		// tshark's negation of the least int32 is itself.
		return xval{k: xS32, u: uint64(uint32(-int32(uint32(a.u))))}, true
	case xU64:
		if a.u > math.MaxInt64 {
			return xval{}, false
		}
		return xval{k: xS64, u: uint64(-int64(a.u))}, true
	case xS64, xTime:
		return xval{k: a.k, u: uint64(-int64(a.u))}, true
	}
	return xval{}, false
}

// abs is tshark's abs(): a negative value negated, others as they are.
func absX(a *xval) (xval, bool) {
	switch a.k {
	case xS32:
		if int32(uint32(a.u)) < 0 {
			return neg(a)
		}
	case xS64, xTime:
		if int64(a.u) < 0 {
			return neg(a)
		}
	}
	return *a, true
}

// scratch holds an expression's values while a record is tested: a stack
// of values that each operation pushes its results on, and the octets of
// the strings functions make (upper, string, &). Strings point into arena
// without a copy; none outlives the test, and the arena is only appended
// to (an earlier string keeps the array it was made in). Scratches are
// pooled, so that a test does not allocate.
type scratch struct {
	vals  []xval
	arena []byte
}

var scratches = sync.Pool{New: func() any { return &scratch{vals: make([]xval, 0, 16), arena: make([]byte, 0, 128)} }}

func getScratch() *scratch { return scratches.Get().(*scratch) }

// release returns sc to the pool, keeping no record's values alive.
func (sc *scratch) release() {
	clear(sc.vals)
	sc.vals = sc.vals[:0]
	sc.arena = sc.arena[:0]
	scratches.Put(sc)
}

// str returns the arena's octets from start as a string, without a copy.
func (sc *scratch) str(start int) string {
	if len(sc.arena) == start {
		return ""
	}
	return unsafe.String(&sc.arena[start], len(sc.arena)-start)
}

// push appends a record value of field f, in f's kind.
func (sc *scratch) push(f *field, v *format.Value) {
	x := xval{}
	switch v.Kind {
	case format.KUint:
		x.k, x.u = numKind(f, false), v.U
	case format.KInt:
		switch {
		case f.typ == fTime && f.clk == cAbsolute:
			x.k, x.u = xDate, uint64(v.I)
		case f.typ == fTime:
			x.k, x.u = xTime, uint64(v.I)
		default:
			x.k = numKind(f, true)
			if x.k == xS32 {
				x.u = uint64(uint32(int32(v.I)))
			} else {
				x.u = uint64(v.I)
			}
		}
	case format.KBool:
		x.k = xBool
		if v.B {
			x.u = 1
		}
	case format.KString:
		x.k, x.s = xStr, v.S
	case format.KBytes:
		x.k = xBytes
		if len(v.Bytes) > 0 {
			x.s = unsafe.String(&v.Bytes[0], len(v.Bytes))
		}
	}
	sc.vals = append(sc.vals, x)
}

// pushAddr appends an address.
func (sc *scratch) pushAddr(a netip.Addr) {
	sc.vals = append(sc.vals, xval{k: xAddr, p: netip.PrefixFrom(a, a.BitLen())})
}

// numKind is the kind of a number field's values: 32 bits for Wireshark
// fields of up to 32 (the registry's widths, wsWidths, ports, tcp.stream),
// 64 for wider ones and for the keys tshark has no field for.
func numKind(f *field, signed bool) xkind {
	wide := f.bits == 0 || f.bits > 32
	if f.derive == dStream {
		wide = false // tshark's FT_UINT32
	}
	switch {
	case signed && wide:
		return xS64
	case signed:
		return xS32
	case wide:
		return xU64
	}
	return xU32
}

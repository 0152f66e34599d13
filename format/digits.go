package format

import (
	"math/bits"
	"net/netip"
)

// The JSON Lines fast path (JSONWriter) spends most of its time writing
// numbers: some 25 per FPDU record. strconv.AppendUint formats into a
// buffer of its own and copies the digits over; appendUint writes them in
// place, two at a time, after growing dst once. Its output is
// strconv.AppendUint(dst, v, 10)'s (TestAppendUint, FuzzAppendUint).

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// pow10 holds 10^0 to 10^19.
var pow10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// decimalLen is the number of decimal digits of v.
func decimalLen(v uint64) int {
	// bits.Len64(v)*1233>>12 is floor(log10(2^len)), off by one at most.
	n := bits.Len64(v) * 1233 >> 12
	if v >= pow10[n] {
		n++
	}
	return max(n, 1)
}

// appendUint appends v in decimal.
func appendUint(dst []byte, v uint64) []byte {
	if v < 10 {
		return append(dst, byte('0'+v))
	}
	n := decimalLen(v)
	l := len(dst)
	if cap(dst)-l < n {
		dst = append(dst, make([]byte, n)...)
	} else {
		dst = dst[:l+n]
	}
	b := dst[l : l+n]
	i := n
	for v >= 100 {
		q := v / 100
		j := (v - q*100) * 2
		i -= 2
		b[i], b[i+1] = digitPairs[j], digitPairs[j+1]
		v = q
	}
	if v >= 10 {
		b[0], b[1] = digitPairs[v*2], digitPairs[v*2+1]
	} else {
		b[0] = byte('0' + v)
	}
	return dst
}

// appendKV appends a key's prefix (`,"key":`, written whole by the caller)
// and v.
func appendKV(dst []byte, prefix string, v uint64) []byte {
	return appendUint(append(dst, prefix...), v)
}

// appendKB appends a key's prefix and a boolean.
func appendKB(dst []byte, prefix string, v bool) []byte {
	dst = append(dst, prefix...)
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// addrCache remembers the JSON text of recent endpoints: the records of a
// connection repeat the same two, and netip's formatting costs more than
// the rest of the head of a record.
type addrCache struct {
	ent [64]struct {
		a    netip.AddrPort
		text []byte // `"a.b.c.d:port"`
	}
}

// append appends a's JSON string (as appendAddrPort).
func (c *addrCache) append(dst []byte, a netip.AddrPort) []byte {
	if !a.Addr().Is4() {
		return appendAddrPort(dst, a)
	}
	v4 := a.Addr().As4()
	h := (uint32(v4[0])<<24 | uint32(v4[1])<<16 | uint32(v4[2])<<8 | uint32(v4[3])) ^ uint32(a.Port())*0x9e3779b9
	e := &c.ent[(h*0x9e3779b9)>>26]
	if e.text == nil || e.a != a {
		e.a = a
		e.text = appendAddrPort(e.text[:0], a)
	}
	return append(dst, e.text...)
}

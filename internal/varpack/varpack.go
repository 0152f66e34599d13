// Package varpack writes and reads the varints, addresses and strings of
// the records iwarpkit packs to hold fewer octets while a capture is
// decoded: flows' retired conn records (flows/retired.go) and report's
// finished table rows (report/rowpack.go). What it packs lives for one run
// of one process, so the encoding is whatever is smallest and quickest
// for these fields; encoding/binary's varints do the work, and this
// package only adds what both packers need around them: a netip.AddrPort
// (without a zone) and a string interned in a table, and a Reader that
// notes the first octet missing instead of failing at every read.
package varpack

import (
	"encoding/binary"
	"errors"
	"math"
	"net/netip"
	"slices"
)

// ErrCut is the Reader's error: the octets end before what was read, or
// hold a value out of range.
var ErrCut = errors.New("varpack: packed octets cut short or damaged")

// AppendAddrPort appends a, whose address has no zone: the address's
// length (0 for none, 4 or 16), the address and the port (big-endian).
func AppendAddrPort(b []byte, a netip.AddrPort) []byte {
	ip := a.Addr()
	switch {
	case !ip.IsValid():
		return append(b, 0)
	case ip.Is4():
		v := ip.As4()
		b = append(append(b, 4), v[:]...)
	default:
		v := ip.As16()
		b = append(append(b, 16), v[:]...)
	}
	return binary.BigEndian.AppendUint16(b, a.Port())
}

// AppendString appends s as its index in the table strs, which it adds s
// to while the table has fewer than max strings (index times two plus
// one), or else written out (length times two, then the octets).
func AppendString(b []byte, s string, strs *[]string, max int) []byte {
	i := slices.Index(*strs, s)
	if i < 0 && len(*strs) < max {
		*strs = append(*strs, s)
		i = len(*strs) - 1
	}
	if i >= 0 {
		return binary.AppendUvarint(b, uint64(i)<<1|1)
	}
	return append(binary.AppendUvarint(b, uint64(len(s))<<1), s...)
}

// Reader reads packed octets. After the first octet missing (or a value
// out of range) Err is ErrCut and every read returns zero values.
type Reader struct {
	B   []byte
	Err error
}

// Fail notes that the octets do not hold what was to be read.
func (r *Reader) Fail() {
	if r.Err == nil {
		r.Err = ErrCut
	}
	r.B = nil
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	v, n := binary.Uvarint(r.B)
	if n <= 0 {
		r.Fail()
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Varint reads a signed varint.
func (r *Reader) Varint() int64 {
	v, n := binary.Varint(r.B)
	if n <= 0 {
		r.Fail()
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Int reads a signed varint that must fit an int.
func (r *Reader) Int() int {
	v := r.Varint()
	if int64(int(v)) != v {
		r.Fail()
		return 0
	}
	return int(v)
}

// Uint16 reads an unsigned varint that must fit a uint16.
func (r *Reader) Uint16() uint16 {
	v := r.Uvarint()
	if v > math.MaxUint16 {
		r.Fail()
		return 0
	}
	return uint16(v)
}

// Bytes reads n octets, valid until the packed octets change (n zero
// octets once they are missing).
func (r *Reader) Bytes(n int) []byte {
	if n > len(r.B) {
		r.Fail()
		return make([]byte, n)
	}
	v := r.B[:n]
	r.B = r.B[n:]
	return v
}

// AddrPort reads what AppendAddrPort wrote.
func (r *Reader) AddrPort() netip.AddrPort {
	var ip netip.Addr
	switch r.Bytes(1)[0] {
	case 0:
		return netip.AddrPort{}
	case 4:
		ip = netip.AddrFrom4([4]byte(r.Bytes(4)))
	case 16:
		ip = netip.AddrFrom16([16]byte(r.Bytes(16)))
	default:
		r.Fail()
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(r.Bytes(2)))
}

// String reads what AppendString wrote with the table strs.
func (r *Reader) String(strs []string) string {
	v := r.Uvarint()
	if v&1 != 0 {
		if i := v >> 1; i < uint64(len(strs)) {
			return strs[i]
		}
		r.Fail()
		return ""
	}
	if n := v >> 1; n <= uint64(len(r.B)) {
		return string(r.Bytes(int(n)))
	}
	r.Fail()
	return ""
}

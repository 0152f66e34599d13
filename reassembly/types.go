package reassembly

import (
	"net/netip"
	"strconv"
)

// SeqNum is a 32-bit TCP sequence number (RFC 9293 §3.4) compared with
// serial number arithmetic (RFC 1982): of two numbers less than 2^31 apart,
// the one reached by adding a positive distance to the other is the greater,
// across the wrap at 2^32. Never compare SeqNums with < or >.
type SeqNum uint32

// Add returns s advanced by n octets (n may be negative), modulo 2^32.
func (s SeqNum) Add(n int) SeqNum { return s + SeqNum(uint32(n)) }

// Diff returns the signed distance s - o, wrap-safe (RFC 1982): positive
// when s is after o. A distance of exactly 2^31 is undefined in RFC 1982 and
// comes out as -2^31.
func (s SeqNum) Diff(o SeqNum) int32 { return int32(uint32(s) - uint32(o)) }

// Less reports whether s comes before o in serial arithmetic (RFC 1982).
func (s SeqNum) Less(o SeqNum) bool { return s.Diff(o) < 0 }

// Compare returns -1, 0 or +1 as s is before, equal to or after o in serial
// arithmetic (RFC 1982).
func (s SeqNum) Compare(o SeqNum) int {
	switch d := s.Diff(o); {
	case d < 0:
		return -1
	case d > 0:
		return 1
	}
	return 0
}

// String returns the sequence number in decimal.
func (s SeqNum) String() string { return strconv.FormatUint(uint64(s), 10) }

// FlowKey identifies one direction of a TCP connection: data flows from Src
// to Dst. It is comparable and usable as a map key.
type FlowKey struct {
	Src, Dst netip.AddrPort
}

// Reverse returns the key of the opposite direction.
func (k FlowKey) Reverse() FlowKey { return FlowKey{Src: k.Dst, Dst: k.Src} }

// Compare orders keys by Src, then Dst (netip.AddrPort.Compare).
func (k FlowKey) Compare(o FlowKey) int {
	if c := k.Src.Compare(o.Src); c != 0 {
		return c
	}
	return k.Dst.Compare(o.Dst)
}

// String returns "1.2.3.4:5->6.7.8.9:10", with IPv6 addresses in brackets
// ("[2001:db8::1]:5->...").
func (k FlowKey) String() string {
	return string(k.AppendTo(make([]byte, 0, 64)))
}

// AppendTo appends the String form of k to b.
func (k FlowKey) AppendTo(b []byte) []byte {
	b = k.Src.AppendTo(b)
	b = append(b, "->"...)
	return k.Dst.AppendTo(b)
}

// Flags are the TCP control bits the reassembler looks at (RFC 9293 §3.1),
// with the bit values of the TCP header's flags octet, so a capture layer
// can pass that octet masked with FIN|SYN|RST|PSH|ACK.
type Flags uint8

// TCP control bits.
const (
	FIN Flags = 1 << iota
	SYN
	RST
	PSH
	ACK
)

// String returns the set bits as "SYN|ACK", or "0".
func (f Flags) String() string {
	if f == 0 {
		return "0"
	}
	var b []byte
	for i, name := range [...]string{"FIN", "SYN", "RST", "PSH", "ACK"} {
		if f&(1<<i) != 0 {
			if len(b) > 0 {
				b = append(b, '|')
			}
			b = append(b, name...)
		}
	}
	if rest := f &^ (FIN | SYN | RST | PSH | ACK); rest != 0 {
		if len(b) > 0 {
			b = append(b, '|')
		}
		b = append(b, "0x"...)
		b = strconv.AppendUint(b, uint64(rest), 16)
	}
	return string(b)
}

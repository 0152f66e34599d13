package mpa

import (
	"encoding/binary"
	"strconv"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// EnhancedLen is the size of the Enhanced RDMA Connection Establishment
// Data, two big-endian 16-bit words (RFC 6581 §9).
const EnhancedLen = 4

// IRDORDNoNegotiation is the all-ones 14-bit IRD/ORD value: the ULP
// configures IRD/ORD itself, no automatic negotiation (RFC 6581 §9;
// draft-ietf-storm-mpa-peer-connect-01 §8).
const IRDORDNoNegotiation = 0x3FFF

// Masks of the two words of the Enhanced data (RFC 6581 §9).
const (
	enhHigh  = 0x8000 // A in word 0, C in word 1
	enhLow   = 0x4000 // B in word 0, D in word 1
	enhValue = 0x3FFF // IRD in word 0, ORD in word 1
)

// Enhanced is the Enhanced RDMA Connection Establishment Data that starts
// the Private Data of a revision 2 frame with S set (RFC 6581 §9):
//
//	word 0: |A|B| IRD (14 bits) |
//	word 1: |C|D| ORD (14 bits) |
//
// A–D are kept as the raw control flags because their meaning changed
// between draft-ietf-storm-mpa-peer-connect-01 and RFC 6581; use RTR and
// P2P with a FlagMeaning to interpret them. IRD and ORD hold 14 bits;
// IRDORDNoNegotiation means "no automatic negotiation".
type Enhanced struct {
	IRD, ORD   uint16
	A, B, C, D bool
}

// DecodeEnhanced decodes the Enhanced RDMA Connection Establishment Data
// from the first four octets of pd (RFC 6581 §9). It returns
// dissect.ErrTruncated when pd is shorter. It does not allocate.
func DecodeEnhanced(pd []byte) (Enhanced, error) {
	if len(pd) < EnhancedLen {
		return Enhanced{}, dissect.ErrTruncated
	}
	w0 := binary.BigEndian.Uint16(pd[0:2])
	w1 := binary.BigEndian.Uint16(pd[2:4])
	return Enhanced{
		IRD: w0 & enhValue,
		ORD: w1 & enhValue,
		A:   w0&enhHigh != 0,
		B:   w0&enhLow != 0,
		C:   w1&enhHigh != 0,
		D:   w1&enhLow != 0,
	}, nil
}

// AppendEnhanced appends the four-octet wire form of e to dst (RFC 6581
// §9). IRD and ORD are masked to 14 bits.
func AppendEnhanced(dst []byte, e Enhanced) []byte {
	w0 := e.IRD & enhValue
	w1 := e.ORD & enhValue
	if e.A {
		w0 |= enhHigh
	}
	if e.B {
		w0 |= enhLow
	}
	if e.C {
		w1 |= enhHigh
	}
	if e.D {
		w1 |= enhLow
	}
	dst = binary.BigEndian.AppendUint16(dst, w0)
	return binary.BigEndian.AppendUint16(dst, w1)
}

// FlagMeaning selects how the A–D control flags of the Enhanced data are
// read. The published RFC and its draft-01 differ (PROTOCOL.md §B).
type FlagMeaning uint8

const (
	// FlagsRFC6581 reads the flags as RFC 6581 §9 and every deployed
	// implementation (Linux siw, cxgb4, i40iw/irdma, qed) do: A = peer-to-peer
	// model, B = zero-length Send (FPDU) RTR, C = zero-length RDMA Write
	// RTR, D = zero-length RDMA Read RTR. It is the zero value.
	FlagsRFC6581 FlagMeaning = iota
	// FlagsDraft01 reads them as draft-ietf-storm-mpa-peer-connect-01 §8
	// did: A = zero-length ULPDU (Send) RTR, B = zero-length RDMA Write RTR,
	// C = zero-length RDMA Read RTR, D = reserved. The draft has no
	// peer-to-peer flag.
	FlagsDraft01
)

// String returns "rfc6581" or "draft-01".
func (m FlagMeaning) String() string {
	switch m {
	case FlagsRFC6581:
		return "rfc6581"
	case FlagsDraft01:
		return "draft-01"
	}
	return "flagmeaning(" + strconv.Itoa(int(m)) + ")"
}

// RTR returns the set of Ready-to-Receive message types the flags offer (in
// a Request) or accept (in a Reply), read with meaning m (RFC 6581 §9;
// draft-01 §8).
func (e Enhanced) RTR(m FlagMeaning) RTRSet {
	var s RTRSet
	if m == FlagsDraft01 {
		if e.A {
			s |= RTRSend
		}
		if e.B {
			s |= RTRWrite
		}
		if e.C {
			s |= RTRRead
		}
		return s
	}
	if e.B {
		s |= RTRSend
	}
	if e.C {
		s |= RTRWrite
	}
	if e.D {
		s |= RTRRead
	}
	return s
}

// P2P reports whether the peer-to-peer connection model (with an explicit
// RTR message) is requested or accepted. Under RFC 6581 §9 that is flag A;
// draft-01 has no such flag, so there it is true when any RTR type is set.
func (e Enhanced) P2P(m FlagMeaning) bool {
	if m == FlagsDraft01 {
		return e.RTR(m) != 0
	}
	return e.A
}

// RTRSet is a set of Ready-to-Receive message types (RFC 6581 §9): the
// zero-length message the initiator sends after the MPA Reply in the
// peer-to-peer model.
type RTRSet uint8

// The RTR message types.
const (
	// RTRSend is a zero-length FPDU, that is a zero-length RDMA Send.
	RTRSend RTRSet = 1 << iota
	// RTRWrite is a zero-length RDMA Write.
	RTRWrite
	// RTRRead is a zero-length RDMA Read Request.
	RTRRead
)

var rtrNames = [...]string{"send", "write", "read"}

// Has reports whether s holds every type in t.
func (s RTRSet) Has(t RTRSet) bool { return s&t == t }

// Names returns the names of the types in s, in the order send, write,
// read. Unknown bits are left out.
func (s RTRSet) Names() []string {
	var names []string
	for i, name := range rtrNames {
		if s&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return names
}

// String returns the names of the types in s joined by commas, such as
// "send,write", or "none" for the empty set. Unknown bits show as hex.
func (s RTRSet) String() string {
	if s == 0 {
		return "none"
	}
	b := make([]byte, 0, 24)
	for i, name := range rtrNames {
		if s&(1<<i) != 0 {
			if len(b) > 0 {
				b = append(b, ',')
			}
			b = append(b, name...)
		}
	}
	if rest := s &^ (RTRSend | RTRWrite | RTRRead); rest != 0 {
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, "0x"...)
		b = strconv.AppendUint(b, uint64(rest), 16)
	}
	return string(b)
}

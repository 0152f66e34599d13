package mpa

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// Sizes of the MPA Request/Reply frame, RFC 5044 §7.1.1.
const (
	// KeyLen is the length of the Key field that opens a Request or Reply.
	KeyLen = 16
	// HeaderLen is the fixed part of a Request/Reply frame: Key, the flags
	// octet, Rev and PD_Length. Private Data follows it.
	HeaderLen = 20
	// MaxPDLen is the largest PD_Length RFC 5044 §7.1.1 allows. Longer
	// values still decode; Frame.Check reports them.
	MaxPDLen = 512
)

// KeyRequest is the Key of an MPA Request frame, "MPA ID Req Frame"
// (RFC 5044 §7.1.1).
var KeyRequest = [KeyLen]byte{'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e'}

// KeyReply is the Key of an MPA Reply frame, "MPA ID Rep Frame"
// (RFC 5044 §7.1.1). It differs from KeyRequest only at offset 9.
var KeyReply = [KeyLen]byte{'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'p', ' ', 'F', 'r', 'a', 'm', 'e'}

// Bits of the flags octet (offset 16), RFC 5044 §7.1.1 and RFC 6581 §8.
const (
	flagM   = 0x80 // Marker: the sender wants to receive markers
	flagC   = 0x40 // CRC wanted
	flagR   = 0x20 // Reject (meaningful in a Reply)
	flagS   = 0x10 // RFC 6581: Private Data starts with the Enhanced data
	resMask = 0x0F // reserved bits left after S
)

// Offsets inside the frame header.
const (
	offFlags    = 16
	offRev      = 17
	offPDLength = 18
)

// Well-known values of the Rev field (RFC 5044 §7.1.1, RFC 6581 §8).
const (
	// Rev0 is the pre-RFC (RDMA Consortium era) revision.
	Rev0 = 0
	// Rev1 is RFC 5044.
	Rev1 = 1
	// Rev2 is RFC 6581, Enhanced RDMA Connection Establishment.
	Rev2 = 2
)

// Kind tells an MPA Request from an MPA Reply (RFC 5044 §7.1.1).
type Kind uint8

//go:generate go tool stringer -type=Kind -linecomment

// The two kinds of MPA Request/Reply frame.
const (
	KindRequest Kind = 1 // request
	KindReply   Kind = 2 // reply
)

// Frame is a decoded MPA Request or Reply frame (RFC 5044 §7.1.1, with the
// S bit of RFC 6581 §8).
//
// M, C and R are the Marker, CRC and Reject flags. S says the Private Data
// starts with the Enhanced RDMA Connection Establishment Data (RFC 6581
// §8); it is decoded whatever Rev says, because in Rev 1 the same bit is
// reserved and should be zero. Res holds the four remaining reserved bits
// (octet 16 & 0x0F). PD aliases the decoded buffer.
type Frame struct {
	Kind       Kind
	M, C, R, S bool
	Res        uint8
	Rev        uint8
	PDLen      uint16
	PD         []byte
}

// frameView is a zero-copy view of an MPA Request/Reply frame header. The
// caller checks that it holds at least HeaderLen octets.
type frameView []byte

func (v frameView) flags() byte     { return v[offFlags] }
func (v frameView) rev() uint8      { return v[offRev] }
func (v frameView) pdLen() uint16   { return binary.BigEndian.Uint16(v[offPDLength:]) }
func (v frameView) frameLen() int   { return HeaderLen + int(v.pdLen()) }
func (v frameView) pd() []byte      { n := v.frameLen(); return v[HeaderLen:n:n] }
func (v frameView) has(f byte) bool { return v.flags()&f != 0 }

// The keys as big-endian 64-bit halves: the first half is common, the
// second differs ('q' or 'p' at offset 9).
var (
	keyHead     = binary.BigEndian.Uint64(KeyRequest[0:8])
	keyTailReq  = binary.BigEndian.Uint64(KeyRequest[8:16])
	keyTailRepl = binary.BigEndian.Uint64(KeyReply[8:16])
)

// keyKind returns the Kind of a full 16-octet key, or 0 when it is neither.
func keyKind(k []byte) Kind {
	if len(k) < KeyLen || binary.BigEndian.Uint64(k[0:8]) != keyHead {
		return 0
	}
	switch binary.BigEndian.Uint64(k[8:16]) {
	case keyTailReq:
		return KindRequest
	case keyTailRepl:
		return KindReply
	}
	return 0
}

// IsKeyPrefix reports whether b could be the start of an MPA Request or
// Reply key (RFC 5044 §7.1.1): every octet of b matches the Request or the
// Reply key. With 16 or more octets it reports whether the first 16 are a
// key. The empty slice is a prefix of both. A stream decoder uses it to
// decide whether to wait for more octets or to give up on MPA.
func IsKeyPrefix(b []byte) bool {
	if len(b) >= KeyLen {
		return keyKind(b) != 0
	}
	for i, c := range b {
		if c != KeyRequest[i] && c != KeyReply[i] {
			return false
		}
	}
	// The keys differ at one offset only, so matching either key octet by
	// octet means matching one whole key prefix.
	return true
}

// DecodeFrame decodes the MPA Request or Reply frame at the start of b
// (RFC 5044 §7.1.1, RFC 6581 §8) and returns it with n, the number of
// octets it occupies: HeaderLen + PD_Length.
//
// It returns dissect.ErrTruncated when b is shorter than 16 octets but a
// prefix of a key, or holds a whole key but ends before the header or the
// Private Data does; and dissect.ErrNotMPA when b does not start with a key.
// It does not judge field values (see Frame.Check) and does not allocate:
// f.PD aliases b.
func DecodeFrame(b []byte) (f Frame, n int, err error) {
	if len(b) < KeyLen {
		if IsKeyPrefix(b) {
			return Frame{}, 0, dissect.ErrTruncated
		}
		return Frame{}, 0, dissect.ErrNotMPA
	}
	kind := keyKind(b)
	if kind == 0 {
		return Frame{}, 0, dissect.ErrNotMPA
	}
	if len(b) < HeaderLen {
		return Frame{}, 0, dissect.ErrTruncated
	}
	v := frameView(b)
	n = v.frameLen()
	if len(b) < n {
		return Frame{}, 0, dissect.ErrTruncated
	}
	return Frame{
		Kind:  kind,
		M:     v.has(flagM),
		C:     v.has(flagC),
		R:     v.has(flagR),
		S:     v.has(flagS),
		Res:   v.flags() & resMask,
		Rev:   v.rev(),
		PDLen: v.pdLen(),
		PD:    v.pd(),
	}, n, nil
}

// FrameLen returns the length of the MPA Request or Reply whose header b
// starts with, HeaderLen plus PD_Length (RFC 5044 §7.1.1), when b holds the
// whole header; it does not need the Private Data, so it reads the frame of
// a segment the capture cut (snap length).
func FrameLen(b []byte) (n int, ok bool) {
	if len(b) < HeaderLen || keyKind(b) == 0 {
		return 0, false
	}
	return frameView(b).frameLen(), true
}

// AppendFrame appends the wire form of f to dst and returns the extended
// slice (RFC 5044 §7.1.1, RFC 6581 §8).
//
// KindReply writes the Reply key; any other Kind writes the Request key.
// Res is masked to its four bits. PD_Length is written as len(f.PD), not
// f.PDLen; when f.PD is longer than 65535 octets only the first 65535 are
// written. So DecodeFrame(AppendFrame(nil, f)) gives back f whenever f.Kind
// is valid, f.Res <= 0x0F and f.PDLen == len(f.PD).
func AppendFrame(dst []byte, f Frame) []byte {
	if f.Kind == KindReply {
		dst = append(dst, KeyReply[:]...)
	} else {
		dst = append(dst, KeyRequest[:]...)
	}
	flags := f.Res & resMask
	if f.M {
		flags |= flagM
	}
	if f.C {
		flags |= flagC
	}
	if f.R {
		flags |= flagR
	}
	if f.S {
		flags |= flagS
	}
	pd := f.PD
	if len(pd) > 0xFFFF {
		pd = pd[:0xFFFF]
	}
	dst = append(dst, flags, f.Rev)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(pd)))
	return append(dst, pd...)
}

// Enhanced returns the Enhanced RDMA Connection Establishment Data at the
// start of the Private Data and the ULP's private data after it (RFC 6581
// §8, §9). ok is false unless Rev is 2, S is set and PD holds at least the
// four octets of the Enhanced data; then ulpPD is the whole PD.
func (f Frame) Enhanced() (e Enhanced, ulpPD []byte, ok bool) {
	if f.Rev != Rev2 || !f.S || len(f.PD) < EnhancedLen {
		return Enhanced{}, f.PD, false
	}
	e, _ = DecodeEnhanced(f.PD)
	return e, f.PD[EnhancedLen:], true
}

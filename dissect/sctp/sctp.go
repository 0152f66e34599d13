package sctp

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/internal/crc32c"
)

// IPProto is SCTP's IP protocol number.
const IPProto = 132

// Lengths (RFC 9260 §3.1, §3.2, §3.3.1).
const (
	HeaderLen      = 12
	ChunkHeaderLen = 4
	DataHeaderLen  = 16 // chunk header, TSN, stream, SSN, PPID
)

// Header is the SCTP common header (RFC 9260 §3.1): source and
// destination port, verification tag, and the CRC32c checksum as the wire
// carries it (see Checksum).
type Header struct {
	SrcPort, DstPort uint16
	VerificationTag  uint32
	Checksum         uint32
}

// DecodeHeader reads the common header from the start of b.
func DecodeHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, dissect.ErrTruncated
	}
	return Header{
		SrcPort:         binary.BigEndian.Uint16(b[0:2]),
		DstPort:         binary.BigEndian.Uint16(b[2:4]),
		VerificationTag: binary.BigEndian.Uint32(b[4:8]),
		Checksum:        binary.LittleEndian.Uint32(b[8:12]),
	}, nil
}

// AppendHeader appends the 12-octet common header.
func AppendHeader(dst []byte, h Header) []byte {
	dst = binary.BigEndian.AppendUint16(dst, h.SrcPort)
	dst = binary.BigEndian.AppendUint16(dst, h.DstPort)
	dst = binary.BigEndian.AppendUint32(dst, h.VerificationTag)
	return binary.LittleEndian.AppendUint32(dst, h.Checksum)
}

var zero4 [4]byte // the checksum field as Checksum sums it; never written

// Checksum computes the CRC32c of a whole SCTP packet (common header and
// chunks) with the checksum field taken as zero (RFC 9260 §6.8 and
// Appendix A). The CRC is carried least significant octet first, which is
// how Header.Checksum reads it, so a packet is intact when
// Checksum(pkt) == Header.Checksum. It returns 0 for a packet shorter than
// the common header and does not allocate.
func Checksum(pkt []byte) uint32 {
	if len(pkt) < HeaderLen {
		return 0
	}
	c := crc32c.Update(0, pkt[:8])
	c = crc32c.Update(c, zero4[:])
	return crc32c.Update(c, pkt[HeaderLen:])
}

// SetChecksum writes Checksum(pkt) into the checksum field of pkt.
func SetChecksum(pkt []byte) {
	if len(pkt) >= HeaderLen {
		binary.LittleEndian.PutUint32(pkt[8:12], Checksum(pkt))
	}
}

// ChunkType is a chunk's type (RFC 9260 §3.2, IANA "Chunk Types").
type ChunkType uint8

// Chunk types.
const (
	ChunkData             ChunkType = 0
	ChunkInit             ChunkType = 1
	ChunkInitAck          ChunkType = 2
	ChunkSack             ChunkType = 3
	ChunkHeartbeat        ChunkType = 4
	ChunkHeartbeatAck     ChunkType = 5
	ChunkAbort            ChunkType = 6
	ChunkShutdown         ChunkType = 7
	ChunkShutdownAck      ChunkType = 8
	ChunkError            ChunkType = 9
	ChunkCookieEcho       ChunkType = 10
	ChunkCookieAck        ChunkType = 11
	ChunkShutdownComplete ChunkType = 14
	ChunkAuth             ChunkType = 15
	ChunkIData            ChunkType = 64
	ChunkForwardTSN       ChunkType = 192
)

// String returns the chunk type's name as RFC 9260 writes it ("DATA",
// "INIT ACK", ...) or "type(N)".
func (t ChunkType) String() string {
	switch t {
	case ChunkData:
		return "DATA"
	case ChunkInit:
		return "INIT"
	case ChunkInitAck:
		return "INIT ACK"
	case ChunkSack:
		return "SACK"
	case ChunkHeartbeat:
		return "HEARTBEAT"
	case ChunkHeartbeatAck:
		return "HEARTBEAT ACK"
	case ChunkAbort:
		return "ABORT"
	case ChunkShutdown:
		return "SHUTDOWN"
	case ChunkShutdownAck:
		return "SHUTDOWN ACK"
	case ChunkError:
		return "ERROR"
	case ChunkCookieEcho:
		return "COOKIE ECHO"
	case ChunkCookieAck:
		return "COOKIE ACK"
	case ChunkShutdownComplete:
		return "SHUTDOWN COMPLETE"
	case ChunkAuth:
		return "AUTH"
	case ChunkIData:
		return "I-DATA"
	case ChunkForwardTSN:
		return "FORWARD TSN"
	}
	return "type(" + utoa(uint64(t)) + ")"
}

// Chunk is one chunk (RFC 9260 §3.2): type, flags, the length field (which
// counts the 4-octet chunk header and the value, not the padding) and the
// value, aliasing the input.
type Chunk struct {
	Type   ChunkType
	Flags  uint8
	Length uint16
	Value  []byte
}

// NextChunk reads the chunk at b[off:] and returns it with the offset of
// the next chunk (after the padding to a multiple of four octets); callers
// loop while next < len(b). Fewer than four octets left give
// dissect.ErrTruncated and next == len(b). A length field below 4 gives
// dissect.ErrBadLength; one that runs past b gives dissect.ErrTruncated with
// the chunk's header fields filled in and Value cut at the end of b. It
// does not allocate.
func NextChunk(b []byte, off int) (Chunk, int, error) {
	if off < 0 || len(b)-off < ChunkHeaderLen {
		return Chunk{}, len(b), dissect.ErrTruncated
	}
	c := Chunk{Type: ChunkType(b[off]), Flags: b[off+1], Length: binary.BigEndian.Uint16(b[off+2 : off+4])}
	n := int(c.Length)
	if n < ChunkHeaderLen {
		return c, len(b), dissect.ErrBadLength
	}
	if len(b)-off < n {
		c.Value = b[off+ChunkHeaderLen : len(b) : len(b)]
		return c, len(b), dissect.ErrTruncated
	}
	end := off + n
	c.Value = b[off+ChunkHeaderLen : end : end]
	next := off + (n+3)&^3
	if next > len(b) {
		next = len(b) // the last chunk's padding may be missing
	}
	return c, next, nil
}

// AppendChunk appends a chunk with the given type, flags and value, its
// length field set and padding zeros added (RFC 9260 §3.2).
func AppendChunk(dst []byte, t ChunkType, flags uint8, value []byte) []byte {
	dst = append(dst, uint8(t), flags)
	dst = binary.BigEndian.AppendUint16(dst, uint16(ChunkHeaderLen+len(value)))
	dst = append(dst, value...)
	for i := len(value); i%4 != 0; i++ {
		dst = append(dst, 0)
	}
	return dst
}

// DATA chunk flags (RFC 9260 §3.3.1).
const (
	FlagEnd         = 0x01 // E: last fragment of a user message
	FlagBegin       = 0x02 // B: first fragment
	FlagUnordered   = 0x04 // U
	FlagImmediate   = 0x08 // I (RFC 9260, from RFC 7053)
	FlagsUnfragment = FlagBegin | FlagEnd
)

// Data is a DATA chunk (RFC 9260 §3.3.1): the flags U, B, E and I, the
// TSN, stream identifier, stream sequence number, payload protocol
// identifier and the user data (aliasing the input).
type Data struct {
	Flags    uint8
	TSN      uint32
	Stream   uint16
	SSN      uint16
	PPID     uint32
	UserData []byte
}

// Unfragmented reports whether the chunk holds a whole user message (B and
// E both set).
func (d Data) Unfragmented() bool { return d.Flags&FlagsUnfragment == FlagsUnfragment }

// DecodeData reads a DATA chunk. It returns dissect.ErrBadLength when c is
// not a DATA chunk or is shorter than the DATA header.
func DecodeData(c Chunk) (Data, error) {
	if c.Type != ChunkData || len(c.Value) < DataHeaderLen-ChunkHeaderLen {
		return Data{}, dissect.ErrBadLength
	}
	v := c.Value
	return Data{
		Flags:    c.Flags,
		TSN:      binary.BigEndian.Uint32(v[0:4]),
		Stream:   binary.BigEndian.Uint16(v[4:6]),
		SSN:      binary.BigEndian.Uint16(v[6:8]),
		PPID:     binary.BigEndian.Uint32(v[8:12]),
		UserData: v[12:],
	}, nil
}

// AppendData appends d as a DATA chunk, padded.
func AppendData(dst []byte, d Data) []byte {
	dst = append(dst, uint8(ChunkData), d.Flags)
	dst = binary.BigEndian.AppendUint16(dst, uint16(DataHeaderLen+len(d.UserData)))
	dst = binary.BigEndian.AppendUint32(dst, d.TSN)
	dst = binary.BigEndian.AppendUint16(dst, d.Stream)
	dst = binary.BigEndian.AppendUint16(dst, d.SSN)
	dst = binary.BigEndian.AppendUint32(dst, d.PPID)
	dst = append(dst, d.UserData...)
	for i := len(d.UserData); i%4 != 0; i++ {
		dst = append(dst, 0)
	}
	return dst
}

// ParamAdaptationLayer is the Adaptation Layer Indication parameter type
// of INIT and INIT ACK (RFC 5061 §4.2.7), which RFC 5043 uses to announce
// the DDP adaptation.
const ParamAdaptationLayer = 0xC006

// Init is the fixed part of an INIT or INIT ACK chunk (RFC 9260 §3.3.2,
// §3.3.3), and the Adaptation Layer Indication when present.
type Init struct {
	InitiateTag          uint32
	ARwnd                uint32
	OutboundStreams      uint16
	InboundStreams       uint16
	InitialTSN           uint32
	HasAdaptation        bool
	AdaptationIndication uint32
}

// DecodeInit reads an INIT or INIT ACK chunk's fixed part and looks for the
// Adaptation Layer Indication among its parameters.
func DecodeInit(c Chunk) (Init, error) {
	if (c.Type != ChunkInit && c.Type != ChunkInitAck) || len(c.Value) < 16 {
		return Init{}, dissect.ErrBadLength
	}
	v := c.Value
	in := Init{
		InitiateTag:     binary.BigEndian.Uint32(v[0:4]),
		ARwnd:           binary.BigEndian.Uint32(v[4:8]),
		OutboundStreams: binary.BigEndian.Uint16(v[8:10]),
		InboundStreams:  binary.BigEndian.Uint16(v[10:12]),
		InitialTSN:      binary.BigEndian.Uint32(v[12:16]),
	}
	for off := 16; off+4 <= len(v); {
		t := binary.BigEndian.Uint16(v[off:])
		n := int(binary.BigEndian.Uint16(v[off+2:]))
		if n < 4 || off+n > len(v) {
			break
		}
		if t == ParamAdaptationLayer && n >= 8 {
			in.HasAdaptation = true
			in.AdaptationIndication = binary.BigEndian.Uint32(v[off+4:])
		}
		off += (n + 3) &^ 3
	}
	return in, nil
}

// AppendInit appends an INIT (or INIT ACK, by t) chunk with the fixed part
// of in and, when in.HasAdaptation, the Adaptation Layer Indication.
func AppendInit(dst []byte, t ChunkType, in Init) []byte {
	var v [24]byte
	binary.BigEndian.PutUint32(v[0:], in.InitiateTag)
	binary.BigEndian.PutUint32(v[4:], in.ARwnd)
	binary.BigEndian.PutUint16(v[8:], in.OutboundStreams)
	binary.BigEndian.PutUint16(v[10:], in.InboundStreams)
	binary.BigEndian.PutUint32(v[12:], in.InitialTSN)
	n := 16
	if in.HasAdaptation {
		binary.BigEndian.PutUint16(v[16:], ParamAdaptationLayer)
		binary.BigEndian.PutUint16(v[18:], 8)
		binary.BigEndian.PutUint32(v[20:], in.AdaptationIndication)
		n = 24
	}
	return AppendChunk(dst, t, 0, v[:n])
}

func utoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return string(b[i:])
}

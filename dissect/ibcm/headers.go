package ibcm

import (
	"encoding/binary"
	"errors"
	"hash/crc32"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// Errors of this package, returned unwrapped.
var (
	// ErrNotCM: the packet is InfiniBand traffic but not a Communication
	// Management datagram (another BTH opcode or destination QP, or another
	// management class).
	ErrNotCM = errors.New("ibcm: not a CM MAD")
	// ErrUnknownAttribute: a CM MAD whose attribute ID names no message this
	// package decodes (IBA §12.6, Table 104).
	ErrUnknownAttribute = errors.New("ibcm: unknown CM attribute")
)

// Header lengths (IBA Vol. 1 §7.7, §8.3, §9.2, §9.3.3, §13.4.3).
const (
	LRHLen  = 8   // Local Route Header
	GRHLen  = 40  // Global Route Header
	BTHLen  = 12  // Base Transport Header
	DETHLen = 8   // Datagram Extended Transport Header
	ImmLen  = 4   // Immediate Data Extended Transport Header
	MADLen  = 256 // a whole management datagram
	ICRCLen = 4   // invariant CRC
	// UDPPort is the RoCEv2 destination port (IBA Annex A17 §A17.4.1).
	UDPPort = 4791
)

// BTH opcodes used for management datagrams (IBA §9.2.1 Table 38): the
// Unreliable Datagram SEND Only and SEND Only with Immediate.
const (
	OpUDSendOnly    = 0x64
	OpUDSendOnlyImm = 0x65
)

// GSI is the QP number of the General Services Interface, where CM MADs go
// (IBA §13.5.1), and GSIQKey its well-known Q_Key (IBA §13.5.1.1).
const (
	GSI     = 1
	GSIQKey = 0x80010000
)

// LRH is the Local Route Header of a native InfiniBand packet (IBA §7.7):
//
//	octet 0: VL (4) | LVer (4)
//	octet 1: SL (4) | Rsvd (2) | LNH (2)
//	octets 2-3: DLID; octets 4-5: Rsvd (5) | PktLen (11); octets 6-7: SLID
//
// LNH says what follows: 2 = BTH (IBA local), 3 = GRH (IBA global).
type LRH struct {
	VL, LVer uint8
	SL       uint8
	Rsvd2    uint8
	LNH      uint8
	DLID     uint16
	Rsvd5    uint8
	PktLen   uint16 // in 4-octet words, LRH to ICRC/VCRC excluded as IBA says
	SLID     uint16
}

// LNH values (IBA §7.7.5).
const (
	LNHRaw       = 0
	LNHIPNonIBA  = 1
	LNHIBALocal  = 2
	LNHIBAGlobal = 3
)

// DecodeLRH reads a Local Route Header from the start of b.
func DecodeLRH(b []byte) (LRH, error) {
	if len(b) < LRHLen {
		return LRH{}, dissect.ErrTruncated
	}
	return LRH{
		VL: b[0] >> 4, LVer: b[0] & 0x0F,
		SL: b[1] >> 4, Rsvd2: (b[1] >> 2) & 3, LNH: b[1] & 3,
		DLID:   binary.BigEndian.Uint16(b[2:4]),
		Rsvd5:  b[4] >> 3,
		PktLen: binary.BigEndian.Uint16(b[4:6]) & 0x07FF,
		SLID:   binary.BigEndian.Uint16(b[6:8]),
	}, nil
}

// AppendLRH appends the wire form of h (IBA §7.7).
func AppendLRH(dst []byte, h LRH) []byte {
	dst = append(dst, h.VL<<4|h.LVer&0x0F, h.SL<<4|(h.Rsvd2&3)<<2|h.LNH&3)
	dst = binary.BigEndian.AppendUint16(dst, h.DLID)
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.Rsvd5&0x1F)<<11|h.PktLen&0x07FF)
	return binary.BigEndian.AppendUint16(dst, h.SLID)
}

// GRH is the Global Route Header (IBA §8.3), laid out like an IPv6 header:
// IPVer (4) | TClass (8) | FlowLabel (20), PayLen, NxtHdr (0x1B for IBA),
// HopLmt, SGID, DGID.
type GRH struct {
	IPVer     uint8
	TClass    uint8
	FlowLabel uint32
	PayLen    uint16
	NxtHdr    uint8
	HopLmt    uint8
	SGID      [16]byte
	DGID      [16]byte
}

// DecodeGRH reads a Global Route Header from the start of b.
func DecodeGRH(b []byte) (GRH, error) {
	if len(b) < GRHLen {
		return GRH{}, dissect.ErrTruncated
	}
	w := binary.BigEndian.Uint32(b[0:4])
	g := GRH{
		IPVer:     uint8(w >> 28),
		TClass:    uint8(w >> 20),
		FlowLabel: w & 0xFFFFF,
		PayLen:    binary.BigEndian.Uint16(b[4:6]),
		NxtHdr:    b[6],
		HopLmt:    b[7],
	}
	copy(g.SGID[:], b[8:24])
	copy(g.DGID[:], b[24:40])
	return g, nil
}

// AppendGRH appends the wire form of g (IBA §8.3).
func AppendGRH(dst []byte, g GRH) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(g.IPVer&0xF)<<28|uint32(g.TClass)<<20|g.FlowLabel&0xFFFFF)
	dst = binary.BigEndian.AppendUint16(dst, g.PayLen)
	dst = append(dst, g.NxtHdr, g.HopLmt)
	dst = append(dst, g.SGID[:]...)
	return append(dst, g.DGID[:]...)
}

// BTH is the Base Transport Header (IBA §9.2):
//
//	octet 0: OpCode
//	octet 1: SE (0x80) | M (0x40) | PadCnt (0x30) | TVer (0x0F)
//	octets 2-3: P_Key
//	octet 4: FECN (0x80) | BECN (0x40) | Resv6 (0x3F)  (RoCEv2, Annex A17)
//	octets 5-7: DestQP
//	octet 8: A (0x80) | Resv7 (0x7F)
//	octets 9-11: PSN
type BTH struct {
	OpCode     uint8
	SE, M      bool
	PadCnt     uint8
	TVer       uint8
	PKey       uint16
	FECN, BECN bool
	Resv6      uint8
	DestQP     uint32 // 24 bits
	A          bool
	Resv7      uint8
	PSN        uint32 // 24 bits
}

// DecodeBTH reads a Base Transport Header from the start of b.
func DecodeBTH(b []byte) (BTH, error) {
	if len(b) < BTHLen {
		return BTH{}, dissect.ErrTruncated
	}
	return BTH{
		OpCode: b[0],
		SE:     b[1]&0x80 != 0, M: b[1]&0x40 != 0, PadCnt: (b[1] >> 4) & 3, TVer: b[1] & 0x0F,
		PKey: binary.BigEndian.Uint16(b[2:4]),
		FECN: b[4]&0x80 != 0, BECN: b[4]&0x40 != 0, Resv6: b[4] & 0x3F,
		DestQP: be24(b[5:8]),
		A:      b[8]&0x80 != 0, Resv7: b[8] & 0x7F,
		PSN: be24(b[9:12]),
	}, nil
}

// AppendBTH appends the wire form of h (IBA §9.2).
func AppendBTH(dst []byte, h BTH) []byte {
	b1 := (h.PadCnt&3)<<4 | h.TVer&0x0F
	if h.SE {
		b1 |= 0x80
	}
	if h.M {
		b1 |= 0x40
	}
	b4 := h.Resv6 & 0x3F
	if h.FECN {
		b4 |= 0x80
	}
	if h.BECN {
		b4 |= 0x40
	}
	dst = append(dst, h.OpCode, b1)
	dst = binary.BigEndian.AppendUint16(dst, h.PKey)
	dst = append(dst, b4)
	dst = append24(dst, h.DestQP)
	b8 := h.Resv7 & 0x7F
	if h.A {
		b8 |= 0x80
	}
	dst = append(dst, b8)
	return append24(dst, h.PSN)
}

// HasDETH reports whether the opcode's transport carries a DETH: the
// Unreliable Datagram and Reliable Datagram opcodes (IBA §9.2.1: opcode
// prefixes 0b011 and 0b010; RD also has an RDETH first, not decoded here).
func (h BTH) HasDETH() bool { return h.OpCode>>5 == 3 }

// DETH is the Datagram Extended Transport Header (IBA §9.3.3): Q_Key (4),
// a reserved octet, and the source QP (24 bits).
type DETH struct {
	QKey  uint32
	Resv8 uint8
	SrcQP uint32
}

// DecodeDETH reads a DETH from the start of b.
func DecodeDETH(b []byte) (DETH, error) {
	if len(b) < DETHLen {
		return DETH{}, dissect.ErrTruncated
	}
	return DETH{QKey: binary.BigEndian.Uint32(b[0:4]), Resv8: b[4], SrcQP: be24(b[5:8])}, nil
}

// AppendDETH appends the wire form of h (IBA §9.3.3).
func AppendDETH(dst []byte, h DETH) []byte {
	dst = binary.BigEndian.AppendUint32(dst, h.QKey)
	dst = append(dst, h.Resv8)
	return append24(dst, h.SrcQP)
}

// ICRCv2 computes the RoCEv2 invariant CRC (IBA Annex A17 §A17.4.4, as the
// Linux rxe driver computes it): CRC-32 (IEEE 802.3) over eight octets of
// 0xFF standing for the masked LRH, then the IP header with its variant
// fields set to ones (IPv4: type of service, TTL, header checksum; IPv6:
// traffic class, flow label, hop limit), the UDP header with its checksum
// set to ones, and the UDP payload up to the ICRC with octet 4 of the BTH
// (FECN, BECN, reserved) set to ones. The CRC travels least significant
// octet first, so the value to compare is binary.LittleEndian.Uint32 of the
// last four payload octets.
//
// ip is the IP header alone (options included), udp the UDP header and
// payload (ICRC included, which is left out of the sum). ICRCv2 does not
// allocate; it returns 0 when udp is shorter than a UDP header, a BTH and
// an ICRC.
func ICRCv2(ip, udp []byte) uint32 {
	if len(udp) < 8+BTHLen+ICRCLen || len(ip) < 20 {
		return 0
	}
	// s is the CRC register (not inverted); the masked headers go through
	// it octet by octet so that no buffer is needed, the payload through
	// crc32.Update.
	s := uint32(0xFFFFFFFF)
	for i := 0; i < 8; i++ {
		s = crcStep(s, 0xFF)
	}
	v6 := ip[0]>>4 != 4
	for i, c := range ip {
		switch {
		case !v6 && (i == 1 || i == 8 || i == 10 || i == 11): // TOS, TTL, checksum
			c = 0xFF
		case v6 && i == 0:
			c |= 0x0F // traffic class, high nibble
		case v6 && (i >= 1 && i <= 3 || i == 7): // traffic class, flow label, hop limit
			c = 0xFF
		}
		s = crcStep(s, c)
	}
	for i, c := range udp[:8+BTHLen] {
		if i == 6 || i == 7 || i == 8+4 { // UDP checksum, BTH octet 4
			c = 0xFF
		}
		s = crcStep(s, c)
	}
	return crc32.Update(^s, crc32.IEEETable, udp[8+BTHLen:len(udp)-ICRCLen])
}

func crcStep(s uint32, c byte) uint32 { return crc32.IEEETable[byte(s)^c] ^ s>>8 }

func be24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

func append24(dst []byte, v uint32) []byte { return append(dst, byte(v>>16), byte(v>>8), byte(v)) }

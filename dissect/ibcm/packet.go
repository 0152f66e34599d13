package ibcm

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// Packet is one CM datagram as carried by RoCEv2 or native InfiniBand: the
// transport headers, the MAD header and the CM message.
type Packet struct {
	// LRH and GRH: native InfiniBand only (HasLRH; HasGRH when LRH.LNH is
	// 3). RoCEv2 has neither: IP and UDP take their place.
	HasLRH, HasGRH bool
	LRH            LRH
	GRH            GRH
	BTH            BTH
	DETH           DETH
	// Imm is the immediate data of a SEND Only with Immediate (HasImm).
	HasImm bool
	Imm    uint32
	MAD    MAD
	Msg    Message
	// ICRC is the invariant CRC as it appears on the wire, read least
	// significant octet first (see ICRCv2); HasICRC is false when the
	// capture ends before it.
	HasICRC bool
	ICRC    uint32
}

// DecodeRoCE decodes a RoCEv2 UDP payload (IBA Annex A17): BTH, DETH, the
// 256-octet MAD and the ICRC. Traffic that is not a CM MAD (other opcodes,
// another destination QP than 1, another management class) gives
// ErrNotCM with the BTH filled in; a CM attribute that is not a message
// gives ErrUnknownAttribute with the headers filled in. A capture cut
// inside the fixed part of the message gives dissect.ErrTruncated. It does
// not allocate.
func DecodeRoCE(b []byte) (Packet, error) {
	return decodeTransport(Packet{}, b)
}

// DecodeIB decodes a native InfiniBand packet as a link-layer frame holds it
// (pcap LINKTYPE_INFINIBAND): LRH, GRH when LNH says so, then as
// DecodeRoCE. Raw and IP (non-IBA) packets give ErrNotCM.
func DecodeIB(b []byte) (Packet, error) {
	var p Packet
	var err error
	if p.LRH, err = DecodeLRH(b); err != nil {
		return Packet{}, err
	}
	p.HasLRH = true
	b = b[LRHLen:]
	switch p.LRH.LNH {
	case LNHIBALocal:
	case LNHIBAGlobal:
		if p.GRH, err = DecodeGRH(b); err != nil {
			return p, err
		}
		p.HasGRH = true
		b = b[GRHLen:]
	default:
		return p, ErrNotCM
	}
	// A native packet ends in ICRC (4) and VCRC (2); the ICRC is then not
	// last. Drop the VCRC so that the same code finds the ICRC.
	if len(b) >= BTHLen+DETHLen+MADLen+ICRCLen+2 {
		b = b[:len(b)-2]
	}
	return decodeTransport(p, b)
}

func decodeTransport(p Packet, b []byte) (Packet, error) {
	var err error
	if p.BTH, err = DecodeBTH(b); err != nil {
		return p, err
	}
	if p.BTH.OpCode != OpUDSendOnly && p.BTH.OpCode != OpUDSendOnlyImm {
		return p, ErrNotCM
	}
	b = b[BTHLen:]
	if p.DETH, err = DecodeDETH(b); err != nil {
		return p, err
	}
	b = b[DETHLen:]
	if p.BTH.OpCode == OpUDSendOnlyImm {
		if len(b) < ImmLen {
			return p, dissect.ErrTruncated
		}
		p.HasImm, p.Imm = true, binary.BigEndian.Uint32(b)
		b = b[ImmLen:]
	}
	if p.BTH.DestQP != GSI || len(b) >= 2 && b[1] != MgmtClassCM {
		return p, ErrNotCM
	}
	if p.MAD, err = DecodeMAD(b); err != nil {
		return p, err
	}
	if len(b) >= MADLen+ICRCLen {
		p.HasICRC = true
		p.ICRC = binary.LittleEndian.Uint32(b[MADLen:])
	}
	data := b[MADHeaderLen:min(len(b), MADLen)]
	p.Msg, err = DecodeMessage(MsgType(p.MAD.AttributeID), data)
	return p, err
}

// AppendRoCE appends the RoCEv2 UDP payload of p: BTH, DETH, immediate
// data when p.HasImm, the MAD header and message (256 octets), and p.ICRC
// least significant octet first. The caller computes the ICRC with ICRCv2
// once the IP and UDP headers are known, and writes it over the last four
// octets.
func AppendRoCE(dst []byte, p *Packet) []byte {
	dst = AppendBTH(dst, p.BTH)
	dst = AppendDETH(dst, p.DETH)
	if p.HasImm {
		dst = binary.BigEndian.AppendUint32(dst, p.Imm)
	}
	dst = AppendMAD(dst, p.MAD)
	dst = AppendMessage(dst, &p.Msg)
	return binary.LittleEndian.AppendUint32(dst, p.ICRC)
}

// NewCMPacket returns the headers of a CM MAD as Linux sends them over
// RoCEv2 (IBA §13.5.1): BTH UD SEND Only to QP 1 with P_Key 0xFFFF and the
// A bit, DETH with the GSI Q_Key from QP 1, and a MAD header of class 0x07
// version 2, method Send, with the message's attribute ID.
func NewCMPacket(psn uint32, tid uint64, m Message) Packet {
	return Packet{
		BTH:  BTH{OpCode: OpUDSendOnly, PKey: 0xFFFF, DestQP: GSI, A: true, PSN: psn & 0xFFFFFF},
		DETH: DETH{QKey: GSIQKey, SrcQP: GSI},
		MAD: MAD{BaseVersion: BaseVersion, MgmtClass: MgmtClassCM, ClassVersion: CMClassVersion,
			Method: MethodSend, TransactionID: tid, AttributeID: uint16(m.Type)},
		Msg: m,
	}
}

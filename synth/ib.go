package synth

import (
	"encoding/binary"
	"hash/crc32"
	"net/netip"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/dissect/ibcm"
)

// linkTypeInfiniBand is LINKTYPE_INFINIBAND (DLT_INFINIBAND, 247): "Raw
// InfiniBand packets, starting with the Local Routing Header" (libpcap
// pcap/dlt.h). The same value as capture.LinkTypeInfiniBand, which synth
// does not import.
const linkTypeInfiniBand layers.LinkType = 247

// cmCAGUID is the channel adapter GUID of exchange i's initiator or
// responder (the REQ's and REP's Local CA GUID).
func cmCAGUID(i int, initiator bool) uint64 {
	g := uint64(0x00005efffe000100) | uint64(i)<<8 | 1
	if initiator {
		g++
	}
	return g
}

// ibEnds are the native InfiniBand addresses of the two ends of a packet.
type ibEnds struct {
	slid, dlid uint16
	sgid, dgid [16]byte
}

// ibEnds returns the addresses of exchange i for a packet from the
// initiator: the LIDs (defaults 2i+2 and 2i+1) and link-local GIDs made of
// the prefix fe80::/64 and the CA GUID (IBA Vol. 1 §4.1.1).
func (x *CMExchange) ibEnds(i int) ibEnds {
	e := ibEnds{slid: x.InitiatorLID, dlid: x.ResponderLID}
	if e.slid == 0 {
		e.slid = uint16(2*i + 2)
	}
	if e.dlid == 0 {
		e.dlid = uint16(2*i + 1)
	}
	e.sgid, e.dgid = linkLocalGID(cmCAGUID(i, true)), linkLocalGID(cmCAGUID(i, false))
	return e
}

func linkLocalGID(guid uint64) [16]byte {
	var g [16]byte
	g[0], g[1] = 0xfe, 0x80
	binary.BigEndian.PutUint64(g[8:], guid)
	return g
}

// reverse returns the addresses of a packet going the other way.
func (e ibEnds) reverse() ibEnds {
	return ibEnds{slid: e.dlid, dlid: e.slid, sgid: e.dgid, dgid: e.sgid}
}

// gidStrings returns the truth's source and destination: the GIDs in IPv6
// text form with a GRH, null without.
func (e ibEnds) gidStrings(grh bool) (*string, *string) {
	if !grh {
		return nil, nil
	}
	return ptr(netip.AddrFrom16(e.sgid).String()), ptr(netip.AddrFrom16(e.dgid).String())
}

// Native packet constants: the GRH next header value for the IBA transport
// and the hop limit of a routed packet (IBA Vol. 1 §8.3).
const (
	grhNxtHdrIBA = 0x1B
	grhHopLimit  = 64
)

// ibFrame builds a native InfiniBand packet around body (the BTH to the
// ICRC, whose last four octets are overwritten): an LRH (VL 0, SL 0, LNH 2,
// or 3 with a GRH), the GRH when grh is set, body with the ICRC, and the
// VCRC (IBA Vol. 1 §7.7, §8.3, §7.8). PktLen counts the 4-octet words from
// the LRH to the ICRC, the GRH's PayLen the octets from the BTH to the
// ICRC.
func ibFrame(body []byte, e ibEnds, grh bool) []byte {
	hdr := ibcm.LRHLen
	lnh := uint8(ibcm.LNHIBALocal)
	if grh {
		hdr += ibcm.GRHLen
		lnh = ibcm.LNHIBAGlobal
	}
	b := make([]byte, 0, hdr+len(body)+2)
	b = ibcm.AppendLRH(b, ibcm.LRH{LNH: lnh, DLID: e.dlid, SLID: e.slid, PktLen: uint16((hdr + len(body)) / 4)})
	if grh {
		b = ibcm.AppendGRH(b, ibcm.GRH{IPVer: 6, PayLen: uint16(len(body)), NxtHdr: grhNxtHdrIBA, HopLmt: grhHopLimit,
			SGID: e.sgid, DGID: e.dgid})
	}
	b = append(b, body...)
	binary.LittleEndian.PutUint32(b[len(b)-ibcm.ICRCLen:], ibICRC(b[:len(b)-ibcm.ICRCLen], grh))
	return binary.LittleEndian.AppendUint16(b, ibVCRC(b))
}

// ibICRC computes the invariant CRC of a native packet pkt (the LRH to the
// end of the payload, without the ICRC) as IBA Vol. 1 §7.8.1 is described
// in T. Shanley, "InfiniBand Network Architecture", ch. 25 ("Packet
// CRCs"): CRC-32 (the Ethernet polynomial, as for RoCEv2) over the packet
// with the variant fields set to ones: in a local packet the LRH's VL and
// the BTH's Resv8a (octet 4: FECN, BECN, reserved); in a global packet the
// whole LRH (RoCEv2's "eight octets of 0xFF", see ibcm.ICRCv2), the GRH's
// TClass, FlowLabel and HopLmt, and the BTH's Resv8a. It is sent least
// significant octet first, as over RoCEv2.
//
// This is the generator's best reading of the specification; it has not
// been checked against a capture from InfiniBand hardware, and neither
// the decoder nor tshark 4.0 (which displays but does not verify the
// field) checks it.
func ibICRC(pkt []byte, grh bool) uint32 {
	n := ibcm.LRHLen
	if grh {
		n += ibcm.GRHLen
	}
	if len(pkt) < n+ibcm.BTHLen {
		return 0
	}
	var m [ibcm.LRHLen + ibcm.GRHLen + ibcm.BTHLen]byte
	hdr := m[:n+ibcm.BTHLen]
	copy(hdr, pkt)
	if grh {
		for i := range ibcm.LRHLen {
			hdr[i] = 0xFF
		}
		g := hdr[ibcm.LRHLen:]
		g[0] |= 0x0F                        // TClass, high nibble
		g[1], g[2], g[3] = 0xFF, 0xFF, 0xFF // TClass, low nibble; FlowLabel
		g[7] = 0xFF                         // HopLmt
	} else {
		hdr[0] |= 0xF0 // VL
	}
	hdr[n+4] = 0xFF // BTH Resv8a
	return crc32.Update(crc32.ChecksumIEEE(hdr), crc32.IEEETable, pkt[len(hdr):])
}

// ibVCRC computes the variant CRC of a native packet (the LRH to the
// ICRC): CRC-16 with polynomial 0x100B, processed least significant bit
// first (reflected form 0xD008), initial value and final XOR 0xFFFF (IBA
// Vol. 1 §7.8.2; the computation of Endace's dagcrc.c,
// dagcrc_infiniband_vcrc16_r). Sending it least significant octet first
// is the generator's assumption, unchecked like the ICRC.
func ibVCRC(pkt []byte) uint16 {
	c := uint16(0xFFFF)
	for _, b := range pkt {
		c ^= uint16(b)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008
			} else {
				c >>= 1
			}
		}
	}
	return c ^ 0xFFFF
}

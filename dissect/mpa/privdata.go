package mpa

import "encoding/binary"

// Private Data conventions found inside MPA Request/Reply frames. They are
// not part of MPA: a ULP (or the RDMA provider on its behalf) puts them in
// the Private Data, after the Enhanced data when there is any. The decoders
// below recognise them by content; the caller chooses which one to try.

// SMBDLen is the size of the [MS-SMBD] IRD/ORD negotiation block.
const SMBDLen = 8

// smbdMaxDepth bounds a believable IRD or ORD value. Real ones are small
// (Linux rdma_conn_param holds them in a u8); a value above 16 bits means
// the octets are not in the byte order tried.
const smbdMaxDepth = 0xFFFF

// SMBDIRDORD is the "RDMA Provider IRD/ORD Negotiation" block that Windows
// SMB Direct puts in the first eight octets of the Private Data of an MPA
// revision 1 connection ([MS-SMBD] Appendix A, §6.1 "IRD/ORD Negotiate
// Header"): IRD then ORD, each four octets, big-endian, each greater than
// zero. Linux siw calls it struct mpa_v1_smbd_data.
//
// Old Linux cifs.ko clients wrote the two words little-endian (Wireshark
// 4.6 labels that "Broken Little-Endian Legacy IRD/ORD Negotiation");
// LittleEndian records that byte order was detected.
type SMBDIRDORD struct {
	IRD, ORD     uint32
	LittleEndian bool
}

// DecodeSMBD recognises the [MS-SMBD] Appendix A IRD/ORD block at the
// start of pd and decodes it. pd must hold at least SMBDLen octets.
//
// The octets are first read big-endian as the specification says; when both
// values are in 1..65535 that reading wins. Otherwise, when both values
// read little-endian are in 1..65535, the block is the broken little-endian
// variant and LittleEndian is set. Otherwise ok is false: the octets are
// something else. The bound is this package's own heuristic (real IRD/ORD
// values fit a byte); the two readings can never both pass it. It does not
// allocate.
func DecodeSMBD(pd []byte) (s SMBDIRDORD, ok bool) {
	if len(pd) < SMBDLen {
		return SMBDIRDORD{}, false
	}
	ird, ord := binary.BigEndian.Uint32(pd[0:4]), binary.BigEndian.Uint32(pd[4:8])
	if smbdPlausible(ird) && smbdPlausible(ord) {
		return SMBDIRDORD{IRD: ird, ORD: ord}, true
	}
	ird, ord = binary.LittleEndian.Uint32(pd[0:4]), binary.LittleEndian.Uint32(pd[4:8])
	if smbdPlausible(ird) && smbdPlausible(ord) {
		return SMBDIRDORD{IRD: ird, ORD: ord, LittleEndian: true}, true
	}
	return SMBDIRDORD{}, false
}

func smbdPlausible(v uint32) bool { return v >= 1 && v <= smbdMaxDepth }

// AppendSMBD appends the eight-octet [MS-SMBD] Appendix A block for s to
// dst, big-endian unless s.LittleEndian is set (to reproduce the broken
// variant).
func AppendSMBD(dst []byte, s SMBDIRDORD) []byte {
	if s.LittleEndian {
		dst = binary.LittleEndian.AppendUint32(dst, s.IRD)
		return binary.LittleEndian.AppendUint32(dst, s.ORD)
	}
	dst = binary.BigEndian.AppendUint32(dst, s.IRD)
	return binary.BigEndian.AppendUint32(dst, s.ORD)
}

// RPCRDMAFormatID is the RDMA-CM Private Data format identifier of
// RPC-over-RDMA version 1 (RFC 8797 §4; IANA "RDMA-CM Private Data
// Identifiers").
const RPCRDMAFormatID = 0xF6AB0E18

// RPCRDMALen is the size of the RPC-over-RDMA CM private data block.
const RPCRDMALen = 8

// RPCRDMAFlagRemoteInvalidate is the Flags bit by which a peer says it can
// receive Send With Invalidate (RFC 8797 §4; Linux
// RPCRDMA_CMP_F_SND_W_INV_OK).
const RPCRDMAFlagRemoteInvalidate = 0x01

// RPCRDMA is the RPC-over-RDMA version 1 CM private data (RFC 8797 §4):
// the format identifier 0xF6AB0E18, then one octet each of Version, Flags,
// Send Size and Receive Size. The two size octets encode inline thresholds
// in KiB minus one: a raw value v means (v+1)·1024 octets, so 0 is 1 KiB
// and 255 is 256 KiB. RawSend/RawRecv keep the octets; SendSize/RecvSize
// are the decoded sizes in octets.
type RPCRDMA struct {
	Version, Flags     uint8
	SendSize, RecvSize uint32
	RawSend, RawRecv   uint8
}

// DecodeRPCRDMA recognises the RFC 8797 §4 block at the start of pd by its
// format identifier and decodes it. ok is false when pd is shorter than
// RPCRDMALen or starts with another identifier. The Version is not checked
// (1 is the only one defined). It does not allocate.
func DecodeRPCRDMA(pd []byte) (r RPCRDMA, ok bool) {
	if len(pd) < RPCRDMALen || binary.BigEndian.Uint32(pd[0:4]) != RPCRDMAFormatID {
		return RPCRDMA{}, false
	}
	return RPCRDMA{
		Version:  pd[4],
		Flags:    pd[5],
		RawSend:  pd[6],
		RawRecv:  pd[7],
		SendSize: rpcrdmaSize(pd[6]),
		RecvSize: rpcrdmaSize(pd[7]),
	}, true
}

func rpcrdmaSize(raw uint8) uint32 { return (uint32(raw) + 1) << 10 }

// AppendRPCRDMA appends the eight-octet RFC 8797 §4 block for r to dst.
// The size octets come from RawSend and RawRecv; SendSize and RecvSize are
// ignored (use RPCRDMASizeRaw to compute the raw octets from a size).
func AppendRPCRDMA(dst []byte, r RPCRDMA) []byte {
	dst = binary.BigEndian.AppendUint32(dst, RPCRDMAFormatID)
	return append(dst, r.Version, r.Flags, r.RawSend, r.RawRecv)
}

// RPCRDMASizeRaw returns the size octet that encodes an inline threshold of
// size octets (RFC 8797 §4): size/1024 - 1, clamped to 0..255, so sizes
// that are not a multiple of 1 KiB round down.
func RPCRDMASizeRaw(size uint32) uint8 {
	k := size >> 10
	switch {
	case k == 0:
		return 0
	case k > 256:
		return 255
	}
	return uint8(k - 1)
}

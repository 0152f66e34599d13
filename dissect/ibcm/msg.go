package ibcm

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// MsgType is a CM message, named by its MAD attribute ID (IBA §12.6 Table
// 104).
type MsgType uint16

// CM attribute IDs (IBA §12.6 Table 104).
const (
	ClassPortInfo MsgType = 0x0001
	MsgREQ        MsgType = 0x0010
	MsgMRA        MsgType = 0x0011
	MsgREJ        MsgType = 0x0012
	MsgREP        MsgType = 0x0013
	MsgRTU        MsgType = 0x0014
	MsgDREQ       MsgType = 0x0015
	MsgDREP       MsgType = 0x0016
	MsgSIDRREQ    MsgType = 0x0017
	MsgSIDRREP    MsgType = 0x0018
	MsgLAP        MsgType = 0x0019
	MsgAPR        MsgType = 0x001A
)

// msgNames is indexed by MsgType - MsgREQ.
var msgNames = [...]string{"req", "mra", "rej", "rep", "rtu", "dreq", "drep", "sidr_req", "sidr_rep", "lap", "apr"}

// String returns the JSON Lines name: "req", "mra", "rej", "rep", "rtu",
// "dreq", "drep", "sidr_req", "sidr_rep", "lap", "apr", "class_port_info",
// or "attr(0xNNNN)".
func (t MsgType) String() string {
	if t >= MsgREQ && t <= MsgAPR {
		return msgNames[t-MsgREQ]
	}
	if t == ClassPortInfo {
		return "class_port_info"
	}
	return "attr(" + hex16(uint16(t)) + ")"
}

// Known reports whether t is a message this package decodes (REQ to APR).
func (t MsgType) Known() bool { return t >= MsgREQ && t <= MsgAPR }

// Private data offsets and sizes within the 232-octet MAD data (IBA §12.6
// Tables 106-120; the sizes are what the offset leaves of the 232 octets).
const (
	reqPDOff     = 140
	mraPDOff     = 10
	rejPDOff     = 84
	repPDOff     = 36
	rtuPDOff     = 8
	dreqPDOff    = 12
	drepPDOff    = 8
	lapPDOff     = 64
	aprPDOff     = 84
	sidrReqPDOff = 16
	sidrRepPDOff = 96
	// PathLen is the size of one path description in a REQ.
	PathLen = 44
	// ARILen is the size of the REJ's and APR's additional information.
	ARILen = 72
	// ClassPortInfoLen is the size of SIDR_REP's additional information.
	ClassPortInfoLen = 72
)

// PrivateDataOffset returns where t's private data starts in the MAD data
// and its maximum size (IBA §12.6): REQ 140/92, MRA 10/222, REJ 84/148,
// REP 36/196, RTU 8/224, DREQ 12/220, DREP 8/224, LAP 64/168, APR 84/148,
// SIDR_REQ 16/216, SIDR_REP 96/136. It returns 0, 0 for other types.
func PrivateDataOffset(t MsgType) (off, size int) {
	switch t {
	case MsgREQ:
		off = reqPDOff
	case MsgMRA:
		off = mraPDOff
	case MsgREJ:
		off = rejPDOff
	case MsgREP:
		off = repPDOff
	case MsgRTU:
		off = rtuPDOff
	case MsgDREQ:
		off = dreqPDOff
	case MsgDREP:
		off = drepPDOff
	case MsgLAP:
		off = lapPDOff
	case MsgAPR:
		off = aprPDOff
	case MsgSIDRREQ:
		off = sidrReqPDOff
	case MsgSIDRREP:
		off = sidrRepPDOff
	default:
		return 0, 0
	}
	return off, MADDataLen - off
}

// Path is one path description of a REQ (IBA §12.6.5 Table 106, 44
// octets; the alternate path has the same layout).
type Path struct {
	LocalLID, RemoteLID uint16
	LocalGID, RemoteGID [16]byte
	FlowLabel           uint32 // 20 bits
	Resv6               uint8
	PacketRate          uint8 // 6 bits
	TrafficClass        uint8
	HopLimit            uint8
	SL                  uint8 // 4 bits
	SubnetLocal         bool
	Resv3a              uint8
	LocalACKTimeout     uint8 // 5 bits
	Resv3b              uint8 // of which bit 0x04 is the alternate path's SAP Supported
}

func decodePath(b []byte) Path {
	w := binary.BigEndian.Uint32(b[36:40])
	p := Path{
		LocalLID:        binary.BigEndian.Uint16(b[0:2]),
		RemoteLID:       binary.BigEndian.Uint16(b[2:4]),
		FlowLabel:       w >> 12,
		Resv6:           uint8(w>>6) & 0x3F,
		PacketRate:      uint8(w) & 0x3F,
		TrafficClass:    b[40],
		HopLimit:        b[41],
		SL:              b[42] >> 4,
		SubnetLocal:     b[42]&0x08 != 0,
		Resv3a:          b[42] & 7,
		LocalACKTimeout: b[43] >> 3,
		Resv3b:          b[43] & 7,
	}
	copy(p.LocalGID[:], b[4:20])
	copy(p.RemoteGID[:], b[20:36])
	return p
}

func appendPath(dst []byte, p Path) []byte {
	dst = binary.BigEndian.AppendUint16(dst, p.LocalLID)
	dst = binary.BigEndian.AppendUint16(dst, p.RemoteLID)
	dst = append(dst, p.LocalGID[:]...)
	dst = append(dst, p.RemoteGID[:]...)
	dst = binary.BigEndian.AppendUint32(dst, (p.FlowLabel&0xFFFFF)<<12|uint32(p.Resv6&0x3F)<<6|uint32(p.PacketRate&0x3F))
	sl := p.SL<<4 | p.Resv3a&7
	if p.SubnetLocal {
		sl |= 0x08
	}
	return append(dst, p.TrafficClass, p.HopLimit, sl, p.LocalACKTimeout<<3|p.Resv3b&7)
}

// REQ is the fixed part of a connection request (IBA §12.6.5 Table 106).
type REQ struct {
	LocalCommID             uint32
	Resv32                  uint32
	ServiceID               ServiceID
	LocalCAGUID             uint64
	Resv32b                 uint32
	LocalQKey               uint32
	LocalQPN                uint32 // 24 bits
	ResponderResources      uint8
	LocalEECN               uint32 // 24 bits
	InitiatorDepth          uint8
	RemoteEECN              uint32 // 24 bits
	RemoteCMResponseTimeout uint8  // 5 bits
	TransportServiceType    uint8  // 2 bits: 0 RC, 1 UC, 2 RD
	EndToEndFlowControl     bool
	StartingPSN             uint32 // 24 bits
	LocalCMResponseTimeout  uint8  // 5 bits
	RetryCount              uint8  // 3 bits
	PKey                    uint16
	PathMTU                 uint8 // 4 bits
	RDCExists               bool
	RNRRetryCount           uint8 // 3 bits
	MaxCMRetries            uint8 // 4 bits
	SRQ                     bool
	ExtTransportType        uint8 // 3 bits
	Primary, Alternate      Path
}

// MRA is a message receipt acknowledgement (IBA §12.6.6 Table 107).
type MRA struct {
	LocalCommID, RemoteCommID uint32
	MessageMRAed              uint8 // 2 bits: 0 REQ, 1 REP, 2 LAP
	Resv6                     uint8
	ServiceTimeout            uint8 // 5 bits
	Resv3                     uint8
}

// REJ is a reject (IBA §12.6.7 Table 108).
type REJ struct {
	LocalCommID, RemoteCommID uint32
	MessageRejected           uint8 // 2 bits: 0 REQ, 1 REP, 2 no message
	Resv6                     uint8
	RejectInfoLen             uint8 // 7 bits
	Resv1                     uint8
	Reason                    RejectReason
	ARI                       [ARILen]byte
}

// REP is a connection reply (IBA §12.6.8 Table 110).
type REP struct {
	LocalCommID, RemoteCommID uint32
	LocalQKey                 uint32
	LocalQPN                  uint32 // 24 bits
	Resv8a                    uint8
	LocalEECN                 uint32 // 24 bits
	Resv8b                    uint8
	StartingPSN               uint32 // 24 bits
	Resv8c                    uint8
	ResponderResources        uint8
	InitiatorDepth            uint8
	TargetACKDelay            uint8 // 5 bits
	FailoverAccepted          uint8 // 2 bits
	EndToEndFlowControl       bool
	RNRRetryCount             uint8 // 3 bits
	SRQ                       bool
	Resv4                     uint8
	LocalCAGUID               uint64
}

// CommIDs is the fixed part of RTU and DREP (IBA §12.6.9 Table 111,
// §12.6.11 Table 113): the two communication IDs.
type CommIDs struct {
	LocalCommID, RemoteCommID uint32
}

// DREQ is a disconnect request (IBA §12.6.10 Table 112).
type DREQ struct {
	LocalCommID, RemoteCommID uint32
	RemoteQPN                 uint32 // 24 bits (QPN or EECN)
	Resv8                     uint8
}

// LAP is a load alternate path request (IBA §12.8.1 Table 115). Only the
// communication IDs and the remote QPN are decoded; the alternate path
// octets 12-63 are kept as they are in Rest.
type LAP struct {
	LocalCommID, RemoteCommID uint32
	Resv32                    uint32
	Rest                      [lapPDOff - 12]byte
}

// APR is an alternate path response (IBA §12.8.2 Table 116).
type APR struct {
	LocalCommID, RemoteCommID uint32
	AddInfoLen                uint8
	APStatus                  uint8
	Resv16                    uint16
	AddInfo                   [ARILen]byte
}

// SIDRReq is a service ID resolution request (IBA §12.11.1 Table 119).
type SIDRReq struct {
	RequestID uint32
	PKey      uint16
	Resv16    uint16
	ServiceID ServiceID
}

// SIDRRep is a service ID resolution reply (IBA §12.11.2 Table 120).
type SIDRRep struct {
	RequestID     uint32
	Status        SIDRStatus
	AddInfoLen    uint8
	Resv16        uint16
	QPN           uint32 // 24 bits
	Resv8         uint8
	ServiceID     ServiceID
	QKey          uint32
	ClassPortInfo [ClassPortInfoLen]byte
}

// SIDRStatus is the status of a SIDR_REP (IBA §12.11.2 Table 121).
type SIDRStatus uint8

var sidrNames = [...]string{"success", "unsupported_service_id", "rejected", "no_qp", "redirect", "unsupported_version"}

// String returns the status name ("success", "rejected", ...) or
// "status(N)".
func (s SIDRStatus) String() string {
	if int(s) < len(sidrNames) {
		return sidrNames[s]
	}
	return "status(" + itoa(int(s)) + ")"
}

// Message is one decoded CM message: Type says which of the structs is
// filled in (RTU and DREP use Comm; MRA, LAP and APR their own). The
// others are zero. PrivateData is the message's private data area as
// captured (it aliases the input; at most the size PrivateDataOffset
// gives, less when the capture is short).
type Message struct {
	Type    MsgType
	REQ     REQ
	MRA     MRA
	REJ     REJ
	REP     REP
	Comm    CommIDs
	DREQ    DREQ
	LAP     LAP
	APR     APR
	SIDRReq SIDRReq
	SIDRRep SIDRRep

	PrivateData []byte
}

// CommIDs returns the message's local and remote communication IDs (for
// SIDR_REQ and SIDR_REP the request ID and 0).
func (m *Message) CommIDs() (local, remote uint32) {
	switch m.Type {
	case MsgREQ:
		return m.REQ.LocalCommID, 0
	case MsgMRA:
		return m.MRA.LocalCommID, m.MRA.RemoteCommID
	case MsgREJ:
		return m.REJ.LocalCommID, m.REJ.RemoteCommID
	case MsgREP:
		return m.REP.LocalCommID, m.REP.RemoteCommID
	case MsgRTU, MsgDREP:
		return m.Comm.LocalCommID, m.Comm.RemoteCommID
	case MsgDREQ:
		return m.DREQ.LocalCommID, m.DREQ.RemoteCommID
	case MsgLAP:
		return m.LAP.LocalCommID, m.LAP.RemoteCommID
	case MsgAPR:
		return m.APR.LocalCommID, m.APR.RemoteCommID
	case MsgSIDRREQ:
		return m.SIDRReq.RequestID, 0
	case MsgSIDRREP:
		return m.SIDRRep.RequestID, 0
	}
	return 0, 0
}

// ServiceID returns the service ID of a REQ, SIDR_REQ or SIDR_REP.
func (m *Message) ServiceID() (ServiceID, bool) {
	switch m.Type {
	case MsgREQ:
		return m.REQ.ServiceID, true
	case MsgSIDRREQ:
		return m.SIDRReq.ServiceID, true
	case MsgSIDRREP:
		return m.SIDRRep.ServiceID, true
	}
	return 0, false
}

// DecodeMessage decodes the CM message of type t from data, the MAD data
// area (the 232 octets after the common MAD header). The fixed part must be
// present (dissect.ErrTruncated otherwise, with only Type set); the private
// data may be cut short by the capture. An attribute that is not a message
// (ClassPortInfo, vendor attributes) gives ErrUnknownAttribute with only
// Type set. DecodeMessage does not allocate.
func DecodeMessage(t MsgType, data []byte) (Message, error) {
	m := Message{Type: t}
	off, size := PrivateDataOffset(t)
	if size == 0 {
		return m, ErrUnknownAttribute
	}
	if len(data) < off {
		return m, dissect.ErrTruncated
	}
	b := data
	switch t {
	case MsgREQ:
		r := &m.REQ
		r.LocalCommID = binary.BigEndian.Uint32(b[0:4])
		r.Resv32 = binary.BigEndian.Uint32(b[4:8])
		r.ServiceID = ServiceID(binary.BigEndian.Uint64(b[8:16]))
		r.LocalCAGUID = binary.BigEndian.Uint64(b[16:24])
		r.Resv32b = binary.BigEndian.Uint32(b[24:28])
		r.LocalQKey = binary.BigEndian.Uint32(b[28:32])
		r.LocalQPN, r.ResponderResources = be24(b[32:35]), b[35]
		r.LocalEECN, r.InitiatorDepth = be24(b[36:39]), b[39]
		r.RemoteEECN = be24(b[40:43])
		r.RemoteCMResponseTimeout = b[43] >> 3
		r.TransportServiceType = (b[43] >> 1) & 3
		r.EndToEndFlowControl = b[43]&1 != 0
		r.StartingPSN = be24(b[44:47])
		r.LocalCMResponseTimeout, r.RetryCount = b[47]>>3, b[47]&7
		r.PKey = binary.BigEndian.Uint16(b[48:50])
		r.PathMTU, r.RDCExists, r.RNRRetryCount = b[50]>>4, b[50]&0x08 != 0, b[50]&7
		r.MaxCMRetries, r.SRQ, r.ExtTransportType = b[51]>>4, b[51]&0x08 != 0, b[51]&7
		r.Primary = decodePath(b[52:96])
		r.Alternate = decodePath(b[96:140])
	case MsgMRA:
		r := &m.MRA
		r.LocalCommID, r.RemoteCommID = binary.BigEndian.Uint32(b[0:4]), binary.BigEndian.Uint32(b[4:8])
		r.MessageMRAed, r.Resv6 = b[8]>>6, b[8]&0x3F
		r.ServiceTimeout, r.Resv3 = b[9]>>3, b[9]&7
	case MsgREJ:
		r := &m.REJ
		r.LocalCommID, r.RemoteCommID = binary.BigEndian.Uint32(b[0:4]), binary.BigEndian.Uint32(b[4:8])
		r.MessageRejected, r.Resv6 = b[8]>>6, b[8]&0x3F
		r.RejectInfoLen, r.Resv1 = b[9]>>1, b[9]&1
		r.Reason = RejectReason(binary.BigEndian.Uint16(b[10:12]))
		copy(r.ARI[:], b[12:84])
	case MsgREP:
		r := &m.REP
		r.LocalCommID, r.RemoteCommID = binary.BigEndian.Uint32(b[0:4]), binary.BigEndian.Uint32(b[4:8])
		r.LocalQKey = binary.BigEndian.Uint32(b[8:12])
		r.LocalQPN, r.Resv8a = be24(b[12:15]), b[15]
		r.LocalEECN, r.Resv8b = be24(b[16:19]), b[19]
		r.StartingPSN, r.Resv8c = be24(b[20:23]), b[23]
		r.ResponderResources, r.InitiatorDepth = b[24], b[25]
		r.TargetACKDelay, r.FailoverAccepted, r.EndToEndFlowControl = b[26]>>3, (b[26]>>1)&3, b[26]&1 != 0
		r.RNRRetryCount, r.SRQ, r.Resv4 = b[27]>>5, b[27]&0x10 != 0, b[27]&0x0F
		r.LocalCAGUID = binary.BigEndian.Uint64(b[28:36])
	case MsgRTU, MsgDREP:
		m.Comm = CommIDs{binary.BigEndian.Uint32(b[0:4]), binary.BigEndian.Uint32(b[4:8])}
	case MsgDREQ:
		r := &m.DREQ
		r.LocalCommID, r.RemoteCommID = binary.BigEndian.Uint32(b[0:4]), binary.BigEndian.Uint32(b[4:8])
		r.RemoteQPN, r.Resv8 = be24(b[8:11]), b[11]
	case MsgLAP:
		r := &m.LAP
		r.LocalCommID, r.RemoteCommID = binary.BigEndian.Uint32(b[0:4]), binary.BigEndian.Uint32(b[4:8])
		r.Resv32 = binary.BigEndian.Uint32(b[8:12])
		copy(r.Rest[:], b[12:lapPDOff])
	case MsgAPR:
		r := &m.APR
		r.LocalCommID, r.RemoteCommID = binary.BigEndian.Uint32(b[0:4]), binary.BigEndian.Uint32(b[4:8])
		r.AddInfoLen, r.APStatus = b[8], b[9]
		r.Resv16 = binary.BigEndian.Uint16(b[10:12])
		copy(r.AddInfo[:], b[12:84])
	case MsgSIDRREQ:
		r := &m.SIDRReq
		r.RequestID = binary.BigEndian.Uint32(b[0:4])
		r.PKey, r.Resv16 = binary.BigEndian.Uint16(b[4:6]), binary.BigEndian.Uint16(b[6:8])
		r.ServiceID = ServiceID(binary.BigEndian.Uint64(b[8:16]))
	case MsgSIDRREP:
		r := &m.SIDRRep
		r.RequestID = binary.BigEndian.Uint32(b[0:4])
		r.Status, r.AddInfoLen = SIDRStatus(b[4]), b[5]
		r.Resv16 = binary.BigEndian.Uint16(b[6:8])
		r.QPN, r.Resv8 = be24(b[8:11]), b[11]
		r.ServiceID = ServiceID(binary.BigEndian.Uint64(b[12:20]))
		r.QKey = binary.BigEndian.Uint32(b[20:24])
		copy(r.ClassPortInfo[:], b[24:96])
	}
	end := min(len(data), off+size)
	m.PrivateData = data[off:end:end]
	return m, nil
}

// AppendMessage appends the 232-octet MAD data of m: its fixed part, then
// m.PrivateData padded with zeros (or cut) to the private data size of
// m.Type. For a type DecodeMessage does not know it appends nothing.
func AppendMessage(dst []byte, m *Message) []byte {
	_, size := PrivateDataOffset(m.Type)
	if size == 0 {
		return dst
	}
	start := len(dst)
	switch m.Type {
	case MsgREQ:
		r := &m.REQ
		dst = binary.BigEndian.AppendUint32(dst, r.LocalCommID)
		dst = binary.BigEndian.AppendUint32(dst, r.Resv32)
		dst = binary.BigEndian.AppendUint64(dst, uint64(r.ServiceID))
		dst = binary.BigEndian.AppendUint64(dst, r.LocalCAGUID)
		dst = binary.BigEndian.AppendUint32(dst, r.Resv32b)
		dst = binary.BigEndian.AppendUint32(dst, r.LocalQKey)
		dst = append(append24(dst, r.LocalQPN), r.ResponderResources)
		dst = append(append24(dst, r.LocalEECN), r.InitiatorDepth)
		dst = append(append24(dst, r.RemoteEECN), r.RemoteCMResponseTimeout<<3|(r.TransportServiceType&3)<<1|b2u(r.EndToEndFlowControl))
		dst = append(append24(dst, r.StartingPSN), r.LocalCMResponseTimeout<<3|r.RetryCount&7)
		dst = binary.BigEndian.AppendUint16(dst, r.PKey)
		dst = append(dst, r.PathMTU<<4|b2u(r.RDCExists)<<3|r.RNRRetryCount&7, r.MaxCMRetries<<4|b2u(r.SRQ)<<3|r.ExtTransportType&7)
		dst = appendPath(dst, r.Primary)
		dst = appendPath(dst, r.Alternate)
	case MsgMRA:
		r := &m.MRA
		dst = binary.BigEndian.AppendUint32(dst, r.LocalCommID)
		dst = binary.BigEndian.AppendUint32(dst, r.RemoteCommID)
		dst = append(dst, r.MessageMRAed<<6|r.Resv6&0x3F, r.ServiceTimeout<<3|r.Resv3&7)
	case MsgREJ:
		r := &m.REJ
		dst = binary.BigEndian.AppendUint32(dst, r.LocalCommID)
		dst = binary.BigEndian.AppendUint32(dst, r.RemoteCommID)
		dst = append(dst, r.MessageRejected<<6|r.Resv6&0x3F, r.RejectInfoLen<<1|r.Resv1&1)
		dst = binary.BigEndian.AppendUint16(dst, uint16(r.Reason))
		dst = append(dst, r.ARI[:]...)
	case MsgREP:
		r := &m.REP
		dst = binary.BigEndian.AppendUint32(dst, r.LocalCommID)
		dst = binary.BigEndian.AppendUint32(dst, r.RemoteCommID)
		dst = binary.BigEndian.AppendUint32(dst, r.LocalQKey)
		dst = append(append24(dst, r.LocalQPN), r.Resv8a)
		dst = append(append24(dst, r.LocalEECN), r.Resv8b)
		dst = append(append24(dst, r.StartingPSN), r.Resv8c)
		dst = append(dst, r.ResponderResources, r.InitiatorDepth,
			r.TargetACKDelay<<3|(r.FailoverAccepted&3)<<1|b2u(r.EndToEndFlowControl),
			r.RNRRetryCount<<5|b2u(r.SRQ)<<4|r.Resv4&0x0F)
		dst = binary.BigEndian.AppendUint64(dst, r.LocalCAGUID)
	case MsgRTU, MsgDREP:
		dst = binary.BigEndian.AppendUint32(dst, m.Comm.LocalCommID)
		dst = binary.BigEndian.AppendUint32(dst, m.Comm.RemoteCommID)
	case MsgDREQ:
		r := &m.DREQ
		dst = binary.BigEndian.AppendUint32(dst, r.LocalCommID)
		dst = binary.BigEndian.AppendUint32(dst, r.RemoteCommID)
		dst = append(append24(dst, r.RemoteQPN), r.Resv8)
	case MsgLAP:
		r := &m.LAP
		dst = binary.BigEndian.AppendUint32(dst, r.LocalCommID)
		dst = binary.BigEndian.AppendUint32(dst, r.RemoteCommID)
		dst = binary.BigEndian.AppendUint32(dst, r.Resv32)
		dst = append(dst, r.Rest[:]...)
	case MsgAPR:
		r := &m.APR
		dst = binary.BigEndian.AppendUint32(dst, r.LocalCommID)
		dst = binary.BigEndian.AppendUint32(dst, r.RemoteCommID)
		dst = append(dst, r.AddInfoLen, r.APStatus)
		dst = binary.BigEndian.AppendUint16(dst, r.Resv16)
		dst = append(dst, r.AddInfo[:]...)
	case MsgSIDRREQ:
		r := &m.SIDRReq
		dst = binary.BigEndian.AppendUint32(dst, r.RequestID)
		dst = binary.BigEndian.AppendUint16(dst, r.PKey)
		dst = binary.BigEndian.AppendUint16(dst, r.Resv16)
		dst = binary.BigEndian.AppendUint64(dst, uint64(r.ServiceID))
	case MsgSIDRREP:
		r := &m.SIDRRep
		dst = binary.BigEndian.AppendUint32(dst, r.RequestID)
		dst = append(dst, uint8(r.Status), r.AddInfoLen)
		dst = binary.BigEndian.AppendUint16(dst, r.Resv16)
		dst = append(append24(dst, r.QPN), r.Resv8)
		dst = binary.BigEndian.AppendUint64(dst, uint64(r.ServiceID))
		dst = binary.BigEndian.AppendUint32(dst, r.QKey)
		dst = append(dst, r.ClassPortInfo[:]...)
	}
	pd := m.PrivateData
	if len(pd) > size {
		pd = pd[:size]
	}
	dst = append(dst, pd...)
	for len(dst)-start < MADDataLen {
		dst = append(dst, 0)
	}
	return dst
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func itoa(v int) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := v < 0
	if neg {
		v = -v
	}
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

package ibcm

import (
	"encoding/binary"
	"net/netip"
	"strconv"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// Sizes of the private data headers.
const (
	// IPCMHeaderLen is the size of the IP CM header (IBA Annex A11; Linux
	// struct cma_hdr).
	IPCMHeaderLen = 36
	// HelloLen is the size of the seed 002 Hello message.
	HelloLen = 36
	// HelloAckLen is the size of the seed 002 HelloAck message.
	HelloAckLen = 4
)

// PDKind says how a message's private data is laid out.
type PDKind uint8

// Private data layouts.
const (
	// PDRaw: consumer private data only.
	PDRaw PDKind = iota
	// PDIPCM: the IP CM header of IBA Annex A11, then consumer data (REQ
	// and SIDR_REQ of an IP-based service ID).
	PDIPCM
	// PDHello: the seed 002 Hello message, then consumer data (REQ of a
	// service ID in seed 002's range).
	PDHello
	// PDHelloAck: the seed 002 HelloAck, then consumer data (REP answering
	// such a REQ).
	PDHelloAck
)

// String returns "raw", "ip_cm", "hello" or "hello_ack".
func (k PDKind) String() string {
	switch k {
	case PDIPCM:
		return "ip_cm"
	case PDHello:
		return "hello"
	case PDHelloAck:
		return "hello_ack"
	}
	return "raw"
}

// PDKindFor returns the private data layout of a message of type t whose
// exchange has service ID sid (the REQ's, or the SIDR_REQ's): REQ and
// SIDR_REQ of an IP-based service ID carry the IP CM header (Annex A11),
// a REQ in seed 002's range (port space 0x0102) the Hello message and the
// REP answering it the HelloAck; everything else is consumer data.
func PDKindFor(t MsgType, sid ServiceID) PDKind {
	ps, _, ok := sid.IP()
	if !ok {
		return PDRaw
	}
	switch {
	case ps == PortSpaceHello && t == MsgREQ:
		return PDHello
	case ps == PortSpaceHello && t == MsgREP:
		return PDHelloAck
	case ps == PortSpaceHello:
		return PDRaw
	case (t == MsgREQ || t == MsgSIDRREQ) && (ps == PortSpaceTCP || ps == PortSpaceUDP || ps == PortSpaceIB):
		return PDIPCM
	}
	return PDRaw
}

// IPCMHeader is the IP CM header at the start of a REQ's private data (IBA
// Annex A11 "RDMA IP CM Service"; Linux struct cma_hdr; Wireshark's "IP CM
// Private Data"):
//
//	octet 0: MajV (4) | MinV (4)         0.0
//	octet 1: IPV (4) | reserved (4)      4 or 6
//	octets 2-3: the active side's source port
//	octets 4-19: source address, 20-35: destination address (IPv4 in the
//	last four octets, the twelve before them zero)
type IPCMHeader struct {
	MajV, MinV uint8
	IPV        uint8
	Rsvd       uint8
	Port       uint16
	Src, Dst   [16]byte
}

// DecodeIPCMHeader reads the IP CM header from the start of pd.
func DecodeIPCMHeader(pd []byte) (IPCMHeader, error) {
	if len(pd) < IPCMHeaderLen {
		return IPCMHeader{}, dissect.ErrTruncated
	}
	h := IPCMHeader{MajV: pd[0] >> 4, MinV: pd[0] & 15, IPV: pd[1] >> 4, Rsvd: pd[1] & 15,
		Port: binary.BigEndian.Uint16(pd[2:4])}
	copy(h.Src[:], pd[4:20])
	copy(h.Dst[:], pd[20:36])
	return h, nil
}

// AppendIPCMHeader appends the 36-octet wire form of h.
func AppendIPCMHeader(dst []byte, h IPCMHeader) []byte {
	dst = append(dst, h.MajV<<4|h.MinV&15, h.IPV<<4|h.Rsvd&15)
	dst = binary.BigEndian.AppendUint16(dst, h.Port)
	dst = append(dst, h.Src[:]...)
	return append(dst, h.Dst[:]...)
}

// MakeIPCMHeader returns the header Linux rdma_cm writes for a connection
// from src to dst: version 0.0, IPV from the address family, port =
// src's port.
func MakeIPCMHeader(src, dst netip.AddrPort) IPCMHeader {
	h := IPCMHeader{IPV: 6, Port: src.Port()}
	if src.Addr().Is4() {
		h.IPV = 4
	}
	h.Src, h.Dst = addrField(src.Addr()), addrField(dst.Addr())
	return h
}

// SrcAddr and DstAddr return the addresses as IPV says: IPv4 from the last
// four octets when IPV is 4, the sixteen octets otherwise.
func (h IPCMHeader) SrcAddr() netip.Addr { return fieldAddr(h.Src, h.IPV) }

// DstAddr returns the destination address (see SrcAddr).
func (h IPCMHeader) DstAddr() netip.Addr { return fieldAddr(h.Dst, h.IPV) }

// Check reports what IBA Annex A11 does not define: a version other than 0.0 (cm.ip_cm_version) and an
// IP version other than 4 or 6 (cm.ip_cm_ipv).
func (h IPCMHeader) Check(dst []dissect.Finding) []dissect.Finding {
	if h.MajV != 0 || h.MinV != 0 {
		dst = append(dst, dissect.Finding{Severity: dissect.SeverityWarning, Code: "cm.ip_cm_version",
			Msg: "IP CM header version " + strconv.Itoa(int(h.MajV)) + "." + strconv.Itoa(int(h.MinV)) +
				" is not 0.0, the only version defined", Ref: "IBA Annex A11"})
	}
	if h.IPV != 4 && h.IPV != 6 {
		dst = append(dst, dissect.Finding{Severity: dissect.SeverityWarning, Code: "cm.ip_cm_ipv",
			Msg: "IP CM header IP version " + strconv.Itoa(int(h.IPV)) + " is neither 4 nor 6", Ref: "IBA Annex A11"})
	}
	return dst
}

// Hello is the seed 002 Hello message at the start of a REQ's private data
// (36 octets):
//
//	octet 0: MajV (4) | MinV (4)        both 1
//	octet 1: IPV (4) | Cap (4)          Cap bit 0 INVALIDATE_CAP, bit 1 ZBVA_CAP
//	octets 2-3: reserved
//	octets 4-19: Src IP, 20-35: Dst IP  (IPv4 in bits 31-0, bits 127-32 zero)
//
// The seed numbers the Cap bits by position 0 to 3 without saying which end
// is 0; Invalidate and ZBVA read them as the values 0x1 and 0x2 of the
// nibble (the two reserved bits are 0x4 and 0x8).
type Hello struct {
	MajV, MinV uint8
	IPV        uint8
	Cap        uint8
	Rsvd       uint16
	Src, Dst   [16]byte
}

// Capability bits of Hello.Cap and HelloAck.Cap (seed 002).
const (
	CapInvalidate = 0x1
	CapZBVA       = 0x2
)

// HelloVersion is the only MajV and MinV seed 002 defines.
const HelloVersion = 1

// DecodeHello reads the Hello message from the start of pd.
func DecodeHello(pd []byte) (Hello, error) {
	if len(pd) < HelloLen {
		return Hello{}, dissect.ErrTruncated
	}
	h := Hello{MajV: pd[0] >> 4, MinV: pd[0] & 15, IPV: pd[1] >> 4, Cap: pd[1] & 15,
		Rsvd: binary.BigEndian.Uint16(pd[2:4])}
	copy(h.Src[:], pd[4:20])
	copy(h.Dst[:], pd[20:36])
	return h, nil
}

// AppendHello appends the 36-octet wire form of h.
func AppendHello(dst []byte, h Hello) []byte {
	dst = append(dst, h.MajV<<4|h.MinV&15, h.IPV<<4|h.Cap&15)
	dst = binary.BigEndian.AppendUint16(dst, h.Rsvd)
	dst = append(dst, h.Src[:]...)
	return append(dst, h.Dst[:]...)
}

// MakeHello returns a version 1.1 Hello for a connection from src to dst
// with the capabilities cap.
func MakeHello(src, dst netip.Addr, cap uint8) Hello {
	h := Hello{MajV: HelloVersion, MinV: HelloVersion, IPV: 6, Cap: cap & 15}
	if src.Is4() {
		h.IPV = 4
	}
	h.Src, h.Dst = addrField(src), addrField(dst)
	return h
}

// Invalidate reports INVALIDATE_CAP: the sender accepts Send with
// Invalidate.
func (h Hello) Invalidate() bool { return h.Cap&CapInvalidate != 0 }

// ZBVA reports ZBVA_CAP: the sender accepts zero-based virtual addresses.
func (h Hello) ZBVA() bool { return h.Cap&CapZBVA != 0 }

// SrcAddr returns the source address as IPV says.
func (h Hello) SrcAddr() netip.Addr { return fieldAddr(h.Src, h.IPV) }

// DstAddr returns the destination address as IPV says.
func (h Hello) DstAddr() netip.Addr { return fieldAddr(h.Dst, h.IPV) }

// Check applies seed 002's rules: the accepting peer rejects a MajV other
// than 1 (cm.hello_majv) and an IPV other than 4 or 6 (cm.hello_ipv); MinV
// should be 1 but is not a reason to reject (cm.hello_minv); with IPV 4,
// address bits 127-32 shall be zero (cm.hello_addr_upper).
func (h Hello) Check(dst []dissect.Finding) []dissect.Finding {
	const ref = "seed 002 (openib-general Hello/HelloAck proposal)"
	if h.MajV != HelloVersion {
		dst = append(dst, dissect.Finding{Severity: dissect.SeverityWarning, Code: "cm.hello_majv",
			Msg: "Hello MajV " + strconv.Itoa(int(h.MajV)) + " is not 1: the accepting peer shall reject the connection", Ref: ref})
	} else if h.MinV != HelloVersion {
		dst = append(dst, dissect.Finding{Severity: dissect.SeverityNote, Code: "cm.hello_minv",
			Msg: "Hello MinV " + strconv.Itoa(int(h.MinV)) + " is not 1 (not a reason to reject)", Ref: ref})
	}
	switch h.IPV {
	case 4:
		if !upperZero(h.Src) || !upperZero(h.Dst) {
			dst = append(dst, dissect.Finding{Severity: dissect.SeverityWarning, Code: "cm.hello_addr_upper",
				Msg: "Hello with IPV 4 has non-zero address bits 127-32", Ref: ref})
		}
	case 6:
	default:
		dst = append(dst, dissect.Finding{Severity: dissect.SeverityWarning, Code: "cm.hello_ipv",
			Msg: "Hello IPV " + strconv.Itoa(int(h.IPV)) + " is neither 4 nor 6: the accepting peer shall reject the connection", Ref: ref})
	}
	return dst
}

// HelloAck is the seed 002 HelloAck at the start of a REP's private data
// (4 octets): MajV (4) | MinV (4), reserved (4) | Cap (4), reserved (16).
type HelloAck struct {
	MajV, MinV uint8
	Rsvd4      uint8
	Cap        uint8
	Rsvd16     uint16
}

// DecodeHelloAck reads the HelloAck from the start of pd.
func DecodeHelloAck(pd []byte) (HelloAck, error) {
	if len(pd) < HelloAckLen {
		return HelloAck{}, dissect.ErrTruncated
	}
	return HelloAck{MajV: pd[0] >> 4, MinV: pd[0] & 15, Rsvd4: pd[1] >> 4, Cap: pd[1] & 15,
		Rsvd16: binary.BigEndian.Uint16(pd[2:4])}, nil
}

// AppendHelloAck appends the 4-octet wire form of h.
func AppendHelloAck(dst []byte, h HelloAck) []byte {
	dst = append(dst, h.MajV<<4|h.MinV&15, h.Rsvd4<<4|h.Cap&15)
	return binary.BigEndian.AppendUint16(dst, h.Rsvd16)
}

// Invalidate reports INVALIDATE_CAP.
func (h HelloAck) Invalidate() bool { return h.Cap&CapInvalidate != 0 }

// ZBVA reports ZBVA_CAP.
func (h HelloAck) ZBVA() bool { return h.Cap&CapZBVA != 0 }

// Check applies seed 002's rule that a HelloAck MajV other than 1 makes
// the connecting peer reject (cm.hello_ack_majv).
func (h HelloAck) Check(dst []dissect.Finding) []dissect.Finding {
	if h.MajV != HelloVersion {
		dst = append(dst, dissect.Finding{Severity: dissect.SeverityWarning, Code: "cm.hello_ack_majv",
			Msg: "HelloAck MajV " + strconv.Itoa(int(h.MajV)) + " is not 1", Ref: "seed 002 (openib-general Hello/HelloAck proposal)"})
	}
	return dst
}

// PrivateData is a message's private data read as its layout says: the
// header of Kind (when the data held it) and the consumer's part after it.
type PrivateData struct {
	Kind     PDKind
	IPCM     IPCMHeader // Kind PDIPCM
	Hello    Hello      // Kind PDHello
	HelloAck HelloAck   // Kind PDHelloAck
	// Consumer is the private data after the header (all of it for
	// PDRaw). It aliases the input.
	Consumer []byte
}

// DecodePrivateData reads pd with layout kind. When pd is too short for the
// header, the result has Kind PDRaw, Consumer = pd and the error
// dissect.ErrTruncated. It does not allocate.
func DecodePrivateData(kind PDKind, pd []byte) (PrivateData, error) {
	p := PrivateData{Kind: kind}
	var err error
	n := 0
	switch kind {
	case PDIPCM:
		p.IPCM, err = DecodeIPCMHeader(pd)
		n = IPCMHeaderLen
	case PDHello:
		p.Hello, err = DecodeHello(pd)
		n = HelloLen
	case PDHelloAck:
		p.HelloAck, err = DecodeHelloAck(pd)
		n = HelloAckLen
	}
	if err != nil {
		return PrivateData{Kind: PDRaw, Consumer: pd}, err
	}
	p.Consumer = pd[n:]
	return p, nil
}

// Check runs the header's Check.
func (p *PrivateData) Check(dst []dissect.Finding) []dissect.Finding {
	switch p.Kind {
	case PDIPCM:
		return p.IPCM.Check(dst)
	case PDHello:
		return p.Hello.Check(dst)
	case PDHelloAck:
		return p.HelloAck.Check(dst)
	}
	return dst
}

// TrimZeros returns b without its trailing zero octets (the padding of the
// fixed-size private data area).
func TrimZeros(b []byte) []byte {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return b[:n]
}

func addrField(a netip.Addr) [16]byte {
	var f [16]byte
	if a.Is4() {
		b := a.As4()
		copy(f[12:], b[:])
		return f
	}
	return a.As16()
}

func fieldAddr(f [16]byte, ipv uint8) netip.Addr {
	if ipv == 4 {
		return netip.AddrFrom4([4]byte(f[12:16]))
	}
	return netip.AddrFrom16(f)
}

func upperZero(f [16]byte) bool {
	for _, b := range f[:12] {
		if b != 0 {
			return false
		}
	}
	return true
}

package ibcm

import "strconv"

// ServiceID is the 64-bit service ID of a REQ or SIDR_REQ (IBA §12.7.3). In
// the IP-based form of IBA Annex A11 ("RDMA IP CM Service", as Linux
// include/rdma/rdma_cm.h encodes it) its low 32 bits are the port space
// (16 bits: 0x01 then the IP protocol) and the port, the upper 32 bits zero:
//
//	0x0000000001060000 | port   TCP port space (RC connections)
//	0x0000000001110000 | port   UDP port space (UD, via SIDR)
//	0x00000000013F0000 | port   IB port space
//
// Seed 002 proposed instead "byte 6 set to 0x02 and bytes 7 and 8 the IANA
// TCP port" in the IBTA-assigned range: 0x0000000001020000 | port, the
// form whose REQ carries the Hello message ([PortSpaceHello]).
type ServiceID uint64

// PortSpace is the port space of an IP-based service ID: the 16 bits above
// the port (Linux enum rdma_ucm_port_space).
type PortSpace uint16

// Port spaces (Linux rdma_cm.h RDMA_PS_*; PortSpaceHello is seed 002's
// "iWARP port" range, byte 6 = 0x02 after the IBTA prefix 0x01).
const (
	PortSpaceSDP   PortSpace = 0x0001 // obsolete Sockets Direct Protocol
	PortSpaceIPoIB PortSpace = 0x0002
	PortSpaceHello PortSpace = 0x0102 // seed 002: REQ carries Hello, REP HelloAck
	PortSpaceTCP   PortSpace = 0x0106
	PortSpaceUDP   PortSpace = 0x0111
	PortSpaceIB    PortSpace = 0x013F
)

// String returns "tcp", "udp", "ib", "ipoib", "sdp", "iwarp" (seed 002), or
// "ps(0xNNNN)".
func (p PortSpace) String() string {
	switch p {
	case PortSpaceTCP:
		return "tcp"
	case PortSpaceUDP:
		return "udp"
	case PortSpaceIB:
		return "ib"
	case PortSpaceIPoIB:
		return "ipoib"
	case PortSpaceSDP:
		return "sdp"
	case PortSpaceHello:
		return "iwarp"
	}
	return "ps(" + hex16(uint16(p)) + ")"
}

// MakeServiceID returns the IP-based service ID of port in port space ps.
func MakeServiceID(ps PortSpace, port uint16) ServiceID {
	return ServiceID(uint64(ps)<<16 | uint64(port))
}

// IP returns the port space and port of an IP-based service ID, and false
// when s is not of that form (upper 32 bits not zero, or a port space no
// stack defines).
func (s ServiceID) IP() (PortSpace, uint16, bool) {
	if s>>32 != 0 {
		return 0, 0, false
	}
	ps := PortSpace(s >> 16)
	switch ps {
	case PortSpaceTCP, PortSpaceUDP, PortSpaceIB, PortSpaceIPoIB, PortSpaceSDP, PortSpaceHello:
		return ps, uint16(s), true
	}
	return 0, 0, false
}

// String returns the service ID in hex, "0x0000000001061144".
func (s ServiceID) String() string {
	b := make([]byte, 0, 18)
	b = append(b, "0x"...)
	for i := 60; i >= 0; i -= 4 {
		b = append(b, hexDigits[uint64(s)>>uint(i)&15])
	}
	return string(b)
}

// wellKnown maps ports to the RDMA services usually found there. The IANA
// assignments are nfs (2049), nfsrdma (20049, RFC 8267 §6), iser (3260, the
// iSCSI port iSER uses, RFC 7145 §5.1), nvme (4420, NVMe-oF RDMA), nvme-disc
// (8009, NVMe-oF discovery), smb-direct (5445, MS-SMBD). rping (7174) and
// perftest (18515) are the defaults of the librdmacm examples and of the
// perftest suite, not IANA ports.
var wellKnown = [...]struct {
	port uint16
	name string
}{
	{2049, "nfs"},
	{3260, "iser"},
	{4420, "nvme"},
	{5445, "smb-direct"},
	{7174, "rping"},
	{8009, "nvme-disc"},
	{18515, "perftest"},
	{20049, "nfsrdma"},
}

// ServiceName returns the well-known RDMA service on port, or "" when the
// port has none.
func ServiceName(port uint16) string {
	for _, w := range wellKnown {
		if w.port == port {
			return w.name
		}
	}
	return ""
}

// Describe returns a short description such as "nvme (tcp port 4420)" or
// "tcp port 7000", or the hex service ID when it is not IP-based.
func (s ServiceID) Describe() string {
	ps, port, ok := s.IP()
	if !ok {
		return s.String()
	}
	d := ps.String() + " port " + strconv.Itoa(int(port))
	if n := ServiceName(port); n != "" {
		return n + " (" + d + ")"
	}
	return d
}

package filter

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// Endpoint fields: Wireshark's ip.src, ip.dst, ip.addr, ipv6.*, tcp.srcport,
// tcp.dstport, tcp.port and sctp.*port (and tcp.stream, the TCP
// conversation's number), so that a filter written for tshark
// to pick hosts and ports works here. No record has keys of these names:
// their values come from the endpoints of the packets a record was decoded
// from (flows.Record.Src and Dst), which is why only MatchRecord finds
// them. A record stands for packets, so the fields apply as tshark's do to
// those packets:
//
//   - mpa, fpdu and message records over TCP have tcp.* ports; ddp and
//     sctp_session records, and messages over SCTP, have sctp.* ports;
//     cm records over RoCEv2 have addresses only (their UDP header is not
//     a record's);
//   - a conn record has its two ends, in the .addr and .port fields only
//     (it has no direction: ip.src and tcp.srcport are not its);
//   - finding records, and records of native InfiniBand (GIDs are not IP
//     addresses), have none: ip.addr == 192.0.2.1 || finding keeps the
//     findings too.
//
// IPv4 addresses are ip.*, IPv6 ones ipv6.*, as in Wireshark. A value is an
// address or a subnet in CIDR form (ip.addr == 192.0.2.0/24); names are not
// resolved.

// derive says where an endpoint field's values come from.
type derive uint8

const (
	dNone   derive = iota
	dIP4           // ip.*: IPv4 addresses
	dIP6           // ipv6.*: IPv6 addresses
	dTCP           // tcp.*port
	dSCTP          // sctp.*port
	dUDP           // not a field: a record's packets are UDP (RoCEv2)
	dClock         // a time field (times.go)
	dStream        // tcp.stream: the record's TCP stream number (flows.Record.TCPStream)
	dWire          // a Wireshark field computed from the record's keys (wire.go)
)

// end selects the source, the destination, or either.
type end uint8

const (
	eSrc end = iota
	eDst
	eAny
)

// endpointFields are the endpoint fields, with their descriptions.
var endpointFields = [...]struct {
	name string
	d    derive
	end  end
	desc string
}{
	{"ip.src", dIP4, eSrc, "IPv4 source address of the record's packets"},
	{"ip.dst", dIP4, eDst, "IPv4 destination address of the record's packets"},
	{"ip.addr", dIP4, eAny, "IPv4 source or destination address (a conn record: either end)"},
	{"ipv6.src", dIP6, eSrc, "IPv6 source address of the record's packets"},
	{"ipv6.dst", dIP6, eDst, "IPv6 destination address of the record's packets"},
	{"ipv6.addr", dIP6, eAny, "IPv6 source or destination address (a conn record: either end)"},
	{"tcp.srcport", dTCP, eSrc, "TCP source port of the record's packets"},
	{"tcp.dstport", dTCP, eDst, "TCP destination port of the record's packets"},
	{"tcp.port", dTCP, eAny, "TCP source or destination port (a conn record: either end)"},
	{"tcp.stream", dStream, eAny, "TCP stream index, as Wireshark numbers the capture's TCP conversations: the record's connection's"},
	{"sctp.srcport", dSCTP, eSrc, "SCTP source port (DDP over SCTP)"},
	{"sctp.dstport", dSCTP, eDst, "SCTP destination port (DDP over SCTP)"},
	{"sctp.port", dSCTP, eAny, "SCTP source or destination port (DDP over SCTP; a conn record: either end)"},
}

// endpointProtocols are Wireshark's protocols of the endpoint fields, tested
// for presence as tshark tests them: a record is ip when it has an IPv4
// address (ip.addr), ipv6 when an IPv6 one, tcp when it has TCP ports.
var endpointProtocols = [...]struct{ name, field string }{
	{"ip", "ip.addr"}, {"ipv6", "ipv6.addr"}, {"tcp", "tcp.port"},
}

// endpointField resolves an endpoint field name, or an endpoint protocol
// (presence only).
func endpointField(name string) (*field, bool) {
	for _, p := range endpointProtocols {
		if p.name == name {
			f, _ := endpointField(p.field)
			f.name, f.typ, f.bits = p.name, fNone, 0
			return f, true
		}
	}
	for _, e := range endpointFields {
		if e.name == name {
			f := &field{name: e.name, typ: fNum, derive: e.d, end: e.end, unsigned: true}
			switch e.d {
			case dIP4, dIP6:
				f.typ = fAddr
			case dTCP, dSCTP:
				f.bits = 16
			case dStream:
				f.bits = 32 // FT_UINT32 in tshark
			}
			return f, true
		}
	}
	return nil, false
}

// ends returns the endpoints of the packets r was decoded from and their
// transport; directed is false when a and b are a connection's two ends
// rather than a source and a destination. ok is false for records without
// IP endpoints.
func ends(r *flows.Record) (a, b netip.AddrPort, tr derive, directed, ok bool) {
	if r == nil {
		return a, b, dNone, false, false
	}
	switch r.Type {
	case flows.RecMPA, flows.RecFPDU:
		return r.Src, r.Dst, dTCP, true, true
	case flows.RecMessage:
		tr = dTCP
		if r.Message != nil && r.Message.SCTP {
			tr = dSCTP
		}
		return r.Src, r.Dst, tr, true, true
	case flows.RecDDPSCTP, flows.RecSCTPSession:
		return r.Src, r.Dst, dSCTP, true, true
	case flows.RecCM:
		if r.CM == nil || r.CM.HasLRH {
			return a, b, dNone, false, false
		}
		return r.Src, r.Dst, dUDP, true, true
	case flows.RecConn:
		if s := r.Summary; s != nil {
			return s.A, s.B, dTCP, false, true
		}
	case flows.RecExtConn:
		switch {
		case r.SCTP != nil && r.SCTP.Summary != nil:
			return r.SCTP.Summary.A, r.SCTP.Summary.B, dSCTP, false, true
		case r.CM != nil && r.CM.Summary != nil && !r.CM.Summary.Native && r.CM.Summary.InitiatorKnown:
			s := r.CM.Summary
			return netip.AddrPortFrom(s.Initiator, 0), netip.AddrPortFrom(s.Responder, 0), dUDP, false, true
		}
	}
	return a, b, dNone, false, false
}

// stream visits the TCP stream number of r (tcp.stream), if it has one:
// the records of a TCP connection, findings and conn record included.
func (t *test) stream(r *flows.Record, s *scanState) {
	if r == nil {
		return
	}
	if n, ok := r.TCPStream(); ok {
		v := format.Uint(uint64(n))
		t.one(&v, s)
	}
}

// endpoints visits the values of an endpoint field in r until one's check
// equals s.stopOn.
func (t *test) endpoints(r *flows.Record, s *scanState) {
	a, b, tr, directed, ok := ends(r)
	if !ok {
		return
	}
	f := t.f
	switch f.derive {
	case dTCP, dSCTP:
		if tr != f.derive {
			return
		}
	}
	for i, ep := range [2]netip.AddrPort{a, b} {
		switch {
		case !ep.IsValid():
			continue
		case f.end == eAny:
		case !directed, f.end != end(i):
			continue
		}
		switch f.derive {
		case dIP4, dIP6:
			addr := ep.Addr().Unmap()
			if f.derive == dIP4 && !addr.Is4() || f.derive == dIP6 && !addr.Is6() {
				continue
			}
			s.seen = true
			if s.col != nil {
				s.col.addr(addr, s)
			} else if t.checkAddr(addr) == s.stopOn {
				s.stopped = true
			}
		default:
			// A port: as a record value, so that every relation applies.
			v := format.Uint(uint64(ep.Port()))
			t.one(&v, s)
		}
		if s.stopped {
			return
		}
	}
}

// checkAddr applies the relation to an address.
func (t *test) checkAddr(a netip.Addr) bool {
	switch t.op {
	case opPresent:
		return true
	case opEq, opAllEq:
		return t.vals[0].pfx.Contains(a)
	case opNe, opAnyNe:
		return !t.vals[0].pfx.Contains(a)
	case opLt:
		return a.Compare(t.vals[0].pfx.Addr()) < 0
	case opLe:
		return a.Compare(t.vals[0].pfx.Addr()) <= 0
	case opGt:
		return a.Compare(t.vals[0].pfx.Addr()) > 0
	case opGe:
		return a.Compare(t.vals[0].pfx.Addr()) >= 0
	case opIn, opNotIn:
		in := false
		for i := range t.vals {
			l := &t.vals[i]
			if l.hi == nil && l.pfx.Contains(a) ||
				l.hi != nil && a.Compare(l.pfx.Addr()) >= 0 && a.Compare(l.hi.pfx.Addr()) <= 0 {
				in = true
				break
			}
		}
		return in == (t.op == opIn)
	}
	return false
}

// addrValue reads an address or a subnet (CIDR) for an ip.* or ipv6.*
// field. Ordered relations and set ranges take an address, not a subnet.
func addrValue(f *field, v token, o op, text string) (lit, error) {
	l := lit{text: v.text, quote: v.kind == tString}
	family, want := "IPv4", "192.0.2.1 or 192.0.2.0/24"
	if f.derive == dIP6 {
		family, want = "IPv6", "2001:db8::1 or 2001:db8::/32"
	}
	var err error
	if strings.Contains(text, "/") {
		l.pfx, err = netip.ParsePrefix(text)
		l.pfx = l.pfx.Masked()
	} else {
		var a netip.Addr
		if a, err = netip.ParseAddr(text); err == nil && a.Zone() != "" {
			return lit{}, errAt(v.pos, f.name+": "+strconv.Quote(text)+" has a zone; records' addresses have none")
		}
		l.pfx = netip.PrefixFrom(a, a.BitLen())
	}
	switch {
	case err != nil:
		return lit{}, errAt(v.pos, f.name+" is an "+family+" address field; "+strconv.Quote(text)+" is not an address or subnet (such as "+want+"; names are not resolved)")
	case f.derive == dIP4 && !l.pfx.Addr().Is4(), f.derive == dIP6 && !l.pfx.Addr().Is6():
		return lit{}, errAt(v.pos, f.name+" is an "+family+" address field; "+strconv.Quote(text)+" is not an "+family+" address (ip.* are IPv4, ipv6.* IPv6)")
	}
	switch o {
	case opLt, opLe, opGt, opGe:
		if !l.pfx.IsSingleIP() {
			return lit{}, errAt(v.pos, opNames[o]+" compares with an address, not a subnet")
		}
	}
	return l, nil
}

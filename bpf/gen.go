package bpf

import (
	"github.com/gopacket/gopacket/layers"
	xbpf "golang.org/x/net/bpf"
)

// Link-layer framings the compiler knows.
const (
	linkEthernet = iota + 1
	linkSLL
	linkSLL2
	linkRaw  // IPv4 or IPv6, told apart by the version nibble
	linkIPv4 // LINKTYPE_IPV4: always IPv4
	linkIPv6 // LINKTYPE_IPV6: always IPv6
)

// linkInfo describes a link type: its framing and libpcap's name for it
// (used in the errors libpcap would give).
type linkInfo struct {
	kind int
	name string
}

// Link types beyond gopacket's constants: DLT_RAW as numbered on most
// platforms (12) and on OpenBSD (14).
const (
	linkTypeRaw12 layers.LinkType = 12
	linkTypeRaw14 layers.LinkType = 14
)

func linkOf(lt layers.LinkType) (linkInfo, bool) {
	switch lt {
	case layers.LinkTypeEthernet:
		return linkInfo{linkEthernet, "Ethernet"}, true
	case layers.LinkTypeLinuxSLL:
		return linkInfo{linkSLL, "Linux cooked v1"}, true
	case layers.LinkTypeLinuxSLL2:
		return linkInfo{linkSLL2, "Linux cooked v2"}, true
	case layers.LinkTypeRaw, linkTypeRaw12, linkTypeRaw14:
		return linkInfo{linkRaw, "Raw IP"}, true
	case layers.LinkTypeIPv4:
		return linkInfo{linkIPv4, "Raw IPv4"}, true
	case layers.LinkTypeIPv6:
		return linkInfo{linkIPv6, "Raw IPv6"}, true
	}
	return linkInfo{}, false
}

// Ethertypes (IEEE 802 numbers) used by the primitives.
const (
	etherIPv4   = 0x0800
	etherARP    = 0x0806
	etherRARP   = 0x8035
	etherIPv6   = 0x86dd
	ether8021Q  = 0x8100
	ether8021AD = 0x88a8
	etherQinQ   = 0x9100
)

// IP protocol numbers (IANA).
const (
	protoICMP   = 1
	protoTCP    = 6
	protoUDP    = 17
	protoFrag6  = 44
	protoICMPv6 = 58
	protoSCTP   = 132
)

// node is a boolean expression over packet tests.
type node interface{ isNode() }

type (
	nAnd   struct{ a, b node }
	nOr    struct{ a, b node }
	nNot   struct{ a node }
	nConst bool
	// nTest loads a value, optionally masks it, and compares it: A op v
	// for any v in vals (op is equality when there are several).
	nTest struct {
		size   int    // 1, 2 or 4 octets
		off    uint32 // absolute offset, or added to X when ind
		ind    bool   // X = 4*(pkt[hl]&0xf) first: after an IPv4 header
		hl     uint32 // offset of the IPv4 header for ind
		masked bool
		mask   uint32
		op     xbpf.JumpTest
		vals   []uint32
	}
)

func (nAnd) isNode()   {}
func (nOr) isNode()    {}
func (nNot) isNode()   {}
func (nConst) isNode() {}
func (*nTest) isNode() {}

func and(a, b node) node { return nAnd{a, b} }
func or(a, b node) node  { return nOr{a, b} }

func cmp(size int, off uint32, vals ...uint32) node {
	return &nTest{size: size, off: off, op: xbpf.JumpEqual, vals: vals}
}

// mcmp compares a masked word; a full mask is a plain comparison.
func mcmp(size int, off, v, mask uint32) node {
	full := uint32(0xffffffff)
	switch size {
	case 1:
		full = 0xff
	case 2:
		full = 0xffff
	}
	if mask&full == full {
		return cmp(size, off, v)
	}
	if mask == 0 {
		// Always true or false, without a load (libpcap's optimizer drops
		// it too, which matters for a packet too short for the load).
		return nConst(v == 0)
	}
	return &nTest{size: size, off: off, masked: true, mask: mask, op: xbpf.JumpEqual, vals: []uint32{v}}
}

// nl is the offset of the network-layer header.
func (p *parser) nl() uint32 {
	switch p.link.kind {
	case linkEthernet:
		return 14 + p.shift
	case linkSLL:
		return 16
	case linkSLL2:
		return 20
	}
	return 0
}

// linktype tests the link layer's protocol field for ethertype et (libpcap
// gen_linktype).
func (p *parser) linktype(et uint32) node {
	switch p.link.kind {
	case linkEthernet:
		return cmp(2, 12+p.shift, et)
	case linkSLL:
		return cmp(2, 14, et)
	case linkSLL2:
		return cmp(2, 0, et)
	case linkRaw:
		switch et {
		case etherIPv4:
			return mcmp(1, 0, 0x40, 0xf0)
		case etherIPv6:
			return mcmp(1, 0, 0x60, 0xf0)
		}
	case linkIPv4:
		return nConst(et == etherIPv4)
	case linkIPv6:
		return nConst(et == etherIPv6)
	}
	return nConst(false)
}

// protoAbbrev generates a protocol primitive: ip, ip6, arp, rarp, tcp, ...
func (p *parser) protoAbbrev(pr uint8, t token) node {
	switch pr {
	case pIP:
		return p.linktype(etherIPv4)
	case pIP6:
		return p.linktype(etherIPv6)
	case pARP:
		return p.linktype(etherARP)
	case pRARP:
		return p.linktype(etherRARP)
	case pTCP:
		return p.genProto(t, protoTCP, qual{})
	case pUDP:
		return p.genProto(t, protoUDP, qual{})
	case pSCTP:
		return p.genProto(t, protoSCTP, qual{})
	case pICMP:
		return p.genProto(t, protoICMP, qual{proto: pIP})
	case pICMP6:
		return p.genProto(t, protoICMPv6, qual{proto: pIP6})
	case pIGMP:
		return p.genProto(t, 2, qual{proto: pIP})
	case pIGRP:
		return p.genProto(t, 9, qual{proto: pIP})
	case pPIM:
		return p.genProto(t, 103, qual{})
	case pVRRP, pCARP:
		return p.genProto(t, 112, qual{proto: pIP})
	case pAH:
		return p.genProto(t, 51, qual{})
	case pESP:
		return p.genProto(t, 50, qual{})
	}
	p.fail(t, false, "syntax error at %q", t.text)
	return nil
}

// genProto generates "[ip|ip6] proto N" (libpcap gen_proto): for IPv6 the
// next header directly, or behind a Fragment header.
func (p *parser) genProto(t token, v uint32, q qual) node {
	if q.dir != dDefault {
		p.fail(t, false, "direction applied to 'proto'")
	}
	if v > 255 {
		p.fail(t, false, "protocol %d greater than maximum 255", v)
	}
	nl := p.nl()
	ip4 := func() node { return and(p.linktype(etherIPv4), cmp(1, nl+9, v)) }
	ip6 := func() node {
		viaFrag := and(cmp(1, nl+6, protoFrag6), cmp(1, nl+40, v))
		return and(p.linktype(etherIPv6), or(cmp(1, nl+6, v), viaFrag))
	}
	switch q.proto {
	case pDefault:
		return or(ip4(), ip6())
	case pIP:
		return ip4()
	case pIP6:
		return ip6()
	}
	p.fail(t, false, "'%s' modifier applied to proto", protoString(q.proto))
	return nil
}

// Kinds of nPrim.
const (
	primHost4 = iota + 1
	primHost6
	primPort
	primRange
)

// nPrim is a host, net, port or portrange primitive kept whole until code
// generation, so that "port 80 or 443" can become one test of each port
// field against both values, as libpcap's optimizer makes it. The order of
// the loads matters for frames too short for some of them: a load past the
// end rejects the packet.
type nPrim struct {
	kind  uint8
	q     qual
	shift uint32
	vals  []primVal
}

type primVal struct {
	v4, m4 uint32   // primHost4
	a6     [16]byte // primHost6
	bits   int      // primHost6 prefix length
	lo, hi uint32   // primPort, primRange
}

func (*nPrim) isNode() {}

// mergeOr returns the primitive for "a or b" when both are the same
// primitive with the same qualifiers (not "src and dst", whose values do
// not combine so). As with libpcap, only IPv4 hosts and nets and single
// ports combine; IPv6 addresses and port ranges are tested one after the
// other.
func mergeOr(a, b node) (node, bool) {
	pa, ok1 := a.(*nPrim)
	pb, ok2 := b.(*nPrim)
	if !ok1 || !ok2 || pa.kind != pb.kind || (pa.kind != primPort && pa.kind != primHost4) || pa.shift != pb.shift ||
		pa.q.proto != pb.q.proto || pa.q.dir != pb.q.dir || pa.q.dir == dAnd {
		return nil, false
	}
	vals := append(append([]primVal(nil), pa.vals...), pb.vals...)
	return &nPrim{kind: pa.kind, q: pa.q, shift: pa.shift, vals: vals}, true
}

// orNode joins a and b, merging b into a's last primitive when it can.
func orNode(a, b node) node {
	if m, ok := mergeOr(a, b); ok {
		return m
	}
	if o, ok := a.(nOr); ok {
		if m, ok := mergeOr(o.b, b); ok {
			return nOr{o.a, m}
		}
	}
	return nOr{a, b}
}

// lower expands the primitives of a tree into tests.
func (p *parser) lower(n node) node {
	switch n := n.(type) {
	case nAnd:
		return andConst(p.lower(n.a), p.lower(n.b))
	case nOr:
		return orConst(p.lower(n.a), p.lower(n.b))
	case nNot:
		a := p.lower(n.a)
		if c, ok := a.(nConst); ok {
			return !c
		}
		return nNot{a}
	case *nPrim:
		saved := p.shift
		p.shift = n.shift
		defer func() { p.shift = saved }()
		switch n.kind {
		case primHost4:
			return p.expandHost4(n)
		case primHost6:
			return p.expandHost6(n)
		default:
			return p.expandPort(n)
		}
	}
	return n
}

// andConst and orConst fold constant operands as libpcap's optimizer
// does: "a or true" accepts every packet, even one too short for the
// loads of a; "a and false" rejects every packet.
func andConst(a, b node) node {
	if c, ok := a.(nConst); ok {
		if !c {
			return c
		}
		return b
	}
	if c, ok := b.(nConst); ok {
		if !c {
			return c
		}
		return a
	}
	return nAnd{a, b}
}

func orConst(a, b node) node {
	if c, ok := a.(nConst); ok {
		if c {
			return c
		}
		return b
	}
	if c, ok := b.(nConst); ok {
		if c {
			return c
		}
		return a
	}
	return nOr{a, b}
}

// anyOf ORs one test per value.
func anyOf(k int, f func(i int) node) node {
	n := f(0)
	for i := 1; i < k; i++ {
		n = or(n, f(i))
	}
	return n
}

func dirNode(dir uint8, src, dst func() node) node {
	switch dir {
	case dSrc:
		return src()
	case dDst:
		return dst()
	case dAnd:
		return and(src(), dst())
	}
	return or(src(), dst())
}

// hostop compares the address fields at offsets src and dst of the network
// header of ethertype et with the primitive's values.
func (p *parser) hostop(n *nPrim, et uint32, src, dst uint32) node {
	nl := p.nl()
	field := func(off uint32) func() node {
		return func() node {
			return anyOf(len(n.vals), func(i int) node { return mcmp(4, nl+off, n.vals[i].v4, n.vals[i].m4) })
		}
	}
	return and(p.linktype(et), dirNode(n.q.dir, field(src), field(dst)))
}

// genHost checks the qualifiers of a host or net primitive for an IPv4
// address (libpcap gen_host) and returns it.
func (p *parser) genHost(t token, addr, mask uint32, q qual) node {
	what := "host"
	if q.addr == aNet {
		what = "net"
	}
	switch q.proto {
	case pDefault, pIP, pARP, pRARP:
		return &nPrim{kind: primHost4, q: q, shift: p.shift, vals: []primVal{{v4: addr, m4: mask}}}
	case pIP6:
		p.fail(t, false, "'ip6' modifier applied to ip %s", what)
	}
	p.fail(t, false, "'%s' modifier applied to %s", protoString(q.proto), what)
	return nil
}

// expandHost4: without a protocol qualifier, IPv4, ARP and RARP addresses.
func (p *parser) expandHost4(n *nPrim) node {
	switch n.q.proto {
	case pIP:
		return p.hostop(n, etherIPv4, 12, 16)
	case pARP:
		return p.hostop(n, etherARP, 14, 24)
	case pRARP:
		return p.hostop(n, etherRARP, 14, 24)
	}
	b := or(p.hostop(n, etherIPv4, 12, 16), p.hostop(n, etherARP, 14, 24))
	return or(b, p.hostop(n, etherRARP, 14, 24))
}

// genHost6 checks the qualifiers of a host or net primitive for an IPv6
// address and prefix length and returns it.
func (p *parser) genHost6(t token, a [16]byte, bits int, q qual) node {
	what := "host"
	if q.addr == aNet {
		what = "net"
	}
	switch q.proto {
	case pDefault, pIP6:
	case pIP:
		p.fail(t, false, "'ip' modifier applied to ip6 %s", what)
	default:
		p.fail(t, false, "'%s' modifier applied to ip6 %s", protoString(q.proto), what)
	}
	return &nPrim{kind: primHost6, q: q, shift: p.shift, vals: []primVal{{a6: a, bits: bits}}}
}

func (p *parser) expandHost6(n *nPrim) node {
	nl := p.nl()
	one := func(off uint32, pv primVal) node {
		var c node = nConst(true)
		for w := 3; w >= 0; w-- {
			m := uint32(0)
			switch b := pv.bits - 32*w; {
			case b >= 32:
				m = 0xffffffff
			case b > 0:
				m = 0xffffffff << (32 - b)
			}
			if m == 0 {
				continue
			}
			a := pv.a6[4*w:]
			v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
			t := mcmp(4, nl+off+uint32(4*w), v&m, m)
			if c == nConst(true) {
				c = t
			} else {
				c = and(t, c)
			}
		}
		return c
	}
	field := func(off uint32) func() node {
		return func() node {
			return anyOf(len(n.vals), func(i int) node { return one(off, n.vals[i]) })
		}
	}
	return and(p.linktype(etherIPv6), dirNode(n.q.dir, field(8), field(24)))
}

// portProtos lists the IP protocols a port primitive applies to.
func portProtos(pr uint8) []uint32 {
	switch pr {
	case pTCP:
		return []uint32{protoTCP}
	case pUDP:
		return []uint32{protoUDP}
	case pSCTP:
		return []uint32{protoSCTP}
	}
	return []uint32{protoSCTP, protoTCP, protoUDP}
}

// portTest compares a port at off (after the IPv4 header when ind) with lo,
// or with the range lo-hi.
func portTest(off uint32, ind bool, hl uint32, lo, hi uint32, isRange bool) node {
	if !isRange || lo == hi {
		return &nTest{size: 2, off: off, ind: ind, hl: hl, op: xbpf.JumpEqual, vals: []uint32{lo}}
	}
	ge := &nTest{size: 2, off: off, ind: ind, hl: hl, op: xbpf.JumpGreaterOrEqual, vals: []uint32{lo}}
	gt := &nTest{size: 2, off: off, ind: ind, hl: hl, op: xbpf.JumpGreaterThan, vals: []uint32{hi}}
	return and(ge, nNot{gt})
}

// portField tests one port field against every value of the primitive; a
// list of single ports becomes one load compared with each.
func portField(n *nPrim, off uint32, ind bool, hl uint32) node {
	if n.kind == primPort {
		vals := make([]uint32, len(n.vals))
		for i, v := range n.vals {
			vals[i] = v.lo
		}
		return &nTest{size: 2, off: off, ind: ind, hl: hl, op: xbpf.JumpEqual, vals: vals}
	}
	return anyOf(len(n.vals), func(i int) node {
		return portTest(off, ind, hl, n.vals[i].lo, n.vals[i].hi, true)
	})
}

// expandPort generates a port or portrange primitive: IPv6 (libpcap
// gen_port6: the next header of the fixed header only), then IPv4 (libpcap
// gen_port: the protocol, not a fragment other than the first, then the
// ports after the variable-length IPv4 header).
func (p *parser) expandPort(n *nPrim) node {
	nl := p.nl()
	ports6 := dirNode(n.q.dir,
		func() node { return portField(n, nl+40, false, 0) },
		func() node { return portField(n, nl+42, false, 0) })
	ip6 := and(p.linktype(etherIPv6), and(cmp(1, nl+6, portProtos(n.q.proto)...), ports6))
	notFrag := nNot{&nTest{size: 2, off: nl + 6, op: xbpf.JumpBitsSet, vals: []uint32{0x1fff}}}
	ports4 := dirNode(n.q.dir,
		func() node { return portField(n, nl, true, nl) },
		func() node { return portField(n, nl+2, true, nl) })
	ip4 := and(p.linktype(etherIPv4), and(and(cmp(1, nl+9, portProtos(n.q.proto)...), notFrag), ports4))
	return or(ip6, ip4)
}

// genVLAN generates "vlan [ID]": an 802.1Q, 802.1ad or 0x9100 tag at the
// current link-type offset (libpcap gen_vlan without BPF extensions).
func (p *parser) genVLAN(id uint32, hasID bool) node {
	tpid := cmp(2, 12+p.shift, ether8021Q, ether8021AD, etherQinQ)
	if !hasID {
		return tpid
	}
	return and(tpid, mcmp(2, 14+p.shift, id, 0x0fff))
}

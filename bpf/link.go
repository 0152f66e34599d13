package bpf

import (
	"strings"

	xbpf "golang.org/x/net/bpf"
)

// Link-layer primitives (ether host/src/dst, ether proto, broadcast,
// multicast), IP multicast and the packet length (less, greater).

// etherProtoNames are the names "ether proto \NAME" takes (libpcap's
// pcap_nametoeproto), those above 1500.
var etherProtoNames = map[string]uint32{
	"ip": etherIPv4, "ip6": etherIPv6, "arp": etherARP, "rarp": etherRARP,
	"loopback": 0x9000, "decnet": 0x6003, "lat": 0x6004, "sca": 0x6007,
	"moprc": 0x6002, "mopdl": 0x6001,
}

// parseLength reads "less N" (len <= N) or "greater N" (len >= N).
func (p *parser) parseLength() node {
	t := p.next()
	nt := p.next()
	v, ok := parseNum(nt.text)
	if nt.kind != tWord || !ok {
		p.unexpected(nt)
	}
	p.last, p.have = qual{bad: true}, true
	ln := &aexp{kind: axLen}
	if t.text == "greater" {
		return &nRel{l: ln, r: aconst(v), op: xbpf.JumpGreaterOrEqual}
	}
	return nNot{&nRel{l: ln, r: aconst(v), op: xbpf.JumpGreaterThan}}
}

const castLinks = "ethernet/FDDI/token ring/ARCNET/802.11/ATM LANE/Fibre Channel"

// genCast generates "[ether|ip|ip6] broadcast|multicast" (libpcap
// gen_broadcast, gen_multicast).
func (p *parser) genCast(t token, pr uint8, which string) node {
	nl := p.nl()
	switch pr {
	case pDefault, pLink:
		if p.link.kind != linkEthernet {
			if which == "broadcast" {
				p.fail(t, false, "not a broadcast link")
			}
			p.fail(t, false, "link-layer multicast filters supported only on %s", castLinks)
		}
		if which == "broadcast" {
			return p.etherAddr(0, [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
		}
		return &nTest{size: 1, off: 0, op: xbpf.JumpBitsSet, vals: []uint32{1}}
	case pIP:
		if which == "broadcast" {
			// libpcap compares the destination with the capture
			// interface's netmask, which a file or -d does not have.
			p.fail(t, true, "ip broadcast not supported (it depends on the interface's netmask)")
		}
		return and(p.linktype(etherIPv4), &nTest{size: 1, off: nl + 16, op: xbpf.JumpGreaterOrEqual, vals: []uint32{224}})
	case pIP6:
		if which == "multicast" {
			return and(p.linktype(etherIPv6), cmp(1, nl+24, 255))
		}
	}
	if which == "broadcast" {
		p.fail(t, false, "only link-layer/IP broadcast filters supported")
	}
	p.fail(t, false, "link-layer multicast filters supported only on %s", castLinks)
	return nil
}

// etherAddr compares the 6 octets at off with a, as libpcap's gen_bcmp:
// the last 4 octets first.
func (p *parser) etherAddr(off uint32, a [6]byte) node {
	w := uint32(a[2])<<24 | uint32(a[3])<<16 | uint32(a[4])<<8 | uint32(a[5])
	return and(cmp(4, off+2, w), cmp(2, off, uint32(a[0])<<8|uint32(a[1])))
}

// parseLinkID reads the id of an ether host/src/dst or ether proto
// primitive.
func (p *parser) parseLinkID(t token, q qual) node {
	w := t.text
	switch q.addr {
	case aProto:
		var v uint32
		if strings.HasPrefix(w, "\\") {
			var ok bool
			if v, ok = etherProtoNames[w[1:]]; !ok {
				switch w[1:] {
				case "atalk", "aarp", "iso", "stp", "ipx", "netbeui", "pup", "sprite", "xns":
					p.fail(t, true, "ether proto %s not supported", w)
				}
				p.fail(t, false, "unknown ether proto '%s'", w[1:])
			}
		} else {
			var ok bool
			if v, ok = parseNum(w); !ok {
				if _, known := etherProtoNames[w]; known {
					p.fail(t, false, "syntax error at %q: write \\%s for the protocol name", w, w)
				}
				p.fail(t, false, "unknown ether proto '%s'", w)
			}
		}
		if q.dir != dDefault {
			p.fail(t, false, "direction applied to 'proto'")
		}
		return p.genEtherProto(t, v)
	case aDefault, aHost:
	default:
		p.fail(t, false, "syntax error at %q: illegal qualifier for a link-layer address", w)
	}
	mac, ok := parseMAC(w)
	if !ok {
		if isNameLike(w) && !strings.ContainsAny(w, ":") {
			p.fail(t, true, "Ethernet host names are not looked up (unsupported %q); use a MAC address", w)
		}
		p.fail(t, false, "illegal link layer address %q", w)
	}
	if p.link.kind != linkEthernet {
		p.fail(t, false, "ethernet addresses supported only on ethernet/FDDI/token ring/802.11/ATM LANE/Fibre Channel")
	}
	return dirNode(q.dir, func() node { return p.etherAddr(6, mac) }, func() node { return p.etherAddr(0, mac) })
}

// genEtherProto generates "ether proto N" (libpcap gen_linktype); values up
// to 1500 are 802.2 LLC SAPs.
func (p *parser) genEtherProto(t token, v uint32) node {
	switch v {
	case 0xfe, 0x06, 0xf0, 0xe0, 0x809b, 0x80f3:
		// OSI, IP-over-LLC, NetBEUI, IPX, AppleTalk: libpcap checks
		// several encapsulations for these.
		if p.link.kind == linkEthernet || p.link.kind == linkSLL {
			p.fail(t, true, "ether proto %#x not supported (libpcap's special LLC/SNAP encapsulations)", v)
		}
	}
	if v <= 1500 {
		switch p.link.kind {
		case linkEthernet:
			isLLC := nNot{&nTest{size: 2, off: 12 + p.shift, op: xbpf.JumpGreaterThan, vals: []uint32{1500}}}
			return and(isLLC, cmp(1, 14+p.shift, v))
		case linkSLL:
			return and(cmp(2, 14, 4 /* LINUX_SLL_P_802_2 */), cmp(1, 16, v))
		}
	}
	return p.linktype(v)
}

// parseMAC parses a MAC address as libpcap's scanner does: six groups of 1
// or 2 hex digits separated by ':', '-' or '.', three groups of up to 4
// separated by '.', or 12 hex digits.
func parseMAC(s string) ([6]byte, bool) {
	var a [6]byte
	hexv := func(g string) (uint32, bool) {
		if g == "" {
			return 0, false
		}
		v := uint32(0)
		for i := 0; i < len(g); i++ {
			c := g[i]
			switch {
			case c >= '0' && c <= '9':
				c -= '0'
			case c|0x20 >= 'a' && c|0x20 <= 'f':
				c = c | 0x20 - 'a' + 10
			default:
				return 0, false
			}
			v = v<<4 | uint32(c)
		}
		return v, true
	}
	for _, sep := range []string{":", "-", "."} {
		g := strings.Split(s, sep)
		if len(g) == 6 {
			for i, x := range g {
				v, ok := hexv(x)
				if !ok || len(x) > 2 {
					return a, false
				}
				a[i] = byte(v)
			}
			return a, true
		}
	}
	if g := strings.Split(s, "."); len(g) == 3 {
		for i, x := range g {
			v, ok := hexv(x)
			if !ok || len(x) > 4 {
				return a, false
			}
			a[2*i], a[2*i+1] = byte(v>>8), byte(v)
		}
		return a, true
	}
	if len(s) == 12 {
		for i := range 6 {
			v, ok := hexv(s[2*i : 2*i+2])
			if !ok {
				return a, false
			}
			a[i] = byte(v)
		}
		return a, true
	}
	return a, false
}

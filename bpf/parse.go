package bpf

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Qualifiers of a primitive, as libpcap's grammar has them (pcap-filter(7):
// "type", "dir" and "proto" qualifiers).
const (
	pDefault uint8 = iota
	pIP
	pIP6
	pARP
	pRARP
	pTCP
	pUDP
	pSCTP
	pICMP
	pICMP6
	pIGMP
	pIGRP
	pPIM
	pVRRP
	pCARP
	pAH
	pESP
	pLink // ether, link, ppp, slip
)

var protoNames = map[string]uint8{
	"ip": pIP, "ip6": pIP6, "arp": pARP, "rarp": pRARP, "tcp": pTCP,
	"udp": pUDP, "sctp": pSCTP, "icmp": pICMP, "icmp6": pICMP6,
	"igmp": pIGMP, "igrp": pIGRP, "pim": pPIM, "vrrp": pVRRP, "carp": pCARP,
	"ah": pAH, "esp": pESP,
}

// linkNames are libpcap's names of the link-layer qualifier.
var linkNames = map[string]bool{"ether": true, "link": true, "ppp": true, "slip": true}

func protoString(p uint8) string {
	if p == pLink {
		return "link"
	}
	for k, v := range protoNames {
		if v == p {
			return k
		}
	}
	return "?"
}

const (
	dDefault uint8 = iota
	dSrc
	dDst
	dOr  // src or dst
	dAnd // src and dst
)

const (
	aDefault uint8 = iota
	aHost
	aNet
	aPort
	aPortrange
	aProto
)

// qual is the qualifier set of a primitive; bad marks the "no qualifiers
// to inherit" state that follows a protocol primitive or vlan.
type qual struct {
	proto, dir, addr uint8
	bad              bool
}

// Keywords of pcap-filter(7) outside the subset, so that they are reported
// as such rather than as names that cannot be looked up.
var unsupportedKeywords = map[string]string{
	"fddi": "FDDI primitives", "tr": "token ring primitives", "wlan": "802.11 primitives",
	"gateway": "gateway (it needs host name lookups)", "inbound": "direction (inbound)",
	"outbound": "direction (outbound)", "ifname": "pflog primitives", "on": "pflog primitives",
	"rnr": "pflog primitives", "rulenum": "pflog primitives", "reason": "pflog primitives",
	"rset": "pflog primitives", "ruleset": "pflog primitives", "srnr": "pflog primitives",
	"subrulenum": "pflog primitives", "action": "pflog primitives", "ifindex": "ifindex",
	"mpls": "mpls", "pppoed": "pppoed", "pppoes": "pppoes", "geneve": "geneve",
	"lane": "ATM primitives", "llc": "llc", "oam": "ATM primitives", "oamf4": "ATM primitives",
	"oamf4ec": "ATM primitives", "oamf4sc": "ATM primitives", "metac": "ATM primitives",
	"bcc": "ATM primitives", "sc": "ATM primitives", "ilmic": "ATM primitives",
	"connectmsg": "ATM primitives", "metaconnect": "ATM primitives", "vpi": "ATM primitives",
	"vci": "ATM primitives", "type": "802.11 type", "subtype": "802.11 subtype",
	"dir": "802.11 dir", "addr1": "802.11 addresses", "addr2": "802.11 addresses",
	"addr3": "802.11 addresses", "addr4": "802.11 addresses", "ra": "802.11 addresses",
	"ta": "802.11 addresses", "protochain": "protochain", "decnet": "DECnet",
	"lat": "DECnet", "sca": "DECnet", "moprc": "DECnet", "mopdl": "DECnet",
	"atalk": "AppleTalk", "aarp": "AppleTalk", "iso": "OSI", "esis": "OSI",
	"isis": "OSI", "clnp": "OSI", "stp": "stp", "ipx": "ipx", "netbeui": "netbeui",
	"radio": "radio", "hdlc": "hdlc", "arcnet": "arcnet",
	"arc": "arcnet", "ip6multicast": "multicast", "ipv6": "ipv6 (use ip6)",
	"l1": "OSI", "l2": "OSI", "iih": "OSI", "lsp": "OSI", "snp": "OSI",
	"csnp": "OSI", "psnp": "OSI",
}

// parser turns the tokens of one expression into a node tree, generating
// each primitive's tests as it is read (vlan changes the offsets of what
// follows it, in reading order, as in libpcap).
type parser struct {
	expr  string
	toks  []token
	i     int
	link  linkInfo
	shift uint32 // octets of VLAN tags that "vlan" primitives have skipped
	last  qual   // qualifiers an id after and/or inherits
	have  bool   // last is set (a qualified primitive was read)
	vlan  bool   // a vlan primitive was compiled
}

// fail aborts parsing with an *Error at tok; Compile recovers it.
func (p *parser) fail(tok token, unsupported bool, format string, args ...any) {
	panic(&Error{Expr: p.expr, Pos: tok.pos, Token: tok.text, Msg: fmt.Sprintf(format, args...), Unsupported: unsupported})
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) parse() node {
	if p.peek().kind == tEOF {
		return nConst(true) // an empty expression accepts everything
	}
	n := p.parseExpr()
	if t := p.peek(); t.kind != tEOF {
		p.unexpected(t)
	}
	return n
}

func (p *parser) unexpected(t token) {
	switch t.kind {
	case tBad:
		p.badToken(t)
	case tEOF:
		p.fail(t, false, "syntax error: unexpected end of expression")
	case tRParen:
		p.fail(t, false, "syntax error: unbalanced parenthesis")
	}
	p.fail(t, false, "syntax error at %q", t.text)
}

func (p *parser) badToken(t token) {
	p.fail(t, false, "syntax error at %q", t.text)
}

// parseExpr reads terms joined by and/or, which have equal precedence and
// associate to the left (pcap-filter(7)).
func (p *parser) parseExpr() node {
	n := p.parseTerm()
	for {
		switch p.peek().kind {
		case tAnd:
			p.next()
			n = nAnd{n, p.parseTerm()}
		case tOr:
			p.next()
			n = orNode(n, p.parseTerm())
		default:
			return n
		}
	}
}

// parseTerm reads "not term", a parenthesised expression, a primitive or a
// bare id that inherits the previous qualifiers.
func (p *parser) parseTerm() node {
	t := p.peek()
	switch t.kind {
	case tNot:
		p.next()
		return nNot{p.parseTerm()}
	case tLParen:
		if n, ok := p.tryRelation(); ok {
			return n
		}
		p.next()
		n := p.parseExpr()
		if r := p.next(); r.kind != tRParen {
			p.unexpected(r)
		}
		return n
	case tWord, tOp:
		if p.startsArith() {
			return p.parseRelation()
		}
		if t.kind == tWord {
			return p.parsePrimitive()
		}
	}
	p.unexpected(t)
	return nil
}

func isDir(w string) bool { return w == "src" || w == "dst" }
func isAddrType(w string) bool {
	return w == "host" || w == "net" || w == "port" || w == "portrange"
}

func (p *parser) parsePrimitive() node {
	t := p.peek()
	w := t.text
	switch w {
	case "vlan":
		return p.parseVLAN()
	case "less", "greater":
		return p.parseLength()
	case "broadcast", "multicast":
		p.next()
		p.last, p.have = qual{bad: true}, true
		return p.genCast(t, pDefault, w)
	}
	if linkNames[w] {
		nx := p.peekAt(1)
		if nx.kind == tWord && (isDir(nx.text) || isAddrType(nx.text) || nx.text == "proto") {
			p.next()
			return p.parseHead(qual{proto: pLink})
		}
		if nx.kind == tWord && (nx.text == "broadcast" || nx.text == "multicast") {
			p.next()
			p.next()
			p.last, p.have = qual{bad: true}, true
			return p.genCast(nx, pLink, nx.text)
		}
		if nx.kind == tWord && nx.text == "protochain" {
			p.fail(nx, false, "'protochain' modifier applied to link")
		}
		p.fail(t, false, "syntax error at %q: link layer applied in wrong context", w)
	}
	if pr, ok := protoNames[w]; ok {
		nx := p.peekAt(1)
		if nx.kind == tWord && (isDir(nx.text) || isAddrType(nx.text) || nx.text == "proto") {
			p.next()
			return p.parseHead(qual{proto: pr})
		}
		if nx.kind == tWord && (nx.text == "broadcast" || nx.text == "multicast") {
			p.next()
			p.next()
			p.last, p.have = qual{bad: true}, true
			return p.genCast(token{tWord, p.expr[t.pos : nx.pos+len(nx.text)], t.pos}, pr, nx.text)
		}
		if nx.kind == tWord && nx.text == "protochain" {
			// Valid for libpcap, outside the subset: its program walks
			// the IPv6 extension headers in a loop.
			p.fail(token{tWord, p.expr[t.pos : nx.pos+len(nx.text)], t.pos}, true, "protochain not supported (use proto, or ip6 proto 44 for fragments)")
		}
		p.next()
		p.last, p.have = qual{bad: true}, true
		return p.protoAbbrev(pr, t)
	}
	if isDir(w) || isAddrType(w) || w == "proto" {
		return p.parseHead(qual{})
	}
	if why, ok := unsupportedKeywords[w]; ok {
		p.fail(t, true, "%s not supported", why)
	}
	// A bare id: it takes the qualifiers of the term before it.
	if !p.have {
		p.fail(t, false, "syntax error at %q: an address or number needs a qualifier (host, net, port...)", w)
	}
	if p.last.bad {
		p.fail(t, false, "syntax error at %q: no qualifiers to inherit from the term before it", w)
	}
	return p.parseID(p.last)
}

// parseHead reads the direction and type qualifiers after an optional
// protocol qualifier, then the id.
func (p *parser) parseHead(q qual) node {
	if t := p.peek(); t.kind == tWord && isDir(t.text) {
		p.next()
		q.dir = dSrc
		if t.text == "dst" {
			q.dir = dDst
		}
		// "src or dst", "dst and src"...
		if op := p.peek(); op.kind == tAnd || op.kind == tOr {
			if o := p.peekAt(1); o.kind == tWord && isDir(o.text) && o.text != t.text {
				p.next()
				p.next()
				q.dir = dOr
				if op.kind == tAnd {
					q.dir = dAnd
				}
			}
		}
	}
	if t := p.peek(); t.kind == tWord {
		switch t.text {
		case "host":
			q.addr = aHost
		case "net":
			q.addr = aNet
		case "port":
			q.addr = aPort
		case "portrange":
			q.addr = aPortrange
		case "proto":
			q.addr = aProto
		}
		if q.addr != aDefault {
			p.next()
		}
	}
	p.last, p.have = q, true
	return p.parseID(q)
}

// parseID reads the id of a primitive (an address, a CIDR prefix, a number,
// a port range) and generates its tests under qualifiers q.
func (p *parser) parseID(q qual) node {
	t := p.next()
	switch t.kind {
	case tWord:
	case tNot, tLParen:
		// "port 80 and not 22", "host a and (b or c)": handled by the
		// caller's grammar when it is a bare id; after a head, libpcap wants
		// an id here.
		p.unexpected(t)
	default:
		p.unexpected(t)
	}
	w := t.text
	if q.proto == pLink {
		return p.parseLinkID(t, q)
	}
	if _, isMAC := parseMAC(w); isMAC && strings.ContainsAny(w, ":-") && (q.addr == aDefault || q.addr == aHost) {
		p.fail(t, false, "ethernet address used in non-ether expression")
	}
	if strings.HasPrefix(w, "\\") {
		if q.addr != aProto {
			p.fail(t, false, "syntax error at %q", w)
		}
		v, ok := ipProtoNames[w[1:]]
		if !ok {
			p.fail(t, true, "unknown protocol name %q (use a number)", w[1:])
		}
		return p.genProto(t, v, q)
	}
	switch q.addr {
	case aPort, aPortrange:
		return p.genPortID(t, q)
	case aProto:
		v, ok := parseNum(w)
		if !ok {
			if _, known := protoNames[w]; known {
				p.fail(t, false, "syntax error at %q: write \\%s for the protocol name", w, w)
			}
			p.fail(t, true, "protocol names are not looked up (unsupported %q); use a number", w)
		}
		return p.genProto(t, v, q)
	}
	// host, net or the default type.
	if strings.Contains(w, ":") {
		return p.genIPv6ID(t, q)
	}
	if v, ok := parseNum(w); ok && !strings.Contains(w, ".") {
		if nx := p.peek(); nx.kind == tSlash || (nx.kind == tWord && nx.text == "mask") {
			p.fail(nx, false, "syntax error at %q: a prefix needs a dotted address (10.0.0.0/8)", nx.text)
		}
		mask := uint32(0xffffffff)
		if q.addr == aNet {
			// Promote a short net number: "net 10" is 10.0.0.0/8.
			for v != 0 && v&0xff000000 == 0 {
				v <<= 8
				mask <<= 8
			}
		}
		return p.genHost(t, v, mask, q)
	}
	if _, _, ok := atoin(w); ok {
		return p.genIPv4ID(t, q)
	}
	if isDottedNumber(w) {
		// libpcap's scanner takes 2 to 4 dotted numbers as an address,
		// never as a host name: a part over 255 makes it invalid.
		p.fail(t, false, "invalid IPv4 address %s", w)
	}
	p.fail(t, true, "host names are not looked up (unsupported %q); use an address", w)
	return nil
}

var ipProtoNames = map[string]uint32{
	"ip": 0, "icmp": 1, "igmp": 2, "tcp": 6, "udp": 17, "ip6": 41, "gre": 47,
	"esp": 50, "ah": 51, "icmp6": 58, "pim": 103, "vrrp": 112, "sctp": 132,
}

// genIPv4ID handles A, A/LEN and A mask M for a dotted (possibly
// abbreviated) IPv4 address.
func (p *parser) genIPv4ID(t token, q qual) node {
	v, vlen, ok := atoin(t.text)
	if !ok {
		p.fail(t, false, "invalid address %q", t.text)
	}
	v <<= 32 - vlen
	switch nx := p.peek(); {
	case nx.kind == tSlash:
		p.next()
		lt := p.next()
		n, ok := parseNum(lt.text)
		if lt.kind != tWord || !ok {
			p.unexpected(lt)
		}
		if n > 32 {
			p.fail(lt, false, "mask length must be <= 32")
		}
		m := uint32(0)
		if n != 0 {
			m = 0xffffffff << (32 - n)
		}
		if v&^m != 0 {
			p.fail(t, false, "non-network bits set in \"%s/%d\"", t.text, n)
		}
		if q.addr != aNet && q.addr != aDefault {
			p.fail(t, false, "Mask syntax for networks only")
		}
		return p.genHost(t, v, m, q)
	case nx.kind == tWord && nx.text == "mask":
		p.next()
		mt := p.next()
		m, mlen, ok := atoin(mt.text)
		if mt.kind == tWord && !ok && isDottedNumber(mt.text) {
			p.fail(mt, false, "invalid IPv4 address %s", mt.text)
		}
		if mt.kind != tWord || !ok {
			p.unexpected(mt)
		}
		m <<= 32 - mlen
		if v&^m != 0 {
			p.fail(t, false, "non-network bits set in \"%s mask %s\"", t.text, mt.text)
		}
		if q.addr != aNet {
			p.fail(t, false, "Mask syntax for networks only")
		}
		return p.genHost(t, v, m, q)
	}
	mask := uint32(0xffffffff) << (32 - vlen)
	return p.genHost(t, v, mask, q)
}

func (p *parser) genIPv6ID(t token, q qual) node {
	a, err := netip.ParseAddr(t.text)
	if err != nil || a.Zone() != "" {
		p.fail(t, false, "invalid IPv6 address %q", t.text)
	}
	bits := 128
	if p.peek().kind == tSlash {
		p.next()
		lt := p.next()
		n, ok := parseNum(lt.text)
		if lt.kind != tWord || !ok {
			p.unexpected(lt)
		}
		if n > 128 {
			p.fail(lt, false, "mask length must be <= 128")
		}
		bits = int(n)
		if pf, _ := a.Prefix(bits); pf.Addr() != a {
			p.fail(t, false, "non-network bits set in \"%s/%d\"", t.text, n)
		}
	}
	switch q.addr {
	case aDefault, aHost:
		if bits != 128 {
			p.fail(t, false, "Mask syntax for networks only")
		}
	case aNet:
	default:
		p.fail(t, false, "invalid qualifier against IPv6 address")
	}
	return p.genHost6(t, a.As16(), bits, q)
}

func (p *parser) genPortID(t token, q qual) node {
	what := "port"
	if q.addr == aPortrange {
		what = "portrange"
	}
	switch q.proto {
	case pDefault, pTCP, pUDP, pSCTP:
	default:
		p.fail(t, false, "illegal qualifier of '%s'", what)
	}
	lo, hi, ok := uint32(0), uint32(0), false
	if q.addr == aPortrange {
		if a, b, found := strings.Cut(t.text, "-"); found {
			var ok1, ok2 bool
			lo, ok1 = parseNum(a)
			hi, ok2 = parseNum(b)
			ok = ok1 && ok2
		} else {
			lo, ok = parseNum(t.text)
			hi = lo
		}
	} else {
		lo, ok = parseNum(t.text)
		hi = lo
	}
	if !ok {
		if !isNameLike(t.text) && !(q.addr == aPortrange && strings.Contains(t.text, "-")) {
			p.fail(t, false, "illegal %s %q", what, t.text)
		}
		return p.genPortName(t, q)
	}
	return p.portPrim(t, q, lo, hi)
}

func (p *parser) portPrim(t token, q qual, lo, hi uint32) node {
	for _, v := range [2]uint32{lo, hi} {
		if v > 65535 {
			p.fail(t, false, "illegal port number %d > 65535", v)
		}
	}
	if lo > hi {
		lo, hi = hi, lo
	}
	kind := uint8(primPort)
	if q.addr == aPortrange {
		kind = primRange
	}
	return &nPrim{kind: kind, q: q, shift: p.shift, vals: []primVal{{lo: lo, hi: hi}}}
}

// genPortName resolves a service name ("port http", "portrange
// ftp-data-ssh") as libpcap's gen_scode does: a name known for TCP only
// means TCP ports only, and contradicts a udp or sctp qualifier.
func (p *parser) genPortName(t token, q qual) node {
	var lo, hi, proto uint32
	inRange := ""
	if q.addr == aPortrange {
		// pcap_nametoportrange: cut at the first '-'.
		a, b, found := strings.Cut(t.text, "-")
		var ok1, ok2 bool
		var pa uint32
		lo, pa, ok1 = lookupService(a)
		hi, proto, ok2 = lookupService(b)
		if !found || !ok1 || !ok2 {
			p.fail(t, false, "unknown port in range '%s'", t.text)
		}
		if pa != proto {
			proto = 0
		}
		inRange = " in range"
	} else {
		var ok bool
		lo, proto, ok = lookupService(t.text)
		if !ok {
			p.fail(t, false, "unknown port '%s'", t.text)
		}
		hi = lo
	}
	name := func(pr uint32) string {
		if pr == protoTCP {
			return "tcp"
		}
		return "udp"
	}
	switch q.proto {
	case pTCP, pUDP, pSCTP:
		want := map[uint8]uint32{pTCP: protoTCP, pUDP: protoUDP, pSCTP: protoSCTP}[q.proto]
		if proto != 0 && proto != want {
			p.fail(t, false, "port%s '%s' is %s", inRange, t.text, name(proto))
		}
	default:
		switch proto {
		case protoTCP:
			q.proto = pTCP
		case protoUDP:
			q.proto = pUDP
		}
	}
	return p.portPrim(t, q, lo, hi)
}

func isNameLike(s string) bool {
	return s != "" && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}

func (p *parser) parseVLAN() node {
	t := p.next()
	if p.link.kind != linkEthernet {
		p.fail(t, false, "no VLAN support for %s", p.link.name)
	}
	var id uint32
	hasID := false
	if nx := p.peek(); nx.kind == tWord {
		if v, ok := parseNum(nx.text); ok {
			p.next()
			if v > 4095 {
				p.fail(nx, false, "VLAN tag %d greater than maximum 4095", v)
			}
			id, hasID = v, true
		}
	}
	p.last, p.have = qual{bad: true}, true
	p.vlan = true
	n := p.genVLAN(id, hasID)
	p.shift += 4
	return n
}

// parseNum parses a number the way libpcap's scanner does: decimal, 0x
// hexadecimal or 0 octal, at most 32 bits.
func parseNum(s string) (uint32, bool) {
	if s == "" {
		return 0, false
	}
	if v, ok := numNames[s]; ok {
		return v, true // tcpflags, tcp-syn, icmp-echo...
	}
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil || strings.ContainsRune(s, '_') {
		return 0, false
	}
	return uint32(v), true
}

// atoin parses a dotted IPv4 address of one to four decimal parts, as
// libpcap's __pcap_atoin: the value of the parts given, left-aligned by the
// caller with the returned bit length (8 per part).
func atoin(s string) (v uint32, bits uint32, ok bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return 0, 0, false
	}
	for _, part := range parts {
		if part == "" {
			return 0, 0, false
		}
		n := uint32(0)
		for i := 0; i < len(part); i++ {
			c := part[i]
			if c < '0' || c > '9' {
				return 0, 0, false
			}
			n = n*10 + uint32(c-'0')
			if n > 255 {
				// As libpcap's __pcap_atoin; leading zeros are fine
				// ("1.2.3.0004").
				return 0, 0, false
			}
		}
		v = v<<8 | n
	}
	return v, uint32(8 * len(parts)), true
}

// isDottedNumber reports whether s is 2 to 4 dot-separated decimal numbers,
// which libpcap's scanner reads as an IPv4 address (token HID), valid or
// not, rather than as a host name.
func isDottedNumber(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 4 {
		return false
	}
	for _, part := range parts {
		if part == "" || strings.Trim(part, "0123456789") != "" {
			return false
		}
	}
	return true
}

package bpf

import (
	xbpf "golang.org/x/net/bpf"
)

// Arithmetic and relational expressions (pcap-filter(7) "expr relop
// expr"): packet data accessors proto[expr:size], len, numbers, the
// operators + - * / % & | ^ << >> and unary minus.
//
// The code follows libpcap's gencode.c and its optimizer where they decide
// verdicts: an accessor only applies to packets of its protocol (the
// protocol checks are ANDed before the relation); a binary operator keeps
// the protocol checks of its left operand only (libpcap's gen_arth drops
// those of the right one, so "0 + tcp[0] = 1" has no TCP check); constant
// operands are folded, and "x * 0", "x & 0", "0 * x", "0 / x"... become 0
// without the loads of x, as the optimizer leaves them.

// Kinds of aexp.
const (
	axConst = iota + 1
	axLen
	axLoad
	axBin
	axNeg
)

// aexp is an arithmetic expression.
type aexp struct {
	kind uint8
	k    uint32     // axConst
	op   xbpf.ALUOp // axBin
	l, r *aexp      // axBin operands; axNeg operand (l); axLoad index (l, nil when constant)
	// axLoad: the value of size octets at off (+ the index, + X = the IPv4
	// header length when msh, read from hl).
	size int
	off  uint32
	msh  bool
	hl   uint32
	// checks are the protocol tests the value depends on (nil: none).
	checks node
	// lit/first: the first instruction libpcap generates for the
	// expression loads the literal first ("ld #first"); libpcap refuses a
	// division by such a literal 0 even when the operand is not constant.
	lit   bool
	first uint32
	// poison is an error libpcap's optimizer reports when it folds the
	// expression (a division by a computed 0), which it does only if the
	// code is reachable: not when the protocol checks are always false.
	poison *Error
}

func (e *aexp) isConst() bool { return e.kind == axConst }

func aconst(k uint32) *aexp { return &aexp{kind: axConst, k: k, lit: true, first: k} }

// Named numbers of libpcap's scanner (pcap-filter(7)): offsets and values
// for the TCP, ICMP and ICMPv6 header fields.
var numNames = map[string]uint32{
	"tcpflags": 13, "tcp-fin": 0x01, "tcp-syn": 0x02, "tcp-rst": 0x04,
	"tcp-push": 0x08, "tcp-ack": 0x10, "tcp-urg": 0x20, "tcp-ece": 0x40, "tcp-cwr": 0x80,
	"icmptype": 0, "icmpcode": 1, "icmp-echoreply": 0, "icmp-unreach": 3,
	"icmp-sourcequench": 4, "icmp-redirect": 5, "icmp-echo": 8, "icmp-routeradvert": 9,
	"icmp-routersolicit": 10, "icmp-timxceed": 11, "icmp-paramprob": 12, "icmp-tstamp": 13,
	"icmp-tstampreply": 14, "icmp-ireq": 15, "icmp-ireqreply": 16, "icmp-maskreq": 17,
	"icmp-maskreply": 18,
	// ICMPv6.
	"icmp6type": 0, "icmp6code": 1, "icmp6-destinationunreach": 1, "icmp6-packettoobig": 2,
	"icmp6-timeexceeded": 3, "icmp6-parameterproblem": 4, "icmp6-echo": 128,
	"icmp6-echoreply": 129, "icmp6-multicastlistenerquery": 130,
	"icmp6-multicastlistenerreportv1": 131, "icmp6-multicastlistenerdone": 132,
	"icmp6-routersolicit": 133, "icmp6-routeradvert": 134, "icmp6-neighborsolicit": 135,
	"icmp6-neighboradvert": 136, "icmp6-redirect": 137, "icmp6-routerrenum": 138,
	"icmp6-nodeinformationquery": 139, "icmp6-nodeinformationresponse": 140,
	"icmp6-ineighbordiscoverysolicit": 141, "icmp6-ineighbordiscoveryadvert": 142,
	"icmp6-multicastlistenerreportv2": 143, "icmp6-homeagentdiscoveryrequest": 144,
	"icmp6-homeagentdiscoveryreply": 145, "icmp6-mobileprefixsolicit": 146,
	"icmp6-mobileprefixadvert": 147, "icmp6-certpathsolicit": 148,
	"icmp6-certpathadvert": 149, "icmp6-multicastrouteradvert": 151,
	"icmp6-multicastroutersolicit": 152, "icmp6-multicastrouterterm": 153,
}

// Kinds of accessor, by what the offset is relative to.
const (
	accLink  = iota + 1 // the link-layer header
	accNet              // the network header of ethertype et
	accTrans            // the IPv4 payload of IP protocol proto
	accICMP6            // the ICMPv6 header after a fixed IPv6 header
)

type accessor struct {
	kind  int
	et    uint32
	proto uint32
}

// accessors are the protocol names libpcap's gen_load takes.
var accessors = map[string]accessor{
	"ether": {kind: accLink}, "link": {kind: accLink}, "ppp": {kind: accLink}, "slip": {kind: accLink},
	"ip": {accNet, etherIPv4, 0}, "ip6": {accNet, etherIPv6, 0},
	"arp": {accNet, etherARP, 0}, "rarp": {accNet, etherRARP, 0},
	"tcp": {accTrans, 0, protoTCP}, "udp": {accTrans, 0, protoUDP}, "sctp": {accTrans, 0, protoSCTP},
	"icmp": {accTrans, 0, protoICMP}, "igmp": {accTrans, 0, 2}, "igrp": {accTrans, 0, 9},
	"pim": {accTrans, 0, 103}, "vrrp": {accTrans, 0, 112}, "carp": {accTrans, 0, 112},
	"icmp6": {kind: accICMP6},
}

var aluOps = map[string]xbpf.ALUOp{
	"+": xbpf.ALUOpAdd, "-": xbpf.ALUOpSub, "*": xbpf.ALUOpMul, "/": xbpf.ALUOpDiv,
	"%": xbpf.ALUOpMod, "&": xbpf.ALUOpAnd, "|": xbpf.ALUOpOr, "^": xbpf.ALUOpXor,
	"<<": xbpf.ALUOpShiftLeft, ">>": xbpf.ALUOpShiftRight,
}

// Binding powers of libpcap's grammar (%left '|', '&', LSH RSH, '+' '-',
// '*' '/'). '%' and '^' have none there, so yacc shifts on them: "a ^ b"
// takes everything after it as its right operand, and an operator before
// "b ^ ..." takes the whole "b ^ ..." as its right operand.
func binPrec(op string) int {
	switch op {
	case "|":
		return 1
	case "&":
		return 2
	case "<<", ">>":
		return 3
	case "+", "-":
		return 4
	case "*", "/":
		return 5
	case "%", "^":
		return 6 // no precedence: see parseArithPrec
	}
	return 0
}

func isRelop(t token) bool {
	if t.kind != tOp {
		return false
	}
	switch t.text {
	case ">", "<", ">=", "<=", "=", "==", "!=":
		return true
	}
	return false
}

// startsArith reports whether the word at the parser's position begins an
// arithmetic expression rather than a primitive.
func (p *parser) startsArith() bool {
	t := p.peek()
	if t.kind == tOp && t.text == "-" {
		return true
	}
	if t.kind != tWord {
		return false
	}
	if t.text == "len" {
		return true
	}
	nx := p.peekAt(1)
	if _, ok := accessors[t.text]; ok && nx.kind == tLBrack {
		return true
	}
	if _, ok := parseNum(t.text); ok && (nx.kind == tOp || nx.kind == tSlash) {
		return true
	}
	return false
}

// tryRelation reads "arith relop arith" at a '(' when what follows is an
// arithmetic expression and a relational operator; otherwise it leaves the
// position as it was, for a parenthesised boolean expression.
func (p *parser) tryRelation() (n node, ok bool) {
	save := p.i
	var l *aexp
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, isErr := r.(*Error); !isErr {
					panic(r)
				}
				l = nil
			}
		}()
		l = p.parseArith()
	}()
	if l == nil || !isRelop(p.peek()) {
		// Not a relation: read it again as a parenthesised expression.
		p.i = save
		return nil, false
	}
	return p.finishRelation(l), true
}

// parseRelation reads "arith relop arith".
func (p *parser) parseRelation() node {
	return p.finishRelation(p.parseArith())
}

func (p *parser) finishRelation(l *aexp) node {
	t := p.next()
	if !isRelop(t) {
		p.unexpected(t)
	}
	r := p.parseArith()
	p.last, p.have = qual{bad: true}, true
	p.checkRegs(l, r)
	// libpcap's gen_relation: '<' is not '>=', '<=' not '>', '!=' not '='.
	var op xbpf.JumpTest
	neg := false
	switch t.text {
	case ">":
		op = xbpf.JumpGreaterThan
	case ">=":
		op = xbpf.JumpGreaterOrEqual
	case "<":
		op, neg = xbpf.JumpGreaterOrEqual, true
	case "<=":
		op, neg = xbpf.JumpGreaterThan, true
	case "!=":
		op, neg = xbpf.JumpEqual, true
	default:
		op = xbpf.JumpEqual
	}
	checks := l.checks
	if r.checks != nil {
		if checks == nil {
			checks = r.checks
		} else {
			checks = and(checks, r.checks)
		}
	}
	if poison := firstPoison(l, r); poison != nil {
		if v, known := constValue(checks); known && !v {
			return nConst(false)
		}
		panic(poison)
	}
	var rel node = &nRel{l: l, r: r, op: op}
	if l.isConst() && r.isConst() {
		v := false
		switch op {
		case xbpf.JumpGreaterThan:
			v = l.k > r.k
		case xbpf.JumpGreaterOrEqual:
			v = l.k >= r.k
		default:
			v = l.k == r.k
		}
		rel = nConst(v)
		if !v && checks != nil {
			// libpcap's optimizer keeps the checks' loads before a
			// relation that folded to false: a packet too short for
			// them is rejected even under "not".
			rel = nKeepFalse{}
		}
	}
	if neg {
		rel = nNot{rel}
	}
	if checks != nil {
		rel = and(checks, rel)
	}
	return rel
}

func firstPoison(es ...*aexp) *Error {
	for _, e := range es {
		if e != nil && e.poison != nil {
			return e.poison
		}
	}
	return nil
}

// constValue is the value of a test tree that does not depend on the
// packet.
func constValue(n node) (v, known bool) {
	switch n := n.(type) {
	case nConst:
		return bool(n), true
	case nNot:
		v, known := constValue(n.a)
		return !v, known
	case nAnd:
		a, ka := constValue(n.a)
		b, kb := constValue(n.b)
		if (ka && !a) || (kb && !b) {
			return false, true
		}
		return true, ka && kb
	case nOr:
		a, ka := constValue(n.a)
		b, kb := constValue(n.b)
		if (ka && a) || (kb && b) {
			return true, true
		}
		return false, ka && kb
	}
	return false, false
}

// regs is how many scratch memory words evaluating e takes.
func regs(e *aexp) int {
	switch e.kind {
	case axLoad:
		if e.l == nil {
			return 0
		}
		n := regs(e.l)
		if e.msh {
			n = max(n, 1)
		}
		return n
	case axNeg:
		return regs(e.l)
	case axBin:
		if e.r.isConst() {
			return regs(e.l)
		}
		return max(regs(e.l), 1+regs(e.r))
	}
	return 0
}

func (p *parser) checkRegs(l, r *aexp) {
	n := regs(l)
	if !r.isConst() {
		n = max(n, 1+regs(r))
	}
	if n > 16 {
		p.fail(p.peek(), false, "too many registers needed to evaluate expression")
	}
}

// parseArith reads an arithmetic expression.
func (p *parser) parseArith() *aexp { return p.parseArithPrec(1) }

func (p *parser) parseArithPrec(min int) *aexp {
	l := p.parseUnary()
	for {
		t := p.peek()
		var op string
		switch t.kind {
		case tOp:
			op = t.text
		case tSlash:
			op = "/"
		default:
			return l
		}
		prec := binPrec(op)
		if prec == 0 {
			return l // a relational operator
		}
		if prec == 6 {
			// '%' and '^': the rest of the expression is the right operand.
			p.next()
			l = p.binary(t, op, l, p.parseArithPrec(1))
			continue
		}
		if prec < min {
			return l
		}
		p.next()
		l = p.binary(t, op, l, p.parseArithPrec(prec+1))
	}
}

func (p *parser) parseUnary() *aexp {
	t := p.peek()
	if t.kind == tOp && t.text == "-" {
		p.next()
		e := p.parseUnary()
		// yacc shifts '%' and '^' after "- e" too: -(e % ...).
		for nx := p.peek(); nx.kind == tOp && (nx.text == "%" || nx.text == "^"); nx = p.peek() {
			p.next()
			e = p.binary(nx, nx.text, e, p.parseArithPrec(1))
		}
		if e.isConst() {
			c := aconst(-e.k)
			c.lit, c.first, c.checks, c.poison = e.lit, e.first, e.checks, e.poison
			return c
		}
		return &aexp{kind: axNeg, l: e, checks: e.checks, lit: e.lit, first: e.first, poison: e.poison}
	}
	return p.parsePrimary()
}

func (p *parser) parsePrimary() *aexp {
	t := p.next()
	switch t.kind {
	case tLParen:
		e := p.parseArith()
		if r := p.next(); r.kind != tRParen {
			p.unexpected(r)
		}
		return e
	case tWord:
		if t.text == "len" {
			return &aexp{kind: axLen}
		}
		if acc, ok := accessors[t.text]; ok && p.peek().kind == tLBrack {
			return p.parseAccessor(t, acc)
		}
		if v, ok := parseNum(t.text); ok {
			return aconst(v)
		}
		if isNumberLike(t.text) {
			p.fail(t, false, "number %s overflows 32 bits", t.text)
		}
	}
	p.unexpected(t)
	return nil
}

// isNumberLike: a decimal or 0x number too large for parseNum.
func isNumberLike(s string) bool {
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s = s[2:]
		for i := 0; i < len(s); i++ {
			c := s[i] | 0x20
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseAccessor reads "[expr]" or "[expr:size]" after a protocol name
// (libpcap gen_load).
func (p *parser) parseAccessor(name token, acc accessor) *aexp {
	p.next() // '['
	idx := p.parseArith()
	size := 1
	if p.peek().kind == tColon {
		p.next()
		st := p.next()
		v, ok := parseNum(st.text)
		if st.kind != tWord || !ok {
			p.unexpected(st)
		}
		if v != 1 && v != 2 && v != 4 {
			p.fail(st, false, "data size must be 1, 2, or 4")
		}
		size = int(v)
	}
	if r := p.next(); r.kind != tRBrack {
		p.unexpected(r)
	}
	e := &aexp{kind: axLoad, size: size, lit: idx.lit, first: idx.first, poison: idx.poison}
	nl := p.nl()
	var checks node
	switch acc.kind {
	case accLink:
		checks = idx.checks
	case accNet:
		e.off = nl
		checks = p.linktype(acc.et)
		if idx.checks != nil {
			checks = and(idx.checks, checks)
		}
	case accTrans:
		e.off, e.msh, e.hl = nl, true, nl
		notFrag := nNot{&nTest{size: 2, off: nl + 6, op: xbpf.JumpBitsSet, vals: []uint32{0x1fff}}}
		checks = and(cmp(1, nl+9, acc.proto), notFrag)
		if idx.checks != nil {
			checks = and(idx.checks, checks)
		}
		checks = and(p.linktype(etherIPv4), checks)
	case accICMP6:
		e.off = nl + 40
		checks = p.linktype(etherIPv6)
		if idx.checks != nil {
			checks = and(idx.checks, checks)
		}
		checks = and(checks, cmp(1, nl+6, protoICMPv6))
	}
	e.checks = checks
	if idx.isConst() {
		e.off += idx.k // wraps as libpcap's constant offsets do
	} else {
		e.l = idx
	}
	return e
}

// binary builds "l op r", folding constants as libpcap's optimizer does
// and refusing what libpcap refuses.
func (p *parser) binary(t token, opText string, l, r *aexp) *aexp {
	op := aluOps[opText]
	// gen_arth's checks, on the first instruction of the right operand.
	if r.lit {
		switch {
		case op == xbpf.ALUOpDiv && r.first == 0:
			p.fail(t, false, "division by zero")
		case op == xbpf.ALUOpMod && r.first == 0:
			p.fail(t, false, "modulus by zero")
		case (op == xbpf.ALUOpShiftLeft || op == xbpf.ALUOpShiftRight) && r.first > 31:
			p.fail(t, false, "shift by more than 31 bits")
		}
	}
	res := func(e *aexp) *aexp {
		e.checks, e.lit, e.first, e.poison = l.checks, l.lit, l.first, firstPoison(l, r)
		return e
	}
	poisoned := func(msg string) *aexp {
		e := res(&aexp{kind: axConst})
		if e.poison == nil {
			e.poison = &Error{Expr: p.expr, Pos: t.pos, Token: t.text, Msg: msg}
		}
		return e
	}
	if firstPoison(l, r) != nil {
		return res(&aexp{kind: axConst}) // an error, unless unreachable
	}
	if r.isConst() {
		k := r.k
		switch {
		case op == xbpf.ALUOpDiv && k == 0:
			return poisoned("division by zero")
		case op == xbpf.ALUOpMod && k == 0:
			return poisoned("modulus by zero")
		case l.isConst():
			return res(&aexp{kind: axConst, k: fold(op, l.k, k)})
		case (op == xbpf.ALUOpShiftLeft || op == xbpf.ALUOpShiftRight) && k > 31:
			return poisoned("shift by more than 31 bits")
		case k == 0 && (op == xbpf.ALUOpMul || op == xbpf.ALUOpAnd):
			return res(&aexp{kind: axConst, k: 0})
		case k == 0:
			return l // + - | ^ << >> 0: the identity
		}
	}
	if l.isConst() && l.k == 0 {
		switch op {
		case xbpf.ALUOpMul, xbpf.ALUOpDiv, xbpf.ALUOpMod, xbpf.ALUOpAnd, xbpf.ALUOpShiftLeft, xbpf.ALUOpShiftRight:
			return res(&aexp{kind: axConst, k: 0})
		}
	}
	return res(&aexp{kind: axBin, op: op, l: l, r: r})
}

func fold(op xbpf.ALUOp, a, b uint32) uint32 {
	switch op {
	case xbpf.ALUOpAdd:
		return a + b
	case xbpf.ALUOpSub:
		return a - b
	case xbpf.ALUOpMul:
		return a * b
	case xbpf.ALUOpDiv:
		return a / b
	case xbpf.ALUOpMod:
		return a % b
	case xbpf.ALUOpAnd:
		return a & b
	case xbpf.ALUOpOr:
		return a | b
	case xbpf.ALUOpXor:
		return a ^ b
	case xbpf.ALUOpShiftLeft:
		if b > 31 {
			return 0
		}
		return a << b
	case xbpf.ALUOpShiftRight:
		if b > 31 {
			return 0
		}
		return a >> b
	}
	return 0
}

// nRel is "l op r" (op: =, > or >=) over arithmetic expressions, without
// its protocol checks.
type nRel struct {
	l, r *aexp
	op   xbpf.JumpTest
}

func (*nRel) isNode() {}

// nKeepFalse is false, but not folded away with the tests before it.
type nKeepFalse struct{}

func (nKeepFalse) isNode() {}

// arith emits code leaving the value of e in A; sp is the first free
// scratch memory word.
func (g *codegen) arith(e *aexp, sp int) {
	emit := func(ins xbpf.Instruction) { g.out = append(g.out, pins{ins: ins}) }
	switch e.kind {
	case axConst:
		emit(xbpf.LoadConstant{Dst: xbpf.RegA, Val: e.k})
	case axLen:
		emit(xbpf.LoadExtension{Num: xbpf.ExtLen})
	case axNeg:
		g.arith(e.l, sp)
		emit(xbpf.NegateA{})
	case axBin:
		g.arith(e.l, sp)
		if e.r.isConst() {
			emit(xbpf.ALUOpConstant{Op: e.op, Val: e.r.k})
			return
		}
		emit(xbpf.StoreScratch{Src: xbpf.RegA, N: sp})
		g.arith(e.r, sp+1)
		emit(xbpf.TAX{})
		emit(xbpf.LoadScratch{Dst: xbpf.RegA, N: sp})
		emit(xbpf.ALUOpX{Op: e.op})
	case axLoad:
		switch {
		case e.l == nil && !e.msh:
			emit(xbpf.LoadAbsolute{Off: e.off, Size: e.size})
			return
		case e.l == nil:
			emit(xbpf.LoadMemShift{Off: e.hl})
		case !e.msh:
			g.arith(e.l, sp)
			emit(xbpf.TAX{})
		default:
			g.arith(e.l, sp)
			emit(xbpf.StoreScratch{Src: xbpf.RegA, N: sp})
			emit(xbpf.LoadMemShift{Off: e.hl})
			emit(xbpf.LoadScratch{Dst: xbpf.RegA, N: sp})
			emit(xbpf.ALUOpX{Op: xbpf.ALUOpAdd})
			emit(xbpf.TAX{})
		}
		emit(xbpf.LoadIndirect{Off: e.off, Size: e.size})
	}
}

// rel emits a relation's computation and its jump.
func (g *codegen) rel(n *nRel, t, f int) {
	g.arith(n.l, 0)
	if n.r.isConst() {
		g.out = append(g.out, pins{kind: piCond, cond: n.op, val: n.r.k, t: t, f: f})
		return
	}
	g.out = append(g.out, pins{ins: xbpf.StoreScratch{Src: xbpf.RegA, N: 0}})
	g.arith(n.r, 1)
	g.out = append(g.out, pins{ins: xbpf.TAX{}}, pins{ins: xbpf.LoadScratch{Dst: xbpf.RegA, N: 0}})
	g.out = append(g.out, pins{kind: piCond, cond: n.op, x: true, t: t, f: f})
}

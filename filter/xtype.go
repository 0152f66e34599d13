package filter

import (
	"regexp"
	"strconv"
	"strings"
)

// Typing of the expressions of expr.go, with tshark 4.0's rules (tshark -Y
// on the bundled captures): the left side of a relation starts with a
// field or a function ("Constant arithmetic expression on the LHS is
// invalid"); its first field gives the type that literals on either side
// are read as (iwarp_rdma.opcode + 2 == send); arithmetic applies to
// numbers, + and - to relative times, & to numbers, bytes and addresses;
// fields compare with fields of a compatible type.

// operandField resolves a word that must be a field in an expression.
func (p *parser) operandField(n *anode) (*field, error) {
	name := n.tok
	if isTypeName(name.text) {
		return nil, errAt(name.pos, strconv.Quote(name.text)+" is a protocol, a header or a record type (tshark: FT_NONE): it has no value to compute with; name one of its fields")
	}
	if c := name.text[0]; c >= '0' && c <= '9' {
		return nil, errAt(name.pos, "expected a field name, found the value "+strconv.Quote(name.text))
	}
	var f *field
	var err error
	if n.slice != nil {
		f, err = p.slice(name, *n.slice)
	} else {
		f, err = p.field(name)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case f.typ == fNone:
		return nil, errAt(name.pos, f.name+" is a protocol: it has no value to compute with")
	case f.typ == fObject:
		return nil, errAt(name.pos, f.name+" is "+article(f)+": name one of its members")
	case f.typ == fDyn:
		return nil, errAt(name.pos, f.name+" is "+article(f)+" of no fixed type: compare it with a value")
	}
	return f, nil
}

// fieldExpr is the expression of a field's values.
func fieldExpr(f *field) *xexpr {
	return &xexpr{op: xoField, t: xtype{k: kindOf(f), f: f}, fld: test{f: f, op: opPresent}}
}

// left compiles the left side of a relation (or a function's first
// argument): it starts with a field or a function.
func (p *parser) left(n *anode) (*xexpr, error) {
	switch n.kind {
	case aGroup:
		return p.left(n.l)
	case aStr:
		return nil, errAt(n.tok.pos, "the left side of a relation starts with a field or a function, not the value "+n.tok.text+" (tshark: constant expression on the left)")
	case aWord:
		if !isFieldName(n.tok.text) {
			return nil, errAt(n.tok.pos, "the left side of a relation starts with a field or a function, not the value "+strconv.Quote(n.tok.text)+" (write the field first: ddp.msn + 1, not 1 + ddp.msn)")
		}
		f, err := p.operandField(n)
		if err != nil {
			return nil, err
		}
		return fieldExpr(f), nil
	case aNeg:
		x, err := p.left(n.l)
		if err != nil {
			return nil, err
		}
		return p.negate(n, x)
	case aBin:
		l, err := p.left(n.l)
		if err != nil {
			return nil, err
		}
		return p.binary(n, l)
	}
	return p.callExpr(n)
}

// isTypeName reports whether w is a protocol, a header or a record type
// (conn is also the connection id, a field).
func isTypeName(w string) bool {
	k, ok := shorthand(w)
	return ok && k != "conn"
}

// isFieldName reports whether a word reads as a name rather than a value:
// it does not start with a digit, and it is not a keyword of a value.
func isFieldName(w string) bool {
	if c := w[0]; c >= '0' && c <= '9' {
		return false
	}
	if _, ok := parseBool(w); ok {
		return false
	}
	_, ok := resolve(w)
	if !ok {
		_, ok = shorthand(w)
	}
	return ok || strings.Contains(w, ".")
}

// right compiles an expression whose literals are read as values of want:
// the right side of a relation, a set's element, an operand after the
// first. arith says it is an operand of arithmetic, where a literal is a
// number (or octets, an address, seconds), not a value's name.
func (p *parser) right(n *anode, want xtype, o op, arith bool) (*xexpr, error) {
	switch n.kind {
	case aGroup:
		return p.right(n.l, want, o, arith)
	case aStr:
		return p.literal(n.tok, want, o, arith)
	case aWord:
		// A word that reads as a value is the value, as it was before
		// fields could be compared (tshark takes a field's name first;
		// no name of ours is also a value of the same type).
		if n.slice == nil {
			x, err := p.literal(n.tok, want, o, arith)
			if err == nil || !isFieldName(n.tok.text) {
				return x, err
			}
		}
		f, err := p.operandField(n)
		if err != nil {
			return nil, err
		}
		x := fieldExpr(f)
		return x, p.match(n.tok.pos, want, x.t)
	case aNeg:
		if n.l.kind == aWord && n.l.slice == nil && !isFieldName(n.l.tok.text) {
			// A negative number: tshark folds the negation of a
			// constant, and refuses one out of range (-2147483648 for a
			// 32-bit field: "2147483648 overflows gint32").
			if !want.k.isNumOrTime() {
				return nil, errAt(n.tok.pos, "a minus applies to numbers and times, not to "+kindName(want))
			}
			x, err := p.literal(n.l.tok, want, o, true)
			if err != nil {
				return nil, err
			}
			x.lit.neg = x.lit.u != 0
			x.lit.text = "-" + x.lit.text
			if x.v, err = litVal(x.t, &x.lit, n.l.tok.pos); err != nil {
				return nil, err
			}
			return x, nil
		}
		x, err := p.right(n.l, want, o, true)
		if err != nil {
			return nil, err
		}
		return p.negate(n, x)
	case aBin:
		l, err := p.right(n.l, want, o, true)
		if err != nil {
			return nil, err
		}
		return p.binary(n, l)
	}
	x, err := p.callExpr(n)
	if err != nil {
		return nil, err
	}
	return x, p.match(n.tok.pos, want, x.t)
}

func (k xkind) isNumOrTime() bool { return k >= xU32 && k <= xS64 || k == xTime }

// match checks that a value of got compares with one of want.
func (p *parser) match(pos int, want, got xtype) error {
	if compatible(want, got) {
		return nil
	}
	return errAt(pos, want.f.name+" and "+got.f.name+" do not compare: "+kindName(want)+" and "+kindName(got))
}

// literal reads a value of type want.
func (p *parser) literal(tok token, want xtype, o op, arith bool) (*xexpr, error) {
	if arith {
		if tok.kind == tString {
			return nil, errAt(tok.pos, tok.text+" is not a value to compute with: arithmetic takes numbers, octets (00:ff) and addresses")
		}
		if want.k >= xU32 && want.k <= xS64 {
			// A number, not a value's name (tshark: "send" is not a valid
			// number).
			neg, u, e := parseNum(tok.text)
			switch {
			case e == "out of range":
				return nil, errAt(tok.pos, "number "+tok.text+" is out of range")
			case e != "":
				return nil, errAt(tok.pos, strconv.Quote(tok.text)+" is not a number (arithmetic takes numbers, not names of values)")
			case neg:
				return nil, errAt(tok.pos, "a minus applies to a field, a function or a number, not to another minus")
			}
			if f := want.f; f.unsigned && f.bits > 0 && f.bits < 64 && u>>f.bits != 0 {
				return nil, errAt(tok.pos, tok.text+" is too big for "+f.name+" (at most "+strconv.FormatUint(1<<f.bits-1, 10)+")")
			}
			l := lit{text: tok.text, num: true, u: u}
			v, err := litVal(want, &l, tok.pos)
			if err != nil {
				return nil, err
			}
			return &xexpr{op: xoLit, t: want, v: v, lit: l}, nil
		}
	}
	l, err := value(want.f, tok, o)
	if err != nil {
		return nil, err
	}
	v, err := litVal(want, &l, tok.pos)
	if err != nil {
		return nil, err
	}
	return &xexpr{op: xoLit, t: want, v: v, lit: l}, nil
}

// negate compiles -x.
func (p *parser) negate(n *anode, x *xexpr) (*xexpr, error) {
	if !x.t.k.isNumOrTime() {
		return nil, errAt(n.tok.pos, "a minus applies to numbers and times; "+x.t.f.name+" is "+kindName(x.t))
	}
	return &xexpr{op: xoNeg, t: x.t, l: x}, nil
}

// binary compiles l op r, l compiled.
func (p *parser) binary(n *anode, l *xexpr) (*xexpr, error) {
	o := n.tok
	var bin byte
	switch o.kind {
	case tPlus:
		bin = '+'
	case tMinus:
		bin = '-'
	case tStar:
		bin = '*'
	case tSlash:
		bin = '/'
	case tPercent:
		bin = '%'
	case tAmp:
		bin = '&' // also bitwise_and
	}
	ok := false
	switch l.t.k {
	case xU32, xS32, xU64, xS64:
		ok = true
	case xTime:
		ok = bin == '+' || bin == '-'
	case xBytes, xAddr:
		ok = bin == '&'
	}
	if !ok {
		msg := strconv.Quote(string(bin)) + " does not apply to " + l.t.f.name + " (" + kindName(l.t) + "): arithmetic applies to numbers"
		switch {
		case l.t.k == xTime:
			msg += ", + and - also to times"
		default:
			msg += ", & also to bytes and addresses"
		}
		if bin == '&' {
			msg += "; for a logical and, use && (and)"
		}
		return nil, errAt(o.pos, msg)
	}
	r, err := p.right(n.r, l.t, opEq, true)
	if err != nil {
		return nil, err
	}
	if !compatible(l.t, r.t) {
		return nil, errAt(n.r.pos(), strconv.Quote(string(bin))+" of "+kindName(l.t)+" and "+kindName(r.t)+" ("+r.t.f.name+")")
	}
	if r.op == xoLit && r.t.k == xAddr && !r.v.p.IsSingleIP() {
		return nil, errAt(n.r.pos(), "& takes an address (a mask such as 255.255.255.0), not a subnet")
	}
	return &xexpr{op: xoBin, t: l.t, l: l, r: r, bin: bin}, nil
}

// callExpr compiles a function call.
func (p *parser) callExpr(n *anode) (*xexpr, error) {
	name := n.tok
	id := -1
	for i, fn := range fnNames {
		if fn == name.text {
			id = i
		}
	}
	if id < 0 {
		return nil, errAt(name.pos, "unknown function "+strconv.Quote(name.text)+" (tshark 4.0 has "+strings.Join(fnNames[:], ", ")+")")
	}
	x := &xexpr{op: xoCall, fn: fnID(id)}
	switch x.fn {
	case fnMax, fnMin:
		if len(n.args) == 0 {
			return nil, errAt(name.pos, name.text+"() needs at least one argument")
		}
	default:
		if len(n.args) != 1 {
			return nil, errAt(name.pos, name.text+"() takes one argument")
		}
	}
	// The functions of a field: len, count, upper, lower, string.
	var f *field
	if x.fn <= fnString {
		a := n.args[0]
		if a.kind != aWord || a.slice != nil || !isFieldName(a.tok.text) {
			return nil, errAt(a.pos(), name.text+"() takes a field (tshark: only fields can be parameters of "+name.text+"())")
		}
		if isTypeName(a.tok.text) {
			return nil, errAt(a.tok.pos, strconv.Quote(a.tok.text)+" is a protocol, a header or a record type: "+name.text+"() takes a field")
		}
		var err error
		if f, err = p.field(a.tok); err != nil {
			return nil, err
		}
		if f.typ == fNone {
			return nil, errAt(a.tok.pos, f.name+" is a protocol: "+name.text+"() takes a field")
		}
		x.args = []*xexpr{fieldExpr(f)}
	}
	u32 := func(what string) xtype {
		return xtype{k: xU32, f: &field{name: what, typ: fNum, unsigned: true, bits: 32}}
	}
	switch x.fn {
	case fnCount:
		x.t = u32("count(" + f.name + ")")
	case fnLen:
		switch k := kindOf(f); {
		case k >= xU32 && k <= xS64:
			if x.size = wireSize(f); x.size == 0 {
				return nil, errAt(n.args[0].tok.pos, "len() of a number is its octets on the wire; "+f.name+" has no Wireshark field to take them from")
			}
		case k == xNone:
			return nil, errAt(n.args[0].tok.pos, "len() takes a field with values; "+f.name+" is "+article(f))
		}
		x.t = u32("len(" + f.name + ")")
	case fnUpper, fnLower:
		if f.typ != fString {
			return nil, errAt(n.args[0].tok.pos, name.text+"() takes a string field; "+f.name+" is "+article(f))
		}
		x.t = xtype{k: xStr, f: &field{name: name.text + "(" + f.name + ")", typ: fString}}
	case fnString:
		if k := kindOf(f); !(k >= xU32 && k <= xS64 || k == xAddr) {
			return nil, errAt(n.args[0].tok.pos, "string() converts numbers and addresses; "+f.name+" is "+article(f)+" (tshark 4.0 has no string conversion for it)")
		}
		x.t = xtype{k: xStr, f: &field{name: "string(" + f.name + ")", typ: fString}}
	case fnAbs:
		a, err := p.left(n.args[0])
		if err != nil {
			return nil, err
		}
		if !a.t.k.isNumOrTime() && a.t.k != xBool {
			return nil, errAt(n.args[0].pos(), "abs() takes a number, a time or a boolean; "+a.t.f.name+" is "+kindName(a.t))
		}
		x.args, x.t = []*xexpr{a}, a.t
	case fnMax, fnMin:
		first := n.args[0]
		for first.kind == aGroup {
			first = first.l
		}
		if first.kind == aStr || first.kind == aWord && !isFieldName(first.tok.text) {
			return nil, errAt(first.tok.pos, "the first argument of "+name.text+"() is a field or a function, which gives the type of the others, not the value "+first.tok.text)
		}
		a, err := p.left(n.args[0])
		if err != nil {
			return nil, err
		}
		x.args, x.t = []*xexpr{a}, a.t
		for _, an := range n.args[1:] {
			b, err := p.right(an, a.t, opEq, false)
			if err != nil {
				return nil, err
			}
			// tshark wants one Wireshark type for all (not FT_UINT8 and
			// FT_UINT32).
			wa, wb := ftWidth(a.t), ftWidth(b.t)
			if !compatible(a.t, b.t) || b.op != xoLit && wa != 0 && wb != 0 && wa != wb {
				return nil, errAt(an.pos(), "the arguments of "+name.text+"() have one type: "+b.t.f.name+" is not of "+a.t.f.name+"'s")
			}
			x.args = append(x.args, b)
		}
	}
	return x, nil
}

// compare compiles l o r.
func (p *parser) compare(l *anode, o token, r *anode) (node, error) {
	if w, ok := plain(l); ok {
		if tok, lit := literalTok(r); lit && isLiteralOf(w, tok, o.op) {
			return lower(append(nameToks(w), o, tok))
		}
	}
	x, err := p.left(l)
	if err != nil {
		return nil, err
	}
	y, err := p.right(r, x.t, o.op, false)
	if err != nil {
		return nil, err
	}
	return &cmpNode{l: x, r: y, op: o.op}, nil
}

// member compiles l in {elems} (or not in).
func (p *parser) member(l *anode, o token, elems [][2]*anode) (node, error) {
	w, isPlain := plain(l)
	if !isPlain || w != l {
		return nil, errAt(o.pos, "only a field is tested for membership in a set (tshark 4.0 has no in for functions and arithmetic)")
	}
	asTest := true
	for _, el := range elems {
		for _, e := range el {
			if e == nil {
				continue
			}
			if tok, lit := literalTok(e); !lit || !isLiteralOf(w, tok, opIn) {
				asTest = false
			}
		}
	}
	if asTest {
		toks := nameToks(w)
		if o.op == opNotIn {
			toks = append(toks, token{kind: tNot, pos: o.pos, text: "not"}, token{kind: tOp, op: opIn, pos: o.pos, text: "in"})
		} else {
			toks = append(toks, o)
		}
		toks = append(toks, token{kind: tLBrace, pos: o.pos, text: "{"})
		for i, el := range elems {
			if i > 0 {
				toks = append(toks, token{kind: tComma, pos: o.pos, text: ","})
			}
			tok, _ := literalTok(el[0])
			toks = append(toks, tok)
			if el[1] != nil {
				tok, _ := literalTok(el[1])
				toks = append(toks, token{kind: tRange, pos: tok.pos, text: ".."}, tok)
			}
		}
		return lower(append(toks, token{kind: tRBrace, pos: o.pos, text: "}"}))
	}
	x, err := p.left(l)
	if err != nil {
		return nil, err
	}
	n := &inNode{l: x, not: o.op == opNotIn}
	for _, el := range elems {
		lo, err := p.right(el[0], x.t, opIn, false)
		if err != nil {
			return nil, err
		}
		var hi *xexpr
		if el[1] != nil {
			if hi, err = p.right(el[1], x.t, opIn, false); err != nil {
				return nil, err
			}
			if x.t.k == xAddr && (lo.op == xoLit && !lo.v.p.IsSingleIP() || hi.op == xoLit && !hi.v.p.IsSingleIP()) {
				return nil, errAt(el[0].pos(), "a range of addresses runs from an address to an address, not from or to a subnet")
			}
		}
		n.elems = append(n.elems, xelem{lo, hi})
	}
	return n, nil
}

// contains compiles l contains r.
func (p *parser) contains(l *anode, o token, r *anode) (node, error) {
	if w, ok := plain(l); ok {
		if tok, lit := literalTok(r); lit && isLiteralOf(w, tok, opContains) {
			return lower(append(nameToks(w), o, tok))
		}
	}
	if l.kind != aWord && l.kind != aCall {
		return nil, errAt(o.pos, "contains tests a field or a function's value, not arithmetic")
	}
	x, err := p.left(l)
	if err != nil {
		return nil, err
	}
	if x.t.k != xStr && x.t.k != xBytes {
		return nil, errAt(o.pos, x.t.f.name+" is "+kindName(x.t)+": contains applies to strings and bytes")
	}
	y, err := p.right(r, x.t, opContains, false)
	if err != nil {
		return nil, err
	}
	return &containsNode{l: x, r: y}, nil
}

// matches compiles l matches "re".
func (p *parser) matches(l *anode, o, v token) (node, error) {
	if w, ok := plain(l); ok {
		return lower(append(nameToks(w), o, v))
	}
	if l.kind != aCall {
		return nil, errAt(o.pos, "matches tests a field or a function's value, not arithmetic")
	}
	x, err := p.left(l)
	if err != nil {
		return nil, err
	}
	if x.t.k != xStr {
		return nil, errAt(o.pos, x.t.f.name+" is "+kindName(x.t)+": matches applies to strings")
	}
	re, err := regexp.Compile("(?i)" + v.val)
	if err != nil {
		return nil, errAt(v.pos, "bad regular expression: "+strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return &matchesNode{l: x, re: re, pat: v.val}, nil
}

// truth compiles an expression tested on its own.
func (p *parser) truth(l *anode) (node, error) {
	if w, ok := plain(l); ok {
		return lower(nameToks(w))
	}
	c := l
	for c.kind == aGroup {
		c = c.l
	}
	if c.kind == aCall {
		return nil, errAt(c.tok.pos, "a function is not a test on its own (tshark: you cannot test whether a function is present): compare its value ("+c.tok.text+"(...) > 0)")
	}
	x, err := p.left(l)
	if err != nil {
		return nil, err
	}
	return &truthNode{x: x}, nil
}

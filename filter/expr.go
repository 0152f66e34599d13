package filter

// The forms of tshark 4.0's display filters that go beyond "field
// relation value": functions (len(pd) == 4), arithmetic (ddp.msn + 1 == 2,
// {ddp.mo + 4} / 2, -latency_ns), the bitwise and (ddp.stag & 0xff), the
// comparison of two fields (ddp.mo == rdmap.read.size), fields in sets
// (ddp.msn in {ddp.qn, 5}) and chained comparisons (ddp.qn < ddp.msn < 3).
// The parser sends a relation here only when it has one of these forms
// (isExpr): every other relation keeps its parse (parser.test) and its
// node (test), so that the filters that compiled before compile to what
// they compiled to, with the same errors. A relation parsed here that
// turns out to have the form of a test once its braces are left out
// ({ddp.msn} == 1) is compiled as one (lower).
//
// This file holds the syntax; xtype.go the types (the compile step),
// xval.go the values and their arithmetic, xnode.go the nodes and their
// evaluation.

// akind is the kind of a node of an expression's syntax tree.
type akind uint8

const (
	aWord  akind = iota // a field name or a literal (tok)
	aStr                // a quoted string (tok)
	aNeg                // unary minus: -l
	aBin                // l op r
	aCall               // function tok (args)
	aGroup              // { l }
)

// anode is a node of an expression's syntax tree.
type anode struct {
	kind  akind
	tok   token  // the word, string, function name, or operator
	slice *token // aWord: a slice after the name
	l, r  *anode
	args  []*anode
}

// pos returns the offset of the first token of the expression under n.
func (n *anode) pos() int {
	if n.kind == aBin {
		return n.l.pos()
	}
	return n.tok.pos
}

// isArith reports whether t is a binary arithmetic operator, a minus
// included (a word that starts with one: "-1" in ddp.msn -1).
func isArith(t token) bool {
	switch t.kind {
	case tPlus, tMinus, tStar, tSlash, tPercent, tAmp:
		return true
	case tWord:
		return t.text[0] == '-'
	}
	return false
}

// isRelation reports whether t compares two expressions (==, <, ...).
func isRelation(t token) bool {
	return t.kind == tOp && t.op != opIn && t.op != opNotIn && t.op != opContains && t.op != opMatches
}

// isExpr reports whether the relation at the parser's position has one of
// the forms of this file: it looks ahead without consuming.
func (p *parser) isExpr() bool {
	i := p.i
	t := p.toks[i]
	switch t.kind {
	case tLBrace, tPlus, tMinus:
		return true
	case tWord:
	default:
		return false
	}
	if t.text[0] == '-' {
		return true // unary minus (or a constant on the left: an error here)
	}
	if p.toks[i+1].kind == tLParen {
		return true // a function
	}
	if c := t.text[0]; c >= '0' && c <= '9' {
		// A constant on the left: an error here if arithmetic follows (1
		// + ddp.msn), parser.test's if not.
		return isArith(p.toks[i+1])
	}
	i++
	f, known := p.resolve(t.text)
	if p.toks[i].kind == tSlice {
		i++
		f = &field{name: t.text, typ: fBytes}
	}
	if isArith(p.toks[i]) {
		return true
	}
	o := p.toks[i]
	if o.kind == tNot && p.toks[i+1].kind == tOp && p.toks[i+1].op == opIn {
		i++
		o = p.toks[i]
		o.op = opNotIn
	}
	if o.kind != tOp || !known || f.typ == fNone {
		return false
	}
	if isTypeName(t.text) {
		return false
	}
	switch o.op {
	case opMatches:
		return false
	case opIn, opNotIn:
		if p.toks[i+1].kind != tLBrace {
			return false
		}
		for j := i + 2; ; j++ {
			switch v := p.toks[j]; v.kind {
			case tRBrace, tEOF:
				return false
			case tPlus, tMinus:
				return true
			case tWord:
				if p.isRef(f, j, opIn) {
					return true
				}
			}
		}
	}
	switch p.toks[i+1].kind {
	case tLBrace, tPlus:
		return true
	case tWord:
		if p.isRef(f, i+1, o.op) {
			return true
		}
	case tString:
	default:
		return false
	}
	a := p.toks[i+2]
	return isArith(a) || isRelation(a) && o.op != opContains
}

// isRef reports whether the word at toks[j], in the place of a value of
// f, starts something else than a value: a function, a field (tshark
// takes a name for a field first; here a word that reads as a value of f
// stays the value it was), a slice of one, or the negation of one.
func (p *parser) isRef(f *field, j int, o op) bool {
	v := p.toks[j]
	if k := p.toks[j+1].kind; k == tLParen || k == tSlice {
		return true
	}
	w := v.text
	if w[0] == '-' {
		w = w[1:]
	}
	if w == "" || w[0] >= '0' && w[0] <= '9' {
		return false // a number or octets
	}
	if _, ok := resolve(w); !ok {
		return false
	}
	_, err := value(f, v, o)
	return err != nil
}

// splitMinus turns a word that starts with a minus at the parser's
// position into a minus and the rest ("-1" into "-" "1"), as tshark reads
// "ddp.msn -1" and "-ddp.msn".
func (p *parser) splitMinus() {
	t := p.toks[p.i]
	if t.kind != tWord || t.text[0] != '-' {
		return
	}
	minus := token{kind: tMinus, pos: t.pos, text: "-"}
	if len(t.text) == 1 {
		p.toks[p.i] = minus
		return
	}
	rest := token{kind: tWord, pos: t.pos + 1, text: t.text[1:]}
	if k, o, ok := keyword(rest.text); ok {
		rest.kind, rest.op = k, o
	}
	p.toks = append(p.toks[:p.i+1], p.toks[p.i:]...)
	p.toks[p.i], p.toks[p.i+1] = minus, rest
}

// arith parses an arithmetic expression: sums joined by & (the lowest
// precedence, as in tshark: ddp.msn & 3 + 1 is ddp.msn & 4).
func (p *parser) arith() (*anode, error) {
	l, err := p.sum()
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tAmp {
		o := p.next()
		r, err := p.sum()
		if err != nil {
			return nil, err
		}
		l = &anode{kind: aBin, tok: o, l: l, r: r}
	}
	return l, nil
}

func (p *parser) sum() (*anode, error) {
	l, err := p.product()
	if err != nil {
		return nil, err
	}
	for {
		p.splitMinus()
		if k := p.peek().kind; k != tPlus && k != tMinus {
			return l, nil
		}
		o := p.next()
		r, err := p.product()
		if err != nil {
			return nil, err
		}
		l = &anode{kind: aBin, tok: o, l: l, r: r}
	}
}

func (p *parser) product() (*anode, error) {
	l, err := p.signed()
	if err != nil {
		return nil, err
	}
	for {
		if k := p.peek().kind; k != tStar && k != tSlash && k != tPercent {
			return l, nil
		}
		o := p.next()
		r, err := p.signed()
		if err != nil {
			return nil, err
		}
		l = &anode{kind: aBin, tok: o, l: l, r: r}
	}
}

// signed parses an operand with its sign: -x, +x, x, or { expression }.
// As in tshark, a minus applies to a field, a function or a number, not to
// braces or another minus.
func (p *parser) signed() (*anode, error) {
	p.splitMinus()
	switch t := p.peek(); t.kind {
	case tPlus:
		p.next()
		return p.entity()
	case tMinus:
		p.next()
		x, err := p.entity()
		if err != nil {
			return nil, err
		}
		return &anode{kind: aNeg, tok: t, l: x}, nil
	case tLBrace:
		p.next()
		if p.depth++; p.depth > maxDepth {
			return nil, errAt(t.pos, "expression nested too deeply")
		}
		x, err := p.arith()
		p.depth--
		if err != nil {
			return nil, err
		}
		if c := p.peek(); c.kind != tRBrace {
			if c.kind == tEOF {
				return nil, errAt(t.pos, "unclosed {: missing }")
			}
			return nil, errAt(c.pos, "expected } or an arithmetic operator, found "+describe(c))
		}
		p.next()
		return &anode{kind: aGroup, tok: t, l: x}, nil
	}
	return p.entity()
}

// entity parses a field (with its slice), a literal or a function call.
func (p *parser) entity() (*anode, error) {
	t := p.next()
	switch t.kind {
	case tString:
		return &anode{kind: aStr, tok: t}, nil
	case tWord:
	case tEOF:
		return nil, errAt(t.pos, "unexpected end of filter: expected a field, a function or a value")
	case tMinus, tLBrace:
		return nil, errAt(t.pos, "a minus applies to a field, a function or a number, not to "+describe(t))
	default:
		return nil, errAt(t.pos, "expected a field, a function or a value, found "+describe(t))
	}
	if t.text[0] == '-' {
		return nil, errAt(t.pos, "a minus applies to a field, a function or a number, not to another minus")
	}
	if p.peek().kind == tLParen {
		n, err := p.call(t)
		if err == nil && p.peek().kind == tSlice {
			// tshark 4.0 slices a function's value (upper(x)[0:2]).
			return nil, errAt(p.peek().pos, "slices apply to a bytes field, not to a function's value")
		}
		return n, err
	}
	n := &anode{kind: aWord, tok: t}
	if p.peek().kind == tSlice {
		s := p.next()
		n.slice = &s
	}
	return n, nil
}

// call parses a function's arguments: arithmetic expressions, separated
// by commas.
func (p *parser) call(name token) (*anode, error) {
	open := p.next()
	if p.depth++; p.depth > maxDepth {
		return nil, errAt(open.pos, "expression nested too deeply")
	}
	defer func() { p.depth-- }()
	n := &anode{kind: aCall, tok: name}
	if p.peek().kind == tRParen {
		p.next()
		return n, nil
	}
	for {
		x, err := p.arith()
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, x)
		switch c := p.next(); c.kind {
		case tRParen:
			return n, nil
		case tComma:
		case tEOF:
			return nil, errAt(open.pos, "unclosed parenthesis of "+name.text+"(")
		default:
			return nil, errAt(c.pos, "expected , or ) in the arguments of "+name.text+"(), found "+describe(c))
		}
	}
}

// relation parses a relation of this file's forms and compiles it.
func (p *parser) relation() (node, error) {
	l, err := p.arith()
	if err != nil {
		return nil, err
	}
	o := p.peek()
	if o.kind == tNot && p.toks[p.i+1].kind == tOp && p.toks[p.i+1].op == opIn {
		p.next()
		o = p.peek()
		o.op = opNotIn
	}
	switch {
	case o.kind == tOp && (o.op == opIn || o.op == opNotIn):
		p.next()
		return p.inRelation(l, o)
	case o.kind == tOp && (o.op == opContains || o.op == opMatches):
		p.next()
		return p.stringRelation(l, o)
	case !isRelation(o):
		return p.truth(l)
	}
	// One comparison, or a chain (a < b <= c is a < b && b <= c).
	var out node
	for isRelation(p.peek()) {
		o := p.next()
		r, err := p.arith()
		if err != nil {
			return nil, err
		}
		n, err := p.compare(l, o, r)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = n
		} else {
			out = &andNode{out, n}
		}
		l = r
	}
	return out, nil
}

// inRelation parses the set of "x in {...}" (or "not in").
func (p *parser) inRelation(l *anode, o token) (node, error) {
	open := p.next()
	if open.kind != tLBrace {
		return nil, errAt(open.pos, "expected { after in, found "+describe(open))
	}
	var elems [][2]*anode
	for {
		switch v := p.peek(); v.kind {
		case tRBrace:
			p.next()
			if len(elems) == 0 {
				return nil, errAt(v.pos, "empty set")
			}
			return p.member(l, o, elems)
		case tComma:
			p.next()
			if len(elems) == 0 || p.toks[p.i-2].kind == tComma {
				return nil, errAt(v.pos, "expected a value, found \",\"")
			}
			continue
		case tEOF:
			return nil, errAt(open.pos, "unclosed set: missing }")
		}
		lo, err := p.signed()
		if err != nil {
			return nil, err
		}
		if lo.kind == aGroup {
			return nil, errAt(lo.pos(), "a set holds values, fields and functions, not expressions in { }")
		}
		var hi *anode
		if p.peek().kind == tRange {
			p.next()
			if hi, err = p.signed(); err != nil {
				return nil, err
			}
			if hi.kind == aGroup {
				return nil, errAt(hi.pos(), "a set holds values, fields and functions, not expressions in { }")
			}
		}
		if k := p.peek(); isArith(k) && k.kind != tWord {
			return nil, errAt(k.pos, "a set holds values, fields and functions, not arithmetic: compute it on the left")
		}
		elems = append(elems, [2]*anode{lo, hi})
	}
}

// stringRelation parses the right side of contains and matches.
func (p *parser) stringRelation(l *anode, o token) (node, error) {
	if o.op == opMatches {
		v := p.next()
		if v.kind != tString {
			return nil, errAt(v.pos, "matches needs a regular expression in double quotes, found "+describe(v))
		}
		return p.matches(l, o, v)
	}
	r, err := p.signed()
	if err != nil {
		return nil, err
	}
	if k := p.peek(); isArith(k) {
		return nil, errAt(k.pos, "contains takes a value, a field or a function, not arithmetic")
	}
	return p.contains(l, o, r)
}

// plain reports whether n is a field name or a literal as parser.test
// reads them (a word, possibly in braces, with its slice), and returns it.
func plain(n *anode) (*anode, bool) {
	for n.kind == aGroup {
		n = n.l
	}
	return n, n.kind == aWord
}

// literalTok returns the one token a value in braces or not was written
// as, a word or a string, and a negative number as one word ("-5", which
// the parser split, or "- 5").
func literalTok(n *anode) (token, bool) {
	for n.kind == aGroup {
		n = n.l
	}
	switch n.kind {
	case aWord:
		return n.tok, n.slice == nil
	case aStr:
		return n.tok, true
	case aNeg:
		if n.l.kind == aWord && n.l.slice == nil {
			return token{kind: tWord, pos: n.tok.pos, text: "-" + n.l.tok.text}, true
		}
	}
	return token{}, false
}

// lower compiles, with parser.test, a relation that has the form of a test
// once braces are left out: toks are its tokens.
func lower(toks []token) (node, error) {
	q := &parser{toks: append(toks, token{kind: tEOF, pos: toks[len(toks)-1].pos + len(toks[len(toks)-1].text)})}
	n, err := q.test(q.next())
	if err != nil {
		return nil, err
	}
	if t := q.peek(); t.kind != tEOF {
		return nil, errAt(t.pos, "unexpected "+describe(t))
	}
	return n, nil
}

// nameToks returns a field's tokens: its name and slice.
func nameToks(n *anode) []token {
	toks := []token{n.tok}
	if n.slice != nil {
		toks = append(toks, *n.slice)
	}
	return toks
}

// isLiteralOf reports whether tok reads as a value of the field named by
// the word node n, as parser.test reads "n relation tok" (or whether
// parser.test has the error to give).
func isLiteralOf(n *anode, tok token, o op) bool {
	if isTypeName(n.tok.text) {
		return true
	}
	f, ok := resolve(n.tok.text)
	if !ok {
		return true
	}
	if n.slice != nil {
		f = &field{name: f.name, typ: fBytes}
	}
	if f.typ == fNone || f.typ == fObject {
		return true
	}
	_, err := value(f, tok, o)
	return err == nil
}

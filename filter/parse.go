package filter

import (
	"math"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
)

// maxDepth bounds the nesting of parentheses and negations.
const maxDepth = 200

type parser struct {
	toks  []token
	i     int
	depth int
	// The last name resolved, and its field: isExpr resolves the name
	// of a test before test does.
	lastName  string
	lastField *field
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

// describe names a token for an error message.
func describe(t token) string {
	if t.kind == tEOF {
		return "end of filter"
	}
	return strconv.Quote(t.text)
}

func (p *parser) or() (node, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tOr {
		p.next()
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = &orNode{l, r}
	}
	return l, nil
}

func (p *parser) and() (node, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tAnd {
		p.next()
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = &andNode{l, r}
	}
	return l, nil
}

func (p *parser) unary() (node, error) {
	t := p.peek()
	if t.kind != tNot {
		return p.primary()
	}
	p.next()
	if p.depth++; p.depth > maxDepth {
		return nil, errAt(t.pos, "expression nested too deeply")
	}
	x, err := p.unary()
	p.depth--
	if err != nil {
		return nil, err
	}
	return &notNode{x}, nil
}

func (p *parser) primary() (node, error) {
	if p.isExpr() {
		return p.relation() // functions, arithmetic, fields compared (expr.go)
	}
	t := p.next()
	switch t.kind {
	case tLParen:
		if p.depth++; p.depth > maxDepth {
			return nil, errAt(t.pos, "expression nested too deeply")
		}
		x, err := p.or()
		p.depth--
		if err != nil {
			return nil, err
		}
		if c := p.peek(); c.kind != tRParen {
			if c.kind == tEOF {
				return nil, errAt(t.pos, "unclosed parenthesis")
			}
			return nil, errAt(c.pos, "expected ) or an operator, found "+describe(c))
		}
		p.next()
		return x, nil
	case tWord:
		return p.test(t)
	case tEOF:
		return nil, errAt(t.pos, "unexpected end of filter: expected a field name")
	case tString:
		return nil, errAt(t.pos, "expected a field name, found a string")
	}
	return nil, errAt(t.pos, "expected a field name, found "+describe(t))
}

// test parses what follows a field name: a relation and its value, or
// nothing (a presence test or a record-type shorthand).
func (p *parser) test(name token) (node, error) {
	if c := name.text[0]; c >= '0' && c <= '9' || c == '-' {
		return nil, errAt(name.pos, "expected a field name, found the value "+strconv.Quote(name.text))
	}
	var slice *token
	if p.peek().kind == tSlice {
		t := p.next()
		slice = &t
	}
	o := p.peek()
	notIn := o.kind == tNot && p.toks[p.i+1].kind == tOp && p.toks[p.i+1].op == opIn
	switch {
	case slice != nil && o.kind != tOp && !notIn:
		f, err := p.slice(name, *slice)
		if err != nil {
			return nil, err
		}
		return &test{f: f, op: opPresent}, nil
	case o.kind == tOp:
		p.next()
	case notIn:
		p.next()
		o = p.next()
		o.op = opNotIn
	default:
		if k, ok := shorthand(name.text); ok {
			return &kindNode{k}, nil
		}
		f, err := p.field(name)
		if err != nil {
			return nil, err
		}
		return &test{f: f, op: opPresent}, nil
	}
	if k, ok := shorthand(name.text); ok && k != "conn" {
		if _, sub := subtrees[k]; sub || k == "mpa" || k == "ddp" || k == "rdmap" {
			return nil, errAt(name.pos, strconv.Quote(name.text)+" is a protocol or a header: it can only be tested for presence")
		}
		return nil, errAt(name.pos, strconv.Quote(name.text)+` is a record type, not a field: write it alone, or compare type == "`+k+`"`)
	}
	var f *field
	var err error
	if slice != nil {
		f, err = p.slice(name, *slice)
	} else {
		f, err = p.field(name)
	}
	if err != nil {
		return nil, err
	}
	if err := checkOp(f, o); err != nil {
		return nil, err
	}
	t := &test{f: f, op: o.op}
	switch o.op {
	case opIn, opNotIn:
		if err := p.set(t); err != nil {
			return nil, err
		}
	case opMatches:
		v := p.next()
		if v.kind != tString {
			return nil, errAt(v.pos, "matches needs a regular expression in double quotes, found "+describe(v))
		}
		// Case-insensitive by default, as in Wireshark; (?-i) turns it off.
		re, err := regexp.Compile("(?i)" + v.val)
		if err != nil {
			return nil, errAt(v.pos, "bad regular expression: "+strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
		t.re, t.pat = re, v.val
	default:
		v := p.next()
		l, err := value(f, v, o.op)
		if err != nil {
			return nil, err
		}
		t.vals = []lit{l}
	}
	return t, nil
}

// field resolves a name or reports it unknown with the nearest known name.
func (p *parser) field(name token) (*field, error) {
	f, ok := p.resolve(name.text)
	if !ok {
		return nil, errAt(name.pos, "unknown field "+strconv.Quote(name.text)+" (did you mean "+strconv.Quote(nearest(name.text))+"?)")
	}
	return f, nil
}

// resolve is resolve, remembering the last name resolved.
func (p *parser) resolve(name string) (*field, bool) {
	if name == p.lastName && p.lastField != nil {
		return p.lastField, true
	}
	f, ok := resolve(name)
	if ok {
		p.lastName, p.lastField = name, f
	}
	return f, ok
}

// checkOp rejects relations the field's type does not have.
func checkOp(f *field, o token) error {
	what := f.name + " is " + article(f)
	switch f.typ {
	case fObject:
		return errAt(o.pos, what+": test it alone, or compare one of its members ("+f.name+".<member>)")
	case fNone:
		return errAt(o.pos, what+": it can only be tested for presence")
	}
	switch o.op {
	case opContains:
		if f.typ == fNum || f.typ == fBool || f.typ == fAddr || f.typ == fTime {
			return errAt(o.pos, what+": contains applies to strings and bytes")
		}
	case opMatches:
		if f.typ != fString && f.typ != fDyn {
			return errAt(o.pos, what+": matches applies to strings")
		}
	}
	return nil
}

// article describes a field's type for an error message ("a number field").
func article(f *field) string {
	if f.list {
		switch f.typ {
		case fNum:
			return "a list of numbers"
		case fString:
			return "a list of strings"
		case fObject:
			return "a list of objects"
		}
		return "a list"
	}
	switch f.typ {
	case fObject:
		return "an object"
	case fNone:
		return "a protocol"
	case fAddr:
		return "an address field"
	case fTime:
		return "a time field"
	}
	return "a " + ftypeNames[f.typ] + " field"
}

// set parses "{ v [..v] [,] ... }".
func (p *parser) set(t *test) error {
	open := p.next()
	if open.kind != tLBrace {
		return errAt(open.pos, "expected { after in, found "+describe(open))
	}
	for {
		v := p.next()
		switch v.kind {
		case tRBrace:
			if len(t.vals) == 0 {
				return errAt(v.pos, "empty set")
			}
			return nil
		case tComma:
			if len(t.vals) == 0 || p.toks[p.i-2].kind == tComma {
				return errAt(v.pos, "expected a value, found \",\"")
			}
			continue
		case tEOF:
			return errAt(open.pos, "unclosed set: missing }")
		}
		l, err := value(t.f, v, opIn)
		if err != nil {
			return err
		}
		if p.peek().kind == tRange {
			rt := p.next()
			hv := p.next()
			h, err := value(t.f, hv, opIn)
			if err != nil {
				return err
			}
			if t.f.typ == fAddr && !(l.pfx.IsSingleIP() && h.pfx.IsSingleIP()) {
				return errAt(rt.pos, "a range of addresses runs from an address to an address, not from or to a subnet")
			}
			l.hi = &h
		}
		t.vals = append(t.vals, l)
	}
}

// value reads a literal for field f.
func value(f *field, v token, o op) (lit, error) {
	switch v.kind {
	case tWord, tString:
	case tEOF:
		return lit{}, errAt(v.pos, "unexpected end of filter: expected a value")
	default:
		return lit{}, errAt(v.pos, "expected a value, found "+describe(v))
	}
	if f.typ == fTime {
		return timeValue(f, v)
	}
	if f.typ == fAddr {
		text := v.text
		if v.kind == tString {
			text = v.val
		}
		return addrValue(f, v, o, text)
	}
	l := lit{text: v.text}
	if f.typ == fNum {
		// A value's name (valueNames), where the text is not a number.
		text := v.text
		if v.kind == tString {
			text = v.val
		}
		if _, _, numErr := parseNum(text); v.kind == tString || numErr == "syntax" {
			if u, found, known := namedValue(f.name, text); found {
				l.num, l.u, l.quote = true, u, v.kind == tString
				return l, nil
			} else if known {
				return lit{}, errAt(v.pos, strconv.Quote(text)+" is not a number or the name of a value of "+f.name+" ("+valueNamesOf(f.name)+")")
			}
		}
	}
	if v.kind == tString {
		l.quote = true
		switch f.typ {
		case fString, fDyn:
			l.str, l.s = true, v.val
			if f.typ == fDyn {
				l.byt, l.bs = true, []byte(v.val)
			}
		case fBytes:
			l.byt, l.bs, l.s = true, []byte(v.val), v.val
		case fBool:
			// tshark takes "True" and "False" in quotes too.
			b, ok := parseBool(v.val)
			if !ok {
				return lit{}, errAt(v.pos, f.name+" is "+article(f)+": use true, false, 1 or 0")
			}
			l.isB, l.b = true, b
		default:
			return lit{}, errAt(v.pos, f.name+" is "+article(f)+"; "+v.text+" is a string")
		}
		return l, nil
	}
	w := v.text
	neg, u, numErr := parseNum(w)
	isNum := numErr == ""
	bv, isBool := parseBool(w)
	if !isBool && isNum {
		isBool, bv = true, u != 0
	}
	bs, isBytes := parseBytes(w)
	switch f.typ {
	case fNum:
		if !isNum {
			if numErr == "out of range" {
				return lit{}, errAt(v.pos, "number "+w+" is out of range")
			}
			return lit{}, errAt(v.pos, f.name+" is "+article(f)+"; "+strconv.Quote(w)+" is not a number")
		}
		l.num, l.neg, l.u = true, neg, u
		// Past the field's width, tshark says "too big for this field",
		// of the magnitude of a negative number too.
		if f.unsigned && f.bits > 0 && f.bits < 64 && u>>f.bits != 0 {
			return lit{}, errAt(v.pos, strings.TrimPrefix(w, "-")+" is too big for "+f.name+" (at most "+strconv.FormatUint(1<<f.bits-1, 10)+")")
		}
		if f.unsigned && neg {
			// tshark negates the magnitude into a signed integer,
			// int32 for fields of up to 32 bits ("2147483648 overflows
			// gint32"), which then compares with none of the field's
			// values: every relation is false but != (not ==).
			what, most := "int32", uint64(math.MaxInt32)
			if f.bits == 0 || f.bits > 32 {
				what, most = "int64", math.MaxInt64
			}
			if u > most {
				return lit{}, errAt(v.pos, w+" is out of range: a negative number for "+f.name+" is an "+what)
			}
			l.nocmp = true
		}
	case fBool:
		if !isBool {
			return lit{}, errAt(v.pos, f.name+" is "+article(f)+": use true, false, 1 or 0")
		}
		l.isB, l.b = true, bv
	case fString:
		return lit{}, errAt(v.pos, f.name+" is "+article(f)+": put the value in double quotes (\""+w+"\")")
	case fBytes:
		if !isBytes {
			return lit{}, errAt(v.pos, f.name+" is "+article(f)+": write octets in hex (69:77:74) or as a quoted string")
		}
		l.byt, l.bs = true, bs
	case fDyn:
		l.num, l.neg, l.u = isNum, neg, u
		l.isB, l.b = isBool, bv
		l.byt, l.bs = isBytes, bs
		if !isNum && !isBool && !isBytes {
			return lit{}, errAt(v.pos, strconv.Quote(w)+" is not a number, boolean or byte string (strings go in double quotes)")
		}
		if o == opContains && !isBytes {
			return lit{}, errAt(v.pos, "contains needs a quoted string or hex octets, found "+strconv.Quote(w))
		}
	}
	return l, nil
}

// parseNum reads a Wireshark integer: decimal, 0x hex, 0b binary, 0 octal,
// with an optional minus sign. err is "" on success.
func parseNum(w string) (neg bool, u uint64, err string) {
	s := w
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	base := 10
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X"):
		base, s = 16, s[2:]
	case len(s) > 2 && (s[:2] == "0b" || s[:2] == "0B"):
		base, s = 2, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	if s == "" {
		return false, 0, "syntax"
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d := digitVal(s[i])
		if d >= base {
			return false, 0, "syntax"
		}
		hi, lo := bits.Mul64(v, uint64(base))
		if hi != 0 {
			return false, 0, "out of range"
		}
		var carry uint64
		v, carry = bits.Add64(lo, uint64(d), 0)
		if carry != 0 {
			return false, 0, "out of range"
		}
	}
	if v == 0 {
		neg = false
	}
	return neg, v, ""
}

func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 99
}

// parseBool reads true/True/TRUE and false/False/FALSE.
func parseBool(w string) (bool, bool) {
	switch w {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	return false, false
}

// parseBytes reads octets written as hex: one or two hex digits per octet
// separated by ':', '-' or '.' (all the same), two digits per octet without
// separators ("00800080", as tshark 4.0 reads it), a single octet ("7a"),
// or a one-octet hex integer ("0x7a"), as Wireshark allows.
func parseBytes(w string) ([]byte, bool) {
	if len(w) > 2 && (w[:2] == "0x" || w[:2] == "0X") {
		_, u, err := parseNum(w)
		if err != "" || u > 0xff {
			return nil, false
		}
		return []byte{byte(u)}, true
	}
	if len(w) > 2 && len(w)%2 == 0 && strings.IndexFunc(w, func(r rune) bool { return r > 0x7f || !isHex(byte(r)) }) < 0 {
		out := make([]byte, len(w)/2)
		for i := range out {
			out[i] = byte(digitVal(w[2*i])<<4 | digitVal(w[2*i+1]))
		}
		return out, true
	}
	var out []byte
	sep := byte(0)
	for len(w) > 0 {
		n := 0
		for n < len(w) && n < 2 && isHex(w[n]) {
			n++
		}
		if n == 0 {
			return nil, false
		}
		v, _ := strconv.ParseUint(w[:n], 16, 8)
		out = append(out, byte(v))
		w = w[n:]
		if w == "" {
			break
		}
		if sep == 0 && (w[0] == ':' || w[0] == '-' || w[0] == '.') {
			sep = w[0]
		}
		if w[0] != sep || len(w) == 1 {
			return nil, false
		}
		w = w[1:]
	}
	return out, len(out) > 0
}

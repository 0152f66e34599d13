package filter

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// xtype is the static type of an expression: the kind of its values (a
// number's is its first field's; a difference may be signed at run time)
// and the field literals on its other side are read as values of (names
// of values, width).
type xtype struct {
	k xkind
	f *field
}

// xop is what an expression node computes.
type xop uint8

const (
	xoField xop = iota // a field's values
	xoLit              // a value
	xoNeg              // -l
	xoBin              // l bin r
	xoCall             // fn(args)
)

// fnID is a function of tshark 4.0's display filters.
type fnID uint8

const (
	fnLen fnID = iota
	fnCount
	fnUpper
	fnLower
	fnString
	fnAbs
	fnMax
	fnMin
)

// fnNames are the functions tshark 4.0.17 has (tshark -Y 'f(x) == 1'
// refuses any other name: "Function 'f' does not exist").
var fnNames = [...]string{"len", "count", "upper", "lower", "string", "abs", "max", "min"}

// xexpr is a compiled expression.
type xexpr struct {
	op   xop
	t    xtype
	fld  test   // xoField: test{f, opPresent}, scanned for the values
	v    xval   // xoLit
	lit  lit    // xoLit: as read, for String
	bin  byte   // xoBin: + - * / % &
	l, r *xexpr // xoNeg (l), xoBin
	fn   fnID   // xoCall
	args []*xexpr
	size uint64 // fnLen of a number field: its octets on the wire
}

// values pushes the expression's values on sc. It returns false when a
// field it reads is absent from the record: the relation is then false,
// whatever it is (tshark's test fails at the field). An operation that
// fails (an overflow, a division by zero) only drops its value, as
// tshark's does.
func (x *xexpr) values(e env, sc *scratch) bool {
	start := len(sc.vals)
	switch x.op {
	case xoField:
		c := cell{sink: sc}
		s := scanState{col: &c}
		x.fld.scan(e, &s)
		return len(sc.vals) > start
	case xoLit:
		sc.vals = append(sc.vals, x.v)
		return true
	case xoNeg:
		if !x.l.values(e, sc) {
			return false
		}
		end := len(sc.vals)
		for i := start; i < end; i++ {
			if v, ok := neg(&sc.vals[i]); ok {
				sc.vals = append(sc.vals, v)
			}
		}
		sc.drop(start, end)
		return true
	case xoBin:
		if !x.l.values(e, sc) {
			return false
		}
		mid := len(sc.vals)
		if !x.r.values(e, sc) {
			return false
		}
		end := len(sc.vals)
		// Every pair, as tshark pairs the values of two fields that
		// occur several times.
		for i := start; i < mid; i++ {
			for j := mid; j < end; j++ {
				if v, ok := arith(x.bin, &sc.vals[i], &sc.vals[j], sc); ok {
					sc.vals = append(sc.vals, v)
				}
			}
		}
		sc.drop(start, end)
		return true
	}
	return x.call(e, sc)
}

// drop removes the values from start to end, keeping those after.
func (sc *scratch) drop(start, end int) {
	n := copy(sc.vals[start:], sc.vals[end:])
	clear(sc.vals[start+n:])
	sc.vals = sc.vals[:start+n]
}

// call pushes a function's values.
func (x *xexpr) call(e env, sc *scratch) bool {
	start := len(sc.vals)
	switch x.fn {
	case fnMax, fnMin:
		// Over the values of every argument; an absent field adds none.
		for _, a := range x.args {
			mark := len(sc.vals)
			if !a.values(e, sc) {
				sc.drop(mark, len(sc.vals))
			}
		}
		end := len(sc.vals)
		if end == start {
			return false
		}
		best := start
		for i := start + 1; i < end; i++ {
			c, ok := cmpX(&sc.vals[i], &sc.vals[best])
			if ok && (c > 0) == (x.fn == fnMax) && c != 0 {
				best = i
			}
		}
		sc.vals[start] = sc.vals[best]
		sc.drop(start+1, end)
		return true
	}
	if !x.args[0].values(e, sc) {
		return false
	}
	end := len(sc.vals)
	if x.fn == fnCount {
		sc.vals[start] = xval{k: xU32, u: uint64(end - start)}
		sc.drop(start+1, end)
		return true
	}
	for i := start; i < end; i++ {
		v := &sc.vals[i]
		var r xval
		switch x.fn {
		case fnLen:
			r.k = xU32
			switch v.k {
			case xStr, xBytes:
				r.u = uint64(len(v.s))
			case xAddr:
				r.u = uint64(v.p.Addr().BitLen() / 8)
			case xU32, xS32, xU64, xS64:
				r.u = x.size
			}
		case fnUpper, fnLower:
			mark := len(sc.arena)
			for j := 0; j < len(v.s); j++ {
				c := v.s[j]
				// ASCII letters only, as tshark's (g_ascii_strup).
				if x.fn == fnUpper && c >= 'a' && c <= 'z' {
					c -= 'a' - 'A'
				} else if x.fn == fnLower && c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				sc.arena = append(sc.arena, c)
			}
			r = xval{k: xStr, s: sc.str(mark)}
		case fnString:
			mark := len(sc.arena)
			switch v.k {
			case xU32:
				sc.arena = strconv.AppendUint(sc.arena, uint64(uint32(v.u)), 10)
			case xU64:
				sc.arena = strconv.AppendUint(sc.arena, v.u, 10)
			case xS32:
				sc.arena = strconv.AppendInt(sc.arena, int64(int32(uint32(v.u))), 10)
			case xS64:
				sc.arena = strconv.AppendInt(sc.arena, int64(v.u), 10)
			case xAddr:
				sc.arena = v.p.Addr().AppendTo(sc.arena)
			default:
				continue
			}
			r = xval{k: xStr, s: sc.str(mark)}
		case fnAbs:
			var ok bool
			if r, ok = absX(v); !ok {
				continue
			}
		}
		sc.vals = append(sc.vals, r)
	}
	sc.drop(start, end)
	return true
}

// cmpNode compares the values of two expressions.
type cmpNode struct {
	l, r *xexpr
	op   op
}

// inNode tests an expression's values for membership in a set whose
// elements may be fields and functions.
type inNode struct {
	l     *xexpr
	not   bool
	elems []xelem
}

// xelem is an element of a set: a value (hi nil) or a range.
type xelem struct{ lo, hi *xexpr }

// containsNode tests for a substring or a sequence of octets given by an
// expression.
type containsNode struct{ l, r *xexpr }

// matchesNode applies a regular expression to a function's values (upper,
// lower, string).
type matchesNode struct {
	l   *xexpr
	re  *regexp.Regexp
	pat string
}

// truthNode is an arithmetic expression tested on its own: true when a
// value is not zero (tshark: ddp.stag & 0x80).
type truthNode struct{ x *xexpr }

func (n *cmpNode) eval(e env) bool {
	sc := getScratch()
	ok := n.test(e, sc)
	sc.release()
	return ok
}

// test applies the relation to every pair of values, with tshark 4.0's
// quantifiers: == and the orders, some pair; != no pair equal; === no pair
// unequal; !== some pair unequal. Values that do not compare are neither
// equal nor unequal, so that an operation that failed (no value) leaves
// != and === true.
func (n *cmpNode) test(e env, sc *scratch) bool {
	if !n.l.values(e, sc) {
		return false
	}
	mid := len(sc.vals)
	if !n.r.values(e, sc) {
		return false
	}
	vals := sc.vals
	for i := 0; i < mid; i++ {
		for j := mid; j < len(vals); j++ {
			a, b := &vals[i], &vals[j]
			var hit bool
			switch n.op {
			case opEq, opNe:
				eq, _ := eqX(a, b)
				hit = eq
			case opAllEq, opAnyNe:
				eq, ok := eqX(a, b)
				hit = ok && !eq
			default:
				c, ok := cmpX(a, b)
				switch n.op {
				case opLt:
					hit = ok && c < 0
				case opLe:
					hit = ok && c <= 0
				case opGt:
					hit = ok && c > 0
				case opGe:
					hit = ok && c >= 0
				}
			}
			if hit {
				return n.op != opNe && n.op != opAllEq
			}
		}
	}
	return n.op == opNe || n.op == opAllEq
}

func (n *inNode) eval(e env) bool {
	sc := getScratch()
	in := n.test(e, sc)
	sc.release()
	return in != n.not
}

// test reports whether a value of l is in the set. An element whose field
// is absent holds nothing.
func (n *inNode) test(e env, sc *scratch) bool {
	if !n.l.values(e, sc) {
		return false
	}
	mid := len(sc.vals)
	for _, el := range n.elems {
		if !el.lo.values(e, sc) {
			sc.drop(mid, len(sc.vals))
			continue
		}
		hi := len(sc.vals)
		if el.hi != nil && !el.hi.values(e, sc) {
			sc.drop(mid, len(sc.vals))
			continue
		}
		vals := sc.vals
		for i := 0; i < mid; i++ {
			v := &vals[i]
			for j := mid; j < hi; j++ {
				if el.hi == nil {
					if eq, _ := eqX(v, &vals[j]); eq {
						return true
					}
					continue
				}
				if c, ok := cmpX(v, &vals[j]); !ok || c < 0 {
					continue
				}
				for k := hi; k < len(vals); k++ {
					if c, ok := cmpX(v, &vals[k]); ok && c <= 0 {
						return true
					}
				}
			}
		}
		sc.drop(mid, len(sc.vals))
	}
	return false
}

func (n *containsNode) eval(e env) bool {
	sc := getScratch()
	ok := n.test(e, sc)
	sc.release()
	return ok
}

func (n *containsNode) test(e env, sc *scratch) bool {
	if !n.l.values(e, sc) {
		return false
	}
	mid := len(sc.vals)
	if !n.r.values(e, sc) {
		return false
	}
	vals := sc.vals
	for i := 0; i < mid; i++ {
		for j := mid; j < len(vals); j++ {
			a, b := &vals[i], &vals[j]
			if (a.k == xStr || a.k == xBytes) && a.k == b.k && strings.Contains(a.s, b.s) {
				return true
			}
		}
	}
	return false
}

func (n *matchesNode) eval(e env) bool {
	sc := getScratch()
	ok := false
	if n.l.values(e, sc) {
		for i := range sc.vals {
			if v := &sc.vals[i]; v.k == xStr && n.re.MatchString(v.s) {
				ok = true
				break
			}
		}
	}
	sc.release()
	return ok
}

func (n *truthNode) eval(e env) bool {
	sc := getScratch()
	ok := false
	if n.x.values(e, sc) {
		for i := range sc.vals {
			if sc.vals[i].nonzero() {
				ok = true
				break
			}
		}
	}
	sc.release()
	return ok
}

// fields calls fn with each field an expression reads.
func (x *xexpr) fields(fn func(f *field)) {
	if x == nil {
		return
	}
	if x.op == xoField {
		fn(x.fld.f)
	}
	x.l.fields(fn)
	x.r.fields(fn)
	for _, a := range x.args {
		a.fields(fn)
	}
}

// exprs returns the expressions of a node of this file, or false for
// another node.
func exprs(n node) ([]*xexpr, bool) {
	switch n := n.(type) {
	case *cmpNode:
		return []*xexpr{n.l, n.r}, true
	case *inNode:
		out := []*xexpr{n.l}
		for _, el := range n.elems {
			out = append(out, el.lo, el.hi)
		}
		return out, true
	case *containsNode:
		return []*xexpr{n.l, n.r}, true
	case *matchesNode:
		return []*xexpr{n.l}, true
	case *truthNode:
		return []*xexpr{n.x}, true
	}
	return nil, false
}

// xfields calls fn with each field a node of this file reads.
func xfields(xs []*xexpr, fn func(f *field)) {
	for _, x := range xs {
		x.fields(fn)
	}
}

// Printing, in the canonical form (Filter.String).

func (n *cmpNode) prec() int      { return 4 }
func (n *inNode) prec() int       { return 4 }
func (n *containsNode) prec() int { return 4 }
func (n *matchesNode) prec() int  { return 4 }
func (n *truthNode) prec() int    { return 4 }

func (n *cmpNode) write(b *strings.Builder) {
	n.l.write(b)
	b.WriteString(" " + opNames[n.op] + " ")
	n.r.write(b)
}

func (n *inNode) write(b *strings.Builder) {
	n.l.write(b)
	if n.not {
		b.WriteString(" not")
	}
	b.WriteString(" in {")
	for i, el := range n.elems {
		if i > 0 {
			b.WriteString(", ")
		}
		el.lo.write(b)
		if el.hi != nil {
			b.WriteString("..")
			el.hi.write(b)
		}
	}
	b.WriteByte('}')
}

func (n *containsNode) write(b *strings.Builder) {
	n.l.write(b)
	b.WriteString(" contains ")
	n.r.write(b)
}

func (n *matchesNode) write(b *strings.Builder) {
	n.l.write(b)
	b.WriteString(" matches ")
	writeQuoted(b, n.pat)
}

func (n *truthNode) write(b *strings.Builder) { n.x.write(b) }

// xprec is an expression's precedence: & 1, + - 2, * / % 3, a minus 4.
func (x *xexpr) xprec() int {
	switch x.op {
	case xoBin:
		switch x.bin {
		case '&':
			return 1
		case '+', '-':
			return 2
		}
		return 3
	case xoNeg:
		return 4
	}
	return 5
}

func (x *xexpr) write(b *strings.Builder) {
	switch x.op {
	case xoField:
		b.WriteString(x.fld.f.name)
	case xoLit:
		t := test{f: x.t.f}
		t.writeLit(b, &x.lit)
	case xoNeg:
		b.WriteByte('-')
		x.l.write(b)
	case xoBin:
		x.l.writeSub(b, x.xprec())
		b.WriteString(" " + string(x.bin) + " ")
		x.r.writeSub(b, x.xprec()+1)
	case xoCall:
		b.WriteString(fnNames[x.fn])
		b.WriteByte('(')
		for i, a := range x.args {
			if i > 0 {
				b.WriteString(", ")
			}
			a.write(b)
		}
		b.WriteByte(')')
	}
}

func (x *xexpr) writeSub(b *strings.Builder, min int) {
	if x.xprec() < min {
		b.WriteByte('{')
		x.write(b)
		b.WriteByte('}')
		return
	}
	x.write(b)
}

// wireSize is the octets tshark's len() gives a number field: its
// Wireshark type's (FT_UINT8 1, FT_UINT16 2, FT_UINT24 3, FT_UINT32 4,
// FT_UINT64 8), or 0 when the field has no Wireshark width.
func wireSize(f *field) uint64 {
	b := f.bits
	if f.derive == dStream {
		b = 32
	}
	switch {
	case b == 0:
		return 0
	case b <= 8:
		return 1
	case b <= 16:
		return 2
	case b <= 24:
		return 3
	case b <= 32:
		return 4
	}
	return 8
}

// kindOf returns a field's static kind, xNone for a field whose values
// are not one kind (a protocol, an object, a value of unknown type).
func kindOf(f *field) xkind {
	if f.list && f.typ == fObject {
		return xNone
	}
	switch f.typ {
	case fNum:
		return numKind(f, false)
	case fBool:
		return xBool
	case fString:
		return xStr
	case fBytes:
		return xBytes
	case fAddr:
		return xAddr
	case fTime:
		if f.clk == cAbsolute {
			return xDate
		}
		return xTime
	}
	return xNone
}

// kindName describes a kind for an error message.
func kindName(t xtype) string {
	switch t.k {
	case xU32, xS32, xU64, xS64:
		return "a number"
	case xBool:
		return "a boolean"
	case xStr:
		return "a string"
	case xBytes:
		return "bytes"
	case xAddr:
		if t.f.derive == dIP6 {
			return "an IPv6 address"
		}
		return "an IPv4 address"
	case xTime, xDate:
		return "a time"
	}
	return "a value"
}

// compatible reports whether values of two types compare with each other.
func compatible(a, b xtype) bool {
	an, bn := a.k >= xU32 && a.k <= xS64, b.k >= xU32 && b.k <= xS64
	switch {
	case an || bn:
		return an && bn
	case a.k == xAddr && b.k == xAddr:
		return a.f.derive == b.f.derive || a.f.derive == dNone || b.f.derive == dNone
	}
	return a.k == b.k
}

// ftWidth is a number type's Wireshark type for max() and min(), which
// tshark wants the same for all arguments (FT_UINT8 is not FT_UINT32):
// its width, or 0 when unknown.
func ftWidth(t xtype) uint64 {
	if t.f == nil {
		return 0
	}
	return wireSize(t.f)
}

// litVal converts a literal read for type t to a value of it: a number is
// of the field's kind (a negative one is the negation of its magnitude,
// as tshark reads -5: signed, and out of range past the int32 or int64
// range).
func litVal(t xtype, l *lit, pos int) (xval, error) {
	switch t.k {
	case xU32, xS32, xU64, xS64:
		k := xU64
		if !t.k.wide() {
			k = xU32
			if l.u > math.MaxUint32 {
				return xval{}, errAt(pos, strconv.FormatUint(l.u, 10)+" is too big for "+t.f.name+" (at most 4294967295)")
			}
		}
		v := xval{k: k, u: l.u}
		if !l.neg {
			return v, nil
		}
		r, ok := neg(&v)
		if !ok {
			what := "int32"
			if k == xU64 {
				what = "int64"
			}
			return xval{}, errAt(pos, "-"+strconv.FormatUint(l.u, 10)+" is out of range: a negative number for "+t.f.name+" is an "+what)
		}
		return r, nil
	case xBool:
		v := xval{k: xBool}
		if l.b {
			v.u = 1
		}
		return v, nil
	case xStr:
		return xval{k: xStr, s: l.s}, nil
	case xBytes:
		return xval{k: xBytes, s: string(l.bs)}, nil
	case xAddr:
		return xval{k: xAddr, p: l.pfx}, nil
	case xTime, xDate:
		ns := int64(l.u)
		if l.neg {
			ns = -ns
		}
		return xval{k: t.k, u: uint64(ns)}, nil
	}
	return xval{}, errAt(pos, "no value of "+t.f.name+" is written as a literal")
}

package filter

import (
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// Filter is a compiled display filter. It is immutable and safe for
// concurrent use by several goroutines.
type Filter struct {
	root node // nil: match everything
	text string
	omit format.Omit // the fields no test reads (MatchRecord need not format them)
	ref  time.Time   // WithRef
}

// Compile parses a display filter expression (see the package
// documentation for the grammar). An empty expression (or one of only
// spaces) matches every record, as an empty -Y does in tshark. A bad
// expression returns a *SyntaxError that points at the offending token.
func Compile(expr string) (*Filter, error) {
	toks, err := lex(expr)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	if p.peek().kind == tEOF {
		return &Filter{}, nil
	}
	root, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		msg := "unexpected " + describe(t) + " after a complete expression"
		switch t.kind {
		case tRParen:
			msg = "unmatched )"
		case tWord, tString, tLParen, tNot:
			msg += " (missing && or ||?)"
		}
		return nil, errAt(t.pos, msg)
	}
	var b strings.Builder
	root.write(&b)
	return &Filter{root: root, text: b.String(), omit: unread(root, format.OmitAll)}, nil
}

// unread returns the fields of omit that nothing under n reads: a test
// reads the top-level keys its routes' paths start with, a record-type
// shorthand the keys kindNode.eval looks at.
func unread(n node, omit format.Omit) format.Omit {
	switch n := n.(type) {
	case *orNode:
		return unread(n.r, unread(n.l, omit))
	case *andNode:
		return unread(n.r, unread(n.l, omit))
	case *notNode:
		return unread(n.x, omit)
	case *kindNode:
		for _, k := range n.reads() {
			omit &^= format.Reads(k)
		}
		return omit
	case *test:
		for _, r := range n.f.routes {
			omit &^= format.Reads(r.path)
		}
		return omit
	}
	if xs, ok := exprs(n); ok {
		xfields(xs, func(f *field) {
			for _, r := range f.routes {
				omit &^= format.Reads(r.path)
			}
		})
		return omit
	}
	return 0
}

// Reads reports whether a test of the filter reads the top-level key key
// or a member of it ("rdmap" for rdmap.term.code): whether a record's
// value of it can change the verdict. iwarpdump -j N has its workers
// match records before the merge numbers their connections
// (flows.Parallel.SetFormat); a filter that reads "conn" they match in
// two stages (Staged). A nil Filter reads nothing.
func (f *Filter) Reads(key string) bool {
	if f == nil {
		return false
	}
	return reads(f.root, key)
}

func reads(n node, key string) bool {
	switch n := n.(type) {
	case *orNode:
		return reads(n.l, key) || reads(n.r, key)
	case *andNode:
		return reads(n.l, key) || reads(n.r, key)
	case *notNode:
		return reads(n.x, key)
	case *kindNode:
		for _, k := range n.reads() {
			if under(k, key) {
				return true
			}
		}
	case *test:
		return n.f.reads(key)
	}
	found := false
	if xs, ok := exprs(n); ok {
		xfields(xs, func(f *field) { found = found || f.reads(key) })
	}
	return found
}

// reads reports whether a test of f reads key.
func (f *field) reads(key string) bool {
	if f.readsKey(key) {
		return true // an endpoint or time field, read from the record
	}
	for _, r := range f.routes {
		if under(r.path, key) {
			return true
		}
	}
	return false
}

// WithRef returns a copy of the filter whose frame.time_relative counts
// from ref, the first packet's time. Without it, frame.time_relative has no
// value and its tests do not match.
func (f *Filter) WithRef(ref time.Time) *Filter {
	if f == nil {
		return nil
	}
	g := *f
	g.ref = ref
	return &g
}

// readsKey reports whether a field read from the record rather than its
// keys (endpoint and time fields) reads key: its own name, and "conn" for
// tcp.stream, which the merge of iwarpdump -j N numbers with the
// connection ids.
func (f *field) readsKey(key string) bool {
	return f.derive != dNone && (f.name == key || f.derive == dStream && key == "conn")
}

// under reports whether path is key or a member of it.
func under(path, key string) bool {
	return path == key || strings.HasPrefix(path, key+".")
}

// Match reports whether a record's fields (format.Fields) pass the filter.
// It does not allocate. A nil Filter matches everything. The endpoint
// fields (ip.addr, tcp.port, ...: endpoints.go) are the record's, not its
// fields': Match finds none of them, MatchRecord does.
func (f *Filter) Match(kvs []format.KV) bool {
	if f == nil || f.root == nil {
		return true
	}
	return f.root.eval(env{kvs: kvs})
}

// MatchRecord is Match(format.Fields(r)).
func (f *Filter) MatchRecord(r *flows.Record) bool {
	if f == nil || f.root == nil {
		return true
	}
	b := fieldBufs.Get().(*fieldBuf)
	ok := f.matchIn(b, r)
	fieldBufs.Put(b)
	return ok
}

// matchIn is MatchRecord, listing r's fields in b.
func (f *Filter) matchIn(b *fieldBuf, r *flows.Record) bool {
	kvs := b.list.AppendFields(b.kvs[:0], r, f.omit)
	ok := f.root.eval(env{kvs: kvs, r: r, ref: f.ref})
	clear(kvs) // no record's values kept alive by the pool
	b.kvs = kvs[:0]
	b.list.Reset()
	return ok
}

// fieldBuf is what MatchRecord lists a record's fields in: a record has
// some 30, of about 140 octets each, and allocating them for every record
// made a filtered decode four times as slow as an unfiltered one. The
// Lister lends room to the lists among them and keeps the endpoints'
// text: a filter on src or on mpa.markers had allocated for every record
// (the workload of issue 6: 0.42 and 0.66 s, against 0.32 s on the
// opcode).
type fieldBuf struct {
	kvs  []format.KV
	list format.Lister
}

var fieldBufs = sync.Pool{New: func() any { return &fieldBuf{kvs: make([]format.KV, 0, 48)} }}

// String returns the filter in canonical form: registry names for fields
// (aliases replaced), the symbolic operators (&&, ||, !, ==, ...), values
// as the field's type prints them, and only the parentheses precedence
// needs. Compiling the canonical form gives an equivalent filter with the
// same canonical form.
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	return f.text
}

func (n *orNode) prec() int   { return 1 }
func (n *andNode) prec() int  { return 2 }
func (n *notNode) prec() int  { return 3 }
func (n *kindNode) prec() int { return 4 }
func (t *test) prec() int     { return 4 }

func writeSub(b *strings.Builder, n node, min int) {
	if n.prec() < min {
		b.WriteByte('(')
		n.write(b)
		b.WriteByte(')')
		return
	}
	n.write(b)
}

func (n *orNode) write(b *strings.Builder) {
	writeSub(b, n.l, 1)
	b.WriteString(" || ")
	writeSub(b, n.r, 2)
}

func (n *andNode) write(b *strings.Builder) {
	writeSub(b, n.l, 2)
	b.WriteString(" && ")
	writeSub(b, n.r, 3)
}

func (n *notNode) write(b *strings.Builder) {
	b.WriteByte('!')
	_, expr := exprs(n.x)
	if t, ok := n.x.(*test); ok && t.op != opPresent || expr {
		// !(ddp.t == true) reads better than !ddp.t == true.
		b.WriteByte('(')
		n.x.write(b)
		b.WriteByte(')')
		return
	}
	writeSub(b, n.x, 3)
}

func (n *kindNode) write(b *strings.Builder) { b.WriteString(n.name) }

func (t *test) write(b *strings.Builder) {
	b.WriteString(t.f.name)
	if t.op == opPresent {
		return
	}
	b.WriteByte(' ')
	b.WriteString(opNames[t.op])
	b.WriteByte(' ')
	switch t.op {
	case opMatches:
		writeQuoted(b, t.pat)
	case opIn, opNotIn:
		b.WriteByte('{')
		for i := range t.vals {
			if i > 0 {
				b.WriteString(", ")
			}
			t.writeLit(b, &t.vals[i])
			if t.vals[i].hi != nil {
				b.WriteString("..")
				t.writeLit(b, t.vals[i].hi)
			}
		}
		b.WriteByte('}')
	default:
		t.writeLit(b, &t.vals[0])
	}
}

func (t *test) writeLit(b *strings.Builder, l *lit) {
	switch {
	case t.f.typ == fTime:
		writeTime(b, t.f, l)
	case t.f.typ == fDyn:
		if l.quote {
			writeQuoted(b, l.s)
		} else {
			b.WriteString(l.text)
		}
	case l.num:
		if l.neg {
			b.WriteByte('-')
		}
		if t.f.hex {
			b.WriteString("0x")
			b.WriteString(strconv.FormatUint(l.u, 16))
		} else {
			b.WriteString(strconv.FormatUint(l.u, 10))
		}
	case l.isB:
		b.WriteString(strconv.FormatBool(l.b))
	case l.pfx.IsValid() && l.pfx.IsSingleIP():
		b.WriteString(l.pfx.Addr().String())
	case l.pfx.IsValid():
		b.WriteString(l.pfx.String())
	case l.str:
		writeQuoted(b, l.s)
	case l.byt && (l.quote || len(l.bs) == 0):
		writeQuoted(b, string(l.bs))
	case l.byt:
		const hexDigits = "0123456789abcdef"
		for i, c := range l.bs {
			if i > 0 {
				b.WriteByte(':')
			}
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
}

// writeQuoted writes s as a filter string literal: printable UTF-8 as is,
// \" and \\ escaped, everything else as \xHH.
func writeQuoted(b *strings.Builder, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteByte(byte(r))
		case r == utf8.RuneError && n == 1, r < 0x20, r == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[s[i]>>4])
			b.WriteByte(hexDigits[s[i]&15])
		case r >= 0x80 && !strconv.IsPrint(r):
			for j := 0; j < n; j++ {
				b.WriteString(`\x`)
				b.WriteByte(hexDigits[s[i+j]>>4])
				b.WriteByte(hexDigits[s[i+j]&15])
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('"')
}

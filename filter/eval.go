package filter

import (
	"bytes"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// env is what a filter is evaluated on: a record's fields and, from
// MatchRecord, the record (for the endpoint fields).
type env struct {
	kvs []format.KV
	r   *flows.Record
	ref time.Time // the first packet's time (frame.time_relative)
}

// node is a compiled filter expression.
type node interface {
	eval(e env) bool
	prec() int // 1 ||, 2 &&, 3 !, 4 atom
	write(b *strings.Builder)
}

type orNode struct{ l, r node }
type andNode struct{ l, r node }
type notNode struct{ x node }

func (n *orNode) eval(e env) bool  { return n.l.eval(e) || n.r.eval(e) }
func (n *andNode) eval(e env) bool { return n.l.eval(e) && n.r.eval(e) }
func (n *notNode) eval(e env) bool { return !n.x.eval(e) }

// kindNode is a record-type shorthand: mpa, ddp, rdmap, fpdu, message,
// finding, conn.
type kindNode struct{ name string }

func (n *kindNode) eval(e env) bool {
	kvs := e.kvs
	if st, ok := subtrees[n.name]; ok {
		return st.has(kvs)
	}
	switch n.name {
	case "mpa":
		t := recType(kvs)
		return t == "mpa" || t == "fpdu"
	case "ddp":
		return hasKey(kvs, "ddp.t")
	case "rdmap":
		return hasKey(kvs, "rdmap.opcode")
	}
	return recType(kvs) == n.name
}

func recType(kvs []format.KV) string {
	for i := range kvs {
		if kvs[i].Key == "type" && kvs[i].Val.Kind == format.KString {
			return kvs[i].Val.S
		}
	}
	return ""
}

func hasKey(kvs []format.KV, k string) bool {
	for i := range kvs {
		if kvs[i].Key == k {
			return true
		}
	}
	return false
}

// lit is a compiled value. A value of a field whose type is known has one
// reading (num, boolean, str or byt); a value for a field of unknown type
// keeps every reading its text allows and the record's value picks one.
type lit struct {
	text string // source text, printed for fields of unknown type
	num  bool
	neg  bool   // negative number: u is the magnitude
	u    uint64 // number
	// nocmp: a negative number for an unsigned field, which tshark reads
	// as a signed integer and compares with no value of the field.
	nocmp bool
	isB   bool
	b     bool // boolean
	str   bool
	s     string       // string
	pfx   netip.Prefix // an address or subnet (fAddr fields; valid when set)
	byt   bool
	bs    []byte // octets
	quote bool   // the source was a quoted string
	hi    *lit   // upper bound of a range in a set
}

// test is a comparison of a field's values with a value, a set, a regular
// expression, or a presence test.
type test struct {
	f    *field
	op   op
	vals []lit // one value, or the set's elements
	re   *regexp.Regexp
	pat  string // the regular expression as written
}

// scanState carries a scan over a field's values.
type scanState struct {
	stopOn  bool // stop at the first value whose check gives this
	seen    bool // a value was found
	stopped bool
	col     *cell // set: the values are printed (-T fields), not checked
}

func (t *test) eval(e env) bool {
	var s scanState
	switch t.op {
	case opNe, opAllEq, opNotIn:
		// "all" relations: present, and every value passes; "not in" is !(in).
		s.stopOn = false
		t.scan(e, &s)
		return (s.seen || t.op == opNotIn) && !s.stopped
	}
	s.stopOn = true
	t.scan(e, &s)
	return s.stopped
}

// scan visits the field's values until one's check equals s.stopOn.
func (t *test) scan(e env, s *scanState) {
	switch t.f.derive {
	case dNone:
	case dClock:
		t.clockValue(e, s)
		return
	case dStream:
		t.stream(e.r, s)
		return
	default:
		t.derived(e, s)
		return
	}
	kvs := e.kvs
	if w := t.f.when; w != nil && !w(kvs) {
		return
	}
	for i := range t.f.routes {
		r := &t.f.routes[i]
		if r.onlyType != "" && recType(kvs) != r.onlyType || r.when != nil && !r.when(kvs) {
			continue
		}
		v, ok := get(kvs, r.path)
		if !ok {
			continue
		}
		if r.sub == "" {
			t.leaf(&v, s)
		} else if v.Kind == format.KList {
			for j := range v.List {
				if e := &v.List[j]; e.Kind == format.KObject {
					if w, ok := get(e.Obj, r.sub); ok {
						t.leaf(&w, s)
						if s.stopped {
							return
						}
					}
				}
			}
		} else if v.Kind == format.KObject {
			if w, ok := get(v.Obj, r.sub); ok {
				t.leaf(&w, s)
			}
		}
		if s.stopped {
			return
		}
	}
}

// holds reports whether the record's Terminate is one w applies to.
func (w termWhen) holds(kvs []format.KV) bool {
	l, ok := get(kvs, "rdmap.term.layer")
	if !ok || l.Kind != format.KUint {
		return false
	}
	e, ok := get(kvs, "rdmap.term.etype")
	return ok && e.Kind == format.KUint && w(l.U, e.U)
}

// leaf checks one found value: a list field's elements one by one.
func (t *test) leaf(v *format.Value, s *scanState) {
	if t.f.list {
		if v.Kind != format.KList {
			return
		}
		if t.op == opPresent && s.col == nil {
			s.seen, s.stopped = true, true
			return
		}
		for i := range v.List {
			t.one(&v.List[i], s)
			if s.stopped {
				return
			}
		}
		return
	}
	t.one(v, s)
}

func (t *test) one(v *format.Value, s *scanState) {
	if !kindOK(t.f.typ, v.Kind) {
		return
	}
	s.seen = true
	if s.col != nil {
		s.col.value(t.f, v, s)
		return
	}
	if t.check(v) == s.stopOn {
		s.stopped = true
	}
}

// kindOK says whether a value of kind k can be a value of a field of type
// typ (the same key holds other things in other record types).
func kindOK(typ ftype, k format.Kind) bool {
	switch typ {
	case fBool:
		return k == format.KBool
	case fNum:
		return k == format.KUint || k == format.KInt
	case fTime:
		return k == format.KInt
	case fString:
		return k == format.KString
	case fBytes:
		return k == format.KBytes
	case fObject:
		return k == format.KObject
	case fDyn:
		return k != format.KNull
	}
	return true
}

// check applies the relation to one value.
func (t *test) check(v *format.Value) bool {
	switch t.op {
	case opPresent:
		return true
	case opEq, opAllEq:
		c, ok := compare(v, &t.vals[0])
		return ok && c == 0
	case opNe:
		c, ok := compare(v, &t.vals[0])
		return !ok || c != 0 // all_ne: no value equal
	case opAnyNe:
		c, ok := compare(v, &t.vals[0])
		return ok && c != 0 // some value compares, and is not equal
	case opLt:
		c, ok := compare(v, &t.vals[0])
		return ok && c < 0
	case opLe:
		c, ok := compare(v, &t.vals[0])
		return ok && c <= 0
	case opGt:
		c, ok := compare(v, &t.vals[0])
		return ok && c > 0
	case opGe:
		c, ok := compare(v, &t.vals[0])
		return ok && c >= 0
	case opContains:
		l := &t.vals[0]
		switch {
		case v.Kind == format.KString && l.str:
			return strings.Contains(v.S, l.s)
		case v.Kind == format.KBytes && l.byt:
			return bytes.Contains(v.Bytes, l.bs)
		}
		return false
	case opMatches:
		return v.Kind == format.KString && t.re.MatchString(v.S)
	case opIn:
		return t.inSet(v)
	case opNotIn:
		return !t.inSet(v)
	}
	return false
}

func (t *test) inSet(v *format.Value) bool {
	for i := range t.vals {
		l := &t.vals[i]
		if l.hi == nil {
			if c, ok := compare(v, l); ok && c == 0 {
				return true
			}
			continue
		}
		lo, ok1 := compare(v, l)
		hi, ok2 := compare(v, l.hi)
		if ok1 && ok2 && lo >= 0 && hi <= 0 {
			return true
		}
	}
	return false
}

// compare orders a record value against a compiled value; ok is false when
// the value has no reading of the record value's kind.
func compare(v *format.Value, l *lit) (int, bool) {
	switch v.Kind {
	case format.KUint, format.KInt:
		if !l.num || l.nocmp {
			return 0, false
		}
		neg, u := false, v.U
		if v.Kind == format.KInt {
			if v.I < 0 {
				neg, u = true, uint64(-(v.I+1))+1
			} else {
				u = uint64(v.I)
			}
		}
		if neg != l.neg {
			if neg {
				return -1, true
			}
			return 1, true
		}
		c := cmpU(u, l.u)
		if neg {
			c = -c
		}
		return c, true
	case format.KBool:
		if !l.isB {
			return 0, false
		}
		switch {
		case v.B == l.b:
			return 0, true
		case v.B:
			return 1, true
		}
		return -1, true
	case format.KString:
		if !l.str {
			return 0, false
		}
		return strings.Compare(v.S, l.s), true
	case format.KBytes:
		if !l.byt {
			return 0, false
		}
		return bytes.Compare(v.Bytes, l.bs), true
	}
	return 0, false
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// get finds path in kvs with the semantics of format.Get (an exact key
// first, else a dotted descent into an object whose key is a prefix of
// path), in one pass over kvs when no key is a prefix of path.
func get(kvs []format.KV, path string) (format.Value, bool) {
	if path == "" {
		return format.Value{}, false
	}
	first := -1
	last := path[len(path)-1]
	for i := range kvs {
		k := kvs[i].Key
		if len(k) == len(path) {
			if k[len(k)-1] == last && k == path {
				return kvs[i].Val, true
			}
		} else if first < 0 && len(k) < len(path) && path[len(k)] == '.' && kvs[i].Val.Kind == format.KObject && path[:len(k)] == k {
			first = i
		}
	}
	if first < 0 {
		return format.Value{}, false
	}
	for i := first; i < len(kvs); i++ {
		k := kvs[i].Key
		if len(k) < len(path) && path[len(k)] == '.' && kvs[i].Val.Kind == format.KObject && path[:len(k)] == k {
			if v, ok := get(kvs[i].Val.Obj, path[len(k)+1:]); ok {
				return v, true
			}
		}
	}
	return format.Value{}, false
}

// reads returns the record keys eval looks at.
func (n *kindNode) reads() []string {
	if st, ok := subtrees[n.name]; ok {
		return st.reads
	}
	return []string{"type", "ddp.t", "rdmap.opcode"}
}

// subtree is one of Wireshark's header subtrees (FT_NONE fields, or
// octets iwarpkit does not keep): true for a record that has the header.
type subtree struct {
	reads []string // the keys has looks at
	has   func(kvs []format.KV) bool
}

// subtrees are Wireshark's names of header subtrees, tested for presence
// as tshark tests them (checked with tshark -Y on the bundled captures).
var subtrees = map[string]subtree{
	"iwarp_mpa.req":            {[]string{"type", "kind"}, func(kvs []format.KV) bool { return mpaKind(kvs) == "request" }},
	"iwarp_mpa.key.req":        {[]string{"type", "kind"}, func(kvs []format.KV) bool { return mpaKind(kvs) == "request" }},
	"iwarp_mpa.rep":            {[]string{"type", "kind"}, func(kvs []format.KV) bool { return mpaKind(kvs) == "reply" }},
	"iwarp_mpa.key.rep":        {[]string{"type", "kind"}, func(kvs []format.KV) bool { return mpaKind(kvs) == "reply" }},
	"iwarp_mpa.fpdu":           {[]string{"type"}, func(kvs []format.KV) bool { return recType(kvs) == "fpdu" }},
	"iwarp_ddp.control_field":  {[]string{"ddp.t"}, func(kvs []format.KV) bool { return hasKey(kvs, "ddp.t") }},
	"iwarp_ddp.tagged":         {[]string{"ddp.t"}, func(kvs []format.KV) bool { return boolKey(kvs, "ddp.t", true) }},
	"iwarp_ddp.untagged":       {[]string{"ddp.t"}, func(kvs []format.KV) bool { return boolKey(kvs, "ddp.t", false) }},
	"iwarp_rdma.control_field": {[]string{"rdmap.opcode"}, func(kvs []format.KV) bool { return hasKey(kvs, "rdmap.opcode") }},
	"iwarp_rdma.term_ctrl":     {[]string{"rdmap.term"}, func(kvs []format.KV) bool { return hasKey(kvs, "rdmap.term") }},
	"iwarp_rdma.term_hdrct":    {[]string{"rdmap.term"}, func(kvs []format.KV) bool { return hasKey(kvs, "rdmap.term") }},
}

// mpaKind returns an MPA Request's or Reply's kind, or "".
func mpaKind(kvs []format.KV) string {
	if recType(kvs) != "mpa" {
		return ""
	}
	if v, ok := get(kvs, "kind"); ok && v.Kind == format.KString {
		return v.S
	}
	return ""
}

// boolKey reports whether kvs has key k with the boolean value b.
func boolKey(kvs []format.KV, k string, b bool) bool {
	v, ok := get(kvs, k)
	return ok && v.Kind == format.KBool && v.B == b
}

package filter

import (
	"strconv"
	"strings"

	"github.com/iwarpkit/iwarpkit/format"
)

// octetRange is a slice of a bytes field, as Wireshark writes them: [i:n]
// n octets from offset i, [i-j] offsets i to j included, [i] one octet,
// [:n] the first n, [i:] from i to the end. A negative offset counts from
// the end (-1 is the last octet).
type octetRange struct {
	start  int
	n      int  // octets (0: to the end)
	toEnd  bool // [i:]
	endOff bool // n is an end offset (i-j), not a length
}

// bounds returns the range's octets in a value of size octets; ok is false
// when the range runs past either end, as tshark then has no value.
func (r octetRange) bounds(size int) (lo, hi int, ok bool) {
	lo = r.start
	if lo < 0 {
		lo += size
	}
	switch {
	case r.toEnd:
		hi = size
	case r.endOff:
		hi = r.n
		if hi < 0 {
			hi += size
		}
		hi++
	default:
		hi = lo + r.n
	}
	if lo < 0 || lo >= size || hi > size || hi <= lo {
		return 0, 0, false
	}
	return lo, hi, true
}

// parseRange reads what is between a slice's brackets.
func parseRange(s string) (octetRange, string) {
	num := func(w string) (int, bool) {
		n, err := strconv.Atoi(w)
		return n, err == nil && w != "" && w[0] != '+'
	}
	var r octetRange
	if strings.Contains(s, ",") {
		return r, "a slice of several ranges is not supported: write one range"
	}
	if a, b, ok := strings.Cut(s, ":"); ok {
		var okA, okB bool
		r.start, okA = num(a)
		if a == "" {
			r.start, okA = 0, true
		}
		if b == "" {
			r.toEnd, okB = true, a != ""
		} else {
			r.n, okB = num(b)
			if okB && r.n <= 0 {
				return r, "range " + s + ": the length must be positive"
			}
		}
		if !okA || !okB {
			return r, "bad range " + strconv.Quote(s) + " (want i:n, i-j, i, :n or i:)"
		}
		return r, ""
	}
	// i-j, where i may be negative: the dash after the first digit.
	if k := strings.IndexByte(s[min(1, len(s)):], '-'); k >= 0 {
		k += min(1, len(s))
		a, okA := num(s[:k])
		b, okB := num(s[k+1:])
		if !okA || !okB {
			return r, "bad range " + strconv.Quote(s) + " (want i:n, i-j, i, :n or i:)"
		}
		if a >= 0 && b >= 0 && a > b {
			return r, "range " + s + ": the start is after the end"
		}
		r.start, r.n, r.endOff = a, b, true
		return r, ""
	}
	a, ok := num(s)
	if !ok {
		return r, "bad range " + strconv.Quote(s) + " (want i:n, i-j, i, :n or i:)"
	}
	r.start, r.n = a, 1
	return r, ""
}

// slice resolves name[range]: the octets of a bytes field in the range, a
// bytes field itself. A record whose value the range runs past has no
// value (no test on the slice is true), as in tshark.
func (p *parser) slice(name, sl token) (*field, error) {
	f, err := p.field(name)
	if err != nil {
		return nil, err
	}
	plain := f.derive == dNone && len(f.routes) == 1 && f.routes[0].sub == "" && f.routes[0].onlyType == ""
	derived := f.derive == dWire && f.wire != nil // a field of wireFields (wire.go)
	if f.typ != fBytes || f.list || f.when != nil || !plain && !derived {
		return nil, errAt(sl.pos, "slices apply to a bytes field (pd[0:2]); "+f.name+" is "+article(f))
	}
	r, msg := parseRange(sl.val)
	if msg != "" {
		return nil, errAt(sl.pos, msg)
	}
	value := f.wire
	if plain {
		path := f.routes[0].path
		value = func(kvs []format.KV) (format.Value, bool) { return get(kvs, path) }
	}
	return &field{name: f.name + "[" + sl.val + "]", typ: fBytes, derive: dWire, routes: f.routes,
		wire: func(kvs []format.KV) (format.Value, bool) {
			v, ok := value(kvs)
			if !ok || v.Kind != format.KBytes {
				return format.Value{}, false
			}
			lo, hi, ok := r.bounds(len(v.Bytes))
			if !ok {
				return format.Value{}, false
			}
			return format.Bytes(v.Bytes[lo:hi]), true
		}}, nil
}

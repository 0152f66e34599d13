package filter

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// Columns prints chosen fields of records, one line per record, as
// tshark -T fields -e prints them for each packet (iwarpdump -T fields).
// The fields are named as in a display filter: registry names, Wireshark's
// aliases, message and conn keys, members of objects and lists
// (findings.code), the endpoint fields (ip.src, tcp.dstport, ...), and
// three time fields no record has as a key:
//
//   - frame.time_epoch: seconds since the epoch;
//   - frame.time_relative: seconds since the first packet (ColumnTimes.Ref);
//   - frame.time_delta_displayed: seconds since the previous line
//     (ColumnTimes.Prev).
//
// Values print as tshark prints them: unsigned numbers in decimal, the
// registry's hexadecimal fields as 0x and as many digits as the field's
// width (dissect.Field.Bits: ddp.stag 0x07bf1600), booleans 1 and 0,
// octets in lowercase hex without separators, times with nine decimals. A
// field a record does not have is an empty column; a field with several
// values in a record (a list such as frames, or findings.code over the
// attached findings) prints them joined by the aggregator, or the first or
// last only (ColumnOptions.Occurrence). Strings escape backslash, tab, line
// ends and other control octets (\t, \n, \xHH), so that a line stays a
// line; with quotes, a quote inside a value is doubled, as CSV does.
//
// A Columns is immutable and safe for concurrent use.
type Columns struct {
	cols []column
	o    ColumnOptions
	omit format.Omit
}

// column is one -e field.
type column struct {
	name  string // as given
	t     test
	clock clock
}

// clock is a time field.
type clock uint8

const (
	cNone     clock = iota
	cEpoch          // frame.time_epoch
	cRelative       // frame.time_relative
	cDelta          // frame.time_delta_displayed
	cAbsolute       // frame.time (display filters only)
)

var clocks = [...]struct {
	name string
	c    clock
}{
	{"frame.time_epoch", cEpoch},
	{"frame.time_relative", cRelative},
	{"frame.time_delta_displayed", cDelta},
}

// ColumnOptions are tshark's -E options.
type ColumnOptions struct {
	BOM        bool // a UTF-8 byte order mark before the first line (bom=y)
	Header     bool // a first line of the field names as given (header=y)
	Separator  byte // between columns: '\t' (separator=/t), ' ' (/s) or a printable character
	Occurrence byte // 'a' every value of a field, 'f' the first, 'l' the last
	Aggregator byte // between the values of one field: ',' (aggregator=,), ' ' (/s) or a printable character
	Quote      byte // around each value present: 0 (quote=n), '"' (d) or '\'' (s)
}

// DefaultColumnOptions are tshark's defaults: no header, tab-separated,
// every occurrence, joined by commas, no quotes.
func DefaultColumnOptions() ColumnOptions {
	return ColumnOptions{Separator: '\t', Occurrence: 'a', Aggregator: ','}
}

// ColumnTimes are the references of the relative time fields.
type ColumnTimes struct {
	Ref  time.Time // the first packet's time (frame.time_relative)
	Prev time.Time // the previous line's time (frame.time_delta_displayed; zero: none)
}

// Set applies one -E option, "name=value", as tshark -E takes it.
func (o *ColumnOptions) Set(opt string) error {
	name, val, ok := strings.Cut(opt, "=")
	if !ok {
		return fmt.Errorf("-E %s: want name=value (header=y, separator=/t, occurrence=f, aggregator=, , quote=d, bom=y)", opt)
	}
	yes := func() (bool, error) {
		switch val {
		case "y", "Y":
			return true, nil
		case "n", "N":
			return false, nil
		}
		return false, fmt.Errorf("-E %s: want y or n", opt)
	}
	char := func() (byte, error) {
		switch {
		case val == "/t":
			return '\t', nil
		case val == "/s":
			return ' ', nil
		case len(val) == 1 && val[0] > ' ' && val[0] < 0x7f:
			return val[0], nil
		}
		return 0, fmt.Errorf("-E %s: want /t, /s or one printable character", opt)
	}
	var err error
	switch name {
	case "bom":
		o.BOM, err = yes()
	case "header":
		o.Header, err = yes()
	case "separator":
		o.Separator, err = char()
	case "aggregator":
		o.Aggregator, err = char()
	case "occurrence":
		switch val {
		case "a", "f", "l":
			o.Occurrence = val[0]
		default:
			err = fmt.Errorf("-E %s: want f (first), l (last) or a (all)", opt)
		}
	case "quote":
		switch val {
		case "d":
			o.Quote = '"'
		case "s":
			o.Quote = '\''
		case "n":
			o.Quote = 0
		default:
			err = fmt.Errorf("-E %s: want d (double), s (single) or n (none)", opt)
		}
	default:
		err = fmt.Errorf("-E %s: unknown option %q (bom, header, separator, occurrence, aggregator, quote)", opt, name)
	}
	return err
}

// ErrNoColumns is NewColumns' error when no field is named.
var ErrNoColumns = errors.New("no field to print: name one with -e")

// NewColumns resolves the field names. A name that is not a field, a
// protocol (iwarp_mpa) or an object (rdmap.term) is an error that says
// which name to use instead.
func NewColumns(names []string, o ColumnOptions) (*Columns, error) {
	if len(names) == 0 {
		return nil, ErrNoColumns
	}
	c := &Columns{o: o, omit: format.OmitAll}
	for _, n := range names {
		col := column{name: n}
		for _, k := range clocks {
			if k.name == n {
				col.clock = k.c
			}
		}
		if col.clock == cNone {
			f, ok := resolve(n)
			switch {
			case !ok:
				if _, isType := shorthand(n); isType {
					return nil, fmt.Errorf("-e %s: a protocol or record type, not a field: name one of its fields", n)
				}
				return nil, fmt.Errorf("-e %s: unknown field (did you mean %q?)", n, nearest(n))
			case f.typ == fNone:
				return nil, fmt.Errorf("-e %s: a protocol, not a field: name one of its fields", n)
			case f.typ == fObject && !f.open:
				return nil, fmt.Errorf("-e %s: an object: name one of its members (%s)", n, membersOf(f.name))
			case f.typ == fObject:
				return nil, fmt.Errorf("-e %s: an object: name one of its members", n)
			case f.typ == fTime:
				return nil, fmt.Errorf("-e %s: a display-filter field only: print frame.time_epoch or frame.time_relative", n)
			}
			col.t = test{f: f, op: opPresent}
			for _, r := range f.routes {
				c.omit &^= format.Reads(r.path)
			}
		}
		c.cols = append(c.cols, col)
	}
	return c, nil
}

// membersOf lists a few known members of an object field, for errors.
func membersOf(name string) string {
	var out, deeper []string
	for _, k := range knownNames() {
		switch {
		case !strings.HasPrefix(k, name+"."):
		case strings.Contains(k[len(name)+1:], "."):
			deeper = append(deeper, k)
		default:
			out = append(out, k) // members first, then their members
		}
	}
	out = append(out, deeper...)
	if len(out) > 4 {
		out = append(out[:4], "...")
	}
	return strings.Join(out, ", ")
}

// Reads reports whether a column reads the top-level key key or a member
// of it, as Filter.Reads does. A nil Columns reads nothing.
func (c *Columns) Reads(key string) bool {
	if c == nil {
		return false
	}
	for i := range c.cols {
		if f := c.cols[i].t.f; f != nil && f.readsKey(key) {
			return true
		}
		for _, r := range c.cols[i].t.routesOf() {
			if under(r.path, key) {
				return true
			}
		}
	}
	return false
}

// routesOf returns the test's field routes (none for a time field).
func (t *test) routesOf() []route {
	if t.f == nil {
		return nil
	}
	return t.f.routes
}

// Uses reports whether a column is the time field name (frame.time_relative
// needs ColumnTimes.Ref, frame.time_delta_displayed ColumnTimes.Prev). A
// nil Columns uses none.
func (c *Columns) Uses(name string) bool {
	if c == nil {
		return false
	}
	for i := range c.cols {
		if c.cols[i].clock != cNone && c.cols[i].name == name {
			return true
		}
	}
	return false
}

// AppendHeader appends what comes before the first record: the byte order
// mark and the header line, as the options ask.
func (c *Columns) AppendHeader(dst []byte) []byte {
	if c.o.BOM {
		dst = append(dst, "\xef\xbb\xbf"...)
	}
	if !c.o.Header {
		return dst
	}
	for i := range c.cols {
		if i > 0 {
			dst = append(dst, c.o.Separator)
		}
		dst = append(dst, c.cols[i].name...)
	}
	return append(dst, '\n')
}

// Append appends r's line. It does not allocate.
func (c *Columns) Append(dst []byte, r *flows.Record, tm ColumnTimes) []byte {
	b := fieldBufs.Get().(*fieldBuf)
	kvs := b.list.AppendFields(b.kvs[:0], r, c.omit)
	e := env{kvs: kvs, r: r}
	q := c.o.Quote
	for i := range c.cols {
		if i > 0 {
			dst = append(dst, c.o.Separator)
		}
		col := &c.cols[i]
		cl := cell{dst: dst, o: &c.o}
		if q != 0 {
			cl.dst = append(cl.dst, q)
		}
		cl.start = len(cl.dst)
		if col.clock != cNone {
			cl.time(col.clock, r.TS, tm)
		} else {
			s := scanState{col: &cl}
			col.t.scan(e, &s)
		}
		switch {
		case q == 0:
		case cl.n == 0:
			cl.dst = cl.dst[:cl.start-1] // tshark quotes values, not empty columns
		default:
			cl.dst = append(cl.dst, q)
		}
		dst = cl.dst
	}
	clear(kvs)
	b.kvs = kvs[:0]
	b.list.Reset()
	fieldBufs.Put(b)
	return append(dst, '\n')
}

// Format is Append as a flows.Format for the workers of iwarpdump -j N:
// a record whose line needs the merge (its connection id, or the line
// before it) is left to it.
func (c *Columns) Format(tm ColumnTimes) flows.Format {
	if c.Reads("conn") || c.Uses("frame.time_delta_displayed") {
		return func(dst []byte, r *flows.Record) ([]byte, int, bool) { return dst, -1, false }
	}
	return func(dst []byte, r *flows.Record) ([]byte, int, bool) {
		switch r.Type {
		case flows.RecFPDU, flows.RecMessage:
			return c.Append(dst, r, tm), -1, true
		}
		return dst, -1, false
	}
}

// cell is one column of a line being written.
type cell struct {
	dst   []byte
	start int // where the column's values begin
	n     int // values written
	o     *ColumnOptions
	// sink, when set, takes the values instead: an expression's field
	// (xnode.go) collects its values through a scan.
	sink *scratch
}

// next makes room for one more value: after an aggregator, or in place of
// the last one (occurrence=l).
func (c *cell) next() {
	if c.n > 0 {
		if c.o.Occurrence == 'l' {
			c.dst = c.dst[:c.start]
		} else {
			c.dst = append(c.dst, c.o.Aggregator)
		}
	}
	c.n++
}

// value prints one value of f.
func (c *cell) value(f *field, v *format.Value, s *scanState) {
	if c.sink != nil {
		c.sink.push(f, v)
		return
	}
	switch v.Kind {
	case format.KUint, format.KInt, format.KBool, format.KString, format.KBytes:
	default:
		return // an object or list of a field of unknown type: nothing to print
	}
	c.next()
	switch v.Kind {
	case format.KUint:
		if f.hex {
			c.dst = appendHex(c.dst, v.U, int(f.bits)/4)
		} else {
			c.dst = strconv.AppendUint(c.dst, v.U, 10)
		}
	case format.KInt:
		c.dst = strconv.AppendInt(c.dst, v.I, 10)
	case format.KBool:
		if v.B {
			c.dst = append(c.dst, '1')
		} else {
			c.dst = append(c.dst, '0')
		}
	case format.KString:
		c.dst = c.escape(c.dst, v.S)
	case format.KBytes:
		for _, o := range v.Bytes {
			c.dst = append(c.dst, hexDigits[o>>4], hexDigits[o&15])
		}
	}
	if c.o.Occurrence == 'f' {
		s.stopped = true
	}
}

// addr prints an address (an endpoint field).
func (c *cell) addr(a netip.Addr, s *scanState) {
	if c.sink != nil {
		c.sink.pushAddr(a)
		return
	}
	c.next()
	c.dst = a.AppendTo(c.dst)
	if c.o.Occurrence == 'f' {
		s.stopped = true
	}
}

// time prints a time field.
func (c *cell) time(k clock, ts time.Time, tm ColumnTimes) {
	var d time.Duration
	switch k {
	case cEpoch:
		c.next()
		c.dst = appendSeconds(c.dst, ts.Unix(), ts.Nanosecond())
		return
	case cRelative:
		d = ts.Sub(tm.Ref)
	case cDelta:
		if !tm.Prev.IsZero() {
			d = ts.Sub(tm.Prev)
		}
	}
	c.next()
	if d < 0 {
		c.dst = append(c.dst, '-')
		d = -d
	}
	c.dst = appendSeconds(c.dst, int64(d/time.Second), int(d%time.Second))
}

// appendSeconds appends sec.nnnnnnnnn.
func appendSeconds(dst []byte, sec int64, nsec int) []byte {
	if sec < 0 && nsec > 0 {
		// Before the epoch: time.Unix's (sec, nsec) has nsec >= 0.
		dst = append(dst, '-')
		sec, nsec = -sec-1, 1e9-nsec
	}
	dst = strconv.AppendInt(dst, sec, 10)
	dst = append(dst, '.')
	for p := 100000000; p > 0; p /= 10 {
		dst = append(dst, byte('0'+nsec/p%10))
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendHex appends 0x and u in hex, zero-padded to digits.
func appendHex(dst []byte, u uint64, digits int) []byte {
	dst = append(dst, '0', 'x')
	n := 1
	for v := u >> 4; v != 0; v >>= 4 {
		n++
	}
	for ; digits > n; digits-- {
		dst = append(dst, '0')
	}
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[u>>(4*uint(i))&15])
	}
	return dst
}

// escape appends s with backslash, control octets and invalid UTF-8
// escaped, and the quote doubled when values are quoted.
func (c *cell) escape(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		b := s[i]
		switch {
		case b == '\\':
			dst = append(dst, '\\', '\\')
		case b == '\t':
			dst = append(dst, '\\', 't')
		case b == '\n':
			dst = append(dst, '\\', 'n')
		case b == '\r':
			dst = append(dst, '\\', 'r')
		case c.o.Quote != 0 && b == c.o.Quote:
			dst = append(dst, b, b)
		case b < ' ' || b == 0x7f:
			dst = append(dst, '\\', 'x', hexDigits[b>>4], hexDigits[b&15])
		case b < utf8.RuneSelf:
			dst = append(dst, b)
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n <= 1 {
				dst = append(dst, '\\', 'x', hexDigits[b>>4], hexDigits[b&15])
				i++
				continue
			}
			dst = append(dst, s[i:i+n]...)
			i += n
			continue
		}
		i++
	}
	return dst
}

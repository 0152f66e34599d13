package filter

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/iwarpkit/iwarpkit/format"
)

// Time fields of Wireshark's frame protocol, so that a filter written for
// tshark to pick a stretch of a capture works here:
//
//   - frame.time: the record's time, compared with a date in double quotes,
//     in the local time zone unless it ends in Z, UTC or an offset, as
//     tshark takes it: "2026-11-22 02:13:22", "2026-11-22T02:13:22.5Z",
//     "Nov 22, 2026 02:13:22.163398";
//   - frame.time_epoch: seconds since 1970-01-01 UTC, a decimal number with
//     up to nine decimals (frame.time_epoch >= 1795313602.16);
//   - frame.time_relative: seconds since the first packet of the capture
//     (frame.time_relative >= 10 && frame.time_relative < 12.5).
//
// A record's time is that of the frame holding its first octet (the ts
// key), the frame tshark shows a PDU's first octets in. No record has keys
// of these names: the values come from flows.Record.TS, which is why only
// MatchRecord finds them, and frame.time_relative needs the first
// packet's time (Filter.WithRef). Comparisons are exact, in nanoseconds.
var timeFields = [...]struct {
	name string
	c    clock
	desc string
}{
	{"frame.time", cAbsolute, "the record's time, compared with a date in double quotes"},
	{"frame.time_epoch", cEpoch, "the record's time in seconds since the epoch"},
	{"frame.time_relative", cRelative, "seconds since the first packet"},
}

// timeField resolves a time field.
func timeField(name string) (*field, bool) {
	for _, t := range timeFields {
		if t.name == name {
			return &field{name: t.name, typ: fTime, derive: dClock, clk: t.c}, true
		}
	}
	return nil, false
}

// clockValue appends the time field's value of the record in e: its
// nanoseconds since the epoch (frame.time, frame.time_epoch) or since the
// first packet (frame.time_relative). A record without a time, or a
// relative time without a first packet's, has none.
func (t *test) clockValue(e env, s *scanState) {
	if e.r == nil || e.r.TS.IsZero() {
		return
	}
	var ns int64
	switch t.f.clk {
	case cRelative:
		if e.ref.IsZero() {
			return
		}
		ns = int64(e.r.TS.Sub(e.ref))
	default:
		ns = e.r.TS.UnixNano()
	}
	v := format.Int(ns)
	t.one(&v, s)
}

// timeValue reads the literal of a time field: a date in double quotes for
// frame.time, seconds for the others.
func timeValue(f *field, v token) (lit, error) {
	l := lit{text: v.text, num: true}
	if f.clk == cAbsolute {
		if v.kind != tString {
			return lit{}, errAt(v.pos, f.name+" is a time: write the date in double quotes (\"2026-11-22 02:13:22\")")
		}
		tm, ok := parseDate(v.val)
		if !ok {
			return lit{}, errAt(v.pos, "bad date "+v.text+`: want "2006-01-02 15:04:05[.nnn][Z]", RFC 3339, or "Jan 2, 2006 15:04:05[.nnn]"`)
		}
		l.quote = true
		l.neg, l.u = signMagnitude(tm.UnixNano())
		return l, nil
	}
	if v.kind == tString {
		return lit{}, errAt(v.pos, f.name+" is a number of seconds; "+v.text+" is a string")
	}
	neg, u, err := parseSeconds(v.text)
	if err != "" {
		return lit{}, errAt(v.pos, f.name+" is a number of seconds; "+strconv.Quote(v.text)+" "+err)
	}
	l.neg, l.u = neg, u
	return l, nil
}

// maxSeconds is the most seconds a time literal holds: nanoseconds in an
// int64.
const maxSeconds = math.MaxInt64 / 1_000_000_000

// parseSeconds reads decimal seconds with up to nine decimals ("-1.5",
// "10", "0.000001") as nanoseconds: a sign and a magnitude. err is "" on
// success.
func parseSeconds(w string) (neg bool, ns uint64, err string) {
	s := strings.TrimSuffix(w, "s") // tshark takes "1.5s" too
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	ip, fp, dot := strings.Cut(s, ".")
	if ip == "" && fp == "" || dot && fp == "" {
		return false, 0, "is not a number"
	}
	if len(fp) > 9 && strings.Trim(fp[9:], "0") != "" {
		return false, 0, "has more than nine decimals"
	}
	var sec uint64
	for i := 0; i < len(ip); i++ {
		c := ip[i]
		if c < '0' || c > '9' {
			return false, 0, "is not a decimal number"
		}
		hi, lo := bits.Mul64(sec, 10)
		if hi != 0 || lo > maxSeconds {
			return false, 0, "is out of range"
		}
		sec = lo + uint64(c-'0')
	}
	if sec > maxSeconds {
		return false, 0, "is out of range"
	}
	var frac uint64
	for i := 0; i < len(fp) || i < 9; i++ {
		var c byte = '0'
		if i < len(fp) {
			c = fp[i]
		}
		if c < '0' || c > '9' {
			return false, 0, "is not a decimal number"
		}
		if i < 9 {
			frac = frac*10 + uint64(c-'0')
		}
	}
	ns = sec*1e9 + frac
	if ns == 0 {
		neg = false
	}
	return neg, ns, ""
}

// signMagnitude splits v into a sign and a magnitude, as lits hold numbers.
func signMagnitude(v int64) (bool, uint64) {
	if v < 0 {
		return true, uint64(-(v + 1)) + 1
	}
	return false, uint64(v)
}

// dateLayouts are the dates frame.time takes, without the fraction of a
// second (any number of decimals is accepted after the seconds) or zone.
var dateLayouts = [...]string{
	"2006-01-02 15:04:05",
	"2006-01-02T15:04:05",
	"Jan 2, 2006 15:04:05",
	"Jan _2, 2006 15:04:05",
	"2006-01-02 15:04",
}

// parseDate reads a date of frame.time: in the local time zone, or UTC with
// a trailing Z or " UTC", or with an offset (RFC 3339).
func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	loc := time.Local
	switch {
	case strings.HasSuffix(s, " UTC"):
		s, loc = strings.TrimSpace(s[:len(s)-4]), time.UTC
	case strings.HasSuffix(s, "Z"):
		s, loc = s[:len(s)-1], time.UTC
	}
	for _, l := range dateLayouts {
		// Fractions of a second: Go's parser takes any number of
		// decimals after the seconds when the layout has none.
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, true
		}
		// An offset after the time ("2026-11-22 03:13:22.5+01:00").
		if t, err := time.Parse(l+"Z07:00", s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// writeTime writes a time literal in a form that compiles to the same
// value: seconds with nine decimals, or an RFC 3339 date in UTC.
func writeTime(b *strings.Builder, f *field, l *lit) {
	ns := int64(l.u)
	if l.neg {
		ns = -ns
	}
	if f.clk == cAbsolute {
		b.WriteByte('"')
		b.WriteString(time.Unix(0, ns).UTC().Format(time.RFC3339Nano))
		b.WriteByte('"')
		return
	}
	if l.neg {
		b.WriteByte('-')
	}
	b.WriteString(strconv.FormatUint(l.u/1e9, 10))
	b.WriteByte('.')
	frac := strconv.FormatUint(l.u%1e9, 10)
	b.WriteString(strings.Repeat("0", 9-len(frac)))
	b.WriteString(frac)
}

package format

import (
	"errors"
	"strconv"
	"time"
)

// TimeFormat is how a text line gives its record's time (iwarpdump -t,
// named as tshark's -t formats; every one has microseconds, as tshark
// prints them for a capture of microsecond timestamps).
type TimeFormat uint8

const (
	TimeUTC       TimeFormat = iota // u: UTC time of day, 02:11:07.706735 (the default)
	TimeUTCDate                     // ud: UTC date and time, 2026-11-22 02:11:07.706735
	TimeLocal                       // a: local time of day (time.Local, the TZ variable)
	TimeLocalDate                   // ad: local date and time
	TimeEpoch                       // e: seconds since 1970-01-01 UTC, 1795313467.706735
	TimeRelative                    // r: seconds since the first packet (TextOptions.Ref)
	TimeDelta                       // dd: seconds since the previous line's record (TextOptions.Prev)
)

var timeFormatNames = [...]string{"u", "ud", "a", "ad", "e", "r", "dd"}

// ErrTimeFormat is returned by ParseTimeFormat for a name it does not know.
var ErrTimeFormat = errors.New("unknown time format (want a, ad, u, ud, e, r or dd)")

// ParseTimeFormat reads a tshark -t name: a, ad, u, ud, e, r or dd.
func ParseTimeFormat(s string) (TimeFormat, error) {
	for i, n := range timeFormatNames {
		if n == s {
			return TimeFormat(i), nil
		}
	}
	return 0, ErrTimeFormat
}

// String returns the format's tshark -t name.
func (f TimeFormat) String() string {
	if int(f) < len(timeFormatNames) {
		return timeFormatNames[f]
	}
	return "TimeFormat(" + strconv.Itoa(int(f)) + ")"
}

// AppendTime appends t as a text line's time in o.Time's format (Ref for
// TimeRelative, Prev for TimeDelta): the time iwarpdump's lines and the
// TUI's Time column show.
func (o *TextOptions) AppendTime(dst []byte, t time.Time) []byte {
	switch o.Time {
	case TimeUTCDate:
		return appendClock(appendDate(dst, t.UTC()), t.UTC())
	case TimeLocal:
		return appendClock(dst, t.Local())
	case TimeLocalDate:
		return appendClock(appendDate(dst, t.Local()), t.Local())
	case TimeEpoch:
		return appendSeconds(dst, t.UnixNano()/1000)
	case TimeRelative:
		return appendSeconds(dst, relMicros(t, o.Ref))
	case TimeDelta:
		return appendSeconds(dst, relMicros(t, o.Prev))
	}
	return appendClock(dst, t.UTC())
}

// relMicros is t - ref in microseconds, 0 when ref is not known.
func relMicros(t, ref time.Time) int64 {
	if ref.IsZero() {
		return 0
	}
	return t.UnixNano()/1000 - ref.UnixNano()/1000
}

// appendDate appends "2006-01-02 ".
func appendDate(dst []byte, t time.Time) []byte {
	y, m, d := t.Date()
	dst = strconv.AppendInt(dst, int64(y), 10)
	dst = append(dst, '-')
	dst = append2(dst, int(m))
	dst = append(dst, '-')
	dst = append2(dst, d)
	return append(dst, ' ')
}

// appendSeconds appends a signed count of microseconds as seconds with six
// decimals: -0.000105, 1795313467.706735.
func appendSeconds(dst []byte, us int64) []byte {
	if us < 0 {
		dst = append(dst, '-')
		us = -us
	}
	dst = strconv.AppendInt(dst, us/1e6, 10)
	dst = append(dst, '.')
	var d [6]byte
	frac := us % 1e6
	for i := 5; i >= 0; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	return append(dst, d[:]...)
}

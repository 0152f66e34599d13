package pcapwriter

import (
	"strconv"
	"time"
)

// Strftime expands the C strftime conversions tcpdump -G file names use
// (%Y %m %d %H %M %S %y %j %e %a %A %b %B %p %s %F %T %D %R %z %Z %%, and %n,
// %t) with t in its own location. Unknown conversions are copied as they
// are.
func Strftime(format string, t time.Time) string {
	b := make([]byte, 0, len(format)+16)
	pad := func(v, w int) {
		s := strconv.Itoa(v)
		for i := len(s); i < w; i++ {
			b = append(b, '0')
		}
		b = append(b, s...)
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b = append(b, c)
			continue
		}
		i++
		switch format[i] {
		case 'Y':
			pad(t.Year(), 4)
		case 'm':
			pad(int(t.Month()), 2)
		case 'd':
			pad(t.Day(), 2)
		case 'e':
			if t.Day() < 10 {
				b = append(b, ' ')
			}
			b = strconv.AppendInt(b, int64(t.Day()), 10)
		case 'H':
			pad(t.Hour(), 2)
		case 'M':
			pad(t.Minute(), 2)
		case 'S':
			pad(t.Second(), 2)
		case 'y':
			pad(t.Year()%100, 2)
		case 'j':
			pad(t.YearDay(), 3)
		case 'a':
			b = append(b, t.Weekday().String()[:3]...)
		case 'A':
			b = append(b, t.Weekday().String()...)
		case 'b', 'h':
			b = append(b, t.Month().String()[:3]...)
		case 'B':
			b = append(b, t.Month().String()...)
		case 'p':
			if t.Hour() < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 's':
			b = strconv.AppendInt(b, t.Unix(), 10)
		case 'F':
			b = append(b, Strftime("%Y-%m-%d", t)...)
		case 'T':
			b = append(b, Strftime("%H:%M:%S", t)...)
		case 'D':
			b = append(b, Strftime("%m/%d/%y", t)...)
		case 'R':
			b = append(b, Strftime("%H:%M", t)...)
		case 'z':
			b = append(b, t.Format("-0700")...)
		case 'Z':
			b = append(b, t.Format("MST")...)
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case '%':
			b = append(b, '%')
		default:
			b = append(b, '%', format[i])
		}
	}
	return string(b)
}

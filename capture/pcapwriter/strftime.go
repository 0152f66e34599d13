package pcapwriter

import (
	"strconv"
	"time"
)

// Strftime expands the strftime conversions of GNU libc, which tcpdump -G
// file names go through (%a %A %b %B %c %C %d %D %e %F %g %G %h %H %I %j
// %k %l %m %M %n %p %P %r %R %s %S %t %T %u %U %V %w %W %x %X %y %Y %z %Z
// %%, in the C locale), with t in its own location. Unknown conversions
// (and the E and O modifiers) are copied as they are.
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
		case 'C':
			pad(t.Year()/100, 2)
		case 'I', 'l':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			if format[i] == 'l' && h < 10 {
				b = append(b, ' ')
				b = strconv.AppendInt(b, int64(h), 10)
			} else {
				pad(h, 2)
			}
		case 'k':
			if t.Hour() < 10 {
				b = append(b, ' ')
			}
			b = strconv.AppendInt(b, int64(t.Hour()), 10)
		case 'P':
			if t.Hour() < 12 {
				b = append(b, "am"...)
			} else {
				b = append(b, "pm"...)
			}
		case 'u':
			b = strconv.AppendInt(b, int64((int(t.Weekday())+6)%7+1), 10)
		case 'w':
			b = strconv.AppendInt(b, int64(t.Weekday()), 10)
		case 'U':
			// Weeks starting on Sunday; days before the first are week 0.
			pad((t.YearDay()+6-int(t.Weekday()))/7, 2)
		case 'W':
			// Weeks starting on Monday.
			pad((t.YearDay()+6-(int(t.Weekday())+6)%7)/7, 2)
		case 'V':
			_, w := t.ISOWeek()
			pad(w, 2)
		case 'G':
			y, _ := t.ISOWeek()
			pad(y, 4)
		case 'g':
			y, _ := t.ISOWeek()
			pad(y%100, 2)
		case 'c':
			b = append(b, Strftime("%a %b %e %H:%M:%S %Y", t)...)
		case 'x':
			b = append(b, Strftime("%m/%d/%y", t)...)
		case 'X':
			b = append(b, Strftime("%H:%M:%S", t)...)
		case 'r':
			b = append(b, Strftime("%I:%M:%S %p", t)...)
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

package report

import "time"

// unixToInternal is time's offset from Unix seconds to its internal seconds
// (since January 1, year 1): (1969·365 + 1969/4 − 1969/100 + 1969/400)·86400.
const unixToInternal int64 = (1969*365 + 1969/4 - 1969/100 + 1969/400) * 24 * 60 * 60

// wall is a timestamp's wall clock reading: the seconds and nanoseconds that
// time.Time's Before, After and Sub compare unless both times carry a
// monotonic clock reading. The Collector orders capture timestamps (which
// never carry one) with a couple of integer comparisons instead of calls
// into package time.
type wall struct {
	sec  int64 // seconds since January 1, year 1 (time's internal count)
	nsec int32 // [0, 1e9)
}

// minWall is earlier than every timestamp.
var minWall = wall{sec: -1 << 63}

// wallOf returns t's wall clock reading, and slow: whether the Collector
// must handle t with package time's methods, because t may carry a
// monotonic clock reading (they compare those when both times have one).
// slow is false exactly for UTC times without one, as captures give: such a
// time is a function of its wall clock reading (see wall.time). The test
// t != t.UTC() inlines, where time.Time.Round(0) would cost a call per
// record. The seconds are recovered from Unix by wrapping arithmetic, so
// they are exact for every t, also where t.Unix() itself wraps.
func wallOf(t *time.Time) (w wall, slow bool) {
	return wall{t.Unix() + unixToInternal, int32(t.Nanosecond())}, *t != t.UTC()
}

// time returns the UTC time without monotonic clock reading whose wall
// clock reading is w: for t with wallOf(t) = w, false, it is t itself (the
// same value, as == compares). The zero wall gives the zero time.
func (w wall) time() time.Time {
	return time.Unix(w.sec-unixToInternal, int64(w.nsec)).UTC()
}

// before reports whether w is earlier than v (time.Time.Before on
// wall clock readings).
func (w wall) before(v wall) bool {
	return w.sec < v.sec || w.sec == v.sec && w.nsec < v.nsec
}

// add returns w + d for 0 ≤ d, and false if the seconds overflow.
func (w wall) add(d time.Duration) (wall, bool) {
	s, ns := w.sec+int64(d/time.Second), w.nsec+int32(d%time.Second)
	if ns >= 1e9 {
		s, ns = s+1, ns-1e9
	}
	return wall{s, ns}, s >= w.sec
}

// span tracks the earliest and latest timestamp added, with the same
// results as comparing by time.Time.Before and After. It keeps a timestamp
// that wallOf calls fast as its wall clock reading only (fewer stores per
// record), any other in ft or lt too.
type span struct {
	fw, lw       wall // wall clock readings of the first and last timestamp
	haveTS       bool
	fSlow, lSlow bool      // the first or last timestamp is slow (see wallOf)
	ft, lt       time.Time // the first or last timestamp when slow
}

// first returns the earliest timestamp, or the zero time.
func (s *span) first() time.Time {
	if s.fSlow {
		return s.ft
	}
	return s.fw.time()
}

// last returns the latest timestamp, or the zero time.
func (s *span) last() time.Time {
	if s.lSlow {
		return s.lt
	}
	return s.lw.time()
}

// duration returns last − first, or 0 without timestamps.
func (s *span) duration() time.Duration {
	return s.last().Sub(s.first())
}

// add notes *t (not the zero time) with wall, slow = wallOf(t).
func (s *span) add(t *time.Time, w wall, slow bool) {
	if slow || !s.haveTS {
		s.addSlow(t, w, slow)
		return
	}
	if w.before(s.fw) {
		s.fw, s.fSlow = w, false
	}
	if s.lw.before(w) {
		s.lw, s.lSlow = w, false
	}
}

// addSlow is add by time.Time.Before and After.
func (s *span) addSlow(t *time.Time, w wall, slow bool) {
	if !s.haveTS || t.Before(s.first()) {
		s.fw, s.fSlow, s.ft = w, slow, time.Time{}
		if slow {
			s.ft = *t
		}
	}
	if !s.haveTS || t.After(s.last()) {
		s.lw, s.lSlow, s.lt = w, slow, time.Time{}
		if slow {
			s.lt = *t
		}
	}
	s.haveTS = true
}

// mergeFast merges s into m, where both hold fast timestamps only (see
// wallOf): among those, the earliest and latest wall clock reading
// determine the results of comparing by Before and After, ties included
// (equal fast timestamps are equal values).
func (m *span) mergeFast(s *span) {
	if !s.haveTS {
		return
	}
	if !m.haveTS || s.fw.before(m.fw) {
		m.fw = s.fw
	}
	if !m.haveTS || m.lw.before(s.lw) {
		m.lw = s.lw
	}
	m.haveTS = true
}

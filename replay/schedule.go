package replay

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"
)

// schedule says when each connection of a replay starts: in which order, at
// what time from the replay's start, after which others, and how many may
// be open at once.
//
// Concurrent (the default): in the order of the recorded starts; with a
// speed, at the recorded start from the first connection's divided by the
// speed; and after every connection whose recorded end came before the
// recorded start (those that did not overlap it), so that a replay slower
// than the recording does not overlap what the recording kept apart.
// Serial: in connection order, each after the previous one.
type schedule struct {
	scripts []*Script
	// order holds the script indexes in start order; what follows is
	// indexed by position in order.
	order []int
	// due is each connection's time from the replay's start; nil when
	// untimed (Speed 0, or Serial).
	due []time.Duration
	// endOrder holds positions by recorded end; connection k starts once
	// the connections of endOrder[:need[k]] have ended.
	endOrder []int
	need     []int
	limit    int
	// base is the first connection's recorded start.
	base time.Time
}

func newSchedule(scripts []*Script, o *Options) *schedule {
	n := len(scripts)
	sc := &schedule{scripts: scripts, order: make([]int, n), endOrder: make([]int, n), need: make([]int, n), limit: max(o.MaxConns, 1)}
	for i := range n {
		sc.order[i], sc.endOrder[i] = i, i
	}
	if o.Serial {
		for k := range sc.need {
			sc.need[k] = k
		}
		sc.limit = 1
		if n > 0 {
			sc.base = firstOf(scripts[0])
		}
		return sc
	}
	slices.SortStableFunc(sc.order, func(a, b int) int { return firstOf(scripts[a]).Compare(firstOf(scripts[b])) })
	if n == 0 {
		return sc
	}
	sc.base = firstOf(scripts[sc.order[0]])
	if o.Speed > 0 {
		sc.due = make([]time.Duration, n)
		for k, i := range sc.order {
			sc.due[k] = time.Duration(float64(firstOf(scripts[i]).Sub(sc.base)) / o.Speed)
		}
	}
	// A connection ends no earlier than it starts; one whose end is not
	// known (a Script made by hand) holds nothing back.
	end := func(k int) time.Time {
		s := scripts[sc.order[k]]
		if s.End.IsZero() {
			return time.Unix(1<<62, 0)
		}
		if f := firstOf(s); s.End.Before(f) {
			return f
		}
		return s.End
	}
	slices.SortStableFunc(sc.endOrder, func(a, b int) int { return end(a).Compare(end(b)) })
	for k, i := range sc.order {
		start := firstOf(scripts[i])
		// The connections that ended strictly before this one started:
		// they started before it too, so they come before it in order.
		sc.need[k] = sort.Search(n, func(j int) bool { return !end(sc.endOrder[j]).Before(start) })
	}
	return sc
}

// firstOf returns when a connection starts: its SYN's time, else its first
// record's.
func firstOf(s *Script) time.Time {
	if s.First.IsZero() || s.First.After(s.Start) {
		return s.Start
	}
	return s.First
}

// launchFunc plays one connection; it returns nil when the context stopped
// the replay before the connection was made.
type launchFunc func(ctx context.Context, s *Script) *ConnReport

// run plays every connection of the schedule, each in a goroutine of its
// own once its time and turn have come, and returns their reports in
// script order (nil for a connection the context stopped before it
// started). A connection's error or mismatch does not stop the others.
func (sc *schedule) run(ctx context.Context, st *stats, launch launchFunc) []*ConnReport {
	n := len(sc.order)
	reps := make([]*ConnReport, n)
	ended := make([]bool, n)
	doneCh := make(chan int, n) // positions of the connections that ended
	var wg sync.WaitGroup
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	endPtr, open := 0, 0
	for k := range n {
		// held is what blocked the connection last, blockedUntil when it
		// stopped blocking it: a hold counts when it ends after the due
		// time.
		held, blockedUntil := HoldNone, time.Duration(0)
		for {
			for endPtr < n && ended[sc.endOrder[endPtr]] {
				endPtr++
			}
			if ctx.Err() != nil {
				break
			}
			blocked := HoldNone
			switch {
			case endPtr < sc.need[k]:
				blocked = HoldPrecedence
			case open >= sc.limit:
				blocked = HoldLimit
			}
			now := st.since()
			if blocked != HoldNone {
				held, blockedUntil = blocked, -1
			} else if blockedUntil < 0 {
				blockedUntil = now
			}
			var wake <-chan time.Time
			if blocked == HoldNone {
				if sc.due == nil || sc.due[k] <= now {
					break
				}
				timer.Reset(sc.due[k] - now)
				wake = timer.C
			}
			select {
			case j := <-doneCh:
				ended[j] = true
				open--
			case <-wake:
			case <-ctx.Done():
			}
			timer.Stop() // Go 1.23 timers: no stale tick after Stop
		}
		if ctx.Err() != nil {
			break
		}
		s := sc.scripts[sc.order[k]]
		started := st.since()
		open++
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.begin(s.Conn)
			c := launch(ctx, s)
			st.end(s.Conn)
			if c != nil {
				c.Start, c.End = started, st.since()
				if sc.due != nil {
					c.Timed, c.Due = true, sc.due[k]
					if held != HoldNone && blockedUntil > c.Due {
						c.Held = held
					}
				}
			}
			reps[sc.order[k]] = c
			doneCh <- k
		}()
	}
	wg.Wait()
	return reps
}

// virtualStarts computes the schedule in a capture's time (WritePcap),
// where connections are simulated one after the other in start order and
// each one's end is known before the next starts.
type virtualStarts struct {
	sc     *schedule
	ends   []time.Time // by position: the simulated end
	endPtr int
	after  time.Time // the latest end of the connections in endOrder[:endPtr]
	prev   time.Time // the previous connection's start
	open   []time.Time
}

// start returns when connection k starts, with what held it back.
func (v *virtualStarts) start(k int, base time.Time) (time.Time, Hold) {
	sc := v.sc
	if v.ends == nil {
		v.ends = make([]time.Time, len(sc.order))
	}
	due := base
	if sc.due != nil {
		due = base.Add(sc.due[k])
	}
	at := due
	if at.Before(v.prev) {
		at = v.prev // starts are in order
	}
	held := HoldNone
	for ; v.endPtr < sc.need[k]; v.endPtr++ {
		if e := v.ends[sc.endOrder[v.endPtr]]; e.After(v.after) {
			v.after = e
		}
	}
	if v.after.After(at) {
		at, held = v.after, HoldPrecedence
	}
	// The connections still open at at; past the limit, the earliest end.
	slices.SortFunc(v.open, time.Time.Compare)
	v.open = slices.DeleteFunc(v.open, func(e time.Time) bool { return !e.After(at) })
	for len(v.open) >= sc.limit {
		at, held = v.open[0], HoldLimit
		v.open = slices.DeleteFunc(v.open, func(e time.Time) bool { return !e.After(at) })
	}
	if !at.After(due) {
		held = HoldNone
	}
	v.prev = at
	return at, held
}

// ended notes connection k's simulated end.
func (v *virtualStarts) ended(k int, end time.Time) {
	v.ends[k] = end
	v.open = append(v.open, end)
}

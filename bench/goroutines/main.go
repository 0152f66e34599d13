// Command goroutines sums an execution trace (iwarpdump -trace FILE, or
// any runtime/trace output) per goroutine start function: how long they
// ran, waited runnable for a processor, sat in system calls (read(2) of a
// capture's chunks, write(2) of the output) and were blocked. It answers
// what a CPU profile does not for iwarpdump -j N: how much of the run a
// stage spent queued behind the others on too few cores, and how much
// kernel time the reader's system calls took (a profile shows those as
// _copy_to_iter, on no goroutine). Usage: goroutines [-waits] [-timeline D] TRACE.
//
// With -waits, each group's blocked time is split by where its goroutines
// blocked (the reason and the innermost frame outside the runtime) and its
// runnable time by what made them runnable (the goroutine that woke them,
// or a preemption), with counts, medians and the longest: in an
// iwarpdump -j 2 trace of issue 6's workload, the reader waited runnable
// some 390 µs after each of 83 wakeups by a worker, while both cores ran
// workers (31 ms in all), and the workers blocked 16 ms at the receive of
// their next chunk.
//
// With -timeline D, it also prints a row per interval D of the trace: how
// long each group ran (or sat in a system call) in it, and how long the
// processors (GOMAXPROCS, from the trace) were idle. The first line says
// how busy they were over the whole trace: in a good -j 2 run of issue 6's
// workload, 97 %, idle only as the run starts and ends, so that two
// workers take the time of their CPU, not of waiting.
//
// The trace is parsed with golang.org/x/exp/trace, the Go team's parser of
// the trace format; go tool trace shows the same states per goroutine in
// a browser, which CI and a terminal lack.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// stats are the times of a group of goroutines in each state.
type stats struct {
	name                            string
	n                               int
	run, runnable, syscall, blocked time.Duration
	waits                           map[waitKey]*wait
	// busyTotal is the group's running time and the time of its system
	// calls made while the trace ran (see gstate.callBusy); busy is the
	// same in each interval of the timeline (summary.bucket), from the
	// trace's first event.
	busyTotal time.Duration
	busy      []time.Duration
}

// summary is what summarize makes of a trace.
type summary struct {
	groups []*stats // most running time first
	span   time.Duration
	// procs is GOMAXPROCS as the trace recorded it, 0 if it did not.
	procs int
	// bucket is the length of the timeline's intervals, 0 for none.
	bucket time.Duration
}

// busy returns the busy time of every group together (stats.busyTotal).
func (sm *summary) busy() time.Duration {
	var d time.Duration
	for _, s := range sm.groups {
		d += s.busyTotal
	}
	return d
}

// spread adds the interval [from, to) of the trace (in time since its
// first event) to busy, split across the buckets of length bucket it
// covers.
func spread(busy []time.Duration, bucket, from, to time.Duration) []time.Duration {
	for from < to {
		i := int(from / bucket)
		end := min(time.Duration(i+1)*bucket, to)
		for len(busy) <= i {
			busy = append(busy, 0)
		}
		busy[i] += end - from
		from = end
	}
	return busy
}

// waitKey is a state (blocked or runnable) and its cause.
type waitKey struct{ state, cause string }

// wait is the time a group spent in one state for one cause: every
// interval, for the median and the longest.
type wait struct {
	waitKey
	total time.Duration
	ds    []time.Duration
}

// gstate is what summarize keeps of one goroutine.
type gstate struct {
	name  string
	since trace.Time
	state trace.GoState
	cause string // why it is in state (Waiting or Runnable)
	// callBusy: in a system call that counts as busy (realCall).
	callBusy bool
}

// short drops the module path from a function name.
func short(fn string) string {
	return strings.TrimPrefix(fn, "github.com/iwarpkit/iwarpkit/")
}

// site is the innermost frame of st outside the runtime, as function:line.
func site(st trace.Stack) string {
	for f := range st.Frames() {
		if strings.HasPrefix(f.Func, "runtime.") || strings.HasPrefix(f.Func, "internal/") {
			continue
		}
		return fmt.Sprintf("%s:%d", short(f.Func), f.Line)
	}
	return "?"
}

// realCall reports whether st, the stack of a goroutine entering a system
// call, is a call made through package syscall or x/sys/unix (read(2) of a
// chunk keeps its core busy copying). The runtime also puts a goroutine in
// the system-call state while it waits on its behalf, os/signal's loop for
// the next signal, which keeps no processor busy; so does a goroutine that
// was in a system call when the trace began (no stack).
func realCall(st trace.Stack) bool {
	for f := range st.Frames() {
		for _, p := range []string{"syscall.", "golang.org/x/sys/unix.", "internal/runtime/syscall", "internal/syscall/"} {
			if strings.HasPrefix(f.Func, p) {
				return true
			}
		}
		return false // only the innermost frame counts
	}
	return false
}

// cause says why a goroutine moved from one state to to: where it blocked,
// or what made it runnable (waker is the goroutine the event ran on).
func cause(from, to trace.GoState, reason string, st trace.Stack, waker *gstate) string {
	switch {
	case to == trace.GoWaiting:
		if reason == "" {
			reason = "blocked"
		}
		return reason + " at " + site(st)
	case to != trace.GoRunnable:
		return ""
	case from == trace.GoWaiting && waker != nil && waker.name != "?":
		return "woken by " + short(waker.name)
	case from == trace.GoWaiting:
		return "woken by the runtime"
	case from == trace.GoRunning && reason != "":
		return reason
	case from == trace.GoRunning:
		return "preempted"
	}
	return "created"
}

// summarize reads a trace and returns the time of each group of
// goroutines, by start function, and the span of the trace; with bucket >
// 0, each group's busy time in every interval of that length too.
func summarize(r io.Reader, bucket time.Duration) (*summary, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, err
	}
	sm := &summary{bucket: bucket}
	gs := map[trace.GoID]*gstate{}
	groups := map[string]*stats{}
	var first, last trace.Time
	add := func(g *gstate, until trace.Time) {
		if g.since == 0 {
			return
		}
		s := groups[g.name]
		if s == nil {
			s = &stats{name: g.name}
			groups[g.name] = s
		}
		d := time.Duration(until - g.since)
		if g.state == trace.GoWaiting || g.state == trace.GoRunnable {
			k := waitKey{"blocked", g.cause}
			if g.state == trace.GoRunnable {
				k.state = "runnable"
			}
			if s.waits == nil {
				s.waits = map[waitKey]*wait{}
			}
			w := s.waits[k]
			if w == nil {
				w = &wait{waitKey: k}
				s.waits[k] = w
			}
			w.total += d
			w.ds = append(w.ds, d)
		}
		if g.state == trace.GoRunning || (g.state == trace.GoSyscall && g.callBusy) {
			s.busyTotal += d
			if bucket > 0 {
				s.busy = spread(s.busy, bucket, time.Duration(g.since-first), time.Duration(until-first))
			}
		}
		switch g.state {
		case trace.GoRunning:
			s.run += d
		case trace.GoRunnable:
			s.runnable += d
		case trace.GoSyscall:
			s.syscall += d
		case trace.GoWaiting:
			s.blocked += d
		}
	}
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if first == 0 {
			first = ev.Time()
		}
		last = ev.Time()
		if ev.Kind() == trace.EventMetric && ev.Metric().Name == "/sched/gomaxprocs:threads" {
			sm.procs = int(ev.Metric().Value.Uint64())
		}
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		t := ev.StateTransition()
		if t.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		id := t.Resource.Goroutine()
		g := gs[id]
		if g == nil {
			g = &gstate{name: "?"}
			gs[id] = g
		}
		if g.name == "?" && t.Stack != trace.NoStack {
			// The outermost frame of the goroutine's own stack: the
			// function it was started with.
			for f := range t.Stack.Frames() {
				if f.Func != "runtime.goexit" {
					g.name = f.Func
				}
			}
		}
		if g.name != "?" {
			if s := groups[g.name]; s == nil {
				groups[g.name] = &stats{name: g.name}
			}
		}
		add(g, ev.Time())
		from, to := t.Goroutine()
		var waker *gstate
		if w := ev.Goroutine(); w != trace.NoGoroutine && w != id {
			waker = gs[w]
		}
		g.since, g.state = ev.Time(), to
		g.callBusy = to == trace.GoSyscall && from == trace.GoRunning && realCall(t.Stack)
		g.cause = cause(from, to, t.Reason, t.Stack, waker)
	}
	for _, g := range gs {
		add(g, last)
		if s := groups[g.name]; s != nil {
			s.n++
		}
	}
	for _, s := range groups {
		sm.groups = append(sm.groups, s)
	}
	sort.Slice(sm.groups, func(i, j int) bool {
		if sm.groups[i].run != sm.groups[j].run {
			return sm.groups[i].run > sm.groups[j].run
		}
		return sm.groups[i].name < sm.groups[j].name
	})
	sm.span = time.Duration(last - first)
	return sm, nil
}

// sortedWaits returns the waits of s, longest total first.
func sortedWaits(s *stats) []*wait {
	var ws []*wait
	for _, w := range s.waits {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].total != ws[j].total {
			return ws[i].total > ws[j].total
		}
		return ws[i].waitKey.state+ws[i].cause < ws[j].waitKey.state+ws[j].cause
	})
	return ws
}

func main() {
	waits := flag.Bool("waits", false, "split each group's blocked and runnable time by cause")
	timeline := flag.Duration("timeline", 0, "print each group's busy time, and the processors' idle time, in intervals of this length")
	flag.Usage = func() { fmt.Fprintln(os.Stderr, "usage: goroutines [-waits] [-timeline D] TRACE") }
	flag.Parse()
	if flag.NArg() != 1 || *timeline < 0 {
		flag.Usage()
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "goroutines:", err)
		os.Exit(1)
	}
	defer f.Close()
	sm, err := summarize(f, *timeline)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goroutines:", err)
		os.Exit(1)
	}
	span := sm.span
	fmt.Printf("trace span %v", span.Round(time.Microsecond))
	if sm.procs > 0 && span > 0 {
		// Running or in a system call: read(2) of a chunk keeps its core
		// busy copying, so it counts.
		b := sm.busy()
		fmt.Printf("; processors busy %.1f%% of it (goroutines ran or sat in system calls %v of %d x %v)",
			100*float64(b)/float64(time.Duration(sm.procs)*span), b.Round(10*time.Microsecond), sm.procs, span.Round(10*time.Microsecond))
	}
	fmt.Println()
	fmt.Printf("%12s %12s %12s %12s %4s  %s\n", "running", "runnable", "syscall", "blocked", "n", "started at")
	for _, s := range sm.groups {
		if s.run+s.runnable+s.syscall < 10*time.Microsecond {
			continue // the runtime's and os/signal's idle goroutines
		}
		r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
		fmt.Printf("%12v %12v %12v %12v %4d  %s\n", r(s.run), r(s.runnable), r(s.syscall), r(s.blocked), s.n, s.name)
		if !*waits || s.run < span/100 {
			continue // the trace's own goroutines: blocked throughout
		}
		for _, w := range sortedWaits(s) {
			if w.total < span/200 {
				continue // under half a percent of the trace
			}
			sort.Slice(w.ds, func(i, j int) bool { return w.ds[i] < w.ds[j] })
			fmt.Printf("    %-8s %10v %5d times, median %v, longest %v: %s\n", w.waitKey.state, r(w.total), len(w.ds),
				w.ds[len(w.ds)/2].Round(time.Microsecond), w.ds[len(w.ds)-1].Round(time.Microsecond), w.cause)
		}
	}
	if *timeline > 0 {
		printTimeline(os.Stdout, sm)
	}
}

// printTimeline writes sm's timeline: a row per interval, with the busy
// time of each group that was busy for at least 1 % of the total (the
// rest under "other") and the processors' idle time, all in milliseconds.
// It shows whether a run kept its processors busy throughout, or where it
// did not: while one goroutine started or finished alone, say.
func printTimeline(w io.Writer, sm *summary) {
	total := sm.busy()
	var cols []*stats
	var rest []*stats
	for _, s := range sm.groups {
		if total > 0 && s.busyTotal*100 >= total {
			cols = append(cols, s)
		} else {
			rest = append(rest, s)
		}
	}
	fmt.Fprintf(w, "\nmilliseconds busy (running, or in a system call through syscall or x/sys/unix) in each %v:\n", sm.bucket)
	for i, s := range cols {
		fmt.Fprintf(w, "  %c  %s (%d)\n", 'A'+i, s.name, s.n)
	}
	fmt.Fprintf(w, "%8s", "from ms")
	for i := range cols {
		fmt.Fprintf(w, " %7c", 'A'+i)
	}
	fmt.Fprintf(w, " %7s", "other")
	if sm.procs > 0 {
		fmt.Fprintf(w, " %7s", "idle")
	}
	fmt.Fprintln(w)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	at := func(b []time.Duration, i int) time.Duration {
		if i < len(b) {
			return b[i]
		}
		return 0
	}
	for i := 0; time.Duration(i)*sm.bucket < sm.span; i++ {
		start := time.Duration(i) * sm.bucket
		var sum time.Duration
		fmt.Fprintf(w, "%8.1f", ms(start))
		for _, s := range cols {
			d := at(s.busy, i)
			sum += d
			fmt.Fprintf(w, " %7.2f", ms(d))
		}
		var o time.Duration
		for _, s := range rest {
			o += at(s.busy, i)
		}
		sum += o
		fmt.Fprintf(w, " %7.2f", ms(o))
		if sm.procs > 0 {
			// The last interval ends with the trace.
			length := min(sm.bucket, sm.span-start)
			fmt.Fprintf(w, " %7.2f", ms(max(time.Duration(sm.procs)*length-sum, 0)))
		}
		fmt.Fprintln(w)
	}
}

// Command goroutines sums an execution trace (iwarpdump -trace FILE, or
// any runtime/trace output) per goroutine start function: how long they
// ran, waited runnable for a processor, sat in system calls (read(2) of a
// capture's chunks, write(2) of the output) and were blocked. It answers
// what a CPU profile does not for iwarpdump -j N: how much of the run a
// stage spent queued behind the others on too few cores, and how much
// kernel time the reader's system calls took (a profile shows those as
// _copy_to_iter, on no goroutine). Usage: goroutines [-waits] TRACE.
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
// goroutines, by start function, most running time first, and the span of
// the trace.
func summarize(r io.Reader) ([]*stats, time.Duration, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, 0, err
	}
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
			return nil, 0, err
		}
		if first == 0 {
			first = ev.Time()
		}
		last = ev.Time()
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
		g.cause = cause(from, to, t.Reason, t.Stack, waker)
	}
	for _, g := range gs {
		add(g, last)
		if s := groups[g.name]; s != nil {
			s.n++
		}
	}
	var out []*stats
	for _, s := range groups {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].run != out[j].run {
			return out[i].run > out[j].run
		}
		return out[i].name < out[j].name
	})
	return out, time.Duration(last - first), nil
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
	flag.Usage = func() { fmt.Fprintln(os.Stderr, "usage: goroutines [-waits] TRACE") }
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "goroutines:", err)
		os.Exit(1)
	}
	defer f.Close()
	groups, span, err := summarize(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goroutines:", err)
		os.Exit(1)
	}
	fmt.Printf("trace span %v\n", span.Round(time.Microsecond))
	fmt.Printf("%12s %12s %12s %12s %4s  %s\n", "running", "runnable", "syscall", "blocked", "n", "started at")
	for _, s := range groups {
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
}

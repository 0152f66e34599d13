// Command goroutines sums an execution trace (iwarpdump -trace FILE, or
// any runtime/trace output) per goroutine start function: how long they
// ran, waited runnable for a processor, sat in system calls (read(2) of a
// capture's chunks, write(2) of the output) and were blocked. It answers
// what a CPU profile does not for iwarpdump -j N: how much of the run a
// stage spent queued behind the others on too few cores, and how much
// kernel time the reader's system calls took (a profile shows those as
// _copy_to_iter, on no goroutine). Usage: goroutines TRACE.
//
// The trace is parsed with golang.org/x/exp/trace, the Go team's parser of
// the trace format; go tool trace shows the same states per goroutine in
// a browser, which CI and a terminal lack.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"golang.org/x/exp/trace"
)

// stats are the times of a group of goroutines in each state.
type stats struct {
	name                            string
	n                               int
	run, runnable, syscall, blocked time.Duration
}

// gstate is what summarize keeps of one goroutine.
type gstate struct {
	name  string
	since trace.Time
	state trace.GoState
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
		_, to := t.Goroutine()
		g.since, g.state = ev.Time(), to
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

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: goroutines TRACE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
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
	}
}

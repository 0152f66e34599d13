package main

import (
	"bytes"
	"os"
	"os/signal"
	"runtime"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// spin runs on the CPU for d.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// sleeper blocks for d.
func sleeper(d time.Duration) { time.Sleep(d) }

// traceTwo runs a and b on two goroutines (started as traceTwo.func1 and
// traceTwo.func2) under an execution trace and summarizes it, with a
// timeline of intervals of bucket (0: none).
func traceTwo(t *testing.T, bucket time.Duration, a, b func()) *summary {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); a() }()
	go func() { defer wg.Done(); b() }()
	wg.Wait()
	trace.Stop()
	sm, err := summarize(&buf, bucket)
	if err != nil {
		t.Fatal(err)
	}
	return sm
}

const (
	first  = "github.com/iwarpkit/iwarpkit/bench/goroutines.traceTwo.func1"
	second = "github.com/iwarpkit/iwarpkit/bench/goroutines.traceTwo.func2"
)

// TestSummarize traces a goroutine that spins for 30 ms and one that
// sleeps for 30 ms: the first must be summed as running for most of its
// time, the second as blocked, each under its start function.
func TestSummarize(t *testing.T) {
	const d = 30 * time.Millisecond
	sm := traceTwo(t, 0, func() { spin(d) }, func() { sleeper(d) })
	groups, span := sm.groups, sm.span
	if span < d {
		t.Errorf("span %v, want %v or more", span, d)
	}
	var spun, slept *stats
	for _, s := range groups {
		switch s.name {
		case first:
			spun = s
		case second:
			slept = s
		}
	}
	if spun == nil || slept == nil {
		for _, s := range groups {
			t.Logf("%+v", *s)
		}
		t.Fatalf("the spinning or the sleeping goroutine is missing")
	}
	// The spinner may wait for a processor on a busy machine (runnable),
	// never block.
	if spun.run+spun.runnable < d*9/10 || spun.blocked > d/3 {
		t.Errorf("spinner: %+v, want %v running or runnable", *spun, d)
	}
	if slept.blocked < d*9/10 || slept.run > d/3 {
		t.Errorf("sleeper: %+v, want %v blocked", *slept, d)
	}
}

// receiver blocks on ch until sender, 30 ms later, sends.
func receiver(ch <-chan int) { <-ch }

func sender(ch chan<- int) {
	time.Sleep(30 * time.Millisecond)
	ch <- 1
}

// TestWaits traces a goroutine blocked on a channel that another fills 30
// ms later: the receiver's blocked time must be put on the receive in
// receiver, and its runnable time on the sender that woke it.
func TestWaits(t *testing.T) {
	ch := make(chan int)
	sm := traceTwo(t, 0, func() { receiver(ch) }, func() { sender(ch) })
	var recv *stats
	for _, s := range sm.groups {
		if s.name == first {
			recv = s
		}
	}
	if recv == nil {
		t.Fatal("the receiving goroutine is missing")
	}
	var blocked, woken *wait
	for _, w := range sortedWaits(recv) {
		t.Logf("%s %v x%d: %s", w.waitKey.state, w.total, len(w.ds), w.cause)
		switch {
		case w.waitKey.state == "blocked" && strings.HasPrefix(w.cause, "chan receive at bench/goroutines.receiver:"):
			blocked = w
		case w.waitKey.state == "runnable" && w.cause == "woken by "+short(second):
			woken = w
		}
	}
	if blocked == nil || blocked.total < 25*time.Millisecond {
		t.Errorf("blocked at the receive in receiver: %+v, want 25 ms or more", blocked)
	}
	if woken == nil || len(woken.ds) != 1 {
		t.Errorf("runnable once after the sender woke it: %+v", woken)
	}
}

// TestTimeline traces a goroutine that spins for 30 ms beside one that
// sleeps, in intervals of 4 ms: each group's intervals must add up to its
// busy time, no interval may hold more than its length of one goroutine's
// time, GOMAXPROCS must come from the trace, and the printed timeline must
// have a row per interval, the last one included. The spinner first starts
// os/signal's loop, which the runtime shows in a system call while it
// waits for a signal: that must not count as busy.
func TestTimeline(t *testing.T) {
	const d, bucket = 30 * time.Millisecond, 4 * time.Millisecond
	sigs := make(chan os.Signal, 1)
	defer signal.Stop(sigs)
	sm := traceTwo(t, bucket, func() { signal.Notify(sigs, syscall.SIGUSR1); spin(d) }, func() { sleeper(d) })
	for _, s := range sm.groups {
		if s.name == "os/signal.loop" {
			t.Logf("os/signal.loop: running %v, system calls %v, busy %v", s.run, s.syscall, s.busyTotal)
			if s.busyTotal > d/10 {
				t.Errorf("os/signal.loop busy %v: its wait for a signal counted", s.busyTotal)
			}
		}
	}
	if sm.procs != runtime.GOMAXPROCS(0) {
		t.Errorf("procs %d, want GOMAXPROCS %d", sm.procs, runtime.GOMAXPROCS(0))
	}
	var spun *stats
	for _, s := range sm.groups {
		var sum time.Duration
		for i, b := range s.busy {
			sum += b
			if b > bucket*time.Duration(s.n) {
				t.Errorf("%s: interval %d holds %v, more than %d x %v", s.name, i, b, s.n, bucket)
			}
		}
		if sum != s.busyTotal || s.busyTotal > s.run+s.syscall {
			t.Errorf("%s: intervals add up to %v, busy %v, want the same and at most running %v + system calls %v",
				s.name, sum, s.busyTotal, s.run, s.syscall)
		}
		if s.name == first {
			spun = s
		}
	}
	if spun == nil || len(spun.busy) < int(d/bucket) || spun.busyTotal != spun.run+spun.syscall {
		t.Fatalf("the spinner's timeline: %+v, want %d intervals or more, all its running time busy", spun, d/bucket)
	}
	var out bytes.Buffer
	printTimeline(&out, sm)
	rows := 0
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			if _, err := strconv.ParseFloat(f[0], 64); err == nil {
				rows++
			}
		}
	}
	if want := int((sm.span + bucket - 1) / bucket); rows != want {
		t.Errorf("%d rows for a span of %v in %v intervals, want %d:\n%s", rows, sm.span, bucket, want, out.String())
	}
	if !strings.Contains(out.String(), "A  "+first) {
		t.Errorf("the spinner is not a column of its own:\n%s", out.String())
	}
}

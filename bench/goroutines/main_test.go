package main

import (
	"bytes"
	"runtime/trace"
	"strings"
	"sync"
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
// traceTwo.func2) under an execution trace and summarizes it.
func traceTwo(t *testing.T, a, b func()) ([]*stats, time.Duration) {
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
	groups, span, err := summarize(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return groups, span
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
	groups, span := traceTwo(t, func() { spin(d) }, func() { sleeper(d) })
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
	groups, _ := traceTwo(t, func() { receiver(ch) }, func() { sender(ch) })
	var recv *stats
	for _, s := range groups {
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

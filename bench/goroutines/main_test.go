package main

import (
	"bytes"
	"runtime/trace"
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

// TestSummarize traces a goroutine that spins for 30 ms and one that
// sleeps for 30 ms: the first must be summed as running for most of its
// time, the second as blocked, each under its start function.
func TestSummarize(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	const d = 30 * time.Millisecond
	wg.Add(2)
	go func() { defer wg.Done(); spin(d) }()
	go func() { defer wg.Done(); sleeper(d) }()
	wg.Wait()
	trace.Stop()
	groups, span, err := summarize(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if span < d {
		t.Errorf("span %v, want %v or more", span, d)
	}
	var spun, slept *stats
	for _, s := range groups {
		switch s.name {
		case "github.com/iwarpkit/iwarpkit/bench/goroutines.TestSummarize.func1":
			spun = s
		case "github.com/iwarpkit/iwarpkit/bench/goroutines.TestSummarize.func2":
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

package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestGCPercent: GOGC is startPercent while the live heap is small, goes
// back as it was once the live heap passes smallHeap, is set to gcPercent
// once it passes tightenAt, and is restored when the watch stops; with
// GOGC in the environment nothing is watched.
func TestGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	w := startGCWatch()
	if w == nil {
		t.Skip("GOGC is set in the environment")
	}
	runtime.GC()
	runtime.GC()
	if got := debug.SetGCPercent(startPercent); got != startPercent {
		t.Errorf("GOGC %d with a small heap, want %d", got, startPercent)
	}
	await := func(ch chan struct{}, what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			runtime.GC() // the look comes after a collection
			select {
			case <-ch:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: GOGC was not set", what)
			}
		}
	}
	live := make([][]byte, 24)
	for i := range live[:8] {
		live[i] = make([]byte, 1<<20)
		live[i][i] = 1
	}
	await(w.grown, "8 MiB live")
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC %d with 8 MiB live, want 100", got)
	}
	for i := range live[8:] {
		live[8+i] = make([]byte, 1<<20)
		live[8+i][i] = 1
	}
	await(w.tightened, "24 MiB live")
	if got := debug.SetGCPercent(gcPercent); got != gcPercent {
		t.Errorf("GOGC %d with 24 MiB live, want %d", got, gcPercent)
	}
	w.stop()
	runtime.KeepAlive(live)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC %d after stop, want 100", got)
	}

	t.Setenv("GOGC", "200")
	if startGCWatch() != nil {
		t.Error("with GOGC set, the live heap is watched")
	}
}

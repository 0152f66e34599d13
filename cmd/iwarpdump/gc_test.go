package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestGCPercent: GOGC stays as it was while the live heap is small, is
// set to gcPercent once the live heap passes tightenAt, and is restored
// when the watch stops; with GOGC in the environment nothing is watched.
func TestGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	w := startGCWatch()
	if w == nil {
		t.Skip("GOGC is set in the environment")
	}
	runtime.GC()
	runtime.GC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC %d with a small heap, want 100", got)
	}
	live := make([][]byte, 24)
	for i := range live {
		live[i] = make([]byte, 1<<20)
		live[i][i] = 1
	}
	deadline := time.Now().Add(10 * time.Second)
wait:
	for {
		runtime.GC() // the look comes after a collection
		select {
		case <-w.tightened:
			break wait
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("24 MiB live: GOGC was not set")
		}
	}
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

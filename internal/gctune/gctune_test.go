package gctune

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestGCPercent: GOGC is off under a memory limit of startLimit until the
// first collection, which sets both back; GOGC is set to each of gcSteps'
// as the live heap passes its bound, and restored when the watch stops; with
// GOGC in the environment nothing is watched, and with GOMEMLIMIT the
// first collection comes as it would.
func TestGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	beforeLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(beforeLimit)
	t.Setenv("GOMEMLIMIT", "")
	w := startGCWatch()
	if w == nil {
		t.Skip("GOGC is set in the environment")
	}
	if got, lim := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1); got != -1 || lim != startLimit {
		t.Errorf("before a collection: GOGC %d, limit %d; want off, %d", got, lim, startLimit)
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
	await(w.started, "the first collection")
	if got, lim := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1); got != 100 || lim != math.MaxInt64 {
		t.Errorf("after a collection: GOGC %d, limit %d; want 100, no limit", got, lim)
	}
	debug.SetGCPercent(100)
	var live [][]byte
	for i, st := range gcSteps {
		// Past this step's bound, short of the next one's.
		for uint64(len(live))<<20 < st.live+(2<<20) {
			b := make([]byte, 1<<20)
			b[len(live)] = 1
			live = append(live, b)
		}
		what := fmt.Sprintf("%d MiB live", len(live))
		await(w.stepped[i], what)
		if got := debug.SetGCPercent(st.percent); got != st.percent {
			t.Errorf("GOGC %d with %s, want %d", got, what, st.percent)
		}
	}
	w.stop()
	runtime.KeepAlive(live)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC %d after stop, want 100", got)
	}

	t.Setenv("GOMEMLIMIT", "1GiB")
	w = startGCWatch()
	if got, lim := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1); got != 100 || lim != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set: GOGC %d, limit %d; want 100 and the limit as it was", got, lim)
	}
	debug.SetGCPercent(100)
	w.stop()

	t.Setenv("GOGC", "200")
	if startGCWatch() != nil {
		t.Error("with GOGC set, the live heap is watched")
	}
}

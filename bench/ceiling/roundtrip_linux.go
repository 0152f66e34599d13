//go:build linux

package main

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// roundTrip measures how long a cache line takes to go from one CPU to
// another and back: two threads, each pinned to one of the first two CPUs
// the process may run on, pass a counter back and forth n times, each
// waiting (spinning) for the other's store before it stores the next
// value. A decode with -j 2 moves every chunk the reader copied to the
// worker on the other core, so this is the latency that traffic pays. It
// returns the mean round trip and the two CPUs, or ok false when the
// process may run on fewer than two CPUs, GOMAXPROCS is 1, a thread cannot
// be pinned, or the passing stalls (the two threads never run at once).
func roundTrip(n int) (d time.Duration, cpus [2]int, ok bool) {
	var set unix.CPUSet
	if runtime.GOMAXPROCS(0) < 2 || unix.SchedGetaffinity(0, &set) != nil {
		return 0, cpus, false
	}
	k := 0
	for c := 0; c < len(set)*64 && k < 2; c++ {
		if set.IsSet(c) {
			cpus[k] = c
			k++
		}
	}
	if k < 2 {
		return 0, cpus, false
	}
	var (
		line struct {
			_ [64]byte
			v atomic.Int64
			_ [56]byte
		}
		stop    atomic.Bool // a pin failed, or the passing stalled
		pinned  sync.WaitGroup
		started = make(chan struct{})
		done    = make(chan struct{})
	)
	// pass spins until the counter is want-1 and stores want, for every
	// want of its parity below 2n, pinned to cpu.
	pass := func(cpu int, first int64, finish func()) {
		defer finish()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		// The thread may run anywhere again once the goroutine lets it go.
		defer func() { _ = unix.SchedSetaffinity(0, &set) }()
		var one unix.CPUSet
		one.Set(cpu)
		if unix.SchedSetaffinity(0, &one) != nil {
			stop.Store(true)
		}
		pinned.Done()
		<-started
		deadline := time.Now().Add(2 * time.Second)
		for want := first; want < 2*int64(n) && !stop.Load(); want += 2 {
			for spins := 0; line.v.Load() != want-1; spins++ {
				if spins&0xffff == 0xffff && (stop.Load() || time.Now().After(deadline)) {
					stop.Store(true)
					return
				}
			}
			line.v.Store(want)
		}
	}
	line.v.Store(-1)
	pinned.Add(2)
	go pass(cpus[1], 1, func() { close(done) })
	var t0 time.Time
	var elapsed time.Duration
	go func() {
		pinned.Wait()
		t0 = time.Now()
		close(started)
	}()
	pass(cpus[0], 0, func() { elapsed = time.Since(t0) })
	<-done
	if stop.Load() {
		return 0, cpus, false
	}
	return elapsed / time.Duration(n), cpus, true
}

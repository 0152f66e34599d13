//go:build linux

package main

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestRoundTrip(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	if set.Count() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skipf("the process may run on %d CPU(s), GOMAXPROCS %d: no two CPUs to pass a line between", set.Count(), runtime.GOMAXPROCS(0))
	}
	d, cpus, ok := roundTrip(20000)
	if !ok {
		t.Fatalf("no round trip measured between CPUs %v", cpus)
	}
	if cpus[0] == cpus[1] || !set.IsSet(cpus[0]) || !set.IsSet(cpus[1]) {
		t.Errorf("CPUs %v: want two distinct CPUs of the affinity mask", cpus)
	}
	// A line crosses between cores in tens to hundreds of nanoseconds; a
	// round trip of a millisecond would mean the threads took turns on
	// one CPU rather than ran at once.
	if d <= 0 || d > time.Millisecond {
		t.Errorf("round trip %v, want between 0 and 1ms", d)
	}
	// Every thread may run anywhere again.
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &after); err != nil {
		t.Fatal(err)
	}
	if after != set {
		t.Errorf("affinity after the measure %v, want %v", after, set)
	}
}

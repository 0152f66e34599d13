// Package gctune sets the Go collector for iwarpkit's commands, whose
// memory is a target of its own (issue 6: 64 MiB of peak RSS whatever the
// capture, for iwarpdump) while the Go runtime's defaults let the heap
// grow to twice what is live: Start turns the first collection off until
// the heap is of some size, then lowers GOGC in steps as the live heap
// grows. The reasons and the measurements are below.
package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Issue 6 asks for a peak RSS of 64 MiB whatever the capture. The
// collector lets the heap grow to twice what was live after a collection
// (GOGC=100) before the next; where a decode holds some tens of MB
// (connections reset by the thousand, open by the thousand, a SYN flood
// with -j 2, the -z tables of many connections), that slack was the
// difference. So once the live heap passes 16 MB (gcSteps), iwarpdump runs
// the collector at GOGC=50: the heap grows to 1.5 times what was live. On the
// captures of bench/memory.sh that takes 10-25 % off their peak RSS
// (synflood 400,000 with -j 2: 85 -> 65 MiB; 100,000 connections reset
// within 26 s, JSON Lines: 82 -> 71 MiB; 100,000 reset over a day, -j 2
// -T jsonl: 150 -> 122 MiB; churn 100,000 with -j 2 -q -z conn: 139 ->
// 108 MiB) for up to 15 % more CPU there, and some runs less. Below it,
// GOGC stays at 100 (from smallHeap on, below): GOGC=50 from the start
// made the collector run twice as often on the workload and small
// messages, 5 % of the workload's time under -q -z conn. Past 24 MB live
// it goes to 30: with the tables of 65,536 connections (report.MaxConns;
// 100,000 connections reset, -j 2 -z conn, lines and a table) the live
// heap reaches 28 MB, and GOGC=50 peaked at 65-68 MiB (4 runs), 30 at
// 60-61 MiB, for 10 % more CPU there.
//
// A soft memory limit (debug.SetMemoryLimit: 48 MiB, lifted once the live
// heap passed three quarters of it) brought a few more cases under 64 MiB,
// but cost up to 50 % more CPU where the live heap sat just under it, and
// a limit cannot tell that from a decode about to outgrow it.
//
// At the other end, the first collection waits until the Go runtime
// holds startLimit: until then GOGC is off under a memory limit of
// startLimit (debug.SetMemoryLimit), and both are set back at the first
// collection. At GOGC=100 the first collection came when the heap reached
// 4 MB, some 15 ms into the workload under -j 2 -q -z conn (three 1 MiB
// chunk buffers, a Decoder per worker), and it was its only one. Besides
// its own work it scanned the 5 MB of gopacket/layers' tables of decoders
// (pointers all): a quarter of the run's page faults. Without it, -j 2 -q
// -z conn took 0.208 s instead of 0.229 s and 18 MiB instead of 28.5
// (median of 9 interleaved rounds). (GOGC=400 until the live heap passed
// 4 MiB did as much there, but the collector counts the 5 MB of globals in
// the heap goal, times GOGC/100: churn 25,000 in JSON Lines took 58.6 MiB
// instead of 32.5.)
//
// GOGC in the environment overrides all of this, and GOMEMLIMIT the first
// collection's wait.
const startLimit = 24 << 20

// gcSteps are the GOGC values the watch sets as the live heap passes each
// bound, in increasing order.
var gcSteps = [...]struct {
	live    uint64
	percent int
}{{16 << 20, 50}, {24 << 20, 30}}

// gcWatch is the watch on the live heap that Start starts.
type gcWatch struct {
	old      int   // GOGC before
	oldLimit int64 // the memory limit before
	mu       sync.Mutex
	done     bool // tightened to the last step, or stopped
	steps    int  // the gcSteps taken
	// started is closed when the first collection has set GOGC and the
	// memory limit back, and stepped[i] when GOGC is set to gcSteps[i]'s
	// (tests).
	started chan struct{}
	stepped [len(gcSteps)]chan struct{}
}

// gcTick is an object made only to be collected: its finalizer runs after
// the collection that finds it unreachable, which is when the live heap
// is measured anew; watching there costs nothing between collections. The
// pointer keeps it out of the tiny allocator, whose blocks are collected
// together.
type gcTick struct{ w *gcWatch }

// Start turns the collector off under a memory limit of startLimit
// until its first collection, then watches the live heap and sets GOGC as
// it passes each of gcSteps' bounds; nothing when GOGC is set in the
// environment. It returns what stops the watch and restores the settings
// before.
func Start() (restore func()) {
	w := startGCWatch()
	if w == nil {
		return func() {}
	}
	return w.stop
}

// startGCWatch starts the watch, or returns nil when GOGC is set.
func startGCWatch() *gcWatch {
	if os.Getenv("GOGC") != "" {
		return nil
	}
	w := &gcWatch{started: make(chan struct{})}
	for i := range w.stepped {
		w.stepped[i] = make(chan struct{})
	}
	w.old = debug.SetGCPercent(-1)
	w.oldLimit = debug.SetMemoryLimit(-1) // a negative limit reads it
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(startLimit)
	} else {
		w.restore()
		close(w.started)
	}
	w.arm()
	return w
}

// arm asks for a look at the live heap after the next collection.
func (w *gcWatch) arm() {
	runtime.SetFinalizer(&gcTick{w}, func(t *gcTick) { t.w.check() })
}

// check sets GOGC for the live heap, and waits for the next collection
// unless it is past the last of gcSteps.
func (w *gcWatch) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		w.restore()
		return
	}
	select {
	case <-w.started:
	default:
		w.restore()
		close(w.started)
	}
	live, steps := s[0].Value.Uint64(), w.steps
	for w.steps < len(gcSteps) && live > gcSteps[w.steps].live {
		close(w.stepped[w.steps])
		w.steps++
	}
	if w.steps > steps {
		debug.SetGCPercent(gcSteps[w.steps-1].percent)
	}
	if w.steps == len(gcSteps) {
		w.done = true
		return
	}
	w.arm()
}

// stop ends the watch and restores GOGC and the memory limit as they were.
func (w *gcWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	w.restore()
}

// restore sets GOGC and the memory limit as they were.
func (w *gcWatch) restore() {
	debug.SetGCPercent(w.old)
	debug.SetMemoryLimit(w.oldLimit)
}

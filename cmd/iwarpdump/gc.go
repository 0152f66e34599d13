package main

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
// difference. So once the live heap passes tightenAt, iwarpdump runs the
// collector at GOGC=50: the heap grows to 1.5 times what was live. On the
// captures of bench/memory.sh that takes 10-25 % off their peak RSS
// (synflood 400,000 with -j 2: 85 -> 65 MiB; 100,000 connections reset
// within 26 s, JSON Lines: 82 -> 71 MiB; 100,000 reset over a day, -j 2
// -T jsonl: 150 -> 122 MiB; churn 100,000 with -j 2 -q -z conn: 139 ->
// 108 MiB) for up to 15 % more CPU there, and some runs less. Below it,
// GOGC stays at 100 (from smallHeap on, below): GOGC=50 from the start
// made the collector run twice as often on the workload and small
// messages, 5 % of the workload's time under -q -z conn.
//
// A soft memory limit (debug.SetMemoryLimit: 48 MiB, lifted once the live
// heap passed three quarters of it) brought a few more cases under 64 MiB,
// but cost up to 50 % more CPU where the live heap sat just under it, and
// a limit cannot tell that from a decode about to outgrow it.
//
// At the other end, a decode whose live heap is a few MB (the workload,
// above all with -j 2: three 1 MiB chunk buffers, a Decoder per worker)
// runs GOGC=400 until the live heap passes smallHeap, when GOGC goes back to
// 100: at 100, the first collection came when the heap reached 4 MB, some
// 15 ms into the workload under -j 2 -q -z conn, and it was its only one.
// Besides its own work, it scanned the 5 MB of gopacket/layers' tables of
// decoders (pointers all), a quarter of the run's page faults. At 400 the
// heap may grow to five times what is live, 20 MB at most below smallHeap:
// -j 2 -q -z conn took 0.213 s instead of 0.224 s and 18.3 MiB instead of
// 25.0 (median of 11 interleaved rounds).
//
// GOGC in the environment overrides all of this.
const (
	startPercent = 400
	smallHeap    = 4 << 20
	gcPercent    = 50
	tightenAt    = 16 << 20
)

// gcWatch is the watch on the live heap that setGCPercent starts.
type gcWatch struct {
	old  int // GOGC before
	mu   sync.Mutex
	done bool // tightened, or stopped
	// grown is closed when GOGC goes back from startPercent to old, and
	// tightened when it is set to gcPercent (tests).
	grown, tightened chan struct{}
}

// gcTick is an object made only to be collected: its finalizer runs after
// the collection that finds it unreachable, which is when the live heap
// is measured anew; watching there costs nothing between collections. The
// pointer keeps it out of the tiny allocator, whose blocks are collected
// together.
type gcTick struct{ w *gcWatch }

// setGCPercent sets GOGC to startPercent and watches the live heap: it
// sets GOGC back as it was once the heap passes smallHeap, and to gcPercent
// once it passes tightenAt, unless GOGC is set in the environment. It returns what stops the watch and
// restores the setting before.
func setGCPercent() (restore func()) {
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
	w := &gcWatch{old: debug.SetGCPercent(startPercent), grown: make(chan struct{}), tightened: make(chan struct{})}
	w.arm()
	return w
}

// arm asks for a look at the live heap after the next collection.
func (w *gcWatch) arm() {
	runtime.SetFinalizer(&gcTick{w}, func(t *gcTick) { t.w.check() })
}

// check sets GOGC for the live heap, and waits for the next collection
// unless it is past tightenAt.
func (w *gcWatch) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	live := s[0].Value.Uint64()
	if live > smallHeap {
		select {
		case <-w.grown:
		default:
			debug.SetGCPercent(w.old)
			close(w.grown)
		}
	}
	if live > tightenAt {
		debug.SetGCPercent(gcPercent)
		w.done = true
		close(w.tightened)
		return
	}
	w.arm()
}

// stop ends the watch and restores GOGC as it was.
func (w *gcWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	debug.SetGCPercent(w.old)
}

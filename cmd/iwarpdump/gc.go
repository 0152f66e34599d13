package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is the collector's GOGC that iwarpdump runs with: the heap
// grows to 1.5 times what was live after a collection before the next,
// rather than twice. Issue 6 asks for a peak RSS of 64 MiB whatever the
// capture; where a decode holds some tens of MB (connections reset by
// the thousand, open by the thousand, a SYN flood with -j 2, the -z
// tables of many connections), the heap's slack was the difference. On
// the captures of bench/memory.sh it takes 15-25 % off the peak RSS of
// those (synflood 400,000 with -j 2: 83 -> 66 MiB; 100,000 connections
// reset within 26 s: 146 -> 107 MiB), for up to 15 % more CPU there;
// the workload and small messages, which hold a few MB, did not change
// (bench/compare.sh). A soft memory limit (debug.SetMemoryLimit), lifted
// when the live heap neared it, brought a few more of them under 64 MiB
// but cost up to 50 % more CPU where the live heap sat just under it,
// and a limit cannot tell that from a decode about to outgrow it.
// GOGC in the environment overrides this.
const gcPercent = 50

// setGCPercent sets gcPercent unless GOGC is set, and returns what
// restores the setting before.
func setGCPercent() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(gcPercent)
	return func() { debug.SetGCPercent(old) }
}

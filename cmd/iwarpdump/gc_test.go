package main

import (
	"runtime/debug"
	"testing"
)

// TestGCPercent: iwarpdump's GOGC is in force until restored, unless GOGC
// is set in the environment.
func TestGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	restore := setGCPercent()
	if got := debug.SetGCPercent(gcPercent); got != gcPercent {
		t.Errorf("GOGC %d in force, want %d", got, gcPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC %d after restore, want 100", got)
	}
	t.Setenv("GOGC", "200")
	setGCPercent()()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, GOGC %d in force, want 100", got)
	}
}

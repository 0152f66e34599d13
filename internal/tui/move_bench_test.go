package tui

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/gdamore/tcell/v2"
)

// BenchmarkListMove measures one cursor move down the record list as the
// program makes it on a screen of 140x50 cells: the key's action on the
// model and the view's render, the draw that follows an input event, then
// what the ticker does after a key (Run: Tick, and a draw when it changed
// something).
func BenchmarkListMove(b *testing.B) {
	scr := tcell.NewSimulationScreen("UTF-8")
	if err := scr.Init(); err != nil {
		b.Fatal(err)
	}
	scr.SetSize(simW, simH)
	app, err := New(benchCapture(), Options{Screen: scr})
	if err != nil {
		b.Fatal(err)
	}
	defer app.Close()
	if err := app.Index(context.Background()); err != nil {
		b.Fatal(err)
	}
	app.Ctl.Tick(0)
	down := tcell.NewEventKey(tcell.KeyDown, 0, tcell.ModNone)
	app.TApp.ForceDraw()
	n := app.St.List.Len()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%1000 == 999 || app.St.List.Selected() >= n-1 {
			app.St.List.Select(0)
		}
		app.TApp.GetInputCapture()(down)
		app.TApp.ForceDraw()
		app.tick()
	}
	b.ReportMetric(float64(n), "rows")
}

// TestTickDraws: after a key, whose action tview has drawn, the ticker's
// tick draws nothing more unless the state changed (the whole screen's
// draw was half the cost of a move down the list); a change of the
// index (indexing goes on) is drawn.
func TestTickDraws(t *testing.T) {
	h := open(t, rping)
	var draws atomic.Int64
	h.app.TApp.SetAfterDrawFunc(func(tcell.Screen) { draws.Add(1) })
	h.keys("j")
	tick := func() int64 {
		before := draws.Load()
		done := make(chan struct{})
		h.app.TApp.QueueUpdate(func() { h.app.tick(); close(done) })
		<-done
		return draws.Load() - before
	}
	if n := tick(); n != 0 {
		t.Errorf("a tick after a key drew %d times, want 0", n)
	}
	h.app.X.SetProgress(h.app.X.Progress()) // a new version, as indexing makes
	if n := tick(); n != 1 {
		t.Errorf("a tick after the index changed drew %d times, want 1", n)
	}
}

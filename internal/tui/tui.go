// Package tui is iwarptui, a terminal browser of iWARP captures in the
// manner of termshark, built on tview and tcell: a virtualised record list
// coloured by kind, the detail tree of the selected record (the field
// registry's names and descriptions), its octets with the selected field,
// markers, pad and CRC told apart and frame boundaries shown, the
// connection table, a ladder of each connection's RDMA messages with Read
// latencies, the findings, display filters in the language of iwarpdump
// -Y, search, go to frame, mouse support and a help screen.
//
// The capture is indexed in the background (package source) into a compact
// model.Index while the screen is already up: the first rows show as soon
// as the decoder emits them, a progress bar tracks the rest, and memory
// grows by the index, not by decoded records: 90 octets a record on issue
// 6's 512 MiB workload (37 MiB for 429,948 records), 100 on 100,000
// connections reset (262 MiB for 2,760,516; the process peaked at 680
// MiB, the collector's room included).
//
// Structure: package model holds the state and is tested without a
// screen; package view holds the tview primitives; package controller the
// key bindings. This package wires them to a capture file and a screen.
package tui

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/iwarpkit/iwarpkit/filter"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/tui/controller"
	"github.com/iwarpkit/iwarpkit/internal/tui/model"
	"github.com/iwarpkit/iwarpkit/internal/tui/source"
	"github.com/iwarpkit/iwarpkit/internal/tui/view"
)

// Options configure an App.
type Options struct {
	// Flows configures the decoder (iwarpdump's --decode-as, --mpa-flags).
	Flows flows.Options
	// Screen is the screen to draw on; nil opens the terminal.
	Screen tcell.Screen
	// Compile compiles display filters; nil uses package filter.
	Compile model.Compiler
	// Tick is how often the screen follows the indexing (default 100ms).
	Tick time.Duration
	// Time is the format of the Time column (iwarpdump -t, tshark -t);
	// the default is the UTC time of day.
	Time format.TimeFormat
}

// App is one iwarptui session over a capture file.
type App struct {
	Path  string
	X     *model.Index
	St    *model.State
	View  *view.View
	Ctl   *controller.Controller
	TApp  *tview.Application
	opts  Options
	input io.ReadCloser
	size  int64
	fr    *source.Frames
	done  chan struct{} // closed when indexing ends
	err   error
}

// CompileFilter compiles a display filter with package filter, turning its
// syntax errors into model.FilterErrors so that the filter bar can point
// at them.
func CompileFilter(expr string) (model.Matcher, error) {
	f, err := filter.Compile(expr)
	if err != nil {
		var se *filter.SyntaxError
		if errors.As(err, &se) {
			return nil, &model.FilterError{Pos: se.Pos, Msg: se.Msg}
		}
		return nil, err
	}
	return f, nil
}

// New opens the capture at path ("-": standard input) and builds the
// application; nothing is read or drawn until Index and Run.
func New(path string, o Options) (*App, error) {
	in, size, err := source.Open(path)
	if err != nil {
		return nil, err
	}
	fr, err := source.OpenFrames(path)
	if err != nil {
		_ = in.Close()
		return nil, err
	}
	if o.Compile == nil {
		o.Compile = CompileFilter
	}
	if o.Tick <= 0 {
		o.Tick = 100 * time.Millisecond
	}
	a := &App{Path: path, X: model.NewIndex(), opts: o, input: in, size: size, fr: fr, done: make(chan struct{})}
	name := path
	if path == "-" {
		name = "standard input"
	}
	a.St = model.NewState(name, a.X, fr, o.Compile)
	a.St.SetTimeFormat(o.Time)
	a.St.Stats = model.NewStats()
	a.TApp = tview.NewApplication()
	if o.Screen != nil {
		a.TApp.SetScreen(o.Screen)
	}
	a.TApp.EnableMouse(true)
	a.View = view.New(a.TApp, a.St)
	a.Ctl = controller.New(a.TApp, a.St, a.View)
	a.TApp.SetRoot(a.View.Root, true)
	a.View.Render()
	return a, nil
}

// Index reads the capture into the index; it returns when the file is
// done (or ctx is cancelled). Run calls it in the background; tests call
// it first to get a complete index.
func (a *App) Index(ctx context.Context) error {
	defer close(a.done)
	a.err = source.Run(ctx, a.input, a.Path, a.size, a.X, source.Options{Flows: a.opts.Flows, OnPacket: a.fr.Offer, Stats: a.St.Stats})
	return a.err
}

// Done is closed when indexing has ended.
func (a *App) Done() <-chan struct{} { return a.done }

// Close releases the capture file.
func (a *App) Close() error {
	_ = a.fr.Close()
	return a.input.Close()
}

// Run shows the application until the user quits or ctx is cancelled. When
// indexing has not been started, it starts it in the background.
func (a *App) Run(ctx context.Context, index bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if index {
		go func() { _ = a.Index(ctx) }()
	}
	go func() {
		t := time.NewTicker(a.opts.Tick)
		defer t.Stop()
		var busy atomic.Bool
		busy.Store(true)
		var seen uint64
		var handled int64
		for {
			select {
			case <-ctx.Done():
				a.TApp.Stop()
				return
			case <-t.C:
				// Once idle, wake up only when the index changes or a key
				// may have started work (a filter, a search).
				if v, h := a.X.Version(), a.Ctl.Handled.Load(); busy.Load() || v != seen || h != handled {
					seen, handled = v, h
					a.TApp.QueueUpdate(func() { busy.Store(a.tick()) })
				}
			}
		}
	}()
	err := a.TApp.Run()
	cancel()
	return err
}

// tick is what Run's ticker does on the event loop: it brings the state up
// to date with the index (Controller.Tick) and draws when that changed
// anything: after a key, whose action tview drew already, there is often
// nothing new, and a draw of the whole screen is most of a key's cost. It
// reports whether work remains.
func (a *App) tick() bool {
	busy, rendered := a.Ctl.Tick(a.opts.Tick / 4)
	if rendered {
		a.TApp.ForceDraw()
	}
	return busy
}

// SnapHidden returns how many TCP connections the capture's snap length
// left unknown, once indexing has ended (model.Progress.SnapHidden).
func (a *App) SnapHidden() int { return a.X.Progress().SnapHidden }

// IndexErr returns the error that ended indexing early, if any.
func (a *App) IndexErr() error {
	select {
	case <-a.done:
		return a.err
	default:
		return nil
	}
}

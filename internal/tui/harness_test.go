package tui

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// harness drives an App on a simulation screen: keys go in through the
// screen, as a terminal would send them, and the screen's contents come
// out as text.
type harness struct {
	t      *testing.T
	app    *App
	scr    tcell.SimulationScreen
	cancel context.CancelFunc
	exited chan struct{}
}

const simW, simH = 140, 50

// open starts iwarptui on path with the capture fully indexed first, so
// that what the screen shows does not depend on timing.
func open(t *testing.T, path string) *harness {
	t.Helper()
	return openSize(t, path, simW, simH)
}

// openSize is open on a screen of width x height cells.
func openSize(t *testing.T, path string, width, height int) *harness {
	t.Helper()
	return start(t, path, width, height, false)
}

// start is open on a screen of width x height cells; when damaged, the
// capture is expected to end in damage (indexing returns an error).
func start(t *testing.T, path string, width, height int, damaged bool) *harness {
	t.Helper()
	return startWith(t, path, Options{}, width, height, damaged)
}

// startWith is start with options (their Screen and Tick are the
// harness's).
func startWith(t *testing.T, path string, o Options, width, height int, damaged bool) *harness {
	t.Helper()
	scr := tcell.NewSimulationScreen("UTF-8")
	o.Screen, o.Tick = scr, time.Hour
	app, err := New(path, o)
	if err != nil {
		t.Fatal(err)
	}
	scr.SetSize(width, height)
	if err := app.Index(context.Background()); (err != nil) != damaged {
		t.Fatalf("indexing: %v (a damaged capture: %v)", err, damaged)
	}
	app.Ctl.Tick(0)
	return run(t, app, scr)
}

// run runs app on scr until the test ends, and returns its harness.
func run(t *testing.T, app *App, scr tcell.SimulationScreen) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, app: app, scr: scr, cancel: cancel, exited: make(chan struct{})}
	go func() {
		defer close(h.exited)
		if err := app.Run(ctx, false); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(h.close)
	h.sync()
	return h
}

func (h *harness) close() {
	h.cancel()
	select {
	case <-h.exited:
	case <-time.After(5 * time.Second):
		h.t.Error("iwarptui did not stop")
	}
	_ = h.app.Close()
}

// sync waits until the event loop has handled everything sent so far and
// drawn the result: two round trips through its update queue (the first
// update runs after the pending events; the second after the draw that
// follows the first).
func (h *harness) sync() {
	h.t.Helper()
	// What the ticker does in the program, without time limits: catch up
	// with filters and searches.
	h.app.TApp.QueueUpdate(func() { h.app.Ctl.Tick(0) })
	for range 2 {
		ch := make(chan struct{})
		h.app.TApp.QueueUpdateDraw(func() { close(ch) })
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			h.t.Fatal("event loop stuck")
		}
	}
}

// waitHandled waits until the controller has seen n input events.
func (h *harness) waitHandled(n int64) {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.app.Ctl.Handled.Load() < n {
		if time.Now().After(deadline) {
			h.t.Fatalf("input not handled (%d < %d)", h.app.Ctl.Handled.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
	h.sync()
}

// keys sends keys: runes as typed, and the names in braces of special
// keys ({Enter}, {Esc}, {Down}, {Up}, {Right}, {Left}, {Tab}, {PgDn},
// {PgUp}, {Home}, {End}, {Backspace}).
func (h *harness) keys(s string) {
	h.t.Helper()
	special := map[string]tcell.Key{
		"Enter": tcell.KeyEnter, "Esc": tcell.KeyEscape, "Down": tcell.KeyDown, "Up": tcell.KeyUp,
		"Right": tcell.KeyRight, "Left": tcell.KeyLeft, "Tab": tcell.KeyTab, "PgDn": tcell.KeyPgDn,
		"PgUp": tcell.KeyPgUp, "Home": tcell.KeyHome, "End": tcell.KeyEnd, "Backspace": tcell.KeyBackspace2,
	}
	for s != "" {
		n := h.app.Ctl.Handled.Load()
		if s[0] == '{' {
			end := strings.IndexByte(s, '}')
			k, ok := special[s[1:end]]
			if !ok {
				h.t.Fatalf("unknown key %q", s[:end+1])
			}
			h.scr.InjectKey(k, 0, tcell.ModNone)
			s = s[end+1:]
		} else {
			r := []rune(s)[0]
			h.scr.InjectKey(tcell.KeyRune, r, tcell.ModNone)
			s = s[len(string(r)):]
		}
		h.waitHandled(n + 1)
	}
}

// click sends a left click at x, y (double: a double click).
func (h *harness) click(x, y int) {
	h.t.Helper()
	n := h.app.Ctl.Clicks.Load()
	h.scr.InjectMouse(x, y, tcell.Button1, tcell.ModNone)
	h.scr.InjectMouse(x, y, tcell.ButtonNone, tcell.ModNone)
	deadline := time.Now().Add(5 * time.Second)
	for h.app.Ctl.Clicks.Load() <= n {
		if time.Now().After(deadline) {
			h.t.Fatal("click not handled")
		}
		time.Sleep(time.Millisecond)
	}
	h.sync()
}

// text returns the screen as lines of text, trailing blanks removed.
func (h *harness) text() []string {
	cells, w, ht := h.scr.GetContents()
	out := make([]string, ht)
	for y := range ht {
		var b strings.Builder
		for x := range w {
			c := cells[y*w+x]
			if len(c.Runes) == 0 {
				b.WriteByte(' ')
			} else {
				b.WriteString(string(c.Runes))
			}
		}
		out[y] = strings.TrimRight(b.String(), " ")
	}
	return out
}

// styleMap returns one letter per cell naming its colour: the background
// (bg true) or foreground colour, per the legend in testdata/README.md.
// Blank cells and default colours are spaces.
func (h *harness) styleMap(bg bool) []string {
	cells, w, ht := h.scr.GetContents()
	out := make([]string, ht)
	for y := range ht {
		var b strings.Builder
		for x := range w {
			c := cells[y*w+x]
			fg, bgc, _ := c.Style.Decompose()
			col := fg
			if bg {
				col = bgc
			}
			blank := len(c.Runes) == 0 || c.Runes[0] == ' '
			if blank && !bg {
				b.WriteByte(' ')
				continue
			}
			b.WriteByte(colorLetter(col))
		}
		out[y] = strings.TrimRight(b.String(), " ")
	}
	return out
}

// colorLetter is the legend of the style maps.
func colorLetter(c tcell.Color) byte {
	switch c {
	case tcell.ColorDefault, tcell.ColorBlack:
		return ' '
	case tcell.ColorSilver:
		return '.'
	case tcell.ColorWhite:
		return 'w'
	case tcell.ColorGray:
		return 'g'
	case tcell.ColorAqua:
		return 'a'
	case tcell.ColorTeal:
		return 't'
	case tcell.ColorLime:
		return 'l'
	case tcell.ColorYellow:
		return 'y'
	case tcell.ColorFuchsia:
		return 'f'
	case tcell.ColorPurple:
		return 'p'
	case tcell.ColorRed:
		return 'r'
	case tcell.ColorMaroon:
		return 'm'
	case tcell.ColorDarkGreen:
		return 'd'
	case tcell.ColorOrange:
		return 'o'
	}
	return '?'
}

// golden compares the screen (text, and the colour maps asked for) with
// testdata/name.golden, or rewrites it with -update.
func (h *harness) golden(name string, fg, bg bool) {
	h.t.Helper()
	var b strings.Builder
	for _, l := range h.text() {
		b.WriteString(l + "\n")
	}
	if fg {
		b.WriteString("--- foreground colours ---\n")
		for _, l := range h.styleMap(false) {
			b.WriteString(l + "\n")
		}
	}
	if bg {
		b.WriteString("--- background colours ---\n")
		for _, l := range h.styleMap(true) {
			b.WriteString(l + "\n")
		}
	}
	got := b.String()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			h.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		h.t.Errorf("screen differs from %s (go test -update rewrites it):\n%s", path, diff(string(want), got))
	}
}

// diff shows the first differing lines.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	n := 0
	for i := 0; i < max(len(w), len(g)) && n < 12; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  want " + wl + "\n  got  " + gl + "\n")
			n++
		}
	}
	return b.String()
}

// find returns the first screen line containing s, or -1.
func (h *harness) find(s string) int {
	for i, l := range h.text() {
		if strings.Contains(l, s) {
			return i
		}
	}
	return -1
}

// highlighted reads the hex pane off the screen and returns the frame
// offsets and values of the octets shown highlighted (black on yellow or,
// for markers, on fuchsia).
func (h *harness) highlighted() (offs []int, vals []byte) {
	h.t.Helper()
	lines := h.text()
	x0, per := -1, 16
	for _, l := range lines {
		if i := strings.Index(l, "┌ Octets"); i >= 0 {
			x0 = len([]rune(l[:i])) + 1
			// The pane's width tells the octets a line: 4 + 2 + 3 per
			// octet (and a gap between two groups of 8), ASCII, border.
			switch w := len([]rune(l)) - x0 + 1; {
			case w < 4+2+8*3+1+8+2:
				per = 4
			case w < 4+2+16*3+1+1+16+2:
				per = 8
			}
			break
		}
	}
	if x0 < 0 {
		h.t.Fatal("no hex pane on screen")
	}
	cells, w, ht := h.scr.GetContents()
	for y := range ht {
		row := []rune(lines[y])
		if len(row) < x0+6 {
			continue
		}
		off, err := strconv.ParseUint(string(row[x0:x0+4]), 16, 32)
		if err != nil || row[x0+4] != ' ' {
			continue
		}
		for i := range per {
			x := x0 + 6 + i*3
			if i >= 8 {
				x++
			}
			_, bg, _ := cells[y*w+x].Style.Decompose()
			if bg != tcell.ColorYellow && bg != tcell.ColorFuchsia {
				continue
			}
			v, err := strconv.ParseUint(string(row[x:x+2]), 16, 8)
			if err != nil {
				h.t.Fatalf("highlighted cell %q at %d,%d", string(row[x:x+2]), x, y)
			}
			offs = append(offs, int(off)+i)
			vals = append(vals, byte(v))
		}
	}
	return offs, vals
}

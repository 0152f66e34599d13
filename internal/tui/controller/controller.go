// Package controller maps iwarptui's keys and mouse to actions on the model
// (package model) and redraws the view (package view) after each. The key
// bindings are one table, Bindings, from which the help screen is written,
// so that the help never disagrees with the keys.
package controller

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/iwarpkit/iwarpkit/internal/tui/model"
	"github.com/iwarpkit/iwarpkit/internal/tui/view"
)

// Context says where a binding applies.
type Context uint8

// Binding contexts.
const (
	Global       Context = iota // every screen
	List                        // the record list has the focus
	Tree                        // the detail tree has the focus
	Hex                         // the hex pane has the focus
	Conns                       // the connection table
	Findings                    // the findings
	Ladder                      // the ladder of a connection
	Stats                       // a statistics table
	HelpScreen                  // the help screen is up
	SearchPrompt                // the search prompt is open (s, Ctrl-F)
)

var contextNames = [...]string{"Everywhere", "Record list", "Detail tree", "Octets", "Connections (c)", "Findings (e)", "Ladder (f)", "Statistics (z)", "This help (?)", "Find prompt (s, Ctrl-F)"}

// Key is one key: a special key, or a rune (Key is tcell.KeyRune), with
// Alt held (M is tcell.ModAlt) or not (0; the other modifiers are not
// told apart).
type Key struct {
	K tcell.Key
	R rune
	M tcell.ModMask
}

func r(c rune) Key          { return Key{K: tcell.KeyRune, R: c} }
func k(key tcell.Key) Key   { return Key{K: key} }
func alt(key tcell.Key) Key { return Key{K: key, M: tcell.ModAlt} }

// Name is the key as the help screen writes it: "↑", "PgDn", "Bksp", "q",
// "Alt-←".
func (k Key) Name() string {
	if k.M&tcell.ModAlt != 0 {
		return "Alt-" + Key{K: k.K, R: k.R}.Name()
	}
	if k.K == tcell.KeyRune {
		if k.R == ' ' {
			return "Space"
		}
		return string(k.R)
	}
	switch k.K {
	case tcell.KeyUp:
		return "↑"
	case tcell.KeyDown:
		return "↓"
	case tcell.KeyLeft:
		return "←"
	case tcell.KeyRight:
		return "→"
	case tcell.KeyPgUp:
		return "PgUp"
	case tcell.KeyPgDn:
		return "PgDn"
	case tcell.KeyEnter:
		return "Enter"
	case tcell.KeyEscape:
		return "Esc"
	case tcell.KeyTab:
		return "Tab"
	case tcell.KeyBacktab:
		return "Shift-Tab"
	case tcell.KeyHome:
		return "Home"
	case tcell.KeyEnd:
		return "End"
	case tcell.KeyCtrlC:
		return "Ctrl-C"
	case tcell.KeyCtrlF:
		return "Ctrl-F"
	case tcell.KeyCtrlL:
		return "Ctrl-L"
	case tcell.KeyBackspace, tcell.KeyBackspace2:
		return "Bksp"
	case tcell.KeyCtrlH:
		return "Ctrl-H"
	}
	return tcell.KeyNames[k.K]
}

// Binding is a key binding: the keys, where they apply, what they do.
type Binding struct {
	Context Context
	Keys    []Key
	Help    string
	Do      func(c *Controller) // nil: the primitive's own key, listed for the help
}

// Controller handles input for one View.
type Controller struct {
	St  *model.State
	V   *view.View
	App *tview.Application

	// Quit is called to leave the program (q, Ctrl-C).
	Quit func()
	// Handled counts the input events the controller has seen; tests wait
	// on it.
	Handled atomic.Int64
	// Clicks counts the clicks and double clicks handled.
	Clicks atomic.Int64

	bindings []Binding
	version  uint64
}

// New wires a controller to the view: the application's input and mouse
// capture, the line editors and the views' mouse callbacks.
func New(app *tview.Application, st *model.State, v *view.View) *Controller {
	c := &Controller{St: st, V: v, App: app, bindings: Bindings()}
	c.Quit = app.Stop
	app.SetInputCapture(c.handle)
	app.SetMouseCapture(c.mouse)
	v.SetHelp(HelpText(c.bindings))
	v.Filter.SetDoneFunc(c.filterDone)
	v.Prompt.SetDoneFunc(c.promptDone)
	return c
}

// Tick brings the state up to date with the index (for at most budget,
// 0 for no limit) and re-renders when something changed. The application
// calls it from its event loop a few times a second, and draws the screen
// again only when it re-rendered: a key's action was drawn already. It
// reports whether work remains (indexing, filtering or a search under
// way), and whether it re-rendered.
func (c *Controller) Tick(budget time.Duration) (busy, rendered bool) {
	var deadline time.Time
	if budget > 0 {
		deadline = time.Now().Add(budget)
	}
	before, sel, msg := c.St.List.Len(), c.St.List.SelectedRecord(), c.St.Message
	done := c.St.Sync(deadline)
	v := c.St.X.Version()
	if v != c.version || before != c.St.List.Len() || !done || sel != c.St.List.SelectedRecord() || msg != c.St.Message {
		c.version = v
		c.V.Render()
		rendered = true
	}
	return !done, rendered
}

// context returns the binding context of the focused pane or screen.
func (c *Controller) context() Context {
	if c.St.Help {
		return HelpScreen
	}
	switch c.St.Screen {
	case model.ScreenConns:
		return Conns
	case model.ScreenFindings:
		return Findings
	case model.ScreenLadder:
		return Ladder
	case model.ScreenStats:
		return Stats
	}
	switch c.St.Focus {
	case model.FocusTree:
		return Tree
	case model.FocusHex:
		return Hex
	}
	return List
}

func (c *Controller) handle(ev *tcell.EventKey) *tcell.EventKey {
	c.Handled.Add(1)
	if ev.Key() == tcell.KeyCtrlC {
		c.Quit()
		return nil
	}
	if c.V.Editing == view.EditSearch {
		key := Key{K: ev.Key(), M: ev.Modifiers() & tcell.ModAlt}
		for _, b := range c.bindings {
			if b.Context == SearchPrompt && b.Do != nil && slices.Contains(b.Keys, key) {
				b.Do(c)
				c.V.Render()
				return nil
			}
		}
	}
	if c.V.Editing != view.EditNone {
		return ev // the line editor's own keys; its done func ends it
	}
	if c.St.Help {
		if ev.Key() == tcell.KeyEscape || (ev.Key() == tcell.KeyRune && (ev.Rune() == '?' || ev.Rune() == 'q')) {
			c.St.Help = false
			c.V.Render()
			return nil
		}
	}
	key := Key{K: ev.Key(), M: ev.Modifiers() & tcell.ModAlt}
	if key.K == tcell.KeyRune {
		key.R = ev.Rune()
	}
	ctx := c.context()
	for _, b := range c.bindings {
		// While the help is up, only its own keys (and the ones that
		// close it, above) act.
		if b.Context != ctx && (b.Context != Global || ctx == HelpScreen) {
			continue
		}
		for _, bk := range b.Keys {
			if bk == key {
				c.St.Message = ""
				b.Do(c)
				c.V.Render()
				return nil
			}
		}
	}
	if ctx == Hex {
		return ev // the TextView scrolls itself
	}
	return nil
}

// mouse handles clicks itself, so that they act on the model like keys:
// a click selects a row of a table or a node of the tree and focuses its
// pane, a double click acts as Enter. The wheel is left to tview (it
// scrolls).
func (c *Controller) mouse(ev *tcell.EventMouse, a tview.MouseAction) (*tcell.EventMouse, tview.MouseAction) {
	c.Handled.Add(1)
	if a == tview.MouseScrollUp || a == tview.MouseScrollDown {
		x, y := ev.Position()
		if c.St.Screen == model.ScreenMain && c.V.List.InRect(x, y) {
			d := 3
			if a == tview.MouseScrollUp {
				d = -3
			}
			c.St.List.Scroll(d)
			c.V.Render()
			return nil, a
		}
		return ev, a
	}
	if a != tview.MouseLeftClick && a != tview.MouseLeftDoubleClick {
		if a == tview.MouseLeftDown {
			return nil, a // focus follows our clicks, not tview's
		}
		return ev, a // (a nil event on MouseLeftUp would cancel the click)
	}
	defer c.Clicks.Add(1)
	if c.V.Editing != view.EditNone || c.St.Help {
		return ev, a
	}
	x, y := ev.Position()
	double := a == tview.MouseLeftDoubleClick
	st := c.St
	switch {
	case st.Screen == model.ScreenStats:
		return nil, a // text: nothing to select
	case st.Screen != model.ScreenMain:
		t := c.V.Table()
		if !t.InRect(x, y) {
			return nil, a
		}
		if row, _ := t.CellAt(x, y); row >= 1 {
			c.moveTable(row-1, true)
			if double {
				c.enter()
			}
		}
	case c.V.List.InRect(x, y):
		st.Focus = model.FocusList
		if row, _ := c.V.List.CellAt(x, y); row >= 1 {
			st.SelectRow(row - 1)
		}
	case c.V.Tree.InRect(x, y):
		st.Focus = model.FocusTree
		_, ty, _, _ := c.V.Tree.GetInnerRect()
		vis := st.Tree.Visible()
		if i := y - ty + c.V.Tree.GetScrollOffset(); i >= 0 && i < len(vis) {
			st.TreeSelect(vis[i].Node.Path)
			if double {
				st.TreeToggle()
			}
		}
	case c.V.Hex.InRect(x, y):
		st.Focus = model.FocusHex
	default:
		return ev, a
	}
	c.V.Render()
	return nil, a
}

// enter performs the Enter action of the current screen.
func (c *Controller) enter() {
	switch c.St.Screen {
	case model.ScreenConns:
		c.St.ChooseConn()
	case model.ScreenFindings:
		c.St.JumpToFinding()
	case model.ScreenLadder:
		c.St.JumpFromLadder()
	}
}

// Keys returns the binding table.
func (c *Controller) Keys() []Binding { return c.bindings }

func (c *Controller) page() int { return c.V.PageRows() }

// moveTable moves the selection of the current table screen.
func (c *Controller) moveTable(delta int, abs bool) {
	st := c.St
	move := func(sel *int, n int) {
		if abs {
			*sel = delta
		} else {
			*sel += delta
		}
		*sel = min(max(*sel, 0), max(n-1, 0))
	}
	switch st.Screen {
	case model.ScreenConns:
		move(&st.ConnSel, len(st.X.Conns()))
	case model.ScreenFindings:
		move(&st.FindSel, st.X.NumFindings())
	case model.ScreenLadder:
		if st.Ladder != nil {
			sel := st.Ladder.Selected()
			move(&sel, st.Ladder.Len())
			st.Ladder.Select(sel)
		}
	}
}

const last = 1 << 30

// Bindings returns iwarptui's key bindings.
func Bindings() []Binding {
	up, down := []Key{k(tcell.KeyUp), r('k')}, []Key{k(tcell.KeyDown), r('j')}
	// tcell reports both Backspace (^H) and Backspace2 (DEL, 0x7f) as
	// KeyBackspace; KeyBackspace2 and KeyCtrlH are kept for screens and
	// protocols that report them as such.
	backspace := []Key{k(tcell.KeyBackspace), k(tcell.KeyBackspace2), k(tcell.KeyCtrlH)}
	return []Binding{
		{Global, []Key{r('?')}, "show this help", func(c *Controller) { c.St.Help = true }},
		{Global, []Key{r('q'), k(tcell.KeyCtrlC)}, "quit", func(c *Controller) { c.Quit() }},
		{Global, []Key{k(tcell.KeyEscape)}, "back to the list; stop a search; clear the message", func(c *Controller) {
			if c.St.Screen == model.ScreenMain {
				c.St.Focus = model.FocusList // from the tree or the octets
			}
			c.St.ShowScreen(model.ScreenMain)
			c.St.CancelSearch()
		}},
		{Global, []Key{r('/')}, "display filter (Enter applies, Esc cancels)", func(c *Controller) {
			c.St.ShowScreen(model.ScreenMain)
			c.V.Editing = view.EditFilter
		}},
		{Global, []Key{r('g')}, "go to a frame number", func(c *Controller) { c.prompt(view.EditGoto, "Go to frame: ") }},
		{Global, []Key{r('s'), k(tcell.KeyCtrlF)}, "find in the packet list, details or bytes", func(c *Controller) {
			c.prompt(view.EditSearch, searchLabel(c.St.Scope))
		}},
		{Global, []Key{r('n')}, "next search match", func(c *Controller) { c.St.ShowScreen(model.ScreenMain); c.St.SearchNext(true) }},
		{Global, []Key{r('N')}, "previous search match", func(c *Controller) { c.St.ShowScreen(model.ScreenMain); c.St.SearchNext(false) }},
		{Global, []Key{r('c')}, "connections (-z conn)", func(c *Controller) { c.St.ShowScreen(model.ScreenConns) }},
		{Global, []Key{r('e')}, "findings (expert info)", func(c *Controller) { c.St.ShowScreen(model.ScreenFindings) }},
		{Global, []Key{r('f')}, "ladder of the connection's RDMA messages", func(c *Controller) { c.St.FollowSelected() }},
		{Global, []Key{r('x')}, "show all connections again", func(c *Controller) { c.St.ClearConn() }},
		{Global, []Key{r('['), alt(tcell.KeyLeft)}, "back to where the last jump left from", func(c *Controller) { c.St.Back() }},
		{Global, []Key{r(']'), alt(tcell.KeyRight)}, "forward again", func(c *Controller) { c.St.Forward() }},
		{Global, []Key{r('z')}, "statistics: -z ops, latency, findings (z again: next)", func(c *Controller) {
			if c.St.Screen == model.ScreenStats {
				c.St.ShowStats(c.St.StatTab.Next())
			} else {
				c.St.ShowStats(c.St.StatTab)
			}
		}},
		{Global, []Key{k(tcell.KeyTab)}, "next pane (list, tree, octets)", func(c *Controller) {
			if c.St.Screen == model.ScreenMain {
				c.St.CycleFocus(false)
			}
		}},
		{Global, []Key{k(tcell.KeyBacktab)}, "previous pane", func(c *Controller) {
			if c.St.Screen == model.ScreenMain {
				c.St.CycleFocus(true)
			}
		}},

		{List, up, "previous record", func(c *Controller) { c.St.MoveList(-1) }},
		{List, down, "next record", func(c *Controller) { c.St.MoveList(1) }},
		{List, []Key{k(tcell.KeyPgUp)}, "page up", func(c *Controller) { c.St.MoveList(-c.page()) }},
		{List, []Key{k(tcell.KeyPgDn), r(' ')}, "page down", func(c *Controller) { c.St.MoveList(c.page()) }},
		{List, []Key{k(tcell.KeyHome), r('<')}, "first record", func(c *Controller) { c.St.ListHome() }},
		{List, []Key{k(tcell.KeyEnd), r('>'), r('G')}, "last record", func(c *Controller) { c.St.ListEnd() }},
		{List, []Key{k(tcell.KeyEnter), k(tcell.KeyRight), r('l')}, "into the detail tree", func(c *Controller) { c.St.Focus = model.FocusTree }},

		{Tree, up, "previous field", func(c *Controller) { c.St.TreeMove(-1) }},
		{Tree, down, "next field (its octets light up)", func(c *Controller) { c.St.TreeMove(1) }},
		{Tree, []Key{k(tcell.KeyPgUp)}, "page up", func(c *Controller) { c.St.TreeMove(-10) }},
		{Tree, []Key{k(tcell.KeyPgDn)}, "page down", func(c *Controller) { c.St.TreeMove(10) }},
		{Tree, []Key{k(tcell.KeyHome), r('<')}, "first field", func(c *Controller) { c.St.TreeMove(-1 << 20) }},
		{Tree, []Key{k(tcell.KeyEnd), r('>')}, "last field", func(c *Controller) { c.St.TreeMove(1 << 20) }},
		{Tree, []Key{k(tcell.KeyRight), r('l'), r('+')}, "expand", func(c *Controller) { c.St.TreeExpand() }},
		{Tree, []Key{k(tcell.KeyLeft), r('h'), r('-')}, "collapse, or go to the parent", func(c *Controller) { c.St.TreeCollapse() }},
		{Tree, []Key{k(tcell.KeyEnter), r(' ')}, "expand or collapse; on a frame number, go there", func(c *Controller) {
			if !c.St.FollowRef() {
				c.St.TreeToggle()
			}
		}},
		{Tree, []Key{r('*')}, "expand everything", func(c *Controller) { c.St.TreeExpandAll() }},
		{Tree, backspace, "back to the list", func(c *Controller) { c.St.Focus = model.FocusList }},

		{Hex, backspace, "back to the list (arrows scroll)", func(c *Controller) { c.St.Focus = model.FocusList }},

		{SearchPrompt, []Key{k(tcell.KeyTab)}, "find in: packet list, details, bytes (hex)", func(c *Controller) {
			c.St.Scope = c.St.Scope.Next()
			c.V.Prompt.SetLabel(searchLabel(c.St.Scope))
		}},
		{SearchPrompt, []Key{k(tcell.KeyEnter)}, "find (then n: next match, N: previous)", nil},

		{HelpScreen, []Key{k(tcell.KeyUp), r('k')}, "scroll up", func(c *Controller) { c.V.ScrollHelp(-1) }},
		{HelpScreen, []Key{k(tcell.KeyDown), r('j')}, "scroll down", func(c *Controller) { c.V.ScrollHelp(1) }},
		{HelpScreen, []Key{k(tcell.KeyPgUp)}, "page up", func(c *Controller) { c.V.ScrollHelp(-c.V.HelpRows()) }},
		{HelpScreen, []Key{k(tcell.KeyPgDn), r(' ')}, "page down", func(c *Controller) { c.V.ScrollHelp(c.V.HelpRows()) }},
		{HelpScreen, []Key{k(tcell.KeyHome), r('<')}, "top", func(c *Controller) { c.V.ScrollHelp(-last) }},
		{HelpScreen, []Key{k(tcell.KeyEnd), r('>'), r('G')}, "bottom", func(c *Controller) { c.V.ScrollHelp(last) }},

		{Stats, []Key{r('1')}, "RDMAP opcodes per connection and direction (-z ops)", func(c *Controller) { c.St.ShowStats(model.StatOps) }},
		{Stats, []Key{r('2')}, "RDMA Read latency percentiles (-z latency)", func(c *Controller) { c.St.ShowStats(model.StatLatency) }},
		{Stats, []Key{r('3')}, "findings by severity and code (-z findings)", func(c *Controller) { c.St.ShowStats(model.StatFindings) }},
		{Stats, up, "scroll up", func(c *Controller) { c.V.ScrollStats(-1, 0) }},
		{Stats, down, "scroll down", func(c *Controller) { c.V.ScrollStats(1, 0) }},
		{Stats, []Key{k(tcell.KeyLeft), r('h')}, "scroll left", func(c *Controller) { c.V.ScrollStats(0, -8) }},
		{Stats, []Key{k(tcell.KeyRight), r('l')}, "scroll right (wide tables)", func(c *Controller) { c.V.ScrollStats(0, 8) }},
		{Stats, []Key{k(tcell.KeyPgUp)}, "page up", func(c *Controller) { c.V.ScrollStats(-c.V.StatsRows(), 0) }},
		{Stats, []Key{k(tcell.KeyPgDn), r(' ')}, "page down", func(c *Controller) { c.V.ScrollStats(c.V.StatsRows(), 0) }},
		{Stats, []Key{k(tcell.KeyHome), r('<')}, "top", func(c *Controller) { c.V.ScrollStats(-last, -last) }},
		{Stats, []Key{k(tcell.KeyEnd), r('>'), r('G')}, "bottom", func(c *Controller) { c.V.ScrollStats(last, 0) }},

		{Conns, []Key{k(tcell.KeyEnter)}, "show only this connection's records", func(c *Controller) { c.St.ChooseConn() }},
		{Conns, []Key{k(tcell.KeyLeft), r('h')}, "scroll left (also in Findings)", func(c *Controller) { c.V.ScrollTable(-1) }},
		{Conns, []Key{k(tcell.KeyRight), r('l')}, "scroll right (wide columns; also in Findings)", func(c *Controller) { c.V.ScrollTable(1) }},
		{Findings, []Key{k(tcell.KeyLeft), r('h')}, "", func(c *Controller) { c.V.ScrollTable(-1) }},
		{Findings, []Key{k(tcell.KeyRight), r('l')}, "", func(c *Controller) { c.V.ScrollTable(1) }},
		{Findings, []Key{k(tcell.KeyEnter)}, "go to the finding's frame", func(c *Controller) { c.St.JumpToFinding() }},
		{Ladder, []Key{k(tcell.KeyEnter)}, "go to the message's frame", func(c *Controller) { c.St.JumpFromLadder() }},
		{Conns, up, "move up (also in Findings and Ladder)", func(c *Controller) { c.moveTable(-1, false) }},
		{Conns, down, "move down (also PgUp, PgDn, Home, End)", func(c *Controller) { c.moveTable(1, false) }},
		{Findings, up, "", func(c *Controller) { c.moveTable(-1, false) }},
		{Findings, down, "", func(c *Controller) { c.moveTable(1, false) }},
		{Ladder, up, "", func(c *Controller) { c.moveTable(-1, false) }},
		{Ladder, down, "", func(c *Controller) { c.moveTable(1, false) }},
		{Conns, []Key{k(tcell.KeyPgUp)}, "", func(c *Controller) { c.moveTable(-c.page(), false) }},
		{Findings, []Key{k(tcell.KeyPgUp)}, "", func(c *Controller) { c.moveTable(-c.page(), false) }},
		{Ladder, []Key{k(tcell.KeyPgUp)}, "", func(c *Controller) { c.moveTable(-c.page(), false) }},
		{Conns, []Key{k(tcell.KeyPgDn), r(' ')}, "", func(c *Controller) { c.moveTable(c.page(), false) }},
		{Findings, []Key{k(tcell.KeyPgDn), r(' ')}, "", func(c *Controller) { c.moveTable(c.page(), false) }},
		{Ladder, []Key{k(tcell.KeyPgDn), r(' ')}, "", func(c *Controller) { c.moveTable(c.page(), false) }},
		{Conns, []Key{k(tcell.KeyHome), r('<')}, "", func(c *Controller) { c.moveTable(0, true) }},
		{Findings, []Key{k(tcell.KeyHome), r('<')}, "", func(c *Controller) { c.moveTable(0, true) }},
		{Ladder, []Key{k(tcell.KeyHome), r('<')}, "", func(c *Controller) { c.moveTable(0, true) }},
		{Conns, []Key{k(tcell.KeyEnd), r('>'), r('G')}, "", func(c *Controller) { c.moveTable(last, true) }},
		{Findings, []Key{k(tcell.KeyEnd), r('>'), r('G')}, "", func(c *Controller) { c.moveTable(last, true) }},
		{Ladder, []Key{k(tcell.KeyEnd), r('>'), r('G')}, "", func(c *Controller) { c.moveTable(last, true) }},
	}
}

// HelpText renders the bindings for the help screen, grouped by context,
// in one column (a key column and the help), so that it reads the same
// at any width; bindings without help text are left out. The "?" and
// Esc that close the help are its first line.
func HelpText(bs []Binding) string {
	var b strings.Builder
	b.WriteString("[gray]? Esc q: close this help; ↑ ↓ PgUp PgDn Home End scroll it.[-]\n\n")
	for _, ctx := range []Context{Global, List, Tree, Hex, SearchPrompt, Conns, Findings, Ladder, Stats, HelpScreen} {
		head := false
		for _, bd := range bs {
			if bd.Context != ctx || bd.Help == "" {
				continue
			}
			if !head {
				b.WriteString("[yellow::b]" + contextNames[ctx] + "[-::-]\n")
				head = true
			}
			var names []string
			for _, kk := range bd.Keys {
				if n := kk.Name(); !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
			ks := strings.Join(names, " ")
			b.WriteString(" [white]" + tview.Escape(ks) + "[-]" + strings.Repeat(" ", max(keyWidth-utf8.RuneCountInString(ks), 1)) + tview.Escape(bd.Help) + "\n")
		}
		if head {
			b.WriteString("\n")
		}
	}
	b.WriteString("[gray]Mouse: click a row or a field to select it, double-click to open; the wheel scrolls.[-]\n")
	return b.String()
}

// keyWidth is the width of the help screen's key column.
const keyWidth = 16

// searchLabel is the search prompt's label for scope: where it looks, as
// Wireshark's Find bar names it.
func searchLabel(scope model.SearchScope) string {
	l := "Find in " + scope.String()
	if scope == model.ScopeBytes {
		l += " (hex)"
	}
	return l + " [Tab: change]: "
}

func (c *Controller) prompt(mode, label string) {
	c.St.ShowScreen(model.ScreenMain)
	c.V.Editing = mode
	c.V.Prompt.SetLabel(label).SetText("")
}

func (c *Controller) filterDone(key tcell.Key) {
	switch key {
	case tcell.KeyEnter:
		if c.St.ApplyFilter(c.V.Filter.GetText()) {
			c.V.Editing = view.EditNone
			c.St.Focus = model.FocusList
			c.St.Sync(time.Now().Add(50 * time.Millisecond))
		}
	case tcell.KeyEscape:
		c.V.Editing = view.EditNone
		c.St.FilterErr = nil
		c.V.Filter.SetText(c.St.List.Filter())
	}
	c.V.Render()
}

func (c *Controller) promptDone(key tcell.Key) {
	mode := c.V.Editing
	c.V.Editing = view.EditNone
	if key == tcell.KeyEnter {
		text := strings.TrimSpace(c.V.Prompt.GetText())
		switch mode {
		case view.EditGoto:
			n, err := strconv.ParseUint(text, 10, 64)
			if err != nil || n == 0 {
				c.St.Message = "not a frame number: " + model.Safe(text)
			} else {
				c.St.GotoFrame(n)
			}
		case view.EditSearch:
			if text != "" {
				c.St.Search(text, true)
			}
		}
		c.St.Focus = model.FocusList
	}
	c.V.Render()
}

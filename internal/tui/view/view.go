package view

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/tui/model"
)

// Input modes: what the line editor at the top or bottom is for.
const (
	EditNone   = ""
	EditFilter = "filter"
	EditGoto   = "goto"
	EditSearch = "search"
)

// hexWidth is the hex pane's width for per octets a line: a 4-digit
// offset, the octets (16 in two groups of 8), their ASCII, and the border.
func hexWidth(per int) int {
	w := 4 + 2 + per*3 + 1 + per + 2
	if per == 16 {
		w++ // the gap between the groups
	}
	return w
}

// Layout limits: below narrowWidth columns the list narrows its columns
// (and below noTimeWidth drops Time, which the tree still shows as ts);
// the octets pane takes 16, 8 or 4 octets a line, the most that leave the
// detail tree minTree columns. noTimeWidth is for the default time of
// day; a wider time format (-t ud, ad, e) needs as many more columns.
const (
	narrowWidth = 120
	noTimeWidth = 100
	minTree     = 30
)

// listLayout returns the list's columns (indexes into model.Columns) and
// their widths (0: the rest) for a screen w columns wide and a Time
// column tw wide.
func listLayout(w, tw int) (cols, widths []int) {
	switch {
	case w == 0 || w >= narrowWidth+max(tw-15, 0):
		return []int{0, 1, 2, 3, 4, 5}, []int{7, tw, 21, 21, 9, 0}
	case w >= noTimeWidth+max(tw-15, 0):
		return []int{0, 1, 2, 3, 4, 5}, []int{6, tw, 17, 17, 9, 0}
	}
	return []int{0, 2, 3, 4, 5}, []int{6, 15, 15, 9, 0}
}

// hexPerLine returns how many octets a line the octets pane shows on a
// screen w columns wide.
func hexPerLine(w int) int {
	for _, per := range []int{16, 8} {
		if w == 0 || w-hexWidth(per) >= minTree {
			return per
		}
	}
	return 4
}

// View is the set of primitives iwarptui draws and the model state they
// show.
type View struct {
	St  *model.State
	App *tview.Application

	Root      *tview.Pages // "app", and "help" over it
	frame     *tview.Flex
	Content   *tview.Pages // "main", "conns", "findings", "ladder"
	main      *tview.Flex
	Title     *tview.TextView
	Prog      *tview.TextView
	Filter    *tview.InputField
	FilterMsg *tview.TextView
	List      *tview.Table
	detail    *tview.Flex
	Tree      *tview.TreeView
	Desc      *tview.TextView
	Hex       *tview.TextView
	Bottom    *tview.Pages // "status" or "prompt"
	Status    *tview.TextView
	Prompt    *tview.InputField
	Conns     *tview.Table
	Findings  *tview.Table
	FindText  *tview.TextView // the selected finding's whole text, under the table
	findPage  *tview.Flex     // the findings table over FindText
	Ladder    *tview.Table
	Stats     *tview.TextView // the statistics screen
	Help      *tview.TextView

	// Editing is the line editor in use (EditFilter, EditGoto,
	// EditSearch) or EditNone.
	Editing string

	top        *tview.Flex // the title and the progress bar
	width      int         // the screen's width the layout was made for
	timeWidth  int         // the Time column's width the layout was made for
	cols       []int       // the list's columns (indexes into model.Columns)
	colWidths  []int
	hexPer     int // octets a line in the octets pane
	progWidth  int
	hexKey     string
	filterRows int
	conns      []model.ConnInfo
	statsKey   string    // what the statistics screen shows
	statsAt    time.Time // when it was written

	// The ladder's layout (ladderLayout).
	ladderFrame, ladderArrow int
	ladderTime               bool
}

// New builds the primitives for st on app.
func New(app *tview.Application, st *model.State) *View {
	v := &View{St: st, App: app}
	v.Title = tview.NewTextView().SetDynamicColors(true)
	v.Prog = tview.NewTextView().SetDynamicColors(true).SetTextAlign(tview.AlignRight)
	v.top = tview.NewFlex().AddItem(v.Title, 0, 1, false).AddItem(v.Prog, 0, 0, false)

	v.Filter = tview.NewInputField().SetLabel("Filter: ").SetPlaceholder("display filter (/ to edit), e.g. rdmap.opcode == 1 || mpa.crc_status == \"bad\"")
	v.Filter.SetFieldBackgroundColor(tcell.ColorBlack).SetLabelColor(tcell.ColorSilver).
		SetPlaceholderStyle(tcell.StyleDefault.Foreground(tcell.ColorGray).Background(tcell.ColorBlack)).SetFieldTextColor(tcell.ColorWhite)
	v.FilterMsg = tview.NewTextView().SetDynamicColors(true)

	v.List = tview.NewTable().SetFixed(1, 0).SetSelectable(true, false).SetContent(&listContent{v: v})
	v.List.SetDrawFunc(v.placeList)

	v.Tree = tview.NewTreeView().SetTopLevel(1).SetGraphicsColor(tcell.ColorGray)
	v.Tree.SetBorder(true).SetTitle(" Detail ").SetTitleAlign(tview.AlignLeft)
	v.Desc = tview.NewTextView().SetDynamicColors(true)
	v.Hex = tview.NewTextView().SetDynamicColors(true).SetWrap(false)
	v.Hex.SetBorder(true).SetTitle(" Octets ").SetTitleAlign(tview.AlignLeft)
	left := tview.NewFlex().SetDirection(tview.FlexRow).AddItem(v.Tree, 0, 1, false).AddItem(v.Desc, 1, 0, false)
	v.detail = tview.NewFlex().AddItem(left, 0, 1, false).AddItem(v.Hex, hexWidth(16), 0, false)
	v.timeWidth = model.TimeWidth(st.List.TimeFormat())
	v.cols, v.colWidths = listLayout(0, v.timeWidth)
	v.ladderFrame, v.ladderTime, v.ladderArrow = ladderLayout(0, v.timeWidth)
	v.hexPer = 16
	if app != nil {
		app.SetBeforeDrawFunc(func(scr tcell.Screen) bool {
			w, _ := scr.Size()
			v.fit(w)
			return false
		})
	}

	v.main = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(v.Filter, 1, 0, false).
		AddItem(v.FilterMsg, 0, 0, false).
		AddItem(v.List, 0, 5, true).
		AddItem(v.detail, 0, 6, false)

	v.Conns = tview.NewTable().SetFixed(1, 0).SetSelectable(true, false).SetContent(&connContent{v: v})
	v.Findings = tview.NewTable().SetFixed(1, 0).SetSelectable(true, false).SetContent(&findingContent{v: v})
	v.Ladder = tview.NewTable().SetFixed(1, 0).SetSelectable(true, false).SetContent(&ladderContent{v: v})
	v.FindText = tview.NewTextView().SetWrap(true).SetWordWrap(true)
	boxed := func(t *tview.Table, title string) *tview.Table {
		t.SetBorder(true).SetTitle(title).SetTitleAlign(tview.AlignLeft)
		return t
	}
	v.findPage = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(boxed(v.Findings, " Findings (Enter: go to the frame, ←/→: scroll, Esc: back) "), 0, 1, true).
		AddItem(v.FindText, 1, 0, false)
	v.Content = tview.NewPages().
		AddPage("main", v.main, true, true).
		AddPage("conns", boxed(v.Conns, " Connections (Enter: show only this one, f: follow, ←/→: scroll, Esc: back) "), true, false).
		AddPage("findings", v.findPage, true, false).
		AddPage("ladder", boxed(v.Ladder, " Ladder "), true, false)
	v.Stats = tview.NewTextView().SetDynamicColors(true).SetWrap(false)
	v.Stats.SetBorder(true).SetTitleAlign(tview.AlignLeft)
	v.Content.AddPage("stats", v.Stats, true, false)

	v.Status = tview.NewTextView().SetDynamicColors(true)
	v.Prompt = tview.NewInputField().SetFieldBackgroundColor(tcell.ColorBlack).SetLabelColor(tcell.ColorYellow)
	v.Bottom = tview.NewPages().AddPage("status", v.Status, true, true).AddPage("prompt", v.Prompt, true, false)

	v.frame = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(v.top, 1, 0, false).
		AddItem(v.Content, 0, 1, true).
		AddItem(v.Bottom, 1, 0, false)

	v.Help = tview.NewTextView().SetDynamicColors(true)
	v.Help.SetBorder(true).SetTitle(" iwarptui keys (? or Esc to close) ").SetTitleAlign(tview.AlignLeft)
	helpBox := tview.NewFlex().
		AddItem(nil, 0, 1, false).
		AddItem(tview.NewFlex().SetDirection(tview.FlexRow).
			AddItem(nil, 0, 1, false).AddItem(v.Help, 0, 30, true).AddItem(nil, 0, 1, false), 0, 30, true).
		AddItem(nil, 0, 1, false)
	v.Root = tview.NewPages().AddPage("app", v.frame, true, true).AddPage("help", helpBox, true, false)
	return v
}

// fit adapts the layout to a screen w columns wide (see listLayout and
// hexPerLine), so that at 80 columns the Info column and the detail tree
// keep a usable width.
func (v *View) fit(w int) {
	tw := model.TimeWidth(v.St.List.TimeFormat())
	if w == v.width && tw == v.timeWidth {
		return
	}
	v.width, v.timeWidth = w, tw
	v.cols, v.colWidths = listLayout(w, tw)
	v.ladderFrame, v.ladderTime, v.ladderArrow = ladderLayout(w, tw)
	if per := hexPerLine(w); per != v.hexPer {
		v.hexPer = per
		v.detail.ResizeItem(v.Hex, hexWidth(per), 0)
		v.hexKey = "" // rebuild its lines
		v.renderHex()
	}
	v.renderProgress()
	v.renderTitles()
}

// SetHelp sets the text of the help screen.
func (v *View) SetHelp(text string) { v.Help.SetText(text) }

// ScrollHelp scrolls the help screen by delta lines (the text view stops
// at its last line when it is drawn).
func (v *View) ScrollHelp(delta int) {
	row, _ := v.Help.GetScrollOffset()
	switch {
	case delta >= 1<<20:
		v.Help.ScrollToEnd()
	case row+delta <= 0:
		v.Help.ScrollToBeginning()
	default:
		v.Help.ScrollTo(row+delta, 0)
	}
}

// statsTitles are the statistics screen's titles, by table.
var statsTitles = [...]string{
	model.StatOps:      "RDMAP opcodes per direction",
	model.StatLatency:  "RDMA Read latency",
	model.StatFindings: "Findings by code",
}

// statsEvery is how often a statistics table is written again while the
// capture is being indexed (a table of many connections takes a while).
const statsEvery = 500 * time.Millisecond

// renderStats writes the statistics table the state names, again when the
// records counted changed (at most every statsEvery while indexing), and
// keeps the place scrolled to.
func (v *View) renderStats() {
	st := v.St
	tab := st.StatTab
	v.Stats.SetTitle(" Statistics -z " + tab.String() + ": " + statsTitles[tab] + " (1 2 3 z: tables, Esc: back) ")
	n, done := 0, st.X.Progress().Done
	if st.Stats != nil {
		n = st.Stats.Records()
	}
	key := tab.String() + "/" + strconv.Itoa(n) + "/" + strconv.FormatBool(done)
	if key == v.statsKey || !done && strings.HasPrefix(v.statsKey, tab.String()+"/") && time.Since(v.statsAt) < statsEvery {
		return
	}
	sameTab := strings.HasPrefix(v.statsKey, tab.String()+"/")
	v.statsKey, v.statsAt = key, time.Now()
	var b strings.Builder
	b.WriteString("[gray]" + tview.Escape(st.StatsNote()) + "[-]\n\n")
	if st.Stats == nil {
		b.WriteString("no statistics kept\n")
	} else if text, err := st.Stats.Text(tab); err != nil {
		b.WriteString("[red]" + tview.Escape(err.Error()) + "[-]\n")
	} else {
		b.WriteString(tview.Escape(text))
	}
	row, col := v.Stats.GetScrollOffset()
	v.Stats.SetText(b.String())
	if sameTab {
		v.Stats.ScrollTo(row, col)
	} else {
		v.Stats.ScrollToBeginning()
	}
}

// ScrollStats scrolls the statistics screen by dy lines and dx columns
// (at least 1<<20: to the end).
func (v *View) ScrollStats(dy, dx int) {
	row, col := v.Stats.GetScrollOffset()
	switch {
	case dy >= 1<<20:
		v.Stats.ScrollToEnd()
		return
	case row+dy <= 0 && dy != 0:
		row = 0
	default:
		row += dy
	}
	v.Stats.ScrollTo(row, max(col+dx, 0))
}

// StatsRows returns how many lines of the statistics screen are on
// screen, for PgUp and PgDn.
func (v *View) StatsRows() int {
	_, _, _, h := v.Stats.GetInnerRect()
	return max(h-1, 1)
}

// HelpRows returns how many lines of the help are on screen, for PgUp
// and PgDn.
func (v *View) HelpRows() int {
	_, _, _, h := v.Help.GetInnerRect()
	return max(h-1, 1)
}

// Table returns the table of the current screen (the record list on the
// main screen).
func (v *View) Table() *tview.Table {
	switch v.St.Screen {
	case model.ScreenConns:
		return v.Conns
	case model.ScreenFindings:
		return v.Findings
	case model.ScreenLadder:
		return v.Ladder
	}
	return v.List
}

// ScrollTable scrolls the current screen's table (Connections, Findings)
// by dx columns, for columns past the screen's right edge.
func (v *View) ScrollTable(dx int) {
	t := v.Table()
	if t == v.List {
		return
	}
	row, col := t.GetOffset()
	t.SetOffset(row, min(max(col+dx, 0), max(t.GetColumnCount()-1, 0)))
}

// renderFindText shows the selected finding whole under the findings
// table, whose Message column the screen's width cuts: "frame N, conn C:
// severity code: message [ref]".
func (v *View) renderFindText() {
	x, i := v.St.X, v.St.FindSel
	text := ""
	if i >= 0 && i < x.NumFindings() {
		ref := x.Finding(i)
		c := model.FindingRow(ref, x.Record(ref.Rec))
		text = "frame " + c[0] + ", conn " + c[3] + ": " + c[1] + " " + c[2] + ": " + c[4]
	}
	v.FindText.SetText(tview.Escape(text))
	// As many lines as the text takes wrapped (words wrap a little
	// shorter: a line's worth more), at most a third of the screen.
	w := max(v.width, 20)
	lines := (utf8.RuneCountInString(text)+w-1)/w + 1
	sh := 24
	if _, _, _, h := v.findPage.GetRect(); h > 0 {
		sh = h
	}
	v.findPage.ResizeItem(v.FindText, min(lines, max(sh/3, 2)), 0)
}

// PageRows returns how many rows of the current screen's table are on
// screen, for PgUp and PgDn.
func (v *View) PageRows() int {
	_, _, _, h := v.Table().GetInnerRect()
	return max(h-2, 1)
}

// Render copies the state into the primitives.
func (v *View) Render() {
	st := v.St
	v.renderProgress()
	v.renderTitles()
	v.renderFilter()
	v.renderList()
	v.renderTree()
	v.renderHex()
	v.Status.SetText(tview.Escape(st.StatusLine()))

	page := "main"
	switch st.Screen {
	case model.ScreenConns:
		page = "conns"
		v.conns = st.X.Conns()
		v.Conns.Select(st.ConnSel+1, 0)
	case model.ScreenFindings:
		page = "findings"
		v.Findings.Select(st.FindSel+1, 0)
		v.renderFindText()
	case model.ScreenStats:
		page = "stats"
		v.renderStats()
	case model.ScreenLadder:
		page = "ladder"
		if st.Ladder != nil {
			v.Ladder.Select(st.Ladder.Selected()+1, 0)
		}
	}
	if name, _ := v.Content.GetFrontPage(); name != page {
		v.Content.SwitchToPage(page)
	}
	if st.Help {
		v.Root.ShowPage("help")
	} else {
		v.Root.HidePage("help")
	}
	if v.Editing == EditGoto || v.Editing == EditSearch {
		v.Bottom.SwitchToPage("prompt")
	} else {
		v.Bottom.SwitchToPage("status")
	}
	v.focus()
}

// focus gives the keyboard to the primitive the state names.
func (v *View) focus() {
	if v.App == nil {
		return
	}
	var p tview.Primitive
	switch {
	case v.St.Help:
		p = v.Help
	case v.Editing == EditFilter:
		p = v.Filter
	case v.Editing != EditNone:
		p = v.Prompt
	case v.St.Screen == model.ScreenConns:
		p = v.Conns
	case v.St.Screen == model.ScreenFindings:
		p = v.Findings
	case v.St.Screen == model.ScreenLadder:
		p = v.Ladder
	case v.St.Screen == model.ScreenStats:
		p = v.Stats
	case v.St.Focus == model.FocusTree:
		p = v.Tree
	case v.St.Focus == model.FocusHex:
		p = v.Hex
	default:
		p = v.List
	}
	if v.App.GetFocus() != p {
		v.App.SetFocus(p)
	}
}

// renderProgress draws the progress bar, 20 cells wide (10 on a narrow
// screen), and sizes its place to it so that the percentage is never cut
// and the title keeps the rest.
func (v *View) renderProgress() {
	bar := 20
	if w := v.width; w > 0 && w < narrowWidth {
		bar = 10
	}
	text := progressBar(v.St.X.Progress(), bar)
	v.Prog.SetText(text)
	if n := tview.TaggedStringWidth(text) + 1; n != v.progWidth {
		v.progWidth = n
		v.top.ResizeItem(v.Prog, n, 0)
	}
}

// progressBar draws the indexing progress: a bar of width cells and the
// percentage; for an input of unknown size (a pipe), the frames and
// octets read so far instead.
func progressBar(p model.Progress, width int) string {
	if !p.Done && p.Total <= 0 {
		return "indexing [lime]" + strconv.FormatUint(p.Frames, 10) + " frames, " + strconv.FormatFloat(float64(p.Read)/1e6, 'f', 1, 64) + " MB read[-]"
	}
	f := p.Fraction()
	n := int(f*float64(width) + 0.5)
	label := "indexing "
	if p.Done {
		label = "indexed "
		if p.Err != nil {
			label = "[red]damaged file[-] "
		}
	}
	return label + "[lime]" + strings.Repeat("█", n) + "[gray]" + strings.Repeat("░", width-n) + "[-] " +
		strconv.Itoa(int(f*100)) + "%"
}

func (v *View) renderFilter() {
	st := v.St
	if v.Editing != EditFilter {
		text := st.List.Filter()
		if st.FilterErr != nil {
			text = st.FilterText
		}
		if v.Filter.GetText() != text {
			v.Filter.SetText(text)
		}
	}
	rows := 0
	switch {
	case st.FilterErr != nil:
		rows = 1
		col := utf8.RuneCountInString(st.FilterText[:min(max(st.FilterErr.Pos, 0), len(st.FilterText))])
		v.FilterMsg.SetText(strings.Repeat(" ", len("Filter: ")+col) + "[red]^ " + tview.Escape(st.FilterErr.Error()))
		v.Filter.SetFieldBackgroundColor(tcell.ColorMaroon)
	case st.List.Filter() != "":
		v.Filter.SetFieldBackgroundColor(tcell.ColorDarkGreen)
	default:
		v.Filter.SetFieldBackgroundColor(tcell.ColorBlack)
	}
	if rows != v.filterRows {
		v.filterRows = rows
		v.main.ResizeItem(v.FilterMsg, rows, 0)
	}
}

// placeList sets the first row the list shows, as the table is drawn: its
// height is then the one it is drawn at, a new one after a resize (the
// rectangles of the last draw, all Render sees, are the old ones).
func (v *View) placeList(_ tcell.Screen, x, y, w, h int) (int, int, int, int) {
	v.List.SetOffset(v.St.List.Window(h-1), 0)
	return x, y, w, h
}

func (v *View) renderList() {
	l := v.St.List
	// Table.Select has the next Draw scroll the selection into view: only
	// when the selection moved, so that the wheel scrolls away from it.
	// The rows shown are set as the table is drawn (placeList).
	if sel := l.Selected(); sel >= 0 {
		if r, _ := v.List.GetSelection(); r != sel+1 {
			v.List.Select(sel+1, 0)
		}
	}
	style := tcell.StyleDefault.Background(tcell.ColorWhite).Foreground(tcell.ColorBlack)
	if v.St.Focus != model.FocusList || v.St.Screen != model.ScreenMain {
		style = tcell.StyleDefault.Background(tcell.ColorGray).Foreground(tcell.ColorBlack)
	}
	v.List.SetSelectedStyle(style)
}

func (v *View) renderTree() {
	t := v.St.Tree
	root := tview.NewTreeNode("")
	var cur *tview.TreeNode
	var add func(parent *tview.TreeNode, ns []*model.Node)
	add = func(parent *tview.TreeNode, ns []*model.Node) {
		for _, n := range ns {
			mark := "  "
			if len(n.Children) > 0 {
				mark = "▸ "
				if t.IsExpanded(n) {
					mark = "▾ "
				}
			}
			tn := tview.NewTreeNode(mark + tview.Escape(n.Label)).SetReference(n.Path).SetSelectable(true)
			tn.SetExpanded(t.IsExpanded(n))
			color := tcell.ColorSilver
			if n.Path == "mpa" || n.Path == "ddp" || n.Path == "rdmap" || n.Path == "record" {
				color = tcell.ColorWhite
			}
			tn.SetColor(color)
			if c := t.Current(); c != nil && c.Path == n.Path {
				cur = tn
			}
			parent.AddChild(tn)
			add(tn, n.Children)
		}
	}
	add(root, t.Roots)
	v.Tree.SetRoot(root)
	if cur != nil {
		v.Tree.SetCurrentNode(cur)
	}
	if n := t.Current(); n != nil {
		d := "[white]" + tview.Escape(n.Path) + "[-]"
		if n.Desc != "" {
			d += " — " + tview.Escape(n.Desc)
		}
		if n.Ref != "" {
			d += " [gray](" + tview.Escape(n.Ref) + ")[-]"
		}
		if sp, known := v.St.Highlight(); known {
			d += " [yellow]" + spanText(sp) + "[-]"
		}
		v.Desc.SetText(d)
	} else {
		v.Desc.SetText("")
	}
}

// spanText names octet spans: "octets 20-23", "octets 0-1, 60-61", and
// "0 octets" for none.
func spanText(sp []model.Span) string {
	if len(sp) == 0 {
		return "0 octets"
	}
	var parts []string
	for i, s := range sp {
		if i == 3 {
			parts = append(parts, "…")
			break
		}
		if s.End-s.Start == 1 {
			parts = append(parts, strconv.Itoa(s.Start))
		} else {
			parts = append(parts, strconv.Itoa(s.Start)+"-"+strconv.Itoa(s.End-1))
		}
	}
	w := "octets "
	if len(sp) == 1 && sp[0].End-sp[0].Start == 1 {
		w = "octet "
	}
	return w + strings.Join(parts, ", ")
}

func (v *View) renderHex() {
	st := v.St
	key := strconv.Itoa(st.DetailRecord()) + "/" + strconv.Itoa(len(st.Hex))
	if n := st.Tree.Current(); n != nil {
		key += "/" + n.Path
	}
	if key == v.hexKey {
		return
	}
	v.hexKey = key
	var b strings.Builder
	first := -1
	if note := st.HexNote(); note != "" {
		b.WriteString("[gray]" + tview.Escape(note) + "[-]\n")
	}
	lines := 0
	for _, l := range st.Hex {
		if l.Header != "" {
			b.WriteString("[::b]── " + tview.Escape(l.Header) + " ──[::-]\n")
			lines++
			continue
		}
		for part := 0; part < 16; part += v.hexPer {
			cells := l.Cells[part : part+v.hexPer]
			valid := false
			for _, c := range cells {
				valid = valid || c.Valid
				if c.Hi && first < 0 {
					first = lines
				}
			}
			if !valid && v.hexPer < 16 {
				continue // a blank part of the line
			}
			writeHexLine(&b, l.Off+part, cells)
			lines++
		}
	}
	if len(st.Hex) > 0 && st.Layout() != nil {
		b.WriteString(Legend + "\n")
	}
	v.Hex.SetText(b.String())
	if first >= 0 {
		v.Hex.ScrollTo(max(first-2, 0), 0)
	} else {
		v.Hex.ScrollToBeginning()
	}
}

// writeHexLine writes one line of octets (16, in two groups of eight, or
// fewer in one group) at frame offset o: offset, hex, ASCII, each octet in
// its class's colours.
func writeHexLine(b *strings.Builder, o int, cells []model.HexCell) {
	const digits = "0123456789abcdef"
	n := len(cells)
	off := strconv.FormatInt(int64(o), 16)
	b.WriteString("[gray:black]" + strings.Repeat("0", max(4-len(off), 0)) + off + "  ")
	cur := "[gray:black]"
	tag := func(c model.HexCell) string {
		switch {
		case !c.Valid:
			return "[gray:black]"
		case c.Hi && c.Class == model.ClassMarker:
			return hiMarkerTag
		case c.Hi:
			return hiTag
		}
		return classTag[c.Class]
	}
	for i, c := range cells {
		if i == 8 && n == 16 {
			if cur != "[gray:black]" {
				b.WriteString("[gray:black]")
				cur = "[gray:black]"
			}
			b.WriteByte(' ')
		}
		t := tag(c)
		if t != cur {
			b.WriteString(t)
			cur = t
		}
		if c.Valid {
			b.WriteByte(digits[c.B>>4])
			b.WriteByte(digits[c.B&15])
		} else {
			b.WriteString("  ")
		}
		// The space after an octet keeps its colour when the next octet
		// has the same one, so that a field reads as one block.
		if i < n-1 && (i != 7 || n != 16) && c.Valid && tag(cells[i+1]) == t && cells[i+1].Valid {
			b.WriteByte(' ')
		} else {
			b.WriteString("[gray:black] ")
			cur = "[gray:black]"
		}
	}
	b.WriteString(" ")
	for _, c := range cells {
		t := tag(c)
		if t != cur {
			b.WriteString(t)
			cur = t
		}
		switch {
		case !c.Valid:
			b.WriteByte(' ')
		case c.B >= 0x20 && c.B < 0x7f && c.B != '[' && c.B != ']':
			b.WriteByte(c.B)
		default:
			b.WriteByte('.')
		}
	}
	b.WriteString("[-:-]\n")
}

// listContent serves the record list's cells from the model: only rows on
// screen are asked for, and only they are formatted.
type listContent struct {
	tview.TableContentReadOnly
	v *View
}

func (c *listContent) GetRowCount() int    { return c.v.St.List.Len() + 1 }
func (c *listContent) GetColumnCount() int { return len(c.v.cols) }

// GetCell serves column i of the layout (View.cols): model column col,
// cut to its width (the Info column takes the rest).
func (c *listContent) GetCell(row, i int) *tview.TableCell {
	if i < 0 || i >= len(c.v.cols) {
		return nil
	}
	col, w := c.v.cols[i], c.v.colWidths[i]
	if row == 0 {
		return pad(tview.NewTableCell(model.Columns[col]), w, col == 0).
			SetStyle(tcell.StyleDefault.Bold(true).Foreground(tcell.ColorWhite)).SetSelectable(false)
	}
	r := c.v.St.List.Row(row - 1)
	if r.Rec < 0 {
		return nil
	}
	text := r.Cell(col)
	if w == 0 {
		// The Info column: the table measures and prints the whole text
		// of each cell, rune by rune, and then cuts it; what is past the
		// screen's width need not reach it.
		text = cut(text, c.v.width)
	}
	return pad(tview.NewTableCell(escape(text)), w, col == 0).SetStyle(kindStyle(r.Kind))
}

// escape is tview.Escape, without its regular expression when s has no
// square bracket (most cells).
func escape(s string) string {
	if !strings.ContainsRune(s, '[') {
		return s
	}
	return tview.Escape(s)
}

// cut shortens s to n+1 runes (0: no limit), one more than a cell of n
// columns shows so that the table still marks it cut.
func cut(s string, n int) string {
	if n <= 0 || len(s) <= n+1 {
		return s
	}
	i := 0
	for k := range s {
		if i == n+1 {
			return s[:k]
		}
		i++
	}
	return s
}

// pad fixes a cell's width (0: expand to fill the table).
func pad(c *tview.TableCell, w int, right bool) *tview.TableCell {
	if w == 0 {
		return c.SetExpansion(1)
	}
	n := utf8.RuneCountInString(c.Text)
	if n < w {
		if right {
			c.Text = strings.Repeat(" ", w-n) + c.Text
		} else {
			c.Text += strings.Repeat(" ", w-n)
		}
	}
	return c.SetMaxWidth(w)
}

type connContent struct {
	tview.TableContentReadOnly
	v *View
}

func (c *connContent) GetRowCount() int    { return len(c.v.conns) + 1 }
func (c *connContent) GetColumnCount() int { return len(model.ConnColumns) }

func (c *connContent) GetCell(row, col int) *tview.TableCell {
	if col < 0 || col >= len(model.ConnColumns) {
		return nil
	}
	if row == 0 {
		return tview.NewTableCell(model.ConnColumns[col]).SetStyle(tcell.StyleDefault.Bold(true).Foreground(tcell.ColorWhite)).SetSelectable(false)
	}
	if row-1 >= len(c.v.conns) {
		return nil
	}
	cells := model.ConnRow(c.v.conns[row-1])
	cell := tview.NewTableCell(tview.Escape(cells[col])).SetTextColor(tcell.ColorSilver)
	if col == 0 || col >= 8 {
		cell.SetAlign(tview.AlignRight)
	}
	return cell
}

type findingContent struct {
	tview.TableContentReadOnly
	v *View
}

func (c *findingContent) GetRowCount() int    { return c.v.St.X.NumFindings() + 1 }
func (c *findingContent) GetColumnCount() int { return len(model.FindingColumns) }

func (c *findingContent) GetCell(row, col int) *tview.TableCell {
	if col < 0 || col >= len(model.FindingColumns) {
		return nil
	}
	if row == 0 {
		return tview.NewTableCell(model.FindingColumns[col]).SetStyle(tcell.StyleDefault.Bold(true).Foreground(tcell.ColorWhite)).SetSelectable(false)
	}
	x := c.v.St.X
	if row-1 >= x.NumFindings() {
		return nil
	}
	ref := x.Finding(row - 1)
	cells := model.FindingRow(ref, x.Record(ref.Rec))
	color := tcell.ColorSilver
	switch cells[1] {
	case "error":
		color = tcell.ColorRed
	case "warning":
		color = tcell.ColorYellow
	}
	cell := tview.NewTableCell(tview.Escape(cells[col])).SetTextColor(color)
	if col == 0 || col == 3 {
		cell.SetAlign(tview.AlignRight)
	}
	if col == 4 {
		cell.SetExpansion(1)
	}
	return cell
}

// Ladder widths: the arrow column is at most ladderWidth cells and at
// least ladderMinArrow; the column after it keeps ladderDetail cells for a
// Read Response's request and latency (LadderRow.Brief when Detail does
// not fit) as long as the arrows keep ladderMinArrow.
const (
	ladderWidth    = 60
	ladderMinArrow = 30
	ladderDetail   = 16
)

// ladderLayout is the ladder's columns on a screen w columns wide (0: as
// wide as it likes) with a Time column tw wide: the Frame column's width,
// whether Time is shown, and the arrow column's width. The Frame column
// narrows to 6 cells below narrowWidth, as the list's does; Time goes
// only when the arrows would otherwise be shorter than ladderMinArrow.
func ladderLayout(w, tw int) (frameW int, showTime bool, arrowW int) {
	if w == 0 {
		return 7, true, ladderWidth
	}
	frameW = 7
	if w < narrowWidth {
		frameW = 6
	}
	// The table's border takes 2 cells, and a space separates columns.
	inner := w - 2
	arrowW = inner - frameW - 1 - tw - 1 - 1 - ladderDetail
	showTime = arrowW >= ladderMinArrow
	if !showTime {
		arrowW = inner - frameW - 1 - 1 - ladderDetail
	}
	return frameW, showTime, min(max(arrowW, ladderMinArrow), ladderWidth)
}

type ladderContent struct {
	tview.TableContentReadOnly
	v *View
}

func (c *ladderContent) GetRowCount() int {
	if c.v.St.Ladder == nil {
		return 1
	}
	return c.v.St.Ladder.Len() + 1
}

func (c *ladderContent) GetColumnCount() int {
	if c.v.ladderTime {
		return 4
	}
	return 3
}

func (c *ladderContent) GetCell(row, i int) *tview.TableCell {
	st, v := c.v.St, c.v
	col := i // 0 Frame, 1 Time, 2 arrows, 3 detail
	if !v.ladderTime && i >= 1 {
		col = i + 1
	}
	if row == 0 {
		head := tcell.StyleDefault.Bold(true).Foreground(tcell.ColorWhite)
		switch col {
		case 0:
			return pad(tview.NewTableCell("Frame"), v.ladderFrame, true).SetStyle(head).SetSelectable(false)
		case 1:
			return pad(tview.NewTableCell("Time"), v.timeWidth, false).SetStyle(head).SetSelectable(false)
		case 2:
			return pad(tview.NewTableCell(tview.Escape(ladderHeader(v.ladderEnds, v.ladderArrow))), v.ladderArrow, false).
				SetStyle(head).SetSelectable(false)
		case 3:
			return tview.NewTableCell("").SetSelectable(false).SetExpansion(1)
		}
		return nil
	}
	if st.Ladder == nil || row-1 >= st.Ladder.Len() {
		return nil
	}
	rec := st.Ladder.Record(row - 1)
	lr := st.X.LadderRow(rec)
	style := kindStyle(lr.Kind)
	switch col {
	case 0:
		return pad(tview.NewTableCell(strconv.FormatUint(lr.Frame, 10)), v.ladderFrame, true).SetStyle(style)
	case 1:
		return pad(tview.NewTableCell(st.Ladder.Time(row-1)), v.timeWidth, false).SetStyle(style)
	case 2:
		return tview.NewTableCell(tview.Escape(arrow(lr.Label, lr.Dir, v.ladderArrow))).SetStyle(style)
	case 3:
		d := lr.Detail
		if v.width > 0 && utf8.RuneCountInString(d) > v.ladderRest() {
			d = lr.Brief
		}
		return tview.NewTableCell(tview.Escape(d)).SetStyle(style).SetExpansion(1)
	}
	return nil
}

// ladderRest returns the width of the ladder's last column.
func (v *View) ladderRest() int {
	rest := v.width - 2 - v.ladderFrame - 1 - v.ladderArrow - 1
	if v.ladderTime {
		rest -= v.timeWidth + 1
	}
	return rest
}

// ladderHeader writes the two ends over the arrows, the initiator on the
// left, in w cells: with their roles when they fit, else the bare
// endpoints, each cut to half the width when still too long.
func ladderHeader(ends func() (string, string, string, string), w int) string {
	a, b, ra, rb := ends()
	fit := func(a, b string) (string, bool) {
		n := utf8.RuneCountInString(a) + utf8.RuneCountInString(b)
		return a + strings.Repeat(" ", max(w-n, 1)) + b, n < w
	}
	if ra != "" {
		if s, ok := fit(a+" "+ra, rb+" "+b); ok {
			return s
		}
	}
	if s, ok := fit(a, b); ok {
		return s
	}
	half := (w - 1) / 2
	s, _ := fit(clip(a, half), clip(b, w-1-half))
	return s
}

// renderTitles writes the title line and the ladder's title for the
// screen's width.
func (v *View) renderTitles() {
	v.Title.SetText("[::b]" + tview.Escape(v.St.TitleFit(max(v.width-v.progWidth, 0))))
	v.Ladder.SetTitle(v.ladderTitle())
}

// ladderTitle is the ladder's title: shorter on a narrow screen, where it
// says the initiator is on the left (the header has no room for the
// roles).
func (v *View) ladderTitle() string {
	c := strconv.Itoa(v.St.LadderConn)
	if v.width == 0 || v.width >= narrowWidth {
		return " Ladder of connection " + c + " (Enter: go to the frame, Esc: back) "
	}
	if _, _, ra, _ := v.ladderEnds(); ra != "" {
		return " Ladder of connection " + c + ", initiator on the left (Enter: frame, Esc: back) "
	}
	return " Ladder of connection " + c + " (Enter: frame, Esc: back) "
}

// ladderEnds names the two sides of the ladder, the initiator on the
// left, and their roles when the connection summary knows them.
func (v *View) ladderEnds() (a, b, roleA, roleB string) {
	for _, ci := range v.St.X.Conns() {
		if ci.ID != v.St.LadderConn {
			continue
		}
		if ci.Summary != nil && ci.Summary.InitiatorKnown {
			return ci.Summary.Initiator.String(), ci.Summary.Responder.String(), "(initiator)", "(responder)"
		}
		if ci.A.IsValid() {
			return ci.A.String(), ci.B.String(), "", ""
		}
	}
	return "", "", "", ""
}

// arrow draws a message between the two sides, initiator to responder
// left to right, in exactly w cells (w >= 8): a label too long for the
// ladder is cut short with "…" so that the right-hand lifeline stays
// straight.
func arrow(label string, d flows.Dir, w int) string {
	label = " " + elide(label, w-8) + " "
	n := max(w-4-utf8.RuneCountInString(label), 2)
	switch d {
	case flows.DirI2R:
		return "├─" + label + strings.Repeat("─", n) + "▶┤"
	case flows.DirR2I:
		return "├◀" + strings.Repeat("─", n) + label + "─┤"
	}
	return "├─" + label + strings.Repeat("─", n) + "─┤"
}

// elide fits a ladder label into n runes: whole when it fits, else
// without its STag ("RDMA Read Response 64 B …": the list and the tree
// have it), else cut after a word.
func elide(label string, n int) string {
	if utf8.RuneCountInString(label) <= n {
		return label
	}
	if i := strings.Index(label, " STag "); i > 0 && utf8.RuneCountInString(label[:i])+2 <= n {
		return label[:i] + " …"
	}
	return clipWords(label, n)
}

// clipWords cuts s to at most n runes as clip does, but after a whole
// word ("RDMA Write 64 B …") when that keeps at least half of it.
func clipWords(s string, n int) string {
	c := clip(s, n)
	if c == s {
		return c
	}
	r := []rune(c)
	for i := len(r) - 2; i >= n/2; i-- {
		if r[i] == ' ' {
			return string(r[:i+1]) + "…"
		}
	}
	return c
}

// clip cuts s to at most n runes, the last one "…" when it was longer.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	return string([]rune(s)[:n-1]) + "…"
}

package tui

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/internal/tui/model"
)

const rping = "../../testdata/siw/crc_v2_rping.pcap"

// TestOpen: the first screen of crc_v2_rping.pcap. The rows start with
// the MPA Request in frame 4 and the Reply in frame 6 (MANIFEST.md, which
// has tshark's decode), then the Send of frame 8 and the Read Request of
// frame 9; the selection is on the first row and the tree and octets show
// the MPA Request.
func TestOpen(t *testing.T) {
	h := open(t, rping)
	h.golden("open", true, true)
	scr := h.text()
	if !strings.HasPrefix(strings.TrimSpace(scr[3]), "4 ") || !strings.Contains(scr[3], "MPA Request rev 2") {
		t.Errorf("first row: %q", scr[3])
	}
	if !strings.HasPrefix(strings.TrimSpace(scr[4]), "6 ") || !strings.Contains(scr[4], "MPA Reply rev 2") {
		t.Errorf("second row: %q", scr[4])
	}
	if h.find("50 frames") < 0 {
		t.Error("title does not say 50 frames (MANIFEST.md: packets: 50)")
	}
}

func TestIndexCancel(t *testing.T) {
	app, err := New(rping, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = app.Index(ctx)
	<-app.Done()
}

// selectedFrame returns the frame of the selected list row.
func (h *harness) selectedFrame() uint64 {
	rec := h.app.St.List.SelectedRecord()
	if rec < 0 {
		return 0
	}
	return h.app.X.Entry(rec).Frame
}

// listFrames returns the frames of the list's FPDU rows.
func (h *harness) listFrames(typ string) []uint64 {
	var out []uint64
	l := h.app.St.List
	for i := range l.Len() {
		r := h.app.X.Record(l.Record(i))
		if typ == "" || r.Type.String() == typ {
			out = append(out, r.Frame)
		}
	}
	return out
}

// treeTo moves the tree's current node down to path (the tree has the
// focus) and fails when it is not on the way.
func (h *harness) treeTo(path string) {
	h.t.Helper()
	for range 64 {
		if n := h.app.St.Tree.Current(); n != nil && n.Path == path {
			return
		}
		h.keys("{Down}")
	}
	h.t.Fatalf("tree node %s not reached", path)
}

// TestMove: j moves down, k up, End to the last row, Home back. Frame 9,
// four rows down, is the first RDMA Read Request (tshark: iwarp_rdma.opcode
// 1 in frames 9, 17, 25, 33, 41); the last row is the connection summary
// written at the last frame, 50 (MANIFEST.md: 50 packets).
func TestMove(t *testing.T) {
	h := open(t, rping)
	h.keys("jjjjk")
	if f := h.selectedFrame(); f != 9 {
		t.Fatalf("after jjjjk: frame %d, want 9", f)
	}
	h.golden("move", true, true)
	h.keys("{End}")
	if f := h.selectedFrame(); f != 50 {
		t.Errorf("End: frame %d, want 50", f)
	}
	h.keys("{Home}")
	if f := h.selectedFrame(); f != 4 {
		t.Errorf("Home: frame %d, want 4", f)
	}
	h.keys("{PgDn}")
	if h.app.St.List.Selected() < 5 {
		t.Errorf("PgDn moved to row %d", h.app.St.List.Selected())
	}
	if rr := tsharkFrames(t, rping, "iwarp_rdma.opcode == 1"); len(rr) == 0 || rr[0] != 9 {
		t.Errorf("tshark: Read Requests in frames %v", rr)
	}
}

// TestTreeExpand: Enter moves into the tree of frame 9's Read Request;
// rdmap.read is collapsed until l expands it into the five fields of RFC
// 5040 §4.4.
func TestTreeExpand(t *testing.T) {
	h := open(t, rping)
	h.keys("jjj{Enter}")
	h.treeTo("rdmap.read")
	if h.find("rdmap.read.sink_stag") >= 0 {
		t.Fatal("rdmap.read shown expanded before l")
	}
	h.keys("l")
	h.golden("tree_expand", false, true)
	for _, f := range []string{"rdmap.read.sink_stag: 0xd666b900", "rdmap.read.sink_to", "rdmap.read.size: 64", "rdmap.read.src_stag", "rdmap.read.src_to"} {
		if h.find(f) < 0 {
			t.Errorf("no %q after expanding", f)
		}
	}
	h.keys("h")
	if h.find("rdmap.read.size") >= 0 {
		t.Error("h did not collapse rdmap.read")
	}
}

// TestHexField: selecting rdmap.read.sink_stag of frame 9 highlights the
// four octets tshark places at frame offset 86 with the value d666b900
// (iwarp_rdma.sinkstag); selecting mpa.crc highlights tshark's
// iwarp_mpa.crc_check, and ddp.msn its iwarp_ddp.msn.
func TestHexField(t *testing.T) {
	h := open(t, rping)
	h.keys("jjj{Enter}")
	h.treeTo("rdmap.read")
	h.keys("l")
	h.treeTo("rdmap.read.sink_stag")
	h.golden("hex_field", false, true)
	offs, vals := h.highlighted()
	if len(offs) != 4 || offs[0] != 86 || offs[3] != 89 {
		t.Fatalf("highlighted offsets %v", offs)
	}
	check := func(name string, offs []int, vals []byte) {
		t.Helper()
		f := tsharkField(t, rping, 9, name)
		if len(offs) != f.Size || offs[0] != f.Pos {
			t.Errorf("%s: highlighted %v, tshark pos %d size %d", name, offs, f.Pos, f.Size)
		}
		if got := strings.ToLower(hexString(vals)); got != f.Value {
			t.Errorf("%s: highlighted %s, tshark %s", name, got, f.Value)
		}
	}
	check("iwarp_rdma.sinkstag", offs, vals)
	h.keys("{Home}")
	h.treeTo("mpa.crc")
	offs, vals = h.highlighted()
	check("iwarp_mpa.crc_check", offs, vals)
	h.treeTo("ddp.msn")
	offs, vals = h.highlighted()
	check("iwarp_ddp.msn", offs, vals)
}

func hexString(b []byte) string {
	const d = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, d[c>>4], d[c&15])
	}
	return string(out)
}

// TestFilter: rdmap.opcode == 1 leaves the five RDMA Read Requests
// (MANIFEST.md: 5 x 0x01), in the frames where tshark finds them.
func TestFilter(t *testing.T) {
	h := open(t, rping)
	h.keys("/rdmap.opcode == 1{Enter}")
	h.golden("filter", true, true)
	got := h.listFrames("")
	if len(got) != 5 {
		t.Fatalf("filtered rows: frames %v, want 5 Read Requests", got)
	}
	want := tsharkFrames(t, rping, "iwarp_rdma.opcode == 1")
	if len(want) != len(got) {
		t.Fatalf("frames %v, tshark %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("frames %v, tshark %v", got, want)
		}
	}
	// An empty filter shows everything again.
	h.keys("/")
	for range len("rdmap.opcode == 1") {
		h.keys("{Backspace}")
	}
	h.keys("{Enter}")
	if n := h.app.St.List.Len(); n != 43 {
		t.Errorf("after clearing: %d rows", n)
	}
}

// TestBadFilter: a filter that ends too early is refused with a caret at
// its end (filter.SyntaxError.Pos is len(expr) then); an unknown field
// name with the caret at the name. The list keeps its rows.
func TestBadFilter(t *testing.T) {
	h := open(t, rping)
	h.keys("/rdmap.opcode =={Enter}")
	h.golden("filter_bad", false, true)
	line := h.find("^ column")
	if line < 0 {
		t.Fatal("no error line")
	}
	caret := strings.IndexRune(h.text()[line], '^')
	if want := len("Filter: ") + len("rdmap.opcode =="); caret != want {
		t.Errorf("caret at column %d, want %d", caret, want)
	}
	if n := h.app.St.List.Len(); n != 43 {
		t.Errorf("list has %d rows after a bad filter", n)
	}
	h.keys("{Esc}/{Home}x{Enter}")
	if h.app.St.FilterErr == nil || h.app.St.FilterErr.Pos != 0 {
		t.Fatalf("unknown name xrdmap...: error %+v", h.app.St.FilterErr)
	}
	h.keys("{Esc}")
	if h.find("^ column") >= 0 {
		t.Error("Esc left the error shown")
	}
}

// TestConnections: c shows the -z conn table: one connection, MPA rev 2,
// CRC on (Request and Reply with C=1), 35 FPDUs (MANIFEST.md: 35
// DDP/RDMAP PDUs decoded); Enter restricts the list to it.
func TestConnections(t *testing.T) {
	h := open(t, rping)
	h.keys("c")
	h.golden("conns", false, true)
	row := h.text()[h.find(" 192.0.2.2:40531 ")]
	for _, want := range []string{"closed", " 2 ", " on ", "off/off", "1/1", " 35 "} {
		if !strings.Contains(row, want) {
			t.Errorf("connection row %q lacks %q", row, want)
		}
	}
	h.keys("{Enter}")
	if h.app.St.List.Conn() != 0 || h.find("only conn 0") < 0 {
		t.Error("Enter did not restrict the list to connection 0")
	}
	h.keys("x")
	if h.app.St.List.Conn() != -1 {
		t.Error("x did not show all connections again")
	}
}

// TestTablesScroll: at 80 columns the Connections table's columns past
// the edge are reached with → and left with ←, and the Findings view
// shows the selected finding whole under its table, whose Message column
// the width cuts (TestFindings' capture: rdmap.terminate's text).
func TestTablesScroll(t *testing.T) {
	h := openSize(t, rping, 80, 24)
	h.keys("c")
	if h.find("Findings") >= 0 || h.find("ID Initiator") < 0 {
		t.Fatalf("at 80 columns the Findings column is on screen already:\n%s", strings.Join(h.text(), "\n"))
	}
	for range 8 {
		h.keys("{Right}")
	}
	if h.find("Findings") < 0 || h.find("ID Initiator") >= 0 {
		t.Errorf("→ did not bring the last columns in:\n%s", strings.Join(h.text(), "\n"))
	}
	h.keys("<")
	for range 8 {
		h.keys("h")
	}
	if h.find("ID Initiator") < 0 {
		t.Errorf("← did not go back to the first column:\n%s", strings.Join(h.text(), "\n"))
	}

	h = openSize(t, "../../testdata/siw/term_badwrite.pcap", 80, 24)
	h.keys("e{Down}")
	text := strings.Join(h.text(), " ")
	if !strings.Contains(text, "frame 11, conn 0: error rdmap.terminate: Terminate: DDP Tagged Buffer Error: Invalid STag") ||
		!strings.Contains(strings.Join(strings.Fields(text), " "), "[RFC 5040 §") {
		t.Errorf("the selected finding is not shown whole:\n%s", strings.Join(h.text(), "\n"))
	}
}

// TestLadder: f follows the selected record's connection: its 35 RDMA
// messages, each RDMA Read Response with the frame of its Read Request
// (tshark: Read Requests in 9, 17, 25, 33, 41; Responses in the next
// frames).
func TestLadder(t *testing.T) {
	h := open(t, rping)
	h.keys("f")
	h.golden("ladder", true, false)
	if n := h.app.St.Ladder.Len(); n != 35 {
		t.Errorf("ladder has %d messages, want 35", n)
	}
	reqs := tsharkFrames(t, rping, "iwarp_rdma.opcode == 1")
	resps := tsharkFrames(t, rping, "iwarp_rdma.opcode == 2")
	for i, rq := range reqs {
		line := h.find("request frame " + strconv.FormatUint(rq, 10) + ",")
		if line < 0 {
			if i < 3 { // the first ones are on screen
				t.Errorf("no Read Response answering frame %d", rq)
			}
			continue
		}
		if !strings.HasPrefix(strings.TrimLeft(h.text()[line], "│║ "), strconv.FormatUint(resps[i], 10)+" ") {
			t.Errorf("response to %d: %q, tshark says frame %d", rq, h.text()[line], resps[i])
		}
	}
	h.keys("jj{Enter}") // the third message: the first Read Response
	if h.app.St.Screen != 0 || h.selectedFrame() != resps[0] {
		t.Errorf("Enter on the first Read Response: screen %d frame %d, want the list at frame %d", h.app.St.Screen, h.selectedFrame(), resps[0])
	}
}

// TestFindings: term_badwrite.pcap has siw's Terminate in frame 11
// (MANIFEST.md); e lists its findings, Enter jumps to the frame.
func TestFindings(t *testing.T) {
	h := open(t, "../../testdata/siw/term_badwrite.pcap")
	h.keys("e")
	h.golden("findings", true, false)
	if h.app.X.NumFindings() == 0 {
		t.Fatal("no findings")
	}
	for i := 0; i < h.app.X.NumFindings(); i++ {
		if strings.Contains(h.selectedFindingRow(), "rdmap.terminate") {
			break
		}
		h.keys("j")
	}
	h.keys("{Enter}")
	if f := h.selectedFrame(); f != 11 {
		t.Errorf("finding jumps to frame %d, want 11", f)
	}
	h.golden("findings_jump", true, true)
	if term := tsharkFrames(t, "../../testdata/siw/term_badwrite.pcap", "iwarp_rdma.opcode == 7"); len(term) != 1 || term[0] != 11 {
		t.Errorf("tshark: Terminate in %v", term)
	}
}

// TestHelp: ? shows every binding with help text; ? closes it.
func TestHelp(t *testing.T) {
	h := open(t, rping)
	h.keys("?")
	h.golden("help", false, false)
	lines := strings.Join(h.helpLines(), "\n")
	for _, b := range h.app.Ctl.Keys() {
		if b.Help != "" && !strings.Contains(lines, b.Help) {
			t.Errorf("help screen lacks %q", b.Help)
		}
	}
	h.keys("?")
	if h.app.St.Help {
		t.Error("? did not close the help")
	}
}

// TestGotoSearch: g goes to a frame; s searches the rows; n repeats.
// RDMA Writes are in frames 13, 21, 29, 37, 45 (tshark: opcode 0).
func TestGotoSearch(t *testing.T) {
	h := open(t, rping)
	h.keys("g13{Enter}")
	if f := h.selectedFrame(); f != 13 {
		t.Fatalf("g13: frame %d", f)
	}
	h.keys("sRDMA Write{Enter}")
	if f := h.selectedFrame(); f != 21 {
		t.Errorf("search from 13: frame %d, want 21", f)
	}
	h.keys("n")
	if f := h.selectedFrame(); f != 29 {
		t.Errorf("n: frame %d, want 29", f)
	}
	h.keys("N")
	if f := h.selectedFrame(); f != 21 {
		t.Errorf("N: frame %d, want 21", f)
	}
	h.keys("g15{Enter}") // no record starts in frame 15
	if f := h.selectedFrame(); f != 16 || h.find("no row for frame 15") < 0 {
		t.Errorf("g15: frame %d", f)
	}
	if w := tsharkFrames(t, rping, "iwarp_rdma.opcode == 0"); len(w) != 5 || w[1] != 21 || w[2] != 29 {
		t.Errorf("tshark: RDMA Writes in %v", w)
	}
}

// TestMouse: a click on a row selects it; a click in the tree selects the
// node under it.
func TestMouse(t *testing.T) {
	h := open(t, rping)
	y := h.find("RDMA Write STag 0xf64d6400")
	h.click(10, y)
	if f := h.selectedFrame(); f != 13 {
		t.Fatalf("click on row %d: frame %d, want 13", y, f)
	}
	y = h.find("ddp.stag: 0xf64d6400")
	if y < 0 {
		t.Fatal("no ddp.stag in the tree")
	}
	h.click(10, y)
	if n := h.app.St.Tree.Current(); n == nil || n.Path != "ddp.stag" {
		t.Fatalf("click on the tree: current %v", n)
	}
	if offs, _ := h.highlighted(); len(offs) != 4 {
		t.Errorf("ddp.stag highlights %v", offs)
	}
}

// listLines returns the screen lines of the list's rows: those between
// its header and the detail pane's border.
func (h *harness) listLines() []string {
	lines := h.text()
	from, to := -1, len(lines)
	for i, l := range lines {
		switch {
		case from < 0 && strings.HasPrefix(strings.TrimSpace(l), "No. "):
			from = i + 1
		case from >= 0 && strings.HasPrefix(l, "┌"):
			to = i
		}
		if to < len(lines) {
			break
		}
	}
	if from < 0 {
		h.t.Fatalf("no list header:\n%s", strings.Join(lines, "\n"))
	}
	return lines[from:to]
}

// isRow reports whether a line of the list shows row i: its number and
// protocol (the time and addresses go at some widths).
func (h *harness) isRow(line string, i int) bool {
	r := h.app.St.List.Row(i)
	return strings.HasPrefix(line, fmt.Sprintf("%6s ", r.No)) && strings.Contains(line, " "+r.Proto+" ")
}

// TestWheelAndResize: the wheel scrolls the list without moving the
// selection (the help says "the wheel scrolls"), and a resized screen
// shows the selected row, at once.
func TestWheelAndResize(t *testing.T) {
	h := openSize(t, rping, 100, 30)
	n := h.app.Ctl.Handled.Load()
	h.scr.InjectMouse(10, 5, tcell.WheelDown, tcell.ModNone)
	h.waitHandled(n + 1)
	rows := h.listLines()
	if len(rows) < 4 || !h.isRow(rows[0], 3) || h.isRow(rows[0], 2) {
		t.Errorf("after the wheel, the list starts with %q, want row 3 (%+v)", rows[0], h.app.St.List.Row(3))
	}
	if f := h.selectedFrame(); f != 4 {
		t.Errorf("the wheel moved the selection to frame %d", f)
	}
	h.keys("{End}")
	last := h.app.St.List.Len() - 1
	for _, size := range [][2]int{{100, 20}, {80, 24}, {100, 40}} {
		h.scr.SetSize(size[0], size[1])
		h.scr.PostEvent(tcell.NewEventResize(size[0], size[1]))
		h.sync()
		rows = h.listLines()
		if len(rows) == 0 || !h.isRow(rows[len(rows)-1], last) {
			t.Errorf("at %dx%d the selected last row (%+v) is not the list's last line:\n%s", size[0], size[1], h.app.St.List.Row(last), strings.Join(rows, "\n"))
		}
	}
}

// TestFormats: the pcapng and gzip copies of the capture give the same
// rows and the same octets as the pcap.
func TestFormats(t *testing.T) {
	ref := open(t, rping)
	want := ref.listFrames("")
	for _, p := range []string{"testdata/crc_v2_rping.pcapng", "testdata/crc_v2_rping.pcap.gz"} {
		h := open(t, p)
		got := h.listFrames("")
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", p, len(got), len(want))
		}
		h.keys("jjj{Enter}")
		h.treeTo("ddp.qn")
		if offs, _ := h.highlighted(); len(offs) != 4 || offs[0] != 74 {
			t.Errorf("%s: ddp.qn at %v", p, offs)
		}
	}
}

// selectedFindingRow returns the cells of the selected finding.
func (h *harness) selectedFindingRow() string {
	st := h.app.St
	ref := st.X.Finding(st.FindSel)
	return strings.Join(model.FindingRow(ref, st.X.Record(ref.Rec)), " ")
}

// TestBackspace: Backspace leaves the detail tree and the octets pane for
// the list (the help: "Bksp back to the list"). tcell reports the DEL a
// terminal sends for Backspace (0x7f), BS (0x08, also Ctrl-H) and the
// Backspace2 key code all as KeyBackspace; each kind must work. Esc
// ("back to the list") does the same.
func TestBackspace(t *testing.T) {
	h := open(t, rping)
	events := []struct {
		name string
		send func()
	}{
		{"KeyBackspace", func() { h.scr.InjectKey(tcell.KeyBackspace, 0, tcell.ModNone) }},
		{"KeyBackspace2", func() { h.scr.InjectKey(tcell.KeyBackspace2, 0, tcell.ModNone) }},
		// As typed: the octets a terminal sends (InjectKeyBytes loops
		// forever on control octets in tcell v2.13.10, so as runes).
		{"DEL octet", func() { h.scr.InjectKey(tcell.KeyRune, 0x7f, tcell.ModNone) }},
		{"BS octet", func() { h.scr.InjectKey(tcell.KeyRune, '\b', tcell.ModNone) }},
		{"KeyCtrlH", func() { h.scr.InjectKey(tcell.KeyCtrlH, 'h', tcell.ModCtrl) }},
		// Esc, "back to the list", as well (it left the focus where it was).
		{"Esc", func() { h.scr.InjectKey(tcell.KeyEscape, 0, tcell.ModNone) }},
	}
	for _, ev := range events {
		for _, pane := range []struct {
			keys  string
			focus model.Focus
		}{{"{Enter}", model.FocusTree}, {"{Tab}{Tab}", model.FocusHex}} {
			h.keys(pane.keys)
			if h.app.St.Focus != pane.focus {
				t.Fatalf("%s: focus %d, want %d", pane.keys, h.app.St.Focus, pane.focus)
			}
			n := h.app.Ctl.Handled.Load()
			ev.send()
			h.waitHandled(n + 1)
			if h.app.St.Focus != model.FocusList {
				t.Errorf("%s in pane %d: focus stays %d, want the list", ev.name, pane.focus, h.app.St.Focus)
				h.keys("{Tab}") // back to the list by Tab for the next case
				for h.app.St.Focus != model.FocusList {
					h.keys("{Tab}")
				}
			}
		}
	}
}

// TestPadOctets: selecting mpa.pad lights up the pad's own octets: none
// when the pad is empty (frame 9 of crc_v2_rping: tshark shows no
// iwarp_mpa.pad, the FPDU is 2 + 46 + 4 octets), and the description line
// says so; tshark's iwarp_mpa.pad when there is one (frame 14 of
// basic_ib_read_bw_4096_v2_nocrc).
func TestPadOctets(t *testing.T) {
	h := open(t, rping)
	h.keys("g9{Enter}{Enter}")
	h.treeTo("mpa.pad")
	if offs, _ := h.highlighted(); len(offs) != 0 {
		t.Errorf("empty pad highlights octets %v", offs)
	}
	if y := h.find("mpa.pad — "); y < 0 || !strings.Contains(h.text()[y], "0 octets") {
		t.Errorf("description line does not say the pad has 0 octets: %q", h.text()[max(y, 0)])
	}

	const readBW = "../../testdata/siw/basic_ib_read_bw_4096_v2_nocrc.pcap"
	h = open(t, readBW)
	h.keys("g14{Enter}{Enter}")
	h.treeTo("mpa.pad")
	h.sameAsTshark(readBW, 14, "iwarp_mpa.pad")
}

// emptyPcap writes a pcap file with its 24-octet global header (libpcap
// format: magic a1b2c3d4, version 2.4, snaplen, link type 1 Ethernet) and
// no packets.
func emptyPcap(t *testing.T) string {
	t.Helper()
	hdr := make([]byte, 24)
	binary.LittleEndian.PutUint32(hdr[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint16(hdr[6:], 4)
	binary.LittleEndian.PutUint32(hdr[16:], 65535)
	binary.LittleEndian.PutUint32(hdr[20:], 1)
	p := filepath.Join(t.TempDir(), "empty.pcap")
	if err := os.WriteFile(p, hdr, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGotoMessages: g says what it did. crc_v2_rping has 50 frames
// (MANIFEST.md), so frame 99999 is past the last one and the selection
// stays; text that is not a frame number is shown back; an empty
// capture has no records.
func TestGotoMessages(t *testing.T) {
	tests := []struct {
		file, input, want string
	}{
		{rping, "99999", "frame 99999 is past the last frame (50)"},
		{rping, "-3", "not a frame number: -3"},
		{rping, "abc", "not a frame number: abc"},
		{rping, "0", "not a frame number: 0"},
		{"", "5", "no records"},
	}
	for _, tc := range tests {
		t.Run(tc.input, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = emptyPcap(t)
			}
			h := open(t, file)
			h.keys("jj")
			before := h.app.St.List.Selected()
			h.keys("g" + tc.input + "{Enter}")
			if got := h.app.St.Message; got != tc.want {
				t.Errorf("g%s: message %q, want %q", tc.input, got, tc.want)
			}
			if y := h.find(tc.want); y < 0 {
				t.Errorf("g%s: %q not on screen", tc.input, tc.want)
			}
			if after := h.app.St.List.Selected(); after != before {
				t.Errorf("g%s: selection moved from row %d to %d", tc.input, before, after)
			}
		})
	}
}

// TestHelpNarrow: at 80x24 the help is one readable column and scrolls
// (j, PgDn, End), so that every binding can be read: for each binding
// with help text, some line of the scrolled help shows its help text
// and each of its keys.
func TestHelpNarrow(t *testing.T) {
	h := openSize(t, rping, 80, 24)
	h.keys("?")
	lines := h.helpLines()
	h.keys("{End}")
	if h.find("Mouse: click") < 0 {
		t.Error("End does not show the last line of the help")
	}
	h.keys("{Home}")
	if h.find("expand everything") >= 0 {
		t.Fatal("the whole help fits at 80x24: PgDn is not tested")
	}
	h.keys("{PgDn}")
	if h.find("expand everything") < 0 { // the second screenful
		t.Error("PgDn does not show the second page of the help")
	}
	for _, b := range h.app.Ctl.Keys() {
		if b.Help == "" {
			continue
		}
		ok := false
		for _, l := range lines {
			if !strings.Contains(l, " "+b.Help) {
				continue
			}
			ok = true
			for _, k := range b.Keys {
				if !strings.Contains(l, " "+k.Name()+" ") {
					ok = false
				}
			}
			if ok {
				break
			}
		}
		if !ok {
			t.Errorf("no help line shows %q with its keys", b.Help)
		}
	}
	h.keys("{Esc}")
	if h.app.St.Help {
		t.Error("Esc did not close the help")
	}
}

// helpLines scrolls the help (shown) from its top to its end with j and
// returns every line seen on the way.
func (h *harness) helpLines() []string {
	h.t.Helper()
	seen := map[string]bool{}
	var lines []string
	h.keys("{Home}")
	for range 80 {
		for _, l := range h.text() {
			if !seen[l] {
				seen[l] = true
				lines = append(lines, l)
			}
		}
		h.keys("j")
	}
	return lines
}

// TestNarrowLayout: at 80x24, the classic terminal size, the Info column
// keeps at least 25 columns and the detail tree 30, and the octets pane
// (8 octets a line) still lights up the selected field where tshark
// places it (frame 13's ddp.stag: iwarp_ddp.stag).
func TestNarrowLayout(t *testing.T) {
	h := openSize(t, rping, 80, 24)
	lines := h.text()
	head := h.find("Info")
	if head < 0 {
		t.Fatal("no list header with Info")
	}
	if w := 80 - len([]rune(lines[head][:strings.Index(lines[head], "Info")])); w < 25 {
		t.Errorf("Info column %d wide, want >= 25:\n%s", w, strings.Join(lines, "\n"))
	}
	y := h.find("┌ Detail")
	if y < 0 {
		t.Fatalf("no Detail pane:\n%s", strings.Join(lines, "\n"))
	}
	l := lines[y]
	d, o := strings.Index(l, "┌ Detail"), strings.Index(l, "┌ Octets")
	if o < 0 {
		t.Fatalf("no Octets pane beside the tree: %q", l)
	}
	if w := len([]rune(l[d:o])) - 2; w < 30 {
		t.Errorf("tree %d columns wide, want >= 30: %q", w, l)
	}
	h.keys("g13{Enter}{Enter}")
	h.treeTo("ddp.stag")
	h.sameAsTshark(rping, 13, "iwarp_ddp.stag")
}

// sameAsTshark checks that the octets lit up are those tshark gives for
// field name of frame in the capture at path.
func (h *harness) sameAsTshark(path string, frame int, name string) {
	h.t.Helper()
	offs, vals := h.highlighted()
	f := tsharkField(h.t, path, frame, name)
	if len(offs) != f.Size || len(offs) == 0 || offs[0] != f.Pos || hexString(vals) != f.Value {
		h.t.Errorf("%s highlights %v (%x), tshark: pos %d size %d value %s", name, offs, vals, f.Pos, f.Size, f.Value)
	}
}

// TestDamagedFile: a capture cut in the middle of a record (the first
// 3000 octets of crc_v2_rping.pcap) says why inside the app, as
// iwarpdump does for the same file ("frame 26 at offset 2990: truncated
// record", "decoded 25 packets before the damage"), and the progress
// label keeps its percentage, at 140 and at 80 columns.
func TestDamagedFile(t *testing.T) {
	data, err := os.ReadFile(rping)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trunc.pcap")
	if err := os.WriteFile(path, data[:3000], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{simW, 80} {
		h := start(t, path, w, 24, true)
		status := h.text()[23]
		for _, want := range []string{"frame 26 at offset 2990: truncated record", "25 frames"} {
			if !strings.Contains(status, want) {
				t.Errorf("width %d: status line %q lacks %q", w, status, want)
			}
		}
		if !strings.HasSuffix(h.text()[0], "100%") {
			t.Errorf("width %d: title line %q does not end with the percentage", w, h.text()[0])
		}
		h.keys("j")
		if !strings.Contains(h.text()[23], "truncated record") {
			t.Errorf("width %d: the reason is gone after a key: %q", w, h.text()[23])
		}
	}
}

// TestSnapHidden: a capture whose snap length cut the first segments of
// its only connection before 8 octets of payload (crc_v2_rping.pcap cut by
// editcap -s 60: Linux TCP headers take 66 octets) has no record, so the
// list is empty; the status line says why, with the count iwarpdump gives
// on standard error for the same file (1 TCP connection), and keeps it
// after a key. The whole capture says nothing of it.
func TestSnapHidden(t *testing.T) {
	const cut = "../../testdata/snaplen/crc_v2_rping_s60.pcap"
	for _, w := range []int{simW, 80} {
		h := start(t, cut, w, 24, false)
		status := h.text()[23]
		if !strings.HasPrefix(status, "1 TCP connection not shown: the snap length cut") {
			t.Errorf("width %d: status line %q", w, status)
		}
		h.keys("j")
		if !strings.Contains(h.text()[23], "snap length") {
			t.Errorf("width %d: the reason is gone after a key: %q", w, h.text()[23])
		}
	}
	if status := start(t, rping, simW, 24, false).text()[23]; strings.Contains(status, "snap length") {
		t.Errorf("whole capture: status line %q", status)
	}
}

// TestExtRecords: RoCE CM and SCTP records get a note in the octets pane
// and their frames' octets (their length as tshark's frame.len), and a
// DDP segment over SCTP is coloured by its RDMAP opcode like an FPDU:
// frame 12 of sctp-ddp.pcap is an RDMA Write (iwarpdump: "SCTP ... RDMA
// Write STag 0x00001000"), yellow as TCP RDMA Writes are.
func TestExtRecords(t *testing.T) {
	tests := []struct {
		file  string
		frame uint64
		note  string
		kind  model.Kind // the row's colour (view.KindColor)
	}{
		// Connection setup, coloured as MPA Request/Reply.
		{"../../testdata/rxe/rxe_v6_rej_app.pcap", 1, "a RoCE CM message", model.KindMPA},
		{"../../testdata/synthext/sctp-ddp.pcap", 5, "an SCTP session control message", model.KindMPA},
		{"../../testdata/synthext/sctp-ddp.pcap", 12, "a DDP segment over SCTP", model.KindWrite},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.file)+"/"+strconv.FormatUint(tc.frame, 10), func(t *testing.T) {
			h := open(t, tc.file)
			h.keys("g" + strconv.FormatUint(tc.frame, 10) + "{Enter}")
			if f := h.selectedFrame(); f != tc.frame {
				t.Fatalf("selected frame %d", f)
			}
			if h.find(tc.note) < 0 {
				t.Errorf("no note %q in the octets pane", tc.note)
			}
			n := tsharkFrameLen(t, tc.file, tc.frame)
			if h.find("frame "+strconv.FormatUint(tc.frame, 10)+": "+strconv.Itoa(n)+" octets") < 0 {
				t.Errorf("no %d octets of frame %d shown", n, tc.frame)
			}
			if k := h.app.St.List.Row(h.app.St.List.Selected()).Kind; k != tc.kind {
				t.Errorf("row kind %v, want %v", k, tc.kind)
			}
		})
	}
}

// TestEndpointFilter: Wireshark's endpoint fields work in the TUI's
// filter, whose records come back from its index (model.codec): the FPDUs
// from 192.0.2.2, and the DDP segments over SCTP from port 5000 (their
// messages marked as SCTP's), in the frames where tshark finds them.
func TestEndpointFilter(t *testing.T) {
	for _, c := range []struct{ file, ours, typ, ws string }{
		{rping, "ip.src == 192.0.2.2 && tcp.dstport == 7174 && rdmap", "fpdu", "ip.src == 192.0.2.2 && tcp.dstport == 7174 && iwarp_rdma"},
		{"../../testdata/synthext/sctp-ddp.pcap", "sctp.srcport == 5000 && !tcp.port", "ddp", "sctp.srcport == 5000 && sctp.data_payload_proto_id == 16 && !sctp.retransmission"},
		{"../../testdata/synthext/sctp-ddp.pcap", "tcp.port == 5000", "", ""},
	} {
		h := open(t, c.file)
		h.keys("/" + c.ours + "{Enter}")
		got := h.listFrames(c.typ)
		var want []uint64
		if c.ws != "" {
			want = tsharkFrames(t, c.file, c.ws)
		}
		if len(got) != len(want) || len(want) > 0 && !slices.Equal(slices.Compact(got), want) {
			t.Errorf("%s: %q: frames %v, tshark %v", filepath.Base(c.file), c.ours, got, want)
		}
	}
}

// TestLadderNarrow: at 80x24 the ladder fits: both lifelines of every
// message on screen, the ends named over them, the Read Responses'
// requests and latencies (tshark: the Read Requests and Responses of
// opcodes 1 and 2, the latency the difference of their times) in the
// last column, and the title line keeps the counts (50 frames, MANIFEST.md)
// however long the capture's path.
func TestLadderNarrow(t *testing.T) {
	h := openSize(t, rping, 80, 24)
	h.keys("f")
	h.golden("ladder_80x24", false, false)
	scr := h.text()
	if !strings.Contains(scr[0], "…/crc_v2_rping.pcap  50 frames, 73 records") {
		t.Errorf("title %q", scr[0])
	}
	if !strings.Contains(scr[1], "initiator on the left") || !strings.Contains(scr[2], "192.0.2.2:40531") || !strings.Contains(scr[2], "192.0.2.1:7174") {
		t.Errorf("title and header %q, %q", scr[1], scr[2])
	}
	rows := 0
	for _, l := range scr[3 : len(scr)-2] {
		if strings.TrimSpace(strings.Trim(l, "║")) == "" {
			continue
		}
		rows++
		if strings.Count(l, "├") != 1 || strings.Count(l, "┤") != 1 {
			t.Errorf("a lifeline is cut: %q", l)
		}
	}
	if rows != 19 { // 24 lines: the title, the box and its header, the status
		t.Errorf("%d message rows on screen, want 19", rows)
	}
	reqs := tsharkFrames(t, rping, "iwarp_rdma.opcode == 1")
	resps := tsharkFrames(t, rping, "iwarp_rdma.opcode == 2")
	times := map[uint64]int64{}
	for _, r := range tsharkRows(t, rping, "iwarp_rdma.opcode == 1 || iwarp_rdma.opcode == 2", "frame.number", "frame.time_epoch") {
		f, _ := strconv.ParseUint(r[0], 10, 64)
		times[f] = testutil.EpochNanos(t, r[1])
	}
	for i, rs := range resps {
		line := -1
		for j, l := range scr {
			if strings.HasPrefix(strings.TrimLeft(l, "║ "), strconv.FormatUint(rs, 10)+" ") {
				line = j
			}
		}
		if line < 0 {
			continue // below the screen
		}
		lat := time.Duration(times[reqs[i]] - times[rs]).Abs().Round(time.Microsecond)
		want := "req " + strconv.FormatUint(reqs[i], 10) + ", " + lat.String()
		if !strings.Contains(scr[line], want) {
			t.Errorf("Read Response %d: %q, want %q", rs, scr[line], want)
		}
	}
}

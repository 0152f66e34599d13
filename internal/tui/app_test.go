package tui

import (
	"context"
	"strconv"
	"strings"
	"testing"

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
	for _, b := range h.app.Ctl.Keys() {
		if b.Help != "" && h.find(b.Help) < 0 {
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

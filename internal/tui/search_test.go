package tui

import (
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/internal/tui/model"
)

const termBadWrite = "../../testdata/siw/term_badwrite.pcap"

// status returns the status line (the screen's last line).
func (h *harness) status() string {
	lines := h.text()
	return lines[len(lines)-1]
}

// treeCursor returns the screen line of the detail tree's current node.
func (h *harness) treeCursor() string {
	n := h.app.St.Tree.Current()
	if n == nil {
		return ""
	}
	lines := h.text()
	for _, l := range lines {
		if strings.Contains(l, n.Label) {
			return l
		}
	}
	return ""
}

// TestFindDetails: Find in the packet details (s, Tab) looks at the
// detail tree's labels, value names included, where the list search does
// not: "Terminate queue" is the name of queue 2, which tshark gives
// (iwarp_ddp.qn == 2) to frame 11 only, a Terminate whose row says
// "Terminate" but not "Terminate queue". The match selects the frame,
// puts the tree's cursor on ddp.qn, whose octets are tshark's, and the
// status line says where it is. "Invalid STag" is inside the collapsed
// rdmap.term: the search opens it.
func TestFindDetails(t *testing.T) {
	want := tsharkFrames(t, termBadWrite, "iwarp_ddp.qn == 2")
	if len(want) != 1 {
		t.Fatalf("tshark: queue 2 in frames %v", want)
	}
	h := open(t, termBadWrite)
	h.keys("sterminate queue{Enter}")
	if h.app.St.List.Selected() != 0 || !strings.Contains(h.status(), `"terminate queue" not found in the packet list`) {
		t.Errorf("list search: row %d, status %q", h.app.St.List.Selected(), h.status())
	}
	h.keys("s{Tab}")
	if h.find("Find in packet details [Tab: change]:") < 0 {
		t.Errorf("Tab does not switch the prompt to the details:\n%s", strings.Join(h.text()[len(h.text())-2:], "\n"))
	}
	h.keys("terminate queue{Enter}")
	if f := h.selectedFrame(); f != want[0] {
		t.Fatalf("details search: frame %d, tshark %d", f, want[0])
	}
	if n := h.app.St.Tree.Current(); n == nil || n.Path != "ddp.qn" {
		t.Fatalf("tree cursor on %+v, want ddp.qn", n)
	}
	if c := h.treeCursor(); !strings.Contains(c, "ddp.qn: 2 (Terminate queue)") {
		t.Errorf("the current node is not on screen: %q", c)
	}
	if s := h.status(); !strings.Contains(s, `"terminate queue" found in the packet details: frame 11 (row `) || !strings.Contains(s, "field ddp.qn") {
		t.Errorf("status %q", s)
	}
	h.sameAsTshark(termBadWrite, int(want[0]), "iwarp_ddp.qn")

	// Back to the first row, then a name inside a collapsed subtree.
	h.keys("[")
	if f := h.selectedFrame(); f == want[0] {
		t.Errorf("Back did not leave the match")
	}
	want = tsharkFrames(t, termBadWrite, "iwarp_rdma.term_errcode_ddp_tagged == 0")
	h.keys("sINVALID STAG{Enter}")
	if len(want) != 1 || h.selectedFrame() != want[0] {
		t.Fatalf("Invalid STag: frame %d, tshark %v", h.selectedFrame(), want)
	}
	if n := h.app.St.Tree.Current(); n == nil || n.Path != "rdmap.term.code" {
		t.Fatalf("tree cursor on %+v, want rdmap.term.code", n)
	}
	if c := h.treeCursor(); !strings.Contains(c, "rdmap.term.code: 0 (Invalid STag)") || h.find("▾ rdmap.term") < 0 {
		t.Errorf("rdmap.term not opened on the match: %q", c)
	}
	h.keys("n") // the only match: found again, after wrapping around
	if h.selectedFrame() != want[0] || !strings.Contains(h.status(), "found in the packet details") {
		t.Errorf("n: frame %d, %q", h.selectedFrame(), h.status())
	}
}

// TestFindBytes: Find in the packet bytes takes hex octets and finds them
// in the records' octets: the STag 0x07bf1600 that tshark shows as
// iwarp_ddp.stag of frame 10 (the RDMA Write) is matched there, with the
// tree's cursor on ddp.stag and the same octets lit up as tshark places
// them; "n" finds it next in the Terminate of frame 11, which carries
// the terminated segment's header. Text that is not hex is refused.
func TestFindBytes(t *testing.T) {
	want := tsharkFrames(t, termBadWrite, "iwarp_ddp.stag == 0x07bf1600")
	if len(want) != 1 {
		t.Fatalf("tshark: STag in frames %v", want)
	}
	h := open(t, termBadWrite)
	h.keys("s{Tab}{Tab}")
	if h.find("Find in packet bytes (hex) [Tab: change]:") < 0 {
		t.Errorf("Tab Tab does not switch the prompt to the bytes")
	}
	h.keys("07:bf:16:00{Enter}")
	if f := h.selectedFrame(); f != want[0] {
		t.Fatalf("bytes search: frame %d, tshark %d (%q)", f, want[0], h.status())
	}
	if n := h.app.St.Tree.Current(); n == nil || n.Path != "ddp.stag" {
		t.Fatalf("tree cursor on %+v, want ddp.stag", n)
	}
	h.sameAsTshark(termBadWrite, int(want[0]), "iwarp_ddp.stag")
	if s := h.status(); !strings.Contains(s, `"07:bf:16:00" found in the packet bytes: frame 10`) || !strings.Contains(s, "field ddp.stag") {
		t.Errorf("status %q", s)
	}
	h.keys("n")
	if f := h.selectedFrame(); f != 11 {
		t.Errorf("n: frame %d, want the Terminate (11)", f)
	}
	if n := h.app.St.Tree.Current(); n == nil || n.Path != "rdmap.term.ddp.stag" {
		t.Errorf("n: tree cursor on %+v, want rdmap.term.ddp.stag", n)
	}
	// The prompt opens on the scope of the last search; three Tabs come
	// back to it.
	h.keys("s{Tab}{Tab}{Tab}")
	if h.app.St.Scope != model.ScopeBytes || h.find("Find in packet bytes (hex)") < 0 {
		t.Errorf("three Tabs: scope %v, want the bytes again", h.app.St.Scope)
	}
	h.keys("xyz{Enter}")
	if !strings.Contains(h.status(), "hex octets") {
		t.Errorf("not hex: %q", h.status())
	}
}

package tui

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/iwarpkit/iwarpkit/internal/tui/model"
)

// key sends one key with modifiers (Alt-←).
func (h *harness) key(k tcell.Key, mod tcell.ModMask) {
	h.t.Helper()
	n := h.app.Ctl.Handled.Load()
	h.scr.InjectKey(k, 0, mod)
	h.waitHandled(n + 1)
}

// at fails unless the screen and the selected frame are as given.
func (h *harness) at(what string, screen model.Screen, frame uint64) {
	h.t.Helper()
	if s, f := h.app.St.Screen, h.selectedFrame(); s != screen || f != frame {
		h.t.Errorf("%s: screen %d, frame %d; want screen %d, frame %d (%s)", what, s, f, screen, frame, h.app.St.Message)
	}
}

// TestHistory: [ goes back to where each jump left from and ] forward
// again, as Wireshark's Go Back and Go Forward: go to frame, a search and
// its next match, the last record, but not the arrows. The RDMA Writes
// are in frames 13, 21 and 29 (tshark: iwarp_rdma.opcode 0), the last row
// is the connection summary at frame 50 (MANIFEST.md: 50 packets).
func TestHistory(t *testing.T) {
	h := open(t, rping)
	h.keys("g13{Enter}sRDMA Write{Enter}n")
	h.at("g13, s, n", model.ScreenMain, 29)
	h.keys("jj") // not jumps
	moved := h.selectedFrame()
	if b, _ := h.app.St.Hist.Len(); b != 3 {
		t.Errorf("%d places back after three jumps and two arrows, want 3", b)
	}
	h.keys("[")
	h.at("[ after n", model.ScreenMain, 21)
	if h.find("back to frame 21") < 0 {
		t.Errorf("status line does not say where: %q", h.text()[simH-1])
	}
	h.keys("[")
	h.at("[ after s", model.ScreenMain, 13)
	h.keys("[")
	h.at("[ after g", model.ScreenMain, 4)
	h.keys("[")
	h.at("[ at the start", model.ScreenMain, 4)
	if h.find("nothing back") < 0 {
		t.Error("no 'nothing back' at the start of the history")
	}
	h.keys("]]")
	h.at("]]", model.ScreenMain, 21)
	h.keys("]")
	h.at("] to where [ left", model.ScreenMain, moved)
	h.keys("]")
	if h.find("nothing forward") < 0 {
		t.Error("no 'nothing forward' at its end")
	}
	// A jump forgets the places forward.
	h.keys("[[{End}")
	h.at("End", model.ScreenMain, 50)
	h.keys("]")
	h.at("] after a new jump", model.ScreenMain, 50)
	// Alt-← and Alt-→ as in Wireshark.
	h.key(tcell.KeyLeft, tcell.ModAlt)
	h.at("Alt-←", model.ScreenMain, 13) // where End left from
	h.key(tcell.KeyRight, tcell.ModAlt)
	h.at("Alt-→", model.ScreenMain, 50)
	if w := tsharkFrames(t, rping, "iwarp_rdma.opcode == 0"); len(w) != 5 || w[0] != 13 || w[1] != 21 || w[2] != 29 {
		t.Errorf("tshark: RDMA Writes in %v", w)
	}
}

// TestHistoryFilter: the history outlives a display filter; a place whose
// record the filter hides is skipped, and the status line says so. The
// filter keeps the Read Requests of frames 9 and 17 (tshark:
// iwarp_rdma.opcode 1), not the RDMA Write of frame 13.
func TestHistoryFilter(t *testing.T) {
	h := open(t, rping)
	h.keys("g9{Enter}g13{Enter}g17{Enter}")
	h.keys("/rdmap.opcode == 1{Enter}")
	h.at("filter", model.ScreenMain, 17)
	h.keys("[")
	h.at("[ past the filtered-out frame 13", model.ScreenMain, 9)
	if h.find("1 filtered out, skipped") < 0 {
		t.Errorf("status line: %q", h.text()[simH-1])
	}
	h.keys("]")
	h.at("] past frame 13", model.ScreenMain, 17)
	// Without the filter, frame 13 is there again.
	h.keys("/")
	for range len("rdmap.opcode == 1") {
		h.keys("{Backspace}")
	}
	h.keys("{Enter}[")
	h.at("[ without the filter", model.ScreenMain, 13)
	// Only hidden places back: nothing moves, and the status line says why.
	h.keys("/rdmap.opcode == 0{Enter}")
	h.at("filter Writes", model.ScreenMain, 13)
	h.keys("[")
	if h.find("nothing back: 2 place(s) filtered out") < 0 {
		t.Errorf("status line: %q", h.text()[simH-1])
	}
	h.at("[ onto hidden places", model.ScreenMain, 13)
	want := tsharkFrames(t, rping, "iwarp_rdma.opcode == 1")
	if len(want) < 2 || want[0] != 9 || want[1] != 17 {
		t.Errorf("tshark: Read Requests in %v", want)
	}
}

// TestHistoryScreens: Back returns to the screen a jump left: the finding
// Enter jumped from, the ladder row, the connection. term_badwrite's
// Terminate is in frame 11 and terminates the RDMA Write of frame 10
// (tshark: iwarp_rdma.opcode 7 and 0); Enter on the tree's
// rdmap.term.segment_frame follows it there, and Back comes back.
func TestHistoryScreens(t *testing.T) {
	const term = "../../testdata/siw/term_badwrite.pcap"
	terms, writes := tsharkFrames(t, term, "iwarp_rdma.opcode == 7"), tsharkFrames(t, term, "iwarp_rdma.opcode == 0")
	if len(terms) != 1 || len(writes) != 1 {
		t.Fatalf("tshark: Terminates %v, Writes %v", terms, writes)
	}
	h := open(t, term)
	h.keys("e")
	for i := 0; i < h.app.X.NumFindings() && !strings.Contains(h.selectedFindingRow(), "rdmap.terminate"); i++ {
		h.keys("j")
	}
	sel := h.app.St.FindSel
	h.keys("{Enter}")
	h.at("Enter on the finding", model.ScreenMain, terms[0])
	h.keys("[")
	if h.app.St.Screen != model.ScreenFindings || h.app.St.FindSel != sel {
		t.Errorf("[: screen %d, finding %d; want the findings at %d", h.app.St.Screen, h.app.St.FindSel, sel)
	}
	h.keys("]")
	h.at("]", model.ScreenMain, terms[0])
	// A reference in the tree.
	h.keys("{Enter}")
	h.treeTo("rdmap.term")
	h.keys("l")
	h.treeTo("rdmap.term.segment_frame")
	h.keys("{Enter}")
	h.at("Enter on rdmap.term.segment_frame", model.ScreenMain, writes[0])
	h.keys("[")
	h.at("[ from the terminated segment", model.ScreenMain, terms[0])

	// The ladder and the connections.
	h = open(t, rping)
	h.keys("fjj")
	ladderRec := h.app.St.Ladder.SelectedRecord()
	h.keys("{Enter}")
	h.keys("[")
	if h.app.St.Screen != model.ScreenLadder || h.app.St.Ladder.SelectedRecord() != ladderRec {
		t.Errorf("[ after Enter in the ladder: screen %d, row of record %d; want the ladder at %d", h.app.St.Screen, h.app.St.Ladder.SelectedRecord(), ladderRec)
	}
	h.keys("c{Enter}")
	if h.app.St.List.Conn() != 0 {
		t.Fatal("Enter on the connection did not restrict the list")
	}
	h.keys("[")
	if h.app.St.Screen != model.ScreenConns {
		t.Errorf("[ after Enter on a connection: screen %d, want the connections", h.app.St.Screen)
	}
}

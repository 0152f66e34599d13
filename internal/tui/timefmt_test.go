package tui

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// rowTimes returns the frame and Time cell of every row of the list.
func (h *harness) rowTimes() (frames []uint64, times []string) {
	l := h.app.St.List
	for i := range l.Len() {
		frames = append(frames, h.app.X.Entry(l.Record(i)).Frame)
		times = append(times, l.Row(i).Time)
	}
	return frames, times
}

// inFrames is a tshark filter that displays exactly the frames given.
func inFrames(frames []uint64) string {
	var s []string
	for _, f := range frames {
		s = append(s, strconv.FormatUint(f, 10))
	}
	return "frame.number in {" + strings.Join(s, ", ") + "}"
}

// checkTimes compares the rows' times with tshark's, for the rows of dd
// only where the row before is of an earlier frame (tshark has one row a
// frame: a second record of the same frame is 0 seconds after the first).
// It returns tshark's times of every frame.
func checkTimes(t *testing.T, h *harness, file, fmtName, filter string) map[uint64]string {
	t.Helper()
	frames, times := h.rowTimes()
	all := testutil.TsharkTimes(t, file, fmtName, "", "TZ=America/Sao_Paulo")
	want := all
	if fmtName == "dd" {
		want = testutil.TsharkTimes(t, file, "dd", inFrames(frames))
	}
	checked := 0
	for i, f := range frames {
		if fmtName == "dd" && i > 0 && frames[i-1] >= f {
			if times[i] != "0.000000" {
				t.Errorf("%s -t dd %s: row %d, frame %d again: %q, want 0.000000", filepath.Base(file), filter, i, f, times[i])
			}
			continue
		}
		if w, ok := want[f]; !ok || w != times[i] {
			t.Errorf("%s -t %s %s: row %d, frame %d at %q, tshark %q", filepath.Base(file), fmtName, filter, i, f, times[i], w)
		}
		checked++
	}
	if checked < 5 {
		t.Errorf("%s -t %s %s: only %d rows checked", filepath.Base(file), fmtName, filter, checked)
	}
	return all
}

// TestTimeFormats: -t gives each row the time tshark -t of the same name
// gives its frame (absolute ones in UTC and in a local zone, TZ for
// tshark; seconds since the epoch and since the first packet of the
// capture), dd the time since the row shown before, also under a display
// filter (tshark's delta displayed, the frames of the rows displayed).
// The screen shows the times whole, at 140 and at 120 columns, and the
// ladder's Time column follows the format.
func TestTimeFormats(t *testing.T) {
	testutil.RequireTshark(t)
	testutil.LocalZone(t, "America/Sao_Paulo") // tshark runs with TZ=America/Sao_Paulo
	files := []string{rping, "../../testdata/siw/basic_ib_read_bw_4096_v2_nocrc.pcap", "../../testdata/synth/gap.pcap"}
	for _, file := range files {
		for _, name := range []string{"u", "ud", "a", "ad", "e", "r", "dd"} {
			tf, err := format.ParseTimeFormat(name)
			if err != nil {
				t.Fatal(err)
			}
			h := startWith(t, file, Options{Time: tf}, simW, simH, false)
			all := checkTimes(t, h, file, name, "")
			if file != rping {
				continue
			}
			// What the screen shows: the first rows' times, whole.
			_, times := h.rowTimes()
			for i := range 5 {
				if y := h.find(" " + times[i] + " "); y < 0 {
					t.Errorf("-t %s: row %d's time %q not on screen", name, i, times[i])
				}
			}
			if name == "dd" {
				h.keys("/rdmap.opcode == 1 || rdmap.opcode == 2{Enter}")
				checkTimes(t, h, file, name, "(filtered)")
			}
			h.keys("f")
			lr := h.app.St.X.LadderRow(h.app.St.Ladder.Record(2))
			if want := all[lr.Frame]; name != "dd" && h.find(" "+want+" ") < 0 {
				t.Errorf("-t %s: the ladder does not show frame %d's time %q", name, lr.Frame, want)
			}
		}
	}
	// The date formats are wide: at 120 columns the column still shows
	// the whole time.
	h := startWith(t, rping, Options{Time: format.TimeUTCDate}, 120, 40, false)
	_, times := h.rowTimes()
	if h.find(" "+times[0]+" ") < 0 {
		t.Errorf("-t ud at 120 columns: %q not on screen:\n%s", times[0], strings.Join(h.text(), "\n"))
	}
	if os.Getenv("IWARP_SHOW") != "" {
		t.Log("\n" + strings.Join(h.text(), "\n"))
	}
}

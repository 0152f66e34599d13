package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// textLine is a text line's frame and time (-t).
type textLine struct {
	frame uint64
	time  string
}

// textTimes runs iwarpdump and reads the frame and time of each record
// line (not the indented finding and tree lines).
func textTimes(t *testing.T, args ...string) []textLine {
	t.Helper()
	code, out, errs := runCmd(t, nil, args...)
	if code != 0 {
		t.Fatalf("iwarpdump %v: exit %d: %s", args, code, errs)
	}
	var lines []textLine
	for _, l := range strings.Split(out, "\n") {
		if l == "" || l[0] == ' ' {
			continue
		}
		f := strings.Fields(l)
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil || len(f) < 3 {
			t.Fatalf("line %q", l)
		}
		tm := f[1]
		if strings.Count(f[1], "-") == 2 { // a date: the time is the next field
			tm += " " + f[2]
		}
		lines = append(lines, textLine{n, tm})
	}
	if len(lines) < 5 {
		t.Fatalf("iwarpdump %v: %d lines", args, len(lines))
	}
	return lines
}

// TestTimeFormatsAsTshark: every -t format gives each line's record the
// time tshark's -t of the same name gives its frame: absolute ones in UTC
// and in a local zone (TZ), seconds since the epoch and since the first
// packet, with -j 1 and -j 2 (whose workers render the lines of the
// formats that need no other packet), on real captures and a merge of
// two. dd, since the previous line, is tshark's "delta displayed" with our
// lines' frames displayed, wherever the line's frame follows the previous
// line's.
func TestTimeFormatsAsTshark(t *testing.T) {
	testutil.RequireTshark(t)
	testutil.LocalZone(t, "America/Sao_Paulo") // tshark runs with TZ=America/Sao_Paulo
	files := []string{siw + "crc_v2_rping.pcap", siw + "crc_v2_iwtest_ops.pcap", siw + "basic_ib_read_bw_4096_v2_nocrc.pcap", "../../testdata/synth/gap.pcap"}
	for _, file := range files {
		for _, fmtName := range []string{"u", "ud", "a", "ad", "e", "r", "dd"} {
			want := testutil.TsharkTimes(t, file, fmtName, "", "TZ=America/Sao_Paulo")
			for _, j := range []string{"1", "2"} {
				lines := textTimes(t, "-r", file, "-t", fmtName, "-j", j)
				if fmtName == "dd" {
					var frames []string
					for _, l := range lines {
						frames = append(frames, strconv.FormatUint(l.frame, 10))
					}
					want = testutil.TsharkTimes(t, file, "dd", "frame.number in {"+strings.Join(frames, ", ")+"}")
				}
				checked := 0
				for i, l := range lines {
					if fmtName == "dd" && (i == 0 || lines[i-1].frame >= l.frame) {
						continue // not the frame tshark displayed before
					}
					if w, ok := want[l.frame]; !ok || w != l.time {
						t.Errorf("%s -t %s -j %s: frame %d at %q, tshark %q", filepath.Base(file), fmtName, j, l.frame, l.time, w)
					}
					checked++
				}
				if checked < 5 {
					t.Errorf("%s -t %s: only %d lines checked", filepath.Base(file), fmtName, checked)
				}
			}
		}
	}
	// tcpdump's spellings.
	for name, same := range map[string]string{"-tt": "e", "-ttt": "dd", "-tttt": "ad", "-ttttt": "r"} {
		_, a, _ := runCmd(t, nil, "-r", files[0], name)
		_, b, _ := runCmd(t, nil, "-r", files[0], "-t", same)
		if a != b {
			t.Errorf("%s differs from -t %s", name, same)
		}
	}
	// Files merged (read in chunks with -j 2; named by a glob): r counts
	// from the earlier first packet.
	single := textTimes(t, "-r", siw+"crc_v2_rping.pcap", "-t", "r")
	dir := t.TempDir()
	for _, f := range []string{"term_badwrite.pcap", "crc_v2_rping.pcap"} {
		data, err := os.ReadFile(siw + f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"-r", siw + "term_badwrite.pcap", "-r", siw + "crc_v2_rping.pcap"}, {"-r", filepath.Join(dir, "*.pcap")}} {
		for _, j := range []string{"1", "2"} {
			merged := textTimes(t, append(args, "-t", "r", "-j", j)...)
			if merged[0].time != single[0].time {
				t.Errorf("%v -j %s: merged -t r starts at %s, the earlier file alone at %s", args, j, merged[0].time, single[0].time)
			}
		}
	}
	// Standard input: from the first packet read.
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []string{"1", "2"} {
		_, a, _ := runCmd(t, data, "-r", "-", "-t", "r", "-j", j)
		_, b, _ := runCmd(t, nil, "-r", files[0], "-t", "r")
		if a != b {
			t.Errorf("-r - -t r -j %s differs from the file's", j)
		}
	}
	if code, _, errs := runCmd(t, nil, "-r", files[0], "-t", "x"); code != 2 || !strings.Contains(errs, "unknown time format") {
		t.Errorf("-t x: exit %d, %q", code, errs)
	}
}

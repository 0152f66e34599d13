package tui

import (
	"context"
	"math"
	"net/netip"
	"os/exec"
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

// statsText reads the statistics screen (shown) from its top to its end,
// a line at a time with j, and returns its lines: what is inside the
// border, trailing blanks removed.
func (h *harness) statsText() []string {
	h.t.Helper()
	h.keys("{Home}")
	var lines []string
	for range 200 {
		scr := h.text()
		top := -1
		for i, l := range scr {
			if strings.HasPrefix(l, "╔") || strings.HasPrefix(l, "┌") {
				top = i
				break
			}
		}
		if top < 0 {
			h.t.Fatalf("no statistics box:\n%s", strings.Join(scr, "\n"))
		}
		inner := []rune(scr[top+1])
		if len(inner) < 2 {
			h.t.Fatalf("statistics line %q", scr[top+1])
		}
		lines = append(lines, strings.TrimRight(string(inner[1:len(inner)-1]), " "))
		if strings.HasPrefix(scr[top+2], "╚") || strings.HasPrefix(scr[top+2], "└") {
			break
		}
		before := strings.Join(scr, "\n")
		h.keys("j")
		if strings.Join(h.text(), "\n") == before { // the last screenful: take the rest
			for _, l := range scr[top+2:] {
				if strings.HasPrefix(l, "╚") || strings.HasPrefix(l, "└") {
					break
				}
				r := []rune(l)
				lines = append(lines, strings.TrimRight(string(r[1:len(r)-1]), " "))
			}
			break
		}
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// tableOf returns the header and rows of the -z table in lines: the
// lines between the header (after the second rule) and the closing rule,
// split on runs of two or more spaces (iwarpdump's table layout).
func tableOf(t *testing.T, lines []string) (header []string, rows [][]string) {
	t.Helper()
	var rules []int
	for i, l := range lines {
		if strings.HasPrefix(l, "====") {
			rules = append(rules, i)
		}
	}
	if len(rules) < 3 {
		t.Fatalf("no table in:\n%s", strings.Join(lines, "\n"))
	}
	split := testutil.TableCells
	header = split(lines[rules[1]+1])
	for _, l := range lines[rules[1]+2 : rules[2]] {
		rows = append(rows, split(l))
	}
	return header, rows
}

// tsharkRows runs tshark -T fields with a display filter and returns the
// rows of tab-separated fields.
func tsharkRows(t *testing.T, path, filter string, fields ...string) [][]string {
	t.Helper()
	ts := testutil.RequireTshark(t)
	args := []string{"-n", "-r", path, "-Y", filter, "-T", "fields", "-E", "separator=/t"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command(ts, args...).Output()
	if err != nil {
		t.Fatalf("tshark %v: %v", args, err)
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if l == "" {
			continue
		}
		r := strings.Split(l, "\t")
		for len(r) < len(fields) {
			r = append(r, "")
		}
		rows = append(rows, r)
	}
	return rows
}

// opKey is a count of the opcode histogram: sender, receiver, opcode.
type opKey struct {
	src, dst netip.AddrPort
	op       string // "0x1"
}

// tsharkOps counts tshark's DDP/RDMAP segments (iwarp_rdma.opcode, one
// per segment) by sender, receiver and opcode, and returns the SYNs'
// initiators.
func tsharkOps(t *testing.T, path string) (map[opKey]int, map[netip.AddrPort]bool) {
	t.Helper()
	ops := map[opKey]int{}
	init := map[netip.AddrPort]bool{}
	for _, r := range tsharkRows(t, path, "iwarp_ddp_rdmap || (tcp.flags.syn == 1 && tcp.flags.ack == 0)",
		"ip.src", "tcp.srcport", "ip.dst", "tcp.dstport", "tcp.flags.syn", "tcp.flags.ack", "iwarp_rdma.opcode") {
		src := netip.MustParseAddrPort(r[0] + ":" + r[1])
		dst := netip.MustParseAddrPort(r[2] + ":" + r[3])
		if (r[4] == "1" || r[4] == "True") && (r[5] == "0" || r[5] == "False") {
			init[src] = true
		}
		if r[6] == "" {
			continue
		}
		for _, op := range strings.Split(r[6], ",") {
			n, err := strconv.ParseUint(strings.TrimPrefix(op, "0x"), 16, 8)
			if err != nil {
				t.Fatalf("tshark opcode %q", op)
			}
			ops[opKey{src, dst, "0x" + strconv.FormatUint(n, 16)}]++
		}
	}
	return ops, init
}

// TestStatsOps: z shows iwarpdump -z ops, the RDMAP opcode histogram per
// connection and direction, at 80x24, read by scrolling: every count is
// tshark's number of DDP/RDMAP segments (iwarp_rdma.opcode) of that
// opcode from that sender, the direction named from tshark's SYN (i2r:
// from the initiator), and the totals are tshark's per opcode.
func TestStatsOps(t *testing.T) {
	testutil.RequireTshark(t)
	for _, file := range []string{rping, "../../testdata/siw/basic_ib_read_bw_4096_v2_nocrc.pcap",
		"../../testdata/siw/crc_v2_iwtest_ops.pcap", "../../testdata/siw/term_badwrite.pcap", "../../testdata/siw/gso_v2_nocrc_ib_write_bw_200000.pcap"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			want, inits := tsharkOps(t, file)
			h := openSize(t, file, 80, 24)
			h.keys("z")
			if h.app.St.Screen != model.ScreenStats || h.find("-z ops") < 0 {
				t.Fatalf("z does not show -z ops:\n%s", strings.Join(h.text(), "\n"))
			}
			hdr, rows := tableOf(t, h.statsText())
			if strings.Join(hdr, "|") != "Conn|Dir|Opcode|Name|Segments|Payload octets" {
				t.Fatalf("header %q", hdr)
			}
			ends := map[string][2]netip.AddrPort{}
			for _, c := range h.app.X.Conns() {
				if c.Summary == nil || !c.Summary.InitiatorKnown {
					t.Fatalf("conn %d: no initiator known", c.ID)
				}
				ends[strconv.Itoa(c.ID)] = [2]netip.AddrPort{c.Summary.Initiator, c.Summary.Responder}
				if !inits[c.Summary.Initiator] {
					t.Errorf("conn %d: initiator %v did not send a SYN (tshark)", c.ID, c.Summary.Initiator)
				}
			}
			got := map[opKey]int{}
			totals := map[string]int{}
			for _, r := range rows {
				if len(r) != 6 {
					t.Fatalf("row %q", r)
				}
				n, err := strconv.Atoi(r[4])
				if err != nil {
					t.Fatalf("row %q", r)
				}
				if r[0] == "all" {
					totals[r[2]] += n
					continue
				}
				e, ok := ends[r[0]]
				if !ok {
					t.Fatalf("row %q: no such connection", r)
				}
				switch r[1] {
				case "i2r":
					got[opKey{e[0], e[1], r[2]}] += n
				case "r2i":
					got[opKey{e[1], e[0], r[2]}] += n
				default:
					t.Errorf("row %q: direction unknown", r)
				}
			}
			wantTotals := map[string]int{}
			for k, n := range want {
				wantTotals[k.op] += n
				if got[k] != n {
					t.Errorf("%v > %v opcode %s: %d segments, tshark %d", k.src, k.dst, k.op, got[k], n)
				}
			}
			for k, n := range got {
				if want[k] == 0 {
					t.Errorf("%v > %v opcode %s: %d segments, tshark none", k.src, k.dst, k.op, n)
				}
			}
			if len(want) == 0 || !mapsEqual(totals, wantTotals) {
				t.Errorf("totals %v, tshark %v", totals, wantTotals)
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestStatsLatency: 2 shows iwarpdump -z latency. Its numbers are
// tshark's: the k-th RDMA Read Request of a capture of one Reading
// connection is answered by the k-th Read Response to end (the segment
// with the DDP Last flag; RFC 5040 §4.4 keeps Read Responses in order),
// and its latency is the time between the two frames (frame.time_epoch):
// count, minimum, maximum and mean exact in microseconds, the
// percentiles within 1% of the nearest-rank ones. A Read ends with the
// frame that completes its last Read Response segment, the frame tshark
// shows a reassembled segment in.
func TestStatsLatency(t *testing.T) {
	testutil.RequireTshark(t)
	for _, file := range []string{rping, "../../testdata/siw/basic_ib_read_bw_4096_v2_nocrc.pcap"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			at := map[string]int64{}
			for _, r := range tsharkRows(t, file, "frame", "frame.number", "frame.time_epoch") {
				at[r[0]] = testutil.EpochNanos(t, r[1])
			}
			var reqs, resps []int64
			for _, r := range tsharkRows(t, file, "iwarp_ddp_rdmap", "frame.number", "iwarp_rdma.opcode", "iwarp_ddp.last_flag") {
				ops, last := strings.Split(r[1], ","), strings.Split(r[2], ",")
				for i, op := range ops {
					switch {
					case op == "0x01":
						reqs = append(reqs, at[r[0]])
					case op == "0x02" && i < len(last) && (last[i] == "1" || last[i] == "True"):
						resps = append(resps, at[r[0]])
					}
				}
			}
			if len(reqs) == 0 || len(reqs) != len(resps) {
				t.Fatalf("tshark: %d Read Requests, %d last Read Response segments", len(reqs), len(resps))
			}
			var lat []time.Duration
			var sum time.Duration
			for i := range reqs {
				lat = append(lat, time.Duration(resps[i]-reqs[i]))
				sum += lat[i]
			}
			slices.Sort(lat)
			us := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e3, 'f', 3, 64) }
			rank := func(q float64) time.Duration { return lat[max(int(math.Ceil(q*float64(len(lat))))-1, 0)] }

			h := openSize(t, file, 80, 24)
			h.keys("z2")
			hdr, rows := tableOf(t, h.statsText())
			if strings.Join(hdr, " ") != "Conn Reads Min P50 P90 P99 Max Mean" {
				t.Fatalf("header %q", hdr)
			}
			all := rows[len(rows)-1]
			if all[0] != "all" || all[1] != strconv.Itoa(len(lat)) || all[2] != us(lat[0]) || all[6] != us(lat[len(lat)-1]) ||
				all[7] != us(sum/time.Duration(len(lat))) {
				t.Errorf("row %q: tshark says %d Reads, min %s, max %s, mean %s µs", all, len(lat), us(lat[0]), us(lat[len(lat)-1]), us(sum/time.Duration(len(lat))))
			}
			for i, q := range []float64{0.5, 0.9, 0.99} {
				got, err := strconv.ParseFloat(all[3+i], 64)
				want := float64(rank(q)) / 1e3
				if err != nil || math.Abs(got-want) > 0.01*want+0.0005 {
					t.Errorf("p%v: %s µs, tshark's nearest rank %.3f µs", q*100, all[3+i], want)
				}
			}
		})
	}
}

// TestStatsFindings: 3 shows iwarpdump -z findings. term_badwrite has
// one Terminate, in frame 11 (tshark: iwarp_rdma.opcode 7): one
// rdmap.terminate finding there, an error. The total is the number of
// findings the findings screen (e) lists. At 80 columns the message is
// cut; → scrolls to its end; Esc closes the screen.
func TestStatsFindings(t *testing.T) {
	const file = "../../testdata/siw/term_badwrite.pcap"
	term := tsharkFrames(t, file, "iwarp_rdma.opcode == 7")
	h := openSize(t, file, 250, 40) // the whole width of the table
	h.keys("z3")
	lines := h.statsText()
	hdr, rows := tableOf(t, lines)
	if strings.Join(hdr, "|") != "Severity|Code|Count|First frame|Ref|Message" {
		t.Fatalf("header %q", hdr)
	}
	found := false
	for _, r := range rows {
		if len(r) >= 4 && r[1] == "rdmap.terminate" {
			found = true
			if r[0] != "error" || r[2] != strconv.Itoa(len(term)) || r[3] != strconv.FormatUint(term[0], 10) {
				t.Errorf("row %q: tshark has %d Terminate(s), the first in frame %v", r, len(term), term)
			}
		}
	}
	if !found {
		t.Errorf("no rdmap.terminate row in %q", rows)
	}
	total := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "total ") {
			total = l
		}
	}
	if want := "total " + strconv.Itoa(h.app.X.NumFindings()) + ":"; !strings.HasPrefix(total, want) {
		t.Errorf("%q, want %q (the findings screen's count)", total, want)
	}
	// At 80 columns the widest row is wider than the screen: → brings
	// its end in.
	h = openSize(t, file, 80, 24)
	h.keys("z3")
	full, err := h.app.St.Stats.Text(model.StatFindings)
	if err != nil {
		t.Fatal(err)
	}
	widest := ""
	for _, l := range strings.Split(full, "\n") {
		if len([]rune(l)) > len([]rune(widest)) {
			widest = l
		}
	}
	h.keys("{Home}")
	tail := string([]rune(widest)[max(len([]rune(widest))-20, 0):])
	if h.find(tail) >= 0 {
		t.Fatalf("the line %q ends on the screen at 80 columns: the scroll is not tested", widest)
	}
	for range 60 {
		before := strings.Join(h.text(), "\n")
		h.keys("{Right}")
		if strings.Join(h.text(), "\n") == before {
			break
		}
	}
	if h.find(tail) < 0 {
		t.Errorf("→ does not bring the end of the widest line %q in:\n%s", widest, strings.Join(h.text(), "\n"))
	}
	h.keys("{Home}")
	if h.find("Severity  Code") < 0 {
		t.Errorf("Home does not scroll back to the first column:\n%s", strings.Join(h.text(), "\n"))
	}
	h.keys("{Esc}")
	if h.app.St.Screen != model.ScreenMain {
		t.Error("Esc does not close the statistics")
	}
}

// TestStatsWhileIndexing: opened before the capture is indexed, the
// statistics say so, and show the whole capture's numbers once it is.
func TestStatsWhileIndexing(t *testing.T) {
	scr := tcell.NewSimulationScreen("UTF-8")
	app, err := New(rping, Options{Screen: scr, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	scr.SetSize(simW, simH)
	h := run(t, app, scr)
	h.keys("z")
	if h.find("indexing: 0% read, 0 records so far") < 0 {
		t.Errorf("before indexing:\n%s", strings.Join(h.text(), "\n"))
	}
	if err := app.Index(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.sync()
	if h.find("the whole capture, 73 records") < 0 {
		t.Errorf("after indexing:\n%s", strings.Join(h.text(), "\n"))
	}
	// crc_v2_rping: 5 RDMA Read Requests (MANIFEST.md), all from the
	// responder (tshark's iwarp_rdma.opcode 1 frames are from 192.0.2.1).
	if h.find("   0  r2i  0x1     RDMA Read Request          5") < 0 {
		t.Errorf("after indexing, no Read Request row:\n%s", strings.Join(h.text(), "\n"))
	}
}

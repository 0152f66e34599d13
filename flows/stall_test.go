package flows_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// pauseEdit makes a stall in a real capture: every frame after frame
// after (1-based) comes pause later; with resend, a copy of frame after
// comes at the end of the pause (a retransmission); with zeroWin, frame
// after advertises a zero window and its copy with the window it had
// comes at the end of the pause (the window opened again).
//
// With backoff, the copy is sent backoff more times, each after twice the
// pause before it, as a retransmission timer backs off (RFC 6298 §5.5);
// with zeroWin, the copies but the last keep the zero window, as the
// answers to window probes do.
//
// With hang, the connection's frames after frame after are dropped and
// the capture ends pause later with a frame of another connection: a
// stall that never ended (after the copies, with resend).
type pauseEdit struct {
	after   int
	pause   time.Duration
	resend  bool
	backoff int
	zeroWin bool
	hang    bool
}

// TestStallAsTshark: pauses put into real siw captures, each after a
// frame chosen for what is owed at that point (octets not acknowledged,
// an RDMA Read Request not answered, a zero window, or nothing), and
// some ending in a retransmission or a window opened again. Each
// tcp.stall finding must be the one tshark's view of the edited capture
// calls for: its frames, the pause (tcp.time_delta), the octets in flight
// (tcp.analysis.bytes_in_flight of the side's last data frame, unless a
// frame acknowledged it: tcp.analysis.acks_frame), the Read Requests
// (iwarp_rdma.opcode 1) not yet answered by a last Read Response (opcode
// 2, iwarp_ddp.last_flag), the zero window (tcp.analysis.zero_window) and
// what ended it (tcp.analysis.retransmission, tcp.analysis.window_update,
// tcp.len, tcp.ack); and no other frame has one.
func TestStallAsTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	for _, tc := range []struct {
		file  string
		edits []pauseEdit
		want  int // stalls expected (tshark's view decides which)
	}{
		// crc_v2_rping: 9 is a Read Request (52 octets in flight), 14 leaves
		// 124 octets in flight (a pure ACK ends the pause), 7 leaves nothing
		// owed (no stall), 13 is resent, 15 is a pure ACK made a zero
		// window, 33 is another Read Request.
		{"siw/crc_v2_rping.pcap", []pauseEdit{{after: 7, pause: time.Second}, {after: 9, pause: 1500 * time.Millisecond},
			{after: 13, pause: 300 * time.Millisecond, resend: true}, {after: 14, pause: 2 * time.Second},
			{after: 15, pause: 700 * time.Millisecond, zeroWin: true}, {after: 33, pause: 250 * time.Millisecond}}, 5},
		// crc_v2_iwtest_ops: 16 is a Read Request, 21 leaves 2,896 octets in
		// flight, 11 leaves 208 from one side, 4 is the MPA Request.
		{"siw/crc_v2_iwtest_ops.pcap", []pauseEdit{{after: 4, pause: time.Second}, {after: 11, pause: time.Second},
			{after: 16, pause: 3 * time.Second}, {after: 21, pause: 400 * time.Millisecond, resend: true}}, 4},
		// Stalls that never end: the connection's last frame is a Read
		// Request (9), leaves 2,896 octets in flight (21), or owes nothing
		// (7); then 200 ms is not reached (another connection's frame comes
		// 150 ms after 9).
		{"siw/crc_v2_rping.pcap", []pauseEdit{{after: 9, pause: 4 * time.Second, hang: true}}, 1},
		{"siw/crc_v2_iwtest_ops.pcap", []pauseEdit{{after: 21, pause: 900 * time.Millisecond, hang: true}}, 1},
		{"siw/crc_v2_rping.pcap", []pauseEdit{{after: 7, pause: 3 * time.Second, hang: true}}, 0},
		{"siw/crc_v2_rping.pcap", []pauseEdit{{after: 9, pause: 150 * time.Millisecond, hang: true}}, 0},
		// A retransmission timer backing off: 21 is resent after 0.2,
		// 0.4, 0.8 and 1.6 s; then the receiver acknowledges it, or the
		// capture ends 0.3 s after the last copy. One episode each, whose
		// first pause and whole length are reported.
		{"siw/crc_v2_iwtest_ops.pcap", []pauseEdit{{after: 21, pause: 200 * time.Millisecond, resend: true, backoff: 3}}, 2},
		{"siw/crc_v2_iwtest_ops.pcap", []pauseEdit{{after: 21, pause: 200 * time.Millisecond, resend: true, backoff: 3, hang: true}}, 2},
		// A zero window advertised again 0.3 s later, and opened 0.6 s
		// after that: one episode of two pauses.
		{"siw/crc_v2_rping.pcap", []pauseEdit{{after: 15, pause: 300 * time.Millisecond, zeroWin: true, backoff: 1}}, 2},
		// Pauses shorter than 200 ms are not stalls.
		{"siw/crc_v2_rping.pcap", []pauseEdit{{after: 9, pause: 150 * time.Millisecond}, {after: 14, pause: 190 * time.Millisecond}}, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			frames, times, _ := captureFrames(t, filepath.Join("..", "testdata", tc.file))
			frames, times = applyPauses(frames, times, tc.edits)
			path, data := writePcap(t, "paused.pcap", frames, times)
			want := tsharkStalls(t, tshark, path)
			if len(want) != tc.want {
				t.Fatalf("tshark's view calls for %d stalls, the case expects %d: %v", len(want), tc.want, want)
			}
			for _, workers := range []int{0, 2, -2} {
				got := map[string]string{}
				for _, r := range recordsWith(t, data, workers) {
					if r.Type != flows.RecFinding || r.Finding.Code != "tcp.stall" {
						continue
					}
					got[fmt.Sprint(r.Finding.Frames)] = r.Finding.Msg
					if workers == 0 {
						t.Logf("frames %v: %s", r.Finding.Frames, r.Finding.Msg)
					}
					if r.Frame != r.Finding.Frames[0] || r.Finding.Severity.String() != "warning" {
						t.Errorf("stall at frame %d, severity %v: %+v", r.Frame, r.Finding.Severity, r.Finding)
					}
				}
				for k, w := range want {
					if got[k] != w {
						t.Errorf("workers %d: stall %s:\n got %q\nwant %q", workers, k, got[k], w)
					}
				}
				for k, g := range got {
					if _, ok := want[k]; !ok {
						t.Errorf("workers %d: stall %s not called for: %q", workers, k, g)
					}
				}
			}
		})
	}
}

// applyPauses makes the edits (in frame order) to a capture's frames.
func applyPauses(frames [][]byte, times []time.Time, edits []pauseEdit) ([][]byte, []time.Time) {
	var f2 [][]byte
	var t2 []time.Time
	var shift time.Duration
	for i, f := range frames {
		k := slices.IndexFunc(edits, func(e pauseEdit) bool { return e.after == i+1 })
		if k < 0 {
			f2, t2 = append(f2, f), append(t2, times[i].Add(shift))
			continue
		}
		e := edits[k]
		orig := f
		if e.zeroWin {
			f = setWindow(f, 0)
		}
		f2, t2 = append(f2, f), append(t2, times[i].Add(shift))
		shift += e.pause
		if e.resend || e.zeroWin {
			for b, p := 0, e.pause; ; b++ {
				c := orig
				if e.zeroWin && b < e.backoff {
					c = f // the zero window again, as a window probe's answer
				}
				f2, t2 = append(f2, c), append(t2, times[i].Add(shift))
				if b == e.backoff {
					break
				}
				p *= 2
				shift += p
			}
		}
		if e.hang {
			// A SYN from another address (IPv4 over Ethernet), which -j 2
			// hands to the other worker.
			other := bytes.Clone(frames[0])
			other[14+15] ^= 0x40
			if !e.resend {
				shift -= e.pause
			}
			return append(f2, other), append(t2, times[i].Add(shift+e.pause))
		}
	}
	return f2, t2
}

// setWindow returns a copy of an Ethernet/IPv4 TCP frame with its window
// field set to w.
func setWindow(frame []byte, w uint16) []byte {
	f := bytes.Clone(frame)
	off := 14 + int(f[14]&15)*4
	binary.BigEndian.PutUint16(f[off+14:], w)
	return f
}

// tsFrame is tshark's view of a frame of a capture of one TCP connection.
type tsFrame struct {
	n               int
	delta, at       time.Duration // tcp.time_delta, frame.time_relative
	src             string
	seq, ack, len   uint64
	ackFlag         bool
	fin, rst        bool
	inFlight        uint64
	acks            int // the data frame it acknowledges (tcp.analysis.acks_frame), or 0
	retrans, zeroWn bool
	winUpdate       bool
	ops, lasts      []string
}

// tsharkStalls returns the tcp.stall findings tshark's view of a capture
// of one iWARP connection calls for, keyed by their frames ("[end
// before]"): see TestStallAsTshark.
func tsharkStalls(t *testing.T, tshark, path string) map[string]string {
	t.Helper()
	fields := []string{"frame.number", "tcp.time_delta", "tcp.stream", "frame.time_relative", "ip.src", "tcp.srcport", "tcp.seq_raw", "tcp.ack_raw", "tcp.len",
		"tcp.flags.ack", "tcp.flags.fin", "tcp.flags.reset", "tcp.analysis.bytes_in_flight", "tcp.analysis.acks_frame",
		"tcp.analysis.retransmission", "tcp.analysis.zero_window", "tcp.analysis.window_update", "iwarp_rdma.opcode", "iwarp_ddp.last_flag"}
	args := []string{"-r", path, "-o", "tcp.calculate_timestamps:TRUE", "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command(tshark, args...).Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var fr []tsFrame
	var end tsFrame // the capture's last frame, of whichever connection
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		c := strings.Split(l, "\t")
		for len(c) < len(fields) {
			c = append(c, "")
		}
		rel, err := strconv.ParseFloat(c[3], 64)
		if err != nil {
			t.Fatalf("tshark line %q", l)
		}
		end = tsFrame{at: time.Duration(math.Round(rel * 1e9))}
		end.n, _ = strconv.Atoi(c[0])
		if c[2] != "0" {
			continue // another connection's frame (a hang case's last)
		}
		c = append(c[:2], c[4:]...)
		num := func(i int) uint64 { v, _ := strconv.ParseUint(c[i], 10, 64); return v }
		split := func(i int) []string {
			if c[i] == "" {
				return nil
			}
			return strings.Split(c[i], ",")
		}
		d, err := strconv.ParseFloat(c[1], 64)
		if err != nil {
			t.Fatalf("tshark line %q", l)
		}
		fr = append(fr, tsFrame{n: int(num(0)), delta: time.Duration(d*1e9 + 0.5), at: end.at, src: c[2] + ":" + c[3],
			seq: num(4), ack: num(5), len: num(6), ackFlag: c[7] == "1", fin: c[8] == "1", rst: c[9] == "1",
			inFlight: num(10), acks: int(num(11)), retrans: c[12] != "", zeroWn: c[13] != "", winUpdate: c[14] != "",
			ops: split(15), lasts: split(16)})
	}
	a := fr[0].src // the side seen first
	want := map[string]string{}
	// owedAfter says what was owed once the frames before had passed.
	owedAfter := func(before []tsFrame) []string {
		var owed []string
		// Octets in flight from each side, a's first: its last data
		// frame's, unless a later frame acknowledged that frame.
		sides := []string{a}
		for _, f := range fr {
			if f.src != a {
				sides = append(sides, f.src)
				break
			}
		}
		for _, s := range sides {
			last := -1
			for j, f := range before {
				if f.src == s && f.len > 0 {
					last = j
				}
			}
			if last < 0 {
				continue
			}
			acked := slices.ContainsFunc(before[last+1:], func(f tsFrame) bool { return f.src != s && f.acks == before[last].n })
			if !acked && before[last].inFlight > 0 {
				owed = append(owed, plural(int(before[last].inFlight), "octet")+" from "+s+" unacknowledged")
			}
		}
		// A zero window: the side's last frame advertised it.
		for _, s := range sides {
			for j := len(before) - 1; j >= 0; j-- {
				if before[j].src == s {
					if before[j].zeroWn {
						owed = append(owed, s+" advertising a zero window")
					}
					break
				}
			}
		}
		// Read Requests not yet answered by a last Read Response of the
		// other side, answered in order.
		reqs := map[string][]int{}
		var open []int
		for _, f := range before {
			for k, op := range f.ops {
				switch {
				case op == "0x01":
					reqs[f.src] = append(reqs[f.src], f.n)
				case op == "0x02" && k < len(f.lasts) && f.lasts[k] == "1":
					for s := range reqs {
						if s != f.src && len(reqs[s]) > 0 {
							reqs[s] = reqs[s][1:]
						}
					}
				}
			}
		}
		for _, r := range reqs {
			open = append(open, r...)
		}
		slices.Sort(open)
		if len(open) > 0 {
			owed = append(owed, plural(len(open), "RDMA Read Request")+" unanswered (the oldest in frame "+strconv.Itoa(open[0])+")")
		}
		return owed
	}
	// endOf says what frame e, after the frames before, did to the stall.
	endOf := func(e tsFrame, before []tsFrame) string {
		prevAck := uint64(0)
		for _, f := range before {
			if f.src == e.src && f.ackFlag {
				prevAck = f.ack
			}
		}
		switch {
		case e.rst:
			return "it ended with a reset from " + e.src
		case e.retrans:
			return "then " + e.src + " sent seq " + strconv.FormatUint(e.seq, 10) + " again (a retransmission: octets or their acknowledgement were lost)"
		case e.winUpdate:
			return "it ended when " + e.src + " opened its window again"
		case e.fin:
			return "it ended when " + e.src + " closed its side (FIN)"
		case e.len > 0:
			return "it ended when " + e.src + " sent new octets"
		case e.ackFlag && e.ack > prevAck:
			return "it ended when " + e.src + " acknowledged octets"
		}
		return "then a segment from " + e.src + " carried nothing new"
	}
	progress := func(e tsFrame, before []tsFrame) bool {
		return !strings.HasPrefix(endOf(e, before), "then ")
	}
	// An episode: a stall whose first pause a frame without progress
	// ended (a retransmission, a probe), with the pauses after it until a
	// frame makes progress; reported once more at its end when it had
	// more than one pause.
	var ep struct {
		open                   bool
		frame, before          int
		start                  time.Duration
		pauses, resent, probes int
	}
	count := func(e tsFrame) {
		if e.len > 0 && e.retrans {
			ep.resent++
		} else {
			ep.probes++
		}
	}
	went := func(now time.Duration) string {
		msg := "the stall of frame " + strconv.Itoa(ep.frame) + " went on: no progress for " + strconv.FormatFloat((now-ep.start).Seconds(), 'f', 6, 64) +
			" s after frame " + strconv.Itoa(ep.before) + " (" + plural(ep.pauses, "pause") + " of 200 ms or more"
		if ep.resent > 0 {
			msg += ", " + plural(ep.resent, "retransmission") + " not acknowledged"
		}
		switch {
		case ep.probes == 1:
			msg += ", 1 window probe or duplicate acknowledgement"
		case ep.probes > 1:
			msg += ", " + strconv.Itoa(ep.probes) + " window probes or duplicate acknowledgements"
		}
		return msg + ")"
	}
	closeEp := func(e tsFrame, before []tsFrame) {
		if ep.pauses > 1 {
			want[fmt.Sprint([]uint64{uint64(e.n), uint64(ep.frame)})] = went(e.at) + "; " + endOf(e, before)
		}
		ep.open = false
	}
	for i := 1; i < len(fr); i++ {
		e := fr[i]
		before := fr[:i]
		if e.delta < 200*time.Millisecond {
			if ep.open {
				if progress(e, before) {
					closeEp(e, before)
				} else {
					count(e)
				}
			}
			continue
		}
		owed := owedAfter(before)
		switch {
		case len(owed) == 0:
			if ep.open {
				closeEp(e, before)
			}
		case ep.open:
			ep.pauses++
			if progress(e, before) {
				closeEp(e, before)
			} else {
				count(e)
			}
		default:
			prev := before[len(before)-1]
			key := fmt.Sprint([]uint64{uint64(e.n), uint64(prev.n)})
			want[key] = "no packet for " + strconv.FormatFloat(e.delta.Seconds(), 'f', 6, 64) + " s while " + strings.Join(owed, ", ") + "; " + endOf(e, before)
			if !progress(e, before) {
				ep.open, ep.frame, ep.before, ep.start, ep.pauses, ep.resent, ep.probes = true, e.n, prev.n, prev.at, 1, 0, 0
				count(e)
			}
		}
	}
	// A stall to the end of the capture: from the connection's last frame
	// to the capture's; or the episode still open, from its start.
	last := fr[len(fr)-1]
	if gap := end.at - last.at; gap >= 200*time.Millisecond || ep.open {
		if owed := owedAfter(fr); len(owed) > 0 {
			until := " until the end of the capture (frame " + strconv.Itoa(end.n) + ") while " + strings.Join(owed, ", ") +
				"; nothing moved again while the capture ran"
			msg := "no packet for " + strconv.FormatFloat(gap.Seconds(), 'f', 6, 64) + " s" + until
			if ep.open {
				msg = went(end.at) + until
			}
			want[fmt.Sprint([]uint64{uint64(last.n)})] = msg
		}
	}
	return want
}

// plural prints n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// TestReleaseBefore: the records held behind a message still open (an
// RDMA Write whose last segment is lost, on a connection left open) come
// out when ReleaseBefore passes their time, out of frame order, as a live
// capture needs; those of later frames than the time stay held.
func TestReleaseBefore(t *testing.T) {
	c := baseConn(40100)
	c.MaxULPDU = 512
	c.Ops = []synth.Op{{Dir: synth.I2R, Kind: synth.Write, Size: 4096, STag: 0x51},
		{Dir: synth.R2I, Kind: synth.Send, Size: 16}}
	c.Impair.Drop = []synth.SegRef{{Dir: synth.I2R, Index: 8}} // the Write's last segment (index 0: the MPA Request)
	c.Close.Kind = synth.CloseNone
	pkts := testutil.ReadPackets(generate(t, []synth.Conn{c}))
	var got []*flows.Record
	d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) { got = append(got, r) })
	for i := range pkts {
		d.Packet(&pkts[i])
	}
	sends := func() int {
		n := 0
		for _, r := range got {
			if r.Type == flows.RecFPDU && r.FPDU.SegOK && r.FPDU.Seg.Opcode == rdmap.OpSend {
				n++
			}
		}
		return n
	}
	if sends() != 0 {
		t.Fatalf("the Send came out before its time: the test does not hold it")
	}
	last := pkts[len(pkts)-1].TS
	d.ReleaseBefore(pkts[0].TS) // nothing is that old
	if sends() != 0 {
		t.Errorf("ReleaseBefore(the first packet's time) let the Send out")
	}
	d.ReleaseBefore(last.Add(time.Nanosecond))
	if sends() != 1 || d.Unordered() == 0 {
		t.Errorf("after ReleaseBefore: %d Sends out, %d records out of order", sends(), d.Unordered())
	}
	held := len(got)
	d.Close()
	if len(got) <= held {
		t.Errorf("Close emitted nothing more (the Write's message record)")
	}
}

// TestTCPHealthAsTshark: the TCP counts of every conn record
// (ConnSummary.TCP) against tshark's flags on the frames of the same TCP
// stream: segments sent again or overtaken (tcp.analysis.retransmission,
// fast_retransmission, spurious_retransmission, out_of_order; SYNs are not
// counted), zero windows (tcp.analysis.zero_window), and the tcp.stall
// findings of the connection. The captures: generated connections with
// segments duplicated, reordered, sent again with other octets, or lost
// from the capture, and a real one with pauses, resends, a zero window
// and a stall to the end of the capture.
func TestTCPHealthAsTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	var conns []synth.Conn
	for i, im := range []synth.Impairments{
		{Duplicate: []synth.SegRef{{Dir: synth.I2R, Index: 2}, {Dir: synth.I2R, Index: 4}, {Dir: synth.R2I, Index: 1}}},
		{Reorder: []synth.SegRef{{Dir: synth.I2R, Index: 3}}},
		{Conflict: []synth.SegRef{{Dir: synth.I2R, Index: 2}}, Duplicate: []synth.SegRef{{Dir: synth.I2R, Index: 5}}},
		{Drop: []synth.SegRef{{Dir: synth.I2R, Index: 3}}},
		{},
	} {
		c := baseConn(41000 + uint16(i))
		c.MaxULPDU = 512
		c.Ops = []synth.Op{{Dir: synth.I2R, Kind: synth.Write, Size: 4096, STag: 0x51},
			{Dir: synth.R2I, Kind: synth.Send, Size: 600}, {Dir: synth.I2R, Kind: synth.Send, Size: 16}}
		c.Impair = im
		conns = append(conns, c)
	}
	gen := generate(t, conns)
	frames, times, _ := captureFrames(t, filepath.Join("..", "testdata", "siw", "crc_v2_rping.pcap"))
	frames, times = applyPauses(frames, times, []pauseEdit{{after: 13, pause: 300 * time.Millisecond, resend: true},
		{after: 14, pause: 2 * time.Second}, {after: 15, pause: 700 * time.Millisecond, zeroWin: true},
		{after: 33, pause: 250 * time.Millisecond, hang: true}})
	genPath := filepath.Join(t.TempDir(), "gen.pcap")
	if err := os.WriteFile(genPath, gen, 0o644); err != nil {
		t.Fatal(err)
	}
	realPath, realData := writePcap(t, "paused.pcap", frames, times)
	checked := 0
	for _, c := range []struct {
		path string
		data []byte
	}{{genPath, gen}, {realPath, realData}} {
		// tshark's counts per TCP stream.
		type counts struct{ retrans, zeroWin, stalls int }
		want := map[int]*counts{}
		out, err := exec.Command(tshark, "-r", c.path, "-T", "fields", "-e", "tcp.stream", "-e", "tcp.flags.syn",
			"-e", "tcp.analysis.retransmission", "-e", "tcp.analysis.fast_retransmission", "-e", "tcp.analysis.spurious_retransmission",
			"-e", "tcp.analysis.out_of_order", "-e", "tcp.analysis.zero_window").Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
			f := strings.Split(l, "\t")
			for len(f) < 7 {
				f = append(f, "")
			}
			s, err := strconv.Atoi(f[0])
			if err != nil {
				continue // not TCP (the hang case's last frame is)
			}
			if want[s] == nil {
				want[s] = &counts{}
			}
			if f[1] != "1" && (f[2] != "" || f[3] != "" || f[4] != "" || f[5] != "") {
				want[s].retrans++
			}
			if f[6] != "" {
				want[s].zeroWin++
			}
		}
		for _, workers := range []int{0, 2, -2} {
			got := map[int]*counts{}
			stalls := map[int]int{}
			for _, r := range recordsWith(t, c.data, workers) {
				s, ok := r.TCPStream()
				switch {
				case !ok:
				case r.Type == flows.RecConn:
					h := r.Summary.TCP
					got[int(s)] = &counts{h.Retransmissions, h.ZeroWindows, h.Stalls}
				case r.Type == flows.RecFinding && r.Finding.Code == "tcp.stall":
					stalls[int(s)]++
				}
			}
			for s, g := range got {
				w := want[s]
				if w == nil {
					t.Errorf("%s, workers %d: stream %d unknown to tshark", filepath.Base(c.path), workers, s)
					continue
				}
				w.stalls = stalls[s]
				if *g != *w {
					t.Errorf("%s, workers %d: stream %d: retransmissions, zero windows, stalls %v, tshark and the findings %v",
						filepath.Base(c.path), workers, s, *g, *w)
				}
				if workers == 0 {
					t.Logf("%s: stream %d: %+v", filepath.Base(c.path), s, *g)
					checked++
				}
			}
		}
	}
	if checked < 6 {
		t.Errorf("%d connections checked", checked)
	}
}

// TestOneDirectionReads: in a capture of one direction of a real
// connection (the client's, whose two Reads the server answered in the
// direction not captured), no Read is called unanswered, and no stall
// made of them.
func TestOneDirectionReads(t *testing.T) {
	frames, times, _ := captureFrames(t, filepath.Join("..", "testdata", "siw", "crc_v2_iwtest_ops.pcap"))
	var f2 [][]byte
	var t2 []time.Time
	for i, f := range frames {
		off := 14 + int(f[14]&15)*4
		if binary.BigEndian.Uint16(f[off:]) == 55040 { // the client's port
			f2, t2 = append(f2, f), append(t2, times[i])
		}
	}
	if len(f2) < 20 || len(f2) == len(frames) {
		t.Fatalf("%d of %d frames from the client", len(f2), len(frames))
	}
	_, data := writePcap(t, "client.pcap", f2, t2)
	reads := 0
	for _, r := range recordsWith(t, data, 0) {
		if r.Type == flows.RecFPDU && r.FPDU.SegOK && r.FPDU.Seg.Opcode == rdmap.OpReadRequest {
			reads++
		}
		if r.Type == flows.RecFinding && (r.Finding.Code == "rdmap.read_unanswered" || r.Finding.Code == "tcp.stall") {
			t.Errorf("%s: %s", r.Finding.Code, r.Finding.Msg)
		}
	}
	if reads != 2 {
		t.Errorf("%d Read Requests decoded, want the client's 2", reads)
	}
}

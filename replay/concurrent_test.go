package replay

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// replayedSpans returns the spans of the connections of a capture of a
// replay (the First and End of its scripts, from the first one's Start)
// and their first records' offsets, by the recorded initiator port that
// port maps the capture's initiator to.
func replayedSpans(t testing.TB, ss []*Script, port func(*Script) uint16) (spans map[uint16]span, starts map[uint16]time.Duration) {
	t.Helper()
	var t0 time.Time
	for _, s := range ss {
		if t0.IsZero() || s.Start.Before(t0) {
			t0 = s.Start
		}
	}
	spans, starts = map[uint16]span{}, map[uint16]time.Duration{}
	for _, s := range ss {
		p := port(s)
		spans[p] = span{s.First.Sub(t0), s.End.Sub(t0)}
		starts[p] = s.Start.Sub(t0)
	}
	return spans, starts
}

// checkTiming compares what a replay at speed did with the truth: the
// connections that overlapped overlap (by at least a quarter of the time
// they shared, scaled), the others do not; and each connection's first
// record comes at its recorded offset from the first connection's, divided
// by speed (0: untimed, not checked), no earlier than early before it and
// no later than late after it. It logs the measured errors.
func checkTiming(t *testing.T, what string, speed float64, truth, got map[uint16]span, starts map[uint16]time.Duration, early, late time.Duration) {
	t.Helper()
	ports := slices.Sorted(func(yield func(uint16) bool) {
		for p := range truth {
			if !yield(p) {
				return
			}
		}
	})
	if len(got) != len(truth) {
		t.Fatalf("%s: %d connections replayed, %d recorded", what, len(got), len(truth))
	}
	scale := func(d time.Duration) time.Duration {
		if speed <= 0 {
			return d
		}
		return time.Duration(float64(d) / speed)
	}
	var errs []string
	for _, p := range ports {
		if _, ok := got[p]; !ok {
			t.Fatalf("%s: no replay of the connection from port %d", what, p)
		}
		if speed > 0 {
			want := scale(truth[p].start)
			d := starts[p] - want
			errs = append(errs, fmt.Sprintf("%d: %+.1fms", p, float64(d)/1e6))
			if d < -early || d > late {
				t.Errorf("%s: connection from port %d starts at %v, want %v (recorded %v at speed %v; tolerance -%v +%v)",
					what, p, starts[p], want, truth[p].start, speed, early, late)
			}
		}
	}
	var ov []string
	for i, a := range ports {
		for _, b := range ports[i+1:] {
			rec, rep := overlap(truth[a], truth[b]), overlap(got[a], got[b])
			ov = append(ov, fmt.Sprintf("%d/%d %.0fms", a, b, float64(rep)/1e6))
			switch {
			case rec > 0 && (rep <= 0 || speed > 0 && rep < scale(rec)/4):
				t.Errorf("%s: connections from ports %d and %d shared %v in the recording, %v in the replay (spans %v and %v)",
					what, a, b, rec, rep, got[a], got[b])
			case rec <= 0 && rep >= 0:
				t.Errorf("%s: connections from ports %d and %d did not overlap in the recording, %v in the replay (spans %v and %v)",
					what, a, b, rep, got[a], got[b])
			}
		}
	}
	t.Logf("%s: start errors %s; overlaps (negative: gaps) %s", what, strings.Join(errs, ", "), strings.Join(ov, ", "))
}

// sameMessages checks that the replayed scripts carry the recorded
// messages (opcode, length, payload digest, order per direction), by the
// recorded initiator port.
func sameMessages(t *testing.T, what string, orig []*Script, again []*Script, port func(*Script) uint16) {
	t.Helper()
	byPort := map[uint16]*Script{}
	for _, s := range again {
		byPort[port(s)] = s
	}
	for _, o := range orig {
		g := byPort[o.Initiator.Port()]
		if g == nil {
			t.Errorf("%s: conn %d not replayed", what, o.Conn)
			continue
		}
		a, b := infos(o, true), infos(g, true)
		for d := range a {
			if !slices.Equal(a[d], b[d]) {
				t.Errorf("%s: conn %d %s: messages differ\n recorded %v\n replayed %v", what, o.Conn, Dir(d), a[d], b[d])
			}
		}
	}
}

func recordedPort(s *Script) uint16 { return s.Initiator.Port() }

// TestConcurrentPcap: --to-pcap starts connections at their recorded
// times (divided by the speed) and interleaves their frames: the
// connections that overlapped overlap in the new capture's timestamps,
// those that did not do not, each carries its recorded messages, and the
// capture's frames are in time order. Untimed, overlapping connections
// start together and the others after the ones that ended before them;
// with MaxConns 1 or Serial none overlap.
func TestConcurrentPcap(t *testing.T) {
	path, truth := overlapFile(t)
	orig := load(t, path, LoadOptions{})
	for _, tc := range []struct {
		name  string
		o     Options
		apart bool // no connection overlaps
	}{
		{name: "orig", o: Options{Speed: 1}},
		{name: "2x", o: Options{Speed: 2}},
		{name: "0.5x", o: Options{Speed: 0.5}},
		{name: "max", o: Options{}},
		{name: "max-conns 1", o: Options{Speed: 1, MaxConns: 1}, apart: true},
		{name: "serial", o: Options{Speed: 1, Serial: true}, apart: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, rep := toPcap(t, orig, tc.o)
			if !rep.OK() || len(rep.Conns) != 4 {
				t.Fatalf("report:\n%s", reportText(t, rep))
			}
			for i, c := range rep.Conns {
				if c.Conn != i {
					t.Errorf("report %d is conn %d: want connection order", i, c.Conn)
				}
			}
			again := load(t, out, LoadOptions{})
			sameMessages(t, tc.name, orig, again, recordedPort)
			// Connections are numbered by first appearance: as recorded.
			for i, s := range again {
				if s.Initiator != orig[i].Initiator {
					t.Errorf("conn %d of the replay is %v, recorded %v", i, s.Initiator, orig[i].Initiator)
				}
			}
			checkOrdered(t, out)
			got, starts := replayedSpans(t, again, recordedPort)
			switch {
			case tc.apart:
				ports := slices.Sorted(func(yield func(uint16) bool) {
					for p := range got {
						yield(p)
					}
				})
				for i := 1; i < len(ports); i++ {
					if a, b := got[ports[i-1]], got[ports[i]]; b.start <= a.end {
						t.Errorf("the connection from port %d (%v) starts before the one from %d (%v) ends", ports[i], b, ports[i-1], a)
					}
				}
				if rep.MaxOpen != 1 {
					t.Errorf("MaxOpen %d", rep.MaxOpen)
				}
				if tc.o.MaxConns == 1 && rep.Conns[1].Held != HoldLimit {
					t.Errorf("conn 1 held by %v, want the limit", rep.Conns[1].Held)
				}
			case tc.o.Speed > 0:
				// Virtual time: exact but for the handshakes, which differ
				// by at most 0.3 ms between the recording and the replay.
				slack := time.Duration(float64(300*time.Microsecond)/tc.o.Speed) + 10*time.Microsecond
				checkTiming(t, tc.name, tc.o.Speed, truth, got, starts, slack, slack)
				if rep.MaxOpen != 2 {
					t.Errorf("MaxOpen %d, want 2", rep.MaxOpen)
				}
				for _, c := range rep.Conns {
					if !c.Timed || c.Held != HoldNone || c.Start-c.Due > slack || c.Due-c.Start > slack {
						t.Errorf("conn %d: timed %v, due %v, started %v, held %v", c.Conn, c.Timed, c.Due, c.Start, c.Held)
					}
				}
			default:
				checkTiming(t, tc.name, 0, truth, got, starts, 0, 0)
				// 0 and 1 start together, 2 and 3 together once 0 and 1
				// have ended.
				c := rep.Conns
				if c[0].Start != c[1].Start || c[2].Start != c[3].Start || c[2].Start < max(c[0].End, c[1].End) {
					t.Errorf("untimed starts: %v %v %v %v, ends %v %v", c[0].Start, c[1].Start, c[2].Start, c[3].Start, c[0].End, c[1].End)
				}
			}
		})
	}
}

// checkOrdered checks that a capture's frames are in time order.
func checkOrdered(t *testing.T, path string) {
	t.Helper()
	src := openCapture(t, path)
	var last time.Time
	for n := 1; ; n++ {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if p.TS.Before(last) {
			t.Fatalf("frame %d at %v, before the frame before it (%v)", n, p.TS, last)
		}
		last = p.TS
	}
}

// TestConcurrentLoopbackLive replays over loopback sockets at twice the
// recorded speed while the real iwarpdump captures on lo, and measures the
// connections in that capture: their messages are the recorded ones, the
// ones that overlapped overlap and the others do not, and each starts at
// its recorded offset / 2, within what a loaded machine allows: 150 ms
// late, 50 ms early (offsets count from the first connection, which may
// itself start late).
func TestConcurrentLoopbackLive(t *testing.T) {
	requireRoot(t)
	path, truth := overlapFile(t)
	orig := load(t, path, LoadOptions{})
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	stop := liveCapture(t, port)
	rep, err := LoopbackOn(context.Background(), ln, orig, Options{Speed: 2})
	file := stop()
	if err != nil || !rep.OK() {
		t.Fatalf("%v\n%s", err, reportText(t, rep))
	}
	// The replay's initiator ports, to the recorded ones.
	ports := map[uint16]uint16{}
	for _, c := range rep.Conns {
		ports[c.Sides[I2R].Local.Port()] = c.Initiator.Port()
	}
	again := load(t, file, LoadOptions{})
	mapped := func(s *Script) uint16 { return ports[s.Initiator.Port()] }
	sameMessages(t, "live", orig, again, mapped)
	got, starts := replayedSpans(t, again, mapped)
	checkTiming(t, "live capture of --loopback at 2x", 2, truth, got, starts, 50*time.Millisecond, 150*time.Millisecond)
}

// TestConcurrentLoopback: without a capture, the report's own times say
// the same (TestConcurrentLoopbackLive measures them on the wire), and the
// reports come in connection order although connections 1 and 3 end
// before 0 and 2.
func TestConcurrentLoopback(t *testing.T) {
	path, truth := overlapFile(t)
	orig := load(t, path, LoadOptions{})
	rep, err := Loopback(context.Background(), orig, Options{Speed: 2})
	if err != nil || !rep.OK() {
		t.Fatalf("%v\n%s", err, reportText(t, rep))
	}
	got, starts := map[uint16]span{}, map[uint16]time.Duration{}
	for i, c := range rep.Conns {
		if c.Conn != i {
			t.Errorf("report %d is conn %d", i, c.Conn)
		}
		got[c.Initiator.Port()] = span{c.Start, c.End}
		starts[c.Initiator.Port()] = c.Start
	}
	if rep.Conns[1].End >= rep.Conns[0].End {
		t.Errorf("connection 1 did not end before 0: the test does not check the order of reports")
	}
	checkTiming(t, "--loopback at 2x, report times", 2, truth, got, starts, 50*time.Millisecond, 150*time.Millisecond)
	if rep.MaxOpen != 2 || !strings.Contains(reportText(t, rep), "summary: 4 connections (at most 2 at once), ") {
		t.Errorf("report:\n%s", reportText(t, rep))
	}
}

// relay forwards loopback connections to target and notes when each was
// open, as a capture would: from its accept to the close of both
// directions.
type relay struct {
	ln     *net.TCPListener
	target string
	mu     sync.Mutex
	spans  map[uint16]relayConn // by the client's port
	wg     sync.WaitGroup
	t0     time.Time
}

type relayConn struct {
	span
	out uint16 // the port of the relay's connection to target
}

func newRelay(t *testing.T, target string) *relay {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln, target: target, spans: map[uint16]relayConn{}, t0: time.Now()}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := ln.AcceptTCP()
			if err != nil {
				return
			}
			r.wg.Add(1)
			go r.forward(c)
		}
	}()
	t.Cleanup(func() { ln.Close(); r.wg.Wait() })
	return r
}

func (r *relay) forward(c *net.TCPConn) {
	defer r.wg.Done()
	defer c.Close()
	start := time.Since(r.t0)
	o, err := net.DialTCP("tcp", nil, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(r.target)))
	if err != nil {
		return
	}
	defer o.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	pipe := func(dst, src *net.TCPConn) {
		defer wg.Done()
		io.Copy(dst, src)
		dst.CloseWrite()
	}
	go pipe(o, c)
	go pipe(c, o)
	wg.Wait()
	r.mu.Lock()
	r.spans[addrPort(c.RemoteAddr()).Port()] = relayConn{span{start, time.Since(r.t0)}, addrPort(o.LocalAddr()).Port()}
	r.mu.Unlock()
}

// TestConcurrentConnectListen: --connect at twice the recorded speed
// against --listen, through a relay that notes when each connection was
// open: the connections overlap as recorded, start at their recorded
// offsets / 2, and Listen gives each initiator its recorded connection.
func TestConcurrentConnectListen(t *testing.T) {
	path, truth := overlapFile(t)
	orig := load(t, path, LoadOptions{})
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := newRelay(t, ln.Addr().String())
	o := Options{Speed: 2, Timeouts: Timeouts{Idle: 500 * time.Millisecond}}
	var lrep *Report
	done := make(chan struct{})
	go func() {
		defer close(done)
		lrep, _ = Listen(context.Background(), ln, orig, o)
	}()
	crep, err := Connect(context.Background(), r.ln.Addr().String(), orig, o)
	<-done
	if err != nil || !crep.OK() || lrep == nil || !lrep.OK() {
		t.Fatalf("%v\nconnect:\n%s\nlisten:\n%s", err, reportText(t, crep), reportText(t, lrep))
	}
	ln.Close()
	r.ln.Close()
	r.wg.Wait()
	got, starts := map[uint16]span{}, map[uint16]time.Duration{}
	var t0 time.Duration = -1
	for _, c := range crep.Conns {
		rc, ok := r.spans[c.Sides[I2R].Local.Port()]
		if !ok {
			t.Fatalf("conn %d did not go through the relay", c.Conn)
		}
		if t0 < 0 || rc.start < t0 {
			t0 = rc.start
		}
		// Listen played this connection's script to it.
		lc := lrep.Conns[c.Conn]
		if lc.Conn != c.Conn || lc.Sides[R2I].Remote.Port() != rc.out {
			t.Errorf("conn %d: listen played conn %d to port %d, the relay's connection for it is from port %d", c.Conn, lc.Conn, lc.Sides[R2I].Remote.Port(), rc.out)
		}
		got[c.Initiator.Port()] = rc.span
	}
	for p, s := range got {
		got[p] = span{s.start - t0, s.end - t0}
		starts[p] = s.start - t0
	}
	checkTiming(t, "--connect at 2x through a relay", 2, truth, got, starts, 50*time.Millisecond, 150*time.Millisecond)
}

// TestListenMatch: initiators that connect at once, in another order than
// the recording's, each get the script of the connection whose MPA
// Request they send; identical Requests go in the order they come; and a
// script without MPA exchange goes to an initiator that sends FPDUs.
func TestListenMatch(t *testing.T) {
	path, _ := overlapFile(t)
	orig := load(t, path, LoadOptions{})
	o := Options{Timeouts: Timeouts{Idle: 500 * time.Millisecond}}
	// listen runs Listen with scripts and Connect with each of conns,
	// started in that order 50 ms apart; it returns the listen report and
	// each connect report, by script index.
	listen := func(t *testing.T, scripts []*Script, order []int) (*Report, map[int]*Report) {
		ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		var lrep *Report
		done := make(chan struct{})
		go func() {
			defer close(done)
			lrep, _ = Listen(context.Background(), ln, scripts, o)
		}()
		var mu sync.Mutex
		creps := map[int]*Report{}
		var wg sync.WaitGroup
		for k, i := range order {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(k) * 50 * time.Millisecond)
				rep, err := Connect(context.Background(), ln.Addr().String(), scripts[i:i+1], o)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				creps[i] = rep
				mu.Unlock()
			}()
		}
		wg.Wait()
		<-done
		return lrep, creps
	}
	check := func(t *testing.T, lrep *Report, creps map[int]*Report, scripts []*Script) {
		if lrep == nil || !lrep.OK() || len(lrep.Conns) != len(scripts) {
			t.Fatalf("listen:\n%s", reportText(t, lrep))
		}
		for i, c := range lrep.Conns {
			cr := creps[i]
			if cr == nil || !cr.OK() {
				t.Fatalf("connect %d:\n%s", i, reportText(t, cr))
			}
			if c.Conn != scripts[i].Conn || c.Sides[R2I].Remote != cr.Conns[0].Sides[I2R].Local {
				t.Errorf("listen played conn %d to %v, the initiator of conn %d is %v", c.Conn, c.Sides[R2I].Remote, scripts[i].Conn, cr.Conns[0].Sides[I2R].Local)
			}
		}
	}
	t.Run("by Request, reverse order", func(t *testing.T) {
		lrep, creps := listen(t, orig, []int{3, 2, 1, 0})
		check(t, lrep, creps, orig)
	})
	t.Run("same Requests, in order of arrival", func(t *testing.T) {
		// Two copies of conn 0 (same Request), whose responders send
		// different messages: each initiator gets the one it recorded only
		// if they are matched in the order they come.
		a := orig[0]
		b := cloneScript(orig[0])
		b.Conn = 9
		i := slices.IndexFunc(b.Messages, func(m Message) bool { return m.Dir == R2I })
		b.Messages[i].Segments[0].Payload[0] ^= 1
		b.Messages[i].Digest = recDigest(b.Messages[i])
		b.Start = a.Start.Add(time.Millisecond)
		scripts := []*Script{a, b}
		lrep, creps := listen(t, scripts, []int{0, 1})
		check(t, lrep, creps, scripts)
	})
	t.Run("no MPA exchange", func(t *testing.T) {
		mc := load(t, synthFile(t, "multi-conn"), LoadOptions{})
		lrep, creps := listen(t, mc, []int{2, 0, 1}) // conn 2 is the RDMAC stream
		check(t, lrep, creps, mc)
	})
}

// recDigest returns the SHA-256 of a message's kept payload.
func recDigest(m Message) Digest {
	var b []byte
	for _, s := range m.Segments {
		b = append(b, s.Payload...)
	}
	return sha256.Sum256(b)
}

// TestConcurrentCancel: cancelling a concurrent replay stops every
// connection open at once; the report has the connections that started
// (one ended, one interrupted), in connection order, and none blamed.
func TestConcurrentCancel(t *testing.T) {
	path, _ := overlapFile(t)
	orig := load(t, path, LoadOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// At half the speed, at 1150 ms conn 1 (400-900 ms) has ended, conn 0
	// (0-1400 ms) runs, and conns 2 and 3 (from 1800 ms) have not started.
	const after = 1150 * time.Millisecond
	time.AfterFunc(after, cancel)
	start := time.Now()
	rep, err := Loopback(ctx, orig, Options{Speed: 0.5})
	took := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	if took > after+time.Second {
		t.Errorf("took %v to stop", took)
	}
	txt := reportText(t, rep)
	if len(rep.Conns) != 2 || rep.Conns[0].Conn != 0 || rep.Conns[1].Conn != 1 {
		t.Fatalf("report:\n%s", txt)
	}
	if c := rep.Conns[0]; !c.Interrupted || c.Err != nil || len(c.Mismatches) != 0 {
		t.Errorf("conn 0: interrupted %v, error %v, mismatches %v", c.Interrupted, c.Err, c.Mismatches)
	}
	if c := rep.Conns[1]; c.Interrupted || c.Err != nil || len(c.Mismatches) != 0 {
		t.Errorf("conn 1: interrupted %v, error %v, mismatches %v", c.Interrupted, c.Err, c.Mismatches)
	}
	if rep.Errors != 0 || rep.Mismatches != 0 || !strings.HasSuffix(txt, ", interrupted (context canceled)\n") {
		t.Errorf("report:\n%s", txt)
	}
}

// TestConcurrentErrorIsolated: a connection whose responder does not send
// what the recording has reports its mismatch; the others, running at the
// same time, report theirs (none).
func TestConcurrentErrorIsolated(t *testing.T) {
	path, _ := overlapFile(t)
	orig := load(t, path, LoadOptions{})
	resp := slices.Clone(orig)
	resp[1] = cloneScript(orig[1])
	i := slices.IndexFunc(resp[1].Messages, func(m Message) bool { return m.Dir == R2I })
	resp[1].Messages = slices.Delete(resp[1].Messages, i, i+1)
	o := Options{Speed: 4, Timeouts: Timeouts{Wait: 300 * time.Millisecond, Idle: 500 * time.Millisecond}}
	ir, rr := connectPair(t, orig, resp, o)
	txt := reportText(t, ir)
	if len(ir.Conns) != 4 || ir.Mismatches != 1 || rr.Mismatches != 0 {
		t.Fatalf("initiator:\n%s\nresponder:\n%s", txt, reportText(t, rr))
	}
	for n, c := range ir.Conns {
		if c.Conn != n || (n == 1) != (len(c.Mismatches) == 1) || c.Err != nil {
			t.Errorf("conn %d: mismatches %v, error %v", c.Conn, c.Mismatches, c.Err)
		}
	}
	if !strings.Contains(txt, "conn 1 192.0.2.2:40201 > 192.0.2.1:7174: ") || !strings.Contains(txt, "mismatch: r2i message 0 missing") {
		t.Errorf("report:\n%s", txt)
	}
}

// TestSchedule: the order, times and precedence a concurrent replay keeps.
func TestSchedule(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ss := []*Script{
		{Conn: 0, Start: at(10), First: at(5), End: at(100)},
		{Conn: 1, Start: at(2), First: at(1), End: at(50)},   // starts first
		{Conn: 2, Start: at(60), First: at(55), End: at(70)}, // after 1
		{Conn: 3, Start: at(120), End: at(130)},              // after 0, 1 and 2; First unknown
		{Conn: 4, Start: at(125)},                            // end unknown: holds nothing
		{Conn: 5, Start: at(140), End: at(150)},              // after 3, not 4
	}
	sc := newSchedule(ss, &Options{Speed: 2, MaxConns: 8})
	if want := []int{1, 0, 2, 3, 4, 5}; !slices.Equal(sc.order, want) {
		t.Errorf("order %v, want %v", sc.order, want)
	}
	if want := []time.Duration{0, 2 * time.Millisecond, 27 * time.Millisecond, 59500 * time.Microsecond, 62 * time.Millisecond, 69500 * time.Microsecond}; !slices.Equal(sc.due, want) {
		t.Errorf("due %v, want %v", sc.due, want)
	}
	// need[k]: how many of the connections by end come first.
	if want := []int{0, 0, 1, 3, 3, 4}; !slices.Equal(sc.need, want) {
		t.Errorf("need %v, want %v (end order %v)", sc.need, want, sc.endOrder)
	}
	sc = newSchedule(ss, &Options{Serial: true})
	if !slices.Equal(sc.order, []int{0, 1, 2, 3, 4, 5}) || !slices.Equal(sc.need, []int{0, 1, 2, 3, 4, 5}) || sc.due != nil || sc.limit != 1 {
		t.Errorf("serial: %+v", sc)
	}
	if sc := newSchedule(ss, &Options{}); sc.due != nil {
		t.Errorf("untimed: due %v", sc.due)
	}
}

// TestProgressString: the progress line names the connections open in
// ascending order and counts the ones done.
func TestProgressString(t *testing.T) {
	for _, tc := range []struct {
		p    Progress
		want string
	}{
		{Progress{Conn: 3, Open: []int{3}, Total: 1, MessagesSent: 5, MessagesReceived: 4, OctetsSent: 1200, Rate: 9000},
			"conn 3: 5 messages sent, 4 received, 1200 octets sent, 9000 octets/s"},
		{Progress{Conn: 0, Open: []int{0, 1, 2, 5}, Done: 3, Total: 9}, "conns 0-2, 5 open, 3 of 9 done: 0 messages sent, 0 received, 0 octets sent, 0 octets/s"},
		{Progress{Conn: 4, Open: []int{4}, Done: 4, Total: 9}, "conn 4 open, 4 of 9 done: 0 messages sent, 0 received, 0 octets sent, 0 octets/s"},
		{Progress{Conn: 8, Done: 9, Total: 9}, "9 of 9 connections done: 0 messages sent, 0 received, 0 octets sent, 0 octets/s"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

// TestConcurrentProgress: progress snapshots while connections run at
// once list them, and the last one counts them all done.
func TestConcurrentProgress(t *testing.T) {
	path, _ := overlapFile(t)
	orig := load(t, path, LoadOptions{})
	var mu sync.Mutex
	var ps []Progress
	rep, err := Loopback(context.Background(), orig, Options{Speed: 4, ProgressEvery: 10 * time.Millisecond,
		Progress: func(p Progress) { mu.Lock(); ps = append(ps, p); mu.Unlock() }})
	if err != nil || !rep.OK() {
		t.Fatal(err)
	}
	two := false
	for _, p := range ps {
		two = two || slices.Equal(p.Open, []int{0, 1}) || slices.Equal(p.Open, []int{2, 3})
		if !slices.IsSorted(p.Open) || p.Total != 4 {
			t.Errorf("progress %+v", p)
		}
	}
	last := ps[len(ps)-1]
	if !two || last.Done != 4 || len(last.Open) != 0 || last.MessagesSent != uint64(rep.Messages) {
		t.Errorf("two open at once %v, last %+v", two, last)
	}
}

// TestListenAcceptTimeout: the scripts no initiator came for are each
// reported, with the wait's error; the ones played are too.
func TestListenAcceptTimeout(t *testing.T) {
	path, _ := overlapFile(t)
	orig := load(t, path, LoadOptions{})
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	o := Options{Timeouts: Timeouts{Accept: 700 * time.Millisecond, Idle: 300 * time.Millisecond}}
	var lrep *Report
	done := make(chan struct{})
	go func() {
		defer close(done)
		lrep, _ = Listen(context.Background(), ln, orig, o)
	}()
	crep, err := Connect(context.Background(), ln.Addr().String(), orig[2:3], o)
	<-done
	if err != nil || !crep.OK() {
		t.Fatal(err)
	}
	txt := reportText(t, lrep)
	if len(lrep.Conns) != 4 || lrep.Errors != 3 || lrep.Conns[2].Err != nil || strings.Count(txt, "waiting for an initiator on "+ln.Addr().String()+": timed out") != 3 {
		t.Errorf("report:\n%s", txt)
	}
}

// TestConcurrentLate: a connection held past its time says so, and why.
func TestConcurrentLate(t *testing.T) {
	path, _ := overlapFile(t)
	orig := load(t, path, LoadOptions{})
	_, rep := toPcap(t, orig, Options{Speed: 1, MaxConns: 1})
	txt := reportText(t, rep)
	// Conn 1 was due at 200 ms and started when conn 0 ended (about 690
	// ms): the line after its first says so.
	_, after, _ := strings.Cut(txt, "\nconn 1 ")
	var late, at int
	if _, err := fmt.Sscanf(after[strings.Index(after, "\n")+1:], "  started %dms late, %dms after the first connection's start: ", &late, &at); err != nil ||
		late < 450 || late > 550 || at != late+200 || !strings.Contains(after, ": the limit of connections open at once was reached\n") {
		t.Errorf("late %d at %d (%v); report:\n%s", late, at, err, txt)
	}
	// And conn 3, due at 1000 ms, when conn 2 ended (about 1320 ms); conn
	// 0 was not late, nor conn 2 (due at 900 ms, started when conn 1
	// ended, about 940 ms: within lateNote).
	if strings.Count(txt, "  started ") != 2 || !strings.Contains(txt, "\nconn 3 ") || !strings.Contains(txt[strings.Index(txt, "\nconn 3 "):], "  started ") {
		t.Errorf("report:\n%s", txt)
	}
}

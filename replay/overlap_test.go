package replay

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/synth"
)

// overlapScenario is four connections whose spans the tests know, held
// open by think time (synth.Op.Pause): 1 runs inside 0 (from 200 to 450 ms
// of 0's 0 to 700 ms), 3 inside 2 (1000 to 1200 ms of 900 to 1300 ms), and
// 2 starts 200 ms after 0 has ended. Each MPA Request carries private data
// of its own, and each connection other operations.
func overlapScenario() synth.Scenario {
	ms := time.Millisecond
	conn := func(port uint16, start time.Duration, rev uint8, pauses ...time.Duration) synth.Conn {
		pd := []byte(fmt.Sprintf("job 7 rank %d", port-40200))
		c := synth.Conn{
			Initiator:  netip.AddrPortFrom(netip.MustParseAddr("192.0.2.2"), port),
			Responder:  netip.MustParseAddrPort("192.0.2.1:7174"),
			Handshake:  true,
			StartDelay: start,
			MPA: &synth.MPAParams{
				Request: synth.MPAFrame{Rev: rev, C: true, PD: pd},
				Reply:   synth.MPAFrame{Rev: rev, C: true, PD: []byte("ok")},
			},
		}
		if rev == 2 {
			c.MPA.Request.Enhanced = &mpa.Enhanced{IRD: 4, ORD: 4}
			c.MPA.Reply.Enhanced = &mpa.Enhanced{IRD: 4, ORD: 4}
		}
		ops := []synth.Op{
			{Dir: synth.I2R, Kind: synth.Send, Size: 64 + int(port%8)},
			{Dir: synth.R2I, Kind: synth.Send, Size: 100},
			{Dir: synth.I2R, Kind: synth.Write, Size: 3000, STag: 0x1000, TO: 0x10000},
			{Dir: synth.I2R, Kind: synth.Read, Size: 1500, STag: 0x2000, TO: 0x20000, SrcSTag: 0x3000, SrcTO: 0x30000},
			{Dir: synth.R2I, Kind: synth.Send, Size: 32},
		}
		ops = ops[:len(pauses)+1]
		for i, p := range pauses {
			ops[i+1].Pause = p
		}
		c.Ops = ops
		return c
	}
	return synth.Scenario{Seed: 7, Conns: []synth.Conn{
		conn(40200, 0, 2, 230*ms, 230*ms, 230*ms),
		conn(40201, 200*ms, 1, 120*ms, 120*ms),
		conn(40202, 900*ms, 2, 130*ms, 130*ms, 130*ms),
		conn(40203, 1000*ms, 1, 100*ms, 100*ms),
	}}
}

// span is when a connection ran, from the first connection's start.
type span struct{ start, end time.Duration }

func (s span) String() string { return fmt.Sprintf("%v-%v", s.start, s.end) }

// overlap returns how long two spans share (negative: the gap between
// them).
func overlap(a, b span) time.Duration { return min(a.end, b.end) - max(a.start, b.start) }

// overlapFile writes overlapScenario and returns its path and each
// connection's span in the generator's truth (its first MPA frame to its
// last FPDU), by initiator port.
func overlapFile(t testing.TB) (string, map[uint16]span) {
	t.Helper()
	sc := overlapScenario()
	p := filepath.Join(t.TempDir(), "overlap.pcap")
	res, err := synth.WriteFiles(sc, p)
	if err != nil {
		t.Fatal(err)
	}
	first := map[int]time.Time{}
	last := map[int]time.Time{}
	note := func(conn int, ts string) {
		v, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := first[conn]; !ok || v.Before(f) {
			first[conn] = v
		}
		if v.After(last[conn]) {
			last[conn] = v
		}
	}
	for _, r := range res.Records {
		switch r := r.(type) {
		case *synth.TruthMPA:
			note(r.Conn, r.TS)
		case *synth.TruthFPDU:
			note(r.Conn, r.TS)
		}
	}
	var t0 time.Time
	for _, f := range first {
		if t0.IsZero() || f.Before(t0) {
			t0 = f
		}
	}
	out := map[uint16]span{}
	for i, c := range sc.Conns {
		out[c.Initiator.Port()] = span{first[i].Sub(t0), last[i].Sub(t0)}
	}
	return p, out
}

// TestScriptSpan: a script's First is its SYN's time and End its last
// frame's, from the truth's timestamps (synth stamps the SYN 0-50 µs after
// the connection's StartDelay, the MPA Request 60-270 µs after it).
func TestScriptSpan(t *testing.T) {
	path, truth := overlapFile(t)
	ss := load(t, path, LoadOptions{})
	if len(ss) != 4 {
		t.Fatalf("%d scripts", len(ss))
	}
	t0 := ss[0].Start
	for _, s := range ss {
		tr := truth[s.Initiator.Port()]
		if d := s.Start.Sub(t0) - tr.start; d != 0 {
			t.Errorf("conn %d: Start %v from the first, truth %v", s.Conn, s.Start.Sub(t0), tr.start)
		}
		if syn := s.Start.Sub(s.First); syn < 10*time.Microsecond || syn > 300*time.Microsecond {
			t.Errorf("conn %d: First %v before Start, want the handshake's time", s.Conn, syn)
		}
		// The last FPDU, then the FIN exchange (20-200 µs each).
		if fin := s.End.Sub(t0) - tr.end; fin < 20*time.Microsecond || fin > time.Millisecond {
			t.Errorf("conn %d: End %v after the last FPDU", s.Conn, fin)
		}
	}
}

package replay

import (
	"context"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// cloneScript deep-copies what the tests tamper with.
func cloneScript(s *Script) *Script {
	c := *s
	c.Messages = slices.Clone(s.Messages)
	for i := range c.Messages {
		m := &c.Messages[i]
		m.Segments = slices.Clone(m.Segments)
		for j := range m.Segments {
			m.Segments[j].Payload = slices.Clone(m.Segments[j].Payload)
		}
	}
	return &c
}

// connectPair runs Listen with responderScripts on a loopback listener and
// Connect with initiatorScripts against it.
func connectPair(t *testing.T, initiatorScripts, responderScripts []*Script, o Options) (initRep, respRep *Report) {
	// The responder waits longer at the end than the initiator waits for
	// a missing message, so that a loaded machine does not cut it short.
	ro := o
	ro.Timeouts.Idle = max(o.Timeouts.Idle, 5*time.Second)
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var err error
		respRep, err = Listen(ctx, ln, responderScripts, ro)
		if err != nil {
			t.Errorf("Listen: %v", err)
		}
	}()
	initRep, err = Connect(ctx, ln.Addr().String(), initiatorScripts, o)
	if err != nil {
		t.Errorf("Connect: %v", err)
	}
	wg.Wait()
	return initRep, respRep
}

// TestConnect plays the initiator against a responder (the engine's own, in
// --listen mode) and checks the diff: clean against a faithful responder,
// and exactly the expected mismatches against responders that change one
// payload octet, drop a message, change a length, or swap two messages.
func TestConnect(t *testing.T) {
	scripts := load(t, "../testdata/siw/crc_v2_iwtest_ops.pcap", LoadOptions{})
	s := scripts[0]
	// The responder's messages, by index among its own.
	var r2i []int
	for i := range s.Messages {
		if s.Messages[i].Dir == R2I {
			r2i = append(r2i, i)
		}
	}
	if len(r2i) < 3 {
		t.Fatalf("want at least 3 responder messages, have %d", len(r2i))
	}
	o := Options{}
	o.Timeouts.Wait = 300 * time.Millisecond
	o.Timeouts.Idle = 500 * time.Millisecond

	tests := []struct {
		name   string
		tamper func(c *Script)
		want   []Mismatch // Want/Got infos filled from the scripts
	}{
		{name: "faithful"},
		{
			name: "one payload octet changed",
			tamper: func(c *Script) {
				m := &c.Messages[r2i[1]]
				m.Segments[0].Payload[7] ^= 0x20
			},
			want: []Mismatch{{Dir: R2I, Kind: MismatchPayload, WantIndex: 1, GotIndex: 1}},
		},
		{
			name: "message dropped",
			tamper: func(c *Script) {
				c.Messages = slices.Delete(c.Messages, r2i[0], r2i[0]+1)
			},
			// Without the Send, the initiator's Read Requests come late
			// (after causal-wait timeouts); the responder, playing against
			// a peer it does not run, holds its Read Responses until they
			// come, as an RNIC answers a Read Request only then, so they
			// go to the sinks asked for: only the Send is missing. (It
			// used to send the first Response at once, to the recorded
			// sink, and the second to the first Request's.)
			want: []Mismatch{{Dir: R2I, Kind: MismatchMissing, WantIndex: 0, GotIndex: -1}},
		},
		{
			name: "length changed",
			tamper: func(c *Script) {
				m := &c.Messages[r2i[2]]
				last := &m.Segments[len(m.Segments)-1]
				last.Payload = last.Payload[:len(last.Payload)-1]
				last.PayloadLen--
			},
			want: []Mismatch{{Dir: R2I, Kind: MismatchLength, WantIndex: 2, GotIndex: 2}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := s
			if tc.tamper != nil {
				resp = cloneScript(s)
				tc.tamper(resp)
			}
			ir, rr := connectPair(t, []*Script{s}, []*Script{resp}, o)
			c := ir.Conns[0]
			if c.Err != nil {
				t.Errorf("initiator error: %v", c.Err)
			}
			if len(c.Mismatches) != len(tc.want) {
				var b, b2 strings.Builder
				ir.WriteText(&b)
				rr.WriteText(&b2)
				t.Fatalf("mismatches %v, want %d\n%s\n%s", c.Mismatches, len(tc.want), b.String(), b2.String())
			}
			for i, w := range tc.want {
				g := c.Mismatches[i]
				if g.Dir != w.Dir || g.Kind != w.Kind || g.WantIndex != w.WantIndex || g.GotIndex != w.GotIndex {
					t.Errorf("mismatch %d: %s; want %s %s want#%d got#%d", i, g, w.Dir, w.Kind, w.WantIndex, w.GotIndex)
				}
				if w.WantIndex >= 0 {
					rec := &s.Messages[r2i[w.WantIndex]]
					if g.Want != recInfo(rec) {
						t.Errorf("mismatch %d names %s, the recording has %s %d", i, g.Want, rec.Head.Opcode, rec.Length)
					}
				}
			}
			if tc.tamper == nil && !ir.OK() {
				t.Errorf("faithful responder: report not clean")
			}
			// The responder saw the initiator's messages as recorded.
			if rc := rr.Conns[0]; len(rc.Mismatches) != 0 || rc.Err != nil {
				t.Errorf("responder: %v %v", rc.Mismatches, rc.Err)
			}
		})
	}
}

// TestConnectRNIC: an emulated RDMAC initiator against an engine responder
// emulating a non-permissive IETF RNIC: the responder answers Rev 1 and
// closes (matrix row 2), and the RDMAC initiator, which cannot use Rev 1,
// closes as well. Neither side sends an FPDU; the reports say so without
// counting the recorded messages as missing, since the close is the emulated
// behaviour.
func TestConnectRNIC(t *testing.T) {
	scripts := load(t, "../testdata/siw/crc_v2_iwtest_ops.pcap", LoadOptions{})
	o := Options{Initiator: RNICRDMAC, Responder: RNICIETF}
	o.Timeouts.Idle = 300 * time.Millisecond
	ir, rr := connectPair(t, scripts, scripts, o)
	ic, rc := ir.Conns[0], rr.Conns[0]
	if !rc.Outcome.Closed || rc.Outcome.ClosedBy != R2I || rc.Outcome.Row != "2" {
		t.Errorf("responder outcome %s, want closed by the responder, row 2", rc.Outcome)
	}
	if !ic.Outcome.Closed || ic.Outcome.Row != "2" || ic.Outcome.Reply == nil || ic.Outcome.Reply.Rev != 1 {
		t.Errorf("initiator outcome %s, want a close after a Rev 1 Reply, row 2", ic.Outcome)
	}
	for _, c := range []*ConnReport{ic, rc} {
		if len(c.Mismatches) != 0 || c.Err != nil {
			t.Errorf("conn report: %v %v", c.Mismatches, c.Err)
		}
		for _, sd := range c.Sides {
			if sd != nil && sd.SentFPDUs != 0 {
				t.Errorf("%d FPDUs sent", sd.SentFPDUs)
			}
		}
	}
}

// TestConnectReadRequestHeader: a Read Request carries no payload, so its
// header is what tells it apart: an initiator whose recording has the
// responder ask for 1 octet into STag 0xdeadbeef reports the responder's
// Read Request for 64 octets into the recorded STag as a mismatch (it used
// to match on opcode, length 0 and the empty payload's digest); Diff
// reports a header mismatch where only the header differs (TestDiff).
func TestConnectReadRequestHeader(t *testing.T) {
	s := load(t, "../testdata/siw/basic_rping_v2_nocrc.pcap", LoadOptions{})[0]
	init := cloneScript(s)
	idx := -1
	for i := range init.Messages {
		if m := &init.Messages[i]; m.Head.Opcode == rdmap.OpReadRequest && !m.RTR {
			m.Head.Read.Size, m.Head.Read.SinkSTag = 1, 0xdeadbeef
			idx = i
			break
		}
	}
	if idx < 0 || init.Messages[idx].Dir != R2I {
		t.Fatalf("no Read Request from the responder (%d)", idx)
	}
	o := Options{}
	o.Timeouts.Wait = 300 * time.Millisecond
	o.Timeouts.Idle = 500 * time.Millisecond
	ir, _ := connectPair(t, []*Script{init}, []*Script{s}, o)
	// rping's Read Requests are all alike: the diff may pair the one
	// received with a later recorded one (the patched request is then
	// "missing"), or report its header; either way it names it.
	named := false
	for _, m := range ir.Conns[0].Mismatches {
		named = named || m.Dir == R2I && m.Want.Opcode == rdmap.OpReadRequest && m.Want.Read.SinkSTag == 0xdeadbeef && m.Want.Read.Size == 1 &&
			strings.Contains(m.String(), "0xdeadbeef")
	}
	if !named {
		t.Fatalf("initiator's mismatches %v do not name the recorded Read Request the responder did not send", ir.Conns[0].Mismatches)
	}
}

// TestListenElapsed: Listen's duration and rate count from the initiator's
// connection, not from the start of the wait for it: with an initiator that
// connects a second late, the responder's replay takes no longer than the
// initiator's, which is timed from its dial.
func TestListenElapsed(t *testing.T) {
	scripts := load(t, "../testdata/siw/crc_v2_iwtest_ops.pcap", LoadOptions{})
	o := Options{Timeouts: Timeouts{Idle: 300 * time.Millisecond}}
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
	const late = time.Second
	time.Sleep(late)
	crep, err := Connect(context.Background(), ln.Addr().String(), scripts, o)
	<-done
	if err != nil || lrep == nil || !crep.OK() || !lrep.OK() {
		t.Fatalf("connect %v %+v, listen %+v", err, crep, lrep)
	}
	if lrep.Elapsed >= late || lrep.Elapsed > crep.Elapsed+200*time.Millisecond {
		t.Errorf("listen took %v (the initiator connected %v after it started), the initiator %v", lrep.Elapsed, late, crep.Elapsed)
	}
	if lrep.Rate() < float64(lrep.Octets)/late.Seconds() {
		t.Errorf("listen rate %.0f octets/s: %d octets counted over the wait", lrep.Rate(), lrep.Octets)
	}
}

// TestConnectRefused plays the initiator of recordings whose responder
// accepted, against hand-written responders that refuse in various ways.
// Each is a difference from the recording: every message the recording has
// the responder send is missing, and the report is not OK (iwarpreplay
// exits 1). The Reply itself is compared with the recorded one.
func TestConnectRefused(t *testing.T) {
	p2p := load(t, "../testdata/siw/p2p_rtr1_rping.pcap", LoadOptions{})
	rev1 := load(t, "../testdata/synth/rev1-crc.pcap", LoadOptions{})
	ops := load(t, "../testdata/siw/crc_v2_iwtest_ops.pcap", LoadOptions{})
	enh := func(e mpa.Enhanced, ulp ...byte) []byte { return append(mpa.AppendEnhanced(nil, e), ulp...) }
	// p2p_rtr1's Request offers the Write and Read RTRs (MANIFEST: rtr_mode=1).
	qe, _, _ := p2p[0].Request.Enhanced()
	tests := []struct {
		name    string
		s       *Script
		reply   mpa.Frame
		err     string   // in the connection's error ("" for none)
		frame   []string // fields the Reply mismatch names
		missing bool     // the responder's recorded messages are missing
	}{
		{name: "rejected", s: rev1[0], reply: mpa.Frame{Kind: mpa.KindReply, Rev: 1, C: true, R: true},
			frame: []string{"flags"}, missing: true},
		{name: "ORD above IRD", s: p2p[0], reply: mpa.Frame{Kind: mpa.KindReply, Rev: 2, S: true,
			PD: enh(mpa.Enhanced{A: true, IRD: qe.ORD, ORD: qe.IRD + 8, C: true})},
			err: "0x06", frame: []string{"private data"}, missing: true},
		{name: "no common RTR", s: p2p[0], reply: mpa.Frame{Kind: mpa.KindReply, Rev: 2, S: true,
			// The Request offers Write and Read (C, D); the Reply accepts
			// only Send (B).
			PD: enh(mpa.Enhanced{A: true, B: true, IRD: qe.ORD, ORD: qe.IRD})},
			err: "0x07", frame: []string{"private data"}, missing: true},
		{name: "private data dropped", s: ops[0], reply: mpa.Frame{Kind: mpa.KindReply, Rev: 2, C: true, S: true,
			PD: enh(mpa.Enhanced{IRD: 4, ORD: 4})}, frame: []string{"private data"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := startRawResponder(t, &tc.reply, func(c *net.TCPConn, req mpa.Frame) { c.CloseWrite() })
			o := Options{}
			o.Timeouts.Idle = 300 * time.Millisecond
			o.Timeouts.Wait = 300 * time.Millisecond
			rep, err := Connect(context.Background(), r.ln.Addr().String(), []*Script{tc.s}, o)
			if err != nil {
				t.Fatal(err)
			}
			<-r.done
			c := rep.Conns[0]
			var b strings.Builder
			rep.WriteText(&b)
			t.Log(b.String())
			if rep.OK() {
				t.Errorf("report OK; the responder did not do what the recording has")
			}
			if (tc.err == "") != (c.Err == nil) || (c.Err != nil && !strings.Contains(c.Err.Error(), tc.err)) {
				t.Errorf("error %v, want one with %q", c.Err, tc.err)
			}
			var want int
			for i := range tc.s.Messages {
				if tc.s.Messages[i].Dir == R2I {
					want++
				}
			}
			var missing, frames int
			for _, m := range c.Mismatches {
				switch m.Kind {
				case MismatchMissing:
					missing++
				case MismatchFrame:
					frames++
					for _, f := range tc.frame {
						if !strings.Contains(m.Detail, f) {
							t.Errorf("Reply mismatch %q does not name %s", m.Detail, f)
						}
					}
				}
			}
			if frames != 1 {
				t.Errorf("%d MPA frame mismatches, want 1", frames)
			}
			if tc.missing && missing != want {
				t.Errorf("%d messages missing, want the %d the recording has the responder send", missing, want)
			}
		})
	}
}

// rawInitiator connects to a Listen replaying s, sends the recorded MPA
// Request and then the FPDUs of ulpdus (CRC and markers as the recording
// negotiated: none here), closes its side after hold, and returns what the
// engine sent after its Reply, decoded, with the Listen report.
func rawInitiator(t *testing.T, s *Script, o Options, hold time.Duration, ulpdus ...[]byte) ([]rdmap.Segment, *Report) {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var rep *Report
	done := make(chan struct{})
	go func() {
		defer close(done)
		rep, _ = Listen(context.Background(), ln, []*Script{s}, o)
	}()
	c, err := net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	req := mpa.AppendFrame(nil, *s.Request)
	fr := NewFramer(uint64(len(req)), false, s.Request.C)
	wire := req
	for _, u := range ulpdus {
		if wire, err = fr.AppendFPDU(wire, u); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Write(wire); err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(hold); c.CloseWrite() }()
	got, _ := io.ReadAll(c)
	<-done
	rp, n, err := mpa.DecodeFrame(got)
	if err != nil {
		t.Fatalf("engine's Reply: %v", err)
	}
	df := NewDeframer(uint64(n), false, rp.C)
	var segs []rdmap.Segment
	for rest := got[n:]; len(rest) > 0; {
		p, k, err := df.Next(rest)
		if err != nil || k == 0 {
			t.Fatalf("engine's FPDUs: %v (%d octets left)", err, len(rest))
		}
		rest = rest[k:]
		sg, err := rdmap.Decode(p.ULPDU)
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, sg)
	}
	return segs, rep
}

// TestListenP2PWaitsForRTR: in peer-to-peer mode the responder sends no
// FPDU before the initiator's RTR (RFC 6581 §4, PROTOCOL.md B); an initiator
// that never sends it ends the connection with an error, and nothing was
// sent (it used to go on after the causal wait's timeout).
func TestListenP2PWaitsForRTR(t *testing.T) {
	s := load(t, "../testdata/siw/p2p_rtr1_rping.pcap", LoadOptions{})[0]
	o := Options{Timeouts: Timeouts{Wait: 300 * time.Millisecond, Idle: 300 * time.Millisecond}}
	segs, rep := rawInitiator(t, s, o, time.Second)
	if len(segs) != 0 {
		t.Errorf("the responder sent %d FPDUs (first %s) before any RTR", len(segs), segs[0].Opcode)
	}
	c := rep.Conns[0]
	if c.Err == nil || !strings.Contains(c.Err.Error(), "RTR") || rep.OK() {
		t.Errorf("error %v, OK %v; want an error about the missing RTR", c.Err, rep.OK())
	}
}

// TestListenNoUnaskedReadResponse: against a real initiator, a recorded RDMA
// Read Response is not sent when the Read Request never came; the report
// lists it as not sent and the Read Request as missing.
func TestListenNoUnaskedReadResponse(t *testing.T) {
	s := load(t, "../testdata/synth/rev1-crc.pcap", LoadOptions{})[0]
	// The initiator sends the recording's first message (a Send) and
	// nothing else; the recording then has it ask for an RDMA Read.
	first := s.Messages[0]
	if first.Dir != I2R || first.Head.Opcode != rdmap.OpSend || len(first.Segments) != 1 {
		t.Fatalf("rev1-crc's first message is %s %s, want an i2r Send in one segment", first.Dir, first.Head.Opcode)
	}
	h := first.Head
	h.Payload = first.Segments[0].Payload
	h.DDP.MSN, h.DDP.L = 1, true
	o := Options{Timeouts: Timeouts{Wait: 200 * time.Millisecond, Idle: 300 * time.Millisecond}}
	segs, rep := rawInitiator(t, s, o, 3*time.Second, rdmap.AppendSegment(nil, h))
	for _, sg := range segs {
		if sg.Opcode == rdmap.OpReadResponse {
			t.Errorf("the responder sent an RDMA Read Response (STag 0x%x) for a Read Request that never came", sg.DDP.STag)
		}
	}
	side := rep.Conns[0].Sides[R2I]
	if len(side.NotSent) == 0 {
		t.Errorf("the report lists no Read Response not sent")
	}
	missingRead := false
	for _, m := range rep.Conns[0].Mismatches {
		if m.Kind == MismatchMissing && m.Want.Opcode == rdmap.OpReadRequest {
			missingRead = true
		}
	}
	if !missingRead || rep.OK() {
		t.Errorf("mismatches %v: want the RDMA Read Request missing", rep.Conns[0].Mismatches)
	}
}

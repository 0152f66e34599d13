package replay

import (
	"context"
	"errors"
	"io"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

const iwtestOps = "../testdata/siw/crc_v2_iwtest_ops.pcap"

func reportText(t *testing.T, r *Report) string {
	t.Helper()
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestInterrupted: a replay the caller stops half-way (iwarpreplay's
// SIGINT) says it was interrupted and why, blames neither peer, and does not
// list as missing the messages that were not due yet.
func TestInterrupted(t *testing.T) {
	ss := load(t, iwtestOps, LoadOptions{})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sig := errors.New("test signal received")
	const after = 800 * time.Millisecond
	time.AfterFunc(after, func() { cancel(sig) })
	// The recording spans about 0.2 s: at a tenth of its speed, the stop
	// comes when some of the messages of each side have been sent.
	rep, err := Loopback(ctx, ss, Options{Speed: 0.1})
	if !errors.Is(err, context.Canceled) || rep == nil {
		t.Fatalf("Loopback: %v", err)
	}
	txt := reportText(t, rep)
	if !errors.Is(rep.Interrupted, sig) || rep.OK() || len(rep.Conns) != 1 {
		t.Fatalf("interrupted %v, OK %v:\n%s", rep.Interrupted, rep.OK(), txt)
	}
	c := rep.Conns[0]
	if !c.Interrupted || c.Err != nil || len(c.Mismatches) != 0 {
		t.Errorf("conn: interrupted %v, error %v, mismatches %v", c.Interrupted, c.Err, c.Mismatches)
	}
	part := false
	for d, s := range c.Sides {
		if !s.Interrupted || s.Err != nil {
			t.Errorf("%s: interrupted %v, error %v", Dir(d), s.Interrupted, s.Err)
		}
		if s.RecvMessages < len(s.Expected) {
			part = true
		}
	}
	if !part {
		t.Errorf("every message arrived before the stop: the test does not interrupt anything\n%s", txt)
	}
	for _, bad := range []string{"mismatch:", "then nothing", "error:"} {
		if strings.Contains(txt, bad) {
			t.Errorf("report says %q:\n%s", bad, txt)
		}
	}
	if !strings.Contains(txt, "interrupted: the recorded messages after the last one received are not counted missing") ||
		!strings.HasSuffix(txt, ", interrupted (test signal received)\n") {
		t.Errorf("report:\n%s", txt)
	}
	// No wait for the peer's messages or FIN (Timeouts.Idle, 2 s) after it.
	if rep.Elapsed > after+time.Second {
		t.Errorf("replay took %v, stopped after %v", rep.Elapsed, after)
	}
}

// TestNotDue: after an interruption only the missing messages at the end
// of a direction are dropped; one missing before a message that arrived
// stays missing.
func TestNotDue(t *testing.T) {
	w := []MessageInfo{{Opcode: 3, Length: 1}, {Opcode: 3, Length: 2}, {Opcode: 3, Length: 3}, {Opcode: 3, Length: 4}}
	ms := notDue(Diff(R2I, w, []MessageInfo{w[0], w[2]}), len(w))
	if len(ms) != 1 || ms[0].Kind != MismatchMissing || ms[0].WantIndex != 1 {
		t.Errorf("%v", ms)
	}
}

// TestNotNegotiated: a connection whose MPA exchange never completed says
// so and why, with nothing made up: no outcome, no message counts.
func TestNotNegotiated(t *testing.T) {
	ss := load(t, iwtestOps, LoadOptions{})
	// A port nobody listens on: refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	rep, err := Connect(context.Background(), addr, ss, Options{})
	if err != nil {
		t.Fatal(err)
	}
	txt := reportText(t, rep)
	if rep.Conns[0].Outcome.String() != "not negotiated" || !strings.Contains(txt, ": not negotiated: connecting to "+addr+": ") ||
		!strings.Contains(txt, "connection refused") || strings.Contains(txt, "V=0") || strings.Contains(txt, "  error") {
		t.Errorf("refused:\n%s", txt)
	}

	// A responder that accepts and never answers the MPA Request.
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	rep, err = Connect(context.Background(), ln.Addr().String(), ss, Options{Timeouts: Timeouts{Handshake: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	txt = reportText(t, rep)
	// What the initiator sent is the recorded MPA Request: tshark's
	// tcp.len of the capture's Request frame.
	want := "sent " + tsharkField(t, iwtestOps, "iwarp_mpa.req", "tcp.len") + " octets, received 0 octets, no RDMA messages"
	if !strings.Contains(txt, ": not negotiated: initiator: waiting for an MPA Reply: timed out\n") || !strings.Contains(txt, want) ||
		strings.Contains(txt, "V=") || strings.Count(txt, "timed out") != 1 {
		t.Errorf("no Reply: want %q in\n%s", want, txt)
	}
}

// tsharkField returns a field of the first frame matching filter.
func tsharkField(t *testing.T, path, filter, field string) string {
	t.Helper()
	out, err := exec.Command(testutil.RequireTshark(t), "-r", path, "-Y", filter, "-T", "fields", "-e", field).Output()
	if err != nil {
		t.Fatal(err)
	}
	v, _, _ := strings.Cut(string(out), "\n")
	if v == "" {
		t.Fatalf("tshark: no %s in %s", filter, path)
	}
	return v
}

// TestReceivedCounts: the side lines count messages as they happened. A
// responder that sends one message more than the recording: "received 4
// messages where the recording has 3" (the recording's responder messages
// are the DDP segments with L=1 tshark finds from its port), not "4 of 3";
// a rejected connection, which never reaches the messages: no "0 of 0".
func TestReceivedCounts(t *testing.T) {
	ss := load(t, iwtestOps, LoadOptions{})
	port := ss[0].Responder.Port()
	out, err := exec.Command(testutil.RequireTshark(t), "-r", iwtestOps, "-Y", "iwarp_ddp.last_flag == 1 && tcp.srcport == "+strconv.Itoa(int(port)),
		"-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatal(err)
	}
	recorded := len(strings.Fields(string(out)))
	s := cloneScript(ss[0])
	i := slices.IndexFunc(s.Messages, func(m Message) bool { return m.Dir == R2I })
	s.Messages = slices.Insert(s.Messages, i+1, s.Messages[i])
	o := Options{Timeouts: Timeouts{Wait: 300 * time.Millisecond, Idle: 300 * time.Millisecond}}
	initRep, _ := connectPair(t, ss, []*Script{s}, o)
	txt := reportText(t, initRep)
	want := "received " + strconv.Itoa(recorded+1) + " messages where the recording has " + strconv.Itoa(recorded) + " ("
	if !strings.Contains(txt, want) || !strings.Contains(txt, "extra message") {
		t.Errorf("want %q in\n%s", want, txt)
	}

	rep, err := Loopback(context.Background(), load(t, synthFile(t, "reject"), LoadOptions{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	txt = reportText(t, rep)
	if strings.Count(txt, "no RDMA messages") != 2 || strings.Contains(txt, " of 0 ") || !strings.Contains(txt, ": rejected") {
		t.Errorf("reject:\n%s", txt)
	}
}

// TestInterruptedWaiting: a Listen stopped while it waits for an initiator
// reports no connection (none was made), only the interruption.
func TestInterruptedWaiting(t *testing.T) {
	ss := load(t, iwtestOps, LoadOptions{})
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	rep, err := Listen(ctx, ln, ss, Options{})
	if !errors.Is(err, context.DeadlineExceeded) || rep == nil {
		t.Fatalf("Listen: %v", err)
	}
	txt := reportText(t, rep)
	if len(rep.Conns) != 0 || rep.Errors != 0 || !strings.HasPrefix(txt, "summary: 0 connections") || !strings.HasSuffix(txt, ", interrupted (context deadline exceeded)\n") {
		t.Errorf("report:\n%s", txt)
	}
}

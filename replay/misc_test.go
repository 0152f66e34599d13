package replay

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/filter"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

func TestDiff(t *testing.T) {
	a := MessageInfo{Opcode: rdmap.OpSend, Length: 10, Digest: Digest{1}}
	b := MessageInfo{Opcode: rdmap.OpWrite, Length: 20, Digest: Digest{2}}
	c := MessageInfo{Opcode: rdmap.OpReadRequest, Length: 0, Digest: Digest{3}}
	d := MessageInfo{Opcode: rdmap.OpSend, Length: 11, Digest: Digest{4}}
	e := MessageInfo{Opcode: rdmap.OpSend, Length: 10, Digest: Digest{5}}
	c2 := c // another Read Request header
	c2.Read.Size, c2.Read.SinkSTag = 1, 0xdeadbeef
	b2 := b // the same Write to another TO
	b2.STag, b2.TO = 7, 0x100
	type m struct {
		kind      MismatchKind
		want, got int
	}
	tests := []struct {
		name      string
		want, got []MessageInfo
		out       []m
	}{
		{"same", []MessageInfo{a, b, c}, []MessageInfo{a, b, c}, nil},
		{"empty", nil, nil, nil},
		{"missing middle", []MessageInfo{a, b, c}, []MessageInfo{a, c}, []m{{MismatchMissing, 1, -1}}},
		{"missing tail", []MessageInfo{a, b, c}, []MessageInfo{a, b}, []m{{MismatchMissing, 2, -1}}},
		{"extra", []MessageInfo{a, c}, []MessageInfo{a, b, c}, []m{{MismatchExtra, -1, 1}}},
		{"extra tail", []MessageInfo{a}, []MessageInfo{a, b}, []m{{MismatchExtra, -1, 1}}},
		{"payload", []MessageInfo{a, b}, []MessageInfo{e, b}, []m{{MismatchPayload, 0, 0}}},
		{"length", []MessageInfo{a, b}, []MessageInfo{d, b}, []m{{MismatchLength, 0, 0}}},
		{"opcode", []MessageInfo{a, c}, []MessageInfo{b, c}, []m{{MismatchOpcode, 0, 0}}},
		{"read request header", []MessageInfo{a, c, b}, []MessageInfo{a, c2, b}, []m{{MismatchHeader, 1, 1}}},
		{"tagged STag and TO", []MessageInfo{a, b, c}, []MessageInfo{a, b2, c}, []m{{MismatchHeader, 1, 1}}},
		{"swapped", []MessageInfo{a, b, c}, []MessageInfo{b, a, c}, []m{{MismatchOrder, 0, 1}}},
		{"nothing received", []MessageInfo{a, b}, nil, []m{{MismatchMissing, 0, -1}, {MismatchMissing, 1, -1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff(R2I, tc.want, tc.got)
			if len(got) != len(tc.out) {
				t.Fatalf("Diff = %v, want %d mismatches", got, len(tc.out))
			}
			for i, w := range tc.out {
				if got[i].Kind != w.kind || got[i].WantIndex != w.want || got[i].GotIndex != w.got || got[i].Dir != R2I {
					t.Errorf("mismatch %d = %s (%d/%d), want %s %d/%d", i, got[i], got[i].WantIndex, got[i].GotIndex, w.kind, w.want, w.got)
				}
			}
		})
	}
}

// msgTimes returns the offset of each message's first frame from the
// first MPA frame of the capture, per direction.
func msgTimes(t *testing.T, path string) [2][]time.Duration {
	recs := testutil.Decode(t, path, flows.Options{})
	var t0 time.Time
	var out [2][]time.Duration
	first := map[uint64]time.Time{}
	for _, r := range recs {
		if t0.IsZero() && r.Type == flows.RecMPA {
			t0 = r.TS
		}
		if r.Type == flows.RecFPDU {
			if _, ok := first[r.Frame]; !ok {
				first[r.Frame] = r.TS
			}
		}
	}
	for _, r := range recs {
		if r.Type == flows.RecMessage {
			d := 0
			if r.Dir == flows.DirR2I {
				d = 1
			}
			out[d] = append(out[d], first[r.Message.FirstFrame].Sub(t0))
		}
	}
	return out
}

// TestPacing replays with the recorded timing (and twice as fast) into a
// capture, whose virtual clock shows the pacing exactly, and bounds the
// rate with MaxRate.
func TestPacing(t *testing.T) {
	path := "../testdata/siw/crc_v2_iwtest_ops.pcap"
	orig := load(t, path, LoadOptions{})
	rec := msgTimes(t, path)
	for _, speed := range []float64{1, 2} {
		out, _ := toPcap(t, orig, Options{Speed: speed})
		got := msgTimes(t, out)
		for d := range 2 {
			if len(got[d]) != len(rec[d]) {
				t.Fatalf("speed %v %s: %d messages, recorded %d", speed, Dir(d), len(got[d]), len(rec[d]))
			}
			for i := range rec[d] {
				want := time.Duration(float64(rec[d][i]) / speed)
				// The replay measures from the exchange's end, the recording
				// from the Request: allow the recorded handshake time.
				if diff := got[d][i] - want; diff < -20*time.Millisecond || diff > 20*time.Millisecond {
					t.Errorf("speed %v %s message %d at %v, want %v", speed, Dir(d), i, got[d][i], want)
				}
			}
		}
	}
	// As fast as possible: the whole replay takes a few virtual µs per frame.
	out, _ := toPcap(t, orig, Options{})
	if got := msgTimes(t, out); got[0][len(got[0])-1] > 5*time.Millisecond {
		t.Errorf("unpaced replay spans %v", got[0][len(got[0])-1])
	}
	// MaxRate: the responder sends about 103 KB; at 1 MB/s that is 0.1 s.
	out, rep := toPcap(t, orig, Options{MaxRate: 1e6})
	got := msgTimes(t, out)
	last := max(got[0][len(got[0])-1], got[1][len(got[1])-1])
	resp := float64(rep.Conns[0].Sides[R2I].SentOctets)
	if want := time.Duration(resp / 1e6 * float64(time.Second)); last < want*8/10 || last > want*13/10 {
		t.Errorf("at 1 MB/s the replay spans %v, want about %v", last, want)
	}
	// The report's duration (and so its rate) is the capture's: from the
	// first frame's timestamp to the last's, as capinfos says.
	src := openCapture(t, out)
	var first, end time.Time
	for {
		p, err := src.Next()
		if err != nil {
			break
		}
		if first.IsZero() {
			first = p.TS
		}
		end = p.TS
	}
	if span := end.Sub(first); rep.Elapsed < span || rep.Elapsed > span+time.Millisecond {
		t.Errorf("report's duration %v, the capture spans %v", rep.Elapsed, span)
	}
}

// TestMaxRateWallClock: MaxRate holds over real sockets too.
func TestMaxRateWallClock(t *testing.T) {
	orig := load(t, "../testdata/siw/crc_v2_iwtest_ops.pcap", LoadOptions{})
	rep, err := Loopback(context.Background(), orig, Options{MaxRate: 250e3})
	if err != nil || !rep.OK() {
		t.Fatalf("%v %+v", err, rep)
	}
	resp := float64(rep.Conns[0].Sides[R2I].SentOctets)
	want := time.Duration(resp / 250e3 * float64(time.Second))
	if rep.Elapsed < want*8/10 {
		t.Errorf("took %v at 250 kB/s, want at least %v", rep.Elapsed, want*8/10)
	}
	if r := rep.Rate(); r <= 0 || math.IsInf(r, 0) {
		t.Errorf("rate %v", r)
	}
}

// TestPayloadCap: past LoadOptions.MaxPayload messages keep only their
// digest and length; the replay generates their octets, so a replay whose
// both ends are the engine stays clean, the regenerated capture carries the
// generated octets, and a real peer's payload is compared with the recorded
// digest.
func TestPayloadCap(t *testing.T) {
	path := "../testdata/siw/crc_v2_iwtest_ops.pcap"
	full := load(t, path, LoadOptions{})
	capped := load(t, path, LoadOptions{MaxPayload: 2000})
	if capped[0].Fillers == 0 || full[0].Fillers != 0 {
		t.Fatalf("fillers: capped %d, full %d", capped[0].Fillers, full[0].Fillers)
	}
	kept := 0
	for i := range capped[0].Messages {
		m := &capped[0].Messages[i]
		for _, s := range m.Segments {
			kept += len(s.Payload)
			if m.Filler && s.Payload != nil {
				t.Errorf("message %d is a filler but keeps payload", i)
			}
		}
		// The recorded digest is known either way.
		if m.Digest != full[0].Messages[i].Digest || m.Length != full[0].Messages[i].Length {
			t.Errorf("message %d: digest or length lost", i)
		}
	}
	if kept > 2000 {
		t.Errorf("kept %d payload octets, cap 2000", kept)
	}
	rep, err := Loopback(context.Background(), capped, Options{})
	if err != nil || !rep.OK() {
		t.Fatalf("loopback with fillers: %v %v %v", err, rep.Conns[0].Mismatches, rep.Conns[0].Err)
	}
	out, _ := toPcap(t, capped, Options{})
	again := load(t, out, LoadOptions{})
	plan := buildMessages(capped[0], &Outcome{V: 1}, false, 0)
	for i := range again[0].Messages {
		g, w := &again[0].Messages[i], &plan[i]
		if g.Length != w.length || g.Digest != w.digest || g.Head.Opcode != w.head.Opcode {
			t.Errorf("message %d: replayed %s %d [%s], want %s %d [%s]", i, g.Head.Opcode, g.Length, g.Digest, w.head.Opcode, w.length, w.digest)
		}
		if w.filler == (g.Digest == capped[0].Messages[i].Digest) && g.Length > 0 {
			t.Errorf("message %d: filler %v but digest equal %v", i, w.filler, g.Digest == capped[0].Messages[i].Digest)
		}
	}
	// Against a real peer (here the engine in --listen mode, playing the
	// full recording), generated octets differ from the recorded digest.
	o := Options{}
	o.Timeouts.Idle = 300 * time.Millisecond
	ir, _ := connectPair(t, capped, full, o)
	nf := 0
	for i := range capped[0].Messages {
		if m := &capped[0].Messages[i]; m.Dir == R2I && m.Filler {
			nf++
		}
	}
	if got := ir.Conns[0].Mismatches; len(got) != 0 {
		t.Errorf("initiator with fillers against the full responder: %v", got)
	}
	ir, _ = connectPair(t, full, capped, o)
	if got := ir.Conns[0].Mismatches; len(got) != nf {
		t.Errorf("full initiator against a responder sending generated octets: %d mismatches %v, want %d payload mismatches", len(got), got, nf)
	} else {
		for _, m := range got {
			if m.Kind != MismatchPayload {
				t.Errorf("mismatch %s, want payload", m)
			}
		}
	}
}

// TestSelect: connections chosen by id and by display filter.
func TestSelect(t *testing.T) {
	path := synthFile(t, "multi-conn")
	all := load(t, path, LoadOptions{})
	if len(all) != 3 {
		t.Fatalf("%d connections, want 3", len(all))
	}
	ids := func(ss []*Script) []int {
		var out []int
		for _, s := range ss {
			out = append(out, s.Conn)
		}
		return out
	}
	if got := ids(load(t, path, LoadOptions{Conns: []int{0, 2}})); !slices.Equal(got, []int{0, 2}) {
		t.Errorf("--conn 0,2 gives %v", got)
	}
	f, err := filter.Compile("mpa.rev == 2")
	if err != nil {
		t.Fatal(err)
	}
	// Connection ids follow first appearance: the IPv6 rev 2 one is 0.
	if got := ids(load(t, path, LoadOptions{Filter: f})); !slices.Equal(got, []int{0}) {
		t.Errorf("-Y 'mpa.rev == 2' gives %v", got)
	}
	if _, err := Load(path, LoadOptions{Filter: f, Conns: []int{1}}); !errors.Is(err, ErrNoConnections) {
		t.Errorf("filter and ids with nothing in common: %v", err)
	}
	// Extract applies the filter in a single pass.
	f2, _ := filter.Compile("ddp.dv == 0")
	src := openCapture(t, path)
	ss, err := Extract(src, LoadOptions{Filter: f2})
	if err != nil || !slices.Equal(ids(ss), []int{2}) {
		t.Errorf("Extract -Y 'ddp.dv == 0': %v %v", ids(ss), err)
	}
	rep, err := Loopback(context.Background(), all, Options{})
	if err != nil || !rep.OK() || len(rep.Conns) != 3 {
		t.Errorf("loopback of 3 connections: %v %+v", err, rep)
	}
}

// TestLoopbackOnly: the loopback mode refuses an address off the host.
func TestLoopbackOnly(t *testing.T) {
	ss := load(t, "../testdata/siw/crc_v2_iwtest_ops.pcap", LoadOptions{})
	for _, a := range []string{"192.0.2.1:0", "0.0.0.0:0", "[::]:0", "example.com:80"} {
		if _, err := Loopback(context.Background(), ss, Options{Addr: a}); !errors.Is(err, ErrNotLoopback) {
			t.Errorf("%s: %v, want ErrNotLoopback", a, err)
		}
	}
	for _, a := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0"} {
		rep, err := Loopback(context.Background(), ss, Options{Addr: a})
		if err != nil || !rep.OK() {
			t.Errorf("%s: %v", a, err)
		}
	}
}

// TestProgress: the callback sees the replay's counts, the last call the
// totals.
func TestProgress(t *testing.T) {
	ss := load(t, "../testdata/siw/crc_v2_iwtest_ops.pcap", LoadOptions{})
	var calls atomic.Int32
	var last Progress
	rep, err := Loopback(context.Background(), ss, Options{MaxRate: 1e6, ProgressEvery: 20 * time.Millisecond,
		Progress: func(p Progress) { calls.Add(1); last = p }})
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() < 2 {
		t.Errorf("%d progress calls", calls.Load())
	}
	if last.MessagesSent != uint64(rep.Messages) || last.OctetsSent == 0 || last.MessagesReceived != uint64(rep.Received) {
		t.Errorf("last progress %+v, report %d sent %d received", last, rep.Messages, rep.Received)
	}
	// Progress, sides and summary count the same octets: the MPA frames
	// and the FPDUs (both ends are played: what one sends the other gets).
	c := rep.Conns[0]
	sent := c.Sides[I2R].SentOctets + c.Sides[R2I].SentOctets
	recv := c.Sides[I2R].RecvOctets + c.Sides[R2I].RecvOctets
	if last.OctetsSent != rep.Octets || rep.Octets != sent || last.OctetsReceived != recv || recv != sent {
		t.Errorf("octets: progress sent %d received %d, summary %d, sides sent %d received %d", last.OctetsSent, last.OctetsReceived, rep.Octets, sent, recv)
	}
}

// TestCancel: cancelling the context ends a replay promptly.
func TestCancel(t *testing.T) {
	ss := load(t, "../testdata/siw/crc_v2_iwtest_ops.pcap", LoadOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Loopback(ctx, ss, Options{Speed: 0.01})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestMidstreamInitiator: in a capture that starts after the handshake, the
// side that sent the first iWARP segment stands for the initiator, as the
// messages' directions do: the Script's Initiator is the source tshark
// gives for the first frame with TCP data, and each message is sent by the
// side its direction names (tshark's source of the message's frame).
func TestMidstreamInitiator(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	for _, f := range []string{"midstream/iwtest_ops_from_frame15.pcap", "midstream/rping_nocrc_from_frame20.pcap", "synth/midstream-markers.pcap"} {
		path := filepath.Join("..", "testdata", f)
		ss := load(t, path, LoadOptions{})
		if len(ss) != 1 {
			t.Fatalf("%s: %d scripts", f, len(ss))
		}
		s := ss[0]
		out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "frame.number", "-e", "ip.src", "-e", "tcp.srcport", "-Y", "tcp.len > 0").Output()
		if err != nil {
			t.Fatal(err)
		}
		src := map[uint64]string{}
		first := ""
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			c := strings.Split(l, "\t")
			n, _ := strconv.ParseUint(c[0], 10, 64)
			src[n] = c[1] + ":" + c[2]
			if first == "" {
				first = src[n]
			}
		}
		if s.Initiator.String() != first {
			t.Errorf("%s: initiator %v, responder %v; the first data segment is from %s (tshark)", f, s.Initiator, s.Responder, first)
		}
		n := 0
		for _, m := range s.Messages {
			if m.Filler || src[m.Frame] == "" {
				continue
			}
			n++
			want := s.Initiator.String()
			if m.Dir == R2I {
				want = s.Responder.String()
			}
			if src[m.Frame] != want {
				t.Errorf("%s frame %d: a %v message from %s, tshark %s", f, m.Frame, m.Dir, want, src[m.Frame])
			}
		}
		if n < 5 {
			t.Errorf("%s: %d messages checked", f, n)
		}
	}
}

// TestRTRAsSiw: the RTR a replay sends is the one Linux siw sent in the
// recording: tshark reads the same header fields in the first FPDUs of the
// original and of the replay (the Write RTR of p2p_rtr1_rping, the Read
// RTR and its Read Response of p2p_rtr2_rping).
func TestRTRAsSiw(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	fields := func(path string, n int) []string {
		out, err := exec.Command(tshark, "-r", path, "-Y", "iwarp_ddp_rdmap", "-c", "40", "-T", "fields", "-e", "iwarp_rdma.opcode",
			"-e", "iwarp_ddp.stag", "-e", "iwarp_ddp.tagged_offset", "-e", "iwarp_rdma.sinkstag", "-e", "iwarp_rdma.srcstag",
			"-e", "iwarp_rdma.rdmardsz", "-e", "iwarp_mpa.ulpdulength").Output()
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) < n {
			t.Fatalf("%s: %d FPDUs", path, len(lines))
		}
		return lines[:n]
	}
	for _, c := range []struct {
		file string
		n    int // FPDUs of the RTR
	}{{"p2p_rtr1_rping.pcap", 1}, {"p2p_rtr2_rping.pcap", 2}} {
		orig := filepath.Join("..", "testdata", "siw", c.file)
		replayed, _ := toPcap(t, load(t, orig, LoadOptions{}), Options{})
		want, got := fields(orig, c.n), fields(replayed, c.n)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the replay's RTR is %q, siw's %q", c.file, got, want)
		}
	}
}

// TestNoSuchConnection: asking for connection ids the capture does not have
// names them and the capture's iWARP connections (two in
// basic_ib_read_bw_4096_v2_nocrc: perftest -R opens two, testdata/MANIFEST.md).
func TestNoSuchConnection(t *testing.T) {
	_, err := Load("../testdata/siw/basic_ib_read_bw_4096_v2_nocrc.pcap", LoadOptions{Conns: []int{5, 7}})
	var ne *NoConnectionError
	if !errors.Is(err, ErrNoConnections) || !errors.As(err, &ne) || !slices.Equal(ne.Have, []int{0, 1}) {
		t.Fatalf("error %v", err)
	}
	if want := "replay: no iWARP connections 5, 7 (the capture has iWARP connections 0-1)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	// One id of two missing is a mistake too: not a replay of the other.
	_, err = Load("../testdata/siw/basic_ib_read_bw_4096_v2_nocrc.pcap", LoadOptions{Conns: []int{1, 5}})
	if want := "replay: no iWARP connection 5 (the capture has iWARP connections 0-1)"; err == nil || err.Error() != want {
		t.Errorf("--conn 1,5: error %v, want %q", err, want)
	}
	if ss, err := Load("../testdata/siw/basic_ib_read_bw_4096_v2_nocrc.pcap", LoadOptions{Conns: []int{1}}); err != nil || len(ss) != 1 || ss[0].Conn != 1 {
		t.Errorf("conn 1: %v", err)
	}
}

// TestSelectPipe: a display filter needs two passes over the capture; a
// named pipe (as -r - or -r <(...) give) cannot be read twice, so Load
// copies it to a temporary file first. The selection is the regular file's.
func TestSelectPipe(t *testing.T) {
	path := synthFile(t, "multi-conn")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipe: %v", err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write(data)
		w.Close()
	}()
	f, err := filter.Compile("ipv6.addr")
	if err != nil {
		t.Fatal(err)
	}
	// A second open of the pipe would wait for a writer without end.
	type result struct {
		ss  []*Script
		err error
	}
	done := make(chan result, 1)
	go func() {
		ss, err := Load(fifo, LoadOptions{Filter: f})
		done <- result{ss, err}
	}()
	var ss []*Script
	select {
	case r := <-done:
		ss, err = r.ss, r.err
	case <-time.After(20 * time.Second):
		t.Fatal("Load from a pipe with -Y does not return (it read the pipe twice?)")
	}
	if err != nil {
		t.Fatalf("Load from a pipe with -Y: %v", err)
	}
	// multi-conn's IPv6 connection is conn 0 (TestSelect).
	if len(ss) != 1 || ss[0].Conn != 0 || !ss[0].Initiator.Addr().Is6() || len(ss[0].Messages) != 6 {
		t.Errorf("selected %v, want the IPv6 connection 0 with its 6 messages", ss)
	}
}

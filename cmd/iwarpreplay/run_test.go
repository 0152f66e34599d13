package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/replay"
	"github.com/iwarpkit/iwarpkit/synth"
)

const siw = "../../testdata/siw/crc_v2_iwtest_ops.pcap"

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// readyWriter is the standard error of a --listen run: ready is closed
// once it says it listens.
type readyWriter struct {
	mu    sync.Mutex
	b     bytes.Buffer
	ready chan struct{}
	once  sync.Once
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.b.Write(p)
	if strings.Contains(w.b.String(), "iwarpreplay: listening on ") {
		w.once.Do(func() { close(w.ready) })
	}
	return n, err
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// startListen runs iwarpreplay with args (a --listen run) in the
// background and returns once it listens; wait returns its exit status
// and standard output when it ends. (Trying --connect until it was not
// refused raced with the listener: a --connect whose first connections
// were refused and the others accepted left the listener holding those,
// and the next try's were reset: 11 of 40 runs of TestConcurrent.)
func startListen(t *testing.T, args ...string) (wait func() (int, string)) {
	t.Helper()
	var out bytes.Buffer
	errw := &readyWriter{ready: make(chan struct{})}
	done := make(chan int, 1)
	go func() { done <- run(context.Background(), args, &out, errw) }()
	select {
	case <-errw.ready:
	case code := <-done:
		t.Fatalf("--listen exited %d before listening:\n%s%s", code, out.String(), errw)
	case <-time.After(30 * time.Second):
		t.Fatal("--listen not listening after 30 s")
	}
	return func() (int, string) {
		code := <-done
		return code, out.String()
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "no capture given"},
		{[]string{"-r", siw, "--loopback", "--to-pcap", "x"}, 2, "choose one of"},
		{[]string{"-r", siw, "--rev", "3"}, 2, "--rev"},
		{[]string{"-r", siw, "--rnic", "bogus"}, 2, "unknown RNIC"},
		{[]string{"-r", siw, "--rnic", "rdmac,ietf,ietf"}, 2, "--rnic"},
		{[]string{"-r", siw, "--speed", "fast-ish"}, 2, "--speed"},
		{[]string{"-r", siw, "--markers", "up"}, 2, "--markers"},
		{[]string{"-r", siw, "--crc", "maybe"}, 2, "--crc"},
		{[]string{"-r", siw, "--rtr", "carrier-pigeon"}, 2, "--rtr"},
		{[]string{"-r", siw, "--ird", "20000"}, 2, "--ird"},
		{[]string{"-r", siw, "--max-rate", "-5"}, 2, "--max-rate"},
		{[]string{"-r", siw, "--conn", "x"}, 2, "--conn"},
		{[]string{"-r", siw, "-Y", "nosuchfield == 1"}, 2, "-Y"},
		{[]string{"-r", siw, "--addr", "192.0.2.1:0"}, 2, "loopback"},
		{[]string{"-r", "/nonexistent.pcap"}, 2, "nonexistent"},
		{[]string{"-r", siw, "--conn", "7"}, 2, "no iWARP connection 7 (the capture has iWARP connection 0)"},
		// perftest -R opens two connections (testdata/MANIFEST.md), 0 and 1.
		{[]string{"-r", "../../testdata/siw/basic_ib_read_bw_4096_v2_nocrc.pcap", "--conn", "5"}, 2, "no iWARP connection 5 (the capture has iWARP connections 0-1)"},
		{[]string{"-r", "../../testdata/siw/basic_ib_read_bw_4096_v2_nocrc.pcap", "--conn", "1,5"}, 2, "no iWARP connection 5 (the capture has iWARP connections 0-1)"},
		{[]string{"-r", "../../testdata/siw/basic_ib_read_bw_4096_v2_nocrc.pcap", "--conn", "2,4-6"}, 2, "no iWARP connections 2, 4-6 (the capture has iWARP connections 0-1)"},
		{[]string{"-r", siw, "extra"}, 2, "unexpected arguments"},
		{[]string{"-r", "../../testdata/rxe/rxe_v4_rping.pcap", "--list"}, 2, "the capture has no iWARP connection"},
		{[]string{"-r", siw, "--accept-timeout", "0s"}, 2, "--accept-timeout"},
		{[]string{"-h"}, 0, "usage: iwarpreplay"},
	}
	for _, tc := range tests {
		code, _, stderr := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
}

func TestList(t *testing.T) {
	code, out, _ := runCmd(t, "-r", siw, "--list")
	if code != 0 || !strings.Contains(out, "MPA request rev 2") || !strings.Contains(out, "RDMA Read Response, 100000 octets in 71 segments") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestToPcapAndLoopback(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.pcap")
	code, out, stderr := runCmd(t, "-r", siw, "--to-pcap", p, "--markers", "i2r", "--crc", "on", "-q")
	if code != 0 || !strings.Contains(out, "markers i2r on r2i off CRC on") || !strings.Contains(out, "0 mismatches, 0 errors") {
		t.Fatalf("--to-pcap: exit %d\n%s%s", code, out, stderr)
	}
	ss, err := replay.Load(p, replay.LoadOptions{})
	if err != nil || len(ss) != 1 || !ss[0].Summary.MarkersI2R || ss[0].Summary.MarkersR2I {
		t.Errorf("written capture: %v %+v", err, ss)
	}
	code, out, stderr = runCmd(t, "-r", siw, "--speed", "4x", "--max-rate", "50M")
	if code != 0 || !strings.Contains(out, "summary: 1 connection, 13 messages sent") {
		t.Errorf("loopback: exit %d\n%s%s", code, out, stderr)
	}
	code, out, _ = runCmd(t, "-r", siw, "--loopback", "--addr", "[::1]:0", "--rnic", "ietf-permissive,rdmac", "-q")
	if code != 0 || !strings.Contains(out, "V=0 markers i2r on r2i on CRC on, matrix row 5") {
		t.Errorf("loopback row 5: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "-r", siw, "--rnic", "ietf,rdmac", "-q")
	if code != 0 || !strings.Contains(out, "closed by the initiator") || !strings.Contains(out, "row 4") {
		t.Errorf("loopback row 4: exit %d\n%s", code, out)
	}
}

// TestConnectListen runs --listen and --connect against each other, then
// --connect against a responder whose script drops a message.
func TestConnectListen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	wait := startListen(t, "-r", siw, "--listen", addr, "-q", "--idle", "300ms")
	code, out, errs := runCmd(t, "-r", siw, "--connect", addr, "-q", "--idle", "300ms")
	lcode, lout := wait()
	if code != 0 || lcode != 0 {
		t.Fatalf("connect exit %d:\n%s%s\nlisten exit %d:\n%s", code, out, errs, lcode, lout)
	}

	// A wrong responder: the engine playing a script without the
	// responder's first message.
	scripts, err := replay.Load(siw, replay.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := *scripts[0]
	i := slices.IndexFunc(s.Messages, func(m replay.Message) bool { return m.Dir == replay.R2I })
	s.Messages = slices.Delete(slices.Clone(s.Messages), i, i+1)
	tl, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	go replay.Listen(context.Background(), tl, []*replay.Script{&s}, replay.Options{Timeouts: replay.Timeouts{Idle: 300 * time.Millisecond}})
	code, out, _ = runCmd(t, "-r", siw, "--connect", tl.Addr().String(), "-q", "--idle", "300ms", "--timeout", "300ms")
	want := "mismatch: r2i message 0 missing: Send 16 octets"
	if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, "1 mismatch,") {
		t.Errorf("wrong responder: exit %d, want 1 and %q:\n%s", code, want, out)
	}
}

func TestSelect(t *testing.T) {
	code, out, _ := runCmd(t, "-r", siw, "--conn", "0", "-Y", "rdmap.opcode == 1", "--list")
	if code != 0 || !strings.HasPrefix(out, "conn 0 ") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, _, stderr := runCmd(t, "-r", siw, "-Y", "mpa.rev == 1", "--list")
	if code != 2 || !strings.Contains(stderr, "no iWARP connection") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

func TestParsers(t *testing.T) {
	ids, err := parseIDs("0, 2,4-6")
	if err != nil || !slices.Equal(ids, []int{0, 2, 4, 5, 6}) {
		t.Errorf("parseIDs: %v %v", ids, err)
	}
	for s, want := range map[string]float64{"max": 0, "orig": 1, "2x": 2, "0.5x": 0.5, "3": 3} {
		if got, err := parseSpeed(s); err != nil || got != want {
			t.Errorf("parseSpeed(%q) = %v %v", s, got, err)
		}
	}
	for s, want := range map[string]float64{"10M": 10e6, "1.5k": 1500, "2G": 2e9, "100": 100} {
		if got, err := parseSize(s, 1000); err != nil || got != want {
			t.Errorf("parseSize(%q) = %v %v", s, got, err)
		}
	}
}

// TestMidstreamWarning: a capture that starts mid-stream is replayed with
// the markers its FPDUs carry (the synth file's markers go both ways, as its
// ground truth says), and a warning on standard error says what could not
// be carried: the MPA exchange.
func TestMidstreamWarning(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.pcap")
	code, out, stderr := runCmd(t, "-r", "../../testdata/synth/midstream-markers.pcap", "--to-pcap", p, "-q")
	if code != 0 || !strings.Contains(out, "markers i2r on r2i on CRC on") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(stderr, "iwarpreplay: conn 0: warning: the capture starts mid-stream") || !strings.Contains(stderr, "MPA Request and Reply were not captured") {
		t.Errorf("stderr %q", stderr)
	}
}

// TestInterruptSignal: SIGINT in the middle of a replay (the real binary,
// as a user's Ctrl-C) ends it at once with the report of what was replayed,
// which says it was interrupted by the signal and blames no peer; the exit
// status is 1, as for a replay that did not go as recorded.
func TestInterruptSignal(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "iwarpreplay")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "-r", siw, "-q", "--speed", "0.1x")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the recording spans 0.2 s: 2 s at 0.1x
	start := time.Now()
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v to stop", d)
	}
	out := stdout.String()
	if !strings.HasSuffix(out, ", interrupted (interrupt signal received)\n") || strings.Contains(out, "mismatch:") ||
		strings.Contains(out, "error:") || stderr.Len() > 0 {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, stderr.String())
	}
}

// TestUsageBeforeOutput: a replay refused for its negotiation exits 2 and
// leaves the --to-pcap file as it was; the MPA rev 2 options on a replay
// whose Request is not rev 2 are refused (they would be dropped).
func TestUsageBeforeOutput(t *testing.T) {
	rev1 := "../../testdata/synth/rev1-crc.pcap"
	out := filepath.Join(t.TempDir(), "keep.pcap")
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--rev", "0", "--crc", "off"}, "impossible negotiation"},
		{[]string{"--rtr", "read"}, "need MPA revision 2"},
		{[]string{"--rev", "1", "--p2p", "on", "--ird", "5"}, "Request is revision 1"},
		{[]string{"--ord", "3"}, "add --rev 2"},
		{[]string{"-r", siw, "--rnic", "rdmac", "--ird", "3"}, "Request is revision 0"},
	}
	for _, tc := range tests {
		if err := os.WriteFile(out, []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"-q", "-r", rev1, "--to-pcap", out}, tc.args...)
		code, _, stderr := runCmd(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.msg)
		}
		if b, err := os.ReadFile(out); err != nil || string(b) != "hello\n" {
			t.Errorf("%q: the --to-pcap file holds %q (%v), want it untouched", tc.args, b, err)
		}
	}
	// Asking for no peer-to-peer mode drops nothing: accepted.
	if code, _, stderr := runCmd(t, "-q", "-r", rev1, "--to-pcap", out, "--p2p", "off", "--rtr", "none"); code != 0 {
		t.Errorf("--p2p off on rev 1: exit %d: %s", code, stderr)
	}
}

// TestConcurrent: --listen and --connect run the three connections of
// synth's multi-conn (rev 2 over IPv6, rev 1, and an RDMAC stream without
// MPA exchange) at once; each end reports them in connection order, and
// the progress lines count them. --serial and --max-conns are accepted,
// and --max-conns 0 is refused.
func TestConcurrent(t *testing.T) {
	s, _ := synth.Named("multi-conn", 1)
	file := filepath.Join(t.TempDir(), "multi-conn.pcap")
	if _, err := synth.WriteFiles(s, file); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	wait := startListen(t, "-r", file, "--listen", addr, "-q", "--idle", "300ms", "--timeout", "2s")
	code, out, errs := runCmd(t, "-r", file, "--connect", addr, "--idle", "300ms")
	lcode, lout := wait()
	if code != 0 || lcode != 0 {
		t.Fatalf("connect exit %d:\n%s%s\nlisten exit %d:\n%s", code, out, errs, lcode, lout)
	}
	for _, o := range []string{out, lout} {
		a, b, c := strings.Index(o, "conn 0 [2001:db8::2]:40020 > "), strings.Index(o, "\nconn 1 192.0.2.2:40019 > "), strings.Index(o, "\nconn 2 192.0.2.2:40021 > ")
		if a != 0 || b < a || c < b || !strings.Contains(o, "summary: 3 connections") {
			t.Errorf("report:\n%s", o)
		}
	}
	if !strings.Contains(errs, "iwarpreplay: 3 of 3 connections done: 12 messages sent, 6 received, ") {
		t.Errorf("progress:\n%s", errs)
	}

	p := filepath.Join(t.TempDir(), "serial.pcap")
	code, out, errs = runCmd(t, "-r", file, "--to-pcap", p, "--serial", "--max-conns", "2", "-q")
	if code != 0 || !strings.Contains(out, "summary: 3 connections, ") {
		t.Errorf("--serial: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCmd(t, "-r", file, "--to-pcap", p, "-q")
	if code != 0 || !strings.Contains(out, "summary: 3 connections (at most 3 at once), ") {
		t.Errorf("concurrent --to-pcap: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs = runCmd(t, "-r", file, "--max-conns", "0"); code != 2 || !strings.Contains(errs, "--max-conns") {
		t.Errorf("--max-conns 0: exit %d, %s", code, errs)
	}
}

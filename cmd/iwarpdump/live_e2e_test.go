//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/synth"
)

// End-to-end tests of live capture: two network namespaces joined by a
// veth pair, a TCP server in one and a client in the other exchanging the
// byte streams of synth scenarios (real sockets, real kernel segmentation),
// and the real iwarpdump binary capturing on the server's veth. The decoded
// records must be those synth says it encoded.
//
// They need root (network namespaces, packet sockets) and iproute2. Without
// them they skip, unless IWARP_REQUIRE_ROOT=1 (as in CI), when they fail.

const (
	e2eServer = "192.0.2.1"
	e2eClient = "192.0.2.2"
	e2ePort   = 7174
)

func e2eSkip(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("IWARP_REQUIRE_ROOT") == "1" {
		t.Fatalf("%s (IWARP_REQUIRE_ROOT=1: the live end-to-end tests must run)", msg)
	}
	t.Skipf("%s: skipping the live end-to-end test (run as root with iproute2; CI sets IWARP_REQUIRE_ROOT=1)", msg)
}

// e2eEnv is the test network: namespaces a (server, capture) and b
// (client), and the iwarpdump binary.
type e2eEnv struct {
	bin string
	nsA string
	nsB string
	ifA string
	tmp string
	// server is the address the iWARP server listens on.
	server string
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

func buildIwarpdump(t *testing.T) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "iwarpdump-e2e")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "iwarpdump")
		goBin, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("the go command is needed to build iwarpdump: %v", err)
			return
		}
		cmd := exec.Command(goBin, "build", "-tags", buildTags, "-o", builtBin, ".")
		if buildTags == "" {
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

func run1(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

func newE2E(t *testing.T) *e2eEnv {
	t.Helper()
	if os.Geteuid() != 0 {
		e2eSkip(t, "not root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		e2eSkip(t, "iproute2 (ip) not installed")
	}
	id := strconv.Itoa(os.Getpid() % 100000)
	e := &e2eEnv{nsA: "iwd-a-" + id + "-" + t.Name()[len(t.Name())-3:], nsB: "iwd-b-" + id + "-" + t.Name()[len(t.Name())-3:], ifA: "veth-a", tmp: t.TempDir(), server: e2eServer}
	e.nsA = strings.ReplaceAll(e.nsA, "/", "_")
	e.nsB = strings.ReplaceAll(e.nsB, "/", "_")
	if err := run1("ip", "netns", "add", e.nsA); err != nil {
		e2eSkip(t, "cannot create a network namespace: %v", err)
	}
	t.Cleanup(func() { _ = run1("ip", "netns", "del", e.nsA) })
	if err := run1("ip", "netns", "add", e.nsB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run1("ip", "netns", "del", e.nsB) })
	for _, c := range [][]string{
		{"ip", "-n", e.nsA, "link", "add", "veth-a", "type", "veth", "peer", "name", "veth-b", "netns", e.nsB},
		{"ip", "-n", e.nsA, "addr", "add", e2eServer + "/24", "dev", "veth-a"},
		{"ip", "-n", e.nsB, "addr", "add", e2eClient + "/24", "dev", "veth-b"},
		{"ip", "-n", e.nsA, "link", "set", "veth-a", "up"},
		{"ip", "-n", e.nsB, "link", "set", "veth-b", "up"},
		{"ip", "-n", e.nsA, "link", "set", "lo", "up"},
		{"ip", "-n", e.nsB, "link", "set", "lo", "up"},
	} {
		if err := run1(c...); err != nil {
			t.Fatal(err)
		}
	}
	e.bin = buildIwarpdump(t)
	return e
}

// inNetns runs f on a thread moved into network namespace ns: sockets f
// creates belong to ns.
func inNetns(t *testing.T, ns string, f func()) {
	t.Helper()
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	defer orig.Close()
	target, err := os.Open(filepath.Join("/run/netns", ns))
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	f()
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		// Leave the thread locked: the runtime retires it.
		t.Fatalf("setns back: %v", err)
	}
	runtime.UnlockOSThread()
}

// dump is a running iwarpdump.
type dump struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
	mu     sync.Mutex
	done   chan error
}

func (d *dump) errText() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stderr.String()
}

// outText returns what iwarpdump wrote to standard output so far.
func (d *dump) outText() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stdout.String()
}

// lockedOut writes to a dump's stdout under its lock, so that a test may
// read the output of an iwarpdump still running (outText).
type lockedOut struct{ d *dump }

func (w lockedOut) Write(b []byte) (int, error) {
	w.d.mu.Lock()
	defer w.d.mu.Unlock()
	return w.d.stdout.Write(b)
}

// start runs iwarpdump in namespace a and waits until it listens.
func (e *e2eEnv) start(t *testing.T, args ...string) *dump {
	t.Helper()
	d := &dump{done: make(chan error, 1)}
	d.cmd = exec.Command("ip", append([]string{"netns", "exec", e.nsA, e.bin}, args...)...)
	d.cmd.Stdout = lockedOut{d}
	pr, pw := io.Pipe()
	d.cmd.Stderr = pw
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		once := sync.Once{}
		for sc.Scan() {
			d.mu.Lock()
			d.stderr.WriteString(sc.Text() + "\n")
			d.mu.Unlock()
			if strings.Contains(sc.Text(), "listening on") {
				once.Do(func() { close(listening) })
			}
		}
	}()
	go func() {
		err := d.cmd.Wait()
		pw.Close()
		d.done <- err
	}()
	select {
	case <-listening:
	case err := <-d.done:
		t.Fatalf("iwarpdump %v exited before listening: %v\n%s", args, err, d.errText())
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		t.Fatalf("iwarpdump %v did not start listening:\n%s", args, d.errText())
	}
	return d
}

// stop sends sig (after letting the last packets reach the capture) and
// waits for the exit; it returns the exit code.
func (d *dump) stop(t *testing.T, sig os.Signal) int {
	t.Helper()
	time.Sleep(300 * time.Millisecond)
	if sig != nil {
		_ = d.cmd.Process.Signal(sig)
	}
	return d.wait(t)
}

func (d *dump) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-d.done:
		if err == nil {
			return 0
		}
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		t.Fatalf("iwarpdump did not exit:\n%s", d.errText())
	}
	return -1
}

var statsRE = regexp.MustCompile(`(?m)^(\d+) packets? (captured|received by filter|dropped by kernel)$`)

// stats parses tcpdump's statistics lines.
func stats(t *testing.T, stderr string) (captured, received, dropped int) {
	t.Helper()
	m := statsRE.FindAllStringSubmatch(stderr, -1)
	if len(m) != 3 {
		t.Fatalf("want the three statistics lines on stderr, got:\n%s", stderr)
	}
	v := map[string]int{}
	for _, x := range m {
		v[x[2]], _ = strconv.Atoi(x[1])
	}
	return v["captured"], v["received by filter"], v["dropped by kernel"]
}

// streams are the two directions' TCP payload octets of a synth
// scenario, and its ground truth.
type streams struct {
	name           string
	i2r, r2i       []byte
	reqLen, repLen int
	truth          []map[string]any
}

func synthStreams(t *testing.T, name string) streams {
	t.Helper()
	sc, ok := synth.Named(name, 1)
	if !ok {
		t.Fatalf("no synth scenario %q", name)
	}
	return scenarioStreams(t, name, sc)
}

func scenarioStreams(t *testing.T, name string, sc synth.Scenario) streams {
	t.Helper()
	var pc, tr bytes.Buffer
	if _, err := synth.Generate(sc, &pc, &tr); err != nil {
		t.Fatal(err)
	}
	src, err := capture.NewSource(&pc, name)
	if err != nil {
		t.Fatal(err)
	}
	s := streams{name: name}
	var initiator netip.AddrPort
	next := map[netip.AddrPort]uint32{}
	for {
		p, err := src.Next()
		if err != nil {
			break
		}
		if p.Kind != capture.KindTCP {
			continue
		}
		if p.Flags.Has(capture.FlagSYN) {
			if !p.Flags.Has(capture.FlagACK) {
				initiator = p.Src
			}
			next[p.Src] = p.Seq + 1
			continue
		}
		if len(p.Payload) == 0 || p.Seq != next[p.Src] {
			continue
		}
		next[p.Src] += uint32(len(p.Payload))
		if p.Src == initiator {
			s.i2r = append(s.i2r, p.Payload...)
		} else {
			s.r2i = append(s.r2i, p.Payload...)
		}
	}
	for _, line := range bytes.Split(tr.Bytes(), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		if m["type"] == "mpa" {
			if m["kind"] == "request" {
				s.reqLen = int(m["len"].(float64))
			} else {
				s.repLen = int(m["len"].(float64))
			}
		}
		s.truth = append(s.truth, m)
	}
	if s.reqLen == 0 || s.repLen == 0 || len(s.i2r) <= s.reqLen || len(s.r2i) < s.repLen {
		t.Fatalf("%s: streams %d/%d octets, MPA frames %d/%d", name, len(s.i2r), len(s.r2i), s.reqLen, s.repLen)
	}
	return s
}

// exchange runs the scenario's connection over real sockets: the client in
// b sends the MPA Request, the server in a answers with the Reply, then
// both send the rest of their streams at once and close.
func (e *e2eEnv) exchange(t *testing.T, s streams) {
	t.Helper()
	var ln net.Listener
	inNetns(t, e.nsA, func() {
		var err error
		ln, err = net.Listen("tcp4", net.JoinHostPort(e.server, strconv.Itoa(e2ePort)))
		if err != nil {
			t.Fatal(err)
		}
	})
	defer ln.Close()
	serverErr := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			serverErr <- err
			return
		}
		defer c.Close()
		serverErr <- talk(c.(*net.TCPConn), s.i2r, s.r2i, s.reqLen, s.repLen, false)
	}()
	var c net.Conn
	inNetns(t, e.nsB, func() {
		var err error
		c, err = net.DialTimeout("tcp4", net.JoinHostPort(e.server, strconv.Itoa(e2ePort)), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
	})
	defer c.Close()
	if err := talk(c.(*net.TCPConn), s.r2i, s.i2r, s.repLen, s.reqLen, true); err != nil {
		t.Fatalf("client: %v", err)
	}
	if err := <-serverErr; err != nil {
		t.Fatalf("server: %v", err)
	}
}

// talk plays one side: in is what the peer sends, out what this side
// sends; the initiator sends its first outFirst octets before reading the
// peer's first inFirst.
func talk(c *net.TCPConn, in, out []byte, inFirst, outFirst int, initiator bool) error {
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	got := make([]byte, len(in))
	if initiator {
		if _, err := c.Write(out[:outFirst]); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, got[:inFirst]); err != nil {
			return err
		}
	} else {
		if _, err := io.ReadFull(c, got[:inFirst]); err != nil {
			return err
		}
		if _, err := c.Write(out[:outFirst]); err != nil {
			return err
		}
	}
	werr := make(chan error, 1)
	go func() {
		_, err := c.Write(out[outFirst:])
		if err == nil {
			err = c.CloseWrite()
		}
		werr <- err
	}()
	if _, err := io.ReadFull(c, got[inFirst:]); err != nil {
		return err
	}
	if !bytes.Equal(got, in) {
		return fmt.Errorf("received octets differ from the peer's stream")
	}
	if n, _ := c.Read(make([]byte, 1)); n != 0 {
		return fmt.Errorf("data after the stream")
	}
	return <-werr
}

// noise sends UDP datagrams from b to a (port 9999, nobody listening).
func (e *e2eEnv) noise(t *testing.T, n int) {
	t.Helper()
	inNetns(t, e.nsB, func() {
		c, err := net.Dial("udp4", net.JoinHostPort(e2eServer, "9999"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for i := 0; i < n; i++ {
			_, _ = c.Write([]byte("noise"))
			time.Sleep(2 * time.Millisecond)
		}
	})
}

// signature reduces an MPA or FPDU record (truth or iwarpdump -T jsonl) to
// what a live capture must reproduce.
func signature(m map[string]any) string {
	get := func(path string) any {
		if v, ok := m[path]; ok {
			return v
		}
		var cur any = m
		for _, k := range strings.Split(path, ".") {
			mm, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = mm[k]
		}
		return cur
	}
	switch m["type"] {
	case "mpa":
		return fmt.Sprintf("mpa %v %v rev=%v pd_len=%v c=%v", get("dir"), get("kind"), get("rev"), get("pd_len"), get("c"))
	case "fpdu":
		return fmt.Sprintf("fpdu %v len=%v op=%v crc=%v payload=%v msn=%v", get("dir"), get("len"), get("rdmap.opcode"), get("mpa.crc_status"), get("payload_len"), get("ddp.msn"))
	}
	return ""
}

func signatures(t *testing.T, jsonl []byte) []string {
	t.Helper()
	var out []string
	for _, line := range bytes.Split(jsonl, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("bad JSON line %q: %v", line, err)
		}
		if s := signature(m); s != "" {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func truthSignatures(s streams) []string {
	var out []string
	for _, m := range s.truth {
		if sig := signature(m); sig != "" {
			out = append(out, sig)
		}
	}
	sort.Strings(out)
	return out
}

func checkDecode(t *testing.T, s streams, jsonl []byte) {
	t.Helper()
	got, want := signatures(t, jsonl), truthSignatures(s)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: decoded records differ from what was sent\n got %d: %v\nwant %d: %v", s.name, len(got), got, len(want), want)
	}
	crcOK := 0
	for _, g := range got {
		if strings.Contains(g, "crc=ok") {
			crcOK++
		}
	}
	t.Logf("%s: %d MPA/FPDU records as sent (%d with CRC ok)", s.name, len(got), crcOK)
}

// readFile decodes a written capture with iwarpdump -r.
func (e *e2eEnv) readFile(t *testing.T, path string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(e.bin, append([]string{"-r", path, "-T", "jsonl"}, args...)...).Output()
	if err != nil {
		t.Fatalf("iwarpdump -r %s: %v", path, err)
	}
	return out
}

// fileKinds counts a capture file's packets: TCP to or from the iWARP
// port, and others.
func fileKinds(t *testing.T, path string) (iw, other int) {
	t.Helper()
	src, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for {
		p, err := src.Next()
		if err != nil {
			break
		}
		if p.Kind == capture.KindTCP && (p.Src.Port() == e2ePort || p.Dst.Port() == e2ePort) {
			iw++
		} else {
			other++
		}
	}
	return iw, other
}

func TestLiveEndToEnd(t *testing.T) {
	e := newE2E(t)
	for _, tc := range []struct {
		name     string
		scenario string
		filter   []string
		extra    []string
		file     string
	}{
		{"nofilter-pcapng", "rev2-enhanced", nil, nil, "a.pcapng"},
		{"filter-pcapng", "rev2-enhanced", []string{"tcp", "port", "7174"}, nil, "b.pcapng"},
		{"filter-pcap", "rev1-crc", []string{"host " + e2eServer + " and (tcp port 7174 or 7175)"}, []string{"--pcap", "--nano"}, "c.pcap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := synthStreams(t, tc.scenario)
			wfile := filepath.Join(e.tmp, tc.file)
			args := append([]string{"-i", e.ifA, "-T", "jsonl", "-w", wfile}, tc.extra...)
			args = append(args, tc.filter...)
			d := e.start(t, args...)
			e.noise(t, 5)
			e.exchange(t, s)
			e.noise(t, 5)
			if code := d.stop(t, os.Interrupt); code != 0 {
				t.Fatalf("exit %d\n%s", code, d.errText())
			}
			checkDecode(t, s, d.stdout.Bytes())
			captured, received, dropped := stats(t, d.errText())
			iw, other := fileKinds(t, wfile)
			if captured != iw+other || received < captured || dropped != 0 {
				t.Errorf("stats: %d captured, %d received, %d dropped; the file holds %d packets", captured, received, dropped, iw+other)
			}
			if tc.filter != nil && other != 0 {
				t.Errorf("the filter let %d other packets through", other)
			}
			if tc.filter == nil && other < 10 {
				t.Errorf("without a filter only %d non-iWARP packets (the UDP noise is 10)", other)
			}
			// The written file decodes exactly as the live capture did.
			if got := e.readFile(t, wfile); !bytes.Equal(got, d.stdout.Bytes()) {
				t.Errorf("-r %s decodes differently from the live capture", tc.file)
			}
			t.Logf("%s: %d packets (%d iWARP TCP), stats %d/%d/%d", tc.name, iw+other, iw, captured, received, dropped)
		})
	}
}

// TestLiveSIGTERMAndCount: SIGTERM ends the capture like Ctrl-C, and -c
// ends it by itself, both with the statistics.
func TestLiveSIGTERMAndCount(t *testing.T) {
	e := newE2E(t)
	s := synthStreams(t, "rev2-enhanced")
	d := e.start(t, "-i", e.ifA, "-T", "jsonl", "tcp port 7174")
	e.exchange(t, s)
	if code := d.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM: exit %d\n%s", code, d.errText())
	}
	checkDecode(t, s, d.stdout.Bytes())
	stats(t, d.errText())

	// A JUnit report of a live capture names the interface (it was
	// "iwarpdump ", the files' names being none).
	junit := filepath.Join(t.TempDir(), "live.xml")
	d = e.start(t, "-i", e.ifA, "-c", "5", "--report", "junit:"+junit, "tcp port 7174")
	e.exchange(t, s)
	if code := d.wait(t); code != 0 {
		t.Fatalf("-c 5: exit %d\n%s", code, d.errText())
	}
	if c, _, _ := stats(t, d.errText()); c != 5 {
		t.Errorf("-c 5: %d packets captured", c)
	}
	if b, err := os.ReadFile(junit); err != nil || !strings.Contains(string(b), `name="iwarpdump -i `+e.ifA+`"`) {
		t.Errorf("the JUnit report does not name the interface (%v):\n%s", err, b)
	}
}

// TestLiveInterfaceGone: deleting the interface ends the capture cleanly,
// with the statistics.
func TestLiveInterfaceGone(t *testing.T) {
	e := newE2E(t)
	d := e.start(t, "-i", e.ifA)
	e.noise(t, 3)
	time.Sleep(200 * time.Millisecond)
	if err := run1("ip", "-n", e.nsA, "link", "del", e.ifA); err != nil {
		t.Fatal(err)
	}
	// The capture failed: exit 1, as tcpdump's "The interface
	// disappeared".
	if code := d.wait(t); code != 1 {
		t.Fatalf("exit %d\n%s", code, d.errText())
	}
	if !strings.Contains(d.errText(), "iwarpdump: "+e.ifA+": the interface disappeared\n") {
		t.Errorf("no message about the interface:\n%s", d.errText())
	}
	stats(t, d.errText())
}

// TestLiveInterfaceDown: an interface that is down is refused at once, as
// tcpdump refuses it ("That device is not up"), without a -w file; it used
// to print "listening on" and wait.
func TestLiveInterfaceDown(t *testing.T) {
	e := newE2E(t)
	if err := run1("ip", "-n", e.nsA, "link", "set", e.ifA, "down"); err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(t.TempDir(), "down.pcapng")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // it used to wait for packets
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", e.nsA, e.bin, "-i", e.ifA, "-w", w).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), e.ifA+": that device is not up") || strings.Contains(string(out), "listening on") {
		t.Errorf("down interface: %v\n%s", err, out)
	}
	if _, err := os.Stat(w); !os.IsNotExist(err) {
		t.Errorf("-w file: %v", err)
	}
}

// TestLiveBrokenPipe: when the reader of standard output goes away, the
// capture ends as on Ctrl-C (statistics, a complete -w file) and iwarpdump
// says so and exits 1, as tcpdump reports "Unable to write output"; the
// SIGPIPE used to kill it silently, losing the -w file's buffered packets.
func TestLiveBrokenPipe(t *testing.T) {
	e := newE2E(t)
	s := synthStreams(t, "rev2-enhanced")
	w := filepath.Join(t.TempDir(), "pipe.pcapng")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", e.nsA, e.bin, "-i", e.ifA, "-l", "-w", w, "tcp port 7174")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // listening
	out.Close()                        // the reader is gone
	e.exchange(t, s)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(errb.String(), "broken pipe") {
		t.Fatalf("exit %v, want 1 and a broken pipe message:\n%s", err, errb.String())
	}
	captured, _, _ := stats(t, errb.String())
	n := 0
	src, err := capture.Open(w)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for {
		if _, err := src.Next(); err != nil {
			break
		}
		n++
	}
	if captured == 0 || n != captured {
		t.Errorf("-w file has %d packets, %d captured", n, captured)
	}
}

// TestLiveDropPrivileges: -Z drops to the user before opening the -w
// file, which that user then owns.
func TestLiveDropPrivileges(t *testing.T) {
	e := newE2E(t)
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	dir, err := os.MkdirTemp("", "iwarpdump-z")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o777)
	// The binary must be reachable by nobody too.
	_ = os.Chmod(filepath.Dir(e.bin), 0o755)
	wfile := filepath.Join(dir, "z.pcapng")
	s := synthStreams(t, "rev1-crc")
	d := e.start(t, "-i", e.ifA, "-Z", "nobody", "-w", wfile, "-T", "jsonl", "tcp port 7174")
	e.exchange(t, s)
	if code := d.stop(t, os.Interrupt); code != 0 {
		t.Fatalf("exit %d\n%s", code, d.errText())
	}
	fi, err := os.Stat(wfile)
	if err != nil {
		t.Fatal(err)
	}
	if uid := strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid)); uid != u.Uid {
		t.Errorf("-w file owned by uid %s, want nobody (%s)", uid, u.Uid)
	}
	checkDecode(t, s, d.stdout.Bytes())

	// A directory only root may write to: the -w file is made before
	// privileges are dropped, and given to nobody, as tcpdump does.
	rootDir := filepath.Join(dir, "root")
	if err := os.Mkdir(rootDir, 0o755); err != nil {
		t.Fatal(err)
	}
	wfile = filepath.Join(rootDir, "z.pcapng")
	d = e.start(t, "-i", e.ifA, "-Z", "nobody", "-w", wfile, "tcp port 7174")
	e.exchange(t, s)
	if code := d.stop(t, os.Interrupt); code != 0 {
		t.Fatalf("root-owned directory: exit %d\n%s", code, d.errText())
	}
	fi, err = os.Stat(wfile)
	if err != nil {
		t.Fatal(err)
	}
	if uid := strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid)); uid != u.Uid {
		t.Errorf("-w file in a root-owned directory owned by uid %s, want nobody (%s)", uid, u.Uid)
	}
	if iw, _ := fileKinds(t, wfile); iw == 0 {
		t.Errorf("the -w file in a root-owned directory holds no iWARP packet")
	}
}

func TestLiveErrors(t *testing.T) {
	e := newE2E(t)
	unsupported := struct {
		args []string
		want string
	}{[]string{"-i", e.ifA, "ip6 protochain 6"}, `unsupported "ip6 protochain"`}
	if buildTags == "libpcap" {
		// libpcap compiles it; give it something it refuses.
		unsupported.args[2], unsupported.want = "tcp[13] & 2 != 0 and", "syntax error"
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-i", "nosuch0"}, "nosuch0: no such device"},
		unsupported,
		{[]string{"-i", e.ifA, "port 99999"}, "illegal port number"},
		{[]string{"-i", e.ifA, "-w", "-"}, "standard output"},
		{[]string{"-i", e.ifA, "-C", "1"}, "need -w"},
	} {
		out, err := exec.Command("ip", append([]string{"netns", "exec", e.nsA, e.bin}, tc.args...)...).CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%v: %v, output %q; want exit 2 and %q", tc.args, err, out, tc.want)
		}
	}
}

// TestLiveVLAN: 802.1Q frames injected on veth-b (a packet socket in
// namespace b writes them whole, so no 8021q module is needed). The
// receiving kernel moves the tag out of the frame before socket filters run,
// so "vlan 100 and ..." runs in user space on frames whose tag was put back:
// exactly the VLAN 100 frames are captured, and written with their tag.
func TestLiveVLAN(t *testing.T) {
	e := newE2E(t)
	var macA net.HardwareAddr
	inNetns(t, e.nsA, func() {
		ifc, err := net.InterfaceByName(e.ifA)
		if err != nil {
			t.Fatal(err)
		}
		macA = ifc.HardwareAddr
	})
	wfile := filepath.Join(e.tmp, "vlan.pcapng")
	d := e.start(t, "-i", e.ifA, "-w", wfile, "vlan 100 and udp port 5555")
	// 10 frames each: VLAN 100 (to capture), VLAN 200 and untagged.
	inNetns(t, e.nsB, func() {
		ifc, err := net.InterfaceByName("veth-b")
		if err != nil {
			t.Fatal(err)
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		to := &unix.SockaddrLinklayer{Ifindex: ifc.Index, Halen: 6}
		copy(to.Addr[:], macA)
		for i := 0; i < 30; i++ {
			f := udpFrame(macA, ifc.HardwareAddr, []int{100, 200, -1}[i%3], uint16(i))
			if err := unix.Sendto(fd, f, 0, to); err != nil {
				t.Fatal(err)
			}
		}
	})
	if code := d.stop(t, os.Interrupt); code != 0 {
		t.Fatalf("exit %d\n%s", code, d.errText())
	}
	if buildTags == "" && !strings.Contains(d.errText(), "user space") {
		t.Errorf("no note that the vlan filter runs in user space:\n%s", d.errText())
	}
	src, err := capture.Open(wfile)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	n := 0
	for {
		p, err := src.Next()
		if err != nil {
			break
		}
		n++
		if len(p.Data) < 16 || p.Data[12] != 0x81 || p.Data[13] != 0x00 || (int(p.Data[14]&0x0f)<<8|int(p.Data[15])) != 100 {
			t.Fatalf("frame %d is not tagged VLAN 100: % x", p.Frame, p.Data[:min(len(p.Data), 18)])
		}
		if p.Kind != capture.KindUDP || p.Dst.Port() != 5555 {
			t.Fatalf("frame %d: %v %v > %v (%v)", p.Frame, p.Kind, p.Src, p.Dst, p.Err)
		}
	}
	if captured, _, _ := stats(t, d.errText()); n != 10 || captured != 10 {
		t.Errorf("%d frames written, %d captured; want the 10 of VLAN 100", n, captured)
	}
}

// udpFrame is an Ethernet frame with an 802.1Q tag vid (none when < 0)
// carrying IPv4/UDP from 192.0.2.2 to 192.0.2.1:5555.
func udpFrame(dst, src net.HardwareAddr, vid int, id uint16) []byte {
	f := append(append([]byte{}, dst...), src...)
	if vid >= 0 {
		f = append(f, 0x81, 0x00, byte(vid>>8), byte(vid))
	}
	f = append(f, 0x08, 0x00)
	ip := []byte{0x45, 0, 0, 32, byte(id >> 8), byte(id), 0, 0, 64, 17, 0, 0, 192, 0, 2, 2, 192, 0, 2, 1}
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(ip[i])<<8 | uint32(ip[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	ip[10], ip[11] = byte(^sum>>8), byte(^sum)
	udp := []byte{0x9c, 0x40, 0x15, 0xb3, 0, 12, 0, 0, 'v', 'l', 'a', 'n'}
	return append(append(f, ip...), udp...)
}

// TestLiveRotate: -C with -W writes a ring of files, each a valid capture.
func TestLiveRotate(t *testing.T) {
	e := newE2E(t)
	base := filepath.Join(e.tmp, "ring")
	s := synthStreams(t, "rev1-crc")
	d := e.start(t, "-i", e.ifA, "-w", base, "-C", "2k", "-W", "3", "tcp port 7174")
	e.exchange(t, s)
	if code := d.stop(t, os.Interrupt); code != 0 {
		t.Fatalf("exit %d\n%s", code, d.errText())
	}
	total := 0
	for _, n := range []string{"0", "1", "2"} {
		iw, other := fileKinds(t, base+n)
		if iw == 0 || other != 0 {
			t.Errorf("%s: %d iWARP and %d other packets", base+n, iw, other)
		}
		total += iw
	}
	if _, err := os.Stat(base + "3"); err == nil {
		t.Error("a fourth file with -W 3")
	}
	if captured, _, _ := stats(t, d.errText()); total > captured {
		t.Errorf("%d packets in the ring, %d captured", total, captured)
	}
}

// TestLiveHeldRecords: a live capture writes the records that follow a
// message still open within moments, not at Ctrl-C. The client sends an
// RDMA Write of 8 segments but its last, and keeps the connection open;
// the server then sends a Send. Its line (and the Write's segments) must
// come while iwarpdump still runs: a file's records wait in frame order
// for the message's, a live capture's at most liveHold.
func TestLiveHeldRecords(t *testing.T) {
	e := newE2E(t)
	c := liveConn(synth.Op{Dir: synth.I2R, Kind: synth.Write, Size: 8192, STag: 0x51, TO: 0x1000},
		synth.Op{Dir: synth.R2I, Kind: synth.Send, Size: 16})
	c.MaxULPDU = 1024
	s := scenarioStreams(t, "held", synth.Scenario{Seed: 1, Conns: []synth.Conn{c}})
	// Where the Write's last segment starts in the client's stream.
	cut := -1
	for _, m := range s.truth {
		if m["type"] == "fpdu" && m["dir"] == "i2r" {
			if ddp, ok := m["ddp"].(map[string]any); ok && ddp["l"] == true {
				cut = int(m["off"].(float64))
			}
		}
	}
	if cut <= s.reqLen {
		t.Fatalf("no last Write segment in the truth")
	}
	d := e.start(t, "-i", e.ifA, "tcp port 7174")
	cl, sc := e.connect(t)
	step(t, cl, sc, s.i2r[:s.reqLen])
	step(t, sc, cl, s.r2i[:s.repLen])
	step(t, cl, sc, s.i2r[s.reqLen:cut]) // the Write, but its last segment
	step(t, sc, cl, s.r2i[s.repLen:])    // the Send
	sent := time.Now()
	for !strings.Contains(d.outText(), "Send QN 0 MSN 1") {
		if time.Since(sent) > 3*time.Second {
			_ = d.cmd.Process.Signal(os.Interrupt)
			d.wait(t)
			t.Fatalf("the Send's line was not written within 3 s (the Write's last segment never came); output:\n%s", d.outText())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the Send's line came %v after the Send", time.Since(sent).Round(time.Millisecond))
	if n := strings.Count(d.outText(), "RDMA Write"); n != 7 {
		t.Errorf("%d RDMA Write lines before the close, want the 7 segments sent", n)
	}
	if code := d.stop(t, os.Interrupt); code != 0 {
		t.Fatalf("exit %d\n%s", code, d.errText())
	}
}

// liveConn is a connection between the test's client and server, MPA rev 1
// with CRC, carrying ops.
func liveConn(ops ...synth.Op) synth.Conn {
	return synth.Conn{
		Initiator: netip.MustParseAddrPort(e2eClient + ":40000"),
		Responder: netip.MustParseAddrPort(e2eServer + ":7174"),
		Handshake: true,
		MPA:       &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}},
		Ops:       ops,
	}
}

// connect makes a TCP connection from the client in b to the server in a,
// on e2ePort; both ends are closed when the test ends.
func (e *e2eEnv) connect(t *testing.T) (client, server net.Conn) {
	t.Helper()
	var ln net.Listener
	inNetns(t, e.nsA, func() {
		var err error
		if ln, err = net.Listen("tcp4", net.JoinHostPort(e.server, strconv.Itoa(e2ePort))); err != nil {
			t.Fatal(err)
		}
	})
	defer ln.Close()
	srv := make(chan net.Conn, 1)
	go func() {
		sc, err := ln.Accept()
		if err != nil {
			srv <- nil
			return
		}
		srv <- sc
	}()
	inNetns(t, e.nsB, func() {
		var err error
		if client, err = net.DialTimeout("tcp4", net.JoinHostPort(e.server, strconv.Itoa(e2ePort)), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	})
	t.Cleanup(func() { client.Close() })
	if server = <-srv; server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { server.Close() })
	return client, server
}

// step sends b from one end of a connection and reads it at the other.
func step(t *testing.T, from, to net.Conn, b []byte) {
	t.Helper()
	_ = to.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := from.Write(b); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(to, make([]byte, len(b))); err != nil {
		t.Fatal(err)
	}
}

// TestLiveStallToEnd: an RDMA Read Request the server never answers, on a
// connection left open until the capture stops a second later, is a stall
// to the end of the capture (tcp.stall): the time is the capture's stop,
// not its last packet's.
func TestLiveStallToEnd(t *testing.T) {
	e := newE2E(t)
	c := liveConn(synth.Op{Dir: synth.I2R, Kind: synth.Read, Size: 512, STag: 0x51, SrcSTag: 0x61, NoResponse: true})
	s := scenarioStreams(t, "hang", synth.Scenario{Seed: 1, Conns: []synth.Conn{c}})
	d := e.start(t, "-i", e.ifA, "-q", "-z", "findings", "tcp port 7174")
	cl, sc := e.connect(t)
	step(t, cl, sc, s.i2r[:s.reqLen])
	step(t, sc, cl, s.r2i[:s.repLen])
	step(t, cl, sc, s.i2r[s.reqLen:]) // the Read Request, never answered
	time.Sleep(time.Second)
	if code := d.stop(t, os.Interrupt); code != 0 {
		t.Fatalf("exit %d\n%s", code, d.errText())
	}
	stall := regexp.MustCompile(`no packet for (\d+\.\d+) s until the capture stopped while 1 RDMA Read Request unanswered \(the oldest in frame \d+\); nothing moved again while the capture ran`)
	m := stall.FindStringSubmatch(d.outText())
	if m == nil {
		t.Fatalf("no stall to the end of the capture:\n%s", d.outText())
	}
	if v, _ := strconv.ParseFloat(m[1], 64); v < 0.9 || v > 10 {
		t.Errorf("a stall of %s s, for a second's wait before the capture stopped", m[1])
	}
}

// TestLiveSIGUSR1: SIGUSR1 prints the statistics on one line, as
// tcpdump's info(0) does ("tcpdump: N packets captured, N packets received
// by filter, N packets dropped by kernel"), and the capture goes on; the
// end prints them a line each.
func TestLiveSIGUSR1(t *testing.T) {
	e := newE2E(t)
	d := e.start(t, "-i", e.ifA)
	e.noise(t, 3)
	time.Sleep(300 * time.Millisecond)
	_ = d.cmd.Process.Signal(syscall.SIGUSR1)
	line := regexp.MustCompile(`(?m)^iwarpdump: \d+ packets? captured, \d+ packets? received by filter, \d+ packets? dropped by kernel$`)
	deadline := time.Now().Add(5 * time.Second)
	for !line.MatchString(d.errText()) {
		if time.Now().After(deadline) {
			t.Fatalf("no statistics line after SIGUSR1:\n%s", d.errText())
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.noise(t, 3)
	if code := d.stop(t, os.Interrupt); code != 0 {
		t.Fatalf("exit %d\n%s", code, d.errText())
	}
	if captured, _, _ := stats(t, d.errText()); captured < 6 {
		t.Errorf("%d packets captured, want the 6 sent", captured)
	}
}

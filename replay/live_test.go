package replay

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
)

// requireRoot skips a test that needs root (live capture) with a message, or
// fails it when IWARP_REQUIRE_ROOT=1 or CI is set.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("IWARP_REQUIRE_ROOT") == "1" || os.Getenv("CI") != "" {
			t.Fatalf("root is required (IWARP_REQUIRE_ROOT=1 or CI set) to capture on lo")
		}
		t.Skip("not root: skipping the live capture on lo (run as root, or with IWARP_REQUIRE_ROOT=1 or CI set to make this a failure)")
	}
}

var (
	iwarpdumpOnce sync.Once
	iwarpdumpBin  string
	iwarpdumpErr  error
)

// buildIwarpdump builds the real iwarpdump binary once per test run.
func buildIwarpdump(t *testing.T) string {
	t.Helper()
	iwarpdumpOnce.Do(func() {
		dir, err := os.MkdirTemp("", "iwarpreplay-test")
		if err != nil {
			iwarpdumpErr = err
			return
		}
		iwarpdumpBin = filepath.Join(dir, "iwarpdump")
		out, err := exec.Command("go", "build", "-o", iwarpdumpBin, "../cmd/iwarpdump").CombinedOutput()
		if err != nil {
			iwarpdumpErr = err
			t.Logf("%s", out)
		}
	})
	if iwarpdumpErr != nil {
		t.Fatalf("building iwarpdump: %v", iwarpdumpErr)
	}
	return iwarpdumpBin
}

// liveCapture starts `iwarpdump -i lo -w FILE tcp port PORT` and returns a
// function that stops it and returns the file.
func liveCapture(t *testing.T, port int) (stop func() string) {
	t.Helper()
	bin := buildIwarpdump(t)
	file := filepath.Join(t.TempDir(), "live.pcapng")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	cmd := exec.CommandContext(ctx, bin, "-i", "lo", "-U", "-q", "-w", file, "tcp", "port", strconv.Itoa(port))
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	var lines []string
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
			if strings.Contains(sc.Text(), "listening on") {
				ready <- sc.Text()
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		cancel()
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("iwarpdump -i lo did not start: %s", strings.Join(lines, "\n"))
	}
	return func() string {
		time.Sleep(300 * time.Millisecond) // let the ring deliver the last packets
		cmd.Process.Signal(os.Interrupt)
		err := cmd.Wait()
		cancel()
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Logf("iwarpdump: %v: %s", err, strings.Join(lines, "\n"))
		}
		return file
	}
}

// TestLoopbackLiveCapture replays captures over loopback sockets while the
// real iwarpdump captures on lo with a BPF filter on the replay's port, then
// decodes that capture: the same messages (opcode, length, payload digest,
// order) must come out, framed as negotiated for the replay.
func TestLoopbackLiveCapture(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name     string
		file     string
		addr     string
		neg      Negotiation
		i2r, r2i bool
		crc      bool
	}{
		{name: "synth rev2-enhanced", file: "rev2-enhanced", addr: "127.0.0.1", crc: true},
		{name: "siw crc_v2_iwtest_ops", file: "../testdata/siw/crc_v2_iwtest_ops.pcap", addr: "127.0.0.1", crc: true},
		{name: "siw markers i2r only", file: "../testdata/siw/crc_v2_iwtest_ops.pcap", addr: "127.0.0.1",
			neg: Negotiation{MarkersI2R: ptr(true)}, i2r: true, crc: true},
		{name: "synth markers r2i only IPv6, no CRC", file: "rev1-crc", addr: "::1",
			neg: Negotiation{MarkersR2I: ptr(true), CRC: ptr(false)}, r2i: true},
		{name: "siw p2p read RTR", file: "../testdata/siw/p2p_rtr1_rping.pcap", addr: "127.0.0.1",
			neg: Negotiation{RTR: ptr(mpa.RTRRead)}},
		// No MPA exchange to say where markers go: the recorded FPDUs
		// (markers both ways in the synth ground truth) do.
		{name: "synth midstream-markers", file: "../testdata/synth/midstream-markers.pcap", addr: "127.0.0.1", i2r: true, r2i: true, crc: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.file
			if !strings.HasPrefix(path, "..") {
				path = synthFile(t, path)
			}
			orig := load(t, path, LoadOptions{})
			ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.ParseIP(tc.addr)})
			if err != nil {
				t.Skipf("cannot listen on %s: %v", tc.addr, err)
			}
			defer ln.Close()
			port := ln.Addr().(*net.TCPAddr).Port
			stop := liveCapture(t, port)
			rep, err := LoopbackOn(context.Background(), ln, orig, Options{Negotiation: tc.neg})
			file := stop()
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() {
				t.Fatalf("replay: %v %v", rep.Conns[0].Mismatches, rep.Conns[0].Err)
			}
			again := load(t, file, LoadOptions{})
			if len(again) != 1 {
				t.Fatalf("%d connections in the live capture, want 1", len(again))
			}
			if got := again[0].Responder.Port(); got != uint16(port) {
				t.Errorf("captured responder port %d, want %d", got, port)
			}
			a, b := infos(orig[0], true), infos(again[0], true)
			for d := range a {
				if !slices.Equal(a[d], b[d]) {
					t.Errorf("%s: messages differ\n recorded %v\n captured %v", Dir(d), a[d], b[d])
				}
			}
			checkFraming(t, file, 0, tc.i2r, tc.r2i, tc.crc)
		})
	}
}

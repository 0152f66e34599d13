//go:build linux && !libpcap

package live

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"golang.org/x/sys/unix"

	"github.com/iwarpkit/iwarpkit/capture"
)

// needRoot skips the test without CAP_NET_RAW, or fails it when
// IWARP_REQUIRE_ROOT=1 (CI runs as root and sets it).
func needRoot(t *testing.T) {
	t.Helper()
	h, err := Open(Options{Interface: "lo", FilterExpr: "tcp port 1"})
	if err == nil {
		h.Close()
		return
	}
	if os.Getenv("IWARP_REQUIRE_ROOT") == "1" {
		t.Fatalf("live capture needs root (IWARP_REQUIRE_ROOT=1): %v", err)
	}
	t.Skipf("live capture not possible here (run as root): %v", err)
}

// exchange opens a TCP connection on 127.0.0.1 to a fresh port, sends
// msgs one by one with an echo, and closes it. It returns the port.
func exchange(t *testing.T, network, addr string, msgs [][]byte) int {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		_, err = io.Copy(c, c)
		done <- err
	}()
	c, err := net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 70000)
	for _, m := range msgs {
		if _, err := c.Write(m); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:len(m)]); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return ln.Addr().(*net.TCPAddr).Port
}

func collect(t *testing.T, src *Source, until func(p capture.Packet) bool) []capture.Packet {
	t.Helper()
	var out []capture.Packet
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		p, err := src.Next()
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		p.Data = append([]byte(nil), p.Data...)
		p.Payload = nil
		out = append(out, p)
		if until(p) {
			return out
		}
	}
	t.Fatal("timed out")
	return nil
}

func TestLoopbackCapture(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		iface   string
		network string
		addr    string
		lt      layers.LinkType
	}{
		{"lo", "tcp4", "127.0.0.1:0", layers.LinkTypeEthernet},
		{"any", "tcp4", "127.0.0.1:0", layers.LinkTypeLinuxSLL},
		{"lo", "tcp6", "[::1]:0", layers.LinkTypeEthernet},
	} {
		t.Run(tc.iface+"-"+tc.network, func(t *testing.T) {
			// Pick the port first so the filter can name it.
			ln, err := net.Listen(tc.network, tc.addr)
			if err != nil {
				t.Skipf("%s: %v", tc.network, err)
			}
			port := ln.Addr().(*net.TCPAddr).Port
			ln.Close()
			h, err := Open(Options{Interface: tc.iface, FilterExpr: "tcp port " + strconv.Itoa(port)})
			if err != nil {
				t.Fatal(err)
			}
			if h.LinkType() != tc.lt {
				t.Errorf("link type %v, want %v", h.LinkType(), tc.lt)
			}
			src, err := NewSource(context.Background(), h)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			msgs := [][]byte{[]byte("hello"), make([]byte, 3000), []byte("bye")}
			host := "127.0.0.1"
			if tc.network == "tcp6" {
				host = "::1"
			}
			exchange(t, tc.network, net.JoinHostPort(host, strconv.Itoa(port)), msgs)
			fins := 0
			pkts := collect(t, src, func(p capture.Packet) bool {
				if p.Flags.Has(capture.FlagFIN) {
					fins++
				}
				return fins == 2
			})
			// Every packet is on the port, decoded as TCP, and seen once:
			// each direction's sequence numbers never repeat with data.
			seen := map[string]bool{}
			payload := 0
			for _, p := range pkts {
				if p.Kind != capture.KindTCP {
					t.Fatalf("frame %d: kind %v %v", p.Frame, p.Kind, p.Err)
				}
				if int(p.Src.Port()) != port && int(p.Dst.Port()) != port {
					t.Fatalf("frame %d: %v > %v passed the filter", p.Frame, p.Src, p.Dst)
				}
				key := p.Src.String() + strconv.FormatUint(uint64(p.Seq), 10) + strconv.FormatUint(uint64(p.Ack), 10) + p.Flags.String()
				if seen[key] {
					t.Fatalf("frame %d: duplicate %v > %v seq %d (loopback seen twice?)", p.Frame, p.Src, p.Dst, p.Seq)
				}
				seen[key] = true
				payload += p.PayloadWireLen
				if tc.iface == "any" {
					// The cooked header comes from the ring's sockaddr_ll:
					// ARPHRD_LOOPBACK, an arriving packet (PACKET_HOST).
					if ha, pt := binary.BigEndian.Uint16(p.Data[2:]), binary.BigEndian.Uint16(p.Data[0:]); ha != 772 || pt != 0 {
						t.Fatalf("frame %d: cooked header hatype %d packet type %d, want 772 and 0", p.Frame, ha, pt)
					}
				}
			}
			if want := 2 * (5 + 3000 + 3); payload != want {
				t.Errorf("payload %d octets, want %d", payload, want)
			}
			st, err := h.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if st.Received < uint64(len(pkts)) || st.Dropped != 0 {
				t.Errorf("stats %+v for %d packets", st, len(pkts))
			}
		})
	}
}

func TestSnaplen(t *testing.T) {
	needRoot(t)
	ln, _ := net.Listen("tcp4", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	for _, iface := range []string{"lo", "any"} {
		h, err := Open(Options{Interface: iface, Snaplen: 80, FilterExpr: "tcp port " + strconv.Itoa(port)})
		if err != nil {
			t.Fatal(err)
		}
		src, _ := NewSource(context.Background(), h)
		exchange(t, "tcp4", "127.0.0.1:"+strconv.Itoa(port), [][]byte{make([]byte, 1000)})
		pkts := collect(t, src, func(p capture.Packet) bool { return p.PayloadWireLen == 1000 })
		p := pkts[len(pkts)-1]
		if p.CapLen != 80 || p.WireLen <= 1000 {
			t.Errorf("%s: caplen %d wirelen %d, want 80 and > 1000", iface, p.CapLen, p.WireLen)
		}
		src.Close()
	}
}

func TestOpenErrors(t *testing.T) {
	_, err := Open(Options{Interface: "nosuchif0"})
	if !errors.Is(err, ErrNoInterface) {
		t.Errorf("missing interface: %v", err)
	}
	_, err = Open(Options{Interface: "lo", FilterExpr: "ip6 protochain 6"})
	if err == nil {
		t.Error("unsupported filter accepted")
	}
}

func TestInterrupt(t *testing.T) {
	needRoot(t)
	ctx, cancel := context.WithCancel(context.Background())
	h, err := Open(Options{Interface: "lo", FilterExpr: "tcp port 1"})
	if err != nil {
		t.Fatal(err)
	}
	src, _ := NewSource(ctx, h)
	defer src.Close()
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	if _, err := src.Next(); err != io.EOF {
		t.Fatalf("Next after cancel: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v to stop", d)
	}
	if h.Err() != nil {
		t.Errorf("Err after interrupt: %v", h.Err())
	}
}

func TestInterfaces(t *testing.T) {
	ifs, err := Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var lo, any bool
	for _, i := range ifs {
		lo = lo || (i.Name == "lo" && i.Loopback)
		any = any || i.Name == "any"
	}
	if !lo || !any {
		t.Errorf("interfaces %+v lack lo or any", ifs)
	}
}

// needIP returns after checking that the ip command (iproute2) is there to
// make veth pairs; like needRoot, it fails under IWARP_REQUIRE_ROOT=1.
func needIP(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		if os.Getenv("IWARP_REQUIRE_ROOT") == "1" {
			t.Fatalf("the ip command is needed (IWARP_REQUIRE_ROOT=1): %v", err)
		}
		t.Skipf("the ip command is needed: %v", err)
	}
}

func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// veth makes a veth pair in this network namespace, both ends up, and
// returns the names of the end to capture on and of its peer; the pair is
// deleted at the end of the test.
func veth(t *testing.T, tag string) (capt, peer string) {
	t.Helper()
	capt = fmt.Sprintf("iwl%s%da", tag, os.Getpid()%100000)
	peer = capt[:len(capt)-1] + "b"
	exec.Command("ip", "link", "del", capt).Run() // a leftover of a killed run
	ip(t, "link", "add", capt, "type", "veth", "peer", "name", peer)
	t.Cleanup(func() { exec.Command("ip", "link", "del", peer).Run() })
	ip(t, "link", "set", capt, "up")
	ip(t, "link", "set", peer, "up")
	return capt, peer
}

// frameSender sends Ethernet frames of a local experimental ethertype
// (0x88b5) carrying a text out of an interface.
type frameSender struct {
	fd      int
	ifindex int
}

func newFrameSender(t *testing.T, name string) *frameSender {
	t.Helper()
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return &frameSender{fd: fd, ifindex: ifc.Index}
}

func (s *frameSender) send(text string) {
	f := make([]byte, 14, 60)
	copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5})
	f = append(f, text...)
	for len(f) < 60 {
		f = append(f, 0)
	}
	// Errors (the link is down) are the test's business: it waits for
	// the text to be captured.
	_ = unix.Sendto(s.fd, f, 0, &unix.SockaddrLinklayer{Ifindex: s.ifindex, Protocol: 0xb588})
}

// capturedTexts reads h until it ends, sending the text of each frame of
// ethertype 0x88b5 on the returned channel, which is closed at the end. At
// the end of the test, h is interrupted and closed once the reading is over
// (closing it under a ReadPacket would unmap the ring under it).
func capturedTexts(t *testing.T, h *Handle) <-chan string {
	ch := make(chan string, 64)
	done, quit := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() {
		close(quit)
		h.Interrupt()
		<-done
		h.Close()
	})
	go func() {
		defer close(done)
		defer close(ch)
		for {
			data, _, err := h.ReadPacket()
			if err != nil {
				return
			}
			if len(data) > 14 && data[12] == 0x88 && data[13] == 0xb5 {
				select {
				case ch <- strings.TrimRight(string(data[14:]), "\x00"):
				case <-quit:
					return
				}
			}
		}
	}()
	return ch
}

// await sends text until it is captured; it fails the test when the
// capture ends first or nothing comes within 5 seconds.
func await(t *testing.T, h *Handle, s *frameSender, texts <-chan string, text string) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Second)
	s.send(text)
	for {
		select {
		case got, ok := <-texts:
			if !ok {
				t.Fatalf("the capture ended before %q came (Err: %v)", text, h.Err())
			}
			if got == text {
				return
			}
		case <-tick.C:
			s.send(text)
		case <-deadline:
			t.Fatalf("%q not captured within 5 s", text)
		}
	}
}

// TestLinkFlap: an interface that goes down and comes back up does not end
// the capture, as with tcpdump (libpcap 1.10 polls on after ENETDOWN); the
// capture used to end at the down. While it is down, the socket's pending
// error is cleared rather than making every poll return at once.
func TestLinkFlap(t *testing.T) {
	needRoot(t)
	needIP(t)
	capt, peer := veth(t, "f")
	h, err := Open(Options{Interface: capt})
	if err != nil {
		t.Fatal(err)
	}
	texts := capturedTexts(t, h)
	s := newFrameSender(t, peer)
	await(t, h, s, texts, "before the flap")

	before, _ := h.b.tp.Stats()
	ip(t, "link", "set", capt, "down")
	time.Sleep(500 * time.Millisecond) // several poll intervals, down
	after, _ := h.b.tp.Stats()
	if n := after.Polls - before.Polls; n > 20 {
		t.Errorf("%d polls in 500 ms while the interface was down: the socket's error is not cleared", n)
	}
	select {
	case _, ok := <-texts:
		if !ok {
			t.Fatalf("the capture ended when %s went down (Err: %v)", capt, h.Err())
		}
	default:
	}
	ip(t, "link", "set", capt, "up")
	await(t, h, s, texts, "after the flap")

	h.Interrupt()
	for range texts {
	}
	if h.Err() != nil {
		t.Errorf("Err after Interrupt: %v", h.Err())
	}
}

// TestInterfaceDeleted: deleting the interface ends the capture with an
// error that is ErrInterfaceGone and names the interface, as tcpdump's
// "The interface disappeared"; also when it was down at the time (the
// kernel reports nothing on the socket then).
func TestInterfaceDeleted(t *testing.T) {
	needRoot(t)
	needIP(t)
	for _, down := range []bool{false, true} {
		t.Run(map[bool]string{false: "up", true: "down"}[down], func(t *testing.T) {
			tag := "u"
			if down {
				tag = "d"
			}
			capt, peer := veth(t, tag)
			h, err := Open(Options{Interface: capt})
			if err != nil {
				t.Fatal(err)
			}
			texts := capturedTexts(t, h)
			await(t, h, newFrameSender(t, peer), texts, "hello")
			if down {
				ip(t, "link", "set", capt, "down")
				time.Sleep(300 * time.Millisecond)
			}
			ip(t, "link", "del", capt)
			deadline := time.After(5 * time.Second)
		wait:
			for {
				select {
				case _, ok := <-texts:
					if !ok {
						break wait
					}
				case <-deadline:
					t.Fatal("the capture did not end within 5 s of the interface's deletion")
				}
			}
			err = h.Err()
			if !errors.Is(err, ErrInterfaceGone) {
				t.Fatalf("Err: %v, want ErrInterfaceGone", err)
			}
			if want := capt + ": the interface disappeared"; err.Error() != want {
				t.Errorf("Err: %q, want %q", err, want)
			}
		})
	}
}

//go:build linux && !libpcap

package live

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"
)

// BenchmarkLoopbackSource measures a packet's way from the kernel ring to
// a decoded capture.Packet: UDP datagrams of 1400 octets sent to 127.0.0.1
// and captured on lo with a kernel filter.
func BenchmarkLoopbackSource(b *testing.B) {
	h, err := Open(Options{Interface: "lo", BufferSize: 32 << 20, FilterExpr: "udp port 1"})
	if err != nil {
		b.Skipf("live capture not possible here: %v", err)
	}
	h.Close()
	rc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer rc.Close()
	port := rc.LocalAddr().(*net.UDPAddr).Port
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := rc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	h, err = Open(Options{Interface: "lo", BufferSize: 32 << 20, FilterExpr: "udp dst port " + strconv.Itoa(port)})
	if err != nil {
		b.Fatal(err)
	}
	src, err := NewSource(context.Background(), h)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	c, err := net.Dial("udp4", rc.LocalAddr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	msg := make([]byte, 1400)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	// Packets are sent in batches, outside the timer, and read once the
	// ring has handed their blocks over (TPACKET_V3 retires a partly
	// filled block after 50 ms).
	for done := 0; done < b.N; {
		n := min(2048, b.N-done)
		b.StopTimer()
		for i := 0; i < n; i++ {
			if _, err := c.Write(msg); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(2 * blockTimeout)
		b.StartTimer()
		for i := 0; i < n; i++ {
			p, err := src.Next()
			if err != nil || len(p.Payload) != len(msg) {
				b.Fatalf("packet %d: %v, %d octets", done+i, err, len(p.Payload))
			}
		}
		done += n
	}
}

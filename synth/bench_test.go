package synth

import (
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func BenchmarkGenerate(b *testing.B) {
	for _, n := range []string{"rev1-crc", "markers-both", "multi-conn"} {
		b.Run(n, func(b *testing.B) {
			s := mustNamed(b, n, 1)
			var size int64
			cw := &countWriter{}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Generate(s, cw, io.Discard); err != nil {
					b.Fatal(err)
				}
				size = cw.n
				cw.n = 0
			}
			b.SetBytes(size)
		})
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkWriteLarge measures the streaming generator, pcap octets per
// second, truth included.
func BenchmarkWriteLarge(b *testing.B) {
	const size = 16 << 20
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		if err := WriteLarge(io.Discard, io.Discard, size, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLargeConstantMemory: the live heap of WriteLarge does not grow with
// the size asked for.
func TestLargeConstantMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 80 MB")
	}
	// The peak heap while writing a capture four times as large must not
	// grow with it: memory is bounded by the connections, not the size.
	small, large := peakHeap(t, 16<<20), peakHeap(t, 64<<20)
	t.Logf("peak heap in use: %d MB writing 16 MB, %d MB writing 64 MB", small>>20, large>>20)
	if large > small+8<<20 || large > 64<<20 {
		t.Errorf("peak heap %d MB for a 64 MB capture, %d MB for a 16 MB one", large>>20, small>>20)
	}
}

// peakHeap writes a capture of size octets with WriteLarge and returns the
// most heap in use seen while it did (sampled every 5 ms).
func peakHeap(t *testing.T, size int64) uint64 {
	runtime.GC()
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
			}
		}
	}()
	cw := &countWriter{}
	err := WriteLarge(cw, io.Discard, size, 9)
	close(done)
	<-sampled
	if err != nil {
		t.Fatal(err)
	}
	if cw.n < size {
		t.Fatalf("wrote %d octets, want %d", cw.n, size)
	}
	return peak.Load()
}

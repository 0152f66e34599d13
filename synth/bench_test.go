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
		t.Skip("writes 256 MB")
	}
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
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
	err := WriteLarge(cw, io.Discard, 256<<20, 9)
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d MB, peak heap in use %d MB", cw.n>>20, peak.Load()>>20)
	if peak.Load() > 64<<20 {
		t.Errorf("peak heap %d MB for a 256 MB capture", peak.Load()>>20)
	}
}

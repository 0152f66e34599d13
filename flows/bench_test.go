package flows_test

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/synth"
)

var (
	benchOnce sync.Once
	benchPcap []byte
)

// benchCapture is a 64 MiB capture of one long generated connection.
func benchCapture(b *testing.B) []byte {
	benchOnce.Do(func() {
		var buf bytes.Buffer
		if err := synth.WritePerf(&buf, 64<<20, 1); err != nil {
			b.Fatal(err)
		}
		benchPcap = buf.Bytes()
	})
	return benchPcap
}

func benchDecode(b *testing.B, emit func(*flows.Record)) {
	data := benchCapture(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src, err := capture.NewSource(bytes.NewReader(data), "bench")
		if err != nil {
			b.Fatal(err)
		}
		d := flows.NewDecoder(flows.Options{}, emit)
		for {
			p, err := src.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			d.Packet(&p)
		}
		d.Close()
	}
}

// BenchmarkPipeline: file bytes -> records, records discarded.
func BenchmarkPipeline(b *testing.B) {
	benchDecode(b, func(*flows.Record) {})
}

// BenchmarkPipelineJSONL: file bytes -> records -> JSON Lines.
func BenchmarkPipelineJSONL(b *testing.B) {
	var buf []byte
	benchDecode(b, func(r *flows.Record) {
		buf = format.AppendJSON(buf[:0], format.Fields(r))
	})
}

// BenchmarkCaptureOnly: reading and decoding Ethernet/IP/TCP, for reference.
func BenchmarkCaptureOnly(b *testing.B) {
	data := benchCapture(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		src, _ := capture.NewSource(bytes.NewReader(data), "bench")
		for {
			if _, err := src.Next(); err != nil {
				break
			}
		}
	}
}

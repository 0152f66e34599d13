package flows_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/synth"
)

// generated is a capture made once, for the benchmarks that share it.
type generated struct {
	once  sync.Once
	write func(io.Writer, int64, int64) error
	size  int64
	data  []byte
}

func (g *generated) get(b *testing.B) []byte {
	g.once.Do(func() {
		var buf bytes.Buffer
		if err := g.write(&buf, g.size, 1); err != nil {
			b.Fatal(err)
		}
		g.data = buf.Bytes()
	})
	return g.data
}

var (
	// perfData is 64 MiB of the issue 6 workload (WritePerf).
	perfData = generated{write: synth.WritePerf, size: 64 << 20}
	// smallData is 16 MiB of the small-message workload (WriteSmall).
	smallData = generated{write: synth.WriteSmall, size: 16 << 20}
)

// benchCapture is the 64 MiB workload.
func benchCapture(b *testing.B) []byte { return perfData.get(b) }

func benchDecode(b *testing.B, emit func(*flows.Record)) {
	benchDecodeOpts(b, flows.Options{}, 0, emit)
}

// benchDecodeOpts decodes the workload with opts, with a Parallel of
// workers workers when workers > 0.
func benchDecodeOpts(b *testing.B, opts flows.Options, workers int, emit func(*flows.Record)) {
	benchDecodeData(b, benchCapture(b), opts, workers, emit)
}

// benchDecodeData is benchDecodeOpts on data.
func benchDecodeData(b *testing.B, data []byte, opts flows.Options, workers int, emit func(*flows.Record)) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src, err := capture.NewSource(bytes.NewReader(data), "bench")
		if err != nil {
			b.Fatal(err)
		}
		var d interface {
			Packet(*capture.Packet)
			Close()
		}
		if workers > 0 {
			p, err := flows.NewParallel(opts, workers, emit)
			if err != nil {
				b.Fatal(err)
			}
			d = p
		} else {
			d = flows.NewDecoder(opts, emit)
		}
		// One packet variable for the whole loop: d is an interface, so
		// &p escapes, once.
		var p capture.Packet
		for {
			p, err = src.Next()
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

// BenchmarkPipelineRecycle: as BenchmarkPipeline, FPDU records reused.
func BenchmarkPipelineRecycle(b *testing.B) {
	benchDecodeOpts(b, flows.Options{Recycle: true}, 0, func(*flows.Record) {})
}

// BenchmarkPipelineParallel: 1, 2 and 4 workers, FPDU records reused.
func BenchmarkPipelineParallel(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			benchDecodeOpts(b, flows.Options{Recycle: true}, n, func(*flows.Record) {})
		})
	}
}

// BenchmarkPipelineSmall: small messages (some 40 FPDUs a packet, each a
// message), FPDU records reused, with 1 and 2 workers: the cost per FPDU
// rather than per octet.
func BenchmarkPipelineSmall(b *testing.B) {
	for _, n := range []int{0, 2} {
		b.Run(strconv.Itoa(max(n, 1)), func(b *testing.B) {
			benchDecodeData(b, smallData.get(b), flows.Options{Recycle: true}, n, func(*flows.Record) {})
		})
	}
}

// BenchmarkPipelineJSONL: file bytes -> records -> JSON Lines.
func BenchmarkPipelineJSONL(b *testing.B) {
	var buf []byte
	var w format.JSONWriter
	benchDecodeOpts(b, flows.Options{Recycle: true}, 0, func(r *flows.Record) {
		buf = w.Append(buf[:0], r)
	})
}

// BenchmarkPipelineJSONLWorkers: JSON Lines of the workload and of small
// messages with one Decoder, and, reading a file in chunks as iwarpdump -j 2
// does (DecodeChunks), with 2 workers whose merge formats every record
// (emit) and with 2 workers that format their own (Parallel.SetFormat,
// iwarpdump -j 2 -T jsonl).
func BenchmarkPipelineJSONLWorkers(b *testing.B) {
	for _, in := range []struct {
		name string
		data *generated
	}{{"workload", &perfData}, {"small", &smallData}} {
		for _, mode := range []string{"1", "2-emit", "2-format"} {
			b.Run(in.name+"/"+mode, func(b *testing.B) {
				var out []byte
				var w format.JSONWriter
				emit := func(r *flows.Record) {
					out = append(w.Append(out[:0], r), '\n')
				}
				data := in.data.get(b)
				if mode == "1" {
					benchDecodeData(b, data, flows.Options{Recycle: true}, 0, emit)
					return
				}
				path := filepath.Join(b.TempDir(), "bench.pcap")
				if err := os.WriteFile(path, data, 0o644); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					cr, err := capture.OpenChunks(path, 0)
					if err != nil {
						b.Fatal(err)
					}
					p, err := flows.NewParallel(flows.Options{Recycle: true}, 2, emit)
					if err != nil {
						b.Fatal(err)
					}
					if mode == "2-format" {
						p.SetFormat(func() flows.Format { return new(format.JSONWriter).Format },
							func(b []byte) { out = append(out[:0], b...) })
					}
					if _, err := p.DecodeChunks(context.Background(), cr); err != nil {
						b.Fatal(err)
					}
					cr.Close()
				}
			})
		}
	}
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

// TestSteadyStateAllocs: with Options.Recycle, decoding more of the same
// traffic allocates (almost) nothing more: the allocations of a 16 MiB
// workload minus those of an 8 MiB one, per extra FPDU, stay below 0.01,
// for the issue 6 workload and for small messages
// (issue 6: no allocation per packet or FPDU in steady state; what is left
// is setup and the growth of a few tables).
func TestSteadyStateAllocs(t *testing.T) {
	for _, w := range []struct {
		name  string
		write func(io.Writer, int64, int64) error
	}{{"workload", synth.WritePerf}, {"small messages", synth.WriteSmall}} {
		t.Run(w.name, func(t *testing.T) { steadyStateAllocs(t, w.write) })
	}
}

func steadyStateAllocs(t *testing.T, write func(io.Writer, int64, int64) error) {
	count := func(size int) (allocs float64, fpdus int) {
		var buf bytes.Buffer
		if err := write(&buf, int64(size), 9); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		allocs = testing.AllocsPerRun(2, func() {
			fpdus = 0
			src, err := capture.NewSource(bytes.NewReader(data), "mem")
			if err != nil {
				t.Fatal(err)
			}
			d := flows.NewDecoder(flows.Options{Recycle: true}, func(r *flows.Record) {
				if r.Type == flows.RecFPDU {
					fpdus++
				}
			})
			var p capture.Packet
			for {
				if p, err = src.Next(); err != nil {
					break
				}
				d.Packet(&p)
			}
			d.Close()
		})
		return allocs, fpdus
	}
	a1, f1 := count(8 << 20)
	a2, f2 := count(16 << 20)
	per := (a2 - a1) / float64(f2-f1)
	t.Logf("8 MiB: %.0f allocations, %d FPDUs; 16 MiB: %.0f, %d; %.4f per extra FPDU", a1, f1, a2, f2, per)
	if per > 0.01 {
		t.Fatalf("%.4f allocations per FPDU in steady state, want < 0.01", per)
	}
}

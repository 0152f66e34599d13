package format_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/damage"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestJSONWriterSameAsFields: the direct writer gives the octets of the
// generic path for every record of every bundled capture, a generated
// workload and damaged variants.
func TestJSONWriterSameAsFields(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	if len(files) < 20 {
		t.Fatalf("only %d bundled captures", len(files))
	}
	var w format.JSONWriter
	check := func(name string, recs []*flows.Record) {
		t.Helper()
		for _, r := range recs {
			want := format.AppendJSON(nil, format.Fields(r))
			got := w.Append(nil, r)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s frame %d:\n got %s\nwant %s", name, r.Frame, got, want)
			}
		}
	}
	var sources [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, data)
		check(f, testutil.DecodeBytes(t, data, flows.Options{}))
	}
	var buf bytes.Buffer
	if err := synth.WritePerf(&buf, 4<<20, 5); err != nil {
		t.Fatal(err)
	}
	check("perf", testutil.DecodeBytes(t, buf.Bytes(), flows.Options{}))
	for _, v := range damage.Variants(9, 100, sources) {
		check(v.Name, testutil.DecodeBytes(t, v.Data, flows.Options{}))
	}
	// Timestamps the cache must get right: second boundaries, before 1970,
	// far future, nanoseconds.
	for _, ts := range []time.Time{
		time.Unix(0, 0), time.Unix(-1, 999999999), time.Unix(1, 0), time.Unix(1, 1),
		time.Unix(1<<33, 123456789), time.Unix(-1<<35, 5), time.Date(2026, 11, 22, 23, 59, 59, 999999999, time.UTC),
	} {
		r := &flows.Record{Type: flows.RecMessage, TS: ts, Message: &flows.MessageRecord{}}
		check(ts.String(), []*flows.Record{r})
	}
}

// TestJSONWriterAllocs: an FPDU record, a Read Request's among them, is
// written without an allocation.
func TestJSONWriterAllocs(t *testing.T) {
	recs := testutil.Decode(t, "../testdata/siw/crc_v2_rping.pcap", flows.Options{})
	var w format.JSONWriter
	buf := make([]byte, 0, 64<<10)
	var fp, read *flows.Record
	for _, r := range recs {
		if r.Type != flows.RecFPDU || len(r.FPDU.Findings) > 0 {
			continue
		}
		if fp == nil {
			fp = r
		}
		if read == nil && r.FPDU.SegOK && r.FPDU.Seg.Opcode == rdmap.OpReadRequest {
			read = r
		}
	}
	if fp == nil || read == nil {
		t.Fatalf("FPDU record %v, Read Request %v", fp != nil, read != nil)
	}
	for _, r := range []*flows.Record{fp, read} {
		if n := testing.AllocsPerRun(100, func() { buf = w.Append(buf[:0], r) }); n != 0 {
			t.Fatalf("%.1f allocations per FPDU record (%v), want 0", n, r.FPDU.Seg.Opcode)
		}
	}
}

func BenchmarkJSONWriter(b *testing.B) {
	var buf bytes.Buffer
	if err := synth.WritePerf(&buf, 4<<20, 5); err != nil {
		b.Fatal(err)
	}
	recs := testutil.DecodeBytes(b, buf.Bytes(), flows.Options{})
	b.Run("direct", func(b *testing.B) {
		var w format.JSONWriter
		out := make([]byte, 0, 64<<10)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			out = w.Append(out[:0], recs[i%len(recs)])
		}
	})
	b.Run("fields", func(b *testing.B) {
		var kvs []format.KV
		out := make([]byte, 0, 64<<10)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			kvs = format.AppendFields(kvs[:0], recs[i%len(recs)])
			out = format.AppendJSON(out[:0], kvs)
		}
	})
}

// TestFormatLeavesConnOut: JSONWriter.Format and TextOptions.Format, the
// renderers of iwarpdump -j N's workers (flows.Parallel.SetFormat), give
// what Append and AppendText give once the connection id is put where they
// say, after what dst held, for every record of every bundled capture
// they accept; they accept every FPDU and message record of a real
// capture but those Append writes through Fields.
func TestFormatLeavesConnOut(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	if len(files) < 20 {
		t.Fatalf("only %d bundled captures", len(files))
	}
	var jw, ref format.JSONWriter
	pre := []byte("held before ")
	texts := []format.TextOptions{{}, {Verbose: true}, {Quiet: true, Hex: true}}
	accepted := 0
	for _, f := range files {
		for _, r := range testutil.Decode(t, f, flows.Options{}) {
			for _, conn := range []int{0, 7, 123456} {
				r.Conn = conn
				out, at, ok := jw.Format(append([]byte(nil), pre...), r)
				if !ok {
					if (r.Type == flows.RecFPDU && len(r.FPDU.Findings) == 0 && r.FPDU.Seg.Opcode != rdmap.OpTerminate) ||
						r.Type == flows.RecMessage {
						t.Fatalf("%s frame %d: %v record declined", f, r.Frame, r.Type)
					}
					continue
				}
				accepted++
				if !bytes.HasPrefix(out, pre) || at < len(pre) || at > len(out) {
					t.Fatalf("%s frame %d: %d octets, conn at %d, prefix kept %v", f, r.Frame, len(out), at, bytes.HasPrefix(out, pre))
				}
				got := append(append(append([]byte(nil), out[len(pre):at]...), fmt.Sprint(conn)...), out[at:]...)
				if want := append(ref.Append(nil, r), '\n'); !bytes.Equal(got, want) {
					t.Fatalf("%s frame %d:\n got %s\nwant %s", f, r.Frame, got, want)
				}
				for _, o := range texts {
					out, at, ok := o.Format(append([]byte(nil), pre...), r)
					if ok != (r.Type == flows.RecFPDU || r.Type == flows.RecMessage) {
						t.Fatalf("%s frame %d: text of a %v record accepted %v", f, r.Frame, r.Type, ok)
					}
					if !ok {
						continue
					}
					if at != -1 || !bytes.Equal(out[len(pre):], format.AppendText(nil, r, o)) || !bytes.HasPrefix(out, pre) {
						t.Fatalf("%s frame %d, %+v: conn at %d, text\n%s\nwant\n%s", f, r.Frame, o, at, out, format.AppendText(nil, r, o))
					}
				}
			}
		}
	}
	if accepted < 1000 {
		t.Fatalf("only %d records accepted", accepted)
	}
	t.Logf("%d records accepted", accepted)
}

package format_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

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

func TestJSONWriterAllocs(t *testing.T) {
	recs := testutil.Decode(t, "../testdata/siw/crc_v2_rping.pcap", flows.Options{})
	var w format.JSONWriter
	buf := make([]byte, 0, 64<<10)
	var fp *flows.Record
	for _, r := range recs {
		if r.Type == flows.RecFPDU && len(r.FPDU.Findings) == 0 {
			fp = r
			break
		}
	}
	if fp == nil {
		t.Fatal("no FPDU record")
	}
	if n := testing.AllocsPerRun(100, func() { buf = w.Append(buf[:0], fp) }); n != 0 {
		t.Fatalf("%.1f allocations per FPDU record, want 0", n)
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

package model

import (
	"os"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

func benchIndex(b *testing.B) *Index {
	b.Helper()
	recs := testutil.Decode(b, "../../../testdata/siw/crc_v2_iwtest_ops.pcap", flows.Options{})
	x := NewIndex()
	x.Add(recs...)
	return x
}

// BenchmarkIndexAdd measures adding a record to the index (encoding it).
func BenchmarkIndexAdd(b *testing.B) {
	recs := testutil.Decode(b, "../../../testdata/siw/crc_v2_iwtest_ops.pcap", flows.Options{})
	b.ReportAllocs()
	x := NewIndex()
	for i := 0; b.Loop(); i++ {
		x.Add(recs[i%len(recs)])
	}
	b.ReportMetric(float64(x.MemBytes())/float64(x.Len()), "index-B/record")
}

// BenchmarkRecordDecode measures decoding a record back from the index.
func BenchmarkRecordDecode(b *testing.B) {
	x := benchIndex(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = x.decode(i % x.Len())
	}
}

// BenchmarkFields measures format.Fields on decoded records, what a
// display filter evaluates.
func BenchmarkFields(b *testing.B) {
	x := benchIndex(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = format.Fields(x.decode(i % x.Len()))
	}
}

// BenchmarkListFilter measures a full filter pass over the index.
func BenchmarkListFilter(b *testing.B) {
	x := benchIndex(b)
	x.SetProgress(Progress{Done: true})
	b.ReportAllocs()
	for b.Loop() {
		l := NewList(x)
		l.SetFilter("op", opcodeIs(1))
		l.Sync(time.Time{})
	}
	b.ReportMetric(float64(x.Len()), "records/op")
}

// TestBigIndexMemory reports the index size on a big capture (set
// IWARP_BIG_PCAP, e.g. to the output of iwarpsynth -scenario large -size
// 512M).
func TestBigIndexMemory(t *testing.T) {
	path := os.Getenv("IWARP_BIG_PCAP")
	if path == "" {
		t.Skip("IWARP_BIG_PCAP not set")
	}
	x := NewIndex()
	recs := testutil.Decode(t, path, flows.Options{})
	x.Add(recs...)
	t.Logf("%d records, index %d MiB, %.1f octets per record", x.Len(), x.MemBytes()>>20, float64(x.MemBytes())/float64(x.Len()))
}

package tui

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestBigFilter times a display filter over a big capture (IWARP_BIG_PCAP).
func TestBigFilter(t *testing.T) {
	path := os.Getenv("IWARP_BIG_PCAP")
	if path == "" {
		t.Skip("IWARP_BIG_PCAP not set")
	}
	app, err := New(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	start := time.Now()
	if err := app.Index(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("indexed %d records in %v, index %d MiB", app.X.Len(), time.Since(start), app.X.MemBytes()>>20)
	app.St.Sync(time.Time{})
	start = time.Now()
	if !app.St.ApplyFilter("rdmap.opcode == 1") {
		t.Fatal(app.St.FilterErr)
	}
	app.St.Sync(time.Time{})
	t.Logf("filtered to %d rows in %v", app.St.List.Len(), time.Since(start))
}

package flows_test

import (
	"bytes"
	"net/netip"
	"runtime"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
)

// TestEmbryo: a connection made at its second packet from what its SYN
// said decodes as one made at the SYN (every bundled capture, all of them
// interleaved, and a port scan through them), with any number of
// workers; unanswered SYNs take some 200 octets each, not a connection's
// 2.3 KB; and more of them than the table holds evict no connection and
// write nothing.
func TestEmbryo(t *testing.T) {
	for _, b := range bundled(t) {
		sameLines(t, b.path, jsonlWith(b.pkts, flows.Options{}, flows.NewDecoder, true), jsonlWith(b.pkts, flows.Options{}, flows.NewDecoderNoEmbryo, true))
	}
	mixed := mixedStream(t)
	scan := portScan(mixed)
	sameLines(t, "interleaved", jsonlWith(mixed, flows.Options{}, flows.NewDecoder, true), jsonlWith(mixed, flows.Options{}, flows.NewDecoderNoEmbryo, true))
	want := jsonlWith(scan, flows.Options{}, flows.NewDecoderNoEmbryo, true)
	sameLines(t, "port scan", jsonlWith(scan, flows.Options{}, flows.NewDecoder, true), want)
	checkSame(t, "port scan", scan)

	// The scan's 4,400 SYNs and the bundled captures' some 600 connections
	// at once, in a table of 1,000: without embryos connections are
	// evicted; with them nothing changes.
	opts := flows.Options{MaxConns: 1000}
	if n := bytes.Count(jsonlWith(scan, opts, flows.NewDecoderNoEmbryo, false), []byte(`"cap.conn_evicted"`)); n == 0 {
		t.Fatal("the port scan evicts no connection from a table of 1,000 without embryos")
	}
	sameLines(t, "port scan, table of 1,000", jsonlWith(scan, opts, flows.NewDecoder, true), want)

	heap := func(n int, newDec func(flows.Options, func(*flows.Record)) *flows.Decoder) int64 {
		return synFloodHeap(t, n, flows.Options{}, newDec)
	}
	per := (heap(10000, flows.NewDecoder) - heap(2000, flows.NewDecoder)) / 8000
	ref := (heap(10000, flows.NewDecoderNoEmbryo) - heap(2000, flows.NewDecoderNoEmbryo)) / 8000
	t.Logf("heap per unanswered SYN: %d octets (a connection at the SYN: %d)", per, ref)
	if per > 250 {
		t.Errorf("%d octets of heap per unanswered SYN, want at most 250", per)
	}
}

// TestEmbryoChurn: a SYN flood larger than the table keeps the memory of a
// full table, however long it goes on. The list of embryos, oldest first,
// once kept the entries of those forgotten: 1,000,000 SYNs through a table
// of 1,000 held 78 MB.
func TestEmbryoChurn(t *testing.T) {
	heap := func(n int) int64 { return synFloodHeap(t, n, flows.Options{MaxConns: 1000}, flows.NewDecoder) }
	small, large := heap(20000), heap(200000)
	t.Logf("heap after 20,000 SYNs through a table of 1,000: %d KiB; after 200,000: %d KiB", small>>10, large>>10)
	if large-small > 512<<10 {
		t.Errorf("200,000 SYNs hold %d KiB more than 20,000", (large-small)>>10)
	}
}

// synFloodHeap feeds n SYNs, each from its own endpoint, to a Decoder
// newDec makes with opts, and returns the heap they hold (before Close).
func synFloodHeap(t *testing.T, n int, opts flows.Options, newDec func(flows.Options, func(*flows.Record)) *flows.Decoder) int64 {
	d := newDec(opts, func(r *flows.Record) { t.Errorf("record %v for an unanswered SYN", r.Type) })
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	dst := netip.MustParseAddrPort("10.99.0.1:7174")
	for i := range n {
		p := capture.Packet{Frame: uint64(i + 1), Kind: capture.KindTCP, Flags: capture.FlagSYN, Seq: uint32(i),
			Src: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), uint16(1024+i))}
		p.Dst = dst
		d.Packet(&p)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	d.Close()
	return int64(ms.HeapAlloc) - int64(before)
}

package flows_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/reassembly"
	"github.com/iwarpkit/iwarpkit/synth"
)

// manyWrites is a capture of n connections at once, each sending ops RDMA
// Writes of size octets (in turn each way, or all from the initiator with
// oneWay), their packets interleaved: n directions in the middle of a
// message at once.
func manyWrites(t *testing.T, n, ops, size int, oneWay bool) []byte {
	conns := make([]synth.Conn, n)
	for i := range conns {
		c := seqConn(i, 0)
		c.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, M: i%3 == 0, C: true}, Reply: synth.MPAFrame{Rev: 1, M: i%3 == 0, C: true}}
		for k := range ops {
			dir := synth.Dir(k % 2)
			if oneWay {
				dir = synth.I2R
			}
			c.Ops = append(c.Ops, synth.Op{Dir: dir, Kind: synth.Write, Size: size, STag: 0x100, TO: 0x1000})
		}
		if i%4 == 0 {
			c.Close = synth.Close{Kind: synth.CloseRST}
		}
		conns[i] = c
	}
	return generate(t, conns)
}

// TestPendingHeap: after every packet, the least pending frame the heap
// gives is the one a look at every direction of every connection gives,
// and every direction with a pending frame is in the heap under it: on
// every bundled capture, on all of them interleaved (with evictions from a
// small table), on a port scan through them, and on 300 connections each
// in the middle of a message at once.
func TestPendingHeap(t *testing.T) {
	// every: the look at every direction after every packet of the
	// bundled captures, after every 5th of the long streams (a heap left
	// wrong stays wrong until that connection's next packet).
	check := func(name string, pkts []capture.Packet, opts flows.Options, mustHold bool) {
		t.Helper()
		d := flows.NewDecoder(opts, func(*flows.Record) {})
		most, every := 0, 1
		if len(pkts) > 5000 {
			every = 5
		}
		for i := range pkts {
			d.Packet(&pkts[i])
			if i%every != 0 {
				continue
			}
			heap, scan, ok := d.PendingLimits()
			if heap != scan || !ok {
				t.Fatalf("%s, frame %d: heap limit %d, every direction's %d, heap consistent %v", name, pkts[i].Frame, heap, scan, ok)
			}
			if scan != ^uint64(0) {
				most++
			}
		}
		d.Close()
		if most == 0 && mustHold {
			t.Fatalf("%s: no direction ever held anything", name)
		}
	}
	for _, b := range bundled(t) {
		check(b.path, b.pkts, flows.Options{}, false)
	}
	mixed := mixedStream(t)
	check("bundled, interleaved", mixed, flows.Options{}, true)
	check("bundled, interleaved, table of 40", mixed, flows.Options{MaxConns: 40}, true)
	check("port scan", portScan(mixed), flows.Options{MaxConns: 300}, true)
	for _, n := range []int{1, 300} {
		check(fmt.Sprintf("%d connections mid-message", n), packetsOf(t, manyWrites(t, n, 4, 9000, false)), flows.Options{}, true)
	}
}

// TestConcurrentMemory: connections that each keep a part of an FPDU
// between their packets, all at once, reuse the room of what they
// consumed in their buffers rather than grow them with every octet that
// goes through: 2,000 such connections allocated 396 MB over a 144 MB
// capture, and the garbage took the decode to 270 MB. Counted here: what
// the decode allocates per connection, and the heap it holds halfway
// through, where every connection is in the middle of a message (which
// includes the records that wait for the messages still open).
func TestConcurrentMemory(t *testing.T) {
	measure := func(n int) (alloc, held int64) {
		pkts := packetsOf(t, manyWrites(t, n, 8, 16384, true))
		var before, mid, end runtime.MemStats
		// Two collections: the first moves what the pools of earlier
		// tests hold (reassembly's rings) to their victim caches, the
		// second frees it. With one, the rings of TestPendingHeap were
		// in before and gone by mid, 37 MB, the test failing 6 times
		// in 40 after it.
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&before) // the packets themselves
		// No retransmission window (its copies, 64 KiB a direction, are
		// not what is measured; from a file there are none).
		opts := flows.Options{Recycle: true, Reassembly: reassembly.Options{Window: -1}}
		d := flows.NewDecoder(opts, func(*flows.Record) {})
		for i := range pkts {
			d.Packet(&pkts[i])
			if i == len(pkts)/2 {
				runtime.GC()
				runtime.ReadMemStats(&mid)
			}
		}
		runtime.ReadMemStats(&end)
		runtime.KeepAlive(pkts)
		d.Close()
		return int64(end.TotalAlloc - before.TotalAlloc), int64(mid.HeapAlloc) - int64(before.HeapAlloc)
	}
	sa, sh := measure(40)
	la, lh := measure(200)
	alloc, held := (la-sa)/160, (lh-sh)/160
	t.Logf("per connection: %d octets allocated, %d held halfway", alloc, held)
	if alloc > 128<<10 || held > 48<<10 {
		t.Errorf("per connection: %d octets allocated, %d held halfway; want at most 128 KiB and 48 KiB", alloc, held)
	}
}

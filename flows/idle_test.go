package flows_test

import (
	"bytes"
	"fmt"
	"net/netip"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
)

// portScan returns pkts with an unanswered SYN, each from a new endpoint,
// after every third packet: connections that stay open with no more
// packets, as a port scan or a client retrying a dead server leaves them.
func portScan(pkts []capture.Packet) []capture.Packet {
	var out []capture.Packet
	dst := netip.MustParseAddrPort("10.99.0.1:7174")
	for i, p := range pkts {
		out = append(out, p)
		if i%3 == 0 {
			src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 98, byte(i >> 16), byte(i >> 8)}), uint16(1024+i%60000))
			out = append(out, capture.Packet{Kind: capture.KindTCP, TS: p.TS, Src: src, Dst: dst,
				Flags: capture.FlagSYN, Seq: uint32(i) * 7919})
		}
	}
	for i := range out {
		out[i].Frame = uint64(i + 1)
	}
	return out
}

// TestEvictIdle: when the connection table is full, the connection
// evicted is the one a look at every connection picks (the earliest last
// packet, then the lowest id), so the records are those of that
// reference, on the interleaved bundled captures and on the same with a
// port scan through them. The idle heap keeps to about the size of the
// table while connections come and go.
func TestEvictIdle(t *testing.T) {
	mixed := mixedStream(t)
	scan := portScan(mixed)
	// A table of 7 evicts all the time, and a connection evicted in the
	// middle comes back as one to search for FPDUs: the first 3,000
	// packets are enough there.
	for _, maxConns := range []int{7, 300} {
		m, sc := mixed, scan
		if maxConns < 100 {
			m, sc = mixed[:3000], portScan(mixed[:3000])
		}
		for _, s := range []struct {
			name string
			pkts []capture.Packet
		}{{"bundled", m}, {"port scan", sc}} {
			name := fmt.Sprintf("%s, MaxConns %d", s.name, maxConns)
			opts := flows.Options{MaxConns: maxConns}
			want := jsonlWith(s.pkts, opts, flows.NewDecoderScanIdle, false)
			if n := bytes.Count(want, []byte(`"cap.conn_evicted"`)); n < 10 {
				t.Fatalf("%s: %d connections evicted", name, n)
			}
			sameLines(t, name, jsonlWith(s.pkts, opts, flows.NewDecoder, false), want)
		}
	}

	// 2,000 connections one after the other, each closed before the next
	// opens, and the port scan: the heap holds at most twice the table and
	// a margin, not an entry for each connection the capture had.
	const maxConns = 100
	for _, s := range []struct {
		name string
		pkts []capture.Packet
	}{{"closed one after the other", packetsOf(t, sequentialConns(t, 2000))}, {"port scan", scan}} {
		d := flows.NewDecoder(flows.Options{MaxConns: maxConns}, func(*flows.Record) {})
		most, open := 0, 0
		for i := range s.pkts {
			d.Packet(&s.pkts[i])
			if n := d.IdleEntries(); n > most {
				most, open = n, d.Conns()
			}
		}
		d.Close()
		if bound := 2*open + 1024; most > bound {
			t.Errorf("%s: the idle heap held %d entries for %d connections, want at most %d", s.name, most, open, bound)
		}
	}
}

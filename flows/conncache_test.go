package flows_test

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// TestConnCache: the Decoder's 4-tuple cache gives the records a map
// lookup gives, over a stream with more connections than cache entries
// (so entries collide and are replaced), 4-tuples reused after a close,
// and a connection table small enough to evict.
func TestConnCache(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	var all [][]capture.Packet
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, readPackets(data))
	}
	// Copies of every capture on shifted ports, interleaved packet by
	// packet: some 600 connections at once, each capture's own 4-tuples
	// reused by its copies' later connections where a capture reuses them.
	const copies = 8
	var mixed []capture.Packet
	for i := 0; ; i++ {
		any := false
		for k := 0; k < copies; k++ {
			for _, pk := range all {
				if i >= len(pk) {
					continue
				}
				p := pk[i]
				if p.Kind == capture.KindTCP {
					p.Src = netip.AddrPortFrom(p.Src.Addr(), p.Src.Port()+uint16(k*7))
					p.Dst = netip.AddrPortFrom(p.Dst.Addr(), p.Dst.Port()+uint16(k*13))
				}
				p.Frame = uint64(len(mixed) + 1)
				mixed = append(mixed, p)
				any = true
			}
		}
		if !any {
			break
		}
	}
	for _, maxConns := range []int{0, 40} {
		run := func(newDec func(flows.Options, func(*flows.Record)) *flows.Decoder) []byte {
			var out []byte
			d := newDec(flows.Options{MaxConns: maxConns, Recycle: true}, func(r *flows.Record) {
				out = format.AppendJSON(out, format.Fields(r))
				out = append(out, '\n')
			})
			for i := range mixed {
				d.Packet(&mixed[i])
			}
			d.Close()
			return out
		}
		want := run(flows.NewDecoderNoConnCache)
		got := run(flows.NewDecoder)
		if conns := bytes.Count(want, []byte(`"type":"conn"`)); conns < 300 {
			t.Fatalf("MaxConns %d: only %d connections in the test stream", maxConns, conns)
		}
		if !bytes.Equal(got, want) {
			gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
			for i := 0; i < len(gl) && i < len(wl); i++ {
				if !bytes.Equal(gl[i], wl[i]) {
					t.Fatalf("MaxConns %d: line %d differs:\n got %s\nwant %s", maxConns, i+1, gl[i], wl[i])
				}
			}
			t.Fatalf("MaxConns %d: %d lines, want %d", maxConns, len(gl), len(wl))
		}
	}
}

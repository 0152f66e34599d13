package flows_test

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// TestConnCache: the Decoder's 4-tuple cache gives the records a map
// lookup gives, over a stream with more connections than cache entries
// (so entries collide and are replaced), 4-tuples reused after a close,
// and a connection table small enough to evict.
func TestConnCache(t *testing.T) {
	mixed := mixedStream(t)
	for _, maxConns := range []int{0, 40} {
		opts := flows.Options{MaxConns: maxConns}
		want := jsonlWith(mixed, opts, flows.NewDecoderNoConnCache, false)
		if conns := bytes.Count(want, []byte(`"type":"conn"`)); conns < 300 {
			t.Fatalf("MaxConns %d: only %d connections in the test stream", maxConns, conns)
		}
		sameLines(t, fmt.Sprintf("MaxConns %d", maxConns), jsonlWith(mixed, opts, flows.NewDecoder, false), want)
	}
}

// mixedStream is every bundled capture in copies on shifted ports,
// interleaved packet by packet: some 600 connections at once, each
// capture's own 4-tuples reused by its copies' later connections where a
// capture reuses them.
func mixedStream(t *testing.T) []capture.Packet {
	var all [][]capture.Packet
	for _, b := range bundled(t) {
		all = append(all, b.pkts)
	}
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
	return mixed
}

// TestSpareConns: a connection made from the storage of one finished when
// it closed (Decoder.newConn) decodes as a new one does. Every capture in
// testdata, one after the other (their connections close, and later ones
// of other kinds, markers, CRC, versions, gaps and Terminates, take their
// storage; captures that reuse 4-tuples do so with a SYN), then the same
// with the endpoints of each capture's connections shifted, so that more
// connections close than are kept spare.
func TestSpareConns(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	var seq []capture.Packet
	var at time.Time
	for round := range 2 {
		for i, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			pk := testutil.ReadPackets(data)
			if len(pk) == 0 {
				continue
			}
			shift := at.Sub(pk[0].TS) + time.Second
			for _, p := range pk {
				if p.Kind == capture.KindTCP && round == 1 {
					p.Src = netip.AddrPortFrom(p.Src.Addr(), p.Src.Port()+uint16(i))
					p.Dst = netip.AddrPortFrom(p.Dst.Addr(), p.Dst.Port()+uint16(i))
				}
				p.TS = p.TS.Add(shift)
				p.Frame = uint64(len(seq) + 1)
				seq = append(seq, p)
			}
			at = seq[len(seq)-1].TS
		}
	}
	want := jsonlWith(seq, flows.Options{}, flows.NewDecoderNoSpare, true)
	if n := bytes.Count(want, []byte(`"state":"closed"`)); n < 2*maxSpareForTest {
		t.Fatalf("only %d connections closed in the test stream", n)
	}
	sameLines(t, "spare connections", jsonlWith(seq, flows.Options{}, flows.NewDecoder, true), want)
}

// maxSpareForTest is at least flows.maxSpare.
const maxSpareForTest = 16

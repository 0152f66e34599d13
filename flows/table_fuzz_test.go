package flows_test

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
)

// tablePackets turns fuzz input into TCP packets among 6 endpoint pairs,
// 4 octets a packet: the pair and its direction, the flags, what the
// payload holds, and how far time moves on (up to some 8 minutes, so that
// reset connections settle). Payloads are empty, an MPA Request or Reply,
// an FPDU-like run, or random octets; sequence numbers follow each
// direction's octets, with jumps that make holes.
func tablePackets(data []byte) []capture.Packet {
	type dir struct{ seq uint32 }
	var dirs [12]dir
	for i := range dirs {
		dirs[i].seq = uint32(i) * 100000
	}
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var out []capture.Packet
	for len(data) >= 4 && len(out) < 400 {
		b := data[:4]
		data = data[4:]
		pair, back := int(b[0]%6), b[0]&0x80 != 0
		ends := [2]netip.AddrPort{
			netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(pair)}), 40000+uint16(pair)),
			netip.MustParseAddrPort("10.1.0.1:7174"),
		}
		di := pair * 2
		if back {
			ends[0], ends[1] = ends[1], ends[0]
			di++
		}
		var flags capture.TCPFlags
		for k, f := range []capture.TCPFlags{capture.FlagSYN, capture.FlagACK, capture.FlagFIN, capture.FlagRST} {
			if b[1]&(1<<k) != 0 {
				flags |= f
			}
		}
		var payload []byte
		switch b[2] % 5 {
		case 1:
			payload = append([]byte("MPA ID Req Frame"), 0x40, 0, 0, 0)
		case 2:
			payload = append([]byte("MPA ID Rep Frame"), 0x40, 0, 0, 0)
		case 3:
			payload = make([]byte, 28)
			binary.BigEndian.PutUint16(payload, 18)
			payload[2], payload[3] = 0x41, 0x40|b[2]&0x0F
		case 4:
			payload = data[:min(len(data), int(b[2]>>3))]
		}
		d := &dirs[di]
		if b[1]&0x10 != 0 {
			d.seq += 1000 // a hole
		}
		p := capture.Packet{Kind: capture.KindTCP, Src: ends[0], Dst: ends[1], Flags: flags,
			Seq: d.seq, Ack: dirs[di^1].seq + uint32(b[1]>>5)*100, Payload: payload, PayloadWireLen: len(payload)}
		d.seq += uint32(len(payload))
		if flags&(capture.FlagSYN|capture.FlagFIN) != 0 {
			d.seq++
		}
		at = at.Add(time.Duration(b[3]) * time.Duration(b[3]) * 7 * time.Millisecond)
		p.TS = at
		p.Frame = uint64(len(out) + 1)
		out = append(out, p)
	}
	return out
}

// FuzzTable drives the connection table, with room for 2 connections,
// through sequences of SYNs, handshakes, MPA frames, data, holes, FINs,
// resets and long silences: the pending heap agrees after every packet
// with a look at every direction; the decode is the one a Decoder that
// evicts by looking at every connection gives; and 2 workers (with the
// default table) print what one prints.
func FuzzTable(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0x80, 3, 0, 0, 0, 2, 1, 0, 0x80, 2, 2, 0, 0, 2, 3, 1, 1, 1, 0, 0, 2, 1, 0, 200, 0, 8, 3, 0})
	f.Add([]byte{0, 1, 0, 0, 1, 1, 0, 0, 2, 1, 0, 0, 3, 1, 0, 0, 4, 1, 0, 0, 0x80, 3, 0, 0, 0, 2, 3, 0, 0, 18, 3, 0, 0, 2, 3, 255})
	f.Add([]byte{0, 1, 0, 0, 0x80, 3, 0, 0, 0, 2, 1, 0, 0x80, 2, 2, 0, 0, 2, 3, 0, 0, 18, 3, 0, 0, 2, 3, 0, 0x80, 34, 0, 0, 0, 8, 3, 250, 0x80, 2, 3, 250})
	f.Fuzz(func(t *testing.T, data []byte) {
		pkts := tablePackets(data)
		if len(pkts) == 0 {
			return
		}
		opts := flows.Options{MaxConns: 2}
		d := flows.NewDecoder(opts, func(*flows.Record) {})
		for i := range pkts {
			d.Packet(&pkts[i])
			if heap, scan, ok := d.PendingLimits(); heap != scan || !ok {
				t.Fatalf("frame %d: heap limit %d, every direction's %d, heap consistent %v", pkts[i].Frame, heap, scan, ok)
			}
		}
		d.Close()
		want := jsonlWith(pkts, opts, flows.NewDecoderScanIdle, true)
		sameLines(t, "idle heap", jsonlWith(pkts, opts, flows.NewDecoder, true), want)
		sameLines(t, "2 workers", jsonlOf(t, pkts, 2, false), jsonlOf(t, pkts, 0, false))
	})
}

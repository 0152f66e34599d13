package flows_test

import (
	"bytes"
	"net/netip"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/synth"
)

// seqConn is connection i of a capture of connections one after the
// other, gap apart, each on its own endpoints: the handshake and nothing
// else yet.
func seqConn(i int, gap time.Duration) synth.Conn {
	return synth.Conn{
		Initiator:  netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), uint16(40000+i%20000)),
		Responder:  netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 200, 0, 1}), 7174),
		Handshake:  true,
		StartDelay: time.Duration(i) * gap,
	}
}

// generate returns the capture of conns.
func generate(t *testing.T, conns []synth.Conn) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := synth.Generate(synth.Scenario{Conns: conns}, &b, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sequentialConns is a capture of n connections one after the other, each
// closed (FIN both ways, acknowledged) before the next starts.
func sequentialConns(t *testing.T, n int) []byte {
	conns := make([]synth.Conn, n)
	for i := range conns {
		c := seqConn(i, 20*time.Millisecond)
		c.MPA = &synth.MPAParams{
			Request: synth.MPAFrame{Rev: 1, M: i%2 == 0, C: true},
			Reply:   synth.MPAFrame{Rev: 1, M: i%2 == 0, C: true},
		}
		c.Ops = []synth.Op{
			{Dir: synth.I2R, Kind: synth.Send, Size: 64 + i%100, Pattern: synth.PatternText},
			{Dir: synth.I2R, Kind: synth.Write, Size: 3000, STag: 0x1000 + uint32(i), TO: 0x10000},
			{Dir: synth.R2I, Kind: synth.SendSE, Size: 100},
		}
		conns[i] = c
	}
	return generate(t, conns)
}

// packetsOf returns the packets of a capture, their payloads copied.
func packetsOf(t *testing.T, data []byte) []capture.Packet {
	t.Helper()
	src, err := capture.NewSource(bytes.NewReader(data), "test")
	if err != nil {
		t.Fatal(err)
	}
	var pkts []capture.Packet
	for {
		p, err := src.Next()
		if err != nil {
			return pkts
		}
		p.Payload = bytes.Clone(p.Payload)
		p.Data = nil
		pkts = append(pkts, p)
	}
}

// heapAfter decodes a capture and returns the heap in use after the last
// packet, before Close (what the Decoder keeps of the connections); atEnd,
// when not nil, is called then too.
func heapAfter(t *testing.T, data []byte, emit func(*flows.Record), atEnd func()) uint64 {
	t.Helper()
	src, err := capture.NewSource(bytes.NewReader(data), "heap")
	if err != nil {
		t.Fatal(err)
	}
	dec := flows.NewDecoder(flows.Options{}, emit)
	var p capture.Packet
	for src.NextInto(&p) == nil {
		dec.Packet(&p)
	}
	if atEnd != nil {
		atEnd()
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	dec.Close()
	return ms.HeapAlloc
}

// TestClosedConnMemory: a connection that has closed (both FINs
// acknowledged) is summarised and dropped then: what is left of it is the
// note that its endpoints were used, a few hundred octets at most, not its
// reassembly history (64 KiB a direction) or buffers.
func TestClosedConnMemory(t *testing.T) {
	none := func(*flows.Record) {}
	small, large := heapAfter(t, sequentialConns(t, 100), none, nil), heapAfter(t, sequentialConns(t, 600), none, nil)
	per := (int64(large) - int64(small)) / 500
	t.Logf("%d octets of heap per closed connection", per)
	if per > 512 {
		t.Errorf("%d octets of heap per closed connection, want at most 512", per)
	}
}

// TestSummaryAtClose: a connection's summary comes when it closes, before
// the records of a connection that starts after it (the JSON Lines
// contract: "written when it closes or the capture ends"), at the frame of
// the acknowledgment of the last FIN. A FIN or ACK sent again after that
// starts no new connection; a SYN on the same endpoints does (port reuse),
// and so do octets.
func TestSummaryAtClose(t *testing.T) {
	pkts := packetsOf(t, sequentialConns(t, 2))
	// The last packet of the first connection: the ACK of its last FIN.
	first := pkts[0].Src
	closing := -1
	for i, p := range pkts {
		if p.Src == first || p.Dst == first {
			closing = i
		}
	}
	if pkts[closing].Flags&capture.FlagACK == 0 || len(pkts[closing].Payload) != 0 {
		t.Fatalf("the first connection ends with frame %d, flags %v", pkts[closing].Frame, pkts[closing].Flags)
	}
	decode := func(extra ...capture.Packet) []*flows.Record {
		var out []*flows.Record
		d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) { out = append(out, r) })
		all := append(slices.Clone(pkts), extra...)
		for i := range all {
			all[i].Frame = uint64(i + 1)
			d.Packet(&all[i])
		}
		d.Close()
		return out
	}
	again := func(i int, flags capture.TCPFlags, payload string) capture.Packet {
		p := pkts[i]
		p.TS = pkts[len(pkts)-1].TS.Add(time.Second)
		p.Flags = flags
		p.Payload = []byte(payload)
		p.PayloadWireLen = len(payload)
		return p
	}
	recs := decode()
	var conns []*flows.Record
	firstOther := -1
	for i, r := range recs {
		if r.Type == flows.RecConn {
			conns = append(conns, r)
			if r.Conn == 0 && firstOther >= 0 {
				t.Errorf("connection 0's summary (record %d) after a record of connection 1 (record %d)", i, firstOther)
			}
		} else if r.Conn == 1 && firstOther < 0 {
			firstOther = i
		}
	}
	if len(conns) != 2 || conns[0].Conn != 0 || conns[0].Frame != uint64(closing+1) {
		t.Fatalf("summaries %d, first for connection %d at frame %d; want 2, connection 0 at frame %d",
			len(conns), conns[0].Conn, conns[0].Frame, closing+1)
	}
	// The first connection once more, SYN first, on the same endpoints:
	// a third connection (id 2).
	var reuse []capture.Packet
	for i := 0; i <= closing; i++ {
		if p := pkts[i]; p.Src == first || p.Dst == first {
			p.TS = p.TS.Add(time.Hour)
			reuse = append(reuse, p)
		}
	}
	if reuse[0].Flags&capture.FlagSYN == 0 {
		t.Fatalf("the first connection starts with flags %v", reuse[0].Flags)
	}
	if ids := connIDs(decode(reuse...)); !slices.Equal(ids, []int{0, 1, 2}) {
		t.Errorf("the endpoints of a closed connection used again: connections %v, want [0 1 2]", ids)
	}
	// The first connection's closing ACK and the FIN before it sent
	// again, then the second connection once more: the strays are not a
	// connection of their own, which would take id 2.
	var second []capture.Packet
	for _, p := range pkts {
		if p.Src != first && p.Dst != first {
			p.TS = p.TS.Add(time.Hour)
			second = append(second, p)
		}
	}
	strays := []capture.Packet{again(closing, capture.FlagACK, ""), again(closing-1, capture.FlagFIN|capture.FlagACK, "")}
	if ids := connIDs(decode(append(strays, second...)...)); !slices.Equal(ids, []int{0, 1, 2}) {
		t.Errorf("a FIN and an ACK sent again after the close: connections %v, want [0 1 2]", ids)
	}
	// The same more than one MSL (2 minutes, RFC 9293 §3.4.2) after the
	// close: not copies of the closed connection's last segments, so a
	// connection of their own, which takes id 2 (and has no records: no
	// octets), and the second connection once more is id 3.
	for i := range strays {
		strays[i].TS = pkts[closing].TS.Add(2*time.Minute + time.Second)
	}
	if ids := connIDs(decode(append(strays, second...)...)); !slices.Equal(ids, []int{0, 1, 3}) {
		t.Errorf("a FIN and an ACK sent again long after the close: connections %v, want [0 1 3]", ids)
	}
}

// TestFinishedSwept: the endpoints of closed connections are remembered
// for the strays of the last minutes of the capture only, so that a long
// capture of short connections does not keep a note of each one. Here a
// connection closes every second.
func TestFinishedSwept(t *testing.T) {
	heap := func(n int) uint64 {
		conns := make([]synth.Conn, n)
		for i := range conns {
			c := seqConn(i, time.Second)
			c.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}}
			c.Ops = []synth.Op{{Dir: synth.I2R, Kind: synth.Send, Size: 16}}
			conns[i] = c
		}
		summaries := 0
		return heapAfter(t, generate(t, conns), func(r *flows.Record) {
			if r.Type == flows.RecConn {
				summaries++
			}
		}, func() {
			if summaries != n {
				t.Fatalf("%d connections summarised when they closed, want %d", summaries, n)
			}
		})
	}
	small, large := heap(1000), heap(3000)
	per := (int64(large) - int64(small)) / 2000
	t.Logf("%d octets of heap per closed connection", per)
	if per > 32 {
		t.Errorf("%d octets of heap per closed connection, want at most 32", per)
	}
}

// connIDs lists the connection ids of recs, in order.
func connIDs(recs []*flows.Record) []int {
	var ids []int
	for _, r := range recs {
		if !slices.Contains(ids, r.Conn) {
			ids = append(ids, r.Conn)
		}
	}
	slices.Sort(ids)
	return ids
}

// resetConns is a capture of n connections one after the other, each reset
// by its initiator right after the handshake, before any octet, or, with
// octets, after an MPA exchange and a Send.
func resetConns(t *testing.T, n int, octets bool) []byte {
	conns := make([]synth.Conn, n)
	for i := range conns {
		c := seqConn(i, 20*time.Millisecond)
		c.Close = synth.Close{Kind: synth.CloseRST}
		if octets {
			c.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}}
			c.Ops = []synth.Op{{Dir: synth.I2R, Kind: synth.Send, Size: 100}}
		}
		conns[i] = c
	}
	return generate(t, conns)
}

// TestResetBeforeOctets: a connection reset after its SYN and before any
// octet (refused, or aborted at once) is dropped at the reset, not kept to
// the end of the capture; a segment without payload on its endpoints after
// that (the peer's ACK or RST) is no connection of its own, a SYN is.
func TestResetBeforeOctets(t *testing.T) {
	none := func(r *flows.Record) { t.Errorf("record %v of a connection without octets", r.Type) }
	small, large := heapAfter(t, resetConns(t, 100, false), none, nil), heapAfter(t, resetConns(t, 600, false), none, nil)
	per := (int64(large) - int64(small)) / 500
	t.Logf("%d octets of heap per connection reset before any octet", per)
	if per > 512 {
		t.Errorf("%d octets of heap per connection reset before any octet, want at most 512", per)
	}

	// Two connections; then the first one's responder answers the reset
	// with an ACK, and the first one's endpoints are used again with a
	// SYN. The ACK takes no id (a new connection there would be 2, and the
	// SYN's 3), the SYN does.
	pkts := packetsOf(t, resetConns(t, 2, false))
	first := pkts[0]
	if first.Flags&capture.FlagSYN == 0 {
		t.Fatalf("the capture starts with flags %v", first.Flags)
	}
	ack := pkts[1] // the SYN-ACK, from the responder
	ack.Flags = capture.FlagACK
	ack.TS = pkts[len(pkts)-1].TS.Add(time.Millisecond)
	syn := first
	syn.TS = ack.TS.Add(time.Millisecond)
	// Neither the ACK nor the SYN alone makes a record: the id of a later
	// connection with octets (on other endpoints) tells how many
	// connections came before it.
	tail := packetsOf(t, sequentialConns(t, 1))
	for i := range tail {
		p := &tail[i]
		p.TS = syn.TS.Add(time.Second + p.TS.Sub(time.Unix(0, 0).UTC()))
		if p.Src.Port() == 40000 {
			p.Src = netip.AddrPortFrom(p.Src.Addr(), 45000)
		} else {
			p.Dst = netip.AddrPortFrom(p.Dst.Addr(), 45000)
		}
	}
	decode := func(ps ...capture.Packet) []int {
		var out []*flows.Record
		d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) { out = append(out, r) })
		for i := range ps {
			ps[i].Frame = uint64(i + 1)
			d.Packet(&ps[i])
		}
		d.Close()
		return connIDs(out)
	}
	all := append(slices.Clone(pkts), ack)
	if ids := decode(append(slices.Clone(all), tail...)...); !slices.Equal(ids, []int{2}) {
		t.Errorf("an ACK after the reset: the next connection with octets has ids %v, want [2]", ids)
	}
	if ids := decode(append(append(all, syn), tail...)...); !slices.Equal(ids, []int{3}) {
		t.Errorf("a SYN after the reset: the next connection with octets has ids %v, want [3]", ids)
	}

	// A connection reset after octets stays to the end of the capture
	// (what the peer had in flight may still come): its summary comes
	// after the records of the connection that follows it.
	var recs []*flows.Record
	osrc, err := capture.NewSource(bytes.NewReader(resetConns(t, 2, true)), "reset")
	if err != nil {
		t.Fatal(err)
	}
	dec := flows.NewDecoder(flows.Options{}, func(r *flows.Record) { recs = append(recs, r) })
	var p capture.Packet
	for osrc.NextInto(&p) == nil {
		dec.Packet(&p)
	}
	dec.Close()
	var order []int
	for _, r := range recs {
		if r.Type == flows.RecConn || (r.Type == flows.RecMPA && r.MPA.Frame.Kind == mpa.KindRequest) {
			order = append(order, r.Conn)
		}
	}
	if !slices.Equal(order, []int{0, 1, 0, 1}) {
		t.Errorf("connections reset after octets: MPA Requests and summaries of connections %v, want [0 1 0 1]", order)
	}
}

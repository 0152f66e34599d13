package flows_test

import (
	"bytes"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/synth"
)

// sequentialConns is a capture of n connections one after the other, each
// closed (FIN both ways, acknowledged) before the next starts.
func sequentialConns(t *testing.T, n int) []byte {
	conns := make([]synth.Conn, n)
	for i := range conns {
		conns[i] = synth.Conn{
			Initiator: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), uint16(40000+i)),
			Responder: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 200, 0, 1}), 7174),
			Handshake: true,
			MPA: &synth.MPAParams{
				Request: synth.MPAFrame{Rev: 1, M: i%2 == 0, C: true},
				Reply:   synth.MPAFrame{Rev: 1, M: i%2 == 0, C: true},
			},
			StartDelay: time.Duration(i) * 20 * time.Millisecond,
			Ops: []synth.Op{
				{Dir: synth.I2R, Kind: synth.Send, Size: 64 + i%100, Pattern: synth.PatternText},
				{Dir: synth.I2R, Kind: synth.Write, Size: 3000, STag: 0x1000 + uint32(i), TO: 0x10000},
				{Dir: synth.R2I, Kind: synth.SendSE, Size: 100},
			},
		}
	}
	var b bytes.Buffer
	if _, err := synth.Generate(synth.Scenario{Conns: conns}, &b, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestClosedConnMemory: a closed connection keeps little until the end of
// the capture (when its summary comes): not its reassembly history (64
// KiB a direction, once the FIN is acknowledged) nor its empty buffers.
// Memory still grows by a few KB per connection the capture has had.
func TestClosedConnMemory(t *testing.T) {
	heapAfter := func(n int) uint64 {
		data := sequentialConns(t, n)
		src, err := capture.NewSource(bytes.NewReader(data), "seq")
		if err != nil {
			t.Fatal(err)
		}
		dec := flows.NewDecoder(flows.Options{}, func(*flows.Record) {})
		var p capture.Packet
		for src.NextInto(&p) == nil {
			dec.Packet(&p)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		dec.Close()
		return ms.HeapAlloc
	}
	small, large := heapAfter(100), heapAfter(600)
	per := (int64(large) - int64(small)) / 500
	t.Logf("%d octets of heap per closed connection", per)
	if per > 12<<10 {
		t.Errorf("%d octets of heap per closed connection, want at most %d", per, 12<<10)
	}
}

package flows

import (
	"net/netip"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
)

// TestEmbryoShare: the workers of a Parallel share Options.MaxConns out
// for their embryos, so that a SYN flood keeps as many whatever the
// number of workers.
func TestEmbryoShare(t *testing.T) {
	for _, workers := range []int{1, 2, 3} {
		p, err := NewParallel(Options{MaxConns: 1000}, workers, func(*Record) {})
		if err != nil {
			t.Fatal(err)
		}
		d := p.workers[0].dec
		p.Close()
		// The worker's Decoder, fed directly now that its goroutine is done.
		d.worker = false
		d.emit = func(*Record) {}
		dst := netip.MustParseAddrPort("10.99.0.1:7174")
		for i := range 5000 {
			pk := capture.Packet{Frame: uint64(i + 1), Kind: capture.KindTCP, Flags: capture.FlagSYN,
				Src: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 98, byte(i >> 8), byte(i)}), 1024), Dst: dst}
			d.Packet(&pk)
		}
		if got, want := d.embryos.live, 1000/workers; got != want {
			t.Errorf("%d workers: a worker keeps %d embryos, want %d", workers, got, want)
		}
	}
}

package flows

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/markers"
)

// TestCtrlPlausible: the filter on the control octets never turns away a
// candidate FPDU that plausible accepts, with and without markers (a
// marker may fall before, between or after the two octets), and turns
// away most random ones. Candidates are random FPDUs whose control octets
// are often valid and otherwise one bit off.
func TestCtrlPlausible(t *testing.T) {
	d := NewDecoder(Options{}, func(*Record) {})
	c := newConn(d, 0, netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2"), 1, time.Time{})
	dir := c.dirs[0]
	rng := rand.New(rand.NewPCG(6, 14))
	valid := [][2]byte{{0x41, 0x40}, {0xC1, 0x40}, {0x41, 0x43}, {0x41, 0x41}, {0x41, 0x46}, {0xC1, 0x42}, {0x40, 0x03}, {0x41, 0x48}, {0x01, 0x43}}
	var accepted, filtered, total int
	for n := range 120000 {
		ulen := 18 + rng.IntN(200)
		plain := make([]byte, mpa.PlainLen(ulen))
		for i := range plain {
			plain[i] = byte(rng.Uint32())
		}
		binary.BigEndian.PutUint16(plain, uint16(ulen))
		if n%3 != 0 {
			v := valid[rng.IntN(len(valid))]
			plain[2], plain[3] = v[0], v[1]
			if n%3 == 1 {
				plain[2+rng.IntN(2)] ^= 1 << rng.IntN(8)
			}
			// Untagged headers with the rest plausible often enough.
			binary.BigEndian.PutUint32(plain[4:], 0)
			binary.BigEndian.PutUint32(plain[8:], uint32(rng.IntN(4)))
			binary.BigEndian.PutUint32(plain[12:], 1+uint32(rng.IntN(3)))
			binary.BigEndian.PutUint32(plain[16:], 0)
		}
		mk := n%2 == 0
		var s uint64 = 4096
		g := markers.Grid{}
		w := plain
		if mk {
			g.Origin = 4096 - uint64(rng.IntN(600))
			s = 4096 + uint64(rng.IntN(512))
			if g.IsMarker(s) || (s-g.Origin)%markers.Interval != 0 && (s-g.Origin)%markers.Interval < markers.Size {
				continue // no FPDU starts inside a marker
			}
			w = g.Insert(nil, plain, s)
		}
		total++
		pass := ctrlPlausible(w, s, mk, g)
		_, ok := dir.plausible(w, s, mk, g)
		if ok && !pass {
			t.Fatalf("candidate %d (markers %v, start %d, origin %d): plausible, but the filter turns it away: % x", n, mk, s, g.Origin, w[:min(len(w), 24)])
		}
		if ok {
			accepted++
		}
		if !pass {
			filtered++
		}
	}
	t.Logf("%d candidates: %d plausible, %d turned away by the control octets", total, accepted, filtered)
	if accepted < total/20 || filtered < total/4 {
		t.Errorf("%d candidates: %d plausible, %d filtered: the test does not exercise both sides", total, accepted, filtered)
	}
}

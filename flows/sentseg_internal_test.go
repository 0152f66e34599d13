package flows

import (
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/ddp"
)

// TestSentSegSet: set, which fills a ring entry in place, makes what
// segOf returns, over an entry that held another segment.
func TestSentSegSet(t *testing.T) {
	for _, h := range []ddp.Header{
		{T: true, STag: 0x11223344, TO: 0x0102030405060708},
		{QN: 1, MSN: 7, MO: 4096, ULPRsvd: 9},
		{},
	} {
		e := sentSeg{frame: ^uint64(0), off: ^uint64(0), id: ^uint32(0), qn: ^uint32(0), tagged: !h.T, segLen: 0xFFFF}
		e.set(&h, 1460, 42)
		if want := segOf(&h, 1460, 42); e != want {
			t.Errorf("set(%+v) = %+v, want %+v", h, e, want)
		}
	}
}

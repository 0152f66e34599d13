package replay

import (
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// FuzzReceive feeds arbitrary octets to an endpoint's receive path (FPDU
// framing, markers, CRC, DDP/RDMAP checks, Terminate on error): it must
// never panic, and it either consumes every whole FPDU or stops with an
// error after sending at most one Terminate.
func FuzzReceive(f *testing.F) {
	fr := NewFramer(20, true, true)
	var seed []byte
	for i, s := range []rdmap.Segment{
		{DDP: ddp.Header{L: true, DV: 1, MSN: 1}, RV: 1, Opcode: rdmap.OpSend, Payload: []byte("hello")},
		{DDP: ddp.Header{T: true, L: false, DV: 1, STag: 9}, RV: 1, Opcode: rdmap.OpWrite, Payload: make([]byte, 600)},
		{DDP: ddp.Header{T: true, L: true, DV: 1, STag: 9, TO: 600}, RV: 1, Opcode: rdmap.OpWrite, Payload: []byte{1}},
		{DDP: ddp.Header{L: true, DV: 1, QN: 1, MSN: 1}, RV: 1, Opcode: rdmap.OpReadRequest, Read: rdmap.ReadRequest{Size: 4}},
	} {
		seed, _ = fr.AppendFPDU(seed, rdmap.AppendSegment(nil, s))
		f.Add(seed, uint8(1), true, true, uint8(i))
	}
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"), uint8(1), false, false, uint8(0))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0}, uint8(0), false, true, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, v uint8, m, crc bool, cut uint8) {
		o := Options{}.withDefaults()
		a, b := memPipe()
		defer a.Close()
		defer b.Close()
		e := newEndpoint(I2R, &plan{s: &Script{}}, &o, a, wallClock{}, &stats{}, true)
		e.out = Outcome{V: v & 3, MarkersR2I: m, CRC: crc}
		e.setFraming(24, 20)
		// Feed in two parts, as reads would.
		k := min(int(cut), len(data))
		var err error
		for _, part := range [][]byte{data[:k], data[k:]} {
			e.rbuf = append(e.rbuf, part...)
			if err = e.deframe(); err != nil {
				break
			}
		}
		if e.rep.SentFPDUs > 1 {
			t.Fatalf("%d FPDUs sent in answer", e.rep.SentFPDUs)
		}
		if err == nil && e.rep.TermSent != nil {
			t.Fatalf("Terminate sent without an error")
		}
		if err != nil && e.rep.TermSent == nil && e.rep.SentFPDUs == 0 && len(e.open) < maxOpenMessages {
			t.Fatalf("error %v without a Terminate", err)
		}
	})
}

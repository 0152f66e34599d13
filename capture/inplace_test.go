package capture_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestPcapInPlaceMatchesPcapgo: records are read in place from the read
// buffer; over a file several times the buffer's size (so that records
// straddle refills), every packet's timestamp, lengths and octets equal
// what gopacket's pcapgo reader gives.
func TestPcapInPlaceMatchesPcapgo(t *testing.T) {
	var buf bytes.Buffer
	if err := synth.WritePerf(&buf, 5<<20, 11); err != nil {
		t.Fatal(err)
	}
	ref, err := pcapgo.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	src, err := capture.NewSource(bytes.NewReader(buf.Bytes()), "mem")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		p, err := src.Next()
		data, ci, rerr := ref.ReadPacketData()
		if errors.Is(err, io.EOF) {
			if !errors.Is(rerr, io.EOF) {
				t.Fatalf("capture ended after %d packets, pcapgo did not (%v)", n, rerr)
			}
			break
		}
		if err != nil || rerr != nil {
			t.Fatalf("packet %d: %v / pcapgo %v", n+1, err, rerr)
		}
		n++
		if !p.TS.Equal(ci.Timestamp) || p.CapLen != ci.CaptureLength || p.WireLen != ci.Length || !bytes.Equal(p.Data, data) {
			t.Fatalf("packet %d: ts %v caplen %d wirelen %d, pcapgo ts %v caplen %d wirelen %d (octets equal: %v)",
				n, p.TS, p.CapLen, p.WireLen, ci.Timestamp, ci.CaptureLength, ci.Length, bytes.Equal(p.Data, data))
		}
	}
	if n < 3000 {
		t.Fatalf("only %d packets", n)
	}
}

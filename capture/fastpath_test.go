package capture

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// decodeBoth decodes one Ethernet frame with the fast path allowed and
// with the layer parser only, and fails the test when they disagree.
func decodeBoth(t testing.TB, d *decoder, data []byte, wireLen int) (fast bool) {
	t.Helper()
	a := Packet{Frame: 1, CapLen: len(data), WireLen: wireLen, Data: data}
	b := a
	d.noFast = false
	fast = fastTCP4(&Packet{WireLen: wireLen}, data)
	d.decode(&a, layers.LinkTypeEthernet)
	d.noFast = true
	d.decode(&b, layers.LinkTypeEthernet)
	if !fast {
		return false
	}
	same := a.Kind == b.Kind && a.Src == b.Src && a.Dst == b.Dst && a.Seq == b.Seq && a.Ack == b.Ack &&
		a.Flags == b.Flags && a.Window == b.Window && a.IPv6 == b.IPv6 && a.Fragment == b.Fragment &&
		a.PayloadWireLen == b.PayloadWireLen && a.Err == nil && b.Err == nil &&
		bytes.Equal(a.Payload, b.Payload) && offsetIn(data, a.Payload) == offsetIn(data, b.Payload) &&
		cap(a.Payload) == cap(b.Payload)
	if !same {
		t.Fatalf("fast path and layer parser disagree on % x:\nfast   %+v\nparser %+v", data, a, b)
	}
	return true
}

// TestFastPathMatchesParser: on every Ethernet frame of the bundled
// captures, and on each with its header octets mutated one at a time,
// the fast path either declines or gives what gopacket's parser gives.
func TestFastPathMatchesParser(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	var d decoder
	d.init()
	fast, total := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src, err := NewSource(bytes.NewReader(data), f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			p, err := src.Next()
			if err != nil {
				break
			}
			if src.LinkType(p.Interface) != layers.LinkTypeEthernet {
				continue
			}
			frame := bytes.Clone(p.Data)
			total++
			if decodeBoth(t, &d, frame, p.WireLen) {
				fast++
			}
			// Every header octet set to a few telling values, the wire
			// length shortened, the frame cut.
			for i := 0; i < min(len(frame), 80); i++ {
				for _, v := range []byte{0, 0x45, 0x08, 0xff, frame[i] ^ 0x20} {
					m := bytes.Clone(frame)
					m[i] = v
					decodeBoth(t, &d, m, p.WireLen)
				}
			}
			decodeBoth(t, &d, frame, len(frame)-1)
			decodeBoth(t, &d, frame[:len(frame)*2/3], p.WireLen)
		}
	}
	if total < 1000 || fast < total/2 {
		t.Fatalf("fast path took %d of %d frames", fast, total)
	}
	t.Logf("fast path took %d of %d Ethernet frames", fast, total)
}

// FuzzFastPath: random frames, same rule.
func FuzzFastPath(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 8, 0, 0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
		0, 80, 1, 187, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 1, 0, 0, 0, 0, 0}, 54)
	var d decoder
	d.init()
	f.Fuzz(func(t *testing.T, data []byte, wire int) {
		if wire < len(data) || wire > 1<<20 {
			wire = len(data)
		}
		decodeBoth(t, &d, data, wire)
	})
}

package capture_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"time"

	"github.com/gopacket/gopacket/layers"
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
	file := buf.Bytes()
	// The reader hands records out of a window of what the buffer holds;
	// readers that return short reads make records straddle every kind of
	// window end (header cut, data cut, exact fit).
	for _, rc := range []struct {
		name string
		r    func() io.Reader
	}{
		{"whole", func() io.Reader { return bytes.NewReader(file) }},
		{"one-octet", func() io.Reader { return iotest.OneByteReader(bytes.NewReader(file)) }},
		{"half", func() io.Reader { return iotest.HalfReader(bytes.NewReader(file)) }},
		{"ragged", func() io.Reader { return &raggedReader{b: file} }},
	} {
		t.Run(rc.name, func(t *testing.T) { matchPcapgo(t, file, rc.r(), false) })
		t.Run(rc.name+"-into", func(t *testing.T) { matchPcapgo(t, file, rc.r(), true) })
	}
}

// raggedReader returns reads of varying sizes, none longer than 1,999
// octets, some as short as one.
type raggedReader struct {
	b []byte
	i int
}

func (r *raggedReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	r.i++
	n := min(len(p), len(r.b), 1+(r.i*7919)%1999)
	copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

// matchPcapgo reads file from r with a Source (with Next, or with NextInto
// into one reused Packet) and compares every packet with pcapgo's.
func matchPcapgo(t *testing.T, file []byte, r io.Reader, into bool) {
	ref, err := pcapgo.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	src, err := capture.NewSource(r, "mem")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var p capture.Packet
	for {
		var err error
		if into {
			err = src.NextInto(&p)
		} else {
			p, err = src.Next()
		}
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
		if p.Frame != uint64(n) || p.Kind != capture.KindTCP {
			t.Fatalf("packet %d: frame %d kind %v", n, p.Frame, p.Kind)
		}
		if !p.TS.Equal(ci.Timestamp) || p.CapLen != ci.CaptureLength || p.WireLen != ci.Length || !bytes.Equal(p.Data, data) {
			t.Fatalf("packet %d: ts %v caplen %d wirelen %d, pcapgo ts %v caplen %d wirelen %d (octets equal: %v)",
				n, p.TS, p.CapLen, p.WireLen, ci.Timestamp, ci.CaptureLength, ci.Length, bytes.Equal(p.Data, data))
		}
	}
	if n < 3000 {
		t.Fatalf("only %d packets", n)
	}
}

// TestPcapStreamDoesNotWait: a record is returned as soon as its octets
// have arrived, without waiting for more of the stream (a pipe from
// tcpdump -w -, a live capture), wherever the octets that have arrived end:
// inside a record header, inside a record's data, or at a record's end.
func TestPcapStreamDoesNotWait(t *testing.T) {
	frames := make([][]byte, 6)
	ends := make([]int, len(frames)) // offset of each record's end
	off := 24
	for i := range frames {
		frames[i] = ether(t, ipv4TCP(t, bytes.Repeat([]byte{byte(i)}, 100*(i+1))))
		off += 16 + len(frames[i])
		ends[i] = off
	}
	file := writePcap(t, false, layers.LinkTypeEthernet, frames...)
	cuts := []int{24 + 7, ends[0] - 5, ends[0] + 3, ends[1], ends[3] + 16, ends[4] - 1, len(file)}
	ch := make(chan []byte, len(cuts))
	r := &chanReader{ch: ch}
	var src *capture.Source
	var p capture.Packet
	sent, next := 0, 0
	for _, c := range cuts {
		ch <- file[sent:c]
		sent = c
		if c == len(file) {
			close(ch)
		}
		if src == nil {
			var err error
			if src, err = capture.NewSource(r, "stream"); err != nil {
				t.Fatal(err)
			}
		}
		for ; next < len(ends) && ends[next] <= c; next++ {
			done := make(chan error, 1)
			go func() { done <- src.NextInto(&p) }()
			select {
			case err := <-done:
				if err != nil || !bytes.Equal(p.Data, frames[next]) {
					t.Fatalf("packet %d: %v, %d octets", next+1, err, len(p.Data))
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("packet %d: the source waits for octets after it", next+1)
			}
		}
	}
	if err := src.NextInto(&p); err != io.EOF {
		t.Fatalf("after the last packet: %v", err)
	}
}

// chanReader reads the octets sent on ch, waiting for them.
type chanReader struct {
	ch   chan []byte
	left []byte
}

func (r *chanReader) Read(p []byte) (int, error) {
	for len(r.left) == 0 {
		b, ok := <-r.ch
		if !ok {
			return 0, io.EOF
		}
		r.left = b
	}
	n := copy(p, r.left)
	r.left = r.left[n:]
	return n, nil
}

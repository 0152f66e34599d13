package capture_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
)

// toModifiedBE rewrites the little-endian pcap file b (microseconds) as a
// big-endian modified pcap: magic 0xa1b2cd34, every header field swapped,
// and the 8 octets of the modified record header (interface index,
// protocol, packet type, pad) after each record's 16.
func toModifiedBE(t *testing.T, b []byte) []byte {
	t.Helper()
	le, be := binary.LittleEndian, binary.BigEndian
	if le.Uint32(b) != 0xa1b2c3d4 {
		t.Fatalf("not a little-endian microsecond pcap: % x", b[:4])
	}
	out := be.AppendUint32(nil, 0xa1b2cd34)
	out = be.AppendUint16(out, le.Uint16(b[4:]))
	out = be.AppendUint16(out, le.Uint16(b[6:]))
	for _, o := range []int{8, 12, 16, 20} {
		out = be.AppendUint32(out, le.Uint32(b[o:]))
	}
	for r := b[24:]; len(r) > 0; {
		n := 16 + int(le.Uint32(r[8:]))
		for _, o := range []int{0, 4, 8, 12} {
			out = be.AppendUint32(out, le.Uint32(r[o:]))
		}
		out = be.AppendUint32(out, 2)      // ifindex
		out = be.AppendUint16(out, 0x0800) // protocol
		out = append(out, 0, 0xff)         // packet type, pad
		out = append(out, r[16:n]...)
		r = r[n:]
	}
	return out
}

// TestModifiedPcap: a modified (Kuznetzov) pcap file reads packet for
// packet as the classic pcap it was made from: the little-endian one
// editcap -F modpcap wrote from testdata/siw/crc_v2_rping.pcap, and a
// big-endian one made here. Payload positions point at the payload in the
// modified file; the mapped reader reads it alike; the chunk reader leaves
// it to a Source (ErrNotChunked); a file cut inside a record reads up to
// it and then gives io.ErrUnexpectedEOF.
func TestModifiedPcap(t *testing.T) {
	orig := filepath.Join("..", "testdata", "siw", "crc_v2_rping.pcap")
	ob, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	be := filepath.Join(t.TempDir(), "be.pcap")
	if err := os.WriteFile(be, toModifiedBE(t, ob), 0o644); err != nil {
		t.Fatal(err)
	}
	want := readPath(t, orig, capture.Open)
	if len(want) < 20 {
		t.Fatalf("%d packets in %s", len(want), orig)
	}
	for _, path := range []string{filepath.Join("..", "testdata", "modified", "crc_v2_rping_modpcap.pcap"), be} {
		for name, open := range map[string]func(string) (*capture.Source, error){"read": capture.Open, "mapped": capture.OpenMapped} {
			t.Run(filepath.Base(path)+"/"+name, func(t *testing.T) {
				got := readPath(t, path, open)
				if len(got) != len(want) {
					t.Fatalf("%d packets, want %d", len(got), len(want))
				}
				file, _ := os.ReadFile(path)
				for i, p := range got {
					w := want[i]
					if p.Frame != w.Frame || !p.TS.Equal(w.TS) || p.CapLen != w.CapLen || p.WireLen != w.WireLen ||
						p.Kind != w.Kind || !bytes.Equal(p.Data, w.Data) || !bytes.Equal(p.Payload, w.Payload) {
						t.Fatalf("frame %d: %+v, want %+v", i+1, p, w)
					}
					if len(p.Payload) > 0 {
						at := p.PayloadPos
						if at <= 0 || at+int64(len(p.Payload)) > int64(len(file)) || !bytes.Equal(file[at:at+int64(len(p.Payload))], p.Payload) {
							t.Fatalf("frame %d: payload position %d does not hold the payload", i+1, at)
						}
					}
				}
			})
		}
		if _, err := capture.OpenChunks(path, 0); !errors.Is(err, capture.ErrNotChunked) {
			t.Errorf("OpenChunks(%s): %v, want ErrNotChunked", path, err)
		}
	}
	// Cut 30 octets into the fourth record (24 + 3 records before it).
	b := toModifiedBE(t, ob)
	off := 24
	for range 3 {
		off += 24 + int(binary.BigEndian.Uint32(b[off+8:]))
	}
	src, err := capture.NewSource(bytes.NewReader(b[:off+30]), "cut")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		if _, err = src.Next(); err != nil {
			break
		}
	}
	if n != 3 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut file: %d packets, then %v; want 3, then io.ErrUnexpectedEOF", n, err)
	}
}

// readPath reads every packet of the file at path, copied.
func readPath(t *testing.T, path string, open func(string) (*capture.Source, error)) []capture.Packet {
	t.Helper()
	src, err := open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out []capture.Packet
	for {
		p, err := src.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		p.Data = bytes.Clone(p.Data)
		p.Payload = bytes.Clone(p.Payload)
		out = append(out, p)
	}
}

package capture_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/capture"
)

// within reports whether sub lies inside whole (same backing array).
func within(sub, whole []byte) bool {
	if len(sub) == 0 {
		return true
	}
	if len(whole) == 0 {
		return false
	}
	s := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	w := uintptr(unsafe.Pointer(unsafe.SliceData(whole)))
	return s >= w && s+uintptr(len(sub)) <= w+uintptr(len(whole))
}

// samePacket reports whether a and b hold the same packet (errors
// compared by text).
func samePacket(a, b *capture.Packet) bool {
	errText := func(e error) string {
		if e == nil {
			return ""
		}
		return e.Error()
	}
	return a.Frame == b.Frame && a.TS.Equal(b.TS) && a.TS.Location() == b.TS.Location() &&
		a.Interface == b.Interface && a.CapLen == b.CapLen && a.WireLen == b.WireLen &&
		a.Kind == b.Kind && errText(a.Err) == errText(b.Err) && a.Src == b.Src && a.Dst == b.Dst &&
		a.IPv6 == b.IPv6 && a.Fragment == b.Fragment && a.Seq == b.Seq && a.Ack == b.Ack &&
		a.Flags == b.Flags && a.Window == b.Window && a.PayloadWireLen == b.PayloadWireLen &&
		bytes.Equal(a.Payload, b.Payload) && (a.Payload == nil) == (b.Payload == nil) &&
		bytes.Equal(a.Data, b.Data) && (a.Data == nil) == (b.Data == nil)
}

// checkStream reads data as a capture to the end and checks the invariants
// every input must keep: no panic, frames numbered 1, 2, 3..., payload
// inside the frame and never longer than its wire length, KindBad exactly
// when Err is set, a bounded number of frames, and a sticky final error
// whose offset lies in the file.
func checkStream(t *testing.T, data []byte) {
	s, err := capture.NewSource(bytes.NewReader(data), "fuzz")
	if err != nil {
		var fe *capture.FileError
		if !errors.As(err, &fe) {
			t.Fatalf("NewSource: %T %v", err, err)
		}
		return
	}
	defer s.Close()
	// The same stream in ragged short reads, read into one reused Packet:
	// it must give the same packets and the same end (the window of
	// buffered octets the pcap reader cuts records from ends anywhere).
	s2, err := capture.NewSource(&raggedReader{b: data}, "fuzz")
	if err != nil {
		t.Fatalf("NewSource over short reads: %v", err)
	}
	defer s2.Close()
	var q capture.Packet
	gz := len(data) > 1 && data[0] == 0x1f && data[1] == 0x8b
	var n uint64
	for {
		p, err := s.Next()
		err2 := s2.NextInto(&q)
		if !samePacket(&p, &q) || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("frame %d: Next gives %+v, %v; NextInto over short reads %+v, %v", n+1, p, err, q, err2)
		}
		if err != nil {
			if err != io.EOF {
				var fe *capture.FileError
				if !errors.As(err, &fe) {
					t.Fatalf("Next: %T %v", err, err)
				}
				if fe.Frame != n+1 || fe.Offset < 0 || (!gz && fe.Offset > int64(len(data))) {
					t.Fatalf("FileError frame %d offset %d after %d frames of %d octets", fe.Frame, fe.Offset, n, len(data))
				}
			}
			if _, err2 := s.Next(); err2 != err {
				t.Fatalf("error not sticky: %v then %v", err, err2)
			}
			return
		}
		n++
		if p.Frame != n {
			t.Fatalf("frame %d numbered %d", n, p.Frame)
		}
		if !gz && n > uint64(len(data)/12) {
			t.Fatalf("%d frames from %d octets", n, len(data))
		}
		if gz && n > 1<<20 {
			return // a gzip bomb: enough
		}
		if (p.Kind == capture.KindBad) != (p.Err != nil) || p.Kind < capture.KindTCP || p.Kind > capture.KindIB {
			t.Fatalf("frame %d: kind %v err %v", n, p.Kind, p.Err)
		}
		if p.Data != nil && len(p.Data) != p.CapLen {
			t.Fatalf("frame %d: %d octets, caplen %d", n, len(p.Data), p.CapLen)
		}
		if len(p.Data) > capture.MaxRecordLength {
			t.Fatalf("frame %d: %d octets", n, len(p.Data))
		}
		if !within(p.Payload, p.Data) {
			t.Fatalf("frame %d: payload outside the frame", n)
		}
		switch p.Kind {
		case capture.KindTCP, capture.KindUDP:
			if p.PayloadWireLen < len(p.Payload) {
				t.Fatalf("frame %d: payload %d, wire length %d", n, len(p.Payload), p.PayloadWireLen)
			}
		case capture.KindIB:
			if len(p.Payload) != len(p.Data) || len(p.Payload) < 8 || p.PayloadWireLen < len(p.Payload) || p.Src.IsValid() {
				t.Fatalf("frame %d: IB payload %d of %d octets, wire length %d, src %v", n, len(p.Payload), len(p.Data), p.PayloadWireLen, p.Src)
			}
		default:
			if p.Payload != nil || p.PayloadWireLen != 0 {
				t.Fatalf("frame %d: %v with payload", n, p.Kind)
			}
		}
	}
}

func fuzzSeeds(t testing.TB) [][]byte {
	payload := []byte("seed payload")
	frames := [][]byte{
		ether(t, ipv4TCP(t, payload)),
		ether(t, ipv6TCP(t, payload), layers.EthernetTypeQinQ, layers.EthernetTypeDot1Q),
		ether(t, ipv4UDP(t, payload)),
	}
	seeds := [][]byte{
		writePcap(t, false, layers.LinkTypeEthernet, frames...),
		writePcap(t, true, layers.LinkTypeLinuxSLL2, sll2(ipv4TCP(t, payload))),
		writePcap(t, false, layers.LinkTypeRaw, ipv6TCP(t, payload), ipv4TCP(t, nil)),
		writePcap(t, false, layers.LinkTypeNull, null(ipv6TCP(t, payload), 30, binary.LittleEndian)),
		writePcap(t, false, capture.LinkTypeInfiniBand, ibFrame(300), ibFrame(0)[:5]),
	}
	be := newPcapFile(binary.BigEndian, true, 65535, layers.LinkTypeLinuxSLL)
	be.add(t0, sll(ipv4TCP(t, payload)))
	be.record(t0, 0, 60, nil)
	seeds = append(seeds, be.bytes())
	ng := newNgFile(binary.LittleEndian)
	ng.idb(layers.LinkTypeEthernet, 0, 0)
	ng.idb(layers.LinkTypeIPv6, 128, 9)
	ng.epb(0, t0, 6, uint32(len(frames[0])), uint32(len(frames[0])), frames[0])
	ng.epb(1, t0, 9, 60, 100, ipv6TCP(t, payload)[:60])
	ng.isb(0)
	ng.spb(uint32(len(frames[1])), frames[1])
	seeds = append(seeds, ng.bytes())
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write(seeds[0])
	_ = zw.Close()
	seeds = append(seeds, z.Bytes(), seeds[0][:len(seeds[0])-7], ng.bytes()[:100])
	// A modified (Kuznetzov) pcap file, as editcap -F modpcap writes it.
	if mod, err := os.ReadFile(filepath.Join("..", "testdata", "modified", "crc_v2_rping_modpcap.pcap")); err == nil {
		seeds = append(seeds, mod[:min(len(mod), 2048)])
	} else {
		t.Fatal(err)
	}
	return seeds
}

// FuzzSource feeds arbitrary bytes as a capture file.
func FuzzSource(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkStream(t, data)
	})
}

// FuzzDecode feeds arbitrary frames of every supported link type, to reach
// the header decoders faster than FuzzSource does.
func FuzzDecode(f *testing.F) {
	links := []layers.LinkType{
		layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeLinuxSLL2,
		layers.LinkTypeNull, layers.LinkTypeLoop, layers.LinkTypeRaw, 12, 14,
		layers.LinkTypeIPv4, layers.LinkTypeIPv6, capture.LinkTypeInfiniBand,
	}
	payload := []byte("p")
	f.Add(uint8(0), ether(f, ipv4TCP(f, payload)))
	f.Add(uint8(0), ether(f, v6extFrame(f), layers.EthernetTypeDot1Q))
	f.Add(uint8(1), sll(ipv4UDP(f, payload)))
	f.Add(uint8(2), sll2(ipv6TCP(f, payload)))
	f.Add(uint8(3), null(ipv4TCP(f, payload), 2, binary.LittleEndian))
	f.Add(uint8(6), null(ipv6TCP(f, payload), 24, binary.BigEndian))
	f.Add(uint8(5), ipv6UDP(f, payload))
	f.Add(uint8(10), ibFrame(40))
	f.Fuzz(func(t *testing.T, link uint8, frame []byte) {
		lt := links[int(link)%len(links)]
		wire := uint32(len(frame))
		if len(frame) > 0 {
			wire += uint32(frame[len(frame)-1]) // sometimes cut by a snap length
		}
		pf := newPcapFile(binary.LittleEndian, false, 262144, lt)
		pf.record(t0, uint32(len(frame)), wire, frame)
		pf.add(t0, frame)
		checkStream(t, pf.bytes())
	})
}

// v6extFrame is an IPv6 packet with Hop-by-Hop, Destination Options and
// Routing headers before TCP.
func v6extFrame(t testing.TB) []byte {
	b := ipv6TCP(t, []byte("x"))
	exts := append(append(extHopByHop(60), extDestOpts(43)...), extRouting(6)...)
	out := append(bytes.Clone(b[:40]), exts...)
	out = append(out, b[40:]...)
	out[6] = 0
	binary.BigEndian.PutUint16(out[4:6], uint16(len(out)-40))
	return out
}

package capture_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect"
)

// threeFrames returns three Ethernet/IPv4/TCP frames with payloads "one",
// "two", "three".
func threeFrames(t testing.TB) [][]byte {
	return [][]byte{
		ether(t, ipv4TCP(t, []byte("one"))),
		ether(t, ipv4TCP(t, []byte("two"))),
		ether(t, ipv4TCP(t, bytes.Repeat([]byte("three"), 100))),
	}
}

func TestPcapVariants(t *testing.T) {
	frames := threeFrames(t)
	mk := func(order binary.ByteOrder, nanos bool) []byte {
		f := newPcapFile(order, nanos, 65535, layers.LinkTypeEthernet)
		for i, fr := range frames {
			f.add(t0.Add(time.Duration(i)*time.Second), fr)
		}
		return f.bytes()
	}
	for _, tc := range []struct {
		name  string
		file  []byte
		nanos bool
	}{
		{"pcapgo-micro-le", writePcap(t, false, layers.LinkTypeEthernet, frames...), false},
		{"pcapgo-nano-le", writePcap(t, true, layers.LinkTypeEthernet, frames...), true},
		{"micro-le", mk(binary.LittleEndian, false), false},
		{"micro-be", mk(binary.BigEndian, false), false},
		{"nano-le", mk(binary.LittleEndian, true), true},
		{"nano-be", mk(binary.BigEndian, true), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pkts, err := readAll(t, tc.file)
			if err != nil || len(pkts) != 3 {
				t.Fatalf("%d packets, %v", len(pkts), err)
			}
			step := time.Second
			if strings.HasPrefix(tc.name, "pcapgo") {
				step = time.Millisecond
			}
			for i, p := range pkts {
				want := t0.Add(time.Duration(i) * step)
				if !tc.nanos {
					want = want.Truncate(time.Microsecond)
				}
				if !p.TS.Equal(want) || p.TS.Location() != time.UTC {
					t.Errorf("frame %d: ts %v, want %v UTC", i+1, p.TS, want)
				}
				if p.Frame != uint64(i+1) || p.Interface != 0 || p.Kind != capture.KindTCP || !bytes.Equal(p.Data, frames[i]) {
					t.Errorf("frame %d: %+v", i+1, p)
				}
			}
		})
	}
}

// Two interfaces of different link types and timestamp resolutions, in
// both byte orders, with statistics, an unknown block, a simple packet
// block, an obsolete packet block and a second section.
func TestPcapngInterfaces(t *testing.T) {
	payload := []byte("pcapng")
	eth := ether(t, ipv4TCP(t, payload))
	cooked := sll2(ipv6TCP(t, payload))
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(order.String(), func(t *testing.T) {
			f := newNgFile(order)
			f.idb(layers.LinkTypeEthernet, 0, 0) // microseconds (no if_tsresol)
			f.idb(layers.LinkTypeLinuxSLL2, 0, 9)
			f.epb(0, t0, 6, uint32(len(eth)), uint32(len(eth)), eth)
			f.epb(1, t0.Add(time.Nanosecond), 9, uint32(len(cooked)), uint32(len(cooked)), cooked)
			f.isb(1)
			f.block(0x40000bad, []byte("unknown block type, skipped"))
			f.spb(uint32(len(eth)), eth)
			f.pb(0, t0, eth) // interface 0 counts microseconds
			// A new section: interfaces start again from 0.
			sec := newNgFile(order)
			sec.idb(layers.LinkTypeRaw, 0, 3)
			sec.epb(0, t0, 3, uint32(len(eth)-14), uint32(len(eth)-14), eth[14:])
			f.buf.Write(sec.bytes())

			pkts, err := readAll(t, f.bytes())
			if err != nil || len(pkts) != 5 {
				t.Fatalf("%d packets, %v", len(pkts), err)
			}
			want := []struct {
				iface int
				ts    time.Time
				v6    bool
			}{
				{0, t0.Truncate(time.Microsecond), false},
				{1, t0.Add(time.Nanosecond), true},
				{0, time.Time{}, false}, // SPBs carry no timestamp
				{0, t0.Truncate(time.Microsecond), false},
				{0, t0.Truncate(time.Millisecond), false},
			}
			for i, p := range pkts {
				if p.Frame != uint64(i+1) || p.Interface != want[i].iface || !p.TS.Equal(want[i].ts) {
					t.Errorf("frame %d: frame %d iface %d ts %v, want %d %v", i+1, p.Frame, p.Interface, p.TS, want[i].iface, want[i].ts)
				}
				checkTCP(t, p, want[i].v6, payload)
			}
		})
	}
}

// The pcapng writer of gopacket: LinkType reflects every interface.
func TestPcapngWriter(t *testing.T) {
	var b bytes.Buffer
	w, err := pcapgo.NewNgWriter(&b, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	id, err := w.AddInterface(pcapgo.NgInterface{Name: "any", LinkType: layers.LinkTypeLinuxSLL, SnapLength: 262144})
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte("ng")
	frames := [][]byte{ether(t, ipv4TCP(t, payload)), sll(ipv6TCP(t, payload))}
	for i, fr := range frames {
		ci := gopacket.CaptureInfo{Timestamp: t0, CaptureLength: len(fr), Length: len(fr), InterfaceIndex: []int{0, id}[i]}
		if err := w.WritePacket(ci, fr); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	s, err := capture.NewSource(&b, "ng")
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		p, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		checkTCP(t, p, i == 1, payload)
		if !p.TS.Equal(t0) || p.Interface != i {
			t.Errorf("frame %d: ts %v iface %d", p.Frame, p.TS, p.Interface)
		}
	}
	if _, err := s.Next(); err != io.EOF {
		t.Errorf("end: %v", err)
	}
	if s.LinkType(0) != layers.LinkTypeEthernet || s.LinkType(1) != layers.LinkTypeLinuxSLL || s.LinkType(2) != capture.LinkTypeUnknown {
		t.Errorf("link types %v %v %v", s.LinkType(0), s.LinkType(1), s.LinkType(2))
	}
}

func TestPcapngUnknownLinkType(t *testing.T) {
	eth := ether(t, ipv4TCP(t, []byte("x")))
	f := newNgFile(binary.LittleEndian)
	f.idb(layers.LinkTypeEthernet, 0, 0)
	f.idb(layers.LinkType(147), 0, 0) // LINKTYPE_USER0
	f.epb(1, t0, 6, uint32(len(eth)), uint32(len(eth)), eth)
	f.epb(0, t0, 6, uint32(len(eth)), uint32(len(eth)), eth)
	pkts, err := readAll(t, f.bytes())
	if err != nil || len(pkts) != 2 {
		t.Fatalf("%d packets, %v", len(pkts), err)
	}
	if pkts[0].Kind != capture.KindBad || !errors.Is(pkts[0].Err, capture.ErrLinkType) {
		t.Errorf("frame 1: kind %v err %v", pkts[0].Kind, pkts[0].Err)
	}
	if pkts[1].Kind != capture.KindTCP {
		t.Errorf("frame 2: kind %v err %v", pkts[1].Kind, pkts[1].Err)
	}
}

func TestPcapUnknownLinkType(t *testing.T) {
	file := writePcap(t, false, layers.LinkType(147))
	_, err := capture.NewSource(bytes.NewReader(file), "user0.pcap")
	var fe *capture.FileError
	if !errors.As(err, &fe) || !errors.Is(err, capture.ErrLinkType) || fe.File != "user0.pcap" {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(err.Error(), "user0.pcap") || !strings.Contains(err.Error(), "147") {
		t.Errorf("message %q", err)
	}
}

func TestGzip(t *testing.T) {
	frames := threeFrames(t)
	ng := newNgFile(binary.BigEndian)
	ng.idb(layers.LinkTypeEthernet, 0, 0)
	for _, fr := range frames {
		ng.epb(0, t0, 6, uint32(len(fr)), uint32(len(fr)), fr)
	}
	for name, file := range map[string][]byte{
		"pcap":   writePcap(t, false, layers.LinkTypeEthernet, frames...),
		"pcapng": ng.bytes(),
	} {
		t.Run(name, func(t *testing.T) {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			_, _ = zw.Write(file)
			_ = zw.Close()
			if z.Bytes()[0] != 0x1f || z.Bytes()[1] != 0x8b {
				t.Fatal("not gzip")
			}
			pkts, err := readAll(t, z.Bytes())
			if err != nil || len(pkts) != 3 {
				t.Fatalf("%d packets, %v", len(pkts), err)
			}
			for i, p := range pkts {
				if !bytes.Equal(p.Data, frames[i]) {
					t.Errorf("frame %d differs", i+1)
				}
			}
			// Cut the compressed stream short: the frames before the cut
			// come back, then a FileError.
			pkts, err = readAll(t, z.Bytes()[:z.Len()-30])
			var fe *capture.FileError
			if !errors.As(err, &fe) || !errors.Is(err, io.ErrUnexpectedEOF) || fe.Frame != uint64(len(pkts)+1) {
				t.Errorf("cut gzip: %d packets, %v", len(pkts), err)
			}
		})
	}
}

func TestOpenFileAndStdin(t *testing.T) {
	frames := threeFrames(t)
	file := writePcap(t, true, layers.LinkTypeEthernet, frames...)
	path := filepath.Join(t.TempDir(), "x.pcap")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	count := func(s *capture.Source) int {
		t.Helper()
		n := 0
		for {
			_, err := s.Next()
			if err == io.EOF {
				return n
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	s, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != path || s.LinkType(0) != layers.LinkTypeEthernet || count(s) != 3 {
		t.Errorf("name %q link %v", s.Name(), s.LinkType(0))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); !errors.Is(err, capture.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	// "-" reads standard input.
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	saved := os.Stdin
	os.Stdin = in
	defer func() { os.Stdin = saved }()
	s, err = capture.Open("-")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "-" || count(s) != 3 {
		t.Errorf("stdin: name %q", s.Name())
	}
	_ = s.Close()

	if _, err := capture.Open(filepath.Join(t.TempDir(), "missing.pcap")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestNotACapture(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "capture: f: not a pcap or pcapng file (only 0 octets)"},
		{"short", []byte{0xd4, 0xc3}, "capture: f: not a pcap or pcapng file (only 2 octets)"},
		{"text", []byte("GET / HTTP/1.1\r\n"), "capture: f: not a pcap or pcapng file (magic 0x47455420)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := capture.NewSource(bytes.NewReader(tc.data), "f")
			if !errors.Is(err, capture.ErrFormat) || err.Error() != tc.want {
				t.Errorf("err %q, want %q", err, tc.want)
			}
		})
	}
	// A good magic with the header cut short.
	file := writePcap(t, false, layers.LinkTypeEthernet)
	_, err := capture.NewSource(bytes.NewReader(file[:10]), "f")
	if !errors.Is(err, io.ErrUnexpectedEOF) || err.Error() != "capture: f: truncated file header" {
		t.Errorf("short pcap header: %v", err)
	}
	ng := newNgFile(binary.LittleEndian).bytes()
	for _, n := range []int{4, 20} {
		if _, err := capture.NewSource(bytes.NewReader(ng[:n]), "f"); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("short pcapng header (%d octets): %v", n, err)
		}
	}
}

// checkTruncated reads file, expecting the frames before frame `frame` and
// then a FileError at offset off.
func checkTruncated(t *testing.T, file []byte, frame uint64, off int64, cause error) {
	t.Helper()
	pkts, err := readAll(t, file)
	var fe *capture.FileError
	if !errors.As(err, &fe) {
		t.Fatalf("after %d packets: err %v, want *FileError", len(pkts), err)
	}
	if uint64(len(pkts)) != frame-1 || fe.Frame != frame || fe.Offset != off || fe.File != "mem" || !errors.Is(err, cause) {
		t.Fatalf("%d packets, then %v (frame %d offset %d), want frame %d offset %d %v", len(pkts), err, fe.Frame, fe.Offset, frame, off, cause)
	}
	for i, p := range pkts {
		if p.Frame != uint64(i+1) || p.Kind != capture.KindTCP {
			t.Errorf("frame %d: %v %v", p.Frame, p.Kind, p.Err)
		}
	}
}

func TestTruncatedPcap(t *testing.T) {
	frames := threeFrames(t)
	file := writePcap(t, false, layers.LinkTypeEthernet, frames...)
	last := int64(24 + 16 + len(frames[0]) + 16 + len(frames[1])) // offset of record 3
	// Every cut inside record 3: in its header, at its data, in its data.
	for cut := last + 1; cut < int64(len(file)); cut++ {
		checkTruncated(t, file[:cut], 3, last, io.ErrUnexpectedEOF)
	}
	// A cut at a record boundary is a clean end.
	if pkts, err := readAll(t, file[:last]); err != nil || len(pkts) != 2 {
		t.Errorf("cut at boundary: %d packets, %v", len(pkts), err)
	}
	_, err := readAll(t, file[:last+20])
	want := fmt.Sprintf("capture: mem: frame 3 at offset %d: truncated record", last)
	if err == nil || err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

func TestTruncatedPcapng(t *testing.T) {
	frames := threeFrames(t)
	f := newNgFile(binary.LittleEndian)
	f.idb(layers.LinkTypeEthernet, 0, 0)
	f.epb(0, t0, 6, uint32(len(frames[0])), uint32(len(frames[0])), frames[0])
	f.epb(0, t0, 6, uint32(len(frames[1])), uint32(len(frames[1])), frames[1])
	idb := f.idb(layers.LinkTypeRaw, 0, 9) // a second interface, mid-file
	isb := f.isb(0)
	epb := f.epb(0, t0, 6, uint32(len(frames[2])), uint32(len(frames[2])), frames[2])
	file := f.bytes()
	for cut := idb + 1; cut < len(file); cut++ {
		damage := idb
		switch {
		case cut > epb:
			damage = epb
		case cut > isb:
			damage = isb
		case cut == isb:
			damage = isb
		}
		if cut == isb || cut == epb {
			// A cut between blocks is a clean end of file.
			if pkts, err := readAll(t, file[:cut]); err != nil || len(pkts) != 2 {
				t.Errorf("cut at %d: %d packets, %v", cut, len(pkts), err)
			}
			continue
		}
		checkTruncated(t, file[:cut], 3, int64(damage), io.ErrUnexpectedEOF)
	}
}

// EPB options are skipped (pcapgo is not shown them); a file cut inside
// them is still a truncated record.
func TestPcapngEPBOptions(t *testing.T) {
	frames := threeFrames(t)
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		f := newNgFile(order)
		f.idb(layers.LinkTypeEthernet, 0, 9)
		for _, fr := range frames[:2] {
			f.epbOptions(0, t0, fr)
		}
		last := f.epbOptions(0, t0, frames[2])
		file := f.bytes()
		pkts, err := readAll(t, file)
		if err != nil || len(pkts) != 3 {
			t.Fatalf("%v: %d packets, %v", order, len(pkts), err)
		}
		for i, p := range pkts {
			if !bytes.Equal(p.Data, frames[i]) || !p.TS.Equal(t0) || p.Kind != capture.KindTCP {
				t.Errorf("%v: frame %d differs", order, i+1)
			}
		}
		for cut := last + 1; cut < len(file); cut++ {
			checkTruncated(t, file[:cut], 3, int64(last), io.ErrUnexpectedEOF)
		}
	}
}

func TestRecordTooLong(t *testing.T) {
	frames := threeFrames(t)
	f := newPcapFile(binary.LittleEndian, false, 0xffffffff, layers.LinkTypeEthernet)
	f.add(t0, frames[0])
	off := int64(f.buf.Len())
	f.record(t0, capture.MaxRecordLength+1, capture.MaxRecordLength+1, frames[1])
	checkTruncated(t, f.bytes(), 2, off, capture.ErrRecordTooLong)

	// The same in pcapng.
	ng := newNgFile(binary.LittleEndian)
	ng.idb(layers.LinkTypeEthernet, 0, 0)
	ng.epb(0, t0, 6, uint32(len(frames[0])), uint32(len(frames[0])), frames[0])
	off = int64(ng.buf.Len())
	ng.epb(0, t0, 6, 0x7fffffff, 0x7fffffff, frames[1])
	checkTruncated(t, ng.bytes(), 2, off, capture.ErrRecordTooLong)

	// A record of exactly MaxRecordLength is fine.
	big := make([]byte, capture.MaxRecordLength)
	copy(big, frames[2])
	f = newPcapFile(binary.LittleEndian, false, 0, layers.LinkTypeEthernet)
	f.add(t0, big)
	pkts, err := readAll(t, f.bytes())
	if err != nil || len(pkts) != 1 || pkts[0].Kind != capture.KindTCP || pkts[0].CapLen != capture.MaxRecordLength {
		t.Errorf("max record: %d packets, %v", len(pkts), err)
	}
}

func TestMalformedPcapngBlocks(t *testing.T) {
	eth := ether(t, ipv4TCP(t, []byte("x")))
	for _, tc := range []struct {
		name  string
		build func(f *ngFile)
		cause error
	}{
		{"caplen-past-block", func(f *ngFile) {
			off := f.epb(0, t0, 6, uint32(len(eth)), uint32(len(eth)), eth)
			binary.LittleEndian.PutUint32(f.buf.Bytes()[off+20:], uint32(len(eth))+100)
		}, capture.ErrBadBlock},
		{"length-not-multiple-of-4", func(f *ngFile) {
			off := f.epb(0, t0, 6, uint32(len(eth)), uint32(len(eth)), eth)
			binary.LittleEndian.PutUint32(f.buf.Bytes()[off+4:], 33)
		}, capture.ErrBadBlock},
		{"block-shorter-than-header", func(f *ngFile) {
			off := f.epb(0, t0, 6, uint32(len(eth)), uint32(len(eth)), eth)
			binary.LittleEndian.PutUint32(f.buf.Bytes()[off+4:], 16)
		}, capture.ErrBadBlock},
		{"idb-options-past-block", func(f *ngFile) {
			off := f.idb(layers.LinkTypeRaw, 0, 9)
			binary.LittleEndian.PutUint16(f.buf.Bytes()[off+18:], 200) // if_tsresol of 200 octets
		}, capture.ErrBadBlock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newNgFile(binary.LittleEndian)
			f.idb(layers.LinkTypeEthernet, 0, 0)
			f.epb(0, t0, 6, uint32(len(eth)), uint32(len(eth)), eth)
			off := int64(f.buf.Len())
			tc.build(f)
			f.epb(0, t0, 6, uint32(len(eth)), uint32(len(eth)), eth)
			pkts, err := readAll(t, f.bytes())
			var fe *capture.FileError
			if !errors.As(err, &fe) || !errors.Is(err, tc.cause) || fe.Offset != off || fe.Frame != 2 || len(pkts) != 1 {
				t.Errorf("%d packets, err %v", len(pkts), err)
			}
		})
	}
	// An EPB naming an interface that does not exist: pcapgo's error.
	f := newNgFile(binary.LittleEndian)
	f.idb(layers.LinkTypeEthernet, 0, 0)
	f.epb(5, t0, 6, uint32(len(eth)), uint32(len(eth)), eth)
	if _, err := readAll(t, f.bytes()); err == nil || !strings.Contains(err.Error(), "frame 1 at offset 48") {
		t.Errorf("bad interface id: %v", err)
	}
}

func TestOddRecords(t *testing.T) {
	frames := threeFrames(t)
	f := newPcapFile(binary.BigEndian, true, 65535, layers.LinkTypeEthernet)
	f.add(t0, frames[0])
	f.record(t0, 0, 0, nil)                             // zero-length record
	f.record(t0, 0, 1514, nil)                          // nothing captured of a real frame
	f.record(t0, uint32(len(frames[1])), 10, frames[1]) // caplen > wirelen: decoded, as tshark does
	f.add(t0, frames[2])
	pkts, err := readAll(t, f.bytes())
	if err != nil || len(pkts) != 5 {
		t.Fatalf("%d packets, %v", len(pkts), err)
	}
	for i, want := range []capture.Kind{capture.KindTCP, capture.KindBad, capture.KindBad, capture.KindTCP, capture.KindTCP} {
		p := pkts[i]
		if p.Frame != uint64(i+1) || p.Kind != want || !p.TS.Equal(t0) {
			t.Errorf("frame %d: frame %d kind %v ts %v", i+1, p.Frame, p.Kind, p.TS)
		}
	}
	if !errors.Is(pkts[1].Err, dissect.ErrTruncated) || pkts[1].CapLen != 0 || len(pkts[1].Data) != 0 {
		t.Errorf("zero-length record: %v", pkts[1].Err)
	}
	if !errors.Is(pkts[2].Err, dissect.ErrTruncated) || pkts[2].WireLen != 1514 {
		t.Errorf("empty capture of a frame: %v", pkts[2].Err)
	}
	if pkts[3].Err != nil || pkts[3].CapLen != len(frames[1]) || pkts[3].WireLen != 10 || !bytes.Equal(pkts[3].Data, frames[1]) ||
		pkts[3].Src != pkts[0].Src || len(pkts[3].Payload) == 0 || pkts[3].PayloadWireLen != len(pkts[3].Payload) {
		t.Errorf("caplen > wirelen: %+v", pkts[3])
	}
	if !bytes.Equal(pkts[4].Data, frames[2]) {
		t.Error("frame after the odd records differs")
	}
}

func TestStickyErrors(t *testing.T) {
	file := writePcap(t, false, layers.LinkTypeEthernet, threeFrames(t)...)
	s, err := capture.NewSource(bytes.NewReader(file[:len(file)-5]), "mem")
	if err != nil {
		t.Fatal(err)
	}
	var first error
	for range 5 {
		_, err := s.Next()
		if err != nil && first == nil {
			first = err
		}
		if first != nil && err != first {
			t.Fatalf("error changed: %v then %v", first, err)
		}
	}
	s, _ = capture.NewSource(bytes.NewReader(file), "mem")
	for range 3 {
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if _, err := s.Next(); err != io.EOF {
			t.Fatalf("after the end: %v", err)
		}
	}
}

// A reader that fails mid-file: its error comes back in a FileError.
func TestReadError(t *testing.T) {
	file := writePcap(t, false, layers.LinkTypeEthernet, threeFrames(t)...)
	boom := errors.New("disk on fire")
	s, err := capture.NewSource(io.MultiReader(bytes.NewReader(file[:100]), &errReader{boom}), "mem")
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err = s.Next()
		if err != nil {
			break
		}
	}
	var fe *capture.FileError
	if !errors.As(err, &fe) || !errors.Is(err, boom) || fe.Frame != 2 {
		t.Errorf("err %v", err)
	}
}

type errReader struct{ err error }

func (e *errReader) Read([]byte) (int, error) { return 0, e.err }

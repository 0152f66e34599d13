//go:build unix

package capture_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/iwarpkit/iwarpkit/capture"
)

// TestOpenMapped: a pcap or pcapng file read from its mapping gives the packets and
// the end that Open gives: every bundled pcap, large files of both byte
// orders and resolutions with records of every length up to
// MaxRecordLength, those files cut short at many points (inside a record
// header, inside a record, at a record's end), a record longer than
// MaxRecordLength, one whose captured length exceeds its original length,
// and files too short for a header; the same for pcapng files, whole and
// cut short. gzip files, which are not mapped, are read as Open reads them.
func TestOpenMapped(t *testing.T) {
	dir := t.TempDir()
	must := mustOpen(t)
	check := func(name string, data []byte, wantMapped bool) {
		t.Helper()
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ref, rerr := capture.Open(path)
		s, err := capture.OpenMapped(path)
		if (err == nil) != (rerr == nil) || (err != nil && err.Error() != rerr.Error()) {
			t.Fatalf("%s: OpenMapped: %v; Open: %v", name, err, rerr)
		}
		if err != nil {
			return
		}
		if s.Mapped() != wantMapped {
			t.Fatalf("%s: mapped %v", name, s.Mapped())
		}
		got, gend := framesOf(t, s)
		want, wend := framesOf(t, must(ref, rerr))
		if gend != wend || !slices.Equal(got, want) {
			t.Fatalf("%s: mapped %d packets, %s; read %d, %s", name, len(got), gend, len(want), wend)
		}
	}
	files, _ := filepath.Glob("../testdata/*/*.pcap") // two of them pcapng
	if len(files) < 20 {
		t.Fatalf("%d bundled captures", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		check(f, b, len(b) >= 4 && (orderOf(b) == binary.BigEndian || binary.LittleEndian.Uint32(b) == 0xa1b2c3d4 ||
			binary.LittleEndian.Uint32(b) == 0xa1b23c4d || binary.LittleEndian.Uint32(b) == 0xa1b2cd34 ||
			binary.BigEndian.Uint32(b) == 0x0a0d0d0a))
	}
	big := bigCaptures(t, false)
	for _, name := range []string{"pcap-le-micro", "pcap-be-nano"} {
		b := big[name]
		check(name, b, true)
		// Cut at the first record's header and inside every 37th record.
		cuts := []int{24, 25, 24 + 15, 24 + 16}
		off := 24
		for i := 0; off+16 <= len(b); i++ {
			caplen := int(orderOf(b).Uint32(b[off+8 : off+12]))
			if i%37 == 0 {
				cuts = append(cuts, off+16+caplen/2, off+16+caplen, off+7)
			}
			off += 16 + caplen
		}
		for _, c := range cuts {
			check(name+" cut at "+strconv.Itoa(c), b[:c], true)
		}
		// A record longer than MaxRecordLength, after a good one.
		long := bytes.Clone(b[:24+16+int(orderOf(b).Uint32(b[24+8:24+12]))+16])
		orderOf(b).PutUint32(long[len(long)-8:], capture.MaxRecordLength+1)
		check(name+" too long", long, true)
		check(name+" gzip", gzipOf(t, b, 1), false)
	}
	ng := big["pcapng"]
	check("pcapng", ng, true)
	for _, c := range []int{4, 27, 28, 100, len(ng) / 2, len(ng) - 1} {
		check("pcapng cut at "+strconv.Itoa(c), ng[:c], true)
	}
	check("pcapng gzip", gzipOf(t, ng, 1), false)
	for n := range 24 {
		check("header of "+strconv.Itoa(n), big["pcap-le-micro"][:n], n >= 4)
	}
	check("empty", nil, false)
}

// orderOf is the byte order of the pcap file b.
func orderOf(b []byte) binary.ByteOrder {
	if binary.BigEndian.Uint32(b) == 0xa1b2c3d4 || binary.BigEndian.Uint32(b) == 0xa1b23c4d {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// TestMappedMemory: the pages of a mapped file behind the reader are given
// back: reading a 64 MiB file, pcap or pcapng, leaves the resident memory
// within a few MiB of where it started.
func TestMappedMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("VmRSS is read from /proc (Linux)")
	}
	frame := make([]byte, 65536)
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	f := newPcapFile(binary.LittleEndian, true, 262144, layers.LinkTypeEthernet)
	ng := newNgFile(binary.LittleEndian)
	ng.idb(layers.LinkTypeEthernet, 0, 9)
	for range 1 << 10 {
		f.add(t0, frame)
		ng.epb(0, t0, 9, uint32(len(frame)), uint32(len(frame)), frame)
	}
	for name, data := range map[string][]byte{"big.pcap": f.bytes(), "big.pcapng": ng.bytes()} {
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := capture.OpenMapped(path)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Mapped() {
			t.Fatalf("%s: not mapped", name)
		}
		runtime.GC()
		before := vmRSS(t)
		var p capture.Packet
		most, n := 0, 0
		for i := 0; ; i++ {
			if err := s.NextInto(&p); err != nil {
				break
			}
			n++
			_ = p.Data[len(p.Data)-1] // touch the record's last page
			if i%64 == 0 {
				most = max(most, vmRSS(t)-before)
			}
		}
		s.Close()
		if n != 1<<10 {
			t.Fatalf("%s: %d packets", name, n)
		}
		if most > 16<<20 {
			t.Errorf("%s: resident memory grew by %d MiB reading a 64 MiB file", name, most>>20)
		}
	}
}

func vmRSS(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestMappedTruncated: a mapped file truncated while it is read faults
// when the lost octets are touched; under debug.SetPanicOnFault the fault
// is a panic that can be recovered (OpenMapped's contract, and what
// iwarpdump does).
func TestMappedTruncated(t *testing.T) {
	big := bigCaptures(t, false)
	for _, name := range []string{"pcap-le-micro", "pcapng"} {
		t.Run(name, func(t *testing.T) { mappedTruncated(t, big[name]) })
	}
}

func mappedTruncated(t *testing.T, b []byte) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := capture.OpenMapped(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var p capture.Packet
	for range 20 {
		if err := s.NextInto(&p); err != nil {
			t.Fatal(err)
		}
	}
	if !s.Mapped() {
		t.Fatal("not mapped")
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	fault := func() (fault error) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				fault, _ = r.(error)
			}
		}()
		for {
			if err := s.NextInto(&p); err != nil {
				return nil
			}
		}
	}()
	var re interface {
		runtime.Error
		Addr() uintptr
	}
	if !errors.As(fault, &re) {
		t.Fatalf("reading on after the truncation: %v", fault)
	}
}

// FuzzMapped: any file reads the same mapped (OpenMapped) as through
// NewSource: the same packets, the same end.
func FuzzMapped(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "f")
		ref, rerr := capture.NewSource(bytes.NewReader(data), path)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := capture.OpenMapped(path)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("OpenMapped: %v; NewSource: %v", err, rerr)
		}
		if err != nil {
			return
		}
		got, gend := framesOf(t, s)
		want, wend := framesOf(t, ref)
		if gend != wend || !slices.Equal(got, want) {
			t.Fatalf("mapped %d packets, %s; read %d, %s", len(got), gend, len(want), wend)
		}
	})
}

// TestReadAt: a packet's PayloadPos is where its payload is in the file,
// and ReadAt reads it there, from a read or a mapped file (from the
// mapping, or with pread(2) once the pages were released), before or
// after the rest of the file was read; a gzip file has no PayloadPos and
// no ReadAt.
func TestReadAt(t *testing.T) {
	f := newPcapFile(binary.LittleEndian, false, 262144, layers.LinkTypeEthernet)
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for i := range 5000 {
		payload := make([]byte, 1000+i%400)
		for j := range payload {
			payload[j] = byte(i*3 + j)
		}
		f.add(t0, ether(t, ipv4TCP(t, payload)))
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f.pcap")
	if err := os.WriteFile(path, f.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(dir, "f.pcap.gz")
	if err := os.WriteFile(gz, gzipOf(t, f.bytes(), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same packets as pcapng, with an option on every 7th block (its
	// octets after the packet's) and a statistics block every 100.
	ng := newNgFile(binary.LittleEndian)
	ng.idb(layers.LinkTypeEthernet, 0, 9)
	{
		s, err := capture.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var p capture.Packet
		for i := 0; s.NextInto(&p) == nil; i++ {
			if i%7 == 3 {
				ng.epbOptions(0, t0, p.Data)
			} else {
				ng.epb(0, t0, 9, uint32(len(p.Data)), uint32(len(p.Data)), p.Data)
			}
			if i%100 == 99 {
				ng.isb(0)
			}
		}
		s.Close()
	}
	ngPath := filepath.Join(dir, "f.pcapng")
	if err := os.WriteFile(ngPath, ng.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	type kept struct {
		pos     int64
		payload []byte
	}
	for _, tc := range []struct {
		name   string
		path   string
		open   func(string) (*capture.Source, error)
		placed bool
	}{
		{"read", path, capture.Open, true},
		{"mapped", path, capture.OpenMapped, true},
		{"pcapng read", ngPath, capture.Open, true},
		{"pcapng mapped", ngPath, capture.OpenMapped, true},
		{"gzip", gz, capture.Open, false},
	} {
		s, err := tc.open(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var keep []kept
		var p capture.Packet
		for s.NextInto(&p) == nil {
			if (p.PayloadPos > 0) != tc.placed || len(p.Payload) == 0 {
				t.Fatalf("%s frame %d: PayloadPos %d, %d octets of payload", tc.name, p.Frame, p.PayloadPos, len(p.Payload))
			}
			if !tc.placed {
				continue
			}
			k := kept{p.PayloadPos, bytes.Clone(p.Payload)}
			b := make([]byte, len(k.payload))
			if n, err := s.ReadAt(b, k.pos); n != len(b) || !bytes.Equal(b, k.payload) {
				t.Fatalf("%s frame %d: ReadAt(%d): %d, %v, not the payload", tc.name, p.Frame, k.pos, n, err)
			}
			keep = append(keep, k)
		}
		if !tc.placed {
			if _, err := s.ReadAt(make([]byte, 1), 100); !errors.Is(err, capture.ErrNotSeekable) {
				t.Fatalf("gzip ReadAt: %v", err)
			}
		}
		// Read again once the file has been read to its end (and the
		// mapping's pages released): the first packets come from pread.
		for i := 0; i < len(keep); i += 97 {
			b := make([]byte, len(keep[i].payload))
			if n, err := s.ReadAt(b, keep[i].pos); n != len(b) || !bytes.Equal(b, keep[i].payload) {
				t.Fatalf("%s: ReadAt(%d) after the end: %d, %v, not the payload", tc.name, keep[i].pos, n, err)
			}
		}
		s.Close()
	}
}

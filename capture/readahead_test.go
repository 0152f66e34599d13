package capture_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/iwarpkit/iwarpkit/capture"
)

// framesOf reads every packet of s (which it closes) as a line per packet
// (every capture field and what was decoded), and the end.
func framesOf(t testing.TB, s *capture.Source) ([]string, string) {
	t.Helper()
	defer s.Close()
	var out []string
	var p capture.Packet
	for {
		err := s.NextInto(&p)
		if err == io.EOF {
			return out, "EOF"
		}
		if err != nil {
			return out, err.Error()
		}
		e := ""
		if p.Err != nil {
			e = p.Err.Error()
		}
		out = append(out, fmt.Sprint(p.Frame, p.Kind, p.Interface, p.CapLen, p.WireLen, p.PayloadWireLen,
			p.TS, p.Src, p.Dst, e)+string(p.Data)+"|"+string(p.Payload))
	}
}

// bigCaptures returns a pcap file of each byte order and resolution and a
// pcapng file (only the first pcap with one), each of about 2 MiB: four
// blocks of the read-ahead, which has three. Their
// frames are Ethernet/IPv4/TCP frames with random payloads and random
// octets, of random lengths up to MaxRecordLength, so records straddle
// blocks everywhere; some have a captured length above their original
// length (stepped over with a Discard across blocks).
func bigCaptures(t testing.TB, one bool) map[string][]byte {
	rng := rand.New(rand.NewPCG(3, 11))
	octets := rand.NewChaCha8([32]byte{3, 11})
	frame := func() []byte {
		n := 60 + rng.IntN(1500)
		switch rng.IntN(40) {
		case 0:
			n = capture.MaxRecordLength - rng.IntN(3)
		case 1:
			n = 20_000 + rng.IntN(100_000)
		}
		b := make([]byte, n)
		_, _ = octets.Read(b)
		if rng.IntN(3) > 0 {
			tcp := ipv4TCP(t, b[:min(n, 1400)])
			b = ether(t, tcp)
		}
		return b
	}
	const total = 2 << 20
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	out := map[string][]byte{}
	for _, v := range []struct {
		name  string
		order binary.ByteOrder
		nanos bool
	}{{"pcap-le-micro", binary.LittleEndian, false}, {"pcap-be-nano", binary.BigEndian, true}} {
		f := newPcapFile(v.order, v.nanos, 262144, layers.LinkTypeEthernet)
		for i := 0; len(f.bytes()) < total; i++ {
			b := frame()
			ts := t0.Add(time.Duration(i) * 1357 * time.Microsecond)
			if rng.IntN(200) == 0 {
				f.record(ts, uint32(len(b)), uint32(len(b)-1), b) // caplen > wirelen
				continue
			}
			f.add(ts, b)
		}
		out[v.name] = bytes.Clone(f.bytes())
		if one {
			return out
		}
	}
	ng := newNgFile(binary.LittleEndian)
	ng.idb(layers.LinkTypeEthernet, 0, 9)
	ng.idb(layers.LinkTypeEthernet, 0, 0)
	for i := 0; ng.buf.Len() < total; i++ {
		b := frame()
		ng.epb(uint32(i%2), t0.Add(time.Duration(i)*time.Millisecond), 9-3*(i%2), uint32(len(b)), uint32(len(b)), b)
	}
	out["pcapng"] = bytes.Clone(ng.bytes())
	return out
}

func gzipOf(t testing.TB, b []byte, members int) []byte {
	var z bytes.Buffer
	for m := range members {
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
		part := b[m*len(b)/members : (m+1)*len(b)/members]
		if _, err := zw.Write(part); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return z.Bytes()
}

// TestOpenReadAhead: a gzip file read ahead gives the packets and the end
// that the file gives read without it, and the uncompressed octets give:
// pcap of both byte orders and resolutions and pcapng, one gzip member or
// several, whole, cut short and with a bad checksum.
func TestOpenReadAhead(t *testing.T) {
	dir := t.TempDir()
	must := mustOpen(t)
	for name, plain := range bigCaptures(t, false) {
		want, wend := framesOf(t, must(capture.NewSource(bytes.NewReader(plain), "plain")))
		if wend != "EOF" || len(want) < 300 {
			t.Fatalf("%s: %d packets, %s", name, len(want), wend)
		}
		for _, members := range []int{1, 3} {
			z := gzipOf(t, plain, members)
			bad := bytes.Clone(z)
			bad[len(bad)-5] ^= 1 // the last member's CRC-32
			for _, v := range []struct {
				what string
				file []byte
			}{
				{"whole", z},
				{"cut in the middle", z[:len(z)/2]},
				{"cut in the trailer", z[:len(z)-3]},
				{"bad checksum", bad},
			} {
				path := filepath.Join(dir, name+".gz")
				if err := os.WriteFile(path, v.file, 0o644); err != nil {
					t.Fatal(err)
				}
				ahead := must(capture.OpenReadAhead(path))
				if !capture.ReadsAhead(ahead) {
					t.Fatalf("%s: OpenReadAhead does not read ahead", path)
				}
				got, gend := framesOf(t, ahead)
				ref, rend := framesOf(t, must(capture.Open(path)))
				if gend != rend || !slices.Equal(got, ref) {
					t.Fatalf("%s, %d members, %s: read ahead %d packets, %s; without %d, %s", name, members, v.what, len(got), gend, len(ref), rend)
				}
				switch {
				case v.what == "whole" && (gend != "EOF" || !slices.Equal(got, want)):
					t.Fatalf("%s, %d members: %d packets, %s; uncompressed %d", name, members, len(got), gend, len(want))
				case v.what != "whole" && (gend == "EOF" || len(got) > len(want) || !slices.Equal(got, want[:len(got)])):
					t.Fatalf("%s, %d members, %s: %d packets, %s", name, members, v.what, len(got), gend)
				}
			}
		}
		// Uncompressed, the file is read as Open reads it.
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, plain, 0o644); err != nil {
			t.Fatal(err)
		}
		s := must(capture.OpenReadAhead(path))
		if capture.ReadsAhead(s) {
			t.Errorf("%s: an uncompressed file is read ahead", name)
		}
		if got, end := framesOf(t, s); end != "EOF" || !slices.Equal(got, want) {
			t.Errorf("%s uncompressed: %d packets, %s", name, len(got), end)
		}
	}
}

// TestReadAheadClose: closing a Source in the middle of the file, or
// before its first packet, stops its goroutine.
func TestReadAheadClose(t *testing.T) {
	plain := bigCaptures(t, true)["pcap-le-micro"]
	path := filepath.Join(t.TempDir(), "f.pcap.gz")
	if err := os.WriteFile(path, gzipOf(t, plain, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	must := mustOpen(t)
	before := runtime.NumGoroutine()
	for _, n := range []int{0, 1, 300} {
		s := must(capture.OpenReadAhead(path))
		var p capture.Packet
		for range n {
			if err := s.NextInto(&p); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.NextInto(&p); err != capture.ErrClosed {
			t.Fatalf("after Close: %v", err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines before, %d after closing", before, runtime.NumGoroutine())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// mustOpen returns a function that returns its Source, or fails t.
func mustOpen(t testing.TB) func(*capture.Source, error) *capture.Source {
	return func(s *capture.Source, err error) *capture.Source {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// FuzzReadAhead: any capture, gzipped, reads the same ahead
// (OpenReadAhead) as uncompressed through NewSource: the same packets and
// the same end (the end's offsets count uncompressed octets in both).
func FuzzReadAhead(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
			return // already gzip: NewSource would undo it, OpenReadAhead twice
		}
		path := filepath.Join(dir, "f.gz")
		if err := os.WriteFile(path, gzipOf(t, data, 1), 0o644); err != nil {
			t.Fatal(err)
		}
		ref, rerr := capture.NewSource(bytes.NewReader(data), path)
		s, err := capture.OpenReadAhead(path)
		if (err == nil) != (rerr == nil) || (err != nil && err.Error() != rerr.Error()) {
			t.Fatalf("OpenReadAhead: %v; NewSource: %v", err, rerr)
		}
		if err != nil {
			return
		}
		if len(data) >= 4 && !capture.ReadsAhead(s) {
			t.Fatal("a gzip file is not read ahead")
		}
		got, gend := framesOf(t, s)
		want, wend := framesOf(t, ref)
		if gend != wend || !slices.Equal(got, want) {
			t.Fatalf("read ahead %d packets, %s; uncompressed %d, %s", len(got), gend, len(want), wend)
		}
	})
}

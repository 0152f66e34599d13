//go:build unix

package capture_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/capture"
)

// BenchmarkReadFile reads a 64 MiB file of 1514-octet TCP frames, pcap
// and pcapng, from the page cache: read(2) into a buffer (Open) or
// mapped (OpenMapped), every packet's headers decoded, once per
// iteration, opening included. The throughput counts the file's octets,
// though only the headers are touched here: what is measured is the
// copy that reading makes and mapping does not.
func BenchmarkReadFile(b *testing.B) {
	frame := ether(b, ipv4TCP(b, bytes.Repeat([]byte{0xa5}, 1460)))
	f := newPcapFile(binary.LittleEndian, false, 262144, layers.LinkTypeEthernet)
	ng := newNgFile(binary.LittleEndian)
	ng.idb(layers.LinkTypeEthernet, 0, 6)
	for range (64 << 20) / (len(frame) + 16) {
		f.add(t0, frame)
		ng.epb(0, t0, 6, uint32(len(frame)), uint32(len(frame)), frame)
	}
	dir := b.TempDir()
	for _, file := range []struct {
		name string
		data []byte
	}{{"pcap", f.bytes()}, {"pcapng", ng.bytes()}} {
		path := filepath.Join(dir, file.name)
		if err := os.WriteFile(path, file.data, 0o644); err != nil {
			b.Fatal(err)
		}
		for _, open := range []struct {
			name string
			f    func(string) (*capture.Source, error)
		}{{"read", capture.Open}, {"mapped", capture.OpenMapped}} {
			b.Run(file.name+"/"+open.name, func(b *testing.B) {
				b.SetBytes(int64(len(file.data)))
				b.ReportAllocs()
				var p capture.Packet
				for b.Loop() {
					s, err := open.f(path)
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					for s.NextInto(&p) == nil {
						n += len(p.Payload)
					}
					s.Close()
					if n == 0 {
						b.Fatal("no packets")
					}
				}
			})
		}
	}
}

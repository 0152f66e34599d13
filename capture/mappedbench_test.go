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
	files, _ := benchFiles(b, [][]byte{frame})
	for _, file := range files {
		for _, open := range []struct {
			name string
			f    func(string) (*capture.Source, error)
		}{{"read", capture.Open}, {"mapped", capture.OpenMapped}} {
			b.Run(file.name+"/"+open.name, func(b *testing.B) {
				b.SetBytes(file.size)
				b.ReportAllocs()
				var p capture.Packet
				for b.Loop() {
					s, err := open.f(file.path)
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

// portOwner deals packets to two workers by the parity of the sum of
// their ports, as cheaply as an Owner can (the benchmark measures the
// reader, not the dealing).
type portOwner struct{}

func (portOwner) Owner(p *capture.Packet) uint8 {
	return uint8((p.Src.Port() + p.Dst.Port()) & 1)
}

func (portOwner) OwnerTCP4(_, _ [4]byte, sport, dport uint16, _ int) uint8 {
	return uint8((sport + dport) & 1)
}

// BenchmarkChunkOwners is what the reading goroutine of iwarpdump -j N
// does per chunk (flows.Parallel): ChunkReader.NextOwners, the chunk read
// from the file (read(2), from the page cache) and each record's worker
// worked out, over a 64 MiB file of TCP frames of 8 connections, three
// full-sized frames for each of 60 and 200 octets (the issue 6 workload's
// mix is of the same kind), pcap and pcapng, opening included. The
// throughput counts the file's octets; ns/packet is the reader's cost per
// record.
func BenchmarkChunkOwners(b *testing.B) {
	var frames [][]byte
	for i, n := range []int{1460, 1460, 1460, 60, 1460, 200} {
		fr := ether(b, ipv4TCP(b, bytes.Repeat([]byte{0xa5}, n)))
		binary.BigEndian.PutUint16(fr[14+20:], uint16(40000+i)) // the connection
		frames = append(frames, fr)
	}
	files, packets := benchFiles(b, frames)
	for _, file := range files {
		b.Run(file.name, func(b *testing.B) {
			buf := make([]byte, capture.ChunkSize)
			var own []uint8
			var offs []int32
			b.SetBytes(file.size)
			b.ReportAllocs()
			for b.Loop() {
				cr, err := capture.OpenChunks(file.path, 0)
				if err != nil {
					b.Fatal(err)
				}
				w := cr.Walker()
				n, ones := 0, 0
				for {
					var ch capture.Chunk
					ch, own, offs, err = cr.NextOwners(buf[:0], w, own[:0], offs[:0], portOwner{})
					if err != nil {
						break
					}
					n += ch.N
					for _, o := range own {
						ones += int(o)
					}
				}
				cr.Close()
				if n != packets || ones == 0 || ones == n {
					b.Fatalf("%d packets (%d on worker 1), want %d on both workers", n, ones, packets)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*packets), "ns/packet")
		})
	}
}

// benchFile is a capture file a benchmark reads.
type benchFile struct {
	name, path string
	size       int64
}

// benchFiles writes frames, over and over, into a pcap and a pcapng file of
// some 64 MiB in b's temporary directory, and returns them and the number
// of packets each holds.
func benchFiles(b *testing.B, frames [][]byte) ([]benchFile, int) {
	f := newPcapFile(binary.LittleEndian, false, 262144, layers.LinkTypeEthernet)
	ng := newNgFile(binary.LittleEndian)
	ng.idb(layers.LinkTypeEthernet, 0, 6)
	packets := 0
	for size := 0; size < 64<<20; packets++ {
		fr := frames[packets%len(frames)]
		f.add(t0, fr)
		ng.epb(0, t0, 6, uint32(len(fr)), uint32(len(fr)), fr)
		size += len(fr) + 16
	}
	dir := b.TempDir()
	var files []benchFile
	for _, file := range []struct {
		name string
		data []byte
	}{{"pcap", f.bytes()}, {"pcapng", ng.bytes()}} {
		path := filepath.Join(dir, file.name)
		if err := os.WriteFile(path, file.data, 0o644); err != nil {
			b.Fatal(err)
		}
		files = append(files, benchFile{file.name, path, int64(len(file.data))})
	}
	return files, packets
}

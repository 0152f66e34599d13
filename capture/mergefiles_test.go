//go:build unix

package capture_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/capture"
)

// mergedPacket is what TestMergeManyFiles compares of each packet.
type mergedPacket struct {
	frame, inFrame uint64
	input          int
	ts             time.Time
	link           layers.LinkType
	data           string
}

// drainMerge reads m to its end, noting the most inputs open at once.
func drainMerge(t *testing.T, m *capture.Merge) (out []mergedPacket, end string, most int) {
	t.Helper()
	var p capture.Packet
	for {
		most = max(most, capture.OpenInputs(m))
		if err := m.NextInto(&p); err != nil {
			return out, err.Error(), most
		}
		out = append(out, mergedPacket{p.Frame, m.InputFrame(), m.Input(), p.TS, m.LinkType(p.Interface), string(p.Data)})
	}
}

// TestMergeManyFiles: a merge of many files keeps only the inputs it reads
// open, and gives what a merge of them all open gives (the same packets
// from the same inputs, in the same order, with the same end): the
// rotated files of one capture (read one at a time), captures of several
// hosts whose packets interleave (all open, as they must be), pcapng,
// gzip, empty and damaged files among them, each read and mapped.
func TestMergeManyFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 11))
	dir := t.TempDir()
	frame := func(i int) []byte {
		return ether(t, ipv4TCP(t, bytes.Repeat([]byte{byte(i)}, 1+rng.IntN(1400))))
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Rotated: 300 files of consecutive times, some pcapng, some gzip,
	// an empty one, and one cut inside its last record.
	var rotated []string
	at := time.Duration(0)
	for f := range 300 {
		n := 1 + rng.IntN(20)
		if f == 17 {
			n = 0
		}
		var b []byte
		if f%3 == 1 {
			ng := newNgFile(binary.LittleEndian)
			ng.idb(layers.LinkTypeEthernet, 0, 9)
			for i := range n {
				at += time.Duration(rng.IntN(3)) * time.Millisecond // equal times too
				fr := frame(f + i)
				ng.epb(0, t0.Add(at), 9, uint32(len(fr)), uint32(len(fr)), fr)
			}
			b = ng.bytes()
		} else {
			pf := newPcapFile(binary.LittleEndian, true, 262144, layers.LinkTypeEthernet)
			for i := range n {
				at += time.Duration(rng.IntN(3)) * time.Millisecond
				pf.add(t0.Add(at), frame(f+i))
			}
			b = pf.bytes()
		}
		if f == 200 {
			b = b[:len(b)-3]
		}
		if f%7 == 5 {
			b = gzipOf(t, b, 1)
		}
		rotated = append(rotated, write(fmt.Sprintf("r%03d", f), b))
	}
	// Hosts: 4 files whose packets interleave in time.
	var hosts []string
	for h := range 4 {
		pf := newPcapFile(binary.BigEndian, false, 262144, layers.LinkTypeEthernet)
		for i := range 200 {
			pf.add(t0.Add(time.Duration(i*4+h)*time.Millisecond+time.Duration(rng.IntN(5))*time.Millisecond), frame(h*7+i))
		}
		hosts = append(hosts, write(fmt.Sprintf("h%d", h), pf.bytes()))
	}
	for _, tc := range []struct {
		name  string
		paths []string
		most  int // inputs open at once, at most
	}{
		{"rotated", rotated, 2},
		{"hosts", hosts, 4},
		{"both", append(append([]string(nil), hosts...), rotated...), 6},
	} {
		// The reference: every input open from the start (NewMerge).
		srcs := make([]*capture.Source, len(tc.paths))
		for i, p := range tc.paths {
			s, err := capture.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			srcs[i] = s
		}
		ref := capture.NewMerge(srcs...)
		want, wantEnd, _ := drainMerge(t, ref)
		ref.Close()
		if len(want) < 500 {
			t.Fatalf("%s: %d packets", tc.name, len(want))
		}
		for _, open := range []struct {
			name string
			f    func(...string) (*capture.Merge, error)
		}{{"read", capture.OpenMerge}, {"mapped", capture.OpenMergeMapped}} {
			m, err := open.f(tc.paths...)
			if err != nil {
				t.Fatal(err)
			}
			got, end, most := drainMerge(t, m)
			m.Close()
			if end != wantEnd || len(got) != len(want) {
				t.Fatalf("%s %s: %d packets, %s; want %d, %s", tc.name, open.name, len(got), end, len(want), wantEnd)
			}
			for i := range got {
				if got[i].frame != want[i].frame || got[i].inFrame != want[i].inFrame || got[i].input != want[i].input ||
					!got[i].ts.Equal(want[i].ts) || got[i].link != want[i].link || got[i].data != want[i].data {
					t.Fatalf("%s %s: packet %d: %+v, want %+v", tc.name, open.name, i, got[i], want[i])
				}
			}
			if most > tc.most {
				t.Errorf("%s %s: %d inputs open at once, want at most %d", tc.name, open.name, most, tc.most)
			}
		}
		// In chunks (NewMergeChunks, for -j N): the same packets, and
		// the same end.
		m, err := capture.OpenMerge(tc.paths...)
		if err != nil {
			t.Fatal(err)
		}
		cr := capture.NewMergeChunks(m, 0)
		w := cr.Walker()
		buf := make([]byte, 0, capture.ChunkSize)
		k := 0
		for {
			ch, err := cr.Next(buf)
			if err != nil {
				if err.Error() != wantEnd || k != len(want) {
					t.Fatalf("%s in chunks: %d packets, %v; want %d, %s", tc.name, k, err, len(want), wantEnd)
				}
				break
			}
			w.Walk(ch, func(p *capture.Packet) {
				if k >= len(want) || p.Frame != want[k].frame || !p.TS.Equal(want[k].ts) || string(p.Data) != want[k].data {
					t.Fatalf("%s in chunks: packet %d (frame %d) differs", tc.name, k, p.Frame)
				}
				k++
			})
		}
		cr.Close()
	}
}

// TestMergePipe: an input that cannot be opened again (a pipe) is not
// parked: merged with a file, all its packets come.
func TestMergePipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ms := time.Millisecond
	pipeData := pcapOf(t, stamped{2 * ms, 'x'}, stamped{5 * ms, 'y'})
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		_, _ = f.Write(pipeData)
		f.Close()
	}()
	file := filepath.Join(dir, "file.pcap")
	if err := os.WriteFile(file, pcapOf(t, stamped{1 * ms, 'a'}, stamped{3 * ms, 'b'}), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := capture.OpenMerge(file, fifo)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	out, err := drain(t, m)
	tags := tagsOf(out)
	if err != io.EOF || tags != "axby" {
		t.Errorf("got %q, %v; want axby", tags, err)
	}
}

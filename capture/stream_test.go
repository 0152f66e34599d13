package capture_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/capture"
)

// streamDeadline is how long a test waits for a packet whose record has
// been written before it fails, rather than hang.
const streamDeadline = 5 * time.Second

// streamCase is a capture written to a stream in two parts, 2-3 s apart as
// tcpdump -U -w - writes them: the first part holds the header and want
// whole records, then the start of the next one (it straddles the cut).
type streamCase struct {
	name         string
	frames       [][]byte
	part1, part2 []byte
	want         int
}

// streamFrames returns frames of several lengths, a jumbo one among them,
// each with its index in its payload.
func streamFrames(t testing.TB) [][]byte {
	var frames [][]byte
	for i, n := range []int{3, 1400, 60, 9000, 200, 1} {
		frames = append(frames, ether(t, ipv4TCP(t, bytes.Repeat([]byte{byte('a' + i)}, n))))
	}
	return frames
}

// streamCases cuts pcap and pcapng files, plain and gzip-compressed, inside
// the header or the data of record want+1.
func streamCases(t testing.TB) []streamCase {
	frames := streamFrames(t)
	const want = 3
	var cases []streamCase
	add := func(name string, file []byte, cut int) {
		cases = append(cases, streamCase{name, frames, file[:cut], file[cut:], want})
		// gzip: the compressor flushes what it has at the cut (gzip
		// -c would not; a program that streams a capture does).
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		_, _ = zw.Write(file[:cut])
		_ = zw.Flush()
		n := z.Len()
		_, _ = zw.Write(file[cut:])
		_ = zw.Close()
		zb := z.Bytes()
		cases = append(cases, streamCase{name + ".gz", frames, zb[:n], zb[n:], want})
	}

	pcap := writePcap(t, false, layers.LinkTypeEthernet, frames...)
	rec := 24 // offset of record want+1
	for _, f := range frames[:want] {
		rec += 16 + len(f)
	}
	add("pcap/cut-in-header", pcap, rec+10)
	add("pcap/cut-in-data", pcap, rec+16+20)

	ng := newNgFile(binary.BigEndian)
	ng.idb(layers.LinkTypeEthernet, 262144, 9)
	for i, f := range frames {
		off := ng.epb(0, t0.Add(time.Duration(i)*time.Millisecond), 9, uint32(len(f)), uint32(len(f)), f)
		if i == want {
			rec = off
		}
	}
	add("pcapng/cut-in-header", ng.bytes(), rec+6)
	add("pcapng/cut-in-data", ng.bytes(), rec+28+20)
	return cases
}

// packetReader is a Source or a Merge.
type packetReader interface {
	Next() (capture.Packet, error)
	Close() error
}

type streamResult struct {
	frame uint64
	data  []byte
	err   error
}

// checkPaused writes c.part1 to w, checks that the packets of its whole
// records come out of the reader open returns (open runs in another
// goroutine: it reads the file header, which may not have come yet), and
// no error either; then it writes c.part2, closes w and checks the rest
// and io.EOF.
func checkPaused(t *testing.T, c streamCase, w io.WriteCloser, open func() (packetReader, error)) {
	t.Helper()
	results := make(chan streamResult, len(c.frames)+1)
	go func() {
		defer close(results)
		s, err := open()
		if err != nil {
			results <- streamResult{err: err}
			return
		}
		defer s.Close()
		for {
			p, err := s.Next()
			if err != nil {
				results <- streamResult{err: err}
				return
			}
			results <- streamResult{frame: p.Frame, data: bytes.Clone(p.Data)}
		}
	}()
	write := func(b []byte, end bool) {
		// Not in this goroutine: an io.Pipe's Write waits for the
		// reader, which would hang the test of a reader that does not
		// read.
		go func() {
			if _, err := w.Write(b); err == nil && end {
				_ = w.Close()
			}
		}()
	}
	next := func(i int, when string) {
		t.Helper()
		select {
		case r, ok := <-results:
			switch {
			case !ok:
				t.Fatalf("packet %d %s: the reader has stopped", i+1, when)
			case r.err != nil:
				t.Fatalf("packet %d %s: %v", i+1, when, r.err)
			case r.frame != uint64(i+1) || !bytes.Equal(r.data, c.frames[i]):
				t.Fatalf("packet %d %s: got frame %d, %d octets, want %d octets", i+1, when, r.frame, len(r.data), len(c.frames[i]))
			}
		case <-time.After(streamDeadline):
			t.Fatalf("packet %d %s: not returned after %v: the reader waits for octets that have not been written", i+1, when, streamDeadline)
		}
	}

	write(c.part1, false)
	for i := range c.want {
		next(i, "of the first part")
	}
	// The next record is not whole yet: the reader waits for it, and
	// does not take the pause for the end of the file.
	select {
	case r := <-results:
		t.Fatalf("before the second part: got frame %d, %v", r.frame, r.err)
	case <-time.After(50 * time.Millisecond):
	}
	write(c.part2, true)
	for i := c.want; i < len(c.frames); i++ {
		next(i, "of the second part")
	}
	select {
	case r := <-results:
		if r.err != io.EOF {
			t.Fatalf("after the last packet: got frame %d, %v, want io.EOF", r.frame, r.err)
		}
	case <-time.After(streamDeadline):
		t.Fatalf("io.EOF not returned after %v", streamDeadline)
	}
}

// TestStream: a capture read from a stream (NewSource over a pipe, Open
// and OpenMerge of "-" as iwarpdump -r - opens it, OpenReadAhead and
// OpenMapped of a pipe's path) gives each packet as soon as its record has
// come, not when a buffer is full or the stream ends: tcpdump -U -w - |
// iwarpdump -l -r - shows the packets as they are captured. A record cut
// by the pause is read whole when the rest of it comes.
func TestStream(t *testing.T) {
	for _, c := range streamCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Run("NewSource", func(t *testing.T) {
				pr, pw := io.Pipe()
				t.Cleanup(func() { _ = pr.Close() })
				checkPaused(t, c, pw, func() (packetReader, error) {
					return capture.NewSource(pr, "pipe")
				})
			})
			for _, how := range []struct {
				name string
				open func(string) (packetReader, error)
			}{
				{"Open", func(p string) (packetReader, error) { return capture.Open(p) }},
				{"OpenReadAhead", func(p string) (packetReader, error) { return capture.OpenReadAhead(p) }},
				{"OpenMapped", func(p string) (packetReader, error) { return capture.OpenMapped(p) }},
				{"OpenMerge", func(p string) (packetReader, error) { return capture.OpenMerge(p) }},
			} {
				t.Run(how.name+"/stdin", func(t *testing.T) {
					r, w := osPipe(t)
					saved := os.Stdin
					os.Stdin = r
					t.Cleanup(func() { os.Stdin = saved })
					checkPaused(t, c, w, func() (packetReader, error) { return how.open("-") })
				})
				t.Run(how.name+"/path", func(t *testing.T) {
					r, w := osPipe(t)
					path := pipePath(t, r)
					checkPaused(t, c, w, func() (packetReader, error) { return how.open(path) })
				})
			}
		})
	}
}

// osPipe returns a pipe that is closed when the test ends.
func osPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = w.Close()
		_ = r.Close()
	})
	return r, w
}

// pipePath returns a path that opens the pipe r reads, as a shell's
// process substitution <(tcpdump -w -) names one; the test is skipped
// where there is none.
func pipePath(t *testing.T, r *os.File) string {
	t.Helper()
	path := fmt.Sprintf("/dev/fd/%d", r.Fd())
	if fi, err := os.Stat(path); err != nil || fi.Mode().IsRegular() {
		t.Skipf("no /dev/fd path for a pipe here (%v)", err)
	}
	return path
}

// TestOpenChunksPipe: OpenChunks reads nothing from a pipe's path (it is
// read with a Source: iwarpdump -j N -r /dev/stdin tried the chunks first,
// and the Source it then read lost the octets OpenChunks had read).
func TestOpenChunksPipe(t *testing.T) {
	frames := streamFrames(t)
	for name, file := range map[string][]byte{
		"pcap":   writePcap(t, false, layers.LinkTypeEthernet, frames...),
		"pcapng": streamNg(frames),
	} {
		t.Run(name, func(t *testing.T) {
			r, w := osPipe(t)
			path := pipePath(t, r)
			go func() { _, _ = w.Write(file); _ = w.Close() }()
			if cr, err := capture.OpenChunks(path, 0); !errors.Is(err, capture.ErrNotChunked) {
				if cr != nil {
					_ = cr.Close()
				}
				t.Fatalf("OpenChunks(%s): %v, want ErrNotChunked", path, err)
			}
			s, err := capture.NewSource(r, "pipe")
			if err != nil {
				t.Fatalf("the Source after OpenChunks: %v", err)
			}
			n := 0
			for {
				p, err := s.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("the Source after OpenChunks, packet %d: %v", n+1, err)
				}
				if !bytes.Equal(p.Data, frames[n]) {
					t.Fatalf("packet %d: %d octets, want %d", n+1, len(p.Data), len(frames[n]))
				}
				n++
			}
			if n != len(frames) {
				t.Errorf("the Source after OpenChunks read %d packets, want %d", n, len(frames))
			}
		})
	}
}

// streamNg returns frames as a pcapng file.
func streamNg(frames [][]byte) []byte {
	ng := newNgFile(binary.LittleEndian)
	ng.idb(layers.LinkTypeEthernet, 262144, 0)
	for i, f := range frames {
		ng.epb(0, t0.Add(time.Duration(i)*time.Millisecond), 6, uint32(len(f)), uint32(len(f)), f)
	}
	return ng.bytes()
}

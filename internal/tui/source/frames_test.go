package source

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/internal/tui/model"
)

// reference reads every frame of path sequentially with capture.Open.
func reference(t *testing.T, path string) []model.RawFrame {
	t.Helper()
	src, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out []model.RawFrame
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rawOf(&p))
	}
}

func testFiles(t *testing.T) []string {
	files, _ := filepath.Glob("../../../testdata/siw/*.pcap")
	files = append(files, "../testdata/crc_v2_rping.pcapng", "../testdata/two_sections.pcapng",
		"../testdata/crc_v2_rping.pcap.gz", "../testdata/link-sll.pcap", "../../../testdata/modified/crc_v2_rping_modpcap.pcap")
	return files
}

// TestFramesRandomAccess: every frame read at random, backwards and
// forwards equals what a sequential read of the file gives: the same
// octets, TCP payload offset and sequence number. The files cover pcap,
// pcapng with one and with two sections, gzip and a non-Ethernet link.
func TestFramesRandomAccess(t *testing.T) {
	for _, path := range testFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := reference(t, path)
			if len(want) == 0 {
				t.Fatal("no frames")
			}
			fr, err := OpenFrames(path)
			if err != nil {
				t.Fatal(err)
			}
			defer fr.Close()
			order := make([]int, 0, 3*len(want))
			for i := len(want) - 1; i >= 0; i-- {
				order = append(order, i)
			}
			for i := range want {
				order = append(order, i)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for range want {
				order = append(order, rng.IntN(len(want)))
			}
			for _, i := range order {
				got, err := fr.Read(uint64(i + 1))
				if err != nil {
					t.Fatalf("frame %d: %v", i+1, err)
				}
				w := want[i]
				if got.Frame != uint64(i+1) || !bytes.Equal(got.Data, w.Data) || got.PayloadOff != w.PayloadOff ||
					got.Seq != w.Seq || got.TCP != w.TCP || !bytes.Equal(got.Payload, w.Payload) {
					t.Fatalf("frame %d differs: got off %d seq %d tcp %v, want off %d seq %d tcp %v",
						i+1, got.PayloadOff, got.Seq, got.TCP, w.PayloadOff, w.Seq, w.TCP)
				}
			}
			if _, err := fr.Read(uint64(len(want) + 1)); err == nil {
				t.Errorf("frame %d past the end read without error", len(want)+1)
			}
		})
	}
}

// TestFramesPayloadOffset checks rawOf's payload offset against the
// headers of siw captures: Ethernet (14) + IPv4 (20) + TCP with the
// timestamp option (32) puts the TCP payload at octet 66.
func TestFramesPayloadOffset(t *testing.T) {
	fr, err := OpenFrames("../../../testdata/siw/crc_v2_rping.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	f, err := fr.Read(4) // the MPA Request (MANIFEST.md)
	if err != nil {
		t.Fatal(err)
	}
	if f.PayloadOff != 66 || !bytes.HasPrefix(f.Payload, []byte("MPA ID Req Frame")) {
		t.Fatalf("payload at %d: %q", f.PayloadOff, f.Payload[:min(16, len(f.Payload))])
	}
}

// TestStdinKeepsOffered: standard input keeps the frames offered while
// indexing, and nothing else.
func TestStdinKeepsOffered(t *testing.T) {
	fr, err := OpenFrames("-")
	if err != nil {
		t.Fatal(err)
	}
	r, size, err := Open("../../../testdata/siw/crc_v2_rping.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	x := model.NewIndex()
	if err := Run(context.Background(), r, "x", size, x, Options{OnPacket: fr.Offer}); err != nil {
		t.Fatal(err)
	}
	if _, err := fr.Read(50); err != nil {
		t.Fatal(err)
	}
	if _, err := fr.Read(51); !errors.Is(err, ErrNotKept) {
		t.Fatalf("frame 51: %v", err)
	}
	if p := x.Progress(); !p.Done || p.Frames != 50 || p.Read != size {
		t.Fatalf("progress %+v", p)
	}
}

// TestFramesCursors: frames read through the cursors left open (one frame
// after another, skipping some, past a cursor's reach, two places in
// turn as a search's workers read, backwards) equal a sequential read,
// with the frame cache emptied before each read so that every read goes
// to a cursor; a pcap read forwards opens one cursor only.
func TestFramesCursors(t *testing.T) {
	for _, path := range testFiles(t) {
		if filepath.Ext(path) == ".gz" {
			continue // read sequentially, not by cursors
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := reference(t, path)
			n := len(want)
			var order []int
			for i := 0; i < n; i++ {
				order = append(order, i)
			}
			for i := 0; i < n; i += 3 {
				order = append(order, i)
			}
			for i := 0; i < n/2; i++ {
				order = append(order, i, n/2+i)
			}
			for i := n - 1; i >= 0; i -= 7 {
				order = append(order, i)
			}
			fr, err := OpenFrames(path)
			if err != nil {
				t.Fatal(err)
			}
			defer fr.Close()
			opened := 0
			for k, i := range order {
				clear(fr.cache)
				fr.cacheOrder, fr.cacheBytes = nil, 0
				before := fr.curs
				got, err := fr.Read(uint64(i + 1))
				if err != nil {
					t.Fatalf("frame %d: %v", i+1, err)
				}
				if fr.curs != before && k < n {
					for j := range fr.curs {
						if fr.curs[j].src != before[j].src {
							opened++
						}
					}
				}
				w := want[i]
				if got.Frame != uint64(i+1) || !bytes.Equal(got.Data, w.Data) || got.PayloadOff != w.PayloadOff ||
					got.Seq != w.Seq || got.TCP != w.TCP || !bytes.Equal(got.Payload, w.Payload) {
					t.Fatalf("read %d, frame %d differs", k, i+1)
				}
			}
			if opened != 1 {
				t.Errorf("reading the %d frames in order opened %d cursors, want 1", n, opened)
			}
		})
	}
}

// TestOpenNotCapture: what is no capture file is refused with why: empty,
// too short, a pcap header cut short, another magic, a directory (all
// were "not a pcap or pcapng file").
func TestOpenNotCapture(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		data []byte
		want string
	}{
		{nil, "is empty"},
		{[]byte{0xd4, 0xc3}, "2 octets, too short"},
		{[]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0}, "pcap file header is cut short (8 of 24 octets)"},
		{[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "not a pcap or pcapng file (magic 0x47455420)"},
	} {
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenFrames(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.data, err, c.want)
		}
	}
	if _, err := OpenFrames(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
}

package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// chunkFrames reads path with a ChunkReader (chunk buffers of size) and
// returns a line per frame and the final error text.
func chunkFrames(t testing.TB, path string) ([]string, string, bool) {
	cr, err := OpenChunks(path, 0)
	if errors.Is(err, ErrNotChunked) {
		return nil, "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	w := cr.Walker()
	var out []string
	buf := make([]byte, 0, ChunkSize)
	for {
		ch, err := cr.Next(buf)
		if err != nil {
			if err == io.EOF {
				return out, "", true
			}
			return out, err.Error(), true
		}
		w.Walk(ch, nil, func(p *Packet) { out = append(out, frameLine(p)) })
	}
}

func frameLine(p *Packet) string {
	e := ""
	if p.Err != nil {
		e = p.Err.Error()
	}
	return string(rune(p.Kind)) + p.TS.String() + p.Src.String() + p.Dst.String() + e + string(p.Data) + "|" + string(p.Payload)
}

func sourceFrames(t testing.TB, path string) ([]string, string) {
	s, err := Open(path)
	if err != nil {
		return nil, "open"
	}
	defer s.Close()
	var out []string
	for {
		p, err := s.Next()
		if err != nil {
			if err == io.EOF {
				return out, ""
			}
			return out, err.Error()
		}
		out = append(out, frameLine(&p))
	}
}

// FuzzChunks: for any file, reading in chunks gives the frames and the
// error a Source gives.
func FuzzChunks(f *testing.F) {
	for _, name := range []string{"../testdata/siw/term_badwrite.pcap", "../testdata/siw/crc_v2_rping.pcap"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
			f.Add(b[:len(b)/2])
		}
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "f.pcap")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, gerr, ok := chunkFrames(t, path)
		if !ok {
			return
		}
		want, werr := sourceFrames(t, path)
		if gerr != werr || len(got) != len(want) {
			t.Fatalf("chunks: %d frames, %q; source: %d frames, %q", len(got), gerr, len(want), werr)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("frame %d differs", i+1)
			}
		}
	})
}

// TestChunksBigRecords: records up to the longest allowed length straddle
// chunk boundaries.
func TestChunksBigRecords(t *testing.T) {
	var b bytes.Buffer
	b.Write([]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0})
	for i, n := range []int{60, MaxRecordLength, 100, MaxRecordLength - 1, 3000, MaxRecordLength, MaxRecordLength, 14} {
		rec := make([]byte, 16+n)
		rec[0] = byte(i)
		rec[8], rec[9], rec[10] = byte(n), byte(n>>8), byte(n>>16)
		rec[12], rec[13], rec[14] = byte(n), byte(n>>8), byte(n>>16)
		for j := 16; j < len(rec); j++ {
			rec[j] = byte(j * (i + 1))
		}
		b.Write(rec)
	}
	path := filepath.Join(t.TempDir(), "big.pcap")
	os.WriteFile(path, b.Bytes(), 0o644)
	got, gerr, ok := chunkFrames(t, path)
	want, werr := sourceFrames(t, path)
	if !ok || gerr != werr || len(got) != 8 || len(got) != len(want) {
		t.Fatalf("chunks %d %q, source %d %q", len(got), gerr, len(want), werr)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("frame %d differs", i+1)
		}
	}
}

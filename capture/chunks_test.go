package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/iwarpkit/iwarpkit/internal/damage"
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
	w, nw := cr.Walker(), cr.Walker()
	var out []string
	buf := make([]byte, 0, ChunkSize)
	for {
		// The chunks as the reader of iwarpdump -j N reads them, the
		// owners worked out in the same walk: checkOwned holds them to
		// Owners.
		ch, own, offs, err := cr.NextOwners(buf, nw, nil, nil, &testOwner{n: 3})
		if err != nil {
			if err == io.EOF {
				return out, "", true
			}
			return out, err.Error(), true
		}
		if len(ch.Data) > ChunkSize {
			t.Fatalf("chunk of %d octets", len(ch.Data))
		}
		first := len(out)
		w.Walk(ch, func(p *Packet) { out = append(out, frameLine(p)) })
		checkOwned(t, cr, ch, out[first:], own, offs)
	}
}

// testOwner notes what Owners shows it of every record, and deals the
// records by source port, payload length and kind.
type testOwner struct {
	n    int
	seen []string
}

func ownerView(k Kind, src, dst netip.AddrPort, payload, payloadWire int) string {
	return fmt.Sprintf("%d %s %s %d of %d", k, src, dst, payload, payloadWire)
}

func (o *testOwner) Owner(p *Packet) uint8 {
	o.seen = append(o.seen, ownerView(p.Kind, p.Src, p.Dst, len(p.Payload), p.PayloadWireLen))
	return uint8((int(p.Src.Port()) + len(p.Payload) + int(p.Kind)) % o.n)
}

func (o *testOwner) OwnerTCP4(src, dst [4]byte, sport, dport uint16, payload int) uint8 {
	ownedTCP4++
	p := Packet{Kind: KindTCP, Src: netip.AddrPortFrom(netip.AddrFrom4(src), sport),
		Dst: netip.AddrPortFrom(netip.AddrFrom4(dst), dport), Payload: make([]byte, payload), PayloadWireLen: payload}
	return o.Owner(&p)
}

// ownedTCP4 counts the records of all checkOwned calls that took the
// OwnerTCP4 path.
var ownedTCP4 int

// TestChunksBundled: every bundled pcap reads in chunks as a Source reads
// it, and Owners and WalkOwned agree with Walk on it (checkOwned), through
// both of Owners' paths.
func TestChunksBundled(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	before, chunked := ownedTCP4, 0
	for _, f := range files {
		got, gerr, ok := chunkFrames(t, f)
		if !ok {
			continue
		}
		chunked++
		want, werr := sourceFrames(t, f)
		if gerr != werr || len(got) != len(want) {
			t.Fatalf("%s: chunks %d %q, source %d %q", f, len(got), gerr, len(want), werr)
		}
	}
	if chunked < 20 || ownedTCP4-before < 1000 {
		t.Fatalf("%d files read in chunks, %d records through OwnerTCP4", chunked, ownedTCP4-before)
	}
}

// checkOwned checks Owners and WalkOwned on ch against want, Walk's lines
// for its records: Owners hands of what Walk decodes (Kind, Src, Dst and
// Payload), and the owners' WalkOwned walks, put together by frame, give
// Walk's records.
func checkOwned(t testing.TB, cr *ChunkReader, ch Chunk, want []string, nextOwn []uint8, nextOffs []int32) {
	t.Helper()
	const n = 3
	of := &testOwner{n: n}
	own, offs := cr.Walker().Owners(ch, nil, nil, of)
	if !slices.Equal(own, nextOwn) || !slices.Equal(offs, nextOffs) {
		t.Fatalf("NextOwners: owners %v, offsets %v; Owners: %v, %v", nextOwn, nextOffs, own, offs)
	}
	seen := of.seen
	if len(own) != ch.N || len(offs) != ch.N || len(seen) != ch.N || len(want) != ch.N {
		t.Fatalf("Owners: %d owners, %d offsets, %d calls for %d records (Walk: %d)", len(own), len(offs), len(seen), ch.N, len(want))
	}
	if _, ok := cr.Walker().TS(ch, offs, ch.N); ok {
		t.Fatalf("TS of record %d of %d", ch.N, ch.N)
	}
	got := make([]string, ch.N)
	ow, tw := cr.Walker(), cr.Walker()
	for me := uint8(0); me < n; me++ {
		ow.WalkOwned(ch, own, offs, me, func(p *Packet) {
			i := int(p.Frame - ch.First)
			if i < 0 || i >= ch.N || own[i] != me || got[i] != "" {
				t.Fatalf("WalkOwned(%d): frame %d (first %d), owner %d", me, p.Frame, ch.First, own[min(max(i, 0), ch.N-1)])
			}
			got[i] = frameLine(p)
			if ts, ok := tw.TS(ch, offs, i); !ok || !ts.Equal(p.TS) {
				t.Fatalf("frame %d: TS %v %v, Walk decodes %v", p.Frame, ts, ok, p.TS)
			}
			if v := ownerView(p.Kind, p.Src, p.Dst, len(p.Payload), p.PayloadWireLen); v != seen[i] {
				t.Fatalf("frame %d: Owners saw %q, Walk decodes %q", p.Frame, seen[i], v)
			}
			checkPayloadPos(t, cr, ch, p)
		})
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("frame %d: WalkOwned %q, Walk %q", ch.First+uint64(i), got[i], want[i])
		}
	}
}

// checkPayloadPos: a packet of a chunk read in place (a pcap chunk, or
// a pcapng chunk of blocks, not of repacked packets) whose payload lies
// in its data has that payload's file offset, and the file holds the
// payload there (the streams compare retransmissions with it).
func checkPayloadPos(t testing.TB, cr *ChunkReader, ch Chunk, p *Packet) {
	t.Helper()
	i := cap(p.Data) - cap(p.Payload)
	inData := len(p.Payload) > 0 && i >= 0 && i < len(p.Data) && &p.Data[i] == &p.Payload[0]
	if !inData || (cr.ng != nil && ch.meta == nil) {
		if p.PayloadPos != 0 {
			t.Fatalf("frame %d: PayloadPos %d for a payload not read in place", p.Frame, p.PayloadPos)
		}
		return
	}
	if p.PayloadPos <= 0 {
		t.Fatalf("frame %d: no PayloadPos for a payload read in place", p.Frame)
	}
	b := make([]byte, len(p.Payload))
	if n, err := cr.ReadAt(b, p.PayloadPos); n != len(b) || !bytes.Equal(b, p.Payload) {
		t.Fatalf("frame %d: the file at PayloadPos %d is not the payload (%d octets read, %v)", p.Frame, p.PayloadPos, n, err)
	}
}

func frameLine(p *Packet) string {
	e := ""
	if p.Err != nil {
		e = p.Err.Error()
	}
	n := func(v int) string { return strconv.Itoa(v) + " " }
	return n(int(p.Frame)) + n(int(p.Kind)) + n(p.Interface) + n(p.CapLen) + n(p.WireLen) + n(p.PayloadWireLen) +
		p.TS.String() + p.Src.String() + p.Dst.String() + e + string(p.Data) + "|" + string(p.Payload)
}

// toPcapng writes the packets of the pcap file at path to a pcapng file in
// dir, with pcapgo's writer: a nanosecond interface of the file's link type,
// and every other packet on a second interface of the same link type with
// microsecond timestamps (the default resolution) and if_tsoffset.
func toPcapng(t testing.TB, path, dir string) string {
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out bytes.Buffer
	pr, ok := s.rd.(*pcapReader)
	if !ok {
		return "" // already pcapng
	}
	link := pr.link
	w, err := pcapgo.NewNgWriter(&out, link)
	if err != nil {
		t.Fatal(err)
	}
	us, err := w.AddInterface(pcapgo.NgInterface{LinkType: link, TimestampResolution: 6, TimestampOffset: 0})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		p, err := s.Next()
		if err != nil {
			break
		}
		ci := gopacket.CaptureInfo{Timestamp: p.TS, CaptureLength: p.CapLen, Length: p.WireLen}
		if i%2 == 1 {
			ci.InterfaceIndex = us
		}
		if err := w.WritePacket(ci, p.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, filepath.Base(path)+"ng")
	if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestChunksPcapng: every bundled pcap, as pcapng, reads in chunks as a
// Source reads it, through Owners and WalkOwned as well (checkOwned); so
// do all of them in one file (repacked records straddle chunks), and the
// same file cut short anywhere in its last blocks.
func TestChunksPcapng(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	dir := t.TempDir()
	var all bytes.Buffer
	n := 0
	for _, f := range files {
		if s, err := Open(f); err != nil || s.Close() != nil {
			continue
		}
		ng := toPcapng(t, f, dir)
		if ng == "" {
			continue
		}
		got, gerr, ok := chunkFrames(t, ng)
		if !ok {
			t.Fatalf("%s: not read in chunks", ng)
		}
		want, werr := sourceFrames(t, ng)
		if gerr != werr || !slices.Equal(got, want) {
			t.Fatalf("%s: chunks %d %q, source %d %q", ng, len(got), gerr, len(want), werr)
		}
		b, _ := os.ReadFile(ng)
		all.Write(b) // a section per file
		n += len(want)
	}
	if len(files) < 20 || n < 1000 {
		t.Fatalf("%d files, %d packets", len(files), n)
	}
	big := all.Bytes()
	if len(big) < ChunkSize+ChunkSize/4 {
		t.Fatalf("all: %d octets", len(big))
	}
	for _, cut := range []int{0, 7, 100} {
		path := filepath.Join(dir, "all.pcapng")
		if err := os.WriteFile(path, big[:len(big)-cut], 0o644); err != nil {
			t.Fatal(err)
		}
		got, gerr, _ := chunkFrames(t, path)
		want, werr := sourceFrames(t, path)
		t.Logf("source: %d frames, %q", len(want), werr)
		if gerr != werr || !slices.Equal(got, want) {
			t.Fatalf("all, cut %d: chunks %d %q, source %d %q", cut, len(got), gerr, len(want), werr)
		}
	}
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
	dir := f.TempDir()
	for _, name := range []string{"../testdata/siw/term_badwrite.pcap", "../testdata/siw/crc_v2_rping.pcap"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
			f.Add(b[:len(b)/2])
		}
		if b, err := os.ReadFile(toPcapng(f, name, dir)); err == nil && len(b) > 0 {
			f.Add(b)
			f.Add(b[:len(b)/2])
		}
	}
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
		t.Logf("source: %d frames, %q", len(want), werr)
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

// TestChunksRecords: records up to the longest allowed length straddle
// chunk boundaries, and records whose captured length exceeds the original
// length (read by the slow path) sit between good ones.
func TestChunksRecords(t *testing.T) {
	const m = MaxRecordLength
	for _, tc := range []struct {
		name string
		lens [][2]int // caplen, wirelen
	}{
		{"big", [][2]int{{60, 60}, {m, m}, {100, 100}, {m - 1, m - 1}, {3000, 3000}, {m, m}, {m, m}, {14, 14}}},
		{"bad", [][2]int{{60, 60}, {80, 70}, {100, 100}, {90, 20}, {40, 0}, {3000, 3000}, {m, m - 1}, {14, 14}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			b.Write([]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0})
			for i, l := range tc.lens {
				n, wire := l[0], l[1]
				rec := make([]byte, 16+n)
				rec[0] = byte(i)
				rec[8], rec[9], rec[10] = byte(n), byte(n>>8), byte(n>>16)
				rec[12], rec[13], rec[14] = byte(wire), byte(wire>>8), byte(wire>>16)
				for j := 16; j < len(rec); j++ {
					rec[j] = byte(j * (i + 1))
				}
				b.Write(rec)
			}
			path := filepath.Join(t.TempDir(), tc.name+".pcap")
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			got, gerr, ok := chunkFrames(t, path)
			want, werr := sourceFrames(t, path)
			t.Logf("source: %d frames, %q", len(want), werr)
			if !ok || gerr != werr || len(got) != len(tc.lens) || len(got) != len(want) {
				t.Fatalf("chunks %d %q, source %d %q", len(got), gerr, len(want), werr)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("frame %d differs", i+1)
				}
			}
		})
	}
}

// TestNextOwners: NextOwners gives the chunks, owners, offsets and errors of
// Next followed by Owners, on every bundled capture (pcap and pcapng), a
// packet limit, and damaged variants.
func TestNextOwners(t *testing.T) {
	dir := t.TempDir()
	files, _ := filepath.Glob("../testdata/*/*.pcap*")
	var sources [][]byte
	for _, f := range files {
		data, _ := os.ReadFile(f)
		sources = append(sources, data)
	}
	for _, v := range damage.Variants(9, 60, sources) {
		p := filepath.Join(dir, v.Name+".pcap")
		if err := os.WriteFile(p, v.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	type chunk struct {
		first uint64
		n     int
		pos   int64
		data  string
		own   []uint8
		offs  []int32
		err   string
	}
	read := func(path string, limit uint64, one bool) ([]chunk, bool) {
		cr, err := OpenChunks(path, limit)
		if err != nil {
			return nil, false
		}
		defer cr.Close()
		w := cr.Walker()
		buf := make([]byte, 0, ChunkSize)
		var out []chunk
		for {
			var ch Chunk
			var own []uint8
			var offs []int32
			of := &testOwner{n: 3}
			if one {
				ch, own, offs, err = cr.NextOwners(buf, w, make([]uint8, 0, 4), nil, of)
			} else if ch, err = cr.Next(buf); err == nil {
				own, offs = w.Owners(ch, make([]uint8, 0, 4), nil, of)
			}
			c := chunk{first: ch.First, n: ch.N, pos: ch.Pos, data: string(ch.Data), own: own, offs: offs}
			if err != nil {
				c = chunk{err: err.Error()}
			}
			out = append(out, c)
			if err != nil {
				return out, true
			}
		}
	}
	compared := 0
	for _, f := range files {
		for _, limit := range []uint64{0, 5} {
			want, ok := read(f, limit, false)
			if !ok {
				continue
			}
			compared++
			got, _ := read(f, limit, true)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, limit %d: NextOwners differs from Next and Owners", filepath.Base(f), limit)
			}
		}
	}
	if compared < 100 {
		t.Fatalf("%d files compared", compared)
	}
}

// TestChunksPcapngNotesRoom: a pcapng chunk's reading stops short of the
// end of its buffer by the room its notes will take (nextRaw), so that
// the octets carried to the next chunk are little more than the block the
// buffer cut: here 60,000 packets of 60 octets (blocks of 92 octets, with
// their notes some 8,300 a chunk), then packets of 200 KiB and small ones
// again. The frames are the Source's.
//
// A block larger than that shortened room must still be read when it is
// the first of a chunk, or it would be left to the next chunk for ever:
// packets of 800 KiB (larger than MaxRecordLength too: they end the
// decode as the Source's error), after runs of small packets that put
// them at every place in a chunk.
func TestChunksPcapngNotesRoom(t *testing.T) {
	dir := t.TempDir()
	write := func(w *pcapgo.NgWriter, n, size int) {
		ts := time.Unix(1700000000, 0)
		for i := range n {
			data := make([]byte, size)
			data[0], data[size-1] = byte(i), byte(i>>8)
			ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i)), CaptureLength: size, Length: size}
			if err := w.WritePacket(ci, data); err != nil {
				t.Fatal(err)
			}
		}
	}
	file := func(runs ...[2]int) string {
		var buf bytes.Buffer
		w, err := pcapgo.NewNgWriter(&buf, layers.LinkTypeEthernet)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			write(w, r[0], r[1])
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "notes.pcapng")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// chunks reads path in chunks, checking each with check, and returns
	// the frames and the final error.
	chunks := func(path string, check func(cr *ChunkReader, ch Chunk, frames int)) ([]string, string) {
		cr, err := OpenChunks(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer cr.Close()
		var got []string
		b := make([]byte, 0, ChunkSize)
		for empty := 0; ; {
			ch, err := cr.Next(b)
			if err == io.EOF {
				return got, ""
			}
			if err != nil {
				return got, err.Error()
			}
			if ch.N > 0 {
				empty = 0
			} else if empty++; empty > 2 {
				t.Fatalf("%s: chunks of no record, one after another, after frame %d", path, len(got))
			}
			cr.Walker().Walk(ch, func(p *Packet) { got = append(got, frameLine(p)) })
			check(cr, ch, len(got))
		}
	}

	small := 0
	path := file([2]int{60000, 60}, [2]int{3, 200 << 10}, [2]int{20000, 60})
	got, gerr := chunks(path, func(cr *ChunkReader, ch Chunk, frames int) {
		if ch.meta != nil && ch.First > 1 && frames < 60000 {
			// A chunk of the small packets after the first (which has
			// no notes before it to size the room by): what goes to
			// the next is at most the block the buffer cut.
			small++
			if len(cr.tail) > 256 {
				t.Fatalf("chunk %d: %d octets carried to the next chunk", small, len(cr.tail))
			}
		}
	})
	want, werr := sourceFrames(t, path)
	if small < 5 || gerr != werr || !slices.Equal(got, want) {
		t.Fatalf("%d chunks of small packets; chunks %d frames %q, source %d %q", small, len(got), gerr, len(want), werr)
	}

	for n := 8000; n < 17000; n += 150 {
		path := file([2]int{n, 60}, [2]int{1, 800 << 10}, [2]int{10, 60})
		got, gerr := chunks(path, func(*ChunkReader, Chunk, int) {})
		want, werr := sourceFrames(t, path)
		if gerr != werr || !slices.Equal(got, want) || len(want) != n {
			t.Fatalf("%d small packets first: chunks %d frames %q, source %d %q", n, len(got), gerr, len(want), werr)
		}
	}
}

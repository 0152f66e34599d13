package shard_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/shard"
	"github.com/iwarpkit/iwarpkit/shard/shardtest"
	"github.com/iwarpkit/iwarpkit/synth"
)

// captures returns the inputs the split tests run on: the library's
// multi-connection scenario, a 40-connection scenario, and the real siw
// captures.
func captures(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	s, _ := synth.Named("multi-conn", 1)
	paths := []string{
		shardtest.Write(t, dir, "multi-conn.pcap", s),
		shardtest.Write(t, dir, "many-40.pcap", shardtest.ManyConns(40)),
	}
	siw, _ := filepath.Glob("../testdata/siw/*.pcap")
	if len(siw) == 0 {
		t.Fatal("no testdata/siw captures")
	}
	return append(paths, siw...)
}

// frame is one packet as read, kept.
type frame struct {
	ts      time.Time
	wire    int
	link    layers.LinkType
	data    []byte
	origNum uint64
}

func readAll(t *testing.T, paths ...string) []frame {
	t.Helper()
	m, err := capture.OpenMerge(paths...)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var out []frame
	for {
		p, err := m.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, frame{p.TS, p.WireLen, m.LinkType(p.Interface), bytes.Clone(p.Data), p.Frame})
	}
}

func split(t *testing.T, n int, paths ...string) *shard.Writer {
	t.Helper()
	m, err := capture.OpenMerge(paths...)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	w, err := shard.Split(context.Background(), m, t.TempDir(), "in", n)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestSplitPartitions: every packet lands in exactly one shard file, the
// one Of names, in input order, with its timestamp, lengths, octets and
// link type.
func TestSplitPartitions(t *testing.T) {
	for _, path := range captures(t) {
		orig := readAll(t, path)
		for _, n := range []int{1, 2, 3, 8} {
			w := split(t, n, path)
			total := 0
			for i := range n {
				got := readAll(t, w.Path(i))
				var want []frame
				m, _ := capture.OpenMerge(path)
				for {
					p, err := m.Next()
					if err != nil {
						break
					}
					if shard.Of(&p, n) == i {
						want = append(want, orig[p.Frame-1])
					}
				}
				m.Close()
				if len(got) != len(want) {
					t.Fatalf("%s N=%d shard %d: %d packets, want %d", filepath.Base(path), n, i, len(got), len(want))
				}
				for k := range got {
					g, w := got[k], want[k]
					if !g.ts.Equal(w.ts) || g.wire != w.wire || g.link != w.link || !bytes.Equal(g.data, w.data) {
						t.Fatalf("%s N=%d shard %d packet %d differs from frame %d", filepath.Base(path), n, i, k+1, w.origNum)
					}
				}
				if pk, _ := w.Count(i); pk != uint64(len(want)) {
					t.Errorf("Count(%d) = %d, want %d", i, pk, len(want))
				}
				total += len(got)
			}
			if total != len(orig) {
				t.Errorf("%s N=%d: %d packets in all shards, want %d", filepath.Base(path), n, total, len(orig))
			}
		}
	}
}

// TestShardsDecodeLikeTheWhole is the acceptance test for both
// ways of sharding: the union of the N shards' records equals the records
// of the unsharded decode (every key of every record, summary counts
// included), whether the shards are decoded from the split files or by
// selecting shard I of N while reading the whole file.
func TestShardsDecodeLikeTheWhole(t *testing.T) {
	for _, path := range captures(t) {
		whole := shardtest.DecodeFiles(t, nil, path)
		want := shardtest.Canonical(whole, nil)
		wantCounts := shardtest.Count(whole)
		for _, n := range []int{2, 3, 5, 8} {
			name := filepath.Base(path) + " N=" + strconv.Itoa(n)
			// Split files: a shard file's frame k is the k-th packet of
			// the input that Of puts in shard i.
			w := split(t, n, path)
			orig := make([][]uint64, n)
			m, _ := capture.OpenMerge(path)
			for {
				p, err := m.Next()
				if err != nil {
					break
				}
				i := shard.Of(&p, n)
				orig[i] = append(orig[i], p.Frame)
			}
			m.Close()
			var fromSplit, fromSelect []string
			var splitCounts, selectCounts shardtest.Counts
			for i := range n {
				recs := shardtest.DecodeFiles(t, nil, w.Path(i))
				fromSplit = append(fromSplit, shardtest.Canonical(recs, func(f uint64) uint64 {
					if f == 0 || f > uint64(len(orig[i])) {
						return 0
					}
					return orig[i][f-1]
				})...)
				splitCounts.Add(shardtest.Count(recs))

				sel := shard.Selector{Index: i, Count: n}
				recs = shardtest.DecodeFiles(t, sel.Keep, path)
				fromSelect = append(fromSelect, shardtest.Canonical(recs, nil)...)
				selectCounts.Add(shardtest.Count(recs))
			}
			slices.Sort(fromSplit)
			slices.Sort(fromSelect)
			shardtest.Equal(t, name+" split", fromSplit, want)
			shardtest.Equal(t, name+" --shard", fromSelect, want)
			if splitCounts.String() != wantCounts.String() || selectCounts.String() != wantCounts.String() {
				t.Errorf("%s: counts\n split  %v\n select %v\n whole  %v", name, splitCounts, selectCounts, wantCounts)
			}
		}
		if wantCounts.Conns == 0 {
			t.Errorf("%s: no connections decoded", path)
		}
	}
}

// TestSplitFormats: the output keeps the input's format when it can: pcap
// with the same link type and timestamp resolution, pcapng for pcapng
// inputs or mixed link types.
func TestSplitFormats(t *testing.T) {
	dir := t.TempDir()
	ts := time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.UTC)
	mkFrame := func(port uint16) []byte {
		ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolTCP,
			SrcIP: []byte{192, 0, 2, 2}, DstIP: []byte{192, 0, 2, 1}}
		tcp := &layers.TCP{SrcPort: layers.TCPPort(port), DstPort: 7174, Seq: 1, ACK: true, Window: 100}
		_ = tcp.SetNetworkLayerForChecksum(ip)
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			ip, tcp, gopacket.Payload("x")); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	writeFile := func(name string, nanos bool, link layers.LinkType, n int) string {
		var b bytes.Buffer
		w := pcapgo.NewWriter(&b)
		if nanos {
			w = pcapgo.NewWriterNanos(&b)
		}
		_ = w.WriteFileHeader(65535, link)
		for i := range n {
			d := mkFrame(uint16(40000 + i))
			if link == layers.LinkTypeLinuxSLL {
				d = append(sllHeader(), d...)
			}
			_ = w.WritePacket(gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Second), CaptureLength: len(d), Length: len(d) + 4}, d)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	micro := writeFile("micro.pcap", false, layers.LinkTypeRaw, 6)
	nano := writeFile("nano.pcap", true, layers.LinkTypeRaw, 6)
	sll := writeFile("sll.pcap", false, layers.LinkTypeLinuxSLL, 6)
	var ngb bytes.Buffer
	ng, _ := pcapgo.NewNgWriter(&ngb, layers.LinkTypeRaw)
	for i := range 6 {
		d := mkFrame(uint16(41000 + i))
		_ = ng.WritePacket(gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(d), Length: len(d)}, d)
	}
	_ = ng.Flush()
	ngPath := filepath.Join(dir, "ng.pcapng")
	if err := os.WriteFile(ngPath, ngb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		inputs []string
		ext    string
		magic  uint32 // first 4 octets, little-endian
	}{
		{"micro", []string{micro}, ".pcap", 0xa1b2c3d4},
		{"nano", []string{nano}, ".pcap", 0xa1b23c4d},
		{"micro+nano", []string{micro, nano}, ".pcap", 0xa1b23c4d},
		{"pcapng", []string{ngPath}, ".pcapng", 0x0a0d0d0a},
		{"mixed-links", []string{micro, sll}, ".pcapng", 0x0a0d0d0a},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := split(t, 2, tc.inputs...)
			orig := readAll(t, tc.inputs...)
			var got []frame
			for i := range 2 {
				if filepath.Ext(w.Path(i)) != tc.ext {
					t.Errorf("shard %d: %s, want %s", i, w.Path(i), tc.ext)
				}
				b, err := os.ReadFile(w.Path(i))
				if err != nil {
					t.Fatal(err)
				}
				if m := binary.LittleEndian.Uint32(b); m != tc.magic {
					t.Errorf("shard %d magic %#x, want %#x", i, m, tc.magic)
				}
				got = append(got, readAll(t, w.Path(i))...)
			}
			if len(got) != len(orig) {
				t.Fatalf("%d packets, want %d", len(got), len(orig))
			}
			// Match by content: timestamps, lengths and link types kept.
			for _, o := range orig {
				found := false
				for _, g := range got {
					if bytes.Equal(g.data, o.data) && g.ts.Equal(o.ts) && g.wire == o.wire && g.link == o.link {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("frame %d (%v, %v) not found in the shards", o.origNum, o.ts, o.link)
				}
			}
		})
	}
}

// sllHeader is a Linux cooked header for an IPv4 packet (protocol 0x0800).
func sllHeader() []byte {
	h := make([]byte, 16)
	binary.BigEndian.PutUint16(h[2:4], 1) // ARPHRD_ETHER
	binary.BigEndian.PutUint16(h[4:6], 6) // address length
	binary.BigEndian.PutUint16(h[14:16], 0x0800)
	return h
}

// TestSplitIdempotent: a rerun writes byte-identical files under the same
// names and leaves no temporary files.
func TestSplitIdempotent(t *testing.T) {
	path := shardtest.Write(t, t.TempDir(), "many.pcap", shardtest.ManyConns(12))
	dir := t.TempDir()
	run := func() map[string][]byte {
		m, err := capture.OpenMerge(path)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if _, err := shard.Split(context.Background(), m, dir, "many", 4); err != nil {
			t.Fatal(err)
		}
		out := map[string][]byte{}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			out[e.Name()] = b
		}
		return out
	}
	a, b := run(), run()
	if len(a) != 4 {
		t.Errorf("files after the first run: %d, want 4", len(a))
	}
	for name, data := range a {
		if !bytes.Equal(b[name], data) {
			t.Errorf("%s differs between runs", name)
		}
		if want := "many.shard-"; name[:len(want)] != want {
			t.Errorf("unexpected file %s", name)
		}
	}
	if len(b) != len(a) {
		t.Errorf("second run left %d files, first %d", len(b), len(a))
	}
}

// TestSplitCancelAndAbort: a cancelled split leaves nothing behind.
func TestSplitCancelAndAbort(t *testing.T) {
	path := shardtest.Write(t, t.TempDir(), "many.pcap", shardtest.ManyConns(4))
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m, _ := capture.OpenMerge(path)
	defer m.Close()
	if w, err := shard.Split(ctx, m, dir, "x", 3); w != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, %v; want nil, context.Canceled", w, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files left behind", len(ents))
	}
	if _, err := shard.Create(dir, "x", 0, shard.Options{}); !errors.Is(err, shard.ErrShards) {
		t.Errorf("0 shards: %v", err)
	}
	if _, err := shard.Create(dir, "x", 2, shard.Options{}); !errors.Is(err, shard.ErrPcapLinkTypes) {
		t.Errorf("pcap without link type: %v", err)
	}
	if _, err := shard.Create(filepath.Join(dir, "missing"), "x", 2, shard.Options{Format: shard.FormatPcapng}); err == nil {
		t.Errorf("no error for a missing directory")
	}
}

// TestSplitDamagedInput: a truncated input gives complete shard files of
// its intact packets, and the error.
func TestSplitDamagedInput(t *testing.T) {
	dir := t.TempDir()
	path := shardtest.Write(t, dir, "many.pcap", shardtest.ManyConns(6))
	b, _ := os.ReadFile(path)
	cut := filepath.Join(dir, "cut.pcap")
	if err := os.WriteFile(cut, b[:len(b)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	intact := len(readAll(t, path)) - 1
	m, _ := capture.OpenMerge(cut)
	defer m.Close()
	w, err := shard.Split(context.Background(), m, t.TempDir(), "cut", 3)
	var fe *capture.FileError
	if !errors.As(err, &fe) || w == nil {
		t.Fatalf("got %v, %v; want the Writer and a *capture.FileError", w, err)
	}
	n := 0
	for i := range 3 {
		n += len(readAll(t, w.Path(i)))
	}
	if n != intact {
		t.Errorf("%d packets written, want the %d intact ones", n, intact)
	}
}

// TestWriteSkipsUnwritable: a record without its octets is skipped and
// counted; one whose captured length is above its original length is
// written with the original length raised to it, and counted.
func TestWriteSkipsUnwritable(t *testing.T) {
	dir := t.TempDir()
	w, err := shard.Create(dir, "x", 1, shard.Options{LinkTypes: []layers.LinkType{layers.LinkTypeRaw}})
	if err != nil {
		t.Fatal(err)
	}
	p := capture.Packet{Kind: capture.KindBad, CapLen: 100, WireLen: 100}
	if i, err := w.Write(&p, layers.LinkTypeRaw); i != -1 || err != nil || w.Skipped() != 1 {
		t.Errorf("Write = %d, %v; Skipped %d", i, err, w.Skipped())
	}
	r := capture.Packet{Kind: capture.KindOther, CapLen: 100, WireLen: 60, Data: make([]byte, 100)}
	if i, err := w.Write(&r, layers.LinkTypeRaw); i != 0 || err != nil || w.Raised() != 1 || w.Skipped() != 1 {
		t.Errorf("Write = %d, %v; Raised %d", i, err, w.Raised())
	}
	q := capture.Packet{Kind: capture.KindOther, CapLen: 1, WireLen: 1, Data: []byte{0}}
	if _, err := w.Write(&q, layers.LinkTypeEthernet); !errors.Is(err, shard.ErrLinkTypeMismatch) {
		t.Errorf("link type mismatch: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	src, err := capture.Open(w.Path(0))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if got, err := src.Next(); err != nil || got.CapLen != 100 || got.WireLen != 100 {
		t.Errorf("the record written: %d of %d octets, %v", got.CapLen, got.WireLen, err)
	}
}

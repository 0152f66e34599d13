package flows_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/damage"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// packetDecoder is what Decoder and Parallel have in common.
type packetDecoder interface {
	Packet(*capture.Packet)
	Close()
}

// jsonlOf decodes packets with workers workers (0: a plain Decoder) and
// returns the JSON Lines output.
func jsonlOf(t testing.TB, pkts []capture.Packet, workers int, recycle bool) []byte {
	t.Helper()
	var out []byte
	emit := func(r *flows.Record) {
		out = format.AppendJSON(out, format.Fields(r))
		out = append(out, '\n')
	}
	var dec packetDecoder
	if workers == 0 {
		dec = flows.NewDecoder(flows.Options{Recycle: recycle}, emit)
	} else {
		p, err := flows.NewParallel(flows.Options{Recycle: recycle}, workers, emit)
		if err != nil {
			t.Fatal(err)
		}
		dec = p
	}
	for i := range pkts {
		dec.Packet(&pkts[i])
	}
	dec.Close()
	return out
}

// jsonlWith decodes pkts with the Decoder newDec makes (Options.Recycle
// set) and returns the JSON Lines output; with preview, each FPDU line also
// carries its payload preview, which only the text output shows.
func jsonlWith(pkts []capture.Packet, opts flows.Options, newDec func(flows.Options, func(*flows.Record)) *flows.Decoder, preview bool) []byte {
	var out []byte
	opts.Recycle = true
	d := newDec(opts, func(r *flows.Record) {
		out = format.AppendJSON(out, format.Fields(r))
		if preview && r.FPDU != nil {
			out = fmt.Appendf(out, " preview %x", r.FPDU.Preview)
		}
		out = append(out, '\n')
	})
	for i := range pkts {
		d.Packet(&pkts[i])
	}
	d.Close()
	return out
}

// sameLines fails the test at the first line where got and want differ.
func sameLines(t *testing.T, name string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if !bytes.Equal(gl[i], wl[i]) {
			t.Fatalf("%s: line %d differs:\n got %s\nwant %s", name, i+1, gl[i], wl[i])
		}
	}
	t.Fatalf("%s: %d lines, want %d", name, len(gl), len(wl))
}

func checkSame(t *testing.T, name string, pkts []capture.Packet) {
	t.Helper()
	want := jsonlOf(t, pkts, 0, false)
	if len(pkts) > 1000 {
		t.Logf("%s: %d packets, %d records", name, len(pkts), bytes.Count(want, []byte("\n")))
	}
	for _, n := range []int{0, 1, 2, 3, 4} {
		// Odd worker counts reuse FPDU records (Options.Recycle).
		sameLines(t, fmt.Sprintf("%s, %d workers", name, n), jsonlOf(t, pkts, n, n%2 == 1 || n == 0), want)
	}
}

// TestParallelSameOutput (and Options.Recycle): every bundled capture, a generated 8-connection
// workload, all real captures interleaved packet by packet into one stream
// (many connections at once, 4-tuples reused) and damaged variants decode
// to the same JSON Lines with 1 to 4 workers as with one Decoder.
func TestParallelSameOutput(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	if len(files) < 20 {
		t.Fatalf("only %d bundled captures found", len(files))
	}
	var sources [][]byte
	var all [][]capture.Packet
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, data)
		pkts := testutil.ReadPackets(data)
		all = append(all, pkts)
		checkSame(t, filepath.Base(f), pkts)
	}

	var buf bytes.Buffer
	if err := synth.WritePerf(&buf, 8<<20, 3); err != nil {
		t.Fatal(err)
	}
	checkSame(t, "perf 8 MiB", testutil.ReadPackets(buf.Bytes()))

	checkSame(t, "interleaved", interleave(all))

	// Lengths a damaged header can claim: the workers' packet copies must
	// carry them whole.
	huge := append([]capture.Packet(nil), all[0]...)
	for i := range huge {
		if i%3 == 0 {
			huge[i].WireLen = 1<<32 - 1
			huge[i].PayloadWireLen = 1<<32 - 100
		}
	}
	checkSame(t, "huge wire lengths", huge)

	n := 200
	if testing.Short() {
		n = 40
	}
	for _, v := range damage.Variants(6, n, sources) {
		checkSame(t, v.Name, testutil.ReadPackets(v.Data))
	}
}

// interleave returns the captures' packets interleaved, packet i of every
// capture in turn, renumbered: many connections at once, 4-tuples reused.
func interleave(all [][]capture.Packet) []capture.Packet {
	var mixed []capture.Packet
	for i := 0; ; i++ {
		any := false
		for _, pk := range all {
			if i < len(pk) {
				p := pk[i]
				p.Frame = uint64(len(mixed) + 1)
				mixed = append(mixed, p)
				any = true
			}
		}
		if !any {
			return mixed
		}
	}
}

// tinySends returns a capture of conns connections, each sending n Sends of
// 0 to 31 octets coalesced into full segments: tens of FPDUs a packet, the
// most records per octet of capture.
func tinySends(t testing.TB, conns, n int) []byte {
	t.Helper()
	var sc synth.Scenario
	for i := 0; i < conns; i++ {
		c := synth.Conn{
			Initiator: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(1 + i)}), uint16(40000+i)),
			Responder: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 200, 0, 1}), 7174),
			Handshake: true,
			MPA: &synth.MPAParams{
				Request: synth.MPAFrame{Rev: 1, M: i%2 == 0, C: true},
				Reply:   synth.MPAFrame{Rev: 1, M: i%2 == 0, C: true},
			},
			MSS: 1460,
		}
		for k := 0; k < n; k++ {
			c.Ops = append(c.Ops, synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: k % 32})
		}
		sc.Conns = append(sc.Conns, c)
	}
	var buf bytes.Buffer
	if _, err := synth.Generate(sc, &buf, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestParallelParts: workers that hand their records to the merge in
// parts, after every record or every few (flows.SetSegRecords), give the
// output of one Decoder, through Packet and through DecodeChunks: every
// bundled capture, a capture of tiny FPDUs, and damaged variants.
func TestParallelParts(t *testing.T) {
	def := flows.SegRecords()
	defer flows.SetSegRecords(def)
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	var sources [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, data)
	}
	sources = append(sources, tinySends(t, 3, 1500))
	inputs := sources
	for _, v := range damage.Variants(9, 30, sources) {
		inputs = append(inputs, v.Data)
	}
	dir := t.TempDir()
	for i, data := range inputs {
		pkts := testutil.ReadPackets(data)
		want := jsonlOf(t, pkts, 0, false)
		path := filepath.Join(dir, fmt.Sprint(i, ".pcap"))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		wantSeq, _, _ := sequential(t, path, 0)
		for _, seg := range []int{1, 2, 7} {
			flows.SetSegRecords(seg)
			for _, n := range []int{2, 3} {
				sameLines(t, fmt.Sprintf("input %d, parts of %d, %d workers", i, seg, n), jsonlOf(t, pkts, n, n == 3), want)
			}
			if got, _, _, ok := chunked(t, path, 2, 0); ok {
				sameLines(t, fmt.Sprintf("input %d in chunks, parts of %d", i, seg), got, wantSeq)
			}
		}
		flows.SetSegRecords(def)
	}
}

// TestParallelPartsBounded: a 1 MiB round of FPDUs of a few octets holds
// tens of thousands of records. A worker hands them to the merge in parts
// of about flows.SegRecords, so that what waits for the merge (a few
// rounds' worth before parts: 400 MB on a 44 MB capture) is bounded by
// that rather than by the records a round holds.
func TestParallelPartsBounded(t *testing.T) {
	def := flows.SegRecords()
	defer flows.SetSegRecords(def)
	path := filepath.Join(t.TempDir(), "tiny.pcap")
	if err := os.WriteFile(path, tinySends(t, 2, 40000), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _, _ := sequential(t, path, 0)
	run := func() int {
		cr, err := capture.OpenChunks(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer cr.Close()
		var out []byte
		p, err := flows.NewParallel(flows.Options{Recycle: true}, 2, func(r *flows.Record) {
			out = format.AppendJSON(out, format.Fields(r))
			out = append(out, '\n')
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.DecodeChunks(context.Background(), cr); err != nil {
			t.Fatal(err)
		}
		sameLines(t, "tiny sends in chunks", out, want)
		return p.MaxPart()
	}
	// A packet of 1460 octets holds at most 61 FPDUs (24 octets at
	// least, and one cut at each end): a record each, and a message
	// record each for those that end a message.
	if got, most := run(), def-1+2*61; got > most {
		t.Errorf("a worker handed %d records at once, want at most %d", got, most)
	}
	flows.SetSegRecords(1 << 30)
	if got := run(); got < 8*def {
		t.Errorf("without parts, the largest round had %d records: the capture does not test parts", got)
	}
}

// TestParallelPayloadRefused: the replay hook needs one goroutine.
func TestParallelPayloadRefused(t *testing.T) {
	_, err := flows.NewParallel(flows.Options{Payload: func(*flows.Record, []byte) {}}, 2, func(*flows.Record) {})
	if !errors.Is(err, flows.ErrParallelPayload) {
		t.Fatalf("err = %v, want ErrParallelPayload", err)
	}
}

// sequential decodes path with one Decoder through a Source, as iwarpdump
// does: the JSON Lines, the packets read and the file error.
func sequential(t testing.TB, path string, limit uint64) ([]byte, uint64, string) {
	t.Helper()
	var out []byte
	emit := func(r *flows.Record) {
		out = format.AppendJSON(out, format.Fields(r))
		out = append(out, '\n')
	}
	src, err := capture.Open(path)
	if err != nil {
		return nil, 0, "open: " + err.Error()
	}
	defer src.Close()
	dec := flows.NewDecoder(flows.Options{}, emit)
	var n uint64
	msg := ""
	for limit == 0 || n < limit {
		p, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			msg = err.Error()
			break
		}
		n++
		dec.Packet(&p)
	}
	dec.Close()
	return out, n, msg
}

// chunked decodes path with DecodeChunks.
func chunked(t testing.TB, path string, workers int, limit uint64) ([]byte, uint64, string, bool) {
	t.Helper()
	cr, err := capture.OpenChunks(path, limit)
	if errors.Is(err, capture.ErrNotChunked) {
		return nil, 0, "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	var out []byte
	p, err := flows.NewParallel(flows.Options{Recycle: true}, workers, func(r *flows.Record) {
		out = format.AppendJSON(out, format.Fields(r))
		out = append(out, '\n')
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := p.DecodeChunks(context.Background(), cr)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	return out, n, msg, true
}

// TestDecodeChunksSameOutput: reading pcap and pcapng files in shared
// chunks gives the records, packet count and damage error of the
// sequential Source path: every bundled capture, a generated
// multi-connection workload larger than a chunk (in pcap and in pcapng), a
// packet limit, and damaged variants.
func TestDecodeChunksSameOutput(t *testing.T) {
	dir := t.TempDir()
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	var buf bytes.Buffer
	if err := synth.WritePerf(&buf, 6<<20, 4); err != nil {
		t.Fatal(err)
	}
	perf := filepath.Join(dir, "perf.pcap")
	if err := os.WriteFile(perf, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, perf)
	// The same workload as pcapng, read in chunks of repacked packets.
	perfng := filepath.Join(dir, "perf-ng.pcap")
	if err := os.WriteFile(perfng, toPcapng(t, buf.Bytes()), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, perfng)
	var sources [][]byte
	for _, f := range files {
		data, _ := os.ReadFile(f)
		sources = append(sources, data)
	}
	n := 150
	if testing.Short() {
		n = 30
	}
	for _, v := range damage.Variants(8, n, sources) {
		p := filepath.Join(dir, v.Name+".pcap")
		if err := os.WriteFile(p, v.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	// A damaged copy of the big workload: cut in the middle of a record,
	// and a record claiming an absurd length.
	cut := filepath.Join(dir, "perf-cut.pcap")
	os.WriteFile(cut, buf.Bytes()[:buf.Len()*2/3], 0o644)
	files = append(files, cut)

	chunkedFiles := 0
	for _, f := range files {
		for _, limit := range []uint64{0, 7} {
			want, wn, werr := sequential(t, f, limit)
			for _, w := range []int{1, 2, 3} {
				got, gn, gerr, ok := chunked(t, f, w, limit)
				if !ok {
					break
				}
				if w == 1 && limit == 0 {
					chunkedFiles++
				}
				if gn != wn || gerr != werr {
					t.Fatalf("%s, %d workers, limit %d: %d packets, error %q; sequential %d, %q", filepath.Base(f), w, limit, gn, gerr, wn, werr)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%s, %d workers, limit %d: output differs from the sequential decode", filepath.Base(f), w, limit)
				}
			}
		}
	}
	if chunkedFiles < 40 {
		t.Fatalf("only %d files were read in chunks", chunkedFiles)
	}
}

// toPcapng rewrites the packets of a pcap file as pcapng, with pcapgo's
// writer (nanosecond timestamps).
func toPcapng(t testing.TB, pcap []byte) []byte {
	r, err := pcapgo.NewReader(bytes.NewReader(pcap))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w, err := pcapgo.NewNgWriter(&out, r.LinkType())
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// FuzzParallel: any pcap file decodes to the same records, packet count and
// damage error with 2 and 3 workers, fed packet by packet (the balancer,
// the batches and the merge) or reading the file in shared chunks (the
// owners and offsets the reader notes, WalkOwned), as with one Decoder.
func FuzzParallel(f *testing.F) {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 16<<10 {
			f.Add(b)
		}
	}
	dir := f.TempDir()
	def := flows.SegRecords()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		path := filepath.Join(dir, "f.pcap")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		// Three workers hand their records over in parts of two, and
		// their merge packs every record it holds (heldpack.go).
		defer flows.SetSegRecords(def)
		defer flows.SetHeldPackAt(flows.SetHeldPackAt(1024))
		parts := func(w int) {
			if w == 3 {
				flows.SetSegRecords(2)
				flows.SetHeldPackAt(0)
			} else {
				flows.SetSegRecords(def)
				flows.SetHeldPackAt(1024)
			}
		}
		want, wn, werr := sequential(t, path, 0)
		for _, w := range []int{2, 3} {
			parts(w)
			if got, gn, gerr, ok := chunked(t, path, w, 0); ok && (gn != wn || gerr != werr || !bytes.Equal(got, want)) {
				t.Fatalf("%d workers, chunks: %d packets, error %q; sequential %d, %q; same records %v", w, gn, gerr, wn, werr, bytes.Equal(got, want))
			}
		}
		pkts := testutil.ReadPackets(data)
		parts(2)
		one := jsonlOf(t, pkts, 0, false)
		for _, w := range []int{2, 3} {
			parts(w)
			sameLines(t, fmt.Sprintf("%d workers, packets", w), jsonlOf(t, pkts, w, w == 3), one)
		}
		// One Decoder packing every record it holds (parts(3)).
		sameLines(t, "one Decoder packing its held records", jsonlOf(t, pkts, 0, true), one)
		// Workers rendering the records themselves (SetFormat), some
		// left to emit, in parts of two; and through DecodeChunks.
		rd := renderer{name: "jsonl, some declined", decline: true}
		sameLines(t, "3 workers rendering", renderedPar(t, pkts, 3, rd), renderedOne(pkts, rd))
		parts(2)
		if got, ok := renderedChunks(t, path, 2, renderers[1]); ok {
			sameLines(t, "2 workers rendering text, chunks", got, renderedOne(pkts, renderers[1]))
		}
	})
}

// TestParallelBoxesComeBack: the FPDU boxes the merge emits go back to
// their workers, who reuse them: on small messages (some 40 FPDUs a
// packet) the two workers allocate no more boxes for 16 MiB than for 4
// (some 4,000-4,400 either way, in flight at once). The merge had dropped
// the boxes it gave back while a worker's channel was full, and a worker
// those past 1,024 in its free list: 11,900 boxes made for 4 MiB, 41,800
// for 16 MiB.
func TestParallelBoxesComeBack(t *testing.T) {
	made := func(size int64) int {
		var buf bytes.Buffer
		if err := synth.WriteSmall(&buf, size, 1); err != nil {
			t.Fatal(err)
		}
		p, err := flows.NewParallel(flows.Options{Recycle: true}, 2, func(*flows.Record) {})
		if err != nil {
			t.Fatal(err)
		}
		for _, pk := range testutil.ReadPackets(buf.Bytes()) {
			p.Packet(&pk)
		}
		p.Close()
		return p.BoxesMade()
	}
	small, big := made(4<<20), made(16<<20)
	t.Logf("boxes made: %d for 4 MiB, %d for 16 MiB", small, big)
	if big > small+small/4+256 || big > 3*flows.MaxFreeBoxes {
		t.Errorf("boxes made: %d for 4 MiB, %d for 16 MiB", small, big)
	}
}

package flows_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/damage"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// renderer renders records as iwarpdump writes them: JSON Lines
// (format.JSONWriter) or text lines (format.AppendText with topts).
type renderer struct {
	name string
	text bool
	o    format.TextOptions
	// decline: the workers' Format leaves the records of every third
	// frame to emit, so that the two kinds of output interleave.
	decline bool
	// keep: FPDU and message records are written only for odd TCP
	// stream numbers (odd connection ids without one) and frames not
	// divisible by 5; with workers the merge, or a worker once the merge
	// has numbered the connection, judges the first (SetKeep), the
	// workers' tag the frames.
	keep bool
}

var renderers = []renderer{
	{name: "jsonl"},
	{name: "text", text: true},
	{name: "text -v", text: true, o: format.TextOptions{Verbose: true}},
	{name: "text -q -X", text: true, o: format.TextOptions{Quiet: true, Hex: true}},
	{name: "jsonl, some declined", decline: true},
	{name: "text, kept by connection", text: true, keep: true},
}

// kept reports whether a renderer with keep writes r, numbered as the
// merge numbers it.
func kept(r *flows.Record) bool {
	return r.Type != flows.RecFPDU && r.Type != flows.RecMessage || keptID(r) && r.Frame%5 != 0
}

// keptID is the part of kept the merge judges: an odd TCP stream number,
// or for a connection without one (RoCEv2, SCTP) an odd id.
func keptID(r *flows.Record) bool {
	if s, ok := r.TCPStream(); ok {
		return s%2 == 1
	}
	return r.Conn%2 == 1
}

// emitter returns an emit that appends what rd renders of each record to
// *out.
func (rd renderer) emitter(out *[]byte) func(*flows.Record) {
	jw := new(format.JSONWriter)
	return func(r *flows.Record) {
		if rd.keep && !kept(r) {
			return
		}
		if rd.text {
			*out = format.AppendText(*out, r, rd.o)
			return
		}
		*out = append(jw.Append(*out, r), '\n')
	}
}

// newFormat is the Format for each worker.
func (rd renderer) newFormat() flows.Format {
	var f flows.Format
	if rd.text {
		f = rd.o.Format
	} else {
		f = new(format.JSONWriter).Format
	}
	if !rd.decline {
		return f
	}
	return func(dst []byte, r *flows.Record) ([]byte, int, bool) {
		if r.Frame%3 == 0 {
			return append(dst, "left to emit"...), -1, false
		}
		return f(dst, r)
	}
}

// renderedOne renders what one Decoder emits for pkts.
func renderedOne(pkts []capture.Packet, rd renderer) []byte {
	var out []byte
	d := flows.NewDecoder(flows.Options{Recycle: true}, rd.emitter(&out))
	for i := range pkts {
		d.Packet(&pkts[i])
	}
	d.Close()
	return out
}

// renderedPar renders pkts with workers workers that format the records
// themselves (SetFormat), the merge writing what they rendered and
// emitting the rest into the same output.
func renderedPar(t testing.TB, pkts []capture.Packet, workers int, rd renderer) []byte {
	out, _ := renderedWith(t, pkts, workers, rd)
	return out
}

// renderedWith is renderedPar, returning the Parallel too, closed.
func renderedWith(t testing.TB, pkts []capture.Packet, workers int, rd renderer) ([]byte, *flows.Parallel) {
	t.Helper()
	var out []byte
	p, err := flows.NewParallel(flows.Options{Recycle: true}, workers, rd.emitter(&out))
	if err != nil {
		t.Fatal(err)
	}
	p.SetFormat(rd.newFormat, func(b []byte) { out = append(out, b...) })
	rd.setKeep(t, p)
	for i := range pkts {
		p.Packet(&pkts[i])
	}
	p.Close()
	return out, p
}

// setKeep gives p the SetKeep of a renderer with keep: the workers drop
// the records of frames divisible by 5 and tag the others with their
// frame, which the merge checks comes back.
func (rd renderer) setKeep(t testing.TB, p *flows.Parallel) {
	if !rd.keep {
		return
	}
	p.SetKeep(func() func(*flows.Record) (uint64, bool) {
		return func(r *flows.Record) (uint64, bool) { return r.Frame*7 + 1, r.Frame%5 != 0 }
	}, func(r *flows.Record, tag uint64) bool {
		if tag != r.Frame*7+1 {
			panic(fmt.Sprintf("frame %d came with tag %d", r.Frame, tag))
		}
		return keptID(r)
	})
}

// renderedChunks is renderedPar through DecodeChunks.
func renderedChunks(t testing.TB, path string, workers int, rd renderer) ([]byte, bool) {
	t.Helper()
	cr, err := capture.OpenChunks(path, 0)
	if errors.Is(err, capture.ErrNotChunked) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	var out []byte
	p, err := flows.NewParallel(flows.Options{Recycle: true}, workers, rd.emitter(&out))
	if err != nil {
		t.Fatal(err)
	}
	p.SetFormat(rd.newFormat, func(b []byte) { out = append(out, b...) })
	rd.setKeep(t, p)
	// A damaged file's error: the packets before the damage are those
	// testutil.ReadPackets reads.
	_, _ = p.DecodeChunks(context.Background(), cr)
	return out, true
}

// TestParallelFormat: workers that render their FPDU and message records
// themselves (SetFormat), the merge putting the connection ids in, write
// the octets one Decoder's records render to, in JSON Lines and in text,
// with some records left to emit: every bundled capture, a capture of tiny
// FPDUs and damaged variants, through Packet and DecodeChunks, with parts
// of the default size and of 1 and 3 records (the merge holds records
// past the part whose buffer they were rendered in, which goes back to
// its worker).
func TestParallelFormat(t *testing.T) {
	def := flows.SegRecords()
	defer flows.SetSegRecords(def)
	files := bundled(t)
	if len(files) < 20 {
		t.Fatalf("only %d bundled captures found", len(files))
	}
	var inputs [][]byte
	var all [][]capture.Packet
	for _, b := range files {
		inputs = append(inputs, b.data)
		all = append(all, b.pkts)
	}
	inputs = append(inputs, tinySends(t, 3, 1500))
	n := 20
	if testing.Short() {
		n = 5
	}
	for _, v := range damage.Variants(11, n, inputs[:len(files)]) {
		inputs = append(inputs, v.Data)
	}
	dir := t.TempDir()
	compared := 0
	for i := -1; i < len(inputs); i++ {
		// Input -1: the bundled captures interleaved, some 50
		// connections at once, through Packet only.
		pkts, path := interleave(all), ""
		if i >= 0 {
			pkts = testutil.ReadPackets(inputs[i])
			path = filepath.Join(dir, fmt.Sprint(i, ".pcap"))
			if err := os.WriteFile(path, inputs[i], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		rds, segs := renderers, []int{def, 1, 3}
		if i >= len(files) {
			// Damaged variants and tiny FPDUs: fewer modes.
			rds, segs = []renderer{renderers[1], renderers[4], renderers[5]}, []int{2}
		}
		for _, rd := range rds {
			want := renderedOne(pkts, rd)
			for _, seg := range segs {
				flows.SetSegRecords(seg)
				for _, w := range []int{2, 3} {
					name := fmt.Sprintf("input %d (%d packets), %s, parts of %d, %d workers", i, len(pkts), rd.name, seg, w)
					sameLines(t, name, renderedPar(t, pkts, w, rd), want)
					compared++
				}
				if path == "" {
					continue
				}
				if got, ok := renderedChunks(t, path, 2, rd); ok {
					sameLines(t, fmt.Sprintf("input %d in chunks, %s, parts of %d", i, rd.name, seg), got, want)
					compared++
				}
			}
			flows.SetSegRecords(def)
		}
	}
	t.Logf("%d inputs, %d outputs compared", len(inputs)+1, compared)
}

// TestParallelFormatCrowded: while the merge holds many records (here 600
// connections each in the middle of a 64 KiB RDMA Write, whose FPDUs wait
// for the message's record), the workers hand their records over
// unrendered, for the merge to pack, rather than holding their rendered
// octets, hundreds each: the most held rendered stays below heldPackAt
// (1,024) and what can be in flight when the merge gets crowded (2 workers,
// 6 parts of up to 512 records each: 4 waiting, the merge's and the
// worker's).
func TestParallelFormatCrowded(t *testing.T) {
	var buf bytes.Buffer
	if err := synth.WriteStress(&buf, synth.StressOpen, 600, 1); err != nil {
		t.Fatal(err)
	}
	pkts := testutil.ReadPackets(buf.Bytes())
	rd := renderers[0]
	out, p := renderedWith(t, pkts, 2, rd)
	sameLines(t, "open 600", out, renderedOne(pkts, rd))
	held := bytes.Count(out, []byte(`"type":"fpdu"`))
	t.Logf("%d FPDU records, at most %d held rendered", held, p.MaxLites())
	if p.MaxLites() > 1024+2*6*512 || held < 12000 {
		t.Fatalf("%d held rendered at once (of %d FPDU records), want at most 7,168", p.MaxLites(), held)
	}
}

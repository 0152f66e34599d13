package report

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/damage"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// outputs is everything a Collector writes: the four tables, JUnit, SARIF
// and HTML, and its worst severity.
func outputs(t testing.TB, c *Collector) []byte {
	t.Helper()
	return writeOutputs(t, c, true)
}

// writeOutputs is outputs, with the HTML report or without it (a
// Collector that keeps no timeline, NoTimeline).
func writeOutputs(t testing.TB, c *Collector, html bool) []byte {
	t.Helper()
	var b bytes.Buffer
	ws := []func(io.Writer) error{c.WriteConn, c.WriteOps, c.WriteFindings, c.WriteLatency,
		func(w io.Writer) error { return c.WriteJUnit(w, "x") },
		func(w io.Writer) error { return c.WriteSARIF(w, "x", "x.pcap") }}
	if html {
		ws = append(ws, func(w io.Writer) error { return c.WriteHTML(w, "x") })
	}
	for _, w := range ws {
		if err := w(&b); err != nil {
			t.Fatal(err)
		}
	}
	s, ok := c.Worst()
	b.WriteString(s.String())
	if ok {
		b.WriteString(" worst")
	}
	return b.Bytes()
}

// counting is a flows.Local that counts what its Partial takes.
type counting struct {
	*Partial
	taken *int
}

func (c counting) Take(r *flows.Record) bool {
	ok := c.Partial.Take(r)
	if ok {
		*c.taken++
	}
	return ok
}

// viaPartials decodes pkts with a flows.Parallel of n workers whose
// Partials take what they may, and returns the Collector's outputs and how
// many FPDU records the Partials took and the merge emitted.
func viaPartials(t testing.TB, pkts []capture.Packet, n int) (out []byte, taken, emitted int) {
	return viaPartialsTL(t, pkts, n, true)
}

// viaPartialsTL is viaPartials with a Collector that keeps a timeline or
// not (NoTimeline, and then no HTML report in the outputs).
func viaPartialsTL(t testing.TB, pkts []capture.Packet, n int, tl bool) (out []byte, taken, emitted int) {
	c := NewCollector()
	if !tl {
		c.NoTimeline()
	}
	takes := make([]int, n)
	k := 0
	par, err := flows.NewParallel(flows.Options{Recycle: true}, n, func(r *flows.Record) {
		if r.Type == flows.RecFPDU || r.Type == flows.RecMessage {
			emitted++
		}
		c.Add(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	par.SetLocal(func() flows.Local {
		l := counting{c.Local().(*Partial), &takes[k]}
		k++
		return l
	}, c.Absorb)
	for i := range pkts {
		par.Packet(&pkts[i])
	}
	par.Close()
	for _, x := range takes {
		taken += x
	}
	return writeOutputs(t, c, tl), taken, emitted
}

// direct decodes pkts with one Decoder that feeds a Collector every record.
func direct(t testing.TB, pkts []capture.Packet) []byte {
	return directTL(t, pkts, true)
}

// directTL is direct with the HTML report in the outputs or not.
func directTL(t testing.TB, pkts []capture.Packet, html bool) []byte {
	c := NewCollector()
	d := flows.NewDecoder(flows.Options{Recycle: true}, c.Add)
	for i := range pkts {
		d.Packet(&pkts[i])
	}
	d.Close()
	return writeOutputs(t, c, html)
}

// TestPartialsSameOutput: a Collector fed by Partials in the workers of a
// flows.Parallel (what iwarpdump -j N -q -z does) writes exactly what a
// Collector fed every record by one Decoder writes: every table, JUnit,
// SARIF and HTML (with its throughput chart), on every bundled capture, a
// synth workload with markers in half its connections, and damaged
// variants. On the workload the Partials must take most FPDUs, or the test
// would prove little.
func TestPartialsSameOutput(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	if len(files) < 20 {
		t.Fatalf("only %d bundled captures", len(files))
	}
	var sources [][]byte
	check := func(name string, pkts []capture.Packet) (taken, emitted int) {
		t.Helper()
		want := direct(t, pkts)
		for _, n := range []int{2, 3} {
			got, tk, em := viaPartials(t, pkts, n)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s, %d workers: outputs differ from one Decoder's\n got %q\nwant %q", name, n, clip(got), clip(want))
			}
			taken, emitted = tk, em
		}
		// Without a timeline (NoTimeline: no HTML report), the Partials
		// take FPDUs from the first; the tables are the same.
		got, _, _ := viaPartialsTL(t, pkts, 2, false)
		if want := directTL(t, pkts, false); !bytes.Equal(got, want) {
			t.Fatalf("%s, 2 workers, no timeline: outputs differ from one Decoder's\n got %q\nwant %q", name, clip(got), clip(want))
		}
		return taken, emitted
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, data)
		check(filepath.Base(f), testutil.ReadPackets(data))
	}
	var buf bytes.Buffer
	if err := synth.WritePerf(&buf, 8<<20, 5); err != nil {
		t.Fatal(err)
	}
	taken, emitted := check("perf 8 MiB", testutil.ReadPackets(buf.Bytes()))
	// The workers run ahead of the merge: until the merge has added the
	// first FPDU (the timeline's origin), the Partials take nothing. The
	// rounds in flight hold at most about 2 MiB.
	t.Logf("perf 8 MiB: the Partials took %d FPDU and message records, the merge emitted %d", taken, emitted)
	if taken < emitted {
		t.Errorf("perf 8 MiB: the Partials took %d FPDU and message records, the merge emitted %d", taken, emitted)
	}
	// Small messages: as many message records as FPDUs.
	buf.Reset()
	if err := synth.WriteSmall(&buf, 2<<20, 5); err != nil {
		t.Fatal(err)
	}
	taken, emitted = check("small messages 2 MiB", testutil.ReadPackets(buf.Bytes()))
	t.Logf("small messages 2 MiB: the Partials took %d FPDU and message records, the merge emitted %d", taken, emitted)
	if taken < 4*emitted {
		t.Errorf("small messages 2 MiB: the Partials took %d FPDU and message records, the merge emitted %d", taken, emitted)
	}
	// Connections each in the middle of a Write, all open at once: until
	// their message records come, every record after the first FPDU waits
	// in frame order, the Collector's timeline with no origin. Partials
	// that need none (NoTimeline) take the FPDUs all the same.
	buf.Reset()
	if err := synth.WriteStress(&buf, synth.StressOpen, 200, 1); err != nil {
		t.Fatal(err)
	}
	open := testutil.ReadPackets(buf.Bytes())
	check("200 connections open at once", open)
	_, takenTL, _ := viaPartials(t, open, 2)
	_, taken, emitted = viaPartialsTL(t, open, 2, false)
	t.Logf("200 connections open at once: the Partials took %d FPDU and message records (%d with a timeline), the merge emitted %d", taken, takenTL, emitted)
	if taken <= takenTL || 10*emitted > taken {
		t.Errorf("200 connections open at once, no timeline: the Partials took %d FPDU and message records (%d with a timeline), the merge emitted %d", taken, takenTL, emitted)
	}
	// Connections reset 10 s apart, which retire (flows/settle.go): the
	// Partials flush them when they retire, and the Collector absorbs
	// that before their summaries.
	var conns []synth.Conn
	for i := range 60 {
		conns = append(conns, synth.Conn{
			Initiator:  netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}), uint16(40000+i)),
			Responder:  netip.MustParseAddrPort("10.200.0.1:7174"),
			Handshake:  true,
			StartDelay: time.Duration(i) * 10 * time.Second,
			MPA:        &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}},
			Ops:        []synth.Op{{Dir: synth.I2R, Kind: synth.Write, Size: 5000, STag: 1}, {Dir: synth.R2I, Kind: synth.Send, Size: 8}},
			Close:      synth.Close{Kind: synth.CloseRST},
		})
	}
	buf.Reset()
	if _, err := synth.Generate(synth.Scenario{Conns: conns}, &buf, nil); err != nil {
		t.Fatal(err)
	}
	pkts := testutil.ReadPackets(buf.Bytes())
	check("connections reset 10 s apart, which retire", pkts)
	c := NewCollector()
	d := flows.NewDecoder(flows.Options{Recycle: true}, c.Add)
	d.SetLocal(c.Local(), c.Absorb)
	for i := range pkts {
		d.Packet(&pkts[i])
	}
	d.Close()
	if got, want := outputs(t, c), direct(t, pkts); !bytes.Equal(got, want) {
		t.Fatalf("connections reset 10 s apart, one Decoder with a Partial: outputs differ\n got %q\nwant %q", clip(got), clip(want))
	}

	n := 100
	if testing.Short() {
		n = 20
	}
	for _, v := range damage.Variants(11, n, sources) {
		check(v.Name, testutil.ReadPackets(v.Data))
	}
}

// clip shortens an output for a failure message.
func clip(b []byte) []byte {
	if len(b) > 600 {
		return b[:600]
	}
	return b
}

// FuzzPartial feeds arbitrary record streams, in order, to a Collector
// directly and to a second one through a Partial (which takes what it may,
// the rest going to Add, then everything flushed and absorbed at the end):
// both must write the same, and the same as a Collector that packs no rows
// (rowpack.go) and, the HTML report aside, one whose Partial needs no
// timeline (NoTimeline). The streams have timestamps that go back,
// connections beyond the Collector's cap, and unknown directions.
//
// A Collector told that connections ended (Ends) at arbitrary records,
// whose later records revive their rows, writes the same too.
func FuzzPartial(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01\x00\x01\x23\x00\x10\x00\x01" + "\x02\x00\x01\x00\x00\x40\x00\x01" + "\x02\x00\x02\x05\x05\xdc\x80\x01" + "\x02\x00\x01\x00\x00\x40\xff\x01"))
	f.Add(bytes.Repeat([]byte("\x02\x03\x02\x01\x01\x00\x7f\xff\x02\x01\x01\xc8\x00\x01\x80\x00\x01\x04\x01\x40\x00\x01\x00\x03"), 30))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<13 {
			return
		}
		a, b, c, k, e := NewCollector(), NewCollector(), NewCollector(), NewCollector(), NewCollector()
		c.NoTimeline() // its Partial takes FPDUs before any timeline
		k.keepRows = true
		for _, x := range []*Collector{a, b, c, k, e} {
			x.maxConns, x.maxFindings = 3, 4
		}
		p, pc := b.Local().(*Partial), c.Local().(*Partial)
		ends := e.Ends()
		for _, r := range fuzzRecords(data) {
			a.Add(r)
			k.Add(r)
			// e is told a connection ended after any record of an
			// odd frame: the records that come after revive its row.
			e.Add(r)
			if r.Frame%2 == 1 {
				if v := ends.Flush(r.Conn); v != nil {
					e.Absorb(r.Conn, v)
				}
			}
			if !p.Take(r) {
				b.Add(r)
			}
			if !pc.Take(r) {
				c.Add(r)
			}
		}
		for conn := -1; conn < 5; conn++ {
			if v := p.Flush(conn); v != nil {
				b.Absorb(conn, v)
			}
			if v := pc.Flush(conn); v != nil {
				c.Absorb(conn, v)
			}
		}
		// a's outputs, rendered once (the HTML report is most of a run).
		want := outputs(t, a)
		if got := outputs(t, k); !bytes.Equal(want, got) {
			t.Fatalf("rows packed:\n%s\nrows kept whole:\n%s", want, got)
		}
		if got := outputs(t, e); !bytes.Equal(got, want) {
			t.Fatalf("told of ends (Ends):\n%s\ndirectly:\n%s", got, want)
		}
		if got := outputs(t, b); !bytes.Equal(got, want) {
			t.Fatalf("through a Partial:\n%s\ndirectly:\n%s", got, want)
		}
		if got, want := writeOutputs(t, c, false), writeOutputs(t, a, false); !bytes.Equal(got, want) {
			t.Fatalf("through a Partial, no timeline:\n%s\ndirectly:\n%s", got, want)
		}
		if !reflect.DeepEqual(b.tl.b, a.tl.b) || b.tl.width != a.tl.width {
			t.Fatalf("timeline %v %v, directly %v %v", b.tl.width, b.tl.b, a.tl.width, a.tl.b)
		}
	})
}

// TestTimelineAbsorb splits samples at random between timelines with one
// origin and absorbs them into one: its buckets and width are those of a
// timeline that added every sample, whatever the split, including samples
// before the origin and spans that force merges.
func TestTimelineAbsorb(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, span := range []time.Duration{time.Millisecond, 300 * time.Millisecond, 3 * time.Second, 90 * time.Hour} {
		for round := 0; round < 20; round++ {
			var all timeline
			parts := make([]timeline, 1+rng.IntN(4))
			tlAdd(&all, t0, flows.DirI2R, 1)
			for i := range parts {
				parts[i] = timeline{started: true, t0: t0, width: FirstBucketWidth}
			}
			for range 2000 {
				at := time.Duration(rng.Int64N(int64(span))) - span/10
				dir, n := flows.Dir(rng.IntN(4)), uint64(rng.IntN(9000))
				ts := t0.Add(at)
				tlAdd(&all, ts, dir, n)
				tlAdd(&parts[rng.IntN(len(parts))], ts, dir, n)
			}
			var got timeline
			tlAdd(&got, t0, flows.DirI2R, 1)
			for i := range parts {
				got.absorb(&parts[i])
				if len(got.b) > MaxBuckets {
					t.Fatalf("%d buckets", len(got.b))
				}
			}
			if got.width != all.width || !reflect.DeepEqual(got.b, all.b) {
				t.Fatalf("span %v: absorbed width %v, %d buckets; added %v, %d buckets", span, got.width, len(got.b), all.width, len(all.b))
			}
			// The cache works after an absorb.
			tlAdd(&got, t0, flows.DirR2I, 5)
			tlAdd(&all, t0, flows.DirR2I, 5)
			if !reflect.DeepEqual(got.b, all.b) {
				t.Fatalf("span %v: an add after absorb differs", span)
			}
		}
	}
}

// TestPartialTakeNoAllocs: taking the FPDUs of a settled connection, in a
// worker's hot path, allocates nothing.
func TestPartialTakeNoAllocs(t *testing.T) {
	c := NewCollector()
	p := c.Local().(*Partial)
	first := fpduRec(0, 1, 0, flows.DirI2R, rdmap.OpReadRequest, 0)
	c.Add(first) // starts the timeline and settles the connection
	if p.Take(first) {
		t.Fatal("took the settling record")
	}
	recs := []*flows.Record{
		fpduRec(0, 2, 100*time.Microsecond, flows.DirR2I, rdmap.OpReadResponse, 64),
		fpduRec(0, 3, 200*time.Microsecond, flows.DirI2R, rdmap.OpSend, 1024),
	}
	for _, r := range recs {
		if !p.Take(r) {
			t.Fatalf("did not take %+v", r)
		}
	}
	n := testing.AllocsPerRun(1000, func() {
		for _, r := range recs {
			p.Take(r)
		}
	})
	if n != 0 {
		t.Fatalf("Take allocates %v times per batch", n)
	}
}

// BenchmarkPartialTake: ns per FPDU record a worker counts itself.
func BenchmarkPartialTake(b *testing.B) {
	_, recs := collect(b, "crc_v2_iwtest_ops")
	c := NewCollector()
	p := c.Local().(*Partial)
	for _, r := range recs {
		c.Add(r)
		p.Take(r)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Take(recs[i%len(recs)])
	}
}

// TestConnTableMidstreamMarkers: a connection captured without its MPA
// exchange, markers one way only (synth's midstream-markers-r2i), lists
// its ends in the order of their first packet and shows the CRC and
// markers its FPDUs carry, oriented from the end listed first, with one
// Decoder and with the Partials of two workers. The
// generator's truth says which side sent markers.
func TestConnTableMidstreamMarkers(t *testing.T) {
	pcap, truth := testutil.SynthNamed(t, "midstream-markers-r2i", 1)
	from := testutil.MarkerSender(truth)
	pkts := testutil.ReadPackets(pcap)
	one := direct(t, pkts)
	two, _, _ := viaPartialsTL(t, pkts, 2, true)
	if !bytes.Equal(one, two) {
		t.Errorf("one Decoder and two workers' Partials differ")
	}
	_, rows := tableRows(t, string(one))
	if len(rows) != 1 || len(rows[0]) < 7 {
		t.Fatalf("rows %q", rows)
	}
	row := rows[0]
	// The ends in the order of their first packet, as the conn line and
	// the JSON Lines endpoints give them.
	if first := pkts[0].Src.String() + " (?)"; row[1] != first {
		t.Errorf("row's first end %q, want the first packet's source %q", row[1], first)
	}
	want := "off/on"
	if strings.TrimSuffix(row[1], " (?)") == from {
		want = "on/off"
	}
	if !strings.HasSuffix(row[1], " (?)") || row[4] != "-" || row[5] != "on" || row[6] != want {
		t.Errorf("row %q: want the initiator unknown (?), rev -, CRC on, markers %s (markers from %s)", row, want, from)
	}
}

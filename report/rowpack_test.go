package report

import (
	"bytes"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// fillRow sets every field of the struct v points to, and of the structs
// and slices in it, to a value that differs from the zero value and from
// the other fields' (seed counts the values given), so that a field
// packRowTo forgets is seen. The fields a packable row keeps zero (other,
// slow timestamps, those of a transport other than iWARP) and the opcode
// tally (set by the caller) are left.
func fillRow(t *testing.T, v reflect.Value, seed *int) {
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		switch name {
		case "other", "fSlow", "lSlow", "ft", "lt", "ops", "ext", "native", "lids":
			continue
		}
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
		*seed++
		n := *seed
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			if f.Type() == reflect.TypeFor[time.Duration]() {
				f.SetInt(int64(n) * int64(time.Millisecond))
			} else {
				f.SetInt(int64(n * 1000003))
			}
		case reflect.Int32:
			f.SetInt(int64(n * 1009))
		case reflect.Uint8, reflect.Uint16:
			f.SetUint(uint64(n))
		case reflect.Uint64:
			f.SetUint(uint64(n) << 40)
		case reflect.Float64:
			f.SetFloat(float64(n) + 0.25)
		case reflect.String:
			f.SetString("value " + string(rune('a'+n%26)))
		case reflect.Array:
			for k := range f.Len() {
				f.Index(k).SetInt(int64(n*10 + k))
			}
		case reflect.Slice:
			s := reflect.MakeSlice(f.Type(), 2, 2)
			for k := range 2 {
				e := s.Index(k)
				if e.Kind() == reflect.Struct {
					fillRow(t, e.Addr().Elem(), seed)
				} else {
					e.SetUint(uint64(n*10 + k))
				}
			}
			f.Set(s)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
			fillRow(t, f.Elem(), seed)
		case reflect.Struct:
			if f.Type() == reflect.TypeFor[netip.AddrPort]() {
				a := netip.AddrFrom4([4]byte{10, 0, byte(n), 1})
				if n%2 == 0 {
					a = netip.MustParseAddr("2001:db8::1").Next()
				}
				f.Set(reflect.ValueOf(netip.AddrPortFrom(a, uint16(n*100))))
				continue
			}
			fillRow(t, f.Addr().Elem(), seed)
		default:
			t.Fatalf("field %s: kind %v the test does not fill", name, f.Kind())
		}
	}
}

// TestPackRow: a row packed (rowpack.go) unpacks to the row it was: one
// with every field of connStats set (a field added and not packed fails
// it), with a dense or a packed opcode tally and each way initiator and
// responder relate to a and b; and the rows of every bundled capture. A
// packed row cut short unpacks with an error, and no panic.
func TestPackRow(t *testing.T) {
	c := NewCollector()
	var rows []*connStats
	for k := range 6 {
		cs := new(connStats)
		seed := k * 100
		fillRow(t, reflect.ValueOf(cs).Elem(), &seed)
		switch k % 3 {
		case 0:
			cs.initiator, cs.responder = cs.a, cs.b
		case 1:
			cs.initiator, cs.responder = cs.b, cs.a
		}
		if k == 5 {
			cs.initiator, cs.responder = netip.AddrPort{}, netip.AddrPort{}
		}
		if k%2 == 0 {
			cs.ops.open = new(opHist)
			cs.ops.open[1][3] = opCount{5, 500}
			cs.ops.open[2][opUndecoded] = opCount{1, 0}
		} else {
			cs.ops.packed = true
			cs.ops.cells = []opCell{{opCount{7, 70}, 2, 4}, {opCount{1, 1}, 1, 0}}
		}
		rows = append(rows, cs)
	}
	for _, f := range bundled(t) {
		kc := NewCollector()
		kc.keepRows = true
		for _, r := range testutil.Decode(t, filepath.Join("..", "testdata", f), flows.Options{}) {
			kc.Add(r)
		}
		for _, cs := range kc.conns {
			if packable(cs) {
				rows = append(rows, cs)
			}
		}
	}
	var b []byte
	for _, cs := range rows {
		if !packable(cs) {
			t.Fatalf("row %d not packable", cs.id)
		}
		b = c.packRowTo(b, cs)
	}
	t.Logf("%d rows in %d octets", len(rows), len(b))
	rest := b
	for _, want := range rows {
		var got connStats
		var err error
		if rest, err = c.unpackRow(rest, &got); err != nil {
			t.Fatalf("row %d: %v", want.id, err)
		}
		if !reflect.DeepEqual(&got, want) {
			t.Fatalf("row %d unpacks to\n%+v\nwant\n%+v", want.id, got, *want)
		}
	}
	if len(rest) != 0 {
		t.Fatalf("%d octets left", len(rest))
	}
	// A Collector whose table of strings is full writes them out.
	full := NewCollector()
	for i := range maxRowStrs {
		full.strs = append(full.strs, fmt.Sprint("other ", i))
	}
	for _, want := range rows[:6] {
		var got connStats
		if _, err := full.unpackRow(full.packRowTo(nil, want), &got); err != nil || !reflect.DeepEqual(&got, want) {
			t.Fatalf("row %d, strings written out: %v\n%+v\nwant\n%+v", want.id, err, got, *want)
		}
	}
	if len(full.strs) != maxRowStrs {
		t.Fatalf("the full table grew to %d", len(full.strs))
	}
	one := c.packRowTo(nil, rows[0])
	for n := range len(one) {
		var got connStats
		if _, err := c.unpackRow(one[:n], &got); err == nil {
			t.Fatalf("cut to %d of %d octets: no error", n, len(one))
		}
	}
	zoned := *rows[1]
	zoned.a = netip.AddrPortFrom(netip.MustParseAddr("fe80::1%eth0"), 1)
	if packable(&zoned) {
		t.Error("a row with a zone is packable")
	}
}

// bundled returns the bundled captures.
func bundled(t *testing.T) []string {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	if len(files) < 20 {
		t.Fatalf("only %d bundled captures", len(files))
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Join(filepath.Base(filepath.Dir(f)), filepath.Base(f)))
	}
	return names
}

// FuzzUnpackRow: any octets unpack with an error or to a row, never a
// panic.
func FuzzUnpackRow(f *testing.F) {
	c := NewCollector()
	cs := &connStats{id: 3, a: netip.MustParseAddrPort("10.0.0.1:5"), b: netip.MustParseAddrPort("[2001:db8::1]:6"),
		hasSum: true, fam: famCounts{{fam: "closed", n: sevCount{1, 2, 3, 4}}}, lat: &latHist{n: 2, counts: []uint64{1, 1}}}
	cs.initiator, cs.responder = cs.b, cs.a
	cs.ops.packed, cs.ops.cells = true, []opCell{{opCount{1, 2}, 1, 2}}
	f.Add(c.packRowTo(nil, cs))
	cs.ops = opTally{open: &opHist{}}
	f.Add(c.packRowTo(nil, cs))
	full := c.packRowTo(nil, cs)
	f.Fuzz(func(t *testing.T, b []byte) {
		var got connStats
		if rest, err := c.unpackRow(b, &got); err == nil && len(rest) > len(b) {
			t.Fatal("rest longer than the input")
		}
		// Into a row that had slices and a latency histogram, whose
		// room unpackRow reuses.
		if _, err := c.unpackRow(full, &got); err != nil {
			t.Fatal(err)
		}
		c.unpackRow(b, &got)
	})
}

// withRows decodes pkts as iwarpdump -q -z does with n workers (a single
// Decoder with a Partial for n = 1; n = 0: one Decoder feeding the
// Collector every record), or, with ends, as iwarpdump -z does without -q
// (every record to the Collector, and Ends telling it when a connection
// ends), into a Collector that packs the rows of connections that ended
// or, with keep, none. It returns the Collector's outputs, how many rows it
// packed, and the most rows it had live after a record.
func withRows(t testing.TB, pkts []capture.Packet, n int, ends, keep bool) (out []byte, packed, live int) {
	c := NewCollector()
	c.keepRows = keep
	add := func(r *flows.Record) {
		c.Add(r)
		live = max(live, len(c.conns))
	}
	switch n {
	case 0, 1:
		d := flows.NewDecoder(flows.Options{Recycle: true}, add)
		switch {
		case ends:
			d.SetLocal(c.Ends(), c.Absorb)
		case n == 1:
			d.SetLocal(c.Local(), c.Absorb)
		}
		for i := range pkts {
			d.Packet(&pkts[i])
		}
		d.Close()
	default:
		par, err := flows.NewParallel(flows.Options{Recycle: true}, n, add)
		if err != nil {
			t.Fatal(err)
		}
		if ends {
			par.SetLocal(c.Ends, c.Absorb)
		} else {
			par.SetLocal(c.Local, c.Absorb)
		}
		for i := range pkts {
			par.Packet(&pkts[i])
		}
		par.Close()
	}
	return outputs(t, c), c.packedAt.len(), live
}

// TestPackedRowsSameOutput: a Collector that packs the rows of the
// connections that ended writes what one that keeps them all writes
// (every table, JUnit, SARIF, HTML), fed every record or through
// Partials, on every bundled capture, on connections reset 10 s apart
// (which retire, and whose summaries revive their rows at the end) and on
// 300 short connections; and it does pack rows.
func TestPackedRowsSameOutput(t *testing.T) {
	sets := map[string][]capture.Packet{}
	synthetic := map[string]bool{}
	for _, f := range bundled(t) {
		data, err := os.ReadFile(filepath.Join("..", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		sets[f] = testutil.ReadPackets(data)
	}
	var conns, resets []synth.Conn
	for i := range 300 {
		c := synth.Conn{
			Initiator: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), uint16(40000+i%1000)),
			Responder: netip.MustParseAddrPort("10.200.0.1:7174"),
			Handshake: true, StartDelay: time.Duration(i) * 20 * time.Millisecond,
			MPA: &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}},
			Ops: []synth.Op{{Dir: synth.I2R, Kind: synth.Write, Size: 3000, STag: 1},
				{Dir: synth.I2R, Kind: synth.Read, Size: 100, STag: 2, SrcSTag: 3}, {Dir: synth.R2I, Kind: synth.Send, Size: 8}},
			Close: synth.Close{Kind: synth.CloseFIN},
		}
		conns = append(conns, c)
		if i < 40 {
			c.StartDelay = time.Duration(i) * 10 * time.Second
			c.Close = synth.Close{Kind: synth.CloseRST}
			resets = append(resets, c)
		}
	}
	for name, cs := range map[string][]synth.Conn{"300 short connections": conns, "40 connections reset 10 s apart": resets} {
		var buf bytes.Buffer
		if _, err := synth.Generate(synth.Scenario{Conns: cs}, &buf, nil); err != nil {
			t.Fatal(err)
		}
		sets[name] = testutil.ReadPackets(buf.Bytes())
		synthetic[name] = true
	}
	for name, pkts := range sets {
		want, _, wantLive := withRows(t, pkts, 0, false, true)
		for _, n := range []int{0, 1, 2} {
			for _, ends := range []bool{false, true} {
				if ends && n == 1 {
					continue // n = 0 is the single Decoder
				}
				got, packed, live := withRows(t, pkts, n, ends, false)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s, mode %d, ends %v: outputs differ from a Collector that packs no row\n got %q\nwant %q", name, n, ends, clip(got), clip(want))
				}
				if synthetic[name] && packed < 40 {
					t.Errorf("%s, mode %d, ends %v: %d rows packed", name, n, ends, packed)
				}
				// A reset connection retires once the capture has
				// moved on two settle windows (4 minutes, 24
				// connections here, flows/settle.go): with Ends (or
				// Partials) its row is packed then, not when its
				// conn record comes at the end.
				if name == "40 connections reset 10 s apart" && (ends || n > 0) && live > 28 {
					t.Errorf("%s, mode %d, ends %v: %d rows live at once (%d when none is packed)", name, n, ends, live, wantLive)
				}
			}
		}
	}
}

// TestRowSlots: rowSlots against a map, ids indexed and beyond maxIndexed
// (and negative), set again, deleted, deleted twice.
func TestRowSlots(t *testing.T) {
	var got rowSlots
	want := map[int]rowSlot{}
	ops := []struct {
		id  int
		del bool
	}{{0, false}, {5, false}, {63, false}, {64, false}, {1000, false}, {maxIndexed - 1, false}, {maxIndexed, false},
		{maxIndexed + 7, false}, {-3, false}, {5, false}, {5, true}, {5, true}, {maxIndexed, true}, {77, true},
		{-3, true}, {2 * maxIndexed, true}, {0, false}, {1000, true}}
	for i, op := range ops {
		if op.del {
			got.del(op.id)
			delete(want, op.id)
		} else {
			s := rowSlot{at: uint32(i * 10), n: uint32(i + 1)}
			got.set(op.id, s)
			want[op.id] = s
		}
		if got.len() != len(want) {
			t.Fatalf("after op %d: len %d, want %d", i, got.len(), len(want))
		}
		for _, id := range []int{-3, 0, 5, 63, 64, 77, 1000, maxIndexed - 1, maxIndexed, maxIndexed + 7, 2 * maxIndexed} {
			s, ok := got.get(id)
			ws, wok := want[id]
			if ok != wok || s != ws {
				t.Fatalf("after op %d: get(%d) = %v %v, want %v %v", i, id, s, ok, ws, wok)
			}
		}
		seen := map[int]rowSlot{}
		got.each(func(id int, s rowSlot) { seen[id] = s })
		if !maps.Equal(seen, want) {
			t.Fatalf("after op %d: each gives %v, want %v", i, seen, want)
		}
	}
	if len(got.idx) > maxIndexed {
		t.Errorf("%d indexed slots, at most %d", len(got.idx), maxIndexed)
	}
}

package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/testutil/rowtest"
	"github.com/iwarpkit/iwarpkit/parquetout"
	"github.com/iwarpkit/iwarpkit/shard/shardtest"
	"github.com/iwarpkit/iwarpkit/synth"
)

const siwDir = "../../testdata/siw/"

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in     string
		active bool
		str    string
		ok     bool
	}{
		{"", false, "", true},
		{"0/1", false, "", true},
		{"3/8", true, "3/8", true},
		{"0/2", true, "0/2", true},
		{"8/8", false, "", false},
		{"x", false, "", false},
		{"1/", false, "", false},
	} {
		s, err := parseShard(tc.in)
		if (err == nil) != tc.ok || s.active() != tc.active || s.String() != tc.str {
			t.Errorf("parseShard(%q) = %+v (active %v, %q), %v", tc.in, s, s.active(), s.String(), err)
		}
		if err != nil && !strings.Contains(err.Error(), "--shard") {
			t.Errorf("error %q does not name the flag", err)
		}
	}
	var all shardSel
	if !all.keep(&capture.Packet{Kind: capture.KindBad}) {
		t.Error("the zero shardSel drops a packet")
	}
}

func TestExpandInputsAndBase(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"cap-002.pcap", "cap-000.pcap", "cap-001.pcap.gz", "odd[1].pcap"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	j := func(n string) string { return filepath.Join(dir, n) }
	for _, tc := range []struct {
		in   []string
		want []string
		base string
	}{
		{[]string{j("cap-*")}, []string{j("cap-000.pcap"), j("cap-001.pcap.gz"), j("cap-002.pcap")}, "cap-000..cap-002"},
		{[]string{j("cap-002.pcap"), j("cap-00[01]*")}, []string{j("cap-002.pcap"), j("cap-000.pcap"), j("cap-001.pcap.gz")}, "cap-002..cap-001"},
		{[]string{j("odd[1].pcap")}, []string{j("odd[1].pcap")}, "odd[1]"},
		{[]string{"-"}, []string{"-"}, "stdin"},
		{[]string{"/data/rping.pcapng"}, []string{"/data/rping.pcapng"}, "rping"},
		{[]string{"x.PCAP.GZ"}, []string{"x.PCAP.GZ"}, "x"},
	} {
		got, err := expandInputs(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("expandInputs(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if b := inputBase(tc.in); b != tc.base {
			t.Errorf("inputBase(%q) = %q, want %q", tc.in, b, tc.base)
		}
	}
	for _, in := range [][]string{{j("nothing-*.pcap")}, {j("[")}, nil} {
		if _, err := expandInputs(in); err == nil {
			t.Errorf("expandInputs(%q): no error", in)
		}
	}
	if _, err := openInputs([]string{j("nothing-*.pcap")}); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no file matches") {
		t.Errorf("openInputs of an empty glob: %v", err)
	}
}

// scaleCaptures writes the generated captures the scale tests use and
// returns them with a few real ones.
func scaleCaptures(t *testing.T) (many, multi string, real []string) {
	t.Helper()
	dir := t.TempDir()
	many = shardtest.Write(t, dir, "many-40.pcap", shardtest.ManyConns(40))
	mc, _ := synth.Named("multi-conn", 1)
	multi = shardtest.Write(t, dir, "multi-conn.pcap", mc)
	real, _ = filepath.Glob(siwDir + "*.pcap")
	if len(real) == 0 {
		t.Fatal("no testdata/siw captures")
	}
	return many, multi, real
}

// decodeRun does what run does with -r paths --shard sel: open the inputs,
// keep the shard's packets, decode. It returns the records.
func decodeRun(t *testing.T, paths []string, sel shardSel) []*flows.Record {
	t.Helper()
	src, err := openInputs(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out []*flows.Record
	dec := flows.NewDecoder(flows.Options{}, func(r *flows.Record) { out = append(out, r) })
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if sel.keep(&p) {
			dec.Packet(&p)
		}
	}
	dec.Close()
	return out
}

// TestShardUnionIsWhole: for several N, the records of shards 0..N-1 of
// the same inputs add up to the records of the unsharded run, key for key
// (connection ids aside, which number connections per run), summary counts
// included; with one input and with several merged.
func TestShardUnionIsWhole(t *testing.T) {
	many, multi, real := scaleCaptures(t)
	cases := [][]string{{many}, {multi}, {many, multi}, real}
	for _, c := range real {
		cases = append(cases, []string{c})
	}
	for _, in := range cases {
		whole := decodeRun(t, in, shardSel{})
		want := shardtest.Canonical(whole, nil)
		for _, n := range []int{2, 3, 7} {
			var got []string
			var counts shardtest.Counts
			for i := range n {
				sel, err := parseShard(strconv.Itoa(i) + "/" + strconv.Itoa(n))
				if err != nil {
					t.Fatal(err)
				}
				recs := decodeRun(t, in, sel)
				got = append(got, shardtest.Canonical(recs, nil)...)
				counts.Add(shardtest.Count(recs))
			}
			slices.Sort(got)
			name := inputBase(in) + " N=" + strconv.Itoa(n)
			shardtest.Equal(t, name, got, want)
			if w := shardtest.Count(whole); counts.String() != w.String() {
				t.Errorf("%s: counts %v, want %v", name, counts, w)
			}
		}
	}
}

// TestMergedInputs: -r A -r B reads both files in timestamp order, frames
// numbered in merged order; the merge of a capture cut in two by time
// decodes like the capture itself.
func TestMergedInputs(t *testing.T) {
	many, _, _ := scaleCaptures(t)
	// Cut the capture at its middle packet into two files.
	pkts, datas := readPackets(t, many)
	dir := t.TempDir()
	half := len(pkts) / 2
	a := writePackets(t, filepath.Join(dir, "rot-000.pcap"), pkts[:half], datas[:half])
	b := writePackets(t, filepath.Join(dir, "rot-001.pcap"), pkts[half:], datas[half:])
	for _, in := range [][]string{{a, b}, {b, a}, {filepath.Join(dir, "rot-*.pcap")}} {
		got := decodeRun(t, in, shardSel{})
		want := decodeRun(t, []string{many}, shardSel{})
		shardtest.Equal(t, strings.Join(in, " "), shardtest.Canonical(got, nil), shardtest.Canonical(want, nil))
	}
	if got := inputBase([]string{filepath.Join(dir, "rot-*.pcap")}); got != "rot-000..rot-001" {
		t.Errorf("inputBase = %q", got)
	}
}

// readPackets reads every packet of the capture at path, and a copy of
// its octets (the Packets' own are gone with the next read).
func readPackets(t *testing.T, path string) ([]capture.Packet, [][]byte) {
	t.Helper()
	src, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var pkts []capture.Packet
	var datas [][]byte
	for {
		p, err := src.Next()
		if err != nil {
			return pkts, datas
		}
		datas = append(datas, bytes.Clone(p.Data))
		pkts = append(pkts, p)
	}
}

func writePackets(t *testing.T, path string, pkts []capture.Packet, datas [][]byte) string {
	t.Helper()
	var b bytes.Buffer
	b.Write([]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0}) // LE micro pcap, Ethernet
	for i, p := range pkts {
		var h [16]byte
		le := func(o int, v uint32) { h[o], h[o+1], h[o+2], h[o+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24) }
		le(0, uint32(p.TS.Unix()))
		le(4, uint32(p.TS.Nanosecond()/1000))
		le(8, uint32(len(datas[i])))
		le(12, uint32(p.WireLen))
		b.Write(h[:])
		b.Write(datas[i])
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestParquetShardsMatchJSONL: -T parquet -w DIR --shard I/N for every I
// writes files whose rows, read with Apache Arrow (not the writer's
// library), are together the JSON Lines records of the unsharded run
// (connection ids aside); the file names follow the input and the shard,
// and the unsharded run writes NAME.parquet.
func TestParquetShardsMatchJSONL(t *testing.T) {
	many, multi, _ := scaleCaptures(t)
	for _, in := range [][]string{{many}, {many, multi}} {
		base := inputBase(in)
		dir := t.TempDir()
		const n = 3
		for i := range n {
			sel, _ := parseShard(strconv.Itoa(i) + "/" + strconv.Itoa(n))
			sink, err := newParquetSink(dir, base, sel)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range decodeRun(t, in, sel) {
				sink.Add(r)
			}
			if err := sink.Close(); err != nil {
				t.Fatal(err)
			}
			if w := sink.warnings(); len(w) > 0 {
				t.Errorf("warnings: %v", w)
			}
		}
		whole := decodeRun(t, in, shardSel{})
		sink, err := newParquetSink(dir, base, shardSel{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range whole {
			sink.Add(r)
		}
		if err := sink.Close(); err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{}
		for _, r := range whole {
			tbl := map[string]string{"mpa": "mpa", "fpdu": "fpdus", "message": "messages", "finding": "findings", "conn": "conns"}[r.Type.String()]
			want[tbl] = append(want[tbl], jsonRowNoConn(t, format.AppendJSON(nil, format.Fields(r))))
		}
		for _, tbl := range parquetout.Tables {
			var got []string
			for i := range n {
				p := filepath.Join(dir, tbl, base+".shard-"+strconv.Itoa(i)+"-of-3.parquet")
				got = append(got, arrowRowsNoConn(t, p)...)
			}
			slices.Sort(got)
			w := slices.Clone(want[tbl])
			slices.Sort(w)
			shardtest.Equal(t, base+" "+tbl+" (shards)", got, w)
			whole := arrowRowsNoConn(t, filepath.Join(dir, tbl, base+".parquet"))
			slices.Sort(whole)
			shardtest.Equal(t, base+" "+tbl+" (unsharded)", whole, w)
			if len(w) == 0 && tbl != parquetout.TableFindings {
				t.Errorf("%s: no %s rows", base, tbl)
			}
		}
	}
	if _, err := newParquetSink("", "x", shardSel{}); err == nil || !strings.Contains(err.Error(), "-w DIR") {
		t.Errorf("no directory: %v", err)
	}
}

// jsonRowNoConn flattens one JSON Lines record without its "conn" key
// (rowtest.JSONRow, rowtest.Join).
func jsonRowNoConn(t *testing.T, line []byte) string {
	t.Helper()
	row, err := rowtest.JSONRow(line)
	if err != nil {
		t.Fatal(err)
	}
	delete(row, "conn")
	return rowtest.Join(row)
}

// arrowRowsNoConn reads a Parquet file with Apache Arrow and returns its
// rows like jsonRowNoConn.
func arrowRowsNoConn(t *testing.T, path string) []string {
	t.Helper()
	rows, _ := rowtest.ReadParquet(t, path)
	out := make([]string, len(rows))
	for i, r := range rows {
		delete(r, "conn")
		out[i] = rowtest.Join(r)
	}
	return out
}

// TestParquetSaysSkipped: the records of other transports, which have no
// Parquet table, are counted on standard error (they were dropped in
// silence): rxe_v4_rping's five cm records and its CM conn record, all of
// its JSON Lines records.
func TestParquetSaysSkipped(t *testing.T) {
	in := "../../testdata/rxe/rxe_v4_rping.pcap"
	_, jl, _ := runCmd(t, nil, "-r", in, "-T", "jsonl")
	n := strings.Count(jl, "\n")
	code, _, errs := runCmd(t, nil, "-r", in, "-T", "parquet", "-w", t.TempDir())
	if want := "parquet: " + strconv.Itoa(n) + " records of InfiniBand CM"; code != 0 || n != 6 || !strings.Contains(errs, want) {
		t.Errorf("exit %d, %d JSON Lines records; stderr does not say %q:\n%s", code, n, want, errs)
	}
}

package parquetout_test

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/testutil/rowtest"
	"github.com/iwarpkit/iwarpkit/parquetout"
	"github.com/iwarpkit/iwarpkit/shard/shardtest"
	"github.com/iwarpkit/iwarpkit/synth"
)

// tableOf maps a JSON Lines record type to its table.
var tableOf = map[string]string{
	"mpa": parquetout.TableMPA, "fpdu": parquetout.TableFPDUs, "message": parquetout.TableMessages,
	"finding": parquetout.TableFindings, "conn": parquetout.TableConns,
}

// inputs returns every capture the tests run on: the real siw captures,
// the generated library captures, and two multi-connection scenarios.
func inputs(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, g := range []string{"../testdata/siw/*.pcap", "../testdata/synth/*.pcap", "../testdata/snaplen/*.pcap"} {
		m, _ := filepath.Glob(g)
		paths = append(paths, m...)
	}
	if len(paths) < 10 {
		t.Fatalf("only %d test captures found", len(paths))
	}
	dir := t.TempDir()
	mc, _ := synth.Named("multi-conn", 1)
	term, _ := synth.Named("terminate-rdmap", 1)
	// Interop matrix row 2: an RDMAC (rev 0) initiator and an IETF
	// responder; the connection closes, as expected ("close" both ways).
	row2 := synth.Scenario{Conns: []synth.Conn{{
		Initiator: netip.MustParseAddrPort("192.0.2.2:40077"), Responder: netip.MustParseAddrPort("192.0.2.1:7174"),
		Handshake: true,
		MPA:       &synth.MPAParams{Request: synth.MPAFrame{Rev: 0, M: true, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}},
	}}}
	return append(paths,
		shardtest.Write(t, dir, "interop-row2.pcap", row2),
		shardtest.Write(t, dir, "multi-conn.pcap", mc),
		shardtest.Write(t, dir, "terminate-rdmap.pcap", term),
		shardtest.Write(t, dir, "many-40.pcap", shardtest.ManyConns(40)))
}

// jsonRows returns the JSON Lines output of recs, flattened the way the
// columns are named (objects joined with dots, lists kept, nulls dropped),
// grouped by table. It parses the text iwarpdump -T jsonl prints, with
// encoding/json, so the expected values do not come from parquetout.
func jsonRows(t *testing.T, recs []*flows.Record) map[string][]map[string]string {
	t.Helper()
	out := map[string][]map[string]string{}
	for _, r := range recs {
		row, err := rowtest.JSONRow(format.AppendJSON(nil, format.Fields(r)))
		if err != nil {
			t.Fatal(err)
		}
		tbl := tableOf[r.Type.String()]
		out[tbl] = append(out[tbl], row)
	}
	return out
}

func writeSink(t *testing.T, dir, name string, recs []*flows.Record) *parquetout.Sink {
	t.Helper()
	return writeSinkWith(t, dir, name, recs, parquetout.Options{RowGroupRows: 100})
}

func writeSinkWith(t *testing.T, dir, name string, recs []*flows.Record, o parquetout.Options) *parquetout.Sink {
	t.Helper()
	s, err := parquetout.Create(dir, name, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		s.Add(r)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTablesMatchJSONL is the acceptance test for the columnar
// output: every table written for every test capture, read back with
// Apache Arrow's Parquet reader, holds the JSON Lines records of its type,
// in order, key for key and value for value. Every file of a table has the
// same schema, and every column is exercised by some capture.
func TestTablesMatchJSONL(t *testing.T) {
	dir := t.TempDir()
	schemas := map[string]string{}
	seen := map[string]bool{}
	total := map[string]int{}
	for _, path := range inputs(t) {
		recs := shardtest.DecodeFiles(t, nil, path)
		name := strings.TrimSuffix(filepath.Base(path), ".pcap")
		s := writeSink(t, dir, name, recs)
		if u := s.Unknown(); len(u) != 0 {
			t.Errorf("%s: keys without a column: %v", name, u)
		}
		if s.Skipped() != 0 {
			t.Errorf("%s: %d records skipped", name, s.Skipped())
		}
		want := jsonRows(t, recs)
		for _, tbl := range parquetout.Tables {
			got, sch := rowtest.ReadParquet(t, parquetout.Path(dir, tbl, name))
			if prev, ok := schemas[tbl]; ok && prev != sch.String() {
				t.Errorf("%s/%s: schema differs from the other files:\n%s\nvs\n%s", tbl, name, sch, prev)
			}
			schemas[tbl] = sch.String()
			if s.Rows()[tbl] != int64(len(got)) {
				t.Errorf("%s/%s: Rows() = %d, file has %d", tbl, name, s.Rows()[tbl], len(got))
			}
			if len(got) != len(want[tbl]) {
				t.Errorf("%s/%s: %d rows, want %d", tbl, name, len(got), len(want[tbl]))
				continue
			}
			total[tbl] += len(got)
			for i := range got {
				for k := range got[i] {
					seen[tbl+"."+k] = true
				}
				if d := diff(got[i], want[tbl][i]); d != "" {
					t.Errorf("%s/%s row %d: %s", tbl, name, i, d)
					break
				}
			}
		}
	}
	// Every column of every table carries a value somewhere, so the test
	// has checked its name and type against the JSON Lines.
	var never []string
	for tbl, sch := range schemas {
		for _, f := range fieldsOf(sch) {
			if !seen[tbl+"."+f] {
				never = append(never, tbl+"."+f)
			}
		}
	}
	slices.Sort(never)
	// A few keys appear only on malformed input that no capture here holds.
	allowed := map[string]bool{
		"fpdus.ddp.rsvd": true, "fpdus.rdmap.rsvd": true, "fpdus.rdmap.term.ddp.rsvd": true,
	}
	for _, c := range never {
		if !allowed[c] {
			t.Errorf("column %s never holds a value in the test captures", c)
		}
	}
	t.Logf("rows checked: %v; columns never set (allowed): %v", total, never)
}

// fieldsOf lists the top-level field names of an Arrow schema's String().
func fieldsOf(schema string) []string {
	var out []string
	for _, line := range strings.Split(schema, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "- ") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(line, "- "), ": ")
		out = append(out, name)
	}
	return out
}

func diff(got, want map[string]string) string {
	var d []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			d = append(d, fmt.Sprintf("%s missing (want %s)", k, w))
		} else if g != w {
			d = append(d, fmt.Sprintf("%s = %s, want %s", k, g, w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("%s = %s not in the JSON Lines", k, g))
		}
	}
	sort.Strings(d)
	return strings.Join(d, "; ")
}

// TestColumnTypes pins the Parquet types engines will see (read through
// Arrow): 64-bit offsets unsigned, other integers signed 64-bit, lists of
// structs for markers and findings.
func TestColumnTypes(t *testing.T) {
	dir := t.TempDir()
	writeSink(t, dir, "empty", nil)
	want := map[string]map[string]string{
		parquetout.TableFPDUs: {
			"frame": "int64", "ts": "utf8", "ddp.to": "uint64", "ddp.stag": "int64", "mpa.crc_status": "utf8",
			"frames":          "list<element: int64>",
			"mpa.markers":     "list<element: struct<seq: int64, fpduptr: int64, ok: bool>>",
			"rdmap.immediate": "uint64", "rdmap.term.code": "int64",
		},
		parquetout.TableMessages: {"latency_ns": "int64", "to": "uint64", "name": "utf8"},
		parquetout.TableConns:    {"mpa.rtr": "list<element: utf8>", "interop.expected": "utf8", "crc_errors": "int64"},
		parquetout.TableFindings: {"code": "utf8", "frames": "list<element: int64>"},
		parquetout.TableMPA:      {"pd": "utf8", "enhanced.ird": "int64", "findings": "list<element: struct<severity: utf8, code: utf8, msg: utf8, frames: list<element: int64>, ref: utf8>>"},
	}
	for tbl, cols := range want {
		rows, sch := rowtest.ReadParquet(t, parquetout.Path(dir, tbl, "empty"))
		if len(rows) != 0 {
			t.Errorf("%s: %d rows in an empty table", tbl, len(rows))
		}
		for col, typ := range cols {
			idx := sch.FieldIndices(col)
			if len(idx) != 1 {
				t.Errorf("%s: no column %q", tbl, col)
				continue
			}
			if got := sch.Field(idx[0]).Type.String(); got != typ {
				t.Errorf("%s.%s: type %s, want %s", tbl, col, got, typ)
			}
		}
	}
}

// TestDeterministicAndIdempotent: the same records give byte-identical
// files under the same names, and a rerun leaves exactly those files.
func TestDeterministicAndIdempotent(t *testing.T) {
	path := shardtest.Write(t, t.TempDir(), "m.pcap", shardtest.ManyConns(8))
	recs := shardtest.DecodeFiles(t, nil, path)
	dir := t.TempDir()
	snapshot := func() map[string][]byte {
		out := map[string][]byte{}
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				rel, _ := filepath.Rel(dir, p)
				out[rel] = b
			}
			return nil
		})
		return out
	}
	writeSink(t, dir, "m.shard-1-of-4", recs)
	a := snapshot()
	writeSink(t, dir, "m.shard-1-of-4", recs)
	b := snapshot()
	var names []string
	for n := range a {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"conns/m.shard-1-of-4.parquet", "findings/m.shard-1-of-4.parquet", "fpdus/m.shard-1-of-4.parquet",
		"messages/m.shard-1-of-4.parquet", "mpa/m.shard-1-of-4.parquet"}
	if !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
	if len(b) != len(a) {
		t.Errorf("rerun: %d files, first run %d", len(b), len(a))
	}
	for n, data := range a {
		if !bytes.Equal(b[n], data) {
			t.Errorf("%s differs between runs", n)
		}
	}
}

func TestCreateErrorsAndAbort(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"", "a/b", `a\b`} {
		if _, err := parquetout.Create(dir, name, parquetout.Options{}); err == nil {
			t.Errorf("Create(%q): no error", name)
		}
	}
	s, err := parquetout.Create(dir, "x", parquetout.Options{Metadata: map[string]string{"iwarpkit.input": "x.pcap"}})
	if err != nil {
		t.Fatal(err)
	}
	s.Abort()
	var left []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("Abort left %v", left)
	}
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := parquetout.Create(blocker, "x", parquetout.Options{}); err == nil {
		t.Errorf("Create under a regular file: no error")
	}
}

// BenchmarkSink writes the records of synth's performance workload (8
// connections, 16 MiB of capture) to the five tables.
func BenchmarkSink(b *testing.B) {
	path := filepath.Join(b.TempDir(), "perf.pcap")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := synth.WritePerf(f, 16<<20, 1); err != nil {
		b.Fatal(err)
	}
	f.Close()
	recs := shardtest.DecodeFiles(b, nil, path)
	dir := b.TempDir()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, err := parquetout.Create(dir, "bench", parquetout.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range recs {
			s.Add(r)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
	b.ReportMetric(float64(len(recs)), "records")
}

// TestFileRows: a table of more rows than Options.FileRows goes on in
// further files (PartPath) which, read with Arrow one after the other,
// hold the JSON Lines records of the table in order; a rerun that writes
// fewer parts removes the earlier run's extra ones, and Abort leaves no
// file, finished parts included.
func TestFileRows(t *testing.T) {
	path := shardtest.Write(t, t.TempDir(), "m.pcap", shardtest.ManyConns(8))
	recs := shardtest.DecodeFiles(t, nil, path)
	want := jsonRows(t, recs)
	dir := t.TempDir()
	files := func() []string {
		var out []string
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				out = append(out, rel)
			}
			return nil
		})
		slices.Sort(out)
		return out
	}
	for _, fileRows := range []int64{7, 50, 1 << 20} {
		writeSinkWith(t, dir, "m", recs, parquetout.Options{RowGroupRows: 20, FileRows: fileRows})
		var wantFiles []string
		for _, tbl := range parquetout.Tables {
			n := len(want[tbl])
			parts := max(1, (n+int(fileRows)-1)/int(fileRows))
			var got []map[string]string
			for k := range parts {
				p := parquetout.PartPath(dir, tbl, "m", k)
				rows, _ := rowtest.ReadParquet(t, p)
				if len(rows) > int(fileRows) || (k < parts-1 && len(rows) != int(fileRows)) {
					t.Errorf("FileRows %d: %s holds %d rows", fileRows, p, len(rows))
				}
				got = append(got, rows...)
				rel, _ := filepath.Rel(dir, p)
				wantFiles = append(wantFiles, rel)
			}
			if len(got) != n {
				t.Fatalf("FileRows %d: %s: %d rows in %d files, want %d", fileRows, tbl, len(got), parts, n)
			}
			for i := range got {
				if d := diff(got[i], want[tbl][i]); d != "" {
					t.Fatalf("FileRows %d: %s row %d: %s", fileRows, tbl, i, d)
				}
			}
		}
		slices.Sort(wantFiles)
		if got := files(); !slices.Equal(got, wantFiles) {
			t.Errorf("FileRows %d: files %v, want %v", fileRows, got, wantFiles)
		}
		if fileRows == 7 && len(wantFiles) < 20 {
			t.Fatalf("only %d files with 7 rows per file", len(wantFiles))
		}
	}
	// Abort after several parts were finished: nothing new is left.
	before := files()
	s, err := parquetout.Create(dir, "n", parquetout.Options{RowGroupRows: 20, FileRows: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		s.Add(r)
	}
	s.Abort()
	if got := files(); !slices.Equal(got, before) {
		t.Errorf("Abort left %v (before: %v)", got, before)
	}
}

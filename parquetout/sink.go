package parquetout

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/tempfile"
)

// Table names: the directories under the output directory, one per record
// type (JSONL.md "type"): mpa (MPA Requests and Replies), fpdus, messages,
// findings and conns.
const (
	TableMPA      = "mpa"
	TableFPDUs    = "fpdus"
	TableMessages = "messages"
	TableFindings = "findings"
	TableConns    = "conns"
)

// Tables lists the table names in the order Create opens them.
var Tables = []string{TableMPA, TableFPDUs, TableMessages, TableFindings, TableConns}

// Path returns where the table's file for the output called name goes:
// dir/table/name.parquet. name is usually shard.Selector.Name of the input's
// base name, e.g. "rping.shard-3-of-8". A table with more rows than one
// file holds (Options.FileRows) goes on in PartPath's files.
func Path(dir, table, name string) string {
	return PartPath(dir, table, name, 0)
}

// PartPath returns where part k of a table goes: Path for the first (k 0),
// then dir/table/name.part-0001.parquet, name.part-0002.parquet, and so on.
func PartPath(dir, table, name string, k int) string {
	if k == 0 {
		return filepath.Join(dir, table, name+".parquet")
	}
	return filepath.Join(dir, table, fmt.Sprintf("%s.part-%04d.parquet", name, k))
}

// Options configure a Sink. The zero value is usable.
type Options struct {
	// RowGroupRows caps the rows of one row group (and so the rows a table
	// holds in memory before writing them out); 0 means 64 Ki rows.
	RowGroupRows int64
	// PageBufferSize is the size of each column's page buffer, in which
	// pages are built before they are encoded; 0 means 32 KiB.
	PageBufferSize int
	// FileRows caps the rows of one file of a table; a table with more
	// goes on in further files (PartPath). The writer keeps each row
	// group's statistics and page index in memory until its file is
	// closed, some 2.3 MB per GB of capture on issue 6's workload, so
	// that a single file would make memory grow with the capture. 0 means
	// 1 Mi rows.
	FileRows int64
	// Metadata is written into every file's key-value metadata, in
	// addition to "iwarpkit.jsonl_version" (the JSON Lines schema version
	// the columns follow).
	Metadata map[string]string
}

// batchRows is how many rows a table collects before handing them to the
// Parquet writer.
const batchRows = 256

// table is one table being written: its current file (part), and the
// temporary files of the parts already finished, renamed into place with
// it by close.
type table[T any] struct {
	name      string
	cols      columns // the columns of T, by name
	dir, base string  // the output directory and name (Path)
	wopts     []parquet.WriterOption
	fileRows  int64
	done      []string // temporary files of the finished parts
	path, tmp string   // the current part
	f         *os.File
	bw        *bufio.Writer
	w         *parquet.GenericWriter[T]
	batch     []T
	rows      int64 // rows of the table
	inPart    int64 // rows of the current part
}

func openTable[T any](dir, tbl, name string, wopts []parquet.WriterOption, fileRows int64) (*table[T], error) {
	t := &table[T]{name: tbl, cols: columnsOf(reflect.TypeFor[T]()), dir: dir, base: name, wopts: wopts, fileRows: fileRows}
	t.batch = make([]T, 0, batchRows)
	if err := t.openPart(); err != nil {
		return nil, err
	}
	return t, nil
}

// openPart starts the table's next file.
func (t *table[T]) openPart() error {
	path := PartPath(t.dir, t.name, t.base, len(t.done))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := tempfile.Beside(path)
	if err != nil {
		return err
	}
	t.path, t.tmp, t.f, t.inPart = path, f.Name(), f, 0
	if t.bw == nil {
		t.bw = bufio.NewWriterSize(f, 256<<10)
	} else {
		t.bw.Reset(f)
	}
	// A new writer for every file: each keeps its row groups' metadata
	// until it is closed.
	t.w = parquet.NewGenericWriter[T](t.bw, t.wopts...)
	return nil
}

// finishPart writes out the current file, under its temporary name.
func (t *table[T]) finishPart() error {
	err := t.flush()
	if err == nil {
		err = t.w.Close()
	}
	if err == nil {
		err = t.bw.Flush()
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	t.f = nil
	t.done = append(t.done, t.tmp)
	return err
}

// next returns a zeroed row to fill, flushing the batch when it is full.
func (t *table[T]) next() (*T, error) {
	if len(t.batch) == cap(t.batch) {
		if err := t.flush(); err != nil {
			return nil, err
		}
	}
	if t.inPart == t.fileRows {
		if err := t.finishPart(); err != nil {
			return nil, err
		}
		if err := t.openPart(); err != nil {
			return nil, err
		}
	}
	var zero T
	t.batch = append(t.batch, zero)
	t.rows++
	t.inPart++
	return &t.batch[len(t.batch)-1], nil
}

func (t *table[T]) flush() error {
	if len(t.batch) == 0 {
		return nil
	}
	_, err := t.w.Write(t.batch)
	clear(t.batch)
	t.batch = t.batch[:0]
	return err
}

// close writes the last file out and renames every part into place, then
// removes the parts of an earlier run beyond this run's last.
func (t *table[T]) close() error {
	err := t.finishPart()
	n := len(t.done)
	for k, tmp := range t.done {
		if err == nil {
			err = os.Rename(tmp, PartPath(t.dir, t.name, t.base, k))
		}
		if err != nil {
			_ = os.Remove(tmp)
		}
	}
	t.done = nil
	if err != nil {
		return err
	}
	for k := n; ; k++ {
		if os.Remove(PartPath(t.dir, t.name, t.base, k)) != nil {
			break
		}
	}
	return nil
}

func (t *table[T]) abort() {
	if t == nil {
		return
	}
	if t.f != nil {
		_ = t.f.Close()
		t.f = nil
		_ = os.Remove(t.tmp)
	}
	for _, tmp := range t.done {
		_ = os.Remove(tmp)
	}
	t.done = nil
}

// Sink writes decoder records as Parquet tables, one file per table:
// dir/mpa/NAME.parquet, dir/fpdus/NAME.parquet, dir/messages/NAME.parquet,
// dir/findings/NAME.parquet and dir/conns/NAME.parquet, every one written
// even when it has no rows, so that a rerun replaces all of an earlier
// run's files. A table of more than Options.FileRows rows goes on in
// NAME.part-0001.parquet and so on (PartPath), so that memory does not grow
// with the capture; a rerun removes the parts it did not write again. Files are written under temporary names and renamed into
// place by Close: readers never see a partial file, and a failed run
// leaves none.
//
// Rows are in the order the records come (the decoder's output order).
// Records of other types (RoCEv2 CM, DDP over SCTP) are not written; Skipped
// counts them.
//
// A Sink is not safe for concurrent use.
type Sink struct {
	mpa      *table[MPARow]
	fpdus    *table[FPDURow]
	messages *table[MessageRow]
	findings *table[FindingRow]
	conns    *table[ConnRow]
	vals     values
	unknown  map[string]int
	skipped  int
	err      error
	closed   bool
}

// Create opens the five table files for the output called name (see Path)
// under dir, creating the directories as needed.
func Create(dir, name string, o Options) (*Sink, error) {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return nil, errors.New("parquetout: bad output name " + strconv.Quote(name))
	}
	// Memory: the five tables' page buffers and a row group's pages. With
	// parquet-go's defaults (256 KiB page buffers, and 128 Ki rows per row
	// group as this package had) iwarpdump -T parquet peaked at 119-121 MB
	// on issue 6's 512 MiB workload; with these, 63 MB, the files 4 %
	// larger (smaller pages compress a little less).
	rg := o.RowGroupRows
	if rg <= 0 {
		rg = 64 << 10
	}
	pb := o.PageBufferSize
	if pb <= 0 {
		pb = 32 << 10
	}
	fr := o.FileRows
	if fr <= 0 {
		fr = 1 << 20
	}
	wopts := []parquet.WriterOption{
		parquet.Compression(&parquet.Snappy),
		parquet.MaxRowsPerRowGroup(rg),
		parquet.PageBufferSize(pb),
		parquet.KeyValueMetadata("iwarpkit.jsonl_version", "1"),
	}
	keys := make([]string, 0, len(o.Metadata))
	for k := range o.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		wopts = append(wopts, parquet.KeyValueMetadata(k, o.Metadata[k]))
	}
	s := &Sink{unknown: map[string]int{}}
	var err error
	if s.mpa, err = openTable[MPARow](dir, TableMPA, name, wopts, fr); err == nil {
		if s.fpdus, err = openTable[FPDURow](dir, TableFPDUs, name, wopts, fr); err == nil {
			if s.messages, err = openTable[MessageRow](dir, TableMessages, name, wopts, fr); err == nil {
				if s.findings, err = openTable[FindingRow](dir, TableFindings, name, wopts, fr); err == nil {
					s.conns, err = openTable[ConnRow](dir, TableConns, name, wopts, fr)
				}
			}
		}
	}
	if err != nil {
		s.Abort()
		return nil, err
	}
	return s, nil
}

// Add writes one record as a row of its table. The row's columns are the
// record's JSON Lines keys (format.Fields), objects flattened into dotted
// column names. A key the table has no column for is counted by Unknown
// and dropped. The first write error is kept and returned by Close; later
// records are then ignored.
func (s *Sink) Add(r *flows.Record) {
	if s.err != nil || s.closed {
		return
	}
	var err error
	switch r.Type {
	case flows.RecMPA:
		err = addRow(s, s.mpa, r)
	case flows.RecFPDU:
		err = addRow(s, s.fpdus, r)
	case flows.RecMessage:
		err = addRow(s, s.messages, r)
	case flows.RecFinding:
		err = addRow(s, s.findings, r)
	case flows.RecConn:
		err = addRow(s, s.conns, r)
	default:
		s.skipped++
		return
	}
	if err != nil {
		s.err = err
	}
}

// addRow writes r as the next row of t.
func addRow[T any](s *Sink, t *table[T], r *flows.Record) error {
	row, err := t.next()
	if err != nil {
		return err
	}
	s.walk(t.name, t.cols, reflect.ValueOf(row).Elem(), "", format.Fields(r))
	return nil
}

// walk flattens kvs into dotted paths and stores each value in its column
// of row.
func (s *Sink) walk(tbl string, cols columns, row reflect.Value, prefix string, kvs []format.KV) {
	for _, e := range kvs {
		p := e.Key
		if prefix != "" {
			p = prefix + "." + e.Key
		}
		switch e.Val.Kind {
		case format.KNull:
			continue
		case format.KObject:
			s.walk(tbl, cols, row, p, e.Val.Obj)
			continue
		}
		if !s.vals.set(cols, row, p, e.Val) {
			s.unknown[tbl+"."+p]++
		}
	}
}

// Unknown returns, for every JSON Lines key that had no column of a fitting
// type, how many values were dropped, keyed "table.key" (e.g.
// "fpdus.rdmap.new_field"). Tests keep it empty: the tables cover the
// JSON Lines schema.
func (s *Sink) Unknown() map[string]int { return s.unknown }

// Skipped returns the number of records of types that have no table.
func (s *Sink) Skipped() int { return s.skipped }

// Rows returns the number of rows written to each table so far.
func (s *Sink) Rows() map[string]int64 {
	return map[string]int64{
		TableMPA: s.mpa.rows, TableFPDUs: s.fpdus.rows, TableMessages: s.messages.rows,
		TableFindings: s.findings.rows, TableConns: s.conns.rows,
	}
}

// Close finishes every table file and renames it into place; on error the
// files not yet in place are removed. It returns the first error, of Add's
// writes or of its own. Close is idempotent.
func (s *Sink) Close() error {
	if s.closed {
		return s.err
	}
	s.closed = true
	if s.err != nil {
		s.abort()
		return s.err
	}
	for _, c := range []func() error{s.mpa.close, s.fpdus.close, s.messages.close, s.findings.close, s.conns.close} {
		if err := c(); err != nil {
			s.err = err
			s.abort()
			return err
		}
	}
	return nil
}

// Abort removes every table file not yet in place.
func (s *Sink) Abort() {
	s.closed = true
	s.abort()
}

func (s *Sink) abort() {
	s.mpa.abort()
	s.fpdus.abort()
	s.messages.abort()
	s.findings.abort()
	s.conns.abort()
}

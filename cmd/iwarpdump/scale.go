package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/parquetout"
	"github.com/iwarpkit/iwarpkit/shard"
)

// Scale-out support for run (issue 12): --shard I/N, several -r inputs or
// globs merged in timestamp order, and -T parquet -w DIR.

// shardSel is the --shard I/N selection: decode only the connections that
// shard I of N holds (shard.Of: a symmetric hash of the 4-tuple). The zero
// value selects everything.
//
// Packets that are not TCP or UDP follow shard.Of too: other IP packets go
// with their host pair, and frames without IP addresses (ARP, undecodable
// frames) to shard 0. The decoder ignores them, so this changes no record;
// it only makes the shards of one input add up to the whole of it.
type shardSel struct {
	sel shard.Selector
}

// parseShard reads a --shard value, "I/N" with 0 <= I < N (Kubernetes'
// JOB_COMPLETION_INDEX is such an I). The empty string selects everything.
func parseShard(s string) (shardSel, error) {
	if s == "" {
		return shardSel{}, nil
	}
	sel, err := shard.Parse(s)
	if err != nil {
		return shardSel{}, fmt.Errorf("bad --shard %q: want I/N with 0 <= I < N (e.g. 3/8)", s)
	}
	return shardSel{sel: sel}, nil
}

// active reports whether the selection drops anything (N > 1).
func (s shardSel) active() bool { return !s.sel.All() }

// keep reports whether the packet belongs to the selected shard. Skipped
// packets keep their frame numbers: a record's frame is the same in the
// sharded and the unsharded output.
func (s shardSel) keep(p *capture.Packet) bool { return s.sel.Keep(p) }

// String returns "I/N", or "" when everything is selected.
func (s shardSel) String() string { return s.sel.String() }

// errNoMatch is the error of a glob that matches no file; it is
// fs.ErrNotExist for errors.Is.
var errNoMatch = noMatchError{}

type noMatchError struct{}

func (noMatchError) Error() string        { return "no file matches" }
func (noMatchError) Is(target error) bool { return target == fs.ErrNotExist }

// expandInputs turns the -r arguments into file names: "-" stays (standard
// input), an argument naming an existing file stays, and an argument with
// glob metacharacters (* ? [) is expanded with filepath.Glob, in lexical
// order. A pattern matching nothing is an error.
func expandInputs(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if p == "-" || !strings.ContainsAny(p, "*?[") {
			out = append(out, p)
			continue
		}
		if _, err := os.Stat(p); err == nil {
			out = append(out, p) // a file whose name has a metacharacter
			continue
		}
		m, err := filepath.Glob(p)
		if err != nil {
			// A usage error, as a missing file is (exit 2).
			return nil, &fs.PathError{Op: "glob", Path: p, Err: err}
		}
		if len(m) == 0 {
			// A *fs.PathError, as capture.Open gives for a missing file.
			return nil, &fs.PathError{Op: "glob", Path: p, Err: errNoMatch}
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		return nil, errors.New("no capture file given")
	}
	return out, nil
}

// openMerge expands the -r arguments and opens them as one source in
// timestamp order (capture.Merge). With mapped, the files are opened with
// capture.OpenMapped (capture.OpenMergeMapped): the caller reads them
// under underFaults.
func openMerge(paths []string, mapped bool) (*capture.Merge, error) {
	files, err := expandInputs(paths)
	if err != nil {
		return nil, err
	}
	if mapped && !slices.Contains(files, "-") {
		return capture.OpenMergeMapped(files...)
	}
	return capture.OpenMerge(files...)
}

// openInputs opens the -r arguments (repeated -r, globs) as one packet
// source, merged in timestamp order with ties going to the earlier
// argument (capture.Merge).
//
// Frame numbers: with one input they are the file's; with several, frames
// are numbered from 1 in merged order, each input's packets counting once
// (as Wireshark numbers a chronological merge). That numbering depends only
// on the inputs and their order, so output stays deterministic, and with
// --shard the frame numbers are those of the unsharded merged output.
//
// A damaged input delivers its intact packets; the other inputs read on to
// their end before its error is returned.
func openInputs(paths []string) (packetSource, error) {
	m, err := openMerge(paths, false)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// captureExts are the file name extensions inputBase strips.
var captureExts = []string{".gz", ".pcapng", ".pcap", ".cap", ".dmp"}

// baseName is a capture file's name without directory and capture
// extensions: "/data/rping.pcap.gz" -> "rping"; "-" -> "stdin".
func baseName(p string) string {
	if p == "-" {
		return "stdin"
	}
	b := filepath.Base(p)
	for again := true; again; {
		again = false
		for _, ext := range captureExts {
			if len(b) > len(ext) && strings.EqualFold(b[len(b)-len(ext):], ext) {
				b, again = b[:len(b)-len(ext)], true
			}
		}
	}
	return b
}

// inputBase names the output of a run over the -r arguments (after glob
// expansion): the base name of the one input, or "FIRST..LAST" for several
// (e.g. "cap-000..cap-099" for rotated files). Output file names derive
// from it: DIR/fpdus/<inputBase>.shard-I-of-N.parquet.
func inputBase(paths []string) string {
	files, err := expandInputs(paths)
	if err != nil || len(files) == 0 {
		files = paths
	}
	if len(files) == 0 {
		return "stdin"
	}
	first := baseName(files[0])
	if len(files) == 1 {
		return first
	}
	return first + ".." + baseName(files[len(files)-1])
}

// parquetSink is -T parquet -w DIR: the records go into Parquet tables
// DIR/{mpa,fpdus,messages,findings,conns}/NAME.parquet, NAME being the
// input's base name with ".shard-I-of-N" under --shard (parquetout).
type parquetSink struct {
	s        *parquetout.Sink
	oldLimit int64 // the heap's soft limit before newParquetSink, for Close
}

// newParquetSink opens the tables for the input called inputName (see
// inputBase) and the shard selection.
func newParquetSink(dir, inputName string, sh shardSel) (*parquetSink, error) {
	if dir == "" {
		return nil, errors.New("-T parquet needs an output directory: -w DIR")
	}
	meta := map[string]string{"iwarpkit.input": inputName}
	if sh.active() {
		meta["iwarpkit.shard"] = sh.String()
	}
	s, err := parquetout.Create(dir, sh.sel.Name(inputName), parquetout.Options{Metadata: meta})
	if err != nil {
		return nil, err
	}
	p := &parquetSink{s: s, oldLimit: -1}
	if os.Getenv("GOMEMLIMIT") == "" {
		// The writer's row groups and page buffers are some 25 MB of
		// live heap; with the heap let grow to twice its live size
		// between collections, the process took up to 62 MB on issue
		// 6's workload. A soft limit keeps it near 50 MB, for about 4 %
		// more CPU (69 collections instead of 42 on the 512 MiB
		// workload).
		p.oldLimit = debug.SetMemoryLimit(parquetMemoryLimit)
	}
	return p, nil
}

// parquetMemoryLimit is the Go heap's soft limit under -T parquet.
const parquetMemoryLimit = 40 << 20

// Add writes one record.
func (p *parquetSink) Add(r *flows.Record) { p.s.Add(r) }

// Close finishes the files (renaming them into place); call it after the
// decoder's Close. On error no file of this run is left behind.
func (p *parquetSink) Close() error {
	if p.oldLimit >= 0 {
		debug.SetMemoryLimit(p.oldLimit)
		p.oldLimit = -1
	}
	return p.s.Close()
}

// warnings lists the JSON Lines keys that had no column (none for the
// record types and keys the tests cover) and counts the records of types
// that have no table, for messages on standard error.
func (p *parquetSink) warnings() []string {
	var w []string
	for k, n := range p.s.Unknown() {
		w = append(w, fmt.Sprintf("parquet: no column for %s (%d values dropped)", k, n))
	}
	sort.Strings(w)
	if n := p.s.Skipped(); n > 0 {
		w = append(w, fmt.Sprintf("parquet: %d records of InfiniBand CM or DDP over SCTP (cm, ddp, sctp_session and their conn records) not written: the tables are iWARP's; -T jsonl has them", n))
	}
	return w
}

// Abort removes the files of an interrupted run.
func (p *parquetSink) Abort() { p.s.Abort() }

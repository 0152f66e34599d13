package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/filter"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/gctune"
	"github.com/iwarpkit/iwarpkit/report"
)

const usage = `usage: iwarpdump -r FILE [-r FILE...] [-T text|jsonl|fields -e FIELD|parquet -w DIR] [-v] [-q] [-X] [-t FORMAT] [-c COUNT]
                 [-Y FILTER] [-z TABLE] [--fail-on LEVEL] [--report KIND:FILE] [--shard I/N] [--strict]
       iwarpdump -i IFACE [capture options] [EXPRESSION]
       iwarpdump split --shards N -w DIR FILE...

Decode iWARP (MPA/DDP/RDMAP over TCP; IB CM over RoCEv2; DDP over SCTP) from
pcap or pcapng files ("-" reads standard input; gzip-compressed files are read
as they are) or from a live interface.

`

// run is the whole command, testable in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "split" {
		return runSplit(ctx, args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("iwarpdump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fullUsage := func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	// A bad flag or value is one line and a pointer to -h, as tshark and
	// tcpdump say it, not the whole help after the error.
	// (The flag package calls Usage for -h too: Parse's ErrHelp below
	// prints the whole help instead.)
	fs.Usage = func() {}
	var (
		files   listFlag
		shardF  = fs.String("shard", "", "decode only the connections of shard `I/N` (0 <= I < N; a symmetric hash of the 4-tuple, as iwarpdump split uses)")
		outType = fs.String("T", "text", "output `format`: text, jsonl, fields (the -e fields of each record, as tshark -T fields), or parquet (with -w DIR: Parquet files in DIR)")
		verbose = fs.Bool("v", false, "print the field tree of every record")
		quiet   = fs.Bool("q", false, "quiet: shorter lines, no attached findings")
		hexdump = fs.Bool("X", false, "print the first octets of each payload in hex and ASCII (non-printable octets as '.')")
		_       = fs.Bool("n", false, "do not resolve addresses or ports (iwarpdump never does; accepted for tcpdump habits)")
		count   = fs.Uint64("c", 0, "stop after reading `COUNT` packets")
		strict  = fs.Bool("strict", false, "exit 3 when the capture file is damaged")
		flags   = fs.String("mpa-flags", "rfc6581", "read the MPA rev 2 Enhanced flags A-D with `MEANING`: rfc6581 or draft (seed 003, draft-ietf-storm-mpa-peer-connect-01)")
		forces  forceList
		display = fs.String("Y", "", "display filter: print only the records that match `EXPR` (Wireshark syntax over the field registry, with tshark 4.0's functions, arithmetic, & and fields compared; iwarp_* names and ip.addr, ip.src, ip.dst, ipv6.*, tcp.port, tcp.srcport, tcp.dstport, tcp.stream, sctp.*port, frame.time_relative, frame.time_epoch and frame.time accepted)")
		stats   listFlag
		reports listFlag
		columns listFlag
		colOpts = filter.DefaultColumnOptions()
		failOn  = fs.String("fail-on", "", "exit 1 when a finding of `LEVEL` (error, warning or note) or worse is seen")
		jobs    = fs.Int("j", 1, "decode capture files (-r) with `N` workers, connections spread across them; the output is the same as with 1 (0: one per CPU; -l on a pipe: 1)")
		mmap    = fs.Bool("mmap", false, "with -j 1, map uncompressed capture files into memory instead of reading them with read(2)")
		timeFmt = fs.String("t", "u", "text lines' time `FORMAT`, as tshark -t: u UTC time of day, ud UTC date and time, a and ad the same in local time (TZ), e seconds since the epoch, r seconds since the first packet, dd seconds since the previous line")
	)
	// tshark's spellings: -V the packet details (the field tree), -x the
	// packet bytes.
	fs.BoolVar(verbose, "V", false, "as -v (tshark's -V)")
	fs.BoolVar(hexdump, "x", false, "as -X (tshark's -x)")
	// tcpdump's spellings of the same: -tt epoch, -ttt since the previous
	// line, -tttt local date and time, -ttttt since the first packet.
	for i, f := range []string{"e", "dd", "ad", "r"} {
		name := strings.Repeat("t", i+2)
		fs.BoolFunc(name, "as -t "+f+" (tcpdump's -"+name+")", func(string) error {
			*timeFmt = f
			return nil
		})
	}
	fs.Var(&files, "r", "read packets from `FILE` (pcap or pcapng, optionally gzip-compressed; - for standard input); repeat -r or give a quoted glob to merge several files in timestamp order")
	fs.Var(&stats, "z", "print statistics after the decode: `TABLE` is conn, ops, findings or latency (repeatable; with -q no records are printed; with -T jsonl and records, on standard error)")
	fs.Var(&columns, "e", "with -T fields: print `FIELD` of each record, a column per -e in order (display-filter names: ddp.stag, iwarp_rdma.opcode, ip.src, findings.code; and frame.time_epoch, frame.time_relative, frame.time_delta_displayed)")
	fs.Func("E", "with -T fields: `OPTION` as tshark -E: header=y|n, separator=/t|/s|C, occurrence=f|l|a, aggregator=,|/s|C, quote=d|s|n, bom=y|n", colOpts.Set)
	fs.Var(&reports, "report", "write a report for CI: `KIND:FILE` with KIND junit, sarif or html (repeatable)")
	live := addLiveFlags(fs)
	prof := addProfileFlags(fs)
	fs.Var(&forces, "decode-as", "force iWARP decoding of matching connections; `SPEC` is tcp.port==N[,markers=to|from|both|none][,crc=on|off][,host=ADDR][,origin=isn] (repeatable; \"to\" is the direction towards the port)")
	if err := fs.Parse(getoptArgs(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fullUsage()
			return 0
		}
		fmt.Fprintln(stderr, "iwarpdump -h lists the options")
		return 2
	}

	if live.dump > 0 {
		return live.dumpProgram(int(live.dump), files, fs.Args(), stdout, stderr)
	}
	if len(files) == 0 && !live.active() {
		fmt.Fprintln(stderr, "iwarpdump: no capture source given (use -r FILE or -i IFACE)")
		fullUsage()
		return 2
	}
	if len(files) > 0 && live.iface != "" {
		// It captured live and ignored the files; tcpdump reads the file.
		fmt.Fprintln(stderr, "iwarpdump: -r and -i both given: read files or capture live, not both")
		return 2
	}
	cGiven := false
	fs.Visit(func(f *flag.Flag) { cGiven = cGiven || f.Name == "c" })
	if cGiven && *count == 0 {
		// As tcpdump and tshark: 0 is no count (the default is none).
		fmt.Fprintln(stderr, "iwarpdump: -c: the packet count must be at least 1")
		return 2
	}
	var jsonl, parquetOut, fieldsOut bool
	switch strings.ToLower(*outType) {
	case "text":
	case "fields":
		fieldsOut = true
	case "jsonl", "json":
		jsonl = true
	case "parquet":
		parquetOut = true
	default:
		fmt.Fprintf(stderr, "iwarpdump: unknown output format %q (want text, jsonl, fields or parquet)\n", *outType)
		return 2
	}
	tf, err := format.ParseTimeFormat(*timeFmt)
	if err != nil {
		fmt.Fprintf(stderr, "iwarpdump: -t %s: %v\n", *timeFmt, err)
		return 2
	}
	if *hexdump && (jsonl || parquetOut || fieldsOut) {
		// Not an error, as tcpdump ignores -X with -w: said once.
		fmt.Fprintln(stderr, "iwarpdump: -X prints payload octets in text output only: ignored with -T "+strings.ToLower(*outType))
	}
	sh, err := parseShard(*shardF)
	if err != nil {
		fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
		return 2
	}
	if msg := parquetUsage(parquetOut, live); msg != "" {
		fmt.Fprintln(stderr, "iwarpdump: "+msg)
		return 2
	}

	var cols *filter.Columns
	switch {
	case fieldsOut:
		cols, err = filter.NewColumns(columns, colOpts)
		if err != nil {
			fmt.Fprintf(stderr, "iwarpdump: -T fields: %v\n", err)
			return 2
		}
	case len(columns) > 0:
		fmt.Fprintln(stderr, "iwarpdump: -e prints fields with -T fields only: add -T fields")
		return 2
	}

	flt, err := filter.Compile(*display)
	if err != nil {
		fmt.Fprintf(stderr, "iwarpdump: bad display filter: %v\n", err)
		var se *filter.SyntaxError
		if errors.As(err, &se) {
			fmt.Fprintln(stderr, se.Caret(*display))
		}
		return 2
	}
	for _, z := range stats {
		switch z {
		case "conn", "ops", "findings", "latency":
		default:
			fmt.Fprintf(stderr, "iwarpdump: unknown -z table %q (want conn, ops, findings or latency)\n", z)
			return 2
		}
	}
	for _, r := range reports {
		kind, path, ok := strings.Cut(r, ":")
		if !ok || path == "" || (kind != "junit" && kind != "sarif" && kind != "html") {
			fmt.Fprintf(stderr, "iwarpdump: bad --report %q (want junit:FILE, sarif:FILE or html:FILE)\n", r)
			return 2
		}
	}
	var failLevel dissect.Severity
	if *failOn != "" {
		lv, ok := dissect.ParseSeverity(*failOn)
		if !ok {
			fmt.Fprintf(stderr, "iwarpdump: bad --fail-on %q (want error, warning or note)\n", *failOn)
			return 2
		}
		failLevel = lv
	}
	// The collector sees every record (not only those -Y selects), so that
	// tables and reports describe the whole capture.
	var coll *report.Collector
	if len(stats) > 0 || len(reports) > 0 || failLevel != 0 {
		coll = report.NewCollector()
		if !slices.ContainsFunc(reports, func(r string) bool { return strings.HasPrefix(r, "html:") }) {
			coll.NoTimeline() // only the HTML report draws it
		}
		if len(reports) == 0 {
			coll.NoReports() // the findings listed one by one
		}
	}
	silent := *quiet && (len(stats) > 0 || len(reports) > 0)
	opts := flows.Options{Force: forces}
	switch *flags {
	case "rfc6581", "rfc":
	case "draft", "draft01":
		opts.Flags = mpa.FlagsDraft01
	default:
		fmt.Fprintf(stderr, "iwarpdump: unknown --mpa-flags %q (want rfc6581 or draft)\n", *flags)
		return 2
	}

	var src packetSource
	mapped := false  // src reads a mapped file: the loop runs under underFaults
	several := false // src merges several files
	if live.active() {
		ls, code := openLive(ctx, live, fs.Args(), stderr)
		if ls == nil {
			return code
		}
		src = ls
	} else {
		// Files are read with read(2) into a reused buffer. --mmap maps
		// the files decoded by this goroutine alone (-j 1; -j N reads
		// in chunks or copies packets, Parquet rows may keep octets)
		// instead (capture.OpenMapped), the loop below recovering from
		// the fault of a file truncated meanwhile. Mapping saved the
		// read(2) copy, a tenth of the decode, on the Intel VM of issue
		// 6's first fourteen sessions; on the AMD VM of the fifteenth, a
		// process's first touch of each mapped page costs some 2 µs, and
		// the mapped decode took 2.2x as long as the read one (README).
		fsrc, err := openMerge(files, *mmap && *jobs == 1 && !parquetOut)
		if err != nil {
			fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
			var pe *iofs.PathError
			if errors.As(err, &pe) {
				return 2 // missing or unreadable: a usage error
			}
			// Readable but not a capture we can decode (bad magic,
			// unknown link type, header cut short): a damaged file,
			// with nothing decodable in it (issue 11's exit codes).
			if *strict {
				return 3
			}
			return 0
		}
		mapped = fsrc.Mapped()
		several = fsrc.Len() > 1
		if *jobs == 1 {
			// Retransmissions are compared with the delivered octets
			// read back from the files rather than with a copy of them
			// (capture.Packet.PayloadPos; reassembly.Options.File). The
			// files are read by this goroutine only: not with workers.
			opts.Reassembly.File = fsrc
		}
		if parquetOut {
			// -w names the Parquet directory here, not a capture to write.
			src = fsrc
		} else {
			// A trailing capture filter (or -F, --bpf-raw) runs in a BPF VM;
			// -w writes the packets read.
			ws, code := live.wrapFile(fsrc, fs.Args(), stderr)
			if ws == nil {
				fsrc.Close()
				return code
			}
			src = ws
		}
	}
	// The source is closed before the exit status is decided: a -w file
	// whose last octets could not be written, or an interface that went
	// away, make it 1. (The deferred call covers the early returns.)
	srcClosed := false
	closeSrc := func() error {
		if srcClosed {
			return nil
		}
		srcClosed = true
		return src.Close()
	}
	defer closeSrc()
	failed := false // a -w write failed, or the live capture: exit 1

	defer gctune.Start()()
	var pq *parquetSink
	if parquetOut {
		pq, err = newParquetSink(live.write, inputBase(files), sh)
		if err != nil {
			fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
			return 1
		}
		defer pq.Abort() // no-op after a successful Close
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	// Live sources flush the output when idle, and per record under -l;
	// first the decoder lets go of the records that waited liveHold for
	// a message still open (flows.Decoder.ReleaseBefore).
	var heldBack *flows.Decoder
	if f, ok := src.(interface{ SetFlush(func() error) }); ok {
		f.SetFlush(func() error {
			if heldBack != nil {
				heldBack.ReleaseBefore(time.Now().Add(-liveHold))
			}
			return w.Flush()
		})
	}
	var buf []byte
	var jw format.JSONWriter
	topts := format.TextOptions{Quiet: *quiet, Verbose: *verbose, Hex: *hexdump, Time: tf}
	relFilter := flt.Reads("frame.time_relative")
	if (tf == format.TimeRelative && !jsonl && cols == nil || cols.Uses("frame.time_relative") || relFilter) && !live.active() {
		// -t r counts from the first packet: read ahead from the files
		// (not standard input), so that the workers of -j N can write
		// the lines; otherwise the loop below sets it.
		topts.Ref = firstPacketTime(files)
	}
	if relFilter && !topts.Ref.IsZero() {
		flt = flt.WithRef(topts.Ref)
	}
	// timeAlone: a line's time needs no other line (-t dd does).
	timeAlone := jsonl || tf != format.TimeDelta && (tf != format.TimeRelative || !topts.Ref.IsZero())
	var ctimes filter.ColumnTimes // -T fields: frame.time_relative and _delta_displayed
	if cols != nil {
		timeAlone = !cols.Uses("frame.time_delta_displayed") && (!cols.Uses("frame.time_relative") || !topts.Ref.IsZero())
		if !silent {
			_, _ = w.Write(cols.AppendHeader(nil))
		}
	}
	emit := func(r *flows.Record) {
		if coll != nil {
			coll.Add(r)
		}
		if silent || (flt != nil && !flt.MatchRecord(r)) {
			return
		}
		if pq != nil {
			pq.Add(r)
			return
		}
		buf = buf[:0]
		switch {
		case cols != nil:
			ctimes.Ref = topts.Ref
			buf = cols.Append(buf, r, ctimes)
			ctimes.Prev = r.TS
		case jsonl:
			buf = jw.Append(buf, r)
			buf = append(buf, '\n')
		default:
			buf = format.AppendText(buf, r, topts)
			if len(buf) > 0 {
				topts.Prev = r.TS // -t dd
			}
		}
		_, _ = w.Write(buf)
	}
	// emit keeps nothing of a record (a Parquet row may keep slices of
	// it), so the decoder may reuse FPDU records.
	opts.Recycle = pq == nil
	stopProfile := prof.start(stderr)
	defer stopProfile()
	var dec interface {
		Packet(*capture.Packet)
		Close()
	}
	// -j 0: one per CPU; -l on a pipe: one (workerCount: it writes the
	// records of the packets a pipe has brought before a read that may
	// wait, which -j N's rounds did not).
	workers := workerCount(*jobs, live.lineBuf && !live.active(), files)
	damaged, damage := false, "" // damage: what the reports say of it
	var chunks *capture.ChunkReader
	if workers > 1 && !live.active() {
		par, err := flows.NewParallel(opts, workers, emit)
		if err != nil {
			fmt.Fprintf(stderr, "iwarpdump: -j: %v\n", err)
			return 2
		}
		dec = par
		staged, stagedOK := flt.Staged()
		if coll == nil && pq == nil && !silent && (!flt.Reads("conn") || stagedOK) && !(cols != nil && cols.Reads("conn")) && timeAlone &&
			(!relFilter || !topts.Ref.IsZero()) {
			// The records are written and nothing else sees them: the
			// workers match and render the FPDUs and messages, and the
			// merge writes them in order with their connection ids
			// (flows.Parallel.SetFormat). A filter that reads the id
			// (conn==3, tcp.stream==3) is matched in two stages: the
			// workers test the rest, the merge the id (filter.Staged).
			// A time that needs the line before (-t dd) leaves them to
			// emit.
			par.SetFormat(func() flows.Format {
				f := topts.Format
				switch {
				case cols != nil:
					f = cols.Format(filter.ColumnTimes{Ref: topts.Ref})
				case jsonl:
					f = new(format.JSONWriter).Format
				}
				if *display == "" || stagedOK {
					return f
				}
				return func(dst []byte, r *flows.Record) ([]byte, int, bool) {
					if !flt.MatchRecord(r) {
						return dst, -1, true // nothing written
					}
					return f(dst, r)
				}
			}, func(b []byte) { _, _ = w.Write(b) })
			if stagedOK {
				par.SetKeep(func() func(*flows.Record) (uint64, bool) { return staged.Stage1 },
					func(r *flows.Record, tag uint64) bool { return staged.Stage2(tag, r) })
			}
		}
		if coll != nil {
			// Where only the tables and reports see the records, each
			// worker counts the FPDUs whose order does not matter itself
			// and the merge orders only the rest (localFor).
			par.SetLocal(localFor(coll, silent && pq == nil))
		}
		// One plain pcap or pcapng file with nothing between the file and the
		// decoder (no capture filter, -w or --shard): the workers share
		// the file's octets in chunks instead of copied packets.
		plain := len(files) == 1 && files[0] != "-" && !strings.ContainsAny(files[0], "*?[") &&
			len(fs.Args()) == 0 && live.filterFile == "" && !live.bpfRaw && *shardF == "" &&
			(parquetOut || (live.write == "" && live.fileSize == "" && live.rotate == 0 && live.maxFiles == 0))
		var cr *capture.ChunkReader
		if plain {
			cr, _ = capture.OpenChunks(files[0], *count)
		} else if m, ok := src.(*capture.Merge); ok && m.Len() > 1 && len(fs.Args()) == 0 && live.filterFile == "" &&
			!live.bpfRaw && *shardF == "" && (parquetOut || (live.write == "" && live.fileSize == "" && live.rotate == 0 && live.maxFiles == 0)) {
			// Several files, nothing between them and the decoder: the
			// reader repacks the merged packets into chunks, as it does
			// a pcapng file's, instead of copying them into batches.
			cr = capture.NewMergeChunks(m, *count)
		}
		if cr != nil {
			chunks = cr
			defer cr.Close()
			n, err := par.DecodeChunks(ctx, cr)
			if err != nil {
				_ = w.Flush()
				damage = reportDamage(stderr, err, n, several)
				damaged = true
			}
		}
	} else {
		d := flows.NewDecoder(opts, emit)
		if live.active() {
			heldBack = d
		}
		if coll != nil {
			// As the workers of -j N do (above): under -q, never waiting
			// in frame order for a message still open (localFor).
			newLocal, absorb := localFor(coll, silent && pq == nil)
			d.SetLocal(newLocal(), absorb)
		}
		dec = d
	}
	if live.lineBuf && !live.active() && workers == 1 {
		// -l with files: what the packets read so far made is written
		// before a read that may wait (a pipe, -r -), as tcpdump -l
		// writes each packet's line. (A live source flushes itself,
		// SetFlush; the workers of -j N write from their merge, in
		// rounds.) Outside the loop below, whose call sites
		// default.pgo knows by line.
		src = flushingSource{src, w.Flush}
	}
	var n uint64
	// The last packet read: the end of the capture, for the connections
	// still stalled then (tcp.stall), though --shard or -c kept later
	// packets from the decoder.
	var endTS time.Time
	var endFrame uint64
	// One packet variable for the whole loop, filled in place by the
	// source: dec is an interface, so &p escapes to the heap, once rather
	// than per packet.
	var p capture.Packet
	loop := func() {
		for chunks == nil {
			if n&63 == 0 && ctx.Err() != nil { // every 64 packets: two interface calls and an atomic load
				break
			}
			if *count > 0 && n >= *count {
				break
			}
			err := src.NextInto(&p)
			if err == io.EOF {
				break
			}
			if err != nil {
				dec.Close()
				_ = w.Flush()
				if errors.As(err, new(writeError)) {
					// Not damage of the input: the -w file lacks the rest.
					fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
					failed = true
					break
				}
				damage = reportDamage(stderr, err, n, several)
				damaged = true
				break
			}
			n++
			endTS, endFrame = p.TS, p.Frame
			if n == 1 && topts.Ref.IsZero() {
				topts.Ref = p.TS // -t r
				if relFilter {
					// Before the first packet reaches the decoder:
					// the records it makes see the filter set.
					flt = flt.WithRef(p.TS)
				}
			}
			if !sh.keep(&p) {
				continue
			}
			dec.Packet(&p)
			if testPacketHook != nil {
				testPacketHook(n)
			}
		}
	}
	if !mapped {
		loop()
	} else if fault := underFaults(loop); fault != nil {
		// The decoder may hold octets of the lost pages: it is not
		// closed, and what it had not yet printed is lost.
		_ = w.Flush()
		fmt.Fprintf(stderr, "iwarpdump: %s: the file was cut short while it was read, or could not be read (%v)\n", strings.Join(files, " "), fault)
		fmt.Fprintf(stderr, "iwarpdump: decoded %d packets before the damage\n", n)
		damaged = true
	}
	if !damaged {
		prof.heap(stderr)
		if e, ok := dec.(interface{ SetEnd(time.Time, uint64) }); ok && chunks == nil {
			if live.active() {
				// The capture ran until now, not until its last packet.
				endTS, endFrame = time.Now(), 0
			}
			if !endTS.IsZero() {
				e.SetEnd(endTS, endFrame)
			}
		}
		dec.Close()
	}
	if u, ok := dec.(interface{ Unordered() uint64 }); ok && u.Unordered() > 0 && !*quiet {
		if live.active() {
			fmt.Fprintf(stderr, "iwarpdump: %d records written out of frame order: live, records wait at most %v for a message still open, whose record comes after its FPDUs\n",
				u.Unordered(), liveHold)
		} else {
			fmt.Fprintf(stderr, "iwarpdump: %d records written out of frame order: more than %d waited for messages still open, whose records come after their FPDUs\n",
				u.Unordered(), flows.DefaultMaxHeld)
		}
	}
	snapHiddenNote(dec, stderr)
	spillLost := false
	if sp, ok := dec.(interface{ SpillErr() error }); ok && sp.SpillErr() != nil {
		// The packed summaries of reset connections, kept in a temporary
		// file (internal/spill), could not be read back: their conn
		// records are missing. The rest is written; the exit status is 1.
		fmt.Fprintf(stderr, "iwarpdump: %v: conn records of reset connections are missing\n", sp.SpillErr())
		spillLost = true
	}
	if pq != nil {
		if err := pq.Close(); err != nil {
			fmt.Fprintf(stderr, "iwarpdump: -T parquet: %v\n", err)
			return 1
		}
		for _, m := range pq.warnings() {
			fmt.Fprintf(stderr, "iwarpdump: %s\n", m)
		}
	}
	if coll != nil {
		// The tables go after the records. Under JSON Lines with records
		// on stdout they go to stderr, so that stdout stays a stream of
		// JSON objects a script can read to its end (docs/jsonl.md).
		tw := w
		if (jsonl || cols != nil) && !silent && len(stats) > 0 {
			if err := w.Flush(); err != nil {
				fmt.Fprintf(stderr, "iwarpdump: writing output: %v\n", err)
				return 1
			}
			tw = bufio.NewWriter(stderr)
		}
		for _, z := range stats {
			_, _ = tw.WriteString("\n")
			var err error
			switch z {
			case "conn":
				err = coll.WriteConn(tw)
			case "ops":
				err = coll.WriteOps(tw)
			case "findings":
				err = coll.WriteFindings(tw)
			case "latency":
				err = coll.WriteLatency(tw)
			}
			if err != nil {
				fmt.Fprintf(stderr, "iwarpdump: -z %s: %v\n", z, err)
				return 1
			}
		}
		if tw != w {
			_ = tw.Flush()
		}
		for _, r := range reports {
			kind, path, _ := strings.Cut(r, ":")
			if err := writeReport(coll, kind, path, files, live.iface, damage); err != nil {
				fmt.Fprintf(stderr, "iwarpdump: --report %s: %v\n", r, err)
				return 1
			}
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "iwarpdump: writing output: %v\n", err)
		return 1
	}
	if err := closeSrc(); err != nil {
		if !errors.As(err, new(reportedError)) {
			fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
		}
		failed = true
	}
	if failed {
		return 1
	}
	if damaged && *strict {
		return 3
	}
	if spillLost {
		return 1
	}
	if failLevel != 0 {
		if worst, ok := coll.Worst(); ok && worst >= failLevel {
			return 1
		}
	}
	return 0
}

// workerCount returns the number of workers for -j jobs: one per CPU for 0,
// and one with -l (lineBuf) when a -r file is a pipe (-r -, -r
// <(tcpdump -U -w -)). The workers hand their records to the merge in
// rounds of some 256 KiB of packets, and the records of the packets a pipe
// had brought waited for the rest of a round, until the pipe ended if it
// brought less; one worker writes them before each read that may wait, as
// -l promises, and a pipe brings packets slower than one decodes them.
func workerCount(jobs int, lineBuf bool, files []string) int {
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	if jobs > 1 && lineBuf && !regularFiles(files) {
		return 1
	}
	return jobs
}

// regularFiles reports whether the -r files are all regular files (no
// standard input, pipe or device): globs are expanded, and a file that
// cannot be read counts as regular (opening it reports the error).
func regularFiles(args []string) bool {
	files, err := expandInputs(args)
	if err != nil {
		return true
	}
	for _, f := range files {
		if f == "-" {
			return false
		}
		if fi, err := os.Stat(f); err == nil && !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// testPacketHook, when set by a test, is called after each packet the
// loop decodes, with the number of packets read.
var testPacketHook func(n uint64)

// firstPacketTime returns the time of the first packet of the -r files
// merged in time order (the earliest of their first packets), for -t r;
// zero when none has a packet, or one is standard input or another file
// that is not a regular one (-r /dev/stdin, -r <(tcpdump -w -)): reading
// ahead from a pipe would take its octets from the decode.
func firstPacketTime(args []string) time.Time {
	var first time.Time
	files, err := expandInputs(args)
	if err != nil || slices.Contains(files, "-") {
		return first
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || !fi.Mode().IsRegular() {
			return first
		}
	}
	for _, f := range files {
		src, err := capture.Open(f)
		if err != nil {
			continue
		}
		var p capture.Packet
		if src.NextInto(&p) == nil && (first.IsZero() || p.TS.Before(first)) {
			first = p.TS
		}
		_ = src.Close()
	}
	return first
}

// underFaults runs f with faults at unexpected addresses turned into panics
// (debug.SetPanicOnFault) and returns the fault f panicked with, or nil. A
// mapped capture file (capture.OpenMapped) that is truncated while it is
// read faults where its lost pages are touched; any other panic goes on.
func underFaults(f func()) (fault error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(interface {
				error
				Addr() uintptr
			}); ok {
				fault = fmt.Errorf("memory fault at %#x", e.Addr())
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}

// writeReport writes one CI report file, of the -r files or of a live
// capture on iface; damage, when not empty, says how the capture was
// damaged (report.Collector.InputDamaged).
func writeReport(c *report.Collector, kind, path string, files []string, iface, damage string) error {
	if damage != "" {
		c.InputDamaged(damage)
	}
	capturePath := strings.Join(files, " ")
	if len(files) == 0 && iface != "" {
		capturePath = "-i " + iface // the JUnit suites' package and the HTML title; SARIF has no artifact
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	switch kind {
	case "junit":
		err = c.WriteJUnit(bw, "iwarpdump "+capturePath)
	case "sarif":
		inputs, xerr := expandInputs(files)
		if xerr != nil {
			inputs = files
		}
		err = c.WriteSARIFInputs(bw, "iwarpdump", inputs)
	case "html":
		err = c.WriteHTML(bw, "iwarpdump: "+capturePath)
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// forceList collects repeated --decode-as flags.
type forceList []flows.Force

func (l *forceList) String() string { return "" }

func (l *forceList) Set(s string) error {
	f, err := flows.ParseForce(s)
	if err != nil {
		return err
	}
	*l = append(*l, f)
	return nil
}

// packetSource is what run reads packets from: a capture file or a live
// interface. NextInto fills a Packet run reuses (no copy per packet); Next
// is the same returning the Packet.
type packetSource interface {
	NextInto(p *capture.Packet) error
	Next() (capture.Packet, error)
	Close() error
}

// flushingSource is a packetSource that flushes the output before each
// read (-l on files).
type flushingSource struct {
	packetSource
	flush func() error
}

func (s flushingSource) NextInto(p *capture.Packet) error {
	_ = s.flush()
	return s.packetSource.NextInto(p)
}

// reportDamage says on stderr that the input ended with err after n
// packets: each damaged input on a line of its own (a Merge joins their
// errors), then how much was decoded; several: the input is a Merge of
// several files. It returns what it said on a line, for the reports.
func reportDamage(stderr io.Writer, err error, n uint64, several bool) string {
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(stderr, "iwarpdump: %s\n", line)
	}
	// The other inputs were read to their end before the error.
	what := fmt.Sprintf("decoded %d packets before the damage", n)
	if several {
		what = fmt.Sprintf("decoded %d packets: every packet of the other inputs, and of the damaged ones up to the damage", n)
	}
	fmt.Fprintf(stderr, "iwarpdump: %s\n", what)
	return strings.ReplaceAll(err.Error(), "\n", "; ") + " (" + what + ")"
}

// parquetUsage says what is wrong with -T parquet's options, or "".
func parquetUsage(parquetOut bool, live *liveFlags) string {
	switch {
	case parquetOut && live.write == "":
		return "-T parquet needs an output directory: -w DIR"
	case parquetOut && live.active():
		// -w would name both the capture written and the tables' directory.
		return "-T parquet writes the tables of -r files: capture with -i IFACE -w FILE, then decode FILE with -T parquet -w DIR"
	}
	return ""
}

// localFor returns what the Decoder or the workers of -j N give the
// Collector coll besides the records it is given: with partials (only the
// tables and reports see the records, -q), Partials that count the FPDUs
// and messages whose order does not matter where they are decoded, so that
// they need not be ordered and never wait in frame order for a message
// still open (report.Partial); otherwise, where every record is also
// written or goes to Parquet, word of when each connection ends, so that a
// reset connection's row is packed when it retires rather than at the end
// of the capture (report.Collector.Ends).
func localFor(coll *report.Collector, partials bool) (func() flows.Local, func(conn int, v any)) {
	if partials {
		return coll.Local, coll.Absorb
	}
	return coll.Ends, coll.Absorb
}

// snapHiddenNote says on stderr how many TCP connections the capture's snap
// length left unknown (flows.Decoder.SnapHidden): with no record, they
// would otherwise go unmentioned, in -q -z conn's table too.
func snapHiddenNote(dec any, stderr io.Writer) {
	h, ok := dec.(interface{ SnapHidden() int })
	if !ok || h.SnapHidden() == 0 {
		return
	}
	conns := "TCP connections"
	if h.SnapHidden() == 1 {
		conns = "TCP connection"
	}
	fmt.Fprintf(stderr, "iwarpdump: %d %s could not be told iWARP or not: the capture's snap length cut the first segment of a direction before 8 octets of its payload (an MPA Request or Reply starts with a 16-octet key); capture with tcpdump -s 0\n",
		h.SnapHidden(), conns)
}

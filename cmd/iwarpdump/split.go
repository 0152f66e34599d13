package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/shard"
)

const splitUsage = `usage: iwarpdump split --shards N -w DIR [--name NAME] [--strict] FILE...

Split captures by connection into N files, DIR/NAME.shard-I-of-N.pcap (or
.pcapng), I from 0 to N-1. Every packet of a connection, both directions,
goes to the same shard (a symmetric hash of its addresses and ports, the one
iwarpdump --shard I/N uses), so each shard decodes on its own exactly as the
connections did in the whole capture. Several FILEs (or globs) are merged
in timestamp order first. NAME defaults to the input's base name ("A..B"
for several inputs). Files are complete when they appear: a rerun replaces
them. The paths written are printed, one a line.

`

// runSplit is "iwarpdump split": exit 0 on success, 1 when writing fails,
// 2 for usage errors and unreadable inputs, 3 under --strict when an input
// is damaged (its intact packets are still split).
func runSplit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("iwarpdump split", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, splitUsage)
		fs.PrintDefaults()
	}
	var (
		n      = fs.Int("shards", 0, "number of shards `N` (1 to 4096)")
		dir    = fs.String("w", "", "write the shard files into `DIR` (created if missing)")
		name   = fs.String("name", "", "base `NAME` of the shard files (default: the input's base name)")
		strict = fs.Bool("strict", false, "exit 3 when an input file is damaged")
		quiet  = fs.Bool("q", false, "do not print the summary on standard error")
	)
	// Flags may come before or after the files.
	var files []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	switch {
	case *n < 1 || *n > shard.MaxWriterShards:
		fmt.Fprintf(stderr, "iwarpdump split: --shards must be from 1 to %d\n", shard.MaxWriterShards)
		fs.Usage()
		return 2
	case *dir == "":
		fmt.Fprintln(stderr, "iwarpdump split: no output directory (use -w DIR)")
		fs.Usage()
		return 2
	case len(files) == 0:
		fmt.Fprintln(stderr, "iwarpdump split: no input file")
		fs.Usage()
		return 2
	}
	m, err := openMerge(files, false)
	if err != nil {
		fmt.Fprintf(stderr, "iwarpdump split: %v\n", err)
		return 2
	}
	defer m.Close()
	base := *name
	if base == "" {
		base = inputBase(files)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "iwarpdump split: %v\n", err)
		return 1
	}
	start := time.Now()
	w, err := shard.Split(ctx, m, *dir, base, *n)
	var fe *capture.FileError
	damaged := errors.As(err, &fe)
	if err != nil && !damaged {
		fmt.Fprintf(stderr, "iwarpdump split: %v\n", err)
		return 1
	}
	elapsed := time.Since(start)
	var packets, octets uint64
	for i := range w.Len() {
		p, o := w.Count(i)
		packets += p
		octets += o
		fmt.Fprintln(stdout, w.Path(i))
	}
	if damaged {
		fmt.Fprintf(stderr, "iwarpdump split: %v\n", err)
		fmt.Fprintf(stderr, "iwarpdump split: split the %d packets before the damage\n", packets)
	}
	if s := w.Skipped(); s > 0 {
		fmt.Fprintf(stderr, "iwarpdump split: skipped %d records without their octets\n", s)
	}
	if r := w.Raised(); r > 0 {
		fmt.Fprintf(stderr, "iwarpdump split: %d records said more octets were captured than the frame had (a damaged file): written with the original length raised to the captured length, as -w writes them\n", r)
	}
	if !*quiet {
		files := "files"
		if m.Len() == 1 {
			files = "file"
		}
		fmt.Fprintf(stderr, "iwarpdump split: %d packets (%s) from %d %s into %d shards in %s (%s/s)\n",
			packets, byteSize(octets), m.Len(), files, w.Len(),
			elapsed.Round(time.Millisecond), byteSize(uint64(float64(octets)/max(elapsed.Seconds(), 1e-9))))
	}
	if damaged && *strict {
		return 3
	}
	return 0
}

// byteSize prints an octet count with a binary unit: "512.0 MiB".
func byteSize(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	div, exp := uint64(unit), 0
	for v := n / unit; v >= unit; v /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + string("KMGTPE"[exp]) + "iB"
}

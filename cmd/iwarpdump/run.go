package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/filter"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

const usage = `usage: iwarpdump -r FILE [-T text|jsonl] [-v] [-q] [-n] [-c COUNT] [--strict]

Decode iWARP (MPA/DDP/RDMAP over TCP) in a pcap or pcapng file ("-" reads
standard input; gzip-compressed files are read as they are).

`

// run is the whole command, testable in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("iwarpdump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	var (
		file    = fs.String("r", "", "read packets from `FILE` (pcap or pcapng, optionally gzip-compressed; - for standard input)")
		outType = fs.String("T", "text", "output `format`: text or jsonl")
		verbose = fs.Bool("v", false, "print the field tree of every record")
		quiet   = fs.Bool("q", false, "quiet: shorter lines, no attached findings")
		hexdump = fs.Bool("X", false, "print the first octets of each payload in hex and ASCII (non-printable octets as '.')")
		_       = fs.Bool("n", false, "do not resolve addresses or ports (iwarpdump never does; accepted for tcpdump habits)")
		count   = fs.Uint64("c", 0, "stop after reading `COUNT` packets")
		strict  = fs.Bool("strict", false, "exit 3 when the capture file is damaged")
		flags   = fs.String("mpa-flags", "rfc6581", "read the MPA rev 2 Enhanced flags A-D with `MEANING`: rfc6581 or draft (seed 003, draft-ietf-storm-mpa-peer-connect-01)")
		forces  forceList
		display = fs.String("Y", "", "display filter: print only the records that match `EXPR` (Wireshark syntax over the field registry; iwarp_* names accepted)")
	)
	live := addLiveFlags(fs)
	fs.Var(&forces, "decode-as", "force iWARP decoding of matching connections; `SPEC` is tcp.port==N[,markers=to|from|both|none][,crc=on|off][,host=ADDR][,origin=isn] (repeatable; \"to\" is the direction towards the port)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 && !live.acceptsArgs() {
		fmt.Fprintf(stderr, "iwarpdump: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if *file == "" && !live.active() {
		fmt.Fprintln(stderr, "iwarpdump: no capture source given (use -r FILE or -i IFACE)")
		fs.Usage()
		return 2
	}
	var jsonl bool
	switch strings.ToLower(*outType) {
	case "text":
	case "jsonl", "json":
		jsonl = true
	default:
		fmt.Fprintf(stderr, "iwarpdump: unknown output format %q (want text or jsonl)\n", *outType)
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
	if live.active() {
		ls, code := openLive(ctx, live, fs.Args(), stderr)
		if ls == nil {
			return code
		}
		src = ls
	} else {
		fsrc, err := capture.Open(*file)
		if err != nil {
			fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
			return 2
		}
		src = fsrc
	}
	defer src.Close()

	w := bufio.NewWriterSize(stdout, 64<<10)
	var buf []byte
	topts := format.TextOptions{Quiet: *quiet, Verbose: *verbose, Hex: *hexdump}
	emit := func(r *flows.Record) {
		if flt != nil && !flt.MatchRecord(r) {
			return
		}
		buf = buf[:0]
		if jsonl {
			buf = format.AppendJSON(buf, format.Fields(r))
			buf = append(buf, '\n')
		} else {
			buf = format.AppendText(buf, r, topts)
		}
		_, _ = w.Write(buf)
	}
	dec := flows.NewDecoder(opts, emit)
	damaged := false
	var n uint64
	for {
		if ctx.Err() != nil {
			break
		}
		if *count > 0 && n >= *count {
			break
		}
		p, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			dec.Close()
			_ = w.Flush()
			fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
			fmt.Fprintf(stderr, "iwarpdump: decoded %d packets before the damage\n", n)
			damaged = true
			break
		}
		n++
		dec.Packet(&p)
	}
	if !damaged {
		dec.Close()
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "iwarpdump: writing output: %v\n", err)
		return 1
	}
	if damaged && *strict {
		return 3
	}
	return 0
}

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
// interface.
type packetSource interface {
	Next() (capture.Packet, error)
	Close() error
}

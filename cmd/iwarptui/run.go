package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/gctune"
	"github.com/iwarpkit/iwarpkit/internal/tui"
)

const usage = `usage: iwarptui [-t FORMAT] [--mpa-flags rfc6581|draft] [--decode-as SPEC]... FILE

Browse the iWARP (MPA/DDP/RDMAP over TCP) records of a pcap or pcapng file
(gzip-compressed or not; - reads standard input) in the terminal. Press ?
inside for the keys.

`

// openTUI builds the application; tests replace it to draw on a
// simulation screen.
var openTUI = func(path string, o tui.Options) (*tui.App, error) { return tui.New(path, o) }

// run is the whole command, testable in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("iwarptui", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	flags := fs.String("mpa-flags", "rfc6581", "read the MPA rev 2 Enhanced flags A-D with `MEANING`: rfc6581 or draft")
	timeFmt := fs.String("t", "u", "the Time column's `FORMAT`, as tshark -t and iwarpdump -t: u UTC time of day, ud UTC date and time, a and ad the same in local time (TZ), e seconds since the epoch, r seconds since the first packet, dd seconds since the previous row shown")
	var forces forceList
	fs.Var(&forces, "decode-as", "force iWARP decoding of matching connections; `SPEC` as for iwarpdump (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "iwarptui: give exactly one capture file")
		fs.Usage()
		return 2
	}
	tf, err := format.ParseTimeFormat(*timeFmt)
	if err != nil {
		fmt.Fprintf(stderr, "iwarptui: -t %s: %v\n", *timeFmt, err)
		return 2
	}
	opts := flows.Options{Force: forces}
	switch *flags {
	case "rfc6581", "rfc":
	case "draft", "draft01":
		opts.Flags = mpa.FlagsDraft01
	default:
		fmt.Fprintf(stderr, "iwarptui: unknown --mpa-flags %q (want rfc6581 or draft)\n", *flags)
		return 2
	}
	// The index of a big capture is most of the heap: the collector runs
	// at a lower GOGC as it grows, as for iwarpdump (gctune).
	defer gctune.Start()()
	app, err := openTUI(fs.Arg(0), tui.Options{Flows: opts, Time: tf})
	if err != nil {
		fmt.Fprintf(stderr, "iwarptui: %v\n", err)
		return 2
	}
	defer app.Close()
	if err := app.Run(ctx, true); err != nil {
		fmt.Fprintf(stderr, "iwarptui: %v\n", err)
		return 1
	}
	if err := app.IndexErr(); err != nil && !errors.Is(err, context.Canceled) {
		// A damaged capture: shown in the UI, and said again on leaving
		// it, on standard error as iwarpdump says it (exit status 0).
		fmt.Fprintf(stderr, "iwarptui: %v\n", err)
	}
	if n := app.SnapHidden(); n > 0 {
		// Said in the UI's status line too, as iwarpdump says it.
		conns := "TCP connections"
		if n == 1 {
			conns = "TCP connection"
		}
		fmt.Fprintf(stderr, "iwarptui: %d %s could not be told iWARP or not: the capture's snap length cut the first segment of a direction before 8 octets of its payload; capture with tcpdump -s 0\n", n, conns)
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

// Command iwarpsynth writes synthetic iWARP captures with their ground
// truth: a pcap file and, beside it, a JSON Lines file listing exactly what
// was sent (see package synth).
//
//	iwarpsynth -list
//	iwarpsynth -scenario rev1-crc -seed 7 -o out.pcap     # out.pcap + out.truth.jsonl
//	iwarpsynth -scenario large -size 500M -o big.pcap     # streamed, constant memory
//	iwarpsynth -all dir/                                  # every named scenario
//	iwarpsynth -scenario synflood -conns 100000 -o syn.pcap  # a stress workload
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/iwarpkit/iwarpkit/synth"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// largeName is the scenario name that selects synth.WriteLarge.
const largeName = "large"

// defaultLargeSize is the large scenario's size when -size is not given.
const defaultLargeSize = 10 << 20

// run is the whole command; it returns the exit status (0 ok, 1 failure,
// 2 bad usage).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("iwarpsynth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("scenario", "", "named scenario to generate (see -list)")
	seed := fs.Int64("seed", 1, "seed for ISNs, payloads and timing")
	out := fs.String("o", "", "output pcap file; the truth goes to the same name with .truth.jsonl")
	list := fs.Bool("list", false, "list the named scenarios")
	size := fs.String("size", "", "target pcap size of the large scenario, e.g. 500M, 2G, 64K (implies -scenario large)")
	all := fs.String("all", "", "write every named scenario into this directory as NAME.pcap and NAME.truth.jsonl")
	nconns := fs.Int("conns", 0, "connections (SYNs; MiB for "+synth.StressLong+") of a stress scenario: "+strings.Join(synth.StressKinds, ", ")+" (default 10000)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: iwarpsynth -scenario NAME [-seed N] -o FILE.pcap | -size 500M -o FILE.pcap | -all DIR | -list\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "iwarpsynth: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	switch {
	case *list:
		for _, n := range synth.Names() {
			fmt.Fprintf(stdout, "%-22s %s\n", n, synth.Describe(n))
		}
		fmt.Fprintf(stdout, "%-22s %s\n", largeName, "one long connection streamed in constant memory (-size)")
		fmt.Fprintf(stdout, "%-22s %s\n", "perf", "issue 6 workload: 8 connections, markers in half, CRC on, 0 B-256 KiB messages, MSS 1460 (-size, default 512M)")
		fmt.Fprintf(stdout, "%-22s %s\n", "small", "small messages: 4 connections, markers in half, CRC on, Sends and Writes of 0-64 B coalesced, MSS 1460 (-size, default 512M)")
		fmt.Fprintf(stdout, "%-22s %s\n", synth.StressSYNFlood, "stress: unanswered SYNs, each from its own endpoint (-conns)")
		fmt.Fprintf(stdout, "%-22s %s\n", synth.StressOpen, "stress: connections all open at once, each in the middle of a 64 KiB RDMA Write at the end (-conns)")
		fmt.Fprintf(stdout, "%-22s %s\n", synth.StressChurn, fmt.Sprintf("stress: short connections, %d open at a time, closed with FINs (-conns)", synth.StressConcurrent))
		fmt.Fprintf(stdout, "%-22s %s\n", synth.StressResets, fmt.Sprintf("stress: short connections, %d open at a time, each reset after its messages (-conns)", synth.StressConcurrent))
		fmt.Fprintf(stdout, "%-22s %s\n", synth.StressResetsSlow, "stress: the same with frames 100 ms apart (25,000 resets over a day) (-conns)")
		fmt.Fprintf(stdout, "%-22s %s\n", synth.StressLong, "stress: one connection sending one RDMA Write of -conns MiB")
		return 0
	case *all != "":
		if err := writeAll(*all, *seed); err != nil {
			fmt.Fprintf(stderr, "iwarpsynth: %v\n", err)
			return 1
		}
		return 0
	}
	if *size != "" && *name == "" {
		*name = largeName
	}
	if *name == "" || *out == "" {
		fs.Usage()
		return 2
	}
	if slices.Contains(synth.StressKinds, *name) {
		if *size != "" {
			fmt.Fprintf(stderr, "iwarpsynth: -size does not apply to %s: give -conns\n", *name)
			return 2
		}
		n := *nconns
		if n == 0 {
			n = 10000
		}
		if n < 0 || n >= 1<<28 {
			fmt.Fprintf(stderr, "iwarpsynth: -conns: want 1 to %d\n", 1<<28-1)
			return 2
		}
		if err := writeStress(ctx, *out, *name, n, *seed); err != nil {
			fmt.Fprintf(stderr, "iwarpsynth: %v\n", err)
			return 1
		}
		return 0
	}
	if *nconns != 0 {
		fmt.Fprintf(stderr, "iwarpsynth: -conns applies only to the stress scenarios (%s)\n", strings.Join(synth.StressKinds, ", "))
		return 2
	}
	if *name == "perf" || *name == "small" {
		n := int64(512 << 20)
		if *size != "" {
			var err error
			if n, err = parseSize(*size); err != nil {
				fmt.Fprintf(stderr, "iwarpsynth: -size: %v\n", err)
				return 2
			}
		}
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintf(stderr, "iwarpsynth: %v\n", err)
			return 1
		}
		write := synth.WritePerf
		if *name == "small" {
			write = synth.WriteSmall
		}
		err = write(ctxWriter{ctx, f}, n, *seed)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintf(stderr, "iwarpsynth: %v\n", err)
			return 1
		}
		return 0
	}
	if *name == largeName {
		n := int64(defaultLargeSize)
		if *size != "" {
			var err error
			if n, err = parseSize(*size); err != nil {
				fmt.Fprintf(stderr, "iwarpsynth: -size: %v\n", err)
				return 2
			}
		}
		if err := writeLarge(ctx, *out, n, *seed); err != nil {
			fmt.Fprintf(stderr, "iwarpsynth: %v\n", err)
			return 1
		}
		return 0
	}
	if *size != "" {
		fmt.Fprintf(stderr, "iwarpsynth: -size applies only to the %s scenario\n", largeName)
		return 2
	}
	s, ok := synth.Named(*name, *seed)
	if !ok {
		fmt.Fprintf(stderr, "iwarpsynth: unknown scenario %q (see -list)\n", *name)
		return 2
	}
	res, err := synth.WriteFiles(s, *out)
	if err != nil {
		fmt.Fprintf(stderr, "iwarpsynth: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d frames, %d truth records (%s)\n", *out, res.Frames, len(res.Records), synth.TruthPath(*out))
	return 0
}

// writeAll writes every named scenario into dir.
func writeAll(dir string, seed int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, n := range synth.Names() {
		s, _ := synth.Named(n, seed)
		if _, err := synth.WriteFiles(s, filepath.Join(dir, n+".pcap")); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
	}
	return nil
}

// ctxWriter fails writes once ctx is done, so an interrupt stops a long run.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

func writeLarge(ctx context.Context, path string, size, seed int64) (err error) {
	pf, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := pf.Close(); err == nil {
			err = cerr
		}
	}()
	tf, err := os.Create(synth.TruthPath(path))
	if err != nil {
		return err
	}
	defer func() {
		if cerr := tf.Close(); err == nil {
			err = cerr
		}
	}()
	return synth.WriteLarge(ctxWriter{ctx, pf}, ctxWriter{ctx, tf}, size, seed)
}

// writeStress writes stress workload kind of n connections to path.
func writeStress(ctx context.Context, path, kind string, n int, seed int64) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return synth.WriteStress(ctxWriter{ctx, f}, kind, n, seed)
}

// parseSize reads "500M", "2G", "64K", "1048576" (binary multiples).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(t, "B")
	t = strings.TrimSuffix(t, "I")
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			mult, t = 1<<10, t[:n-1]
		case 'M':
			mult, t = 1<<20, t[:n-1]
		case 'G':
			mult, t = 1<<30, t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v <= 0 {
		return 0, errors.New("want a positive size such as 500M")
	}
	if v > (1<<62)/mult {
		return 0, errors.New("size too large")
	}
	return v * mult, nil
}

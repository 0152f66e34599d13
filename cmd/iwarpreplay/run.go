package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/filter"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/replay"
)

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

type flags struct {
	read, conns, display    string
	loopback                bool
	connect, listen, toPcap string
	addr                    string
	rev, markers, crc       string
	ird, ord                int
	p2p, rtr, rnic          string
	speed, maxRate          string
	timeout, idle, accept   time.Duration
	payloadCap              string
	decodeAs                multiFlag
	quiet, list             bool
	serial                  bool
	maxConns                int
}

const usageText = `usage: iwarpreplay -r FILE [--conn IDS | -Y EXPR] [--loopback | --connect HOST:PORT | --listen ADDR | --to-pcap FILE] [options]

Replay the iWARP connections of a capture over real TCP sockets (or into a
capture file), rebuilding MPA framing for the new connection. Without a mode,
--loopback plays both ends on 127.0.0.1.

Connections run concurrently, as they ran in the capture, each from its
MPA exchange: with --speed orig (or a factor) each starts at its recorded
start from the first one's (scaled by the factor) and keeps its recorded
gaps, so connections that overlapped overlap again; with --speed max they
start at once, keeping which connections ran together but not when. Either
way a connection waits for the connections that had ended before it
started in the recording: those that did not overlap still do not, however
slow the replay. This is the default because it is what the capture shows
(tcpreplay keeps the timing across flows too) and a failure may depend on
it; --serial replays the connections one after the other in connection
order, each when the previous one has ended, as iwarpreplay used to. At
most --max-conns are open at once; a connection that starts late says so
in the report, and why. --listen accepts initiators as they come and gives
each the recorded connection whose MPA Request it sent (same Request, else
same private data, else the next in connection order; identical Requests
in the order they come). --to-pcap interleaves the connections' frames in
time order. Reports list the connections by id whatever the order they end
in; an error in one does not stop the others, and Ctrl-C stops them all.

Octet counts (progress lines, per side, summary) are TCP payload octets:
MPA Request/Reply and FPDUs, markers included. To play both ends in a
network namespace of your own, run the command in it: ip netns add NS;
ip netns exec NS ip link set lo up; ip netns exec NS iwarpreplay -r FILE;
ip netns del NS.
`

func newFlagSet(stderr io.Writer) (*flag.FlagSet, *flags) {
	f := &flags{}
	fs := flag.NewFlagSet("iwarpreplay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText+"\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&f.read, "r", "", "read the connections to replay from `FILE` (pcap or pcapng)")
	fs.StringVar(&f.conns, "conn", "", "replay only the connections with these `IDS` (comma-separated, ranges as 2-4; the conn numbers of iwarpdump)")
	fs.StringVar(&f.display, "Y", "", "replay only the connections with a record matching the display filter `EXPR` (two passes: -r - or a pipe is first copied to a temporary file in $TMPDIR)")
	fs.BoolVar(&f.loopback, "loopback", false, "play both ends over sockets on a loopback address (the default mode)")
	fs.StringVar(&f.addr, "addr", "127.0.0.1:0", "with --loopback: listen on `ADDR` (a loopback address; [::1]:0 for IPv6)")
	fs.StringVar(&f.connect, "connect", "", "play the initiator against the responder at `HOST:PORT` and compare its answers with the recording")
	fs.StringVar(&f.listen, "listen", "", "play the responder on `ADDR`, one accepted connection per replayed connection, matched by its MPA Request")
	fs.StringVar(&f.toPcap, "to-pcap", "", "write the regenerated traffic to `FILE` (pcap) without sockets")
	fs.StringVar(&f.rev, "rev", "", "MPA revision `N` of both frames: 0 (RDMAC: markers and CRC both ways), 1 or 2")
	fs.StringVar(&f.markers, "markers", "", "markers in directions `DIRS`: none, i2r, r2i or both")
	fs.StringVar(&f.crc, "crc", "", "CRC in both directions: `SWITCH` on or off")
	f.ird, f.ord = -1, -1 // not given: the recording's
	fs.Func("ird", "initiator's MPA rev 2 IRD `N` (at most 16383; default: the recording's); like --ord, --p2p and --rtr, refused (exit 2) when the replayed Request is not rev 2", intFlag(&f.ird))
	fs.Func("ord", "initiator's MPA rev 2 ORD `N` (at most 16383; default: the recording's)", intFlag(&f.ord))
	fs.StringVar(&f.p2p, "p2p", "", "MPA rev 2 peer-to-peer model: `SWITCH` on or off (needs rev 2: recorded, or --rev 2)")
	fs.StringVar(&f.rtr, "rtr", "", "RTR `TYPES` the initiator offers: comma-separated send, write, read, or none (needs rev 2: recorded, or --rev 2; turns --p2p on)")
	fs.StringVar(&f.rnic, "rnic", "", "answer MPA exchanges as RNIC `TYPE`: rdmac, ietf or ietf-permissive; INIT,RESP for different ends")
	fs.StringVar(&f.speed, "speed", "max", "pacing `S`: max (as fast as possible), orig (recorded timing, inside and between connections), or a factor as 2x or 0.5x")
	fs.BoolVar(&f.serial, "serial", false, "replay the connections one after the other in connection order, not concurrently as recorded")
	fs.IntVar(&f.maxConns, "max-conns", 128, "keep at most `N` connections open at once (each costs up to about 0.5 MiB and a socket per side played)")
	fs.StringVar(&f.maxRate, "max-rate", "", "bound each side to `RATE` octets per second (suffix k, M, G: powers of 1000)")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Second, "bound connecting, the MPA exchange and each wait for a peer message to `DUR`")
	fs.DurationVar(&f.accept, "accept-timeout", 2*time.Minute, "with --listen: wait at most `DUR` for an initiator to connect while no connection is open (--timeout does not bound it)")
	fs.DurationVar(&f.idle, "idle", 2*time.Second, "wait at most `DUR` for the peer's last messages at the end")
	fs.StringVar(&f.payloadCap, "payload-cap", "64M", "keep at most `SIZE` payload octets in memory; messages past it are replayed with generated octets")
	fs.Var(&f.decodeAs, "decode-as", "force iWARP decoding of matching connections, as iwarpdump --decode-as `SPEC` (repeatable)")
	fs.BoolVar(&f.quiet, "q", false, "quiet: no progress lines")
	fs.BoolVar(&f.list, "list", false, "list the selected connections' scripts and exit without sending anything")
	return fs, f
}

// run is the whole command; it returns the exit status (0 replayed as
// recorded, 1 mismatches, failed connections or interrupted, 2 bad usage or
// input).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := newFlagSet(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "iwarpreplay: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return usage("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if f.read == "" {
		return usage("no capture given (use -r FILE)")
	}
	modes := 0
	for _, on := range []bool{f.loopback, f.connect != "", f.listen != "", f.toPcap != ""} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return usage("choose one of --loopback, --connect, --listen and --to-pcap")
	}
	lo, err := loadOptions(f)
	if err != nil {
		return usage("%v", err)
	}
	o, err := replayOptions(f)
	if err != nil {
		return usage("%v", err)
	}
	if err := o.Negotiation.Check(); err != nil {
		return usage("%v", err)
	}
	scripts, err := replay.Load(f.read, lo)
	if err != nil {
		fmt.Fprintf(stderr, "iwarpreplay: %s: %v\n", f.read, err)
		return 2
	}
	for _, s := range scripts {
		for _, w := range s.Warnings {
			fmt.Fprintf(stderr, "iwarpreplay: conn %d: warning: %s\n", s.Conn, w)
		}
	}
	if f.list {
		for _, s := range scripts {
			s.WriteText(stdout)
		}
		return 0
	}
	// Every usage error before anything is created or sent: --to-pcap
	// must not truncate a file for a replay that cannot run.
	if err := o.CheckScripts(scripts); err != nil {
		if o.Negotiation.Rev == nil {
			return usage("%v; add --rev 2", err)
		}
		return usage("%v", err)
	}
	if !f.quiet {
		o.Progress = func(p replay.Progress) {
			fmt.Fprintf(stderr, "iwarpreplay: %s\n", p)
		}
	}
	var rep *replay.Report
	switch {
	case f.toPcap != "":
		out, err := os.Create(f.toPcap)
		if err != nil {
			fmt.Fprintf(stderr, "iwarpreplay: %v\n", err)
			return 2
		}
		rep, err = replay.WritePcap(ctx, out, scripts, o)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil && rep == nil {
			fmt.Fprintf(stderr, "iwarpreplay: %v\n", err)
			return 2
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(stderr, "iwarpreplay: %v\n", err)
		}
	case f.connect != "":
		rep, err = replay.Connect(ctx, f.connect, scripts, o)
	case f.listen != "":
		var lc net.ListenConfig
		ln, lerr := lc.Listen(ctx, "tcp", f.listen)
		if lerr != nil {
			fmt.Fprintf(stderr, "iwarpreplay: %v\n", lerr)
			return 2
		}
		fmt.Fprintf(stderr, "iwarpreplay: listening on %s\n", ln.Addr())
		rep, err = replay.Listen(ctx, ln.(*net.TCPListener), scripts, o)
		ln.Close()
	default:
		o.Addr = f.addr
		rep, err = replay.Loopback(ctx, scripts, o)
		if rep == nil {
			fmt.Fprintf(stderr, "iwarpreplay: %v\n", err)
			return 2
		}
	}
	if rep != nil {
		rep.WriteText(stdout)
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "iwarpreplay: %v\n", err)
		return 1
	}
	// Interrupted: the report says so (exit 1, the replay did not end).
	if rep == nil || !rep.OK() || err != nil {
		return 1
	}
	return 0
}

// loadOptions builds the selection and memory options.
func loadOptions(f *flags) (replay.LoadOptions, error) {
	var lo replay.LoadOptions
	if f.conns != "" {
		ids, err := parseIDs(f.conns)
		if err != nil {
			return lo, err
		}
		lo.Conns = ids
	}
	if f.display != "" {
		flt, err := filter.Compile(f.display)
		if err != nil {
			return lo, fmt.Errorf("-Y: %v", err)
		}
		lo.Filter = flt
	}
	pc, err := parseSize(f.payloadCap, 1<<10)
	if err != nil {
		return lo, fmt.Errorf("--payload-cap: %v", err)
	}
	lo.MaxPayload = int64(pc)
	if pc == 0 {
		lo.MaxPayload = -1
	}
	for _, spec := range f.decodeAs {
		fo, err := flows.ParseForce(spec)
		if err != nil {
			return lo, fmt.Errorf("--decode-as: %v", err)
		}
		lo.Decoder.Force = append(lo.Decoder.Force, fo)
	}
	return lo, nil
}

// replayOptions builds the negotiation, emulation, pacing and timeouts.
func replayOptions(f *flags) (replay.Options, error) {
	var o replay.Options
	n := &o.Negotiation
	if f.rev != "" {
		v, err := strconv.ParseUint(f.rev, 10, 8)
		if err != nil || v > 2 {
			return o, fmt.Errorf("--rev: want 0, 1 or 2, not %q", f.rev)
		}
		r := uint8(v)
		n.Rev = &r
	}
	if f.markers != "" {
		var i2r, r2i bool
		switch strings.ToLower(f.markers) {
		case "none", "off":
		case "i2r":
			i2r = true
		case "r2i":
			r2i = true
		case "both", "on":
			i2r, r2i = true, true
		default:
			return o, fmt.Errorf("--markers: want none, i2r, r2i or both, not %q", f.markers)
		}
		n.MarkersI2R, n.MarkersR2I = &i2r, &r2i
	}
	var err error
	if n.CRC, err = parseOnOff("--crc", f.crc); err != nil {
		return o, err
	}
	if n.P2P, err = parseOnOff("--p2p", f.p2p); err != nil {
		return o, err
	}
	for _, x := range []struct {
		name string
		v    int
		p    **uint16
	}{{"--ird", f.ird, &n.IRD}, {"--ord", f.ord, &n.ORD}} {
		if x.v < 0 {
			continue
		}
		if x.v > mpa.IRDORDNoNegotiation {
			return o, fmt.Errorf("%s: at most %d (14 bits)", x.name, mpa.IRDORDNoNegotiation)
		}
		v := uint16(x.v)
		*x.p = &v
	}
	if f.rtr != "" {
		var set mpa.RTRSet
		for _, t := range strings.Split(strings.ToLower(f.rtr), ",") {
			switch strings.TrimSpace(t) {
			case "send":
				set |= mpa.RTRSend
			case "write":
				set |= mpa.RTRWrite
			case "read":
				set |= mpa.RTRRead
			case "none", "":
			default:
				return o, fmt.Errorf("--rtr: unknown RTR type %q (send, write, read, none)", t)
			}
		}
		n.RTR = &set
	}
	if f.rnic != "" {
		parts := strings.Split(f.rnic, ",")
		if len(parts) > 2 {
			return o, fmt.Errorf("--rnic: want TYPE or INIT,RESP")
		}
		a, err := replay.ParseRNIC(parts[0])
		if err != nil {
			return o, err
		}
		b := a
		if len(parts) == 2 {
			if b, err = replay.ParseRNIC(parts[1]); err != nil {
				return o, err
			}
		}
		o.Initiator, o.Responder = a, b
	}
	if o.Speed, err = parseSpeed(f.speed); err != nil {
		return o, err
	}
	if f.maxRate != "" {
		r, err := parseSize(f.maxRate, 1000)
		if err != nil || r <= 0 {
			return o, fmt.Errorf("--max-rate: want a positive rate such as 10M, not %q", f.maxRate)
		}
		o.MaxRate = r
	}
	if f.maxConns < 1 {
		return o, fmt.Errorf("--max-conns: want at least 1, not %d", f.maxConns)
	}
	o.Serial, o.MaxConns = f.serial, f.maxConns
	if f.timeout <= 0 || f.idle <= 0 || f.accept <= 0 {
		return o, fmt.Errorf("--timeout, --idle and --accept-timeout must be positive")
	}
	o.Timeouts = replay.Timeouts{Dial: f.timeout, Handshake: f.timeout, Wait: f.timeout, Idle: f.idle, Accept: f.accept}
	return o, nil
}

func parseOnOff(name, v string) (*bool, error) {
	switch strings.ToLower(v) {
	case "":
		return nil, nil
	case "on", "1", "true", "yes":
		b := true
		return &b, nil
	case "off", "0", "false", "no":
		b := false
		return &b, nil
	}
	return nil, fmt.Errorf("%s: want on or off, not %q", name, v)
}

// parseSpeed parses --speed: max (0), orig (1), or a factor "2x", "0.5".
func parseSpeed(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "max", "", "fast":
		return 0, nil
	case "orig", "original":
		return 1, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.ToLower(s), "x"), 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("--speed: want max, orig or a positive factor such as 2x, not %q", s)
	}
	return v, nil
}

// parseSize parses a count with an optional k, M or G suffix in powers of
// unit (1000 or 1024).
func parseSize(s string, unit float64) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty size")
	}
	mult := 1.0
	switch s[len(s)-1] {
	case 'k', 'K':
		mult, s = unit, s[:len(s)-1]
	case 'm', 'M':
		mult, s = unit*unit, s[:len(s)-1]
	case 'g', 'G':
		mult, s = unit*unit*unit, s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return v * mult, nil
}

// parseIDs parses "0,2,4-6".
func parseIDs(s string) ([]int, error) {
	var ids []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("--conn: bad connection id %q", part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return nil, fmt.Errorf("--conn: bad range %q", part)
			}
		}
		for i := a; i <= b; i++ {
			ids = append(ids, i)
		}
	}
	return ids, nil
}

// intFlag parses a non-negative decimal into *v (flag.Func: no default
// printed, where the -1 that means "not given" would show).
func intFlag(v *int) func(string) error {
	return func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return fmt.Errorf("want a number from 0")
		}
		*v = n
		return nil
	}
}

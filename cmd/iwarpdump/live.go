package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/bpf"
	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/capture/live"
	"github.com/iwarpkit/iwarpkit/capture/pcapwriter"
)

// liveFlags holds the live-capture and capture-file-writing options, named
// as tcpdump names them.
type liveFlags struct {
	// filterWarn, when set, is told of the link types the capture
	// filter cannot be compiled for, once each (fileFilter).
	filterWarn io.Writer
	iface      string
	list       bool
	snaplen    int
	bufferKiB  int
	noPromisc  bool
	lineBuf    bool
	write      string
	pcap       bool
	nano       bool
	fileSize   string
	rotate     int
	maxFiles   int
	packetBuf  bool
	filterFile string
	bpfRaw     bool
	user       string
	dump       counter // -d, -dd, -ddd
}

func addLiveFlags(fs *flag.FlagSet) *liveFlags {
	l := &liveFlags{}
	fs.StringVar(&l.iface, "i", "", "capture live on `IFACE` (\"any\" for all interfaces, or a number from -D); a trailing tcpdump expression filters the capture")
	fs.BoolVar(&l.list, "D", false, "list the interfaces -i can capture on")
	fs.IntVar(&l.snaplen, "s", 0, "live capture (-i): cut packets to `SNAPLEN` octets (0: 262144, tcpdump's default); -r files are decoded as they were captured")
	fs.IntVar(&l.bufferKiB, "B", 0, "capture buffer (kernel ring) size in `KiB` (default 2048, as tcpdump)")
	fs.BoolVar(&l.noPromisc, "p", false, "do not put the interface in promiscuous mode")
	fs.BoolVar(&l.lineBuf, "l", false, "line-buffered output: write each record as soon as it is decoded")
	fs.StringVar(&l.write, "w", "", "also write the captured packets to `FILE` (pcapng; --pcap for classic pcap), decoding them as well: every packet read, as tcpdump -w (-Y selects the records printed, not the packets written)")
	fs.BoolVar(&l.pcap, "pcap", false, "write -w files in the classic pcap format instead of pcapng")
	fs.BoolVar(&l.nano, "nano", false, "with --pcap: nanosecond timestamps (tcpdump --time-stamp-precision=nano)")
	fs.StringVar(&l.fileSize, "C", "", "with -w: start a new file when the current one exceeds `SIZE` million octets (suffix k, m or g for KiB, MiB, GiB), as tcpdump -C")
	fs.IntVar(&l.rotate, "G", 0, "with -w: start a new file every `SECONDS`; the -w name is a strftime template, as tcpdump -G")
	fs.IntVar(&l.maxFiles, "W", 0, "with -C: keep `N` files in a ring; with -G alone: stop after N files")
	fs.BoolVar(&l.packetBuf, "U", false, "with -w: flush the file after every packet")
	fs.StringVar(&l.filterFile, "F", "", "read the filter expression from `FILE`")
	fs.BoolVar(&l.bpfRaw, "bpf-raw", false, "the filter is a raw BPF program as `tcpdump -ddd` prints it (lines or comma-separated), not an expression")
	fs.Var(&l.dump, "d", "print the capture filter compiled, in tcpdump -d's format (-dd: as a C array, -ddd: as decimal numbers; the verdicts are tcpdump's, the instructions our compiler's), for the link type of the -r file or -i interface (Ethernet without either), and exit")
	fs.StringVar(&l.user, "Z", "", "after opening the capture and the first -w file (which is given to USER, as tcpdump does), drop privileges to `USER` (and its groups); the files of -C/-G rotation are made as USER")
	return l
}

func (l *liveFlags) active() bool { return l.iface != "" || l.list }

// maxSnaplen is the largest -s, tcpdump's MAXIMUM_SNAPLEN (0 means it).
const maxSnaplen = 262144

// filterText returns the filter: the -F file's contents, or the trailing
// arguments joined by spaces, as tcpdump takes them.
func (l *liveFlags) filterText(args []string) (string, error) {
	if l.filterFile == "" {
		return strings.Join(args, " "), nil
	}
	if len(args) > 0 {
		return "", fmt.Errorf("both -F %s and a filter expression on the command line (%q): give one", l.filterFile, strings.Join(args, " "))
	}
	b, err := os.ReadFile(l.filterFile)
	if err != nil {
		return "", err
	}
	// '#' starts a comment to the end of its line, as in tcpdump's -F
	// files; then the lines are joined, as tcpdump does.
	var lines []string
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if t := strings.TrimSpace(line); t != "" {
			lines = append(lines, t)
		}
	}
	sep := " "
	if l.bpfRaw {
		sep = "\n"
	}
	return strings.Join(lines, sep), nil
}

// program compiles the filter for link type lt (nil: no filter).
func (l *liveFlags) program(text string, lt layers.LinkType, snaplen int) (*bpf.Program, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	if l.bpfRaw {
		return bpf.ParseRaw(text)
	}
	return live.Compile(text, lt, snaplen)
}

// linkTypeName returns libpcap's name and description of a link type, as
// tcpdump prints them.
func linkTypeName(lt layers.LinkType) (string, string) {
	switch lt {
	case layers.LinkTypeEthernet:
		return "EN10MB", "Ethernet"
	case layers.LinkTypeLinuxSLL:
		return "LINUX_SLL", "Linux cooked v1"
	case layers.LinkTypeLinuxSLL2:
		return "LINUX_SLL2", "Linux cooked v2"
	case layers.LinkTypeRaw:
		return "RAW", "Raw IP"
	}
	return strconv.Itoa(int(lt)), lt.String()
}

// parseFileSize parses -C: millions of octets, or a k/m/g suffix for
// powers of 1024 (tcpdump 4.99).
func parseFileSize(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	mult := 1e6
	switch s[len(s)-1] {
	case 'k', 'K':
		mult, s = 1<<10, s[:len(s)-1]
	case 'm', 'M':
		mult, s = 1<<20, s[:len(s)-1]
	case 'g', 'G':
		mult, s = 1<<30, s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("invalid file size %q", s)
	}
	return int64(v * mult), nil
}

// ifaceName resolves -i: a number from -D to its interface's name, a
// name as it is. With known, a name must be one of the interfaces -D
// lists, as tcpdump -d checks it ("No such device exists"); a live capture
// finds out by opening it.
func ifaceName(s string, known bool) (string, error) {
	n, err := strconv.Atoi(s)
	if err != nil && !known {
		return s, nil
	}
	ifs, lerr := live.Interfaces()
	if err == nil {
		if n < 1 || n > len(ifs) {
			return "", fmt.Errorf("interface number %d out of range (see -D)", n)
		}
		return ifs[n-1].Name, nil
	}
	if lerr != nil {
		return s, nil // nothing to check against: the capture says
	}
	for _, ifc := range ifs {
		if ifc.Name == s {
			return s, nil
		}
	}
	return "", fmt.Errorf("%s: no such interface (see -D)", s)
}

// writerOptions builds the -w options for link type lt.
func (l *liveFlags) writerOptions(lt layers.LinkType, snaplen int, iface string) (pcapwriter.Options, error) {
	size, err := parseFileSize(l.fileSize)
	if err != nil {
		return pcapwriter.Options{}, err
	}
	o := pcapwriter.Options{
		LinkType:    lt,
		Snaplen:     snaplen,
		Interface:   iface,
		Nanoseconds: l.nano,
		Application: "iwarpdump",
		FileSize:    size,
		Rotate:      time.Duration(l.rotate) * time.Second,
		MaxFiles:    l.maxFiles,
	}
	if l.pcap {
		o.Format = pcapwriter.Pcap
	}
	if l.write == "-" {
		return o, errors.New("-w -: standard output carries the decoded records; write the capture to a file")
	}
	if l.write == "" && (size > 0 || l.rotate > 0 || l.maxFiles > 0) {
		return o, errors.New("-C, -G and -W need -w")
	}
	if l.maxFiles < 0 || l.rotate < 0 {
		return o, errors.New("-G and -W must not be negative")
	}
	return o, nil
}

// openLive opens the live source; nil and an exit code when it cannot, or
// when there is nothing to capture (-D).
func openLive(ctx context.Context, l *liveFlags, args []string, stderr io.Writer) (packetSource, int) {
	if l.list {
		ifs, err := live.Interfaces()
		if err != nil {
			fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
			return nil, 2
		}
		// tcpdump -D writes to standard output.
		for _, d := range ifs {
			fmt.Fprintf(os.Stdout, "%d.%s", d.Index, d.Name)
			if d.Description != "" {
				fmt.Fprintf(os.Stdout, " (%s)", d.Description)
			}
			var fl []string
			if d.Up {
				fl = append(fl, "Up")
			}
			if d.Running {
				fl = append(fl, "Running")
			}
			if d.Loopback {
				fl = append(fl, "Loopback")
			}
			if len(fl) > 0 {
				fmt.Fprintf(os.Stdout, " [%s]", strings.Join(fl, ", "))
			}
			fmt.Fprintln(os.Stdout)
		}
		return nil, 0
	}
	fail := func(err error) (packetSource, int) {
		fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
		return nil, 2
	}
	iface, err := ifaceName(l.iface, false)
	if err != nil {
		return fail(err)
	}
	text, err := l.filterText(args)
	if err != nil {
		return fail(err)
	}
	if l.snaplen < 0 || l.bufferKiB < 0 {
		return fail(errors.New("-s and -B must not be negative"))
	}
	if l.snaplen > maxSnaplen {
		// tcpdump: "invalid snaplen" (it used to be cut to 262144 here).
		return fail(fmt.Errorf("invalid snaplen %d (must be >= 0 and <= %d)", l.snaplen, maxSnaplen))
	}
	opts := live.Options{
		Interface:     iface,
		Snaplen:       l.snaplen,
		BufferSize:    l.bufferKiB << 10,
		NoPromiscuous: l.noPromisc,
	}
	if l.bpfRaw {
		if opts.Filter, err = l.program(text, 0, l.snaplen); err != nil {
			return fail(err)
		}
	} else {
		opts.FilterExpr = text
	}
	if _, err := l.writerOptions(0, 0, ""); err != nil {
		return fail(err)
	}
	h, err := live.Open(opts)
	if err != nil {
		return fail(err)
	}
	// The first -w file is opened before -Z drops privileges, and given
	// to the user, as tcpdump does: a root-owned directory takes it. (The
	// files of -C and -G rotation are made later, as the user.)
	s := &liveSource{stderr: stderr, lineBuf: l.lineBuf, packetBuf: l.packetBuf, maxFiles: l.maxFiles}
	if l.write != "" {
		wo, _ := l.writerOptions(h.LinkType(), h.Snaplen(), h.Name())
		w, err := pcapwriter.Create(l.write, wo)
		if err != nil {
			h.Close()
			return fail(err)
		}
		s.w = w
		if l.user != "" && w.Name() != "-" {
			if err := chownTo(w.Name(), l.user); err != nil {
				w.Close()
				h.Close()
				return fail(fmt.Errorf("-Z %s: %v", l.user, err))
			}
		}
	}
	if l.user != "" {
		if err := dropPrivileges(l.user); err != nil {
			if s.w != nil {
				s.w.Close()
			}
			h.Close()
			return fail(fmt.Errorf("-Z %s: %v", l.user, err))
		}
	}
	sctx, stop := signal.NotifyContext(ctx, stopSignals...)
	s.stop = stop
	src, err := live.NewSource(sctx, h)
	if err != nil {
		stop()
		h.Close()
		return fail(err)
	}
	s.src = src
	h.SetIdle(s.idle)
	s.watchUSR1()
	name, desc := linkTypeName(h.LinkType())
	fmt.Fprintf(stderr, "iwarpdump: listening on %s, link-type %s (%s), snapshot length %d bytes\n", h.Name(), name, desc, h.Snaplen())
	switch {
	case h.FilterInUserSpace() && l.bpfRaw:
		// The kernel could not take it: Linux gives -i any's socket its
		// own cooked header, not the SLL one the program reads.
		fmt.Fprintf(stderr, "iwarpdump: the raw program runs in user space, on %s packets: it must be written for that link type (tcpdump -ddd -y %s EXPR)\n", name, name)
	case h.FilterInUserSpace():
		fmt.Fprintln(stderr, "iwarpdump: the filter runs in user space (Linux strips VLAN tags before socket filters see packets)")
	case l.bpfRaw && h.LinkType() != layers.LinkTypeEthernet:
		fmt.Fprintf(stderr, "iwarpdump: the raw program reads %s packets: it must be written for that link type (tcpdump -ddd -y %s EXPR)\n", name, name)
	}
	return s, 0
}

// liveSource is the live packet source run reads: it writes every packet
// to the -w file before handing it on, flushes run's output when asked to,
// and prints tcpdump's statistics when closed.
type liveSource struct {
	src       *live.Source
	w         *pcapwriter.Writer
	wFailed   bool // a write to w failed (NextInto returned the writeError)
	stderr    io.Writer
	stop      func()
	flush     func() error
	lineBuf   bool
	packetBuf bool
	maxFiles  int
	captured  atomic.Uint64
	usr1      chan os.Signal
	mu        sync.Mutex // serialises statistics output
	closed    bool
}

// liveHold is how long a live capture's records wait for a message still
// open before they are written out of frame order: a Terminate must not
// wait for a Ctrl-C because the RDMA Write it ended never completes.
// (tcpdump prints each packet as it comes; a file's records wait for as
// long as it takes, flows.DefaultMaxHeld records at most.)
const liveHold = 250 * time.Millisecond

// SetFlush gives the source the function that flushes run's buffered
// output: called before each packet with -l, and when the capture is idle.
func (s *liveSource) SetFlush(f func() error) { s.flush = f }

func (s *liveSource) idle() {
	if s.flush != nil {
		_ = s.flush()
	}
	if s.w != nil {
		_ = s.w.Flush()
	}
}

func (s *liveSource) Next() (capture.Packet, error) {
	var p capture.Packet
	err := s.NextInto(&p)
	return p, err
}

func (s *liveSource) NextInto(p *capture.Packet) error {
	if s.lineBuf && s.flush != nil {
		_ = s.flush()
	}
	var err error
	*p, err = s.src.Next()
	if err != nil {
		return err
	}
	s.captured.Add(1)
	if s.w != nil {
		if err := s.w.WritePacket(p.TS, p.Data, p.WireLen); err != nil {
			if errors.Is(err, pcapwriter.ErrFileLimit) {
				fmt.Fprintf(s.stderr, "Maximum file limit reached: %d\n", s.maxFiles)
				s.captured.Add(^uint64(0)) // not handed on
				*p = capture.Packet{}
				return io.EOF
			}
			s.wFailed = true
			return writeError{fmt.Errorf("writing %s: %w", s.w.Name(), err)}
		}
		if s.packetBuf {
			_ = s.w.Flush()
		}
	}
	return nil
}

// watchUSR1 prints the statistics on SIGUSR1, as tcpdump does.
func (s *liveSource) watchUSR1() {
	s.usr1 = make(chan os.Signal, 1)
	if len(statsSignals) > 0 {
		signal.Notify(s.usr1, statsSignals...)
	}
	go func() {
		for range s.usr1 {
			s.stats(false)
		}
	}()
}

func plural(n uint64, one string) string {
	if n == 1 {
		return strconv.FormatUint(n, 10) + " packet " + one
	}
	return strconv.FormatUint(n, 10) + " packets " + one
}

// printStats prints tcpdump's three statistics lines.
func (s *liveSource) printStats() { s.stats(true) }

// stats prints the statistics as tcpdump does: a line each at the end
// (lines), on one line after "iwarpdump: " on SIGUSR1.
func (s *liveSource) stats(lines bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.src.Handle().Stats()
	if err != nil {
		fmt.Fprintln(s.stderr, plural(s.captured.Load(), "captured"))
		fmt.Fprintf(s.stderr, "iwarpdump: statistics: %v\n", err)
		return
	}
	l := []string{plural(s.captured.Load(), "captured"), plural(st.Received, "received by filter"), plural(st.Dropped, "dropped by kernel")}
	if lines {
		fmt.Fprintln(s.stderr, strings.Join(l, "\n"))
	} else {
		fmt.Fprintln(s.stderr, "iwarpdump: "+strings.Join(l, ", "))
	}
}

func (s *liveSource) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	signal.Stop(s.usr1)
	close(s.usr1)
	s.stop()
	h := s.src.Handle()
	h.Interrupt()
	var failed error
	if err := h.Err(); err != nil {
		// The interface went away: the capture failed (tcpdump exits 1).
		if errors.As(err, new(*live.CaptureError)) {
			fmt.Fprintf(s.stderr, "iwarpdump: %v\n", err) // it names the interface
		} else {
			fmt.Fprintf(s.stderr, "iwarpdump: %s: %v\n", h.Name(), strings.TrimPrefix(err.Error(), "live: "))
		}
		failed = reportedError{err}
	}
	if s.w != nil {
		if werr := s.w.Close(); werr != nil && !s.wFailed {
			fmt.Fprintf(s.stderr, "iwarpdump: writing %s: %v\n", s.w.Name(), werr)
			failed = reportedError{werr}
		}
	}
	s.printStats()
	if err := s.src.Close(); err != nil && failed == nil {
		return err
	}
	return failed
}

// writeError is a failure to write the -w file: the capture stops there,
// and iwarpdump exits 1 (the file lacks what came after).
type writeError struct{ error }

func (e writeError) Unwrap() error { return e.error }

// reportedError is a failure a source already wrote to standard error
// (at Close): iwarpdump exits 1 without writing it again.
type reportedError struct{ error }

func (e reportedError) Unwrap() error { return e.error }

// compileFileFilter compiles a filter expression (the trailing arguments)
// for packets read from files: the returned function reports whether a
// frame of the given link type passes, compiling the program for each link
// type on first use (a pcapng file may mix them) and rejecting the frames
// of a link type the expression cannot be compiled for (wrapFile refuses
// the filter first when that is the link type of an input's first
// interface: checkFileLinks). A nil function
// means no filter. The expression is checked against Ethernet at once, so
// syntax errors come back here.
func compileFileFilter(args []string) (func(data []byte, wireLen int, lt layers.LinkType) bool, error) {
	return (&liveFlags{}).fileFilter(args)
}

// fileFilter is compileFileFilter honouring -F and --bpf-raw.
func (l *liveFlags) fileFilter(args []string) (func(data []byte, wireLen int, lt layers.LinkType) bool, error) {
	text, err := l.filterText(args)
	if err != nil || strings.TrimSpace(text) == "" {
		return nil, err
	}
	if l.bpfRaw {
		p, err := bpf.ParseRaw(text)
		if err != nil {
			return nil, err
		}
		m, err := p.NewMatcher()
		if err != nil {
			return nil, err
		}
		return func(data []byte, wireLen int, _ layers.LinkType) bool { return m.MatchWire(data, wireLen) }, nil
	}
	if _, err := live.Compile(text, layers.LinkTypeEthernet, 0); err != nil {
		return nil, err
	}
	matchers := map[layers.LinkType]*bpf.Matcher{}
	return func(data []byte, wireLen int, lt layers.LinkType) bool {
		m, ok := matchers[lt]
		if !ok {
			p, err := live.Compile(text, lt, 0)
			if err == nil {
				m, err = p.NewMatcher()
			}
			if err != nil && l.filterWarn != nil {
				name, _ := linkTypeName(lt)
				fmt.Fprintf(l.filterWarn, "iwarpdump: the capture filter cannot be compiled for link type %s (%v): the frames of that link type are left out\n", name, err)
			}
			matchers[lt] = m
		}
		// len, greater and less test the length on the wire, as
		// libpcap's programs do.
		return m != nil && m.MatchWire(data, wireLen)
	}, nil
}

// checkFileLinks compiles the filter expression for the link type of
// every input's first interface, as tcpdump compiles it for the file's
// link type and stops if it cannot: without this, the frames of a link
// type the compiler does not handle (BSD loopback, InfiniBand) were all
// rejected, without a word. A raw program (--bpf-raw) is taken as it is.
func (l *liveFlags) checkFileLinks(src linkSource, args []string) error {
	if l.bpfRaw {
		return nil
	}
	text, err := l.filterText(args)
	if err != nil {
		return err
	}
	names := []string{""}
	lts := []layers.LinkType{src.LinkType(0)}
	if m, ok := src.(*capture.Merge); ok {
		names, lts = names[:0], lts[:0]
		for i := range m.Len() {
			names, lts = append(names, m.Name(i)), append(lts, m.InputLinkType(i))
		}
	}
	for i, lt := range lts {
		if lt == capture.LinkTypeUnknown {
			continue
		}
		if _, err := live.Compile(text, lt, 0); err != nil {
			where := names[i]
			if where == "" {
				name, _ := linkTypeName(lt)
				where = "link type " + name
			}
			return fmt.Errorf("the capture filter cannot be compiled for %s: %w", where, err)
		}
	}
	return nil
}

// fileSource applies the filter and -w to a capture file being read (-r):
// frames the filter rejects are skipped (keeping their frame numbers), the
// others are written to the -w file (with the link type of interface 0).
// linkSource is a file source that knows its link types: *capture.Source,
// or *capture.Merge for several inputs.
type linkSource interface {
	NextInto(p *capture.Packet) error
	Next() (capture.Packet, error)
	Close() error
	LinkType(iface int) layers.LinkType
}

type fileSource struct {
	src    linkSource
	filter func(data []byte, wireLen int, lt layers.LinkType) bool
	w      *pcapwriter.Writer
	maxW   int
	stderr io.Writer
	// first is the packet wrapFile read ahead (with -w), or firstErr the
	// error reading it, for the first NextInto.
	first    *capture.Packet
	firstErr error
	wFailed  bool // a write to w failed (NextInto returned the writeError)
	// Packets a pcap -w file could not hold (another link type than its
	// header's): how many, and the first one's link type.
	unwritten     int
	unwrittenLink layers.LinkType
}

// wrapFile wraps a file source for -r with a trailing filter expression
// (or -F, --bpf-raw) and -w: nil and an exit code on error.
func (l *liveFlags) wrapFile(src linkSource, args []string, stderr io.Writer) (packetSource, int) {
	l.filterWarn = stderr
	f, err := l.fileFilter(args)
	if err == nil && f != nil {
		err = l.checkFileLinks(src, args)
	}
	if err != nil {
		fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
		return nil, 2
	}
	writing := l.write != "" || l.fileSize != "" || l.rotate != 0 || l.maxFiles != 0
	if f == nil && !writing {
		// Nothing to do between the file and the decoder: no wrapper, and
		// a merge of one file is that file (same frames, same numbers,
		// same errors), read without the merge's layer.
		if m, ok := src.(*capture.Merge); ok && m.Len() == 1 {
			return m.Source(0), 0
		}
		return src, 0
	}
	fsrc := &fileSource{src: src, filter: f, stderr: stderr, maxW: l.maxFiles}
	if writing {
		// The link type of a pcapng file's interface is known once its
		// description block is read, before its first packet: read that
		// packet ahead. (Asked before, it was unknown, and the -w file
		// said link type 0 in pcapng, 65535 in pcap.)
		var first capture.Packet
		fsrc.firstErr = src.NextInto(&first)
		lt := src.LinkType(0)
		if fsrc.firstErr == nil {
			fsrc.first = &first
			lt = src.LinkType(first.Interface)
		}
		wo, err := l.writerOptions(lt, 0, "")
		if err != nil {
			fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
			return nil, 2
		}
		if m, ok := src.(*capture.Merge); ok {
			// Created, the -w file would be cut short before it is read.
			if wi, err := os.Stat(l.write); err == nil {
				for i := range m.Len() {
					if ri, err := os.Stat(m.Name(i)); err == nil && os.SameFile(wi, ri) {
						fmt.Fprintf(stderr, "iwarpdump: -w %s is a file -r reads\n", l.write)
						return nil, 2
					}
				}
			}
		}
		if m, ok := src.(*capture.Merge); ok && wo.Format == pcapwriter.Pcap {
			// Caught here if the inputs' first interfaces differ; a
			// pcapng input's later interfaces, as its packets come.
			for i := range m.Len() {
				if a, b := m.InputLinkType(0), m.InputLinkType(i); a != b {
					fmt.Fprintf(stderr, "iwarpdump: --pcap: %s has link type %d, %s %d, and %v\n", m.Name(0), a, m.Name(i), b, pcapwriter.ErrLinkType)
					return nil, 2
				}
			}
		}
		w, err := pcapwriter.Create(l.write, wo)
		if err != nil {
			fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
			return nil, 2
		}
		fsrc.w = w
	}
	return fsrc, 0
}

func (s *fileSource) Next() (capture.Packet, error) {
	var p capture.Packet
	err := s.NextInto(&p)
	return p, err
}

func (s *fileSource) NextInto(p *capture.Packet) error {
	for {
		switch {
		case s.first != nil:
			*p, s.first = *s.first, nil
		case s.firstErr != nil:
			err := s.firstErr
			s.firstErr = nil
			return err
		default:
			if err := s.src.NextInto(p); err != nil {
				return err
			}
		}
		if s.filter != nil && !s.filter(p.Data, p.WireLen, s.src.LinkType(p.Interface)) {
			continue
		}
		if s.w != nil {
			if err := s.w.WritePacketLink(p.TS, p.Data, p.WireLen, s.src.LinkType(p.Interface)); err != nil {
				if errors.Is(err, pcapwriter.ErrLinkType) {
					// Decoded, not written: said when the file is closed.
					if s.unwritten == 0 {
						s.unwrittenLink = s.src.LinkType(p.Interface)
					}
					s.unwritten++
					return nil
				}
				if errors.Is(err, pcapwriter.ErrFileLimit) {
					fmt.Fprintf(s.stderr, "Maximum file limit reached: %d\n", s.maxW)
					*p = capture.Packet{}
					return io.EOF
				}
				s.wFailed = true
				return writeError{fmt.Errorf("writing %s: %w", s.w.Name(), err)}
			}
		}
		return nil
	}
}

func (s *fileSource) Close() error {
	var werr error
	if s.w != nil {
		if err := s.w.Close(); err != nil && !s.wFailed {
			werr = writeError{fmt.Errorf("writing %s: %w", s.w.Name(), err)}
		}
		if s.unwritten > 0 && werr == nil {
			werr = writeError{fmt.Errorf("writing %s: %d packets (the first of link type %d, the file's is %d) not written: %w",
				s.w.Name(), s.unwritten, s.unwrittenLink, s.w.LinkType(), pcapwriter.ErrLinkType)}
		}
	}
	if err := s.src.Close(); err != nil && werr == nil {
		return err
	}
	return werr
}

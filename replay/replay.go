package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// Options configure a replay. The zero value replays as recorded, as fast as
// possible, with the default timeouts.
type Options struct {
	// Negotiation overrides the recorded MPA negotiation.
	Negotiation Negotiation
	// Initiator and Responder choose the kind of RNIC each side emulates in
	// the MPA exchange (PROTOCOL.md E); RNICScript plays the recorded frames.
	Initiator, Responder RNIC
	// Speed paces the replay on the recorded timestamps: 1 keeps the
	// original gaps between messages, and between the starts of
	// connections; 2 halves them; 0 sends as fast as possible (the causal
	// order is kept in every case).
	Speed float64
	// Serial replays the connections one after the other in connection
	// order, each once the previous one has ended (iwarpreplay --serial).
	// Otherwise connections run concurrently, as they ran in the capture:
	// with Speed > 0 each starts at its recorded start (Script.First)
	// from the first one's, divided by Speed; with Speed 0 at once. In
	// both cases a connection waits for every connection that had ended
	// in the recording before it started (Script.End before its First),
	// so connections that did not overlap do not overlap in the replay
	// either. Listen accepts initiators as they come and matches each to a
	// script by its MPA Request (see Listen).
	Serial bool
	// MaxConns bounds the connections open at once (0: 128): a connection
	// due while that many are open starts when one ends (ConnReport.Held).
	// The engine's memory grows with the connections open (each side
	// holds up to about 160 KiB of received data, one FPDU, and 64 KiB to
	// send), not with their number; the scripts are loaded beforehand
	// (LoadOptions bounds them).
	MaxConns int
	// MaxRate bounds each side's transmit rate in octets per second (0: no
	// bound).
	MaxRate float64
	// Timeouts bound every wait.
	Timeouts Timeouts
	// Addr is the listening address of Loopback; it must be a loopback
	// address. The default is 127.0.0.1:0 (any free port).
	Addr string
	// MSS is the TCP payload size of the segments WritePcap writes; 0 means
	// 1448.
	MSS int
	// Progress, when set, is called about every ProgressEvery (default 1s)
	// while the replay runs, and once at the end.
	Progress      func(Progress)
	ProgressEvery time.Duration
}

// Timeouts bound every wait of a replay. Zero values take the defaults.
type Timeouts struct {
	// Dial bounds connecting (and Loopback's accept): default 5s.
	Dial time.Duration
	// Accept bounds each wait of Listen for an initiator to connect while
	// no connection is open: default 2m.
	Accept time.Duration
	// Handshake bounds the wait for the peer's MPA Request or Reply: 5s.
	Handshake time.Duration
	// Wait bounds the wait for the peer's message a message depends on
	// (causal order); past it the message is sent anyway and the wait is
	// reported: 5s. Two waits end otherwise: a peer-to-peer responder
	// that has no RTR from the initiator by then sends nothing and ends
	// the connection with an error (RFC 6581 §4), and against a real
	// peer an RDMA Read Response whose Read Request has not come is held
	// until one comes (SideReport.NotSent lists those for which none did).
	Wait time.Duration
	// IO bounds each socket write: 10s.
	IO time.Duration
	// Idle bounds the wait for the peer's last messages and its FIN once
	// this side has sent everything: 2s.
	Idle time.Duration
	// Conn bounds a connection's whole life: 10m.
	Conn time.Duration
}

func (t *Timeouts) defaults() {
	set := func(p *time.Duration, d time.Duration) {
		if *p <= 0 {
			*p = d
		}
	}
	set(&t.Dial, 5*time.Second)
	set(&t.Accept, 2*time.Minute)
	set(&t.Handshake, 5*time.Second)
	set(&t.Wait, 5*time.Second)
	set(&t.IO, 10*time.Second)
	set(&t.Idle, 2*time.Second)
	set(&t.Conn, 10*time.Minute)
}

func (o Options) withDefaults() Options {
	o.Timeouts.defaults()
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.MSS <= 0 {
		o.MSS = 1448
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = time.Second
	}
	if o.MaxConns <= 0 {
		o.MaxConns = defaultMaxConns
	}
	return o
}

// defaultMaxConns is the default of Options.MaxConns.
const defaultMaxConns = 128

// Progress is a snapshot of a running replay.
type Progress struct {
	// Conn is the lowest id of the connections open; when none is, the
	// last one that started.
	Conn int
	// Open lists the ids of the connections open, ascending; Done counts
	// the connections that have ended, of the Total to replay.
	Open        []int
	Done, Total int
	Elapsed     time.Duration
	// MessagesSent, OctetsSent and the received counts add up every
	// connection's, both sides when the engine plays both.
	MessagesSent, MessagesReceived uint64
	OctetsSent, OctetsReceived     uint64
	// Rate is OctetsSent per second of Elapsed.
	Rate float64
}

// String describes the progress in one line: "conn 3: 5 messages sent, 4
// received, 1200 octets sent, 9000 octets/s" for a replay of one connection
// at a time, "conns 0-2, 5 open, 3 of 9 done: ..." when several are open
// or there are several to replay.
func (p Progress) String() string {
	var b strings.Builder
	switch {
	case p.Total <= 1:
		fmt.Fprintf(&b, "conn %d", p.Conn)
	case len(p.Open) == 0:
		fmt.Fprintf(&b, "%d of %d connections done", p.Done, p.Total)
	case len(p.Open) == 1:
		fmt.Fprintf(&b, "conn %d open, %d of %d done", p.Open[0], p.Done, p.Total)
	default:
		fmt.Fprintf(&b, "conns %s open, %d of %d done", idRanges(p.Open), p.Done, p.Total)
	}
	fmt.Fprintf(&b, ": %d messages sent, %d received, %d octets sent, %.0f octets/s",
		p.MessagesSent, p.MessagesReceived, p.OctetsSent, p.Rate)
	return b.String()
}

type stats struct {
	start time.Time
	mu    sync.Mutex
	// Time spent waiting for an initiator while no connection is open
	// (Listen) is not the replay's: paused is its total, pausedAt the
	// start of the current wait.
	paused   time.Duration
	pausedAt time.Time
	busy     int // Listen: connections accepted and not yet ended
	// open are the ids of the connections open, ascending; last the last
	// one that started.
	open        []int
	last        int
	done, total int
	maxOpen     int
	msgsSent    atomic.Uint64
	octetsSent  atomic.Uint64
	msgsRecv    atomic.Uint64
	octetsRecv  atomic.Uint64
}

// newStats starts the clock of a replay of total connections; with
// idle, it stays stopped while no connection is open (Listen).
func newStats(total int, idle bool) *stats {
	s := &stats{start: time.Now(), total: total}
	if idle {
		s.pausedAt = s.start
	}
	return s
}

// elapsed returns the time since the start, waits excluded.
func (s *stats) elapsed() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if !s.pausedAt.IsZero() {
		now = s.pausedAt
	}
	return now.Sub(s.start) - s.paused
}

// since returns the wall time since the start, waits included.
func (s *stats) since() time.Duration { return time.Since(s.start) }

// accepted notes that Listen accepted (n 1) or ended (n -1) a connection:
// its clock runs while one is open.
func (s *stats) accepted(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy += n
	switch {
	case s.busy > 0 && !s.pausedAt.IsZero():
		s.paused += time.Since(s.pausedAt)
		s.pausedAt = time.Time{}
	case s.busy == 0 && s.pausedAt.IsZero():
		s.pausedAt = time.Now()
	}
}

// begin notes that connection id started; end that it ended.
func (s *stats) begin(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, _ := slices.BinarySearch(s.open, id)
	s.open = slices.Insert(s.open, i, id)
	s.last = id
	s.maxOpen = max(s.maxOpen, len(s.open))
}

func (s *stats) end(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := slices.BinarySearch(s.open, id); ok {
		s.open = slices.Delete(s.open, i, i+1)
	}
	s.done++
}

func (s *stats) snapshot() Progress {
	p := Progress{Elapsed: s.elapsed(),
		MessagesSent: s.msgsSent.Load(), MessagesReceived: s.msgsRecv.Load(),
		OctetsSent: s.octetsSent.Load(), OctetsReceived: s.octetsRecv.Load()}
	s.mu.Lock()
	p.Open = slices.Clone(s.open)
	p.Done, p.Total, p.Conn = s.done, s.total, s.last
	if len(s.open) > 0 {
		p.Conn = s.open[0]
	}
	s.mu.Unlock()
	if sec := p.Elapsed.Seconds(); sec > 0 {
		p.Rate = float64(p.OctetsSent) / sec
	}
	return p
}

// report runs the progress callback until stop is called.
func (s *stats) report(o *Options) (stop func()) {
	if o.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(o.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				o.Progress(s.snapshot())
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		o.Progress(s.snapshot())
	}
}

// WaitTimeout records a message sent before the peer's messages it depends
// on had arrived (Timeouts.Wait passed).
type WaitTimeout struct {
	Message  int // index in the replayed message list
	Needed   int // peer messages it waited for
	Received int // peer messages received then
}

// SideReport is what one side the engine played did.
type SideReport struct {
	Played bool
	// Local and Remote are the socket addresses (zero for WritePcap).
	Local, Remote netip.AddrPort
	// Outcome is the MPA exchange as this side saw it.
	Outcome Outcome
	// SentMessages and SentFPDUs count what this side sent; SentOctets
	// counts TCP payload octets (MPA frame and FPDUs, markers included).
	SentMessages, SentFPDUs int
	SentOctets              uint64
	RecvMessages            int
	RecvOctets              uint64
	// Expected are the messages the peer should send, in order; Received
	// the ones it sent.
	Expected, Received []MessageInfo
	// TermSent and TermRecv are the last Terminate sent and received.
	TermSent, TermRecv *rdmap.Terminate
	// Waits lists the causal waits that timed out.
	Waits []WaitTimeout
	// NotSent lists the RDMA Read Responses (indexes in the replayed
	// message list) not sent to a real peer because no RDMA Read Request
	// came for them.
	NotSent []int
	// Streaming is set when the side went past the MPA exchange to the
	// RDMA messages (not when the connection was rejected, closed by the
	// exchange, or failed before it completed).
	Streaming bool
	// Interrupted is set when the caller's context stopped the side
	// before it ended (iwarpreplay: SIGINT or SIGTERM).
	Interrupted bool
	// Err says why the side stopped early (nil: it played to the end, or it
	// was interrupted). The socket timeouts and the peer's close that
	// follow an interruption are not errors.
	Err error
}

// ConnReport is the replay of one recorded connection.
type ConnReport struct {
	Conn int
	// Initiator and Responder are the recorded endpoints.
	Initiator, Responder netip.AddrPort
	// Outcome is the MPA exchange: the view of the side that closed the
	// connection after it, else the initiator's (the responder's when only
	// it was played).
	Outcome Outcome
	// Sides are the initiator's and the responder's reports; nil when the
	// engine did not play that side.
	Sides [2]*SideReport
	// Mismatches are the differences between the messages received and
	// the recording, per direction the engine received. After an
	// interruption, the recorded messages after the last one received
	// were not due yet: they are not listed as missing.
	Mismatches []Mismatch
	// Interrupted is set when a side was interrupted.
	Interrupted bool
	// Err is the first error of a side that does not follow from the
	// outcome.
	Err error
	// Start and End are when the connection started (its dial, or its
	// accept) and ended, from the start of the replay; in WritePcap, its
	// first and last frames' times from the first connection's recorded
	// start (the capture's time).
	Start, End time.Duration
	// Timed is set when the connection had a time to start (Speed > 0,
	// not Serial, not Listen): Due, its recorded start from the first
	// connection's, divided by Speed. Held says what kept it waiting
	// past Due, if anything.
	Timed bool
	Due   time.Duration
	Held  Hold
}

// Hold says what kept a connection from starting when the recording has it
// start.
type Hold uint8

// Reasons to hold a connection back.
const (
	HoldNone Hold = iota
	// HoldPrecedence: a connection that had ended before it started in
	// the recording was still open.
	HoldPrecedence
	// HoldLimit: Options.MaxConns connections were open.
	HoldLimit
)

// String says what held the connection, as reports print it.
func (h Hold) String() string {
	switch h {
	case HoldNone:
		return "nothing"
	case HoldPrecedence:
		return "a connection that ended before it started in the recording was still open"
	case HoldLimit:
		return "the limit of connections open at once was reached"
	}
	return fmt.Sprintf("hold(%d)", uint8(h))
}

// lateNote is how far past its due time a connection must start for the
// report to say so.
const lateNote = 100 * time.Millisecond

// Report is the result of a replay.
type Report struct {
	Mode  string
	Conns []*ConnReport
	// Messages, FPDUs and Octets count what the engine sent; Received the
	// messages it received.
	Messages, FPDUs, Received int
	Octets                    uint64
	Mismatches, Errors        int
	// MaxOpen is the most connections that were open at once.
	MaxOpen int
	// Elapsed is the replay's duration; Listen's leaves out the waits for
	// initiators while no connection was open, and WritePcap's is the span of the capture it
	// wrote (the frames' timestamps, which pacing moves), not the time it
	// took to write it.
	Elapsed time.Duration
	// Interrupted is why the caller's context stopped the replay before
	// its end (context.Cause: "interrupt signal received" for
	// iwarpreplay's SIGINT); nil when it ran to the end. The connections
	// not started by then are not in Conns.
	Interrupted error
}

// Rate returns the octets sent per second.
func (r *Report) Rate() float64 {
	if s := r.Elapsed.Seconds(); s > 0 {
		return float64(r.Octets) / s
	}
	return 0
}

// OK reports whether every connection replayed to its end without mismatch
// or error.
func (r *Report) OK() bool { return r.Mismatches == 0 && r.Errors == 0 && r.Interrupted == nil }

// finish sets what the end of the replay says: its duration, and whether
// ctx stopped it. It returns ctx's error.
func (r *Report) finish(ctx context.Context, st *stats) error {
	r.Elapsed = st.elapsed()
	st.mu.Lock()
	r.MaxOpen = st.maxOpen
	st.mu.Unlock()
	if ctx.Err() != nil {
		r.Interrupted = context.Cause(ctx)
	}
	return ctx.Err()
}

// addAll adds the reports of the connections that were replayed, in
// script order (nil: not started).
func (r *Report) addAll(cs []*ConnReport) {
	for _, c := range cs {
		if c != nil {
			r.add(c)
		}
	}
}

func (r *Report) add(c *ConnReport) {
	r.Conns = append(r.Conns, c)
	for _, s := range c.Sides {
		if s == nil {
			continue
		}
		r.Messages += s.SentMessages
		r.FPDUs += s.SentFPDUs
		r.Octets += s.SentOctets
		r.Received += s.RecvMessages
	}
	r.Mismatches += len(c.Mismatches)
	if c.Err != nil {
		r.Errors++
	}
}

// WriteText writes the report for people: a paragraph per connection and a
// summary line.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, c := range r.Conns {
		fmt.Fprintf(&b, "conn %d %s > %s: ", c.Conn, c.Initiator, c.Responder)
		// named is the error the first line gives as the reason the
		// exchange did not complete.
		var named error
		switch {
		case c.Outcome.Negotiated():
			b.WriteString(c.Outcome.String())
		case c.Err != nil:
			named = c.Err
			fmt.Fprintf(&b, "not negotiated: %v", c.Err)
		case c.Interrupted:
			b.WriteString("not negotiated: interrupted")
		default:
			b.WriteString("not negotiated")
		}
		b.WriteByte('\n')
		if late := c.Start - c.Due; c.Timed && late > lateNote {
			fmt.Fprintf(&b, "  started %s late, %s after the first connection's start", late.Round(time.Millisecond), c.Start.Round(time.Millisecond))
			if c.Held != HoldNone {
				fmt.Fprintf(&b, ": %s", c.Held)
			}
			b.WriteByte('\n')
		}
		sideErr := false
		for d, s := range c.Sides {
			if s == nil {
				continue
			}
			fmt.Fprintf(&b, "  %s", sideName(Dir(d)))
			if s.Local.IsValid() {
				fmt.Fprintf(&b, " %s", s.Local)
			}
			if s.Streaming {
				fmt.Fprintf(&b, ": sent %s in %s (%d octets), %s (%d octets)\n",
					count(s.SentMessages, "message"), count(s.SentFPDUs, "FPDU"), s.SentOctets, received(s.RecvMessages, len(s.Expected)), s.RecvOctets)
			} else {
				fmt.Fprintf(&b, ": sent %d octets, received %d octets, no RDMA messages\n", s.SentOctets, s.RecvOctets)
			}
			if s.TermSent != nil {
				fmt.Fprintf(&b, "    sent Terminate: %s\n", s.TermSent.Explain())
			}
			if s.TermRecv != nil {
				fmt.Fprintf(&b, "    received Terminate: %s\n", s.TermRecv.Explain())
			}
			for _, wt := range s.Waits {
				fmt.Fprintf(&b, "    message %d sent after a timeout: it waits for %d peer messages, %d had arrived\n", wt.Message, wt.Needed, wt.Received)
			}
			for _, i := range s.NotSent {
				fmt.Fprintf(&b, "    message %d (RDMA Read Response) not sent: no RDMA Read Request came for it\n", i)
			}
			if s.Err != nil {
				sideErr = true
				if named == nil || !errors.Is(named, s.Err) {
					fmt.Fprintf(&b, "    error: %v\n", s.Err)
				}
			}
		}
		if c.Err != nil && !sideErr && named == nil {
			fmt.Fprintf(&b, "  error: %v\n", c.Err)
		}
		if c.Interrupted && c.Outcome.Negotiated() {
			b.WriteString("  interrupted: the recorded messages after the last one received are not counted missing\n")
		}
		for _, m := range c.Mismatches {
			fmt.Fprintf(&b, "  mismatch: %s\n", m)
		}
	}
	conns := count(len(r.Conns), "connection")
	if r.MaxOpen > 1 {
		conns += fmt.Sprintf(" (at most %d at once)", r.MaxOpen)
	}
	fmt.Fprintf(&b, "summary: %s, %s sent (%s, %s), %d received, %s, %s, %s, %v",
		conns, count(r.Messages, "message"), count(r.FPDUs, "FPDU"), octets(float64(r.Octets)), r.Received,
		octets(r.Rate())+"/s", count(r.Mismatches, "mismatch"), count(r.Errors, "error"), r.Elapsed.Round(time.Millisecond))
	if r.Interrupted != nil {
		fmt.Fprintf(&b, ", interrupted (%v)", r.Interrupted)
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// count writes "1 message", "2 messages", "2 mismatches".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "ch") {
		return fmt.Sprintf("%d %ses", n, noun) // mismatches
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// received says how many messages a side received against the number
// the recording has its peer send.
func received(got, want int) string {
	switch {
	case got == 0 && want == 0:
		return "received no messages, as recorded"
	case got <= want:
		return fmt.Sprintf("received %d of %s", got, count(want, "recorded message"))
	}
	return fmt.Sprintf("received %s where the recording has %d", count(got, "message"), want)
}

// octets formats a count of octets with a binary-prefix unit.
func octets(v float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", v, units[i])
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// connReport assembles a connection's report from the sides played.
func connReport(s *Script, sides [2]*endpoint) *ConnReport {
	c := &ConnReport{Conn: s.Conn, Initiator: s.Initiator, Responder: s.Responder}
	var played, fault [2]bool
	for d, e := range sides {
		if e != nil {
			r := e.rep
			c.Sides[d] = &r
			played[d] = true
			fault[d] = e.peerFault
			c.Mismatches = append(c.Mismatches, e.frames...)
		}
	}
	switch {
	case c.Sides[R2I] != nil && c.Sides[R2I].Outcome.Closed && c.Sides[R2I].Outcome.ClosedBy == R2I:
		c.Outcome = c.Sides[R2I].Outcome
	case c.Sides[I2R] != nil:
		c.Outcome = c.Sides[I2R].Outcome
	case c.Sides[R2I] != nil:
		c.Outcome = c.Sides[R2I].Outcome
	}
	o := c.Outcome
	// A close or reject the engine emulated is the expected result; one by
	// a real peer, or by the engine because of a real peer's bad Reply,
	// leaves the recorded messages missing.
	emulated := (o.Closed && played[o.ClosedBy] && !fault[o.ClosedBy]) || (o.Rejected && played[R2I])
	for d, r := range c.Sides {
		if r == nil {
			continue
		}
		if r.Interrupted {
			c.Interrupted = true
		}
		if !emulated {
			ms := Diff(Dir(d).Other(), r.Expected, r.Received)
			if r.Interrupted {
				ms = notDue(ms, len(r.Expected))
			}
			c.Mismatches = append(c.Mismatches, ms...)
		}
		if r.Err != nil && c.Err == nil && !(emulated && errors.Is(r.Err, errPeerClosed)) {
			c.Err = fmt.Errorf("%s: %w", sideName(Dir(d)), r.Err)
		}
	}
	return c
}

// notDue drops from ms the recorded messages missing at the end of the
// direction (n messages): after an interruption they were not due yet. A
// message missing before one that arrived stays.
func notDue(ms []Mismatch, n int) []Mismatch {
	for {
		i := slices.IndexFunc(ms, func(m Mismatch) bool { return m.Kind == MismatchMissing && m.WantIndex == n-1 })
		if i < 0 {
			return ms
		}
		ms = slices.Delete(ms, i, i+1)
		n--
	}
}

// ErrNotLoopback is returned by Loopback for a listening address that is not
// a loopback address: a loopback replay never leaves the host.
var ErrNotLoopback = errors.New("replay: loopback replay needs a loopback address (127.0.0.0/8 or ::1)")

// checkLoopback resolves addr and insists on a loopback address.
func checkLoopback(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !a.IsLoopback() {
		return "", fmt.Errorf("%w: %s", ErrNotLoopback, addr)
	}
	return net.JoinHostPort(a.String(), port), nil
}

func addrPort(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// Loopback plays both ends of each script over real TCP sockets on a
// loopback address (Options.Addr), concurrently as recorded or one after
// the other (Options.Serial), and compares what each side receives with the
// recording.
func Loopback(ctx context.Context, scripts []*Script, o Options) (*Report, error) {
	o = o.withDefaults()
	if err := o.CheckScripts(scripts); err != nil {
		return nil, err
	}
	addr, err := checkLoopback(o.Addr)
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	return LoopbackOn(ctx, ln.(*net.TCPListener), scripts, o)
}

// LoopbackOn is Loopback on a listener the caller opened (it must listen on
// a loopback address); the caller closes it.
func LoopbackOn(ctx context.Context, ln *net.TCPListener, scripts []*Script, o Options) (*Report, error) {
	o = o.withDefaults()
	if err := o.CheckScripts(scripts); err != nil {
		return nil, err
	}
	la := addrPort(ln.Addr())
	if !la.Addr().IsLoopback() {
		return nil, fmt.Errorf("%w: %s", ErrNotLoopback, la)
	}
	st := newStats(len(scripts), false)
	stop := st.report(&o)
	acc := newAcceptor(ln, o.Timeouts.Dial)
	reps := newSchedule(scripts, &o).run(ctx, st, func(ctx context.Context, s *Script) *ConnReport {
		c := loopbackConn(ctx, acc, la, s, &o, st)
		if c.Sides == [2]*SideReport{} && ctx.Err() != nil {
			return nil // interrupted before the connection was made
		}
		return c
	})
	acc.close()
	stop()
	rep := &Report{Mode: "loopback"}
	rep.addAll(reps)
	return rep, rep.finish(ctx, st)
}

func loopbackConn(ctx context.Context, acc *acceptor, la netip.AddrPort, s *Script, o *Options, st *stats) *ConnReport {
	p := &plan{s: s, neg: o.Negotiation, init: o.Initiator, resp: o.Responder}
	fail := func(err error) *ConnReport {
		return &ConnReport{Conn: s.Conn, Initiator: s.Initiator, Responder: s.Responder, Err: err}
	}
	d := net.Dialer{Timeout: o.Timeouts.Dial}
	ic, err := d.DialContext(ctx, "tcp", la.String())
	if err != nil {
		return fail(fmt.Errorf("connecting to %s: %w", la, err))
	}
	local := addrPort(ic.LocalAddr())
	rc, err := acc.claim(ctx, local, o.Timeouts.Dial)
	if err != nil {
		ic.Close()
		return fail(fmt.Errorf("accepting on %s: %w", la, err))
	}
	ie := newEndpoint(I2R, p, o, ic.(*net.TCPConn), wallClock{}, st, true)
	re := newEndpoint(R2I, p, o, rc, wallClock{}, st, true)
	ie.rep.Local, ie.rep.Remote = local, la
	re.rep.Local, re.rep.Remote = addrPort(rc.LocalAddr()), local
	runPair(ctx, o, ie, re)
	return connReport(s, [2]*endpoint{ie, re})
}

// runPair runs both endpoints of a connection to the end.
func runPair(ctx context.Context, o *Options, ie, re *endpoint) {
	ctx, cancel := withLifetime(ctx, o)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); ie.run(ctx) }()
	go func() { defer wg.Done(); re.run(ctx) }()
	wg.Wait()
}

// Connect plays the initiator of each script against a real responder at
// addr (RFC 5044 §7.1: it sends the MPA Request), concurrently as recorded
// or one after the other (Options.Serial), and compares what the responder
// sends with the recording. Traffic goes to addr and nowhere else.
func Connect(ctx context.Context, addr string, scripts []*Script, o Options) (*Report, error) {
	o = o.withDefaults()
	if err := o.CheckScripts(scripts); err != nil {
		return nil, err
	}
	st := newStats(len(scripts), false)
	stop := st.report(&o)
	reps := newSchedule(scripts, &o).run(ctx, st, func(ctx context.Context, s *Script) *ConnReport {
		p := &plan{s: s, neg: o.Negotiation, init: o.Initiator, resp: RNICScript}
		d := net.Dialer{Timeout: o.Timeouts.Dial}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil && ctx.Err() != nil {
			return nil // interrupted before the connection was made
		}
		if err != nil {
			return &ConnReport{Conn: s.Conn, Initiator: s.Initiator, Responder: s.Responder, Err: fmt.Errorf("connecting to %s: %w", addr, err)}
		}
		e := newEndpoint(I2R, p, &o, c.(*net.TCPConn), wallClock{}, st, false)
		e.rep.Local, e.rep.Remote = addrPort(c.LocalAddr()), addrPort(c.RemoteAddr())
		cctx, cancel := withLifetime(ctx, &o)
		e.run(cctx)
		cancel()
		return connReport(s, [2]*endpoint{e, nil})
	})
	stop()
	rep := &Report{Mode: "connect"}
	rep.addAll(reps)
	return rep, rep.finish(ctx, st)
}

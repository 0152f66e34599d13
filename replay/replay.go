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
	// original gaps between messages, 2 halves them; 0 sends as fast as
	// possible (the causal order is kept in every case).
	Speed float64
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
	// Accept bounds Listen's wait for the initiator to connect: default 2m.
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
	return o
}

// Progress is a snapshot of a running replay.
type Progress struct {
	Conn                           int // connection being replayed
	Elapsed                        time.Duration
	MessagesSent, MessagesReceived uint64
	OctetsSent, OctetsReceived     uint64
	// Rate is OctetsSent per second of Elapsed.
	Rate float64
}

type stats struct {
	start time.Time
	// Time spent waiting for an initiator (Listen) is not the replay's:
	// paused is its total, pausedAt the start of the current wait.
	mu         sync.Mutex
	paused     time.Duration
	pausedAt   time.Time
	conn       atomic.Int64
	msgsSent   atomic.Uint64
	octetsSent atomic.Uint64
	msgsRecv   atomic.Uint64
	octetsRecv atomic.Uint64
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

// pause stops the clock of elapsed until resume.
func (s *stats) pause() {
	s.mu.Lock()
	if s.pausedAt.IsZero() {
		s.pausedAt = time.Now()
	}
	s.mu.Unlock()
}

func (s *stats) resume() {
	s.mu.Lock()
	if !s.pausedAt.IsZero() {
		s.paused += time.Since(s.pausedAt)
		s.pausedAt = time.Time{}
	}
	s.mu.Unlock()
}

func (s *stats) snapshot() Progress {
	p := Progress{Conn: int(s.conn.Load()), Elapsed: s.elapsed(),
		MessagesSent: s.msgsSent.Load(), MessagesReceived: s.msgsRecv.Load(),
		OctetsSent: s.octetsSent.Load(), OctetsReceived: s.octetsRecv.Load()}
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
}

// Report is the result of a replay.
type Report struct {
	Mode  string
	Conns []*ConnReport
	// Messages, FPDUs and Octets count what the engine sent; Received the
	// messages it received.
	Messages, FPDUs, Received int
	Octets                    uint64
	Mismatches, Errors        int
	// Elapsed is the replay's duration; Listen's leaves out the waits for
	// initiators to connect, and WritePcap's is the span of the capture it
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
	if ctx.Err() != nil {
		r.Interrupted = context.Cause(ctx)
	}
	return ctx.Err()
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
	fmt.Fprintf(&b, "summary: %s, %s sent (%s, %s), %d received, %s, %s, %s, %v",
		count(len(r.Conns), "connection"), count(r.Messages, "message"), count(r.FPDUs, "FPDU"), octets(float64(r.Octets)), r.Received,
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
// loopback address (Options.Addr), one connection after the other, and
// compares what each side receives with the recording.
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
	st := &stats{start: time.Now()}
	stop := st.report(&o)
	rep := &Report{Mode: "loopback"}
	for _, s := range scripts {
		if err := ctx.Err(); err != nil {
			break
		}
		st.conn.Store(int64(s.Conn))
		c := loopbackConn(ctx, ln, la, s, &o, st)
		if c.Sides == [2]*SideReport{} && ctx.Err() != nil {
			break // interrupted before the connection was made
		}
		rep.add(c)
	}
	stop()
	return rep, rep.finish(ctx, st)
}

func loopbackConn(ctx context.Context, ln *net.TCPListener, la netip.AddrPort, s *Script, o *Options, st *stats) *ConnReport {
	p := &plan{s: s, neg: o.Negotiation, init: o.Initiator, resp: o.Responder}
	type accepted struct {
		c   *net.TCPConn
		err error
	}
	ch := make(chan accepted, 1)
	ln.SetDeadline(time.Now().Add(o.Timeouts.Dial))
	go func() {
		c, err := ln.AcceptTCP()
		ch <- accepted{c, err}
	}()
	d := net.Dialer{Timeout: o.Timeouts.Dial}
	fail := func(err error) *ConnReport {
		return &ConnReport{Conn: s.Conn, Initiator: s.Initiator, Responder: s.Responder, Err: err}
	}
	ic, err := d.DialContext(ctx, "tcp", la.String())
	if err != nil {
		a := <-ch
		if a.c != nil {
			a.c.Close()
		}
		return fail(fmt.Errorf("connecting to %s: %w", la, err))
	}
	local := addrPort(ic.LocalAddr())
	var rc *net.TCPConn
	for rc == nil {
		a := <-ch
		if a.err != nil {
			ic.Close()
			return fail(fmt.Errorf("accepting on %s: %w", la, a.err))
		}
		if addrPort(a.c.RemoteAddr()) == local {
			rc = a.c
			break
		}
		a.c.Close() // someone else's connection
		go func() {
			c, err := ln.AcceptTCP()
			ch <- accepted{c, err}
		}()
	}
	ln.SetDeadline(time.Time{})
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
// addr (RFC 5044 §7.1: it sends the MPA Request), one connection after the
// other, and compares what the responder sends with the recording. Traffic
// goes to addr and nowhere else.
func Connect(ctx context.Context, addr string, scripts []*Script, o Options) (*Report, error) {
	o = o.withDefaults()
	if err := o.CheckScripts(scripts); err != nil {
		return nil, err
	}
	st := &stats{start: time.Now()}
	stop := st.report(&o)
	rep := &Report{Mode: "connect"}
	for _, s := range scripts {
		if err := ctx.Err(); err != nil {
			break
		}
		st.conn.Store(int64(s.Conn))
		p := &plan{s: s, neg: o.Negotiation, init: o.Initiator, resp: RNICScript}
		d := net.Dialer{Timeout: o.Timeouts.Dial}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil && ctx.Err() != nil {
			break // interrupted before the connection was made
		}
		if err != nil {
			rep.add(&ConnReport{Conn: s.Conn, Initiator: s.Initiator, Responder: s.Responder, Err: fmt.Errorf("connecting to %s: %w", addr, err)})
			continue
		}
		e := newEndpoint(I2R, p, &o, c.(*net.TCPConn), wallClock{}, st, false)
		e.rep.Local, e.rep.Remote = addrPort(c.LocalAddr()), addrPort(c.RemoteAddr())
		cctx, cancel := withLifetime(ctx, &o)
		e.run(cctx)
		cancel()
		rep.add(connReport(s, [2]*endpoint{e, nil}))
	}
	stop()
	return rep, rep.finish(ctx, st)
}

// Listen plays the responder of each script to real initiators connecting
// to ln, one connection after the other (each accept waits at most
// Timeouts.Accept), and compares what each initiator sends with the
// recording.
func Listen(ctx context.Context, ln *net.TCPListener, scripts []*Script, o Options) (*Report, error) {
	o = o.withDefaults()
	if err := o.CheckScripts(scripts); err != nil {
		return nil, err
	}
	st := &stats{start: time.Now()}
	stop := st.report(&o)
	rep := &Report{Mode: "listen"}
	for _, s := range scripts {
		if err := ctx.Err(); err != nil {
			break
		}
		st.conn.Store(int64(s.Conn))
		p := &plan{s: s, neg: o.Negotiation, init: RNICScript, resp: o.Responder}
		ln.SetDeadline(time.Now().Add(o.Timeouts.Accept))
		stopAccept := context.AfterFunc(ctx, func() { ln.SetDeadline(time.Unix(1, 0)) })
		st.pause() // the wait for an initiator is not the replay's time
		c, err := ln.AcceptTCP()
		st.resume()
		stopAccept()
		if err != nil && ctx.Err() != nil {
			break // interrupted while waiting: no connection
		}
		if err != nil {
			rep.add(&ConnReport{Conn: s.Conn, Initiator: s.Initiator, Responder: s.Responder, Err: fmt.Errorf("waiting for an initiator on %s: %w", ln.Addr(), classify(err))})
			break
		}
		e := newEndpoint(R2I, p, &o, c, wallClock{}, st, false)
		e.rep.Local, e.rep.Remote = addrPort(c.LocalAddr()), addrPort(c.RemoteAddr())
		cctx, cancel := withLifetime(ctx, &o)
		e.run(cctx)
		cancel()
		rep.add(connReport(s, [2]*endpoint{nil, e}))
	}
	ln.SetDeadline(time.Time{})
	stop()
	return rep, rep.finish(ctx, st)
}

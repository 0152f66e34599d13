package replay

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// maxRxBuf bounds the received octets an endpoint holds: the largest FPDU
// (65535 octets of ULPDU plus length, pad, CRC and markers) with room to read.
const maxRxBuf = 160 << 10

// maxPDLen bounds the private data of a received Request or Reply. RFC 5044
// §7.1.1 allows 512 octets; more is accepted (and replayed) up to this.
const maxPDLen = 4096

// endpoint plays one side of one connection.
type endpoint struct {
	side         Dir // I2R: the initiator
	p            *plan
	o            *Options
	c            conn
	clk          clock
	st           *stats
	peerIsEngine bool
	// handshakeBy, when set, is when the wait for the peer's MPA frame
	// ends (Listen has waited for the Request already); else
	// Timeouts.Handshake from the wait's start.
	handshakeBy time.Time

	out  Outcome
	msgs []pmsg
	exp  []MessageInfo // what the peer should send, in order
	expM []*pmsg

	// receive state, owned by the receiving goroutine after the handshake
	rbuf []byte
	df   *Deframer
	open map[msgKey]*rxMsg
	// rxMSN is the MSN of the last untagged message started per queue
	// (RFC 5041 §5.1: the first is 1).
	rxMSN map[uint32]uint32

	mu         sync.Mutex
	received   int
	got        []MessageInfo
	readReqs   []rdmap.ReadRequest
	rxErr      error // why receiving ended (io.EOF for a clean close)
	rxEnded    bool
	terminated bool
	rxFPDUs    int
	notify     chan struct{}
	rxStopped  chan struct{}

	txMu    sync.Mutex
	fr      *Framer
	ulpdu   []byte
	wire    []byte
	termMSN uint32
	pace    pacer

	// peerFault is set when this side closed the connection because of what
	// a real peer sent in the MPA exchange (a Reply that breaks RFC 6581
	// §9): not a close the recording or the emulated RNIC calls for.
	peerFault bool
	// frames are the differences between the peer's MPA frame and the
	// recorded one (a real peer only).
	frames []Mismatch

	rep SideReport
}

type rxMsg struct {
	info    MessageInfo
	h       hash.Hash
	segs    int
	counted bool
}

func newEndpoint(side Dir, p *plan, o *Options, c conn, clk clock, st *stats, peerIsEngine bool) *endpoint {
	return &endpoint{side: side, p: p, o: o, c: c, clk: clk, st: st, peerIsEngine: peerIsEngine,
		open: map[msgKey]*rxMsg{}, rxMSN: map[uint32]uint32{}, notify: make(chan struct{}, 1), rxStopped: make(chan struct{}),
		pace: pacer{rate: o.MaxRate}}
}

// run plays the side to the end and fills e.rep.
func (e *endpoint) run(ctx context.Context) {
	defer e.settle(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Every blocking socket call has a deadline; cancelling ctx also unblocks
	// them at once.
	stop := context.AfterFunc(ctx, func() {
		e.c.SetReadDeadline(time.Unix(1, 0))
		e.c.SetWriteDeadline(time.Unix(1, 0))
	})
	defer stop()
	defer e.c.Close()
	e.rep.Played = true
	if err := e.handshake(ctx); err != nil {
		e.rep.Err = err
		e.rep.Outcome = e.out
		e.rep.Expected = e.recordedExpected()
		return
	}
	e.rep.Outcome = e.out
	if e.out.Rejected || e.out.Closed {
		e.rep.Expected = e.recordedExpected()
		e.closeGracefully(ctx)
		return
	}
	e.rep.Streaming = true
	e.msgs = buildMessages(e.p.s, &e.out, e.p.resp != RNICScript && !e.out.NoMPA, sendMSS(e.c))
	for i := range e.msgs {
		if e.msgs[i].dir != e.side {
			e.exp = append(e.exp, e.msgs[i].info(e.peerIsEngine))
			e.expM = append(e.expM, &e.msgs[i])
		}
	}
	e.c.SetReadDeadline(time.Now().Add(e.o.Timeouts.Conn))
	go e.receive()
	e.transmit(ctx)
	e.finish(ctx)
	e.rep.Outcome = e.out
}

// recordedExpected returns, for a real peer whose MPA exchange did not go
// to FPDU mode, the messages the recording has that peer send: those of the
// exchange the recording shows (the recorded Request and Reply, with the
// overrides), which then never came. It returns nil when the engine's peer
// is the engine (both ends follow the recording and the overrides, so the
// outcome is the expected one) and when the recorded exchange did not go to
// FPDU mode either (rejected, unanswered, or closed by the RNIC kinds).
func (e *endpoint) recordedExpected() []MessageInfo {
	p := e.p
	if e.peerIsEngine || p.raw() || p.s.Reply == nil {
		return nil
	}
	req := p.request()
	rep, closeAfter, _ := p.reply(&req)
	if closeAfter {
		return nil
	}
	o := p.outcome(e.side, &req, &rep)
	if o.Rejected || o.Closed {
		return nil
	}
	var out []MessageInfo
	for _, m := range buildMessages(p.s, &o, p.resp != RNICScript, sendMSS(e.c)) {
		if m.dir != e.side {
			out = append(out, m.info(false))
		}
	}
	return out
}

// errLifetime is the cause of the context that bounds a connection's whole
// life (Timeouts.Conn).
var errLifetime = errors.New("the connection's lifetime limit passed")

// withLifetime bounds a connection's life by Timeouts.Conn.
func withLifetime(ctx context.Context, o *Options) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, o.Timeouts.Conn, fmt.Errorf("%w (%v)", errLifetime, o.Timeouts.Conn))
}

// settle notes why the side stopped when its context ended first: the
// connection's lifetime limit, an error, or the caller stopping the replay
// (Interrupted). What follows from the stop (the socket calls it cut short,
// and the peer's close when it was stopped too) is not an error of the side.
func (e *endpoint) settle(ctx context.Context) {
	if ctx.Err() == nil {
		return
	}
	cause := context.Cause(ctx)
	if e.rep.Err != nil && !followsStop(e.rep.Err) {
		if !errors.Is(cause, errLifetime) {
			e.rep.Interrupted = true
		}
		return
	}
	if errors.Is(cause, errLifetime) {
		e.rep.Err = cause
		return
	}
	e.rep.Err = nil
	e.rep.Interrupted = true
}

// followsStop reports whether err is what stopping a connection causes.
func followsStop(err error) bool {
	for _, t := range []error{errTimeout, errPeerClosed, errPeerReset, io.EOF, net.ErrClosed, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------- handshake

// handshake exchanges the MPA Request and Reply (RFC 5044 §7.1) and sets
// e.out, the framer and the deframer.
func (e *endpoint) handshake(ctx context.Context) error {
	p := e.p
	if p.raw() {
		e.out = p.rawOutcome()
		e.setFraming(0, 0)
		return nil
	}
	if e.side == I2R {
		req := p.request()
		if err := e.writeRaw(mpa.AppendFrame(nil, req)); err != nil {
			return fmt.Errorf("sending the MPA Request: %w", err)
		}
		e.rep.SentOctets += uint64(mpa.HeaderLen + len(req.PD))
		e.st.octetsSent.Add(uint64(mpa.HeaderLen + len(req.PD)))
		e.out.Request = &req
		rep, err := e.readFrame(mpa.KindReply)
		if err != nil {
			if errors.Is(err, errPeerClosed) {
				e.out = p.closed(e.out, R2I, "peer closed the connection without an MPA Reply")
				return nil
			}
			if errors.Is(err, dissect.ErrNotMPA) {
				if req.Rev != mpa.Rev0 {
					e.out.V = 1
				}
				// Linux siw answers a bad Reply with Terminate LLP 0x04.
				e.setFraming(uint64(mpa.HeaderLen+len(req.PD)), 0)
				e.fr.CRC = req.C
				e.sendTerminate(rdmap.Terminate{Layer: uint8(rdmap.LayerLLP), EType: rdmap.ETypeLLPMPA, Code: 0x04}, nil)
			}
			return err
		}
		if !e.peerIsEngine && p.init == RNICScript && p.resp == RNICScript {
			// Compare the real responder's Reply with the recorded one
			// (the overrides applied), as its messages are compared. With
			// an RNIC kind emulated, the matrix (PROTOCOL.md E), not the
			// recording, says what the Reply should be.
			var want *mpa.Frame
			if p.s.Reply != nil {
				w, _, _ := p.reply(&req)
				want = &w
			}
			if d := frameDiff(R2I, want, &rep); d != nil {
				e.frames = append(e.frames, *d)
			}
		}
		e.out = p.outcome(I2R, &req, &rep)
		if e.out.Rejected || e.out.Closed {
			return nil
		}
		e.setFraming(uint64(mpa.HeaderLen+len(req.PD)), uint64(mpa.HeaderLen+len(rep.PD)))
		return e.checkEnhanced(&req, &rep)
	}
	req, err := e.readFrame(mpa.KindRequest)
	if err != nil {
		return err
	}
	if !e.peerIsEngine && p.init == RNICScript && p.resp == RNICScript && p.s.Request != nil {
		// A real initiator's Request against the recorded one.
		w := p.request()
		if d := frameDiff(I2R, &w, &req); d != nil {
			e.frames = append(e.frames, *d)
		}
	}
	if p.resp == RNICScript && p.s.Request != nil && p.s.Reply == nil {
		// The recorded responder never answered (Linux siw closes on a Rev 3
		// Request or a bad key): close the same way.
		e.out = Outcome{Request: &req, Closed: true, ClosedBy: R2I, Reason: "the recording has no MPA Reply"}
		return nil
	}
	rep, closeAfter, reason := p.reply(&req)
	if err := e.writeRaw(mpa.AppendFrame(nil, rep)); err != nil {
		return fmt.Errorf("sending the MPA Reply: %w", err)
	}
	e.rep.SentOctets += uint64(mpa.HeaderLen + len(rep.PD))
	e.st.octetsSent.Add(uint64(mpa.HeaderLen + len(rep.PD)))
	if closeAfter {
		e.out = Outcome{Request: &req, Reply: &rep, Closed: true, ClosedBy: R2I, Reason: reason, Row: p.row(&req, &rep)}
		return nil
	}
	e.out = p.outcome(R2I, &req, &rep)
	e.setFraming(uint64(mpa.HeaderLen+len(rep.PD)), uint64(mpa.HeaderLen+len(req.PD)))
	return nil
}

// checkEnhanced makes the initiator's Rev 2 checks on the Reply (RFC 6581
// §9, as Linux siw does): the responder's ORD must fit the initiator's IRD
// (else Terminate LLP 0x06) and a peer-to-peer Reply must accept an RTR type
// the initiator offered (else Terminate LLP 0x07).
func (e *endpoint) checkEnhanced(req, rep *mpa.Frame) error {
	qe, _, qok := req.Enhanced()
	pe, _, pok := rep.Enhanced()
	if !qok || !pok {
		return nil
	}
	if qe.IRD != mpa.IRDORDNoNegotiation && pe.ORD != mpa.IRDORDNoNegotiation && pe.ORD > qe.IRD {
		e.sendTerminate(rdmap.Terminate{Layer: uint8(rdmap.LayerLLP), EType: rdmap.ETypeLLPMPA, Code: 0x06}, nil)
		e.out = e.p.closed(e.out, I2R, fmt.Sprintf("Reply ORD %d exceeds the Request's IRD %d: sent Terminate LLP/MPA 0x06", pe.ORD, qe.IRD))
		e.badReply()
		return nil
	}
	if e.out.P2P {
		acc := pe.RTR(mpa.FlagsRFC6581)
		if acc != 0 && acc&qe.RTR(mpa.FlagsRFC6581) == 0 {
			e.sendTerminate(rdmap.Terminate{Layer: uint8(rdmap.LayerLLP), EType: rdmap.ETypeLLPMPA, Code: 0x07}, nil)
			e.out = e.p.closed(e.out, I2R, "no RTR type both sides support: sent Terminate LLP/MPA 0x07")
			e.badReply()
		}
	}
	return nil
}

// badReply notes that this side closed the connection because of the
// peer's Reply (checkEnhanced). Against a real responder that is the
// responder's error, and the messages the recording has it send are
// missing; the engine's own responder sends such a Reply only when the
// overrides ask for it (--ird, --ord, --rtr), and the close is then the
// expected result.
func (e *endpoint) badReply() {
	if e.peerIsEngine {
		return
	}
	e.peerFault = true
	e.rep.Err = fmt.Errorf("the responder's MPA Reply breaks RFC 6581 §9: %s", e.out.Reason)
}

// setFraming prepares the transmit and receive framing: each direction's
// marker grid starts at its first FPDU octet, the length of the MPA frame it
// sent (RFC 5044 §5.1).
func (e *endpoint) setFraming(txOrigin, rxOrigin uint64) {
	txm, rxm := e.out.MarkersI2R, e.out.MarkersR2I
	if e.side == R2I {
		txm, rxm = rxm, txm
	}
	e.fr = NewFramer(txOrigin, txm, e.out.CRC)
	e.df = NewDeframer(rxOrigin, rxm, e.out.CRC)
}

// readFrame reads an MPA Request or Reply (RFC 5044 §7.1.1) within the
// handshake timeout. Octets after it stay in e.rbuf: they are the first
// FPDU octets.
func (e *endpoint) readFrame(kind mpa.Kind) (mpa.Frame, error) {
	what := "an MPA Request"
	if kind == mpa.KindReply {
		what = "an MPA Reply"
	}
	by := e.handshakeBy
	if by.IsZero() {
		by = time.Now().Add(e.o.Timeouts.Handshake)
	}
	e.c.SetReadDeadline(by)
	defer e.c.SetReadDeadline(time.Time{})
	for {
		f, n, err := mpa.DecodeFrame(e.rbuf)
		if err == nil {
			if f.Kind != kind {
				e.rep.RecvOctets += uint64(n)
				e.st.octetsRecv.Add(uint64(n))
				return f, fmt.Errorf("peer sent an MPA %s instead of %s: %w", f.Kind, what, dissect.ErrNotMPA)
			}
			if f.PDLen > maxPDLen {
				return f, fmt.Errorf("peer's %s declares %d octets of private data (at most %d accepted): %w", what[3:], f.PDLen, maxPDLen, dissect.ErrNotMPA)
			}
			f.PD = append([]byte(nil), f.PD...)
			e.rbuf = append(e.rbuf[:0], e.rbuf[n:]...)
			e.rep.RecvOctets += uint64(n)
			e.st.octetsRecv.Add(uint64(n))
			return f, nil
		}
		if errors.Is(err, dissect.ErrNotMPA) {
			e.rep.RecvOctets += uint64(len(e.rbuf)) // what came instead
			e.st.octetsRecv.Add(uint64(len(e.rbuf)))
			return f, fmt.Errorf("peer sent %s instead of %s: %w", quoteGarbage(e.rbuf), what, dissect.ErrNotMPA)
		}
		if len(e.rbuf) >= mpa.HeaderLen+maxPDLen {
			return f, fmt.Errorf("peer's %s is too long: %w", what[3:], dissect.ErrNotMPA)
		}
		if err := e.fill(); err != nil {
			if errors.Is(err, io.EOF) {
				return f, fmt.Errorf("peer closed the connection before sending %s: %w", what, errPeerClosed)
			}
			return f, fmt.Errorf("waiting for %s: %w", what, err)
		}
	}
}

// quoteGarbage shows the first octets of data that is not MPA.
func quoteGarbage(b []byte) string {
	if len(b) > 16 {
		b = b[:16]
	}
	return fmt.Sprintf("% x", b)
}

// fill reads more octets into e.rbuf.
func (e *endpoint) fill() error {
	if len(e.rbuf) == cap(e.rbuf) {
		nb := make([]byte, len(e.rbuf), max(2*cap(e.rbuf), 4096))
		copy(nb, e.rbuf)
		e.rbuf = nb
	}
	n, err := e.c.Read(e.rbuf[len(e.rbuf):cap(e.rbuf)])
	e.rbuf = e.rbuf[:len(e.rbuf)+n]
	if n > 0 {
		return nil
	}
	return classify(err)
}

// Errors that end a connection.
var (
	errPeerClosed = errors.New("peer closed the connection")
	errPeerReset  = errors.New("peer reset the connection")
	errTimeout    = errors.New("timed out")
	errTerminated = errors.New("this side sent a Terminate")
)

// classify turns socket errors into the ones reports name.
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF):
		return io.EOF
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return fmt.Errorf("%w (%v)", errPeerReset, err)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return errTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errTimeout
	}
	return err
}

// writeRaw writes b within the I/O timeout.
func (e *endpoint) writeRaw(b []byte) error {
	e.c.SetWriteDeadline(time.Now().Add(e.o.Timeouts.IO))
	_, err := e.c.Write(b)
	return classify(err)
}

// ---------------------------------------------------------------- transmit

// transmit sends this side's messages in order, each once the messages of
// the other direction it depends on have been received. Against a real
// peer, an RDMA Read Response whose Read Request has not come within
// Timeouts.Wait is held back, as an RNIC answers a Read Request only when it
// comes: it goes out once one arrives (before the next message, or while
// the side waits at the end), and is reported as not sent if none does.
func (e *endpoint) transmit(ctx context.Context) {
	start := e.clk.Now()
	var held []int // Read Responses waiting for their Read Request
	send := func(m *pmsg) bool {
		if err := e.sendMessage(ctx, m); err != nil {
			if e.rep.Err == nil {
				e.rep.Err = fmt.Errorf("sending %s: %w", m.head.Opcode, err)
			}
			return false
		}
		return true
	}
	// answer sends the held Read Responses whose Read Requests have come.
	answer := func() bool {
		for len(held) > 0 && e.readRequests() > 0 {
			if !send(&e.msgs[held[0]]) {
				return false
			}
			held = held[1:]
		}
		return true
	}
	defer func() {
		e.mu.Lock()
		e.rep.NotSent = append(e.rep.NotSent, held...)
		e.mu.Unlock()
	}()
	for i := range e.msgs {
		m := &e.msgs[i]
		if m.dir != e.side {
			continue
		}
		if !e.waitFor(ctx, m.after, i) || e.stopped() || !answer() {
			return
		}
		if m.readResp && !e.peerIsEngine && (len(held) > 0 || !e.waitReadRequest(ctx, e.o.Timeouts.Wait, false)) {
			if ctx.Err() != nil || e.stopped() {
				return
			}
			held = append(held, i)
			continue
		}
		if e.o.Speed > 0 {
			due := start.Add(time.Duration(float64(m.at) / e.o.Speed))
			if e.clk.SleepUntil(ctx, due) != nil {
				return
			}
		}
		if !send(m) {
			return
		}
	}
	// As finish waits for the peer's last messages: Idle after the last.
	for len(held) > 0 && e.waitReadRequest(ctx, max(e.o.Timeouts.Wait, e.o.Timeouts.Idle), true) && !e.stopped() {
		if !answer() {
			return
		}
	}
}

// readRequests returns the number of RDMA Read Requests received and not
// yet answered.
func (e *endpoint) readRequests() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.readReqs)
}

// stopped reports whether receiving ended with an error (after which this
// side sent a Terminate or the connection is gone) or a Terminate was sent.
func (e *endpoint) stopped() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.terminated || (e.rxEnded && e.rxErr != nil && !errors.Is(e.rxErr, io.EOF))
}

// waitFor waits until n messages of the other direction have been received.
// It returns false when sending should stop: receiving ended with an error
// or the context was cancelled. A timeout is noted and sending goes on.
func (e *endpoint) waitFor(ctx context.Context, n, idx int) bool {
	timer := time.NewTimer(e.o.Timeouts.Wait)
	defer timer.Stop()
	for {
		e.mu.Lock()
		got, ended, rxErr := e.received, e.rxEnded, e.rxErr
		e.mu.Unlock()
		if got >= n {
			return true
		}
		if ended {
			if rxErr != nil && !errors.Is(rxErr, io.EOF) {
				return false
			}
			// The peer closed: its messages will not come.
			return false
		}
		select {
		case <-e.notify:
		case <-ctx.Done():
			return false
		case <-timer.C:
			e.mu.Lock()
			got := e.received
			if e.side == R2I && e.out.P2P && got == 0 {
				// RFC 6581 §4 (seed 003 §4.2): in peer-to-peer mode the
				// responder sends no FPDU before the initiator's RTR.
				e.rep.Err = fmt.Errorf("the initiator sent no RTR within %v: in peer-to-peer mode the responder sends nothing before it (RFC 6581 §4)", e.o.Timeouts.Wait)
				e.mu.Unlock()
				return false
			}
			e.rep.Waits = append(e.rep.Waits, WaitTimeout{Message: idx, Needed: n, Received: got})
			e.mu.Unlock()
			return true
		}
	}
}

// waitReadRequest waits for an RDMA Read Request not yet answered, and
// reports whether one has come: at most d, or with progress, d after the
// peer's last message.
func (e *endpoint) waitReadRequest(ctx context.Context, d time.Duration, progress bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		e.mu.Lock()
		n, ended := len(e.readReqs), e.rxEnded
		e.mu.Unlock()
		if n > 0 {
			return true
		}
		if ended {
			return false
		}
		select {
		case <-e.notify:
			if progress {
				if !timer.Stop() {
					<-timer.C
				}
				timer.Reset(d)
			}
		case <-ctx.Done():
			return false
		case <-timer.C:
			return false
		}
	}
}

// sendMessage encodes and writes every segment of m.
func (e *endpoint) sendMessage(ctx context.Context, m *pmsg) error {
	var base *rdmap.ReadRequest
	if m.readResp {
		e.mu.Lock()
		if len(e.readReqs) > 0 {
			rr := e.readReqs[0]
			e.readReqs = e.readReqs[1:]
			base = &rr
		}
		e.mu.Unlock()
	}
	var fillBuf []byte
	for i := range m.segs {
		sg := &m.segs[i]
		s := m.head
		if s.DDP.T {
			s.DDP.TO = m.head.DDP.TO + sg.Off
			if base != nil {
				s.DDP.STag, s.DDP.TO = base.SinkSTag, base.SinkTO+sg.Off
			}
		} else {
			s.DDP.MO = uint32(sg.Off)
		}
		s.DDP.L = sg.Last
		s.Payload = sg.Payload
		if m.filler || len(sg.Payload) != sg.PayloadLen {
			if cap(fillBuf) < sg.PayloadLen {
				fillBuf = make([]byte, sg.PayloadLen)
			}
			s.Payload = fillBuf[:sg.PayloadLen]
			fill(s.Payload, sg.Off)
		}
		// Coalesce a message's FPDUs into writes of up to coalesceMax
		// octets (one FPDU per write when the rate is bounded, and in
		// WritePcap, which makes a write's octets TCP segments of
		// Options.MSS: an FPDU then starts a segment, as senders align
		// them, RFC 5044 §8).
		_, sim := e.c.(*memConn)
		flush := sg.Last || i == len(m.segs)-1 || e.o.MaxRate > 0 || sim
		n, err := e.sendSegment(s, flush)
		if err != nil {
			return err
		}
		if err := e.pace.wait(ctx, e.clk, n); err != nil {
			return err
		}
	}
	e.rep.SentMessages++
	e.st.msgsSent.Add(1)
	return nil
}

// coalesceMax is the most FPDU octets a side gathers before writing them.
const coalesceMax = 64 << 10

// sendSegment frames one DDP segment as an FPDU and writes it, with the
// FPDUs gathered before it, when flush is set or enough have gathered. It
// returns the octets written.
func (e *endpoint) sendSegment(s rdmap.Segment, flush bool) (int, error) {
	e.txMu.Lock()
	defer e.txMu.Unlock()
	if !s.DDP.T && s.DDP.QN == ddp.QNTerminate {
		e.termMSN = max(e.termMSN, s.DDP.MSN)
	}
	e.mu.Lock()
	term := e.terminated
	e.mu.Unlock()
	if term {
		return 0, errTerminated
	}
	e.ulpdu = rdmap.AppendSegment(e.ulpdu[:0], s)
	var err error
	e.wire, err = e.fr.AppendFPDU(e.wire, e.ulpdu)
	if err != nil {
		return 0, err
	}
	e.rep.SentFPDUs++
	if s.Opcode == rdmap.OpTerminate {
		t := s.Term
		e.rep.TermSent = &t
	}
	if !flush && len(e.wire) < coalesceMax {
		return 0, nil
	}
	n := len(e.wire)
	err = e.writeRaw(e.wire)
	e.wire = e.wire[:0]
	if err != nil {
		return 0, err
	}
	e.rep.SentOctets += uint64(n)
	e.st.octetsSent.Add(uint64(n))
	return n, nil
}

// sendTerminate sends a Terminate (RFC 5040 §4.8) reporting t, with the DDP
// segment length and header of the offending ULPDU when one is given and
// its header decodes (seed 004 Figure 10).
func (e *endpoint) sendTerminate(t rdmap.Terminate, bad []byte) {
	if bad != nil {
		if h, _, err := ddp.Decode(bad); err == nil {
			t.M, t.D, t.HasDDP = true, true, true
			t.DDPSegLen = uint16(min(len(bad), 0xFFFF))
			t.DDP = h
		}
	}
	e.txMu.Lock()
	msn := e.termMSN + 1
	e.txMu.Unlock()
	s := rdmap.Segment{
		DDP:    ddp.Header{L: true, DV: e.out.V, QN: ddp.QNTerminate, MSN: msn},
		RV:     e.out.V,
		Opcode: rdmap.OpTerminate,
		Term:   t,
	}
	e.sendSegment(s, true)
	// Nothing may follow a Terminate (RFC 5040 §5.4).
	e.mu.Lock()
	e.terminated = true
	e.mu.Unlock()
}

// ---------------------------------------------------------------- receive

// receive reads and checks FPDUs until the peer closes, an error, or a
// timeout (the connection's whole lifetime bounds it).
func (e *endpoint) receive() {
	defer close(e.rxStopped)
	var err error
	for err == nil {
		err = e.deframe()
		if err != nil {
			break
		}
		if len(e.rbuf) >= maxRxBuf {
			err = fmt.Errorf("receive buffer overflow: %w", dissect.ErrBadLength)
			break
		}
		err = e.fill()
	}
	if errors.Is(err, io.EOF) && len(e.rbuf) > 0 {
		err = fmt.Errorf("peer closed the connection inside an FPDU (%d octets left): %w", len(e.rbuf), errPeerClosed)
	}
	e.mu.Lock()
	e.rxErr, e.rxEnded = err, true
	e.mu.Unlock()
	select {
	case e.notify <- struct{}{}:
	default:
	}
}

// deframe handles every whole FPDU in e.rbuf.
func (e *endpoint) deframe() error {
	off := 0
	defer func() {
		if off > 0 {
			e.rbuf = append(e.rbuf[:0], e.rbuf[off:]...)
		}
	}()
	for off < len(e.rbuf) {
		at := e.df.Off
		p, n, err := e.df.Next(e.rbuf[off:])
		if n == 0 && err == nil {
			return nil
		}
		off += n
		e.rep.RecvOctets += uint64(n)
		e.st.octetsRecv.Add(uint64(n))
		switch {
		case errors.Is(err, dissect.ErrBadCRC):
			e.sendTerminate(rdmap.Terminate{Layer: uint8(rdmap.LayerLLP), EType: rdmap.ETypeLLPMPA, Code: 0x02}, nil)
			return fmt.Errorf("FPDU at stream offset %d has a bad CRC: sent Terminate LLP/MPA 0x02: %w", at, dissect.ErrBadCRC)
		case errors.Is(err, dissect.ErrMarkerMismatch):
			e.sendTerminate(rdmap.Terminate{Layer: uint8(rdmap.LayerLLP), EType: rdmap.ETypeLLPMPA, Code: 0x03}, nil)
			return fmt.Errorf("FPDU at stream offset %d has a marker whose FPDUPTR does not match: sent Terminate LLP/MPA 0x03: %w", at, dissect.ErrMarkerMismatch)
		case err != nil:
			return err
		}
		if err := e.segment(p.ULPDU, at); err != nil {
			return err
		}
	}
	return nil
}

// segment checks one received DDP segment as an RDMAP endpoint would (RFC
// 5041 §7, RFC 5040 §7.2) and gathers it into its message.
func (e *endpoint) segment(ulpdu []byte, at uint64) error {
	v := e.out.V
	e.mu.Lock()
	e.rxFPDUs++
	e.mu.Unlock()
	h, _, herr := ddp.Decode(ulpdu)
	if herr != nil {
		e.sendTerminate(rdmap.Terminate{Layer: uint8(rdmap.LayerDDP), EType: rdmap.ETypeDDPLocalCatastrophic}, nil)
		return fmt.Errorf("FPDU at stream offset %d: ULPDU of %d octets is too short for a DDP header: sent Terminate DDP/Local Catastrophic: %w", at, len(ulpdu), dissect.ErrTruncated)
	}
	if h.DV != v {
		t := rdmap.Terminate{Layer: uint8(rdmap.LayerDDP), EType: rdmap.ETypeDDPUntagged, Code: 0x06}
		if h.T {
			t.EType, t.Code = rdmap.ETypeDDPTagged, 0x04
		}
		e.sendTerminate(t, ulpdu)
		return fmt.Errorf("FPDU at stream offset %d: DDP version %d, negotiated %d: sent Terminate DDP/%s/0x%02x (Invalid DDP version): %w",
			at, h.DV, v, rdmap.ETypeName(uint8(rdmap.LayerDDP), t.EType), t.Code, dissect.ErrBadVersion)
	}
	if !h.T && h.QN > ddp.QNAtomic {
		e.sendTerminate(rdmap.Terminate{Layer: uint8(rdmap.LayerDDP), EType: rdmap.ETypeDDPUntagged, Code: 0x01}, ulpdu)
		return fmt.Errorf("FPDU at stream offset %d: invalid queue number %d: sent Terminate DDP/Untagged Buffer Error/0x01 (Invalid QN)", at, h.QN)
	}
	seg, err := rdmap.Decode(ulpdu)
	ctl := rdmap.Control(h.ULPCtrl)
	switch {
	case ctl.RV() != v:
		e.sendTerminate(rdmap.Terminate{Layer: uint8(rdmap.LayerRDMAP), EType: rdmap.ETypeRDMAPRemoteOperation, Code: 0x05}, ulpdu)
		return fmt.Errorf("FPDU at stream offset %d: RDMAP version %d, negotiated %d: sent Terminate RDMAP/Remote Operation Error/0x05 (Invalid RDMAP version): %w", at, ctl.RV(), v, dissect.ErrBadVersion)
	case errors.Is(err, dissect.ErrUnknownOpcode) || !ctl.Opcode().Valid():
		e.sendTerminate(rdmap.Terminate{Layer: uint8(rdmap.LayerRDMAP), EType: rdmap.ETypeRDMAPRemoteOperation, Code: 0x06}, ulpdu)
		return fmt.Errorf("FPDU at stream offset %d: opcode 0x%x is not defined: sent Terminate RDMAP/Remote Operation Error/0x06 (Unexpected OpCode): %w", at, uint8(ctl.Opcode()), dissect.ErrUnknownOpcode)
	case ctl.Opcode().Tagged() != h.T:
		e.sendTerminate(rdmap.Terminate{Layer: uint8(rdmap.LayerRDMAP), EType: rdmap.ETypeRDMAPRemoteOperation, Code: 0x06}, ulpdu)
		return fmt.Errorf("FPDU at stream offset %d: %s with DDP T=%v: sent Terminate RDMAP/Remote Operation Error/0x06 (Unexpected OpCode)", at, ctl.Opcode(), h.T)
	case err != nil:
		e.sendTerminate(rdmap.Terminate{Layer: uint8(rdmap.LayerRDMAP), EType: rdmap.ETypeRDMAPRemoteOperation, Code: 0xFF}, ulpdu)
		return fmt.Errorf("FPDU at stream offset %d: %s header does not decode: sent Terminate RDMAP/Remote Operation Error/0xff: %w", at, ctl.Opcode(), err)
	}
	if seg.Opcode == rdmap.OpTerminate {
		t := seg.Term
		e.rep.TermRecv = &t
	}
	key := msgKey{tagged: h.T, op: seg.Opcode}
	if h.T {
		key.a = uint64(h.STag)
	} else {
		key.a, key.b = uint64(h.QN), uint64(h.MSN)
	}
	m := e.open[key]
	if !h.T {
		if err := e.checkUntagged(h, m, ulpdu, at); err != nil {
			return err
		}
	}
	if m == nil {
		if len(e.open) >= maxOpenMessages {
			return fmt.Errorf("peer has more than %d messages in progress", maxOpenMessages)
		}
		m = &rxMsg{info: infoOf(&seg), h: sha256.New()}
		e.open[key] = m
	}
	m.h.Write(seg.Payload)
	m.info.Length += uint64(len(seg.Payload))
	m.segs++
	if !h.L {
		// A message the recording shows unfinished (its sender was
		// terminated) counts as received once it has all its recorded
		// segments: what the peer sent next depends on it.
		e.mu.Lock()
		next := e.received
		e.mu.Unlock()
		if !m.counted && next < len(e.expM) {
			if x := e.expM[next]; x.incomplete && x.head.Opcode == seg.Opcode && m.segs >= len(x.segs) {
				m.counted = true
				info := m.info
				m.h.Sum(info.Digest[:0])
				e.received1(info, seg)
			}
		}
		return nil
	}
	delete(e.open, key)
	if m.counted {
		return nil
	}
	m.h.Sum(m.info.Digest[:0])
	e.received1(m.info, seg)
	return nil
}

// checkUntagged checks the MSN and MO of an untagged segment (RFC 5041 §5.1,
// §7.2; PROTOCOL.md C), m being the message it continues (nil for a new
// one): a new message on a queue has the MSN after the last one's (1 for
// the first) and starts at MO 0; a message's next segment starts where the
// previous one ended. Else it sends Terminate DDP/Untagged Buffer Error
// 0x03 (Invalid MSN: MSN range is not valid) or 0x04 (Invalid MO), as Linux
// siw does. The engine's own peer replays the recording's offsets: a
// message whose first segments were not captured starts past MO 0, and a
// segment the capture lost leaves a gap; those are what was recorded.
func (e *endpoint) checkUntagged(h ddp.Header, m *rxMsg, ulpdu []byte, at uint64) error {
	if m != nil {
		if e.peerIsEngine || uint64(h.MO) == m.info.Length {
			return nil
		}
		e.sendTerminate(rdmap.Terminate{Layer: uint8(rdmap.LayerDDP), EType: rdmap.ETypeDDPUntagged, Code: 0x04}, ulpdu)
		return fmt.Errorf("FPDU at stream offset %d: queue %d MSN %d segment at MO %d, where the message's %d octets so far end: sent Terminate DDP/Untagged Buffer Error/0x04 (Invalid MO)", at, h.QN, h.MSN, h.MO, m.info.Length)
	}
	if want := e.rxMSN[h.QN] + 1; h.MSN != want {
		e.sendTerminate(rdmap.Terminate{Layer: uint8(rdmap.LayerDDP), EType: rdmap.ETypeDDPUntagged, Code: 0x03}, ulpdu)
		return fmt.Errorf("FPDU at stream offset %d: queue %d message with MSN %d, where MSN %d is next: sent Terminate DDP/Untagged Buffer Error/0x03 (Invalid MSN: MSN range is not valid)", at, h.QN, h.MSN, want)
	}
	if h.MO != 0 && !e.peerIsEngine {
		e.sendTerminate(rdmap.Terminate{Layer: uint8(rdmap.LayerDDP), EType: rdmap.ETypeDDPUntagged, Code: 0x04}, ulpdu)
		return fmt.Errorf("FPDU at stream offset %d: queue %d MSN %d starts at MO %d, not 0: sent Terminate DDP/Untagged Buffer Error/0x04 (Invalid MO)", at, h.QN, h.MSN, h.MO)
	}
	e.rxMSN[h.QN] = h.MSN
	return nil
}

// received1 records a received message and wakes the transmitter.
func (e *endpoint) received1(info MessageInfo, seg rdmap.Segment) {
	e.mu.Lock()
	e.got = append(e.got, info)
	e.received++
	if seg.Opcode == rdmap.OpReadRequest {
		e.readReqs = append(e.readReqs, seg.Read)
	}
	e.mu.Unlock()
	e.rep.RecvMessages++
	e.st.msgsRecv.Add(1)
	select {
	case e.notify <- struct{}{}:
	default:
	}
}

// ---------------------------------------------------------------- the end

// finish waits (within the idle timeout) for the peer's remaining messages,
// closes this side's half of the connection, and waits for the peer's FIN.
func (e *endpoint) finish(ctx context.Context) {
	idle := time.NewTimer(e.o.Timeouts.Idle)
	defer idle.Stop()
	for {
		e.mu.Lock()
		got, ended := e.received, e.rxEnded
		e.mu.Unlock()
		if got >= len(e.exp) || ended {
			break
		}
		select {
		case <-e.notify:
			if !idle.Stop() {
				<-idle.C
			}
			idle.Reset(e.o.Timeouts.Idle)
			continue
		case <-ctx.Done():
		case <-idle.C:
		}
		break
	}
	e.c.CloseWrite()
	if ctx.Err() == nil {
		e.c.SetReadDeadline(time.Now().Add(e.o.Timeouts.Idle))
	} // else stopped: the read deadline has passed, receiving ends now
	<-e.rxStopped
	e.mu.Lock()
	rxErr := e.rxErr
	e.rep.Received = append([]MessageInfo(nil), e.got...)
	nFPDU := e.rxFPDUs
	e.mu.Unlock()
	switch {
	case ctx.Err() != nil:
		// Stopped (settle says why): the peer's last messages were not
		// waited for.
	case rxErr == nil, errors.Is(rxErr, io.EOF):
		if nFPDU == 0 && len(e.exp) > 0 && !e.out.Closed {
			// The peer closed right after the exchange (interop matrix
			// rows 2 and 4).
			e.out = e.p.closed(e.out, e.side.Other(), "peer closed the connection after the MPA exchange")
		}
	case errors.Is(rxErr, errTimeout):
		if e.received < len(e.exp) && e.rep.Err == nil {
			e.rep.Err = fmt.Errorf("peer sent %d of %d messages, then nothing for %v", e.received, len(e.exp), e.o.Timeouts.Idle)
		}
	default:
		if e.rep.Err == nil {
			e.rep.Err = rxErr
		}
	}
	e.rep.Expected = e.exp
}

// closeGracefully ends a connection the exchange closed: FIN, wait briefly
// for the peer's FIN, then close.
func (e *endpoint) closeGracefully(ctx context.Context) {
	e.c.CloseWrite()
	if ctx.Err() == nil {
		e.c.SetReadDeadline(time.Now().Add(e.o.Timeouts.Idle))
	}
	var b [512]byte
	for {
		if _, err := e.c.Read(b[:]); err != nil {
			return
		}
	}
}

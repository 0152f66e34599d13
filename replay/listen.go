package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
)

// Listen plays the responder of each script to real initiators connecting
// to ln, and compares what each initiator sends with the recording.
//
// Initiators are accepted as they come, up to Options.MaxConns at once, and
// each is matched to a script by the MPA Request it sends (RFC 5044
// §7.1.1): the first script in start order whose Request (with the
// Negotiation's overrides) is the one received, else whose ULP private
// data is (when there is some), else the first not yet matched; an
// initiator that sends no Request (within Timeouts.Handshake) or octets
// that are not one plays a script without MPA exchange if one is left.
// Connections whose Requests are the same are told apart by the order they
// come in, which is the recording's when their initiators start as
// recorded. With Options.Serial one initiator is played at a time, in
// connection order, without looking at its Request.
//
// Timeouts.Accept bounds each wait for an initiator while no connection is
// open; the scripts no initiator came for are reported with that error.
// The replay's duration leaves out the time when no connection was open.
func Listen(ctx context.Context, ln *net.TCPListener, scripts []*Script, o Options) (*Report, error) {
	o = o.withDefaults()
	if err := o.CheckScripts(scripts); err != nil {
		return nil, err
	}
	st := newStats(len(scripts), true)
	stop := st.report(&o)
	m := newMatcher(scripts, &o)
	reps := make([]*ConnReport, len(scripts))

	type accepted struct {
		c   *net.TCPConn
		err error
	}
	acceptCh := make(chan accepted)
	quit := make(chan struct{})
	var acceptWG sync.WaitGroup
	acceptWG.Add(1)
	ln.SetDeadline(time.Time{})
	go func() {
		defer acceptWG.Done()
		for {
			c, err := ln.AcceptTCP()
			select {
			case acceptCh <- accepted{c, err}:
			case <-quit:
				if c != nil {
					c.Close()
				}
				return
			}
			if err != nil {
				return
			}
		}
	}()

	doneCh := make(chan struct{}, len(scripts))
	var wg sync.WaitGroup
	open, n := 0, 0
	timer := time.NewTimer(o.Timeouts.Accept)
	defer timer.Stop()
	var acceptErr error
	for n < len(scripts) && acceptErr == nil && ctx.Err() == nil {
		// Wait for an initiator while fewer than MaxConns are open; the
		// Accept timeout runs while none is.
		in := acceptCh
		if open >= m.limit {
			in = nil
		}
		var expired <-chan time.Time
		if open == 0 {
			expired = timer.C
		}
		select {
		case <-doneCh:
			open--
			if open == 0 {
				timer.Reset(o.Timeouts.Accept)
			}
			continue
		case <-ctx.Done():
			continue
		case <-expired:
			acceptErr = errTimeout
			continue
		case a := <-in:
			if a.err != nil {
				acceptErr = classify(a.err)
				continue
			}
			timer.Stop()
			n++
			open++
			st.accepted(1)
			started := st.since()
			wg.Add(1)
			go func() {
				defer wg.Done()
				i, c := listenConn(ctx, a.c, m, &o, st)
				if c != nil {
					c.Start, c.End = started, st.since()
					reps[i] = c
				}
				st.accepted(-1)
				doneCh <- struct{}{}
			}()
		}
	}
	close(quit)
	ln.SetDeadline(time.Unix(1, 0)) // unblock the accepting goroutine
	acceptWG.Wait()
	ln.SetDeadline(time.Time{})
	wg.Wait()
	stop()
	if acceptErr != nil && ctx.Err() == nil {
		for _, i := range m.left() {
			s := scripts[i]
			reps[i] = &ConnReport{Conn: s.Conn, Initiator: s.Initiator, Responder: s.Responder,
				Err: fmt.Errorf("waiting for an initiator on %s: %w", ln.Addr(), acceptErr)}
		}
	}
	rep := &Report{Mode: "listen"}
	rep.addAll(reps)
	return rep, rep.finish(ctx, st)
}

// listenConn matches an accepted connection to a script and plays its
// responder; it returns the script's index and report.
func listenConn(ctx context.Context, c *net.TCPConn, m *matcher, o *Options, st *stats) (int, *ConnReport) {
	var pre []byte
	var req *mpa.Frame
	by := time.Now().Add(o.Timeouts.Handshake)
	if m.wantsRequest() {
		pre, req = peekRequest(ctx, c, by)
	}
	i := m.claim(req, len(pre) > 0)
	s := m.plans[i].s
	st.begin(s.Conn)
	defer st.end(s.Conn)
	p := &plan{s: s, neg: o.Negotiation, init: RNICScript, resp: o.Responder}
	e := newEndpoint(R2I, p, o, c, wallClock{}, st, false)
	e.rbuf, e.handshakeBy = pre, by
	e.rep.Local, e.rep.Remote = addrPort(c.LocalAddr()), addrPort(c.RemoteAddr())
	cctx, cancel := withLifetime(ctx, o)
	e.run(cctx)
	cancel()
	return i, connReport(s, [2]*endpoint{nil, e})
}

// peekRequest reads what an initiator sends first: until an MPA Request
// decodes, the octets cannot start one, or by passes. It returns the
// octets read, which the endpoint reads again, and the Request if one came.
func peekRequest(ctx context.Context, c *net.TCPConn, by time.Time) ([]byte, *mpa.Frame) {
	c.SetReadDeadline(by)
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Unix(1, 0)) })
	defer func() {
		if stop() {
			c.SetReadDeadline(time.Time{})
		}
	}()
	buf := make([]byte, 0, 1024)
	for {
		f, _, err := mpa.DecodeFrame(buf)
		switch {
		case err == nil && f.Kind == mpa.KindRequest:
			f.PD = slices.Clone(f.PD)
			return buf, &f
		case err == nil, errors.Is(err, dissect.ErrNotMPA), len(buf) >= mpa.HeaderLen+maxPDLen:
			return buf, nil
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		k, err := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err != nil && k == 0 {
			return buf, nil
		}
	}
}

// matcher gives each connection Listen accepts a script (see Listen).
type matcher struct {
	mu     sync.Mutex
	plans  []*plan // by script index
	order  []int   // script indexes in start order (Serial: script order)
	taken  []bool
	serial bool
	limit  int
}

func newMatcher(scripts []*Script, o *Options) *matcher {
	m := &matcher{plans: make([]*plan, len(scripts)), taken: make([]bool, len(scripts)), serial: o.Serial, limit: max(o.MaxConns, 1)}
	for i, s := range scripts {
		m.plans[i] = &plan{s: s, neg: o.Negotiation, init: RNICScript, resp: o.Responder}
	}
	m.order = newSchedule(scripts, o).order
	if o.Serial {
		m.limit = 1
	}
	return m
}

// wantsRequest reports whether the initiator's first octets choose the
// script: a script with an MPA exchange is left, and not Serial.
func (m *matcher) wantsRequest() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.serial {
		return false
	}
	for i, p := range m.plans {
		if !m.taken[i] && !p.raw() {
			return true
		}
	}
	return false
}

// claim takes the script for an initiator that sent req (nil: no Request;
// sent tells whether it sent anything) and returns its index.
func (m *matcher) claim(req *mpa.Frame, sent bool) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	best, bestRank := -1, 4
	for _, i := range m.order {
		if m.taken[i] {
			continue
		}
		p := m.plans[i]
		rank := 3
		switch {
		case m.serial:
			rank = 0
		case req != nil && !p.raw():
			want := p.request()
			_, wu, _ := splitEnhanced(&want)
			_, gu, _ := splitEnhanced(req)
			switch {
			case frameDiff(I2R, &want, req) == nil:
				rank = 0
			case len(wu) > 0 && bytes.Equal(wu, gu):
				rank = 1
			default:
				rank = 2
			}
		case req == nil && p.raw():
			// An initiator that sent FPDUs, or nothing: a stream without
			// MPA exchange. One that sent nothing fits one whose
			// responder speaks first as well.
			rank = 0
			if !sent {
				rank = 1
			}
		}
		if rank < bestRank {
			best, bestRank = i, rank
		}
	}
	m.taken[best] = true
	return best
}

// left returns the indexes of the scripts no initiator was matched to.
func (m *matcher) left() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int
	for i, t := range m.taken {
		if !t {
			out = append(out, i)
		}
	}
	return out
}

// acceptor accepts the connections of a loopback replay on one listener and
// hands each to the dialer whose local address is its remote address, so
// that connections can be made at once.
type acceptor struct {
	ln *net.TCPListener
	// keep is how long a connection nobody has claimed is kept (someone
	// else's is closed after it).
	keep      time.Duration
	mu        sync.Mutex
	waiting   map[netip.AddrPort]chan *net.TCPConn
	unclaimed map[netip.AddrPort]pendingConn
	err       error
	done      chan struct{}
}

type pendingConn struct {
	c  *net.TCPConn
	at time.Time
}

func newAcceptor(ln *net.TCPListener, keep time.Duration) *acceptor {
	a := &acceptor{ln: ln, keep: keep, waiting: map[netip.AddrPort]chan *net.TCPConn{},
		unclaimed: map[netip.AddrPort]pendingConn{}, done: make(chan struct{})}
	ln.SetDeadline(time.Time{})
	go a.loop()
	return a
}

func (a *acceptor) loop() {
	defer close(a.done)
	for {
		c, err := a.ln.AcceptTCP()
		a.mu.Lock()
		if err != nil {
			a.err = classify(err)
			a.mu.Unlock()
			return
		}
		key := addrPort(c.RemoteAddr())
		if ch, ok := a.waiting[key]; ok {
			delete(a.waiting, key)
			ch <- c
		} else {
			now := time.Now()
			for k, p := range a.unclaimed {
				if now.Sub(p.at) > a.keep {
					p.c.Close()
					delete(a.unclaimed, k)
				}
			}
			a.unclaimed[key] = pendingConn{c, now}
		}
		a.mu.Unlock()
	}
}

// claim returns the accepted connection whose remote address is local,
// waiting at most timeout for it.
func (a *acceptor) claim(ctx context.Context, local netip.AddrPort, timeout time.Duration) (*net.TCPConn, error) {
	a.mu.Lock()
	if p, ok := a.unclaimed[local]; ok {
		delete(a.unclaimed, local)
		a.mu.Unlock()
		return p.c, nil
	}
	if a.err != nil {
		err := a.err
		a.mu.Unlock()
		return nil, err
	}
	ch := make(chan *net.TCPConn, 1)
	a.waiting[local] = ch
	a.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var err error
	select {
	case c := <-ch:
		return c, nil
	case <-t.C:
		err = errTimeout
	case <-a.done:
		err = net.ErrClosed
	case <-ctx.Done():
		err = ctx.Err()
	}
	a.mu.Lock()
	delete(a.waiting, local)
	if a.err != nil && errors.Is(err, net.ErrClosed) {
		err = a.err
	}
	a.mu.Unlock()
	select {
	case c := <-ch: // it came meanwhile
		return c, nil
	default:
	}
	return nil, err
}

// close stops accepting and closes the connections nobody claimed; the
// listener stays open, without a deadline.
func (a *acceptor) close() {
	a.ln.SetDeadline(time.Unix(1, 0))
	<-a.done
	a.ln.SetDeadline(time.Time{})
	a.mu.Lock()
	for k, p := range a.unclaimed {
		p.c.Close()
		delete(a.unclaimed, k)
	}
	a.mu.Unlock()
}

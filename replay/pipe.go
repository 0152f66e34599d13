package replay

import (
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// conn is what an endpoint needs of a TCP connection: a *net.TCPConn, or one
// end of an in-memory pipe for WritePcap.
type conn interface {
	io.Reader
	io.Writer
	SetReadDeadline(t time.Time) error
	SetWriteDeadline(t time.Time) error
	// CloseWrite sends a FIN: the peer reads EOF once it has read the rest.
	CloseWrite() error
	Close() error
}

// memPipeMax bounds the octets buffered in each direction of a memory pipe;
// a writer blocks (until its deadline) while the reader is that far behind.
const memPipeMax = 1 << 20

// memBuf is one direction of a memory pipe.
type memBuf struct {
	mu      sync.Mutex
	data    []byte
	fin     bool // the writer closed: EOF once data is drained
	closed  bool // the reader closed
	changed chan struct{}
}

func newMemBuf() *memBuf { return &memBuf{changed: make(chan struct{})} }

// signal wakes every waiter; b.mu is held.
func (b *memBuf) signal() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// waitChange waits for ch to be closed or the deadline to pass.
func waitChange(ch chan struct{}, deadline time.Time) bool {
	if deadline.IsZero() {
		<-ch
		return true
	}
	d := time.Until(deadline)
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// memConn is one end of an in-memory, buffered, full-duplex pipe with
// deadlines and half-close, so that WritePcap can run the engine without
// sockets. tap sees every write (and the FIN) before the peer can read it.
type memConn struct {
	rd, wr *memBuf
	tap    func(data []byte, fin bool)
	// mss is the TCP payload of the segments tap cuts the octets into
	// (WritePcap's Options.MSS), 0 when nothing does.
	mss int

	dmu       sync.Mutex
	rdeadline time.Time
	wdeadline time.Time
}

// memPipe returns the two connected ends.
func memPipe() (*memConn, *memConn) {
	a, b := newMemBuf(), newMemBuf()
	return &memConn{rd: a, wr: b}, &memConn{rd: b, wr: a}
}

func (c *memConn) deadlines() (r, w time.Time) {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	return c.rdeadline, c.wdeadline
}

func (c *memConn) Read(p []byte) (int, error) {
	b := c.rd
	for {
		b.mu.Lock()
		switch {
		case b.closed:
			b.mu.Unlock()
			return 0, net.ErrClosed
		case len(b.data) > 0:
			n := copy(p, b.data)
			b.data = b.data[n:]
			if len(b.data) == 0 {
				b.data = nil
			}
			b.signal()
			b.mu.Unlock()
			return n, nil
		case b.fin:
			b.mu.Unlock()
			return 0, io.EOF
		}
		ch := b.changed
		b.mu.Unlock()
		rd, _ := c.deadlines()
		if !waitChange(ch, rd) {
			return 0, os.ErrDeadlineExceeded
		}
	}
}

func (c *memConn) Write(p []byte) (int, error) {
	b := c.wr
	for {
		b.mu.Lock()
		switch {
		case b.fin:
			b.mu.Unlock()
			return 0, net.ErrClosed
		case b.closed:
			b.mu.Unlock()
			return 0, io.ErrClosedPipe
		case len(b.data) < memPipeMax:
			if c.tap != nil {
				c.tap(p, false)
			}
			b.data = append(b.data, p...)
			b.signal()
			b.mu.Unlock()
			return len(p), nil
		}
		ch := b.changed
		b.mu.Unlock()
		_, wd := c.deadlines()
		if !waitChange(ch, wd) {
			return 0, os.ErrDeadlineExceeded
		}
	}
}

func (c *memConn) SetReadDeadline(t time.Time) error {
	c.dmu.Lock()
	c.rdeadline = t
	c.dmu.Unlock()
	c.rd.mu.Lock()
	c.rd.signal() // wake a blocked reader to re-check its deadline
	c.rd.mu.Unlock()
	return nil
}

func (c *memConn) SetWriteDeadline(t time.Time) error {
	c.dmu.Lock()
	c.wdeadline = t
	c.dmu.Unlock()
	c.wr.mu.Lock()
	c.wr.signal()
	c.wr.mu.Unlock()
	return nil
}

func (c *memConn) CloseWrite() error {
	b := c.wr
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.fin {
		b.fin = true
		if c.tap != nil {
			c.tap(nil, true)
		}
		b.signal()
	}
	return nil
}

func (c *memConn) Close() error {
	c.CloseWrite()
	b := c.rd
	b.mu.Lock()
	b.closed = true
	b.data = nil
	b.signal()
	b.mu.Unlock()
	return nil
}

// MSS returns the segment size of the connection's TCP (sendMSS).
func (c *memConn) MSS() int { return c.mss }

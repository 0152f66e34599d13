package replay

import (
	"context"
	"sync"
	"time"
)

// clock is the engine's time: the wall clock for sockets, a virtual clock
// for WritePcap, where pacing moves the capture's timestamps instead of
// sleeping.
type clock interface {
	Now() time.Time
	// SleepUntil returns at t, or early with ctx's error.
	SleepUntil(ctx context.Context, t time.Time) error
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// virtualClock advances by one microsecond per reading, so that frames get
// distinct increasing timestamps, and jumps forward on SleepUntil.
type virtualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *virtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Microsecond)
	return c.now
}

// latest returns the last time read, without advancing.
func (c *virtualClock) latest() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *virtualClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	if t.After(c.now) {
		c.now = t
	}
	c.mu.Unlock()
	return ctx.Err()
}

// pacer bounds a side's transmit rate: after n octets in total, the next
// write waits until start + n/rate.
type pacer struct {
	rate  float64 // octets per second; 0: unbounded
	start time.Time
	sent  float64
}

func (p *pacer) wait(ctx context.Context, clk clock, n int) error {
	if p.rate <= 0 {
		return nil
	}
	if p.start.IsZero() {
		p.start = clk.Now()
	}
	due := p.start.Add(time.Duration(p.sent / p.rate * float64(time.Second)))
	p.sent += float64(n)
	return clk.SleepUntil(ctx, due)
}

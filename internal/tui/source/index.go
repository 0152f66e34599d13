package source

import (
	"context"
	"errors"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/tui/model"
)

// countingReader counts the octets read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// Options configure Run.
type Options struct {
	Flows flows.Options
	// OnPacket, when set, sees every packet read (Frames.Offer keeps some
	// for inputs that cannot be read again).
	OnPacket func(p *capture.Packet)
	// Batch is how many records are added to the index at once (default 256).
	Batch int
	// Stats, when set, sees every record too (the statistics screens).
	Stats *model.Stats
}

// Open opens the capture for Run: path "-" is standard input. It returns
// the reader and the file's size (0 when unknown).
func Open(path string) (io.ReadCloser, int64, error) {
	if path == "-" {
		return io.NopCloser(os.Stdin), 0, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// Run reads the capture r (named name, of size octets, 0 when unknown)
// through capture and flows into x until the end, a damaged record or the
// cancellation of ctx. Progress and the final state (Done, Err) go to x.
// It returns the error that ended the file early (a *capture.FileError),
// nil at a clean end.
func Run(ctx context.Context, r io.Reader, name string, size int64, x *model.Index, o Options) error {
	start := time.Now()
	cr := &countingReader{r: r}
	src, err := capture.NewSource(cr, name)
	if err != nil {
		x.SetProgress(model.Progress{Total: size, Done: true, Err: err, Elapsed: time.Since(start)})
		return err
	}
	defer src.Close()
	batch := o.Batch
	if batch <= 0 {
		batch = 256
	}
	pend := make([]*flows.Record, 0, batch)
	flush := func() {
		if len(pend) > 0 {
			if o.Stats != nil {
				o.Stats.Add(pend...)
			}
			x.Add(pend...)
			pend = pend[:0]
		}
	}
	dec := flows.NewDecoder(o.Flows, func(r *flows.Record) {
		pend = append(pend, r)
		if len(pend) == batch {
			flush()
		}
	})
	var frames uint64
	var ferr error
	last := time.Now()
	for {
		p, err := src.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				ferr = err
			}
			break
		}
		frames++
		if frames == 1 {
			x.SetFirst(p.TS) // -t r counts from it
		}
		if o.OnPacket != nil {
			o.OnPacket(&p)
		}
		dec.Packet(&p)
		if frames&1023 == 0 {
			if ctx.Err() != nil {
				ferr = ctx.Err()
				break
			}
			if now := time.Now(); now.Sub(last) > 20*time.Millisecond {
				last = now
				flush()
				x.SetProgress(model.Progress{Read: cr.n.Load(), Total: size, Frames: frames, Elapsed: now.Sub(start)})
			}
		}
	}
	dec.Close()
	flush()
	x.SetProgress(model.Progress{Read: cr.n.Load(), Total: size, Frames: frames, Done: true, Err: ferr, Elapsed: time.Since(start),
		SnapHidden: dec.SnapHidden()})
	return ferr
}

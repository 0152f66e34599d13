package report

import (
	"time"

	"github.com/iwarpkit/iwarpkit/flows"
)

// MaxBuckets bounds the throughput timeline: when a timestamp would need
// bucket MaxBuckets or later, the bucket width doubles and neighbouring
// buckets are merged in pairs. The first width is [FirstBucketWidth], so the
// final width is the smallest FirstBucketWidth·2^k that fits the capture's
// duration into MaxBuckets buckets.
const MaxBuckets = 512

// FirstBucketWidth is the width of a throughput bucket before any merge.
const FirstBucketWidth = time.Millisecond

// timeline sums FPDU octets per time bucket and direction.
type timeline struct {
	started bool
	t0      time.Time
	width   time.Duration
	b       [][3]uint64 // indexed by flows.Dir: unknown, i2r, r2i
	// A cache of the bucket last added to: cur, and the wall clock
	// readings [lo, hi) of the timestamps that fall in it (lo is minWall
	// for the first bucket, which also takes earlier timestamps). Empty
	// (hi == lo) when there is none.
	cur    int
	lo, hi wall
}

// add counts n octets of direction dir at timestamp ts, whose wall clock
// reading is w (see wallOf for slow).
func (t *timeline) add(ts *time.Time, w wall, slow bool, dir flows.Dir, n uint64) {
	b := t.hit(w, slow)
	if b == nil {
		t.addSlow(*ts, dir, n)
		return
	}
	if int(dir) >= len(b) {
		dir = flows.DirUnknown
	}
	b[dir] += n
}

// hit returns the cached bucket if a timestamp with wall clock reading w
// (see wallOf for slow) falls in it, else nil. It inlines, and takes most
// FPDUs.
func (t *timeline) hit(w wall, slow bool) *[3]uint64 {
	if slow || w.before(t.lo) || !w.before(t.hi) {
		return nil
	}
	return &t.b[t.cur]
}

// addSlow is add by time.Time.Sub, and fills the cache.
func (t *timeline) addSlow(ts time.Time, dir flows.Dir, n uint64) {
	if !t.started {
		t.started, t.t0, t.width = true, ts, FirstBucketWidth
	}
	d := ts.Sub(t.t0)
	if d < 0 { // timestamps that go backwards count in the first bucket
		d = 0
	}
	for d/t.width >= MaxBuckets {
		t.merge()
	}
	i := int(d / t.width)
	for len(t.b) <= i {
		t.b = append(t.b, [3]uint64{})
	}
	if int(dir) >= len(t.b[i]) {
		dir = flows.DirUnknown
	}
	t.b[i][dir] += n
	t.cache(i)
}

// cache notes bucket i in the cache. Sub gives the difference of wall
// clock readings, without overflow, for a timestamp within [lo, hi) and no
// monotonic reading, so add puts exactly those timestamps in bucket i.
func (t *timeline) cache(i int) {
	t.cur, t.lo, t.hi = i, wall{}, wall{}
	if t.width > (1<<62)/MaxBuckets {
		return // (i+1)·width might overflow: no cache
	}
	w0, _ := wallOf(&t.t0)
	lo, ok1 := w0.add(time.Duration(i) * t.width)
	hi, ok2 := w0.add(time.Duration(i+1) * t.width)
	if !ok1 || !ok2 {
		return
	}
	if i == 0 {
		lo = minWall
	}
	t.lo, t.hi = lo, hi
}

// merge doubles the bucket width, adding buckets 2i and 2i+1 into i.
func (t *timeline) merge() {
	t.width *= 2
	t.lo, t.hi = wall{}, wall{}
	n := (len(t.b) + 1) / 2
	for i := range n {
		v := t.b[2*i]
		if 2*i+1 < len(t.b) {
			w := t.b[2*i+1]
			for k := range v {
				v[k] += w[k]
			}
		}
		t.b[i] = v
	}
	t.b = t.b[:n]
}

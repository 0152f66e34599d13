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
}

func (t *timeline) add(ts time.Time, dir flows.Dir, n uint64) {
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
}

// merge doubles the bucket width, adding buckets 2i and 2i+1 into i.
func (t *timeline) merge() {
	t.width *= 2
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

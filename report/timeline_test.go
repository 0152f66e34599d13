package report

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/flows"
)

// TestTimelineMerge feeds octets over captures of different lengths and
// checks that the bucket count stays bounded, the width is the smallest
// FirstBucketWidth·2^k that fits, no octet is lost, and every bucket holds
// exactly what bucketing the samples directly at the final width gives.
func TestTimelineMerge(t *testing.T) {
	for _, span := range []time.Duration{0, 300 * time.Microsecond, 511 * time.Millisecond, 512 * time.Millisecond, 3 * time.Second, 10 * time.Hour, 200 * 365 * 24 * time.Hour} {
		rng := rand.New(rand.NewPCG(uint64(span), 7))
		type sample struct {
			at  time.Duration
			dir flows.Dir
			n   uint64
		}
		samples := []sample{{0, flows.DirI2R, 100}, {span, flows.DirR2I, 7}}
		for range 5000 {
			var at time.Duration
			if span > 0 {
				at = time.Duration(rng.Int64N(int64(span) + 1))
			}
			samples = append(samples, sample{at, flows.Dir(rng.IntN(3)), uint64(rng.IntN(70000))})
		}
		var tl timeline
		var total [3]uint64
		for _, s := range samples {
			tlAdd(&tl, t0.Add(s.at), s.dir, s.n)
			total[s.dir] += s.n
		}
		if len(tl.b) > MaxBuckets || len(tl.b) == 0 {
			t.Fatalf("span %v: %d buckets", span, len(tl.b))
		}
		want := FirstBucketWidth
		for span/want >= MaxBuckets {
			want *= 2
		}
		if tl.width != want {
			t.Errorf("span %v: width %v, want %v", span, tl.width, want)
		}
		direct := make([][3]uint64, len(tl.b))
		for _, s := range samples {
			direct[s.at/tl.width][s.dir] += s.n
		}
		var got [3]uint64
		for i, b := range tl.b {
			if b != direct[i] {
				t.Fatalf("span %v: bucket %d = %v, direct bucketing gives %v", span, i, b, direct[i])
			}
			for d := range b {
				got[d] += b[d]
			}
		}
		if got != total {
			t.Errorf("span %v: octets %v, want %v", span, got, total)
		}
	}
}

// TestTimelineBackwards checks that a timestamp before the first one lands
// in the first bucket instead of being lost or panicking.
func TestTimelineBackwards(t *testing.T) {
	var tl timeline
	tlAdd(&tl, t0, flows.DirI2R, 1)
	tlAdd(&tl, t0.Add(-time.Hour), flows.DirI2R, 2)
	tlAdd(&tl, t0.Add(time.Millisecond), flows.Dir(9), 4)
	if len(tl.b) != 2 || tl.b[0][flows.DirI2R] != 3 || tl.b[1][flows.DirUnknown] != 4 {
		t.Fatalf("buckets %v", tl.b)
	}
}

// tlAdd adds to a timeline as the Collector does.
func tlAdd(tl *timeline, ts time.Time, dir flows.Dir, n uint64) {
	w, slow := wallOf(&ts)
	tl.add(&ts, w, slow, dir, n)
}

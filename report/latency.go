package report

import (
	"math"
	"time"
)

// LatencyRelErr is the relative accuracy of the latency quantiles that
// [Collector.WriteLatency] and the HTML page print: every quantile estimate q̂
// of a true quantile q satisfies |q̂ − q| ≤ LatencyRelErr·q (plus at most
// 0.5 ns from rounding to a whole nanosecond).
//
// The method is a logarithmic bucket histogram (the DDSketch construction):
// with γ = (1+α)/(1−α), α = LatencyRelErr, a latency of v nanoseconds (v ≥ 1)
// falls in bucket i = ⌈log_γ v⌉, which covers (γ^(i−1), γ^i], and every
// value of bucket i is represented by 2γ^i/(γ+1), within a relative α of any
// value in the bucket. Latencies below 1 ns (zero, or negative when the
// capture's timestamps go backwards) are counted as 0. Minimum and maximum are
// exact, and estimates are clamped to them. A histogram spanning 1 ns to
// 292 years has at most ⌈ln(2^63)/ln γ⌉ ≈ 2200 buckets, so memory is bounded
// whatever the number of samples.
const LatencyRelErr = 0.01

var (
	latGamma   = (1 + LatencyRelErr) / (1 - LatencyRelErr)
	latLnGamma = math.Log(latGamma)
)

// latHist is a bounded-memory latency histogram; see LatencyRelErr.
type latHist struct {
	n        uint64
	zero     uint64 // samples below 1 ns
	min, max time.Duration
	minPos   time.Duration // smallest sample of at least 1 ns
	sum      float64       // nanoseconds, for the mean
	off      int           // bucket index of counts[0]
	counts   []uint64
}

// latBucket returns the bucket index of a latency of ns ≥ 1 nanoseconds.
func latBucket(ns int64) int {
	return int(math.Ceil(math.Log(float64(ns)) / latLnGamma))
}

// latValue returns the value that represents bucket i.
func latValue(i int) float64 {
	return 2 * math.Pow(latGamma, float64(i)) / (latGamma + 1)
}

// add records one latency.
func (h *latHist) add(d time.Duration) {
	h.addIn(d, latBucketOf(d))
}

// latBucketOf returns the bucket of latency d, or 0 when d is below 1 ns
// (such latencies count apart from the buckets).
func latBucketOf(d time.Duration) int {
	if d < 1 {
		return 0
	}
	return latBucket(int64(d))
}

// addIn records latency d, whose bucket i = latBucketOf(d) the caller
// computed (once for several histograms).
func (h *latHist) addIn(d time.Duration, i int) {
	if d < 0 {
		d = 0
	}
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if h.n == 0 || d > h.max {
		h.max = d
	}
	h.n++
	h.sum += float64(d)
	if d < 1 {
		h.zero++
		return
	}
	if h.minPos == 0 || d < h.minPos {
		h.minPos = d
	}
	switch {
	case len(h.counts) == 0:
		h.off = i
		h.counts = append(h.counts, 0)
	case i < h.off:
		grow := h.off - i
		c := make([]uint64, grow+len(h.counts), grow+len(h.counts)+16)
		copy(c[grow:], h.counts)
		h.counts, h.off = c, i
	}
	for i-h.off >= len(h.counts) {
		h.counts = append(h.counts, 0)
	}
	h.counts[i-h.off]++
}

// quantileNS returns the estimated q-quantile (0 ≤ q ≤ 1) in nanoseconds,
// by the nearest-rank definition: the value of the ⌈q·n⌉-th smallest sample
// (the first for q = 0).
func (h *latHist) quantileNS(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	k := uint64(math.Ceil(q * float64(h.n)))
	if k < 1 {
		k = 1
	}
	if k > h.n {
		k = h.n
	}
	// The extreme ranks are exact: a p99 of up to 100 samples is the
	// maximum, which the histogram's bucket would put up to 1 % below it.
	if k == h.n {
		return float64(h.max)
	}
	if k == 1 {
		return float64(h.min)
	}
	cum := h.zero
	if cum >= k {
		return h.clamp(0)
	}
	for j, c := range h.counts {
		cum += c
		if cum >= k {
			return h.clamp(latValue(h.off + j))
		}
	}
	return float64(h.max)
}

func (h *latHist) clamp(v float64) float64 {
	return math.Min(math.Max(v, float64(h.min)), float64(h.max))
}

// quantile is quantileNS rounded to a Duration.
func (h *latHist) quantile(q float64) time.Duration {
	return h.toDuration(h.quantileNS(q))
}

// mean returns the arithmetic mean of the samples.
func (h *latHist) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.toDuration(h.sum / float64(h.n))
}

// toDuration rounds v to a Duration within [min, max]; near the top of the
// int64 range float64 cannot hold the bounds exactly, so they are compared
// first.
func (h *latHist) toDuration(v float64) time.Duration {
	switch {
	case v >= float64(h.max):
		return h.max
	case v <= float64(h.min):
		return h.min
	}
	return time.Duration(math.Round(v))
}

// latBar is one bar of the latency histogram chart: samples in [lo, hi].
type latBar struct {
	lo, hi time.Duration
	n      uint64
}

// bars groups the histogram into nb log-spaced bars between the smallest
// positive sample and the maximum (one bar when they coincide); samples
// below 1 ns count in the first bar, which then starts at 0.
func (h *latHist) bars(nb int) []latBar {
	if h.n == 0 || nb < 1 {
		return nil
	}
	lo := float64(h.minPos)
	hi := float64(h.max)
	if hi <= lo || h.minPos == 0 {
		return []latBar{{lo: h.min, hi: h.max, n: h.n}}
	}
	span := math.Log(hi / lo)
	out := make([]latBar, nb)
	for j := range out {
		out[j].lo = time.Duration(math.Round(lo * math.Exp(span*float64(j)/float64(nb))))
		out[j].hi = time.Duration(math.Round(lo * math.Exp(span*float64(j+1)/float64(nb))))
	}
	out[0].lo = h.min
	out[nb-1].hi = h.max
	out[0].n += h.zero
	for j, c := range h.counts {
		if c == 0 {
			continue
		}
		v := h.clamp(latValue(h.off + j))
		b := int(float64(nb) * math.Log(math.Max(v, lo)/lo) / span)
		b = min(max(b, 0), nb-1)
		out[b].n += c
	}
	return out
}

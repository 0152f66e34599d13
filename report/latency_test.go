package report

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// exactQuantile is the nearest-rank q-quantile of sorted samples: the
// ⌈q·n⌉-th smallest (the smallest for q = 0).
func exactQuantile(sorted []time.Duration, q float64) time.Duration {
	k := int(math.Ceil(q * float64(len(sorted))))
	k = min(max(k, 1), len(sorted))
	return sorted[k-1]
}

var testQuantiles = []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1}

// checkHist compares every test quantile of h with the exact one.
func checkHist(t testing.TB, h *latHist, samples []time.Duration) {
	t.Helper()
	sorted := slices.Clone(samples)
	for i, d := range sorted {
		sorted[i] = max(d, 0)
	}
	slices.Sort(sorted)
	if h.n != uint64(len(sorted)) {
		t.Fatalf("n = %d, want %d", h.n, len(sorted))
	}
	if len(sorted) == 0 {
		return
	}
	if h.min != sorted[0] || h.max != sorted[len(sorted)-1] {
		t.Fatalf("min/max %v %v, want %v %v", h.min, h.max, sorted[0], sorted[len(sorted)-1])
	}
	for _, q := range testQuantiles {
		got, want := h.quantileNS(q), float64(exactQuantile(sorted, q))
		if math.Abs(got-want) > LatencyRelErr*want*(1+1e-9) {
			t.Fatalf("q%.3f = %.3f ns, exact %.0f ns: relative error %.5f > %.2f", q, got, want, math.Abs(got-want)/want, LatencyRelErr)
		}
	}
}

func TestLatHistAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gens := map[string]func() time.Duration{
		// log-uniform from 1 ns to 10 s
		"loguniform": func() time.Duration { return time.Duration(math.Exp(rng.Float64() * math.Log(1e10))) },
		// RDMA-like: 100 µs ± a long tail
		"tail": func() time.Duration {
			return 100*time.Microsecond + time.Duration(rng.ExpFloat64()*float64(50*time.Microsecond))
		},
		// small integers where rounding matters
		"tiny": func() time.Duration { return time.Duration(rng.IntN(200)) },
		// zeros and negatives (timestamps going backwards count as 0)
		"nonpositive": func() time.Duration { return time.Duration(rng.IntN(2000) - 1000) },
		"constant":    func() time.Duration { return 123456 * time.Nanosecond },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 3, 10, 101, 10000} {
			var h latHist
			samples := make([]time.Duration, n)
			for i := range samples {
				samples[i] = gen()
				h.add(samples[i])
			}
			t.Run(name, func(t *testing.T) { checkHist(t, &h, samples) })
		}
	}
}

// TestLatHistExtremeRanks: where the nearest rank is the first or the last
// sample, the quantile is that sample exactly, not its bucket's value (two
// Reads of 2,233 and 13,450 µs, as in crc_v2_iwtest_ops, gave a p99 of
// 13,396 µs under a maximum of 13,450).
func TestLatHistExtremeRanks(t *testing.T) {
	for _, samples := range [][]time.Duration{
		{2233 * time.Microsecond, 13450 * time.Microsecond},
		{13450 * time.Microsecond, 2233 * time.Microsecond, 5 * time.Millisecond},
		{1, 999_999_937},
	} {
		var h latHist
		for _, d := range samples {
			h.add(d)
		}
		sorted := slices.Sorted(slices.Values(samples))
		for _, q := range []float64{0.01, 0.5, 0.9, 0.99} {
			want := exactQuantile(sorted, q)
			k := int(math.Ceil(q * float64(len(sorted))))
			if k != 1 && k != len(sorted) {
				continue
			}
			if got := h.quantile(q); got != want {
				t.Errorf("%v: q%.2f = %v, want the sample %v", samples, q, got, want)
			}
		}
	}
}

// TestLatHistBounded checks that the histogram's size depends on the range
// of values, not on their number.
func TestLatHistBounded(t *testing.T) {
	var h latHist
	for i := range 1_000_000 {
		h.add(time.Duration(i%5000) * time.Microsecond)
	}
	h.add(1)
	h.add(math.MaxInt64)
	limit := int(math.Ceil(math.Log(math.MaxInt64)/latLnGamma)) + 1
	if len(h.counts) > limit || limit > 2300 {
		t.Fatalf("%d buckets, bound %d", len(h.counts), limit)
	}
	var sum uint64 = h.zero
	for _, c := range h.counts {
		sum += c
	}
	if sum != h.n {
		t.Fatalf("buckets hold %d samples, n = %d", sum, h.n)
	}
}

func TestLatHistBars(t *testing.T) {
	var h latHist
	if h.bars(10) != nil {
		t.Fatal("bars of an empty histogram")
	}
	for _, d := range []time.Duration{0, 10 * time.Microsecond, 11 * time.Microsecond, 500 * time.Microsecond, time.Millisecond} {
		h.add(d)
	}
	bars := h.bars(8)
	var n uint64
	for i, b := range bars {
		n += b.n
		if i > 0 && b.lo != bars[i-1].hi {
			t.Errorf("bar %d starts at %v, previous ends at %v", i, b.lo, bars[i-1].hi)
		}
	}
	// 0 and 10 µs and 11 µs in the first bar (10 µs to 1 ms in 8 log steps:
	// edges 10, 17.8, 31.6, 56.2, 100, 178, 316, 562, 1000 µs), 500 µs in the
	// seventh, 1 ms in the last.
	if len(bars) != 8 || n != 5 || bars[0].lo != 0 || bars[0].n != 3 || bars[6].n != 1 || bars[7].hi != time.Millisecond || bars[7].n != 1 {
		t.Fatalf("bars %+v", bars)
	}
	var one latHist
	one.add(time.Second)
	one.add(time.Second)
	if b := one.bars(8); len(b) != 1 || b[0].n != 2 {
		t.Fatalf("equal samples: bars %+v", b)
	}
}

// TestLatencyMatchesTshark recomputes each RDMA Read's latency from
// tshark's frame timestamps: the k-th Read Response answers the k-th Read
// Request (responses are returned in request order on a connection; both
// rping captures have one connection and single-segment responses), and the
// latency is the response frame's time minus the request frame's.
func TestLatencyMatchesTshark(t *testing.T) {
	for _, name := range []string{"basic_rping_v2_nocrc", "crc_v2_rping"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var reqs, resps []int64
			for _, r := range tsharkFields(t, name, "iwarp_ddp_rdmap", "frame.number", "frame.time_epoch", "iwarp_rdma.opcode") {
				for _, op := range strings.Split(r[2], ",") {
					switch op {
					case "0x01":
						reqs = append(reqs, testutil.EpochNanos(t, r[1]))
					case "0x02":
						resps = append(resps, testutil.EpochNanos(t, r[1]))
					}
				}
			}
			if len(reqs) != 5 || len(resps) != 5 {
				t.Fatalf("tshark: %d Read Requests, %d Read Responses; MANIFEST says 5 and 5", len(reqs), len(resps))
			}
			var samples []time.Duration
			for i := range reqs {
				samples = append(samples, time.Duration(resps[i]-reqs[i]))
			}
			c, _ := collect(t, name)
			checkHist(t, &c.lat, samples)
			if cs := c.row(0); cs == nil || cs.lat == nil {
				t.Fatal("no per-connection latency")
			} else {
				checkHist(t, cs.lat, samples)
			}
			// The table shows the same numbers, in microseconds.
			var b strings.Builder
			if err := c.WriteLatency(&b); err != nil {
				t.Fatal(err)
			}
			hdr, rows := tableRows(t, b.String())
			if strings.Join(hdr, " ") != "Conn Reads Min P50 P90 P99 Max Mean" || len(rows) != 2 {
				t.Fatalf("table:\n%s", b.String())
			}
			slices.Sort(samples)
			var sum time.Duration
			for _, s := range samples {
				sum += s
			}
			for _, r := range rows {
				if r[1] != "5" || r[2] != micros(samples[0]) || r[6] != micros(samples[4]) || r[7] != micros(sum/5) {
					t.Errorf("row %q: want 5 reads, min %s, max %s, mean %s", r, micros(samples[0]), micros(samples[4]), micros(sum/5))
				}
				for i, q := range []float64{0.5, 0.9, 0.99} {
					want := float64(exactQuantile(samples, q)) / 1e3
					var got float64
					if _, err := fmtSscan(r[3+i], &got); err != nil || math.Abs(got-want) > LatencyRelErr*want+0.0005 {
						t.Errorf("row %q: p%v = %s µs, exact %.3f µs", r, q*100, r[3+i], want)
					}
				}
			}
		})
	}
}

// TestLatencyLeavesOutZeroLengthReads: the zero-length RDMA Read a
// peer-to-peer setup sends as its RTR (RFC 6581) moves no data, and its
// latency is the peer's connection set-up: the latency table leaves it
// out, and says so. The Reads with data are tshark's, paired in order;
// the capture's only zero-length Read is its RTR (MANIFEST).
func TestLatencyLeavesOutZeroLengthReads(t *testing.T) {
	name := "p2p_rtr2_rping"
	var reqs, resps []int64
	var sizes []string
	for _, r := range tsharkFields(t, name, "iwarp_ddp_rdmap", "frame.number", "frame.time_epoch", "iwarp_rdma.opcode", "iwarp_rdma.rdmardsz") {
		switch r[2] {
		case "0x01":
			reqs = append(reqs, testutil.EpochNanos(t, r[1]))
			sizes = append(sizes, r[3])
		case "0x02":
			resps = append(resps, testutil.EpochNanos(t, r[1]))
		}
	}
	if len(reqs) != len(resps) || len(reqs) < 2 || sizes[0] != "0" {
		t.Fatalf("tshark: %d Read Requests (sizes %v), %d Read Responses", len(reqs), sizes, len(resps))
	}
	var samples []time.Duration
	zero := 0
	for i := range reqs {
		if sizes[i] == "0" {
			zero++
			continue
		}
		samples = append(samples, time.Duration(resps[i]-reqs[i]))
	}
	c, _ := collect(t, name)
	checkHist(t, &c.lat, samples)
	var b strings.Builder
	if err := c.WriteLatency(&b); err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(zero) + " zero-length Reads sent as the RTR"; !strings.Contains(b.String(), want) {
		t.Errorf("table does not say %q:\n%s", want, b.String())
	}
}

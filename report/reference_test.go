package report

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// refCollector is the bookkeeping the fast paths of Add replaced, as Add
// did it before them (netip's slow_test pattern): a map lookup per record,
// time.Time's Before, After and Sub, the timeline without its cache, and
// one latBucket per histogram. The differential tests below feed the same
// records to it and to a Collector and compare every piece of state that
// those fast paths produce, time.Time values with == (location and
// monotonic reading included).
type refCollector struct {
	conns       map[int]*refConn
	other       *refConn
	untracked   int
	maxConns    int
	first, last time.Time
	haveTS      bool
	tl          refTimeline
	lat         latHist
}

type refConn struct {
	id                   int
	other                bool
	a, b                 netip.AddrPort
	initiator, responder netip.AddrPort
	initKnown            bool
	first, last          time.Time
	haveTS               bool
	lat                  *latHist
}

func newRef(maxConns int) *refCollector {
	return &refCollector{conns: make(map[int]*refConn), maxConns: maxConns}
}

func (c *refCollector) add(r *flows.Record) {
	if !r.TS.IsZero() {
		if !c.haveTS || r.TS.Before(c.first) {
			c.first = r.TS
		}
		if !c.haveTS || r.TS.After(c.last) {
			c.last = r.TS
		}
		c.haveTS = true
	}
	cs := c.conn(r)
	switch r.Type {
	case flows.RecMPA:
		if r.MPA != nil && r.MPA.Frame.Kind == mpa.KindRequest {
			if !cs.initKnown && !cs.other && r.Src.IsValid() {
				cs.initiator, cs.responder, cs.initKnown = r.Src, r.Dst, true
			}
		}
	case flows.RecFPDU:
		if r.FPDU != nil {
			c.tl.add(r.TS, r.Dir, uint64(max(r.FPDU.Len, 0)))
		}
	case flows.RecMessage:
		if m := r.Message; m != nil && m.RequestFrame != 0 && !m.RTR {
			c.lat.refAdd(m.Latency)
			if cs.lat == nil {
				cs.lat = new(latHist)
			}
			cs.lat.refAdd(m.Latency)
		}
	case flows.RecConn:
		if r.Summary != nil && !cs.other && r.Summary.InitiatorKnown {
			cs.initiator, cs.responder, cs.initKnown = r.Summary.Initiator, r.Summary.Responder, true
		}
		if s := r.Summary; s != nil && !cs.other && !s.InitiatorKnown && !cs.initKnown && s.A.IsValid() {
			cs.a, cs.b = s.A, s.B // the ends in the order of their first packet
		}
	}
}

func (c *refCollector) conn(r *flows.Record) *refConn {
	cs := c.conns[r.Conn]
	if cs == nil {
		if len(c.conns) >= c.maxConns {
			c.untracked++
			if c.other == nil {
				c.other = &refConn{id: -1, other: true}
			}
			cs = c.other
		} else {
			cs = &refConn{id: r.Conn, a: r.Src, b: r.Dst}
			c.conns[r.Conn] = cs
		}
	}
	if !cs.a.IsValid() && !cs.other && r.Src.IsValid() {
		cs.a, cs.b = r.Src, r.Dst
	}
	if !cs.initKnown && !cs.other && r.Src.IsValid() {
		switch r.Dir {
		case flows.DirI2R:
			cs.initiator, cs.responder, cs.initKnown = r.Src, r.Dst, true
		case flows.DirR2I:
			cs.initiator, cs.responder, cs.initKnown = r.Dst, r.Src, true
		}
	}
	if !r.TS.IsZero() {
		if !cs.haveTS || r.TS.Before(cs.first) {
			cs.first = r.TS
		}
		if !cs.haveTS || r.TS.After(cs.last) {
			cs.last = r.TS
		}
		cs.haveTS = true
	}
	return cs
}

// refAdd is latHist.add computing the bucket itself.
func (h *latHist) refAdd(d time.Duration) {
	i := 0
	if d >= 1 {
		i = latBucket(int64(d))
	}
	h.addIn(d, i)
}

// refTimeline is the timeline without the cache.
type refTimeline struct {
	started bool
	t0      time.Time
	width   time.Duration
	b       [][3]uint64
}

func (t *refTimeline) add(ts time.Time, dir flows.Dir, n uint64) {
	if !t.started {
		t.started, t.t0, t.width = true, ts, FirstBucketWidth
	}
	d := ts.Sub(t.t0)
	if d < 0 {
		d = 0
	}
	for d/t.width >= MaxBuckets {
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
	i := int(d / t.width)
	for len(t.b) <= i {
		t.b = append(t.b, [3]uint64{})
	}
	if int(dir) >= len(t.b[i]) {
		dir = flows.DirUnknown
	}
	t.b[i][dir] += n
}

// sameSpan compares a span with the reference's first, last and haveTS.
func sameSpan(t *testing.T, what string, s span, first, last time.Time, have bool) {
	t.Helper()
	if s.haveTS != have || s.first() != first || s.last() != last {
		t.Fatalf("%s: span %v %v..%v, reference %v %v..%v", what, s.haveTS, s.first(), s.last(), have, first, last)
	}
}

// compareRef checks c against the reference fed the same records.
func compareRef(t *testing.T, c *Collector, ref *refCollector) {
	t.Helper()
	sameSpan(t, "all records", c.total(), ref.first, ref.last, ref.haveTS)
	if c.rowCount() != len(ref.conns) || c.untracked != ref.untracked || (c.other == nil) != (ref.other == nil) {
		t.Fatalf("%d connections, %d untracked records, other %v; reference %d, %d, %v",
			c.rowCount(), c.untracked, c.other != nil, len(ref.conns), ref.untracked, ref.other != nil)
	}
	check := func(cs *connStats, rc *refConn) {
		t.Helper()
		if cs == nil {
			t.Fatalf("connection %d missing", rc.id)
		}
		if cs.id != rc.id || cs.other != rc.other || cs.a != rc.a || cs.b != rc.b ||
			cs.initKnown != rc.initKnown || cs.initiator != rc.initiator || cs.responder != rc.responder {
			t.Fatalf("connection %d: %v %v>%v init %v %v>%v; reference %v %v>%v init %v %v>%v", rc.id,
				cs.other, cs.a, cs.b, cs.initKnown, cs.initiator, cs.responder,
				rc.other, rc.a, rc.b, rc.initKnown, rc.initiator, rc.responder)
		}
		sameSpan(t, "connection "+itoa(rc.id), cs.span, rc.first, rc.last, rc.haveTS)
		if !reflect.DeepEqual(cs.lat, rc.lat) {
			t.Fatalf("connection %d: latency %+v, reference %+v", rc.id, cs.lat, rc.lat)
		}
	}
	for id, rc := range ref.conns {
		check(c.row(id), rc)
	}
	if ref.other != nil {
		check(c.other, ref.other)
	}
	if !reflect.DeepEqual(c.lat, ref.lat) {
		t.Fatalf("latency %+v, reference %+v", c.lat, ref.lat)
	}
	tl, rt := &c.tl, &ref.tl
	if tl.started != rt.started || tl.t0 != rt.t0 || tl.width != rt.width || len(tl.b) != len(rt.b) ||
		(len(tl.b) > 0 && !reflect.DeepEqual(tl.b, rt.b)) {
		t.Fatalf("timeline %v %v %v %v, reference %v %v %v %v", tl.started, tl.t0, tl.width, tl.b, rt.started, rt.t0, rt.width, rt.b)
	}
}

// monoBase carries a monotonic clock reading.
var monoBase = time.Now()

// oddTimes are timestamps at the edges: the range of Unix seconds, the
// zero time's neighbours, and times far enough apart that Sub saturates.
var oddTimes = []time.Time{
	time.Unix(1<<63-1, 999_999_999).UTC(),
	time.Unix(1<<63-1-unixToInternal, 999_999_999).UTC(), // the largest internal seconds
	time.Unix(1<<63-1-unixToInternal-5, 0).UTC(),
	internalTime(-1<<63, 0), // the smallest internal seconds
	time.Unix(-1<<63, 0).UTC(),
	time.Unix(1<<62, 5).UTC(),
	time.Unix(-1<<62, 5).UTC(),
	time.Unix(-unixToInternal, 1).UTC(), // one nanosecond after the zero time
	time.Unix(-unixToInternal-1, 999_999_999).UTC(),
	time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Nanosecond),
	t0.Add(1<<63 - 1),
	t0.Add(-1 << 63),
	t0.Add(9e18),
	t0.Add(-9e18),
	t0.Add(292 * 365 * 24 * time.Hour),
	time.Unix(t0.Unix()+9e9, 0).UTC(),
	time.Unix(t0.Unix()-9e9, 0).UTC(),
	time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
	t0.In(time.FixedZone("X", 3600)),
}

// internalTime returns the UTC time with internal seconds sec (wrapping
// arithmetic reaches all of them).
func internalTime(sec int64, nsec int64) time.Time {
	u := sec
	u -= unixToInternal
	return time.Unix(u, nsec).UTC()
}

// retime gives the records timestamps of the kind k picks (fast UTC, in
// another location, with a monotonic reading, zero, odd) and, by k's high
// bits, other connection ids (negative, beyond byID).
func retime(recs []*flows.Record, kinds []byte) {
	for i, r := range recs {
		if i >= len(kinds) {
			return
		}
		k := kinds[i]
		switch k & 7 {
		case 4:
			r.TS = r.TS.Local()
		case 5:
			r.TS = monoBase.Add(r.TS.Sub(t0))
		case 6:
			r.TS = time.Time{}
		case 7:
			r.TS = oddTimes[int(k>>3)%len(oddTimes)]
		}
		switch k >> 5 {
		case 5:
			r.Conn = -1 - r.Conn
		case 6:
			r.Conn += maxIndexed - 2
		case 7:
			r.Conn += 1 << 40
		}
	}
}

// diffRecords checks a Collector against the reference over recs, after
// every record when each is set.
func diffRecords(t *testing.T, recs []*flows.Record, maxConns int, each bool) {
	t.Helper()
	c := NewCollector()
	c.maxConns = maxConns
	ref := newRef(maxConns)
	for _, r := range recs {
		c.Add(r)
		ref.add(r)
		if each {
			compareRef(t, c, ref)
		}
	}
	compareRef(t, c, ref)
}

// TestAddMatchesReference runs the differential over the real captures
// (their own timestamps, then in another location and with monotonic
// readings) and over random streams of every timestamp kind.
func TestAddMatchesReference(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "siw", "*.pcap"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".pcap")
		recs := testutil.Decode(t, p, flows.Options{})
		diffRecords(t, recs, MaxConns, false)
		diffRecords(t, recs, 1, false)
		for _, kind := range []byte{4, 5} {
			kinds := make([]byte, len(recs))
			for i := range kinds {
				if i%3 == 1 {
					kinds[i] = kind
				}
			}
			cp := make([]*flows.Record, len(recs))
			for i, r := range recs {
				r2 := *r
				cp[i] = &r2
			}
			retime(cp, kinds)
			t.Run(name, func(t *testing.T) { diffRecords(t, cp, MaxConns, false) })
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		data := make([]byte, 8*(1+rng.IntN(300)))
		kinds := make([]byte, len(data)/8)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		for i := range kinds {
			kinds[i] = byte(rng.Uint32())
			if rng.IntN(2) == 0 {
				kinds[i] &^= 7 // half fast
			}
		}
		recs := fuzzRecords(data)
		retime(recs, kinds)
		diffRecords(t, recs, 3, true)
	}
}

// TestTimelineCacheLong feeds a long stream with steps of every size so
// that the cached bucket is left in each direction and across merges.
func TestTimelineCacheLong(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var recs []*flows.Record
	at := time.Duration(0)
	for i := range 100000 {
		switch rng.IntN(100) {
		case 0:
			at -= time.Duration(rng.Int64N(int64(time.Second)))
		case 1:
			at += time.Duration(rng.Int64N(int64(time.Hour)))
		default: // whole microseconds, as pcap has, hit the bucket edges
			at += time.Duration(rng.Int64N(50)) * time.Microsecond
		}
		recs = append(recs, fpduRec(i%7, uint64(i+1), at, flows.Dir(rng.IntN(4)), 0, 100))
	}
	diffRecords(t, recs, MaxConns, false)
}

// TestTimelineExtremes starts the timeline at each odd time and then adds
// timestamps near it, near the bucket edges and at the other odd times.
func TestTimelineExtremes(t *testing.T) {
	for _, a := range append(oddTimes, t0) {
		for _, b := range append(oddTimes, t0, time.Time{}) {
			var recs []*flows.Record
			for i, ts := range []time.Time{a, b, a.Add(1), a.Add(FirstBucketWidth - 1), a.Add(FirstBucketWidth), b,
				a.Add(-1), a.Add(1 << 62), a.Add(MaxBuckets * FirstBucketWidth), a.Add(2), b.Add(-1), b.Add(1), a.Add(1<<63 - 1)} {
				r := fpduRec(0, uint64(i+1), 0, flows.DirI2R, 0, i)
				r.TS = ts
				recs = append(recs, r)
			}
			diffRecords(t, recs, MaxConns, true)
		}
	}
}

// FuzzAddReference is the differential for arbitrary record streams
// (fuzzRecords) and timestamp kinds (retime).
func FuzzAddReference(f *testing.F) {
	f.Add([]byte{}, []byte{})
	f.Add([]byte("\x02\x00\x01\x00\x00\x10\x00\x01\x02\x01\x02\x00\x00\x40\x80\x00\x02\x00\x01\x00\x00\x10\x7f\x00"), []byte{0, 4, 5})
	seed := make([]byte, 8*64)
	for i := range 64 {
		binary.BigEndian.PutUint64(seed[8*i:], uint64(i)*0x0203_0401_0100_0102+0x0200_0000_0000_0000)
	}
	kinds := make([]byte, 64)
	for i := range kinds {
		kinds[i] = byte(i*37) | 7
	}
	f.Add(seed, kinds)
	f.Fuzz(func(t *testing.T, data, kinds []byte) {
		if len(data) > 1<<13 {
			return
		}
		recs := fuzzRecords(data)
		retime(recs, kinds)
		diffRecords(t, recs, 3, true)
	})
}

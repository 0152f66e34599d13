package report

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestWallOf checks wallOf's slow flag on each kind of time, that a fast
// time is rebuilt exactly from its wall clock reading, and that before
// orders wall clock readings as time.Time.Before orders the times.
func TestWallOf(t *testing.T) {
	times := append([]time.Time{
		{}, t0, t0.Add(time.Nanosecond), t0.Add(-time.Nanosecond), t0.Add(time.Second - 1),
		time.Unix(0, 0).UTC(), time.Unix(1, 999_999_999).UTC(),
	}, oddTimes...)
	for _, tm := range times {
		w, slow := wallOf(&tm)
		if want := tm.Location() != time.UTC; slow != want {
			t.Errorf("%v: slow %v, want %v", tm, slow, want)
		}
		if !slow && w.time() != tm {
			t.Errorf("%v: rebuilt as %v", tm, w.time())
		}
		for _, u := range times {
			v, _ := wallOf(&u)
			if w.before(v) != tm.Before(u) {
				t.Errorf("%v before %v: %v, time says %v", tm, u, w.before(v), tm.Before(u))
			}
		}
	}
	now := time.Now()
	for _, tm := range []time.Time{now, now.Add(time.Hour), now.Local(), t0.Local()} {
		if _, slow := wallOf(&tm); !slow {
			t.Errorf("%v (with a monotonic reading or not UTC) is not slow", tm)
		}
	}
	for _, tm := range []time.Time{now.UTC(), now.Round(0).UTC(), now.In(time.UTC)} {
		w, slow := wallOf(&tm)
		if slow || w.time() != tm {
			t.Errorf("%v: slow %v, rebuilt as %v", tm, slow, w.time())
		}
	}
	var zero wall
	if zero.time() != (time.Time{}) {
		t.Errorf("the zero wall gives %v", zero.time())
	}
}

// TestWallAdd compares wall.add with time.Time.Add.
func TestWallAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		tm := time.Unix(rng.Int64N(1<<40)-1<<39, rng.Int64N(1e9)).UTC()
		d := time.Duration(rng.Int64N(1 << 62))
		if rng.IntN(2) == 0 {
			d = time.Duration(rng.Int64N(int64(3 * time.Second)))
		}
		w, _ := wallOf(&tm)
		got, ok := w.add(d)
		if want := tm.Add(d); !ok || got.time() != want {
			t.Fatalf("%v + %v = %v %v, want %v", tm, d, got.time(), ok, want)
		}
	}
	top := internalTime(1<<63-1, 0)
	w, _ := wallOf(&top)
	if _, ok := w.add(time.Second); ok {
		t.Errorf("no overflow reported past the largest seconds")
	}
}

package format

import (
	"errors"
	"testing"
	"time"
)

// TestTimeFormats: the -t names, and the seconds of the relative formats,
// negative ones included (a conn record's line can come after a later
// frame's).
func TestTimeFormats(t *testing.T) {
	for _, n := range []string{"u", "ud", "a", "ad", "e", "r", "dd"} {
		f, err := ParseTimeFormat(n)
		if err != nil || f.String() != n {
			t.Errorf("ParseTimeFormat(%q) = %v, %v", n, f, err)
		}
	}
	if _, err := ParseTimeFormat("ttt"); !errors.Is(err, ErrTimeFormat) {
		t.Errorf("ParseTimeFormat(ttt): %v", err)
	}
	ref := time.Unix(1795313467, 706735000)
	for _, c := range []struct {
		f    TimeFormat
		t    time.Time
		want string
	}{
		{TimeRelative, ref.Add(3057 * time.Microsecond), "0.003057"},
		{TimeRelative, ref.Add(-105 * time.Microsecond), "-0.000105"},
		{TimeRelative, ref.Add(75*time.Second + 999), "75.000000"},
		{TimeDelta, ref, "0.000000"},
		{TimeEpoch, ref, "1795313467.706735"},
		{TimeUTCDate, ref, "2026-11-22 02:11:07.706735"},
		{TimeUTC, ref.In(time.FixedZone("x", 3600)), "02:11:07.706735"},
	} {
		o := TextOptions{Time: c.f, Ref: ref, Prev: ref}
		if got := string(o.AppendTime(nil, c.t)); got != c.want {
			t.Errorf("-t %s of %v: %q, want %q", c.f, c.t, got, c.want)
		}
	}
	// Without a reference (nothing read yet), a relative time is 0.
	o := TextOptions{Time: TimeRelative}
	if got := string(o.AppendTime(nil, ref)); got != "0.000000" {
		t.Errorf("-t r without a reference: %q", got)
	}
}

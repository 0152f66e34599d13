package filter

import (
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/flows"
)

// TestTimes: the time fields compare a record's time exactly, in
// nanoseconds, with seconds (frame.time_epoch, frame.time_relative from the
// first packet) or a date (frame.time); their canonical form compiles to
// the same filter; frame.time_relative without a first packet's time
// matches nothing.
func TestTimes(t *testing.T) {
	ref := time.Date(2026, 11, 22, 2, 13, 22, 0, time.UTC)
	at := func(d time.Duration) rec {
		r := &flows.Record{Type: flows.RecFinding, TS: ref.Add(d), Finding: &dissect.Finding{Code: "x"}}
		return rec{r: r}
	}
	for _, c := range []struct {
		expr, canon string
		d           time.Duration
		want        bool
	}{
		{"frame.time_relative >= 10", "frame.time_relative >= 10.000000000", 10 * time.Second, true},
		{"frame.time_relative > 10", "frame.time_relative > 10.000000000", 10 * time.Second, false},
		{"frame.time_relative > 10", "", 10*time.Second + 1, true},
		{"frame.time_relative == 0.000000001", "frame.time_relative == 0.000000001", 1, true},
		{"frame.time_relative < .5", "frame.time_relative < 0.500000000", 499 * time.Millisecond, true},
		{"frame.time_relative in {1..2.5}", "frame.time_relative in {1.000000000..2.500000000}", 2500 * time.Millisecond, true},
		{"frame.time_relative in {1..2.5}", "", 2500*time.Millisecond + 1, false},
		{"frame.time_relative > -1", "frame.time_relative > -1.000000000", 0, true},
		{"frame.time_epoch == 1795313602.5", "frame.time_epoch == 1795313602.500000000", 500 * time.Millisecond, true},
		{`frame.time == "2026-11-22 02:13:22.25Z"`, `frame.time == "2026-11-22T02:13:22.25Z"`, 250 * time.Millisecond, true},
		{`frame.time >= "Nov 22, 2026 02:13:23 UTC"`, `frame.time >= "2026-11-22T02:13:23Z"`, time.Second - 1, false},
		{`frame.time >= "2026-11-22T03:13:23+01:00"`, `frame.time >= "2026-11-22T02:13:23Z"`, time.Second, true},
		{"frame.time_relative", "frame.time_relative", 0, true},
		{"frame.time_relative == 1.50000000000", "frame.time_relative == 1.500000000", 1500 * time.Millisecond, true},
		{"frame.time_relative < 1.5s", "frame.time_relative < 1.500000000", 1499 * time.Millisecond, true},
		{`frame.time >= "2026-11-22 03:13:23.5+01:00"`, `frame.time >= "2026-11-22T02:13:23.5Z"`, 1500 * time.Millisecond, true},
	} {
		f := mustCompile(t, c.expr)
		if c.canon != "" && f.String() != c.canon {
			t.Errorf("%q: canonical %q, want %q", c.expr, f.String(), c.canon)
		}
		if g := mustCompile(t, f.String()); g.String() != f.String() {
			t.Errorf("%q: canonical form %q compiles to %q", c.expr, f.String(), g.String())
		}
		r := at(c.d)
		if got := f.WithRef(ref).MatchRecord(r.r); got != c.want {
			t.Errorf("%q at +%v: %v, want %v", c.expr, c.d, got, c.want)
		}
		if strings.Contains(c.expr, "relative") && f.MatchRecord(r.r) {
			t.Errorf("%q without a first packet's time matched", c.expr)
		}
		if !f.Reads(strings.Fields(c.expr)[0]) {
			t.Errorf("%q: Reads(%q) is false", c.expr, strings.Fields(c.expr)[0])
		}
	}
	for _, c := range []struct{ expr, msg string }{
		{`frame.time_relative == "1"`, "is a string"},
		{`frame.time_relative == 1.1234567891`, "more than nine decimals"},
		{`frame.time_relative == 1.5x`, "not a decimal number"},
		{`frame.time_relative == 0x10`, "not a decimal number"},
		{`frame.time_relative == 1.`, "not a number"},
		{`frame.time_epoch == 99999999999`, "out of range"},
		{`frame.time_relative contains 1`, "contains applies"},
		{`frame.time matches "x"`, "matches applies"},
		{`frame.time == 5`, "double quotes"},
		{`frame.time == "yesterday"`, "bad date"},
	} {
		_, err := Compile(c.expr)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Compile(%q) = %v, want an error saying %q", c.expr, err, c.msg)
		}
	}
	if _, err := NewColumns([]string{"frame.time"}, DefaultColumnOptions()); err == nil {
		t.Errorf("-e frame.time: no error")
	}
}

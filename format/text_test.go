package format

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// appendSafeSpec is what appendSafe must append, rune by rune: a
// backslash doubled; the octets of a control character, of an invalid
// UTF-8 octet, of a C1 control, of a line or paragraph separator and of
// the right-to-left override and mark as \xHH each; anything else as it is.
func appendSafeSpec(dst []byte, s string) []byte {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		raw := s[:n]
		s = s[n:]
		switch {
		case r == '\\':
			dst = append(dst, `\\`...)
		case r < 0x20 || r == 0x7f || (r == utf8.RuneError && n == 1) || (r >= 0x80 && r < 0xa0) ||
			r == '\u2028' || r == '\u2029' || r == '\u202e' || r == '\u200f':
			for i := 0; i < len(raw); i++ {
				dst = fmt.Appendf(dst, `\x%02x`, raw[i])
			}
		default:
			dst = append(dst, raw...)
		}
	}
	return dst
}

// TestAppendSafe: control octets, backslashes, invalid UTF-8 and the
// Unicode controls are escaped wherever they are, printable text is not.
func TestAppendSafe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"rdmap.opcode", "rdmap.opcode"},
		{`a\b`, `a\\b`},
		{"\\", `\\`},
		{"tab\there", `tab\x09here`},
		{"\x00\x1f\x7f~ ", `\x00\x1f\x7f~ `},
		{"caf\u00e9", "caf\u00e9"},
		{"bad\xff\xfeend", `bad\xff\xfeend`},
		{"c1\u0085x", `c1\xc2\x85x`},
		{"bidi\u202eevil\u2028", `bidi\xe2\x80\xaeevil\xe2\x80\xa8`},
		{"ok then \x1b[31m", `ok then \x1b[31m`},
	} {
		if got := string(appendSafe([]byte("> "), c.in)); got != "> "+c.want {
			t.Errorf("appendSafe(%q) = %q, want %q", c.in, got, "> "+c.want)
		}
		if got, ref := string(appendSafe(nil, c.in)), string(appendSafeSpec(nil, c.in)); got != ref {
			t.Errorf("appendSafe(%q) = %q, the spec gives %q", c.in, got, ref)
		}
	}
}

// FuzzAppendSafe: appendSafe appends what appendSafeSpec does.
func FuzzAppendSafe(f *testing.F) {
	for _, s := range []string{"", "abc", "a\\b", "\x00", "caf\u00e9", "\xff", "\u202e", "abc\x7fdef"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, ref := string(appendSafe(nil, s)), string(appendSafeSpec(nil, s)); got != ref {
			t.Fatalf("appendSafe(%q) = %q, the spec gives %q", s, got, ref)
		}
	})
}

// BenchmarkAppendText: the text line of an FPDU record, and with its field
// tree (-v), as iwarpdump writes them.
func BenchmarkAppendText(b *testing.B) {
	var r *flows.Record
	for _, x := range testutil.Decode(b, filepath.Join("..", "testdata", "siw", "basic_ib_read_bw_4096_v2_nocrc.pcap"), flows.Options{}) {
		if x.Type == flows.RecFPDU && x.FPDU.SegOK {
			r = x
			break
		}
	}
	for _, c := range []struct {
		name string
		o    TextOptions
	}{{"line", TextOptions{}}, {"tree", TextOptions{Verbose: true}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf = AppendText(buf[:0], r, c.o)
			}
		})
	}
}

// TestTimestamp: Timestamp is time.Format's RFC 3339 with nine fractional
// digits in UTC, for times in any zone, across the years and at the edges
// of the fast path.
func TestTimestamp(t *testing.T) {
	east := time.FixedZone("x", 5*3600+30*60)
	for _, tm := range []time.Time{
		{}, time.Unix(0, 0), time.Unix(1704067200, 123456789), time.Unix(1704067199, 999999999).In(east),
		time.Date(2024, 2, 29, 23, 59, 59, 1, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 5, east),
		time.Unix(-62135596801, 0), time.Unix(253402300800, 0), time.Unix(1<<40, 7),
	} {
		if got, want := Timestamp(tm), tm.UTC().Format(tsLayout); got != want {
			t.Errorf("Timestamp(%v) = %q, want %q", tm, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = appendTimestamp(make([]byte, 0, 64), time.Unix(1704067200, 5)) }); n != 0 {
		t.Errorf("appendTimestamp allocates %v times", n)
	}
}

// FuzzTimestamp: Timestamp is Format's, for any instant.
func FuzzTimestamp(f *testing.F) {
	f.Add(int64(0), int64(0))
	f.Add(int64(1704067200), int64(123456789))
	f.Add(int64(-62135596800), int64(-1))
	f.Add(int64(253402300799), int64(999999999))
	f.Fuzz(func(t *testing.T, sec, nsec int64) {
		tm := time.Unix(sec, nsec)
		if got, want := Timestamp(tm), tm.UTC().Format(tsLayout); got != want {
			t.Fatalf("Timestamp(%d, %d) = %q, want %q", sec, nsec, got, want)
		}
	})
}

// TestAppendTextAllocs: the line of an FPDU or message record, the bulk of
// a capture's text output, is written without an allocation, and so is
// its field tree under -v (a hex field's and the clock's strings had been
// two per FPDU: text output of the issue 6 workload 0.364 -> 0.286 s; the
// tree's list of fields, its frames, markers and endpoints' text and its
// nested names, -v 1.57 -> 1.11 s), with markers and Read Requests among
// them; and the clock is time.Format's.
func TestAppendTextAllocs(t *testing.T) {
	lines, markers, reads := 0, 0, 0
	buf := make([]byte, 0, 64<<10)
	var tree treeScratch
	for _, f := range []string{"../testdata/siw/crc_v2_rping.pcap", "../testdata/synth/marker-pad-crc.pcap"} {
		for _, r := range testutil.Decode(t, f, flows.Options{}) {
			if (r.Type != flows.RecFPDU || len(r.FPDU.Findings) > 0) && r.Type != flows.RecMessage {
				continue
			}
			lines++
			if r.Type == flows.RecFPDU {
				if len(r.FPDU.Markers) > 0 {
					markers++
				}
				if r.FPDU.SegOK && r.FPDU.Seg.Opcode == rdmap.OpReadRequest {
					reads++
				}
			}
			if n := testing.AllocsPerRun(20, func() { buf = AppendText(buf[:0], r, TextOptions{}) }); n != 0 {
				t.Fatalf("%s frame %d (%v): %v allocations for %q", f, r.Frame, r.Type, n, buf)
			}
			if n := testing.AllocsPerRun(20, func() { buf = tree.appendVerbose(buf[:0], r, true) }); n != 0 {
				t.Fatalf("%s frame %d (%v): %v allocations for the tree %q", f, r.Frame, r.Type, n, buf)
			}
			// The race detector's sync.Pool drops a quarter of what it is
			// given back, on purpose: -v's pool then allocates.
			if n := testing.AllocsPerRun(20, func() { buf = AppendText(buf[:0], r, TextOptions{Verbose: true}) }); n != 0 && !raceEnabled {
				t.Fatalf("%s frame %d (%v), -v: %v allocations for %q", f, r.Frame, r.Type, n, buf)
			}
		}
	}
	if lines < 50 || markers == 0 || reads == 0 {
		t.Fatalf("only %d FPDU and message records, %d with markers, %d Read Requests", lines, markers, reads)
	}
	// The room lent to a line's tree is free again after it.
	if a := &tree.list.a; len(tree.kvs) != 0 || len(a.vals) != 0 || len(a.kvs) != 0 {
		t.Errorf("the tree's scratch keeps %d fields, %d values and %d nested fields", len(tree.kvs), len(a.vals), len(a.kvs))
	}
	for _, tm := range []time.Time{time.Unix(0, 0), time.Unix(1704067199, 999999999), time.Unix(1704067200, 1000),
		time.Unix(1704067200, 999), time.Unix(86399, 123456789).In(time.FixedZone("x", -3600))} {
		if got, want := string(appendClock(nil, tm.UTC())), tm.UTC().Format("15:04:05.000000"); got != want {
			t.Errorf("appendClock(%v) = %q, want %q", tm, got, want)
		}
	}
}

// TestVerboseTree: -v's field tree, listed into reused room with the
// timestamp left out and the hex names remembered from record to record,
// is the tree a fresh scratch makes of the record's Fields, for every
// record of every bundled capture.
func TestVerboseTree(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	if len(files) < 20 {
		t.Fatalf("only %d bundled captures", len(files))
	}
	n := 0
	reused := new(treeScratch)
	for _, f := range files {
		for _, r := range testutil.Decode(t, f, flows.Options{}) {
			got := reused.appendVerbose(nil, r, true)
			fresh := &treeScratch{lines: true}
			want := fresh.appendTree(nil, Fields(r), 1, "")
			if string(got) != string(want) {
				t.Fatalf("%s frame %d:\n got %s\nwant %s", f, r.Frame, got, want)
			}
			n++
		}
	}
	t.Logf("%d records", n)
}

// TestTerminateExplainedOnce: the text of a Terminate is printed on its
// line and not again in the rdmap.terminate finding under it, while the
// finding's message (JSON Lines, tables, reports) keeps it; no finding
// message repeats its code's layer ("rdmap: ...").
func TestTerminateExplainedOnce(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	terms := 0
	for _, f := range files {
		for _, r := range testutil.Decode(t, f, flows.Options{}) {
			var fs []dissect.Finding
			switch r.Type {
			case flows.RecFPDU:
				fs = r.FPDU.Findings
			case flows.RecMPA:
				fs = r.MPA.Findings
			case flows.RecFinding:
				fs = []dissect.Finding{*r.Finding}
			}
			for _, fd := range fs {
				if layer, _, _ := strings.Cut(fd.Code, "."); strings.HasPrefix(fd.Msg, layer+": ") {
					t.Errorf("%s frame %d: %s message %q repeats the layer", filepath.Base(f), r.Frame, fd.Code, fd.Msg)
				}
			}
			if r.Type != flows.RecFPDU || !r.FPDU.SegOK || r.FPDU.Seg.Opcode != rdmap.OpTerminate {
				continue
			}
			terms++
			text := string(AppendText(nil, r, TextOptions{}))
			explain := string(appendSafe(nil, r.FPDU.Seg.Term.Explain()))
			if n := strings.Count(text, explain); n != 1 {
				t.Errorf("%s frame %d: the Terminate's text is printed %d times:\n%s", filepath.Base(f), r.Frame, n, text)
			}
			for _, fd := range r.FPDU.Findings {
				if fd.Code == rdmap.CodeTerminate && !strings.Contains(fd.Msg, r.FPDU.Seg.Term.Explain()) {
					t.Errorf("%s frame %d: the finding %q does not explain the Terminate", filepath.Base(f), r.Frame, fd.Msg)
				}
			}
		}
	}
	if terms < 7 {
		t.Errorf("only %d Terminates", terms)
	}
}

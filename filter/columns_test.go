package filter

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/format"
)

// TestColumnValues: how a value prints, case by case, as tshark prints
// the value of its type (hex padded to the field's width, booleans 1/0,
// octets as plain hex, seconds with nine decimals).
func TestColumnValues(t *testing.T) {
	o := DefaultColumnOptions()
	cases := []struct {
		name string
		f    field
		v    format.Value
		want string
	}{
		{"decimal", field{typ: fNum}, format.Uint(4096), "4096"},
		{"negative", field{typ: fNum}, format.Int(-5), "-5"},
		{"stag", field{typ: fNum, hex: true, bits: 32}, format.Uint(0x7bf1600), "0x07bf1600"},
		{"to", field{typ: fNum, hex: true, bits: 64}, format.Uint(0x7fe0b8347000), "0x00007fe0b8347000"},
		{"qpn", field{typ: fNum, hex: true, bits: 24}, format.Uint(0x11), "0x000011"},
		{"wider than the field", field{typ: fNum, hex: true, bits: 8}, format.Uint(0x1234), "0x1234"},
		{"hex without width", field{typ: fNum, hex: true}, format.Uint(0), "0x0"},
		{"true", field{typ: fBool}, format.Bool(true), "1"},
		{"false", field{typ: fBool}, format.Bool(false), "0"},
		{"octets", field{typ: fBytes}, format.Bytes([]byte{0, 0xab, 0x10}), "00ab10"},
		{"no octets", field{typ: fBytes}, format.Bytes(nil), ""},
		{"text", field{typ: fString}, format.Str("RDMA Write"), "RDMA Write"},
		{"escapes", field{typ: fString}, format.Str("a\tb\\c\nd\re\x01\x7f§\xff"), `a\tb\\c\nd\re\x01\x7f§\xff`},
	}
	for _, c := range cases {
		cl := cell{o: &o}
		var s scanState
		cl.value(&c.f, &c.v, &s)
		if got := string(cl.dst); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// A quote inside a quoted value is doubled (CSV).
	q := o
	q.Quote = '"'
	cl := cell{o: &q}
	if got := string(cl.escape(nil, `say "hi"`)); got != `say ""hi""` {
		t.Errorf("quoted: %q", got)
	}
}

// TestColumnTimes: seconds with nine decimals, negative relative times
// (a merged file's packet before the reference), times before the epoch.
func TestColumnTimes(t *testing.T) {
	o := DefaultColumnOptions()
	ref := time.Unix(1000, 500)
	cases := []struct {
		k    clock
		ts   time.Time
		tm   ColumnTimes
		want string
	}{
		{cEpoch, time.Unix(1795313602, 163398000), ColumnTimes{}, "1795313602.163398000"},
		{cEpoch, time.Unix(-2, 250000000), ColumnTimes{}, "-1.750000000"},
		{cEpoch, time.Unix(0, 0), ColumnTimes{}, "0.000000000"},
		{cRelative, time.Unix(1001, 400), ColumnTimes{Ref: ref}, "0.999999900"},
		{cRelative, time.Unix(999, 500), ColumnTimes{Ref: ref}, "-1.000000000"},
		{cRelative, time.Unix(1000, 499), ColumnTimes{Ref: ref}, "-0.000000001"},
		{cDelta, time.Unix(1000, 700), ColumnTimes{Prev: ref}, "0.000000200"},
		{cDelta, time.Unix(1000, 700), ColumnTimes{}, "0.000000000"}, // the first line
	}
	for _, c := range cases {
		cl := cell{o: &o}
		cl.time(c.k, c.ts, c.tm)
		if got := string(cl.dst); got != c.want {
			t.Errorf("clock %d at %v: %q, want %q", c.k, c.ts, got, c.want)
		}
	}
}

// TestColumnsAllocs: the line of an FPDU or a message (the records of the
// hot path) is written without allocating, whatever the fields
// (endpoints, lists, hex widths, times). ts, the RFC 3339 text, costs one
// allocation; frame.time_epoch none.
func TestColumnsAllocs(t *testing.T) {
	c, err := NewColumns([]string{"frame", "frames", "rdmap.opcode", "iwarp_ddp.stag", "ddp.to", "ip.src", "tcp.dstport",
		"findings.code", "rdmap.term.text", "frame.time_epoch", "frame.time_relative", "mpa.markers.fpduptr"}, DefaultColumnOptions())
	if err != nil {
		t.Fatal(err)
	}
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops buffers on purpose")
	}
	buf := make([]byte, 0, 4096)
	n := 0
	for _, file := range []string{"siw/term_badwrite.pcap", "synth/marker-pad-crc.pcap", "siw/siw6_rping_v2_crc.pcap"} {
		for _, r := range decodeFile(t, file) {
			if r.r.FPDU == nil && r.r.Message == nil || r.r.FPDU != nil && len(r.r.FPDU.Findings) > 0 {
				continue // as TestMatchRecordAllocs: findings are formatted when seen
			}
			n++
			if a := testing.AllocsPerRun(20, func() { buf = c.Append(buf[:0], r.r, ColumnTimes{}) }); a != 0 {
				t.Fatalf("%s frame %d: %v allocations per line", file, r.r.Frame, a)
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d records", n)
	}
}

// FuzzColumns: any field names and options give columns or an error,
// never a panic; every line of every record of the bundled captures has
// one column per field (tabs and line ends in values are escaped).
func FuzzColumns(f *testing.F) {
	for _, s := range []string{"frame rdmap.opcode", "iwarp_ddp.stag ip.src tcp.port", "findings.code frames", "rdmap.term.text msg",
		"interop.row interop.expected.v", "mpa.markers.ok pd", "frame.time_relative rdmap.term", "mpa", "", "a.b.c", "findings.x",
		"enhanced.rtr ipv6.addr sctp.port", "name src dst seq len"} {
		f.Add(s, "occurrence=f")
		f.Add(s, "quote=d")
	}
	f.Fuzz(func(t *testing.T, names, opt string) {
		o := DefaultColumnOptions()
		if o.Set(opt) != nil || o.Separator != '\t' {
			o = DefaultColumnOptions()
		}
		fields := strings.Fields(names)
		if len(fields) > 32 {
			return
		}
		c, err := NewColumns(fields, o)
		if err != nil {
			if c != nil {
				t.Fatal("columns and an error")
			}
			return
		}
		for _, file := range []string{"siw/term_badwrite.pcap", "synth/marker-pad-crc.pcap"} {
			for _, r := range decodeFile(t, file) {
				line := c.Append(nil, r.r, ColumnTimes{})
				if bytes.Count(line, []byte{'\n'}) != 1 || line[len(line)-1] != '\n' || bytes.Count(line, []byte{'\t'}) != len(fields)-1 {
					t.Fatalf("%v: line %q", fields, line)
				}
			}
		}
	})
}

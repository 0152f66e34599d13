package filter

import (
	"bytes"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// stagedRecords are the records of several bundled captures (RoCEv2 CM
// exchanges, which have no TCP stream, among them) and of a generated
// workload of 8 connections.
func stagedRecords(t *testing.T) []*flows.Record {
	t.Helper()
	var rs []*flows.Record
	for _, name := range []string{"siw/crc_v2_iwtest_ops.pcap", "siw/term_badwrite.pcap", "siw/p2p_rtr1_rping.pcap",
		"rxe/rxe_v4_rping.pcap", "rxe/rxe_v6_rej_app.pcap", "midstream/iwtest_ops_from_frame15.pcap"} {
		for _, r := range decodeFile(t, name) {
			rs = append(rs, r.r)
		}
	}
	var buf bytes.Buffer
	if err := synth.WritePerf(&buf, 1<<20, 3); err != nil {
		t.Fatal(err)
	}
	dec := flows.NewDecoder(flows.Options{}, func(r *flows.Record) { rs = append(rs, r) })
	for _, p := range testutil.ReadPackets(buf.Bytes()) {
		dec.Packet(&p)
	}
	dec.Close()
	return rs
}

// TestStagedSameAsMatch: Stage1 on a record whose connection id and
// stream a worker got wrong (its own numbering), then Stage2 with the
// record as the merge numbers it, give MatchRecord's verdict on the
// latter, for filters that read the id in every way the grammar allows;
// and Stage1 says a record cannot match only when it does not.
func TestStagedSameAsMatch(t *testing.T) {
	rs := stagedRecords(t)
	exprs := []string{
		"conn==1",
		"conn==0",
		"conn!=1",
		"conn in {1 3 5}",
		"!(conn==2)",
		"conn>=4 && rdmap.opcode==4",
		"conn==1 || mpa.crc_status==\"bad\"",
		"tcp.stream==2",
		"tcp.stream",
		"!tcp.stream",
		"(conn==1 || conn==2) && !rdmap && ddp.t",
		"message && conn<3",
		"fpdu && (tcp.stream==1 || ip.addr==192.0.2.1) && !(conn==1 && rdmap.opcode==0)",
		"!rdmap && conn==1",
		"!(rdmap.opcode==4 || message) && tcp.stream==1",
		"conn==1 || conn",
		"!(conn && tcp.stream==0) || finding",
	}
	seen := map[string][2]int{}
	for _, expr := range exprs {
		f := mustCompile(t, expr)
		s, ok := f.Staged()
		if !ok {
			t.Fatalf("%q: not staged", expr)
		}
		for _, r := range rs {
			want := f.MatchRecord(r)
			local := *r // the worker's numbering
			local.Conn += 7
			local.SetTCPStream(-1)
			bits, possible := s.Stage1(&local)
			if !possible && want {
				t.Fatalf("%q: Stage1 ruled out frame %d conn %d, which matches", expr, r.Frame, r.Conn)
			}
			if got := possible && s.Stage2(bits, r); got != want {
				t.Fatalf("%q: staged %v, MatchRecord %v on frame %d (%s, conn %d)", expr, got, want, r.Frame, r.Type, r.Conn)
			}
			c := seen[expr]
			if want {
				c[0]++
			}
			if !possible {
				c[1]++
			}
			seen[expr] = c
		}
	}
	// The filters select something and rule some records out early.
	for _, expr := range []string{"conn==1", "tcp.stream==2", "conn>=4 && rdmap.opcode==4", "message && conn<3"} {
		if c := seen[expr]; c[0] == 0 || c[0] == len(rs) {
			t.Errorf("%q matches %d of %d records", expr, c[0], len(rs))
		}
	}
	if c := seen["conn>=4 && rdmap.opcode==4"]; c[1] == 0 {
		t.Errorf("Stage1 ruled out no record of conn>=4 && rdmap.opcode==4")
	}
}

// TestStagedWhen: only filters that read the connection id are staged,
// and only through the conn key and tcp.stream.
func TestStagedWhen(t *testing.T) {
	for _, c := range []struct {
		expr string
		ok   bool
	}{
		{"", false},
		{"rdmap.opcode==4", false},
		{"conn==1", true},
		{"tcp.stream==0", true},
		{"conn==1 && fpdu", true},
		// An expression that reads the id (expr.go) is not split: the
		// merge matches the record.
		{"conn + 1 == 2", false},
		{"tcp.stream == conn && fpdu", false},
		{"conn==1 && len(pd) == 4", true},
	} {
		f := mustCompile(t, c.expr)
		if _, ok := f.Staged(); ok != c.ok {
			t.Errorf("%q: staged %v, want %v", c.expr, ok, c.ok)
		}
	}
	// More than 64 tests.
	expr := "conn==1"
	for i := 0; i < 64; i++ {
		expr += " || rdmap.opcode==4"
	}
	if _, ok := mustCompile(t, expr).Staged(); ok {
		t.Errorf("65 tests staged")
	}
}

// TestStagedNoAllocs: Stage1 and Stage2 do not allocate on the records
// iwarpdump -j N stages, FPDUs and messages (but through the race
// detector's sync.Pool).
func TestStagedNoAllocs(t *testing.T) {
	rs := stagedRecords(t)
	s, _ := mustCompile(t, "conn==1 && rdmap.opcode==4 || tcp.stream==2").Staged()
	n := 0
	for _, r := range rs {
		if r.Type != flows.RecFPDU && r.Type != flows.RecMessage {
			continue
		}
		n++
		allocs := testing.AllocsPerRun(20, func() {
			bits, _ := s.Stage1(r)
			_ = s.Stage2(bits, r)
		})
		if allocs != 0 && !raceEnabled {
			t.Fatalf("%v allocations on the %v record of frame %d", allocs, r.Type, r.Frame)
		}
	}
	if n == 0 {
		t.Fatal("no FPDU or message record")
	}
}

// FuzzStaged: for any filter that is staged, Stage1 on the record as a
// worker numbers it and then Stage2 on the record as the merge numbers it
// give MatchRecord's verdict (a sample of TestStagedSameAsMatch's
// records: every 20th, and every record of the first capture).
func FuzzStaged(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add("conn == 1 || " + s)
		f.Add("(" + s + ") && tcp.stream != 2")
	}
	f.Add("!(conn in {0..2} || rdmap.opcode == 4) && !finding")
	var rs []*flows.Record
	f.Fuzz(func(t *testing.T, expr string) {
		if rs == nil {
			all := stagedRecords(t)
			for i, r := range all {
				if i%20 == 0 || i < 200 {
					rs = append(rs, r)
				}
			}
		}
		flt, err := Compile(expr)
		if err != nil {
			return
		}
		s, ok := flt.Staged()
		if !ok {
			return
		}
		for _, r := range rs {
			local := *r
			local.Conn += 3
			local.SetTCPStream(-1)
			bits, possible := s.Stage1(&local)
			if got, want := possible && s.Stage2(bits, r), flt.MatchRecord(r); got != want {
				t.Fatalf("%q: staged %v, MatchRecord %v on frame %d (%s, conn %d)", expr, got, want, r.Frame, r.Type, r.Conn)
			}
		}
	})
}

package filter

import (
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// omitFiles are captures whose records hold every record type and most
// fields: Terminates, markers, gaps, findings, messages, RoCE and SCTP.
var omitFiles = []string{
	"siw/term_badwrite.pcap", "siw/term_toolong.pcap", "siw/term_sendinv.pcap", "siw/p2p_rtr2_rping.pcap",
	"siw/mpareq_markers.pcap", "siw/reject_app_v2.pcap", "siw/basic_ib_read_bw_4096_v2_nocrc.pcap",
	"synth/gap.pcap", "synth/terminate-llp.pcap", "synth/marker-pad-crc.pcap", "synth/retransmit-conflict.pcap",
	"synth/rdmac.pcap", "synthext/roce-cm-v4.pcap",
}

// omitExprs are expressions for TestMatchRecordOmits besides a presence
// test of every known name: values of the fields MatchRecord may leave
// empty, shorthands, and relations that hold when a field is absent.
var omitExprs = []string{
	`ts contains "T"`, `src contains "."`, `dst contains ":"`, `dir == "i2r"`, `ts > "2000" && rdmap.opcode == 1`,
	"mpa", "ddp", "rdmap", "fpdu", "message", "finding", "conn", "!ddp && !rdmap", "ddp.stag != 0", "frames !== 3",
	"mpa.markers.fpduptr > 0", "mpa.markers.ok == 0", "rdmap.term.code >= 0", `findings.code contains "."`,
	`finding.severity == "warning"`, "payload_len > 0 || seq > 0 || len > 0", "!(mpa.crc == 0)", "frame < 20",
	// Functions, arithmetic, fields compared (expr.go).
	"ddp.msn + 1 == 8", "len(pd) > 0", "count(frames) > 1", `upper(rdmap.name) contains "WRITE"`, "ddp.mo == rdmap.read.size",
	"max(frames, first_frame) > 2", `string(ip.src) contains "192"`, "ddp.stag & 0xff", "ddp.msn in {ddp.qn, 3}",
	"rdmap.term.ddp.stag == ddp.stag", "findings.code contains findings.code", "count(mpa.markers) > 1", "-latency_ns < 0",
	"tcp.stream + conn > 0", "frame.time_relative - 1 < 0", "iwarp_mpa.crc & 1", "!(len(ts) > 0)",
}

// TestMatchRecordOmits: MatchRecord, which lists only the fields the filter
// reads (format.AppendFieldsOmit), matches what the filter matches on all of a
// record's fields, for every known name and the expressions above, on
// every record of captures that hold every record type.
func TestMatchRecordOmits(t *testing.T) {
	exprs := append([]string(nil), omitExprs...)
	for _, n := range knownNames() {
		exprs = append(exprs, n, "!"+n)
	}
	for _, c := range tsharkCases {
		exprs = append(exprs, c.ours)
	}
	var rs []rec
	for _, f := range omitFiles {
		rs = append(rs, decodeFile(t, f)...)
	}
	omitting := 0
	for _, expr := range exprs {
		f, err := Compile(expr)
		if err != nil {
			if strings.HasPrefix(expr, "!") {
				continue // a name that is not a test (only a value)
			}
			t.Fatalf("Compile(%q): %v", expr, err)
		}
		if f.omit != 0 {
			omitting++
		}
		for _, r := range rs {
			if got, want := f.MatchRecord(r.r), matchFull(f, r); got != want {
				t.Fatalf("%q on %s frame %d: MatchRecord %v, Match %v (omit %#x)", expr, r.r.Type, r.r.Frame, got, want, f.omit)
			}
		}
	}
	if omitting < len(exprs)/2 {
		t.Errorf("only %d of %d filters leave fields out", omitting, len(exprs))
	}
}

// FuzzMatchRecord: for any filter, MatchRecord agrees with the filter on all
// of a record's fields and its endpoints (matchFull).
func FuzzMatchRecord(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range omitExprs {
		f.Add(s)
	}
	var rs []rec
	for _, file := range []string{"siw/term_badwrite.pcap", "synth/gap.pcap", "synth/marker-pad-crc.pcap", "siw/p2p_rtr2_rping.pcap"} {
		rs = append(rs, decodeFile(f, file)...)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := Compile(expr)
		if err != nil {
			return
		}
		for _, r := range rs {
			if flt.MatchRecord(r.r) != matchFull(flt, r) {
				t.Fatalf("%q on %s frame %d: MatchRecord and Match differ (omit %#x)", expr, r.r.Type, r.r.Frame, flt.omit)
			}
		}
	})
}

// TestMatchRecordAllocs: MatchRecord on an FPDU record allocates nothing
// (issue 6: a filtered decode), for a filter on its DDP and RDMAP headers,
// and for filters on what is listed as text or lists (its endpoints, its
// frames, its markers, its Read Request: format.Lister; the endpoint fields),
// with and without markers in the FPDU.
func TestMatchRecordAllocs(t *testing.T) {
	var fpdus, marked, reads int
	var b fieldBuf
	for _, expr := range []string{"rdmap.opcode == 2 && ddp.stag != 0", `src == "192.0.2.2:1"`, "frames",
		"mpa.markers", "rdmap.read.size > 0", "ip.addr == 192.0.2.0/24 && tcp.port in {7174 18515}", "ipv6.src == ::1"} {
		f := mustCompile(t, expr)
		for _, file := range []string{"siw/basic_ib_read_bw_4096_v2_nocrc.pcap", "synth/marker-pad-crc.pcap"} {
			for _, r := range decodeFile(t, file) {
				if r.r.FPDU == nil || len(r.r.FPDU.Findings) > 0 {
					continue
				}
				fpdus++
				if len(r.r.FPDU.Markers) > 0 {
					marked++
				}
				if r.r.FPDU.SegOK && r.r.FPDU.Seg.Opcode == rdmap.OpReadRequest {
					reads++
				}
				if n := testing.AllocsPerRun(20, func() { f.matchIn(&b, r.r) }); n != 0 {
					t.Fatalf("%q, %s frame %d: %v allocations per match", expr, file, r.r.Frame, n)
				}
				// The race detector's sync.Pool drops a quarter of what
				// it is given back, on purpose: MatchRecord's pool then
				// allocates.
				if n := testing.AllocsPerRun(20, func() { f.MatchRecord(r.r) }); n != 0 && !raceEnabled {
					t.Fatalf("%q, %s frame %d: %v allocations per MatchRecord", expr, file, r.r.Frame, n)
				}
			}
		}
	}
	if fpdus == 0 || marked == 0 || reads == 0 {
		t.Fatalf("%d FPDU records without findings, %d with markers, %d Read Requests", fpdus, marked, reads)
	}
}

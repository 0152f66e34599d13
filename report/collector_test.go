package report

import (
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// manifestOps are the RDMAP opcode counts tshark 4.0.17 reports for the
// real siw captures ("RDMAP opcodes (count, opcode)" in
// shared/captures/MANIFEST.md; tshark counts one per DDP segment).
var manifestOps = []struct {
	name string
	ops  map[rdmap.Opcode]uint64
}{
	{"basic_ib_read_bw_4096_v2_nocrc", map[rdmap.Opcode]uint64{0x1: 5, 0x2: 15, 0x3: 32}},
	{"basic_ib_send_bw_64_v2_nocrc", map[rdmap.Opcode]uint64{0x0: 2, 0x3: 27}},
	{"basic_rping_v2_nocrc", map[rdmap.Opcode]uint64{0x0: 5, 0x1: 5, 0x2: 5, 0x3: 20}},
	{"crc_v2_iwtest_ops", map[rdmap.Opcode]uint64{0x0: 17, 0x1: 2, 0x2: 73, 0x3: 9, 0x5: 2}},
	{"crc_v2_rping", map[rdmap.Opcode]uint64{0x0: 5, 0x1: 5, 0x2: 5, 0x3: 20}},
	{"gso_v2_nocrc_ib_write_bw_200000", map[rdmap.Opcode]uint64{0x0: 21, 0x3: 32}},
	{"mpareq_markers", map[rdmap.Opcode]uint64{}},
	{"mpareq_rev3", map[rdmap.Opcode]uint64{}},
	{"nocrc_v1_rping", map[rdmap.Opcode]uint64{0x3: 1}},
	{"p2p_rtr1_rping", map[rdmap.Opcode]uint64{0x0: 3, 0x1: 2, 0x2: 2, 0x3: 8}},
	{"p2p_rtr2_rping", map[rdmap.Opcode]uint64{0x0: 2, 0x1: 3, 0x2: 3, 0x3: 8}},
	{"reject_app_v2", map[rdmap.Opcode]uint64{}},
	{"term_badwrite", map[rdmap.Opcode]uint64{0x0: 1, 0x3: 1, 0x7: 1}},
	{"term_sendinv", map[rdmap.Opcode]uint64{0x3: 2, 0x6: 1, 0x7: 1}},
	{"term_toolong", map[rdmap.Opcode]uint64{0x3: 6, 0x7: 1}},
}

func TestOpsMatchManifest(t *testing.T) {
	for _, tc := range manifestOps {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := collect(t, tc.name)
			var b strings.Builder
			if err := c.WriteOps(&b); err != nil {
				t.Fatal(err)
			}
			hdr, rows := tableRows(t, b.String())
			if want := []string{"Conn", "Dir", "Opcode", "Name", "Segments", "Payload octets"}; strings.Join(hdr, "|") != strings.Join(want, "|") {
				t.Fatalf("header %q, want %q", hdr, want)
			}
			total := map[rdmap.Opcode]uint64{}
			perConnDir := map[rdmap.Opcode]uint64{}
			for _, r := range rows {
				if len(r) != 6 {
					t.Fatalf("row %q: want 6 cells", r)
				}
				op, err := strconv.ParseUint(strings.TrimPrefix(r[2], "0x"), 16, 8)
				if err != nil {
					t.Fatalf("row %q: opcode: %v", r, err)
				}
				if r[3] != rdmap.Opcode(op).String() {
					t.Errorf("row %q: name %q, want %q", r, r[3], rdmap.Opcode(op).String())
				}
				n, _ := strconv.ParseUint(r[4], 10, 64)
				if r[0] == "all" {
					total[rdmap.Opcode(op)] += n
				} else {
					perConnDir[rdmap.Opcode(op)] += n
				}
			}
			if !equalOps(total, tc.ops) {
				t.Errorf("totals %v, tshark (MANIFEST) %v\n%s", total, tc.ops, b.String())
			}
			if !equalOps(perConnDir, tc.ops) {
				t.Errorf("per connection and direction rows add up to %v, want %v", perConnDir, tc.ops)
			}
		})
	}
}

func equalOps(a, b map[rdmap.Opcode]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// tsharkConn is what tshark says about one TCP connection: the initiator
// (source of the SYN) and the DDP/RDMAP PDUs per sending endpoint.
type tsharkConn struct {
	initiator, responder netip.AddrPort
	pdus                 map[netip.AddrPort]int
}

// tsharkConns collects tsharkConn by the unordered pair of endpoints.
func tsharkConns(t *testing.T, name string) map[[2]netip.AddrPort]*tsharkConn {
	key := func(a, b netip.AddrPort) [2]netip.AddrPort {
		if b.Compare(a) < 0 {
			a, b = b, a
		}
		return [2]netip.AddrPort{a, b}
	}
	out := map[[2]netip.AddrPort]*tsharkConn{}
	get := func(a, b netip.AddrPort) *tsharkConn {
		k := key(a, b)
		if out[k] == nil {
			out[k] = &tsharkConn{pdus: map[netip.AddrPort]int{}}
		}
		return out[k]
	}
	// One tshark run per capture: the SYNs and the frames with DDP/RDMAP PDUs.
	fields := []string{"ip.src", "ipv6.src", "tcp.srcport", "ip.dst", "ipv6.dst", "tcp.dstport", "tcp.flags.syn", "tcp.flags.ack", "iwarp_rdma.opcode"}
	isSet := func(v string) bool { return v == "1" || v == "True" || v == "true" }
	for _, r := range tsharkFields(t, name, "iwarp_ddp_rdmap || (tcp.flags.syn==1 && tcp.flags.ack==0)", fields...) {
		for len(r) < len(fields) {
			r = append(r, "")
		}
		src, dst := endpoint(t, r[0], r[1], r[2]), endpoint(t, r[3], r[4], r[5])
		tc := get(src, dst)
		if isSet(r[6]) && !isSet(r[7]) {
			tc.initiator, tc.responder = src, dst
		}
		if r[8] != "" {
			tc.pdus[src] += len(strings.Split(r[8], ","))
		}
	}
	return out
}

// manifestMPA is the negotiation of each capture's connections, in order,
// as the MANIFEST's "MPA Request/Reply frames" lists them (rev, C bit, and
// IRD/ORD from the first four octets of the Reply's private data, low 14
// bits per RFC 6581 §9).
var manifestMPA = map[string][]struct{ rev, crc, irdord string }{
	"basic_rping_v2_nocrc":            {{"2", "off", "1/1"}},
	"crc_v2_rping":                    {{"2", "on", "1/1"}},
	"crc_v2_iwtest_ops":               {{"2", "on", "4/4"}},
	"basic_ib_read_bw_4096_v2_nocrc":  {{"2", "off", "0/0"}, {"2", "off", "128/128"}},
	"gso_v2_nocrc_ib_write_bw_200000": {{"2", "off", "0/0"}, {"2", "off", "0/0"}},
	"nocrc_v1_rping":                  {{"1", "off", "-"}},
	"p2p_rtr1_rping":                  {{"2", "off", "1/1"}},
	"p2p_rtr2_rping":                  {{"2", "off", "1/1"}},
	"term_badwrite":                   {{"2", "off", "4/4"}},
	"term_toolong":                    {{"2", "off", "4/4"}},
	"siw6_rping_v2_crc":               {{"2", "on", "1/1"}},
}

// TestConnTableMatchesTshark checks the -z conn table against tshark: the
// initiator and responder (the SYN's source and destination), the FPDUs per
// connection (DDP/RDMAP PDUs tshark decodes), and the MANIFEST's MPA
// parameters.
func TestConnTableMatchesTshark(t *testing.T) {
	for name, mpaWant := range manifestMPA {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, _ := collect(t, name)
			ts := tsharkConns(t, name)
			var b strings.Builder
			if err := c.WriteConn(&b); err != nil {
				t.Fatal(err)
			}
			hdr, rows := tableRows(t, b.String())
			if len(hdr) != 18 {
				t.Fatalf("header %q: want 18 columns", hdr)
			}
			if len(rows) != len(mpaWant) {
				t.Fatalf("%d connections, want %d\n%s", len(rows), len(mpaWant), b.String())
			}
			for i, r := range rows {
				if len(r) != 18 {
					t.Fatalf("row %q: want 18 cells", r)
				}
				ini, err1 := netip.ParseAddrPort(r[1])
				res, err2 := netip.ParseAddrPort(r[2])
				if err1 != nil || err2 != nil {
					t.Fatalf("row %q: endpoints: %v %v", r, err1, err2)
				}
				k := [2]netip.AddrPort{ini, res}
				if res.Compare(ini) < 0 {
					k = [2]netip.AddrPort{res, ini}
				}
				tc := ts[k]
				if tc == nil {
					t.Fatalf("row %q: tshark has no such connection", r)
				}
				if tc.initiator != ini || tc.responder != res {
					t.Errorf("row %q: initiator %v responder %v, tshark's SYN says %v > %v", r, ini, res, tc.initiator, tc.responder)
				}
				want := tc.pdus[ini] + tc.pdus[res]
				if r[8] != strconv.Itoa(want) {
					t.Errorf("row %q: FPDUs %s, tshark %d", r, r[8], want)
				}
				m := mpaWant[i]
				if r[4] != m.rev || r[5] != m.crc || r[7] != m.irdord {
					t.Errorf("row %q: rev/crc/irdord %s %s %s, MANIFEST %s %s %s", r, r[4], r[5], r[7], m.rev, m.crc, m.irdord)
				}
				if r[6] != "off/off" {
					t.Errorf("row %q: markers %s, want off/off (no capture negotiates markers)", r, r[6])
				}
				// The per-direction opcode rows agree with tshark's PDUs per sender.
				id, _ := strconv.Atoi(r[0])
				cs := c.row(id)
				var i2r, r2i uint64
				ops := cs.ops.dense()
				for op := range nOps {
					i2r += ops[flows.DirI2R][op].n
					r2i += ops[flows.DirR2I][op].n
				}
				if int(i2r) != tc.pdus[ini] || int(r2i) != tc.pdus[res] {
					t.Errorf("conn %d: segments i2r %d r2i %d, tshark %d %d", id, i2r, r2i, tc.pdus[ini], tc.pdus[res])
				}
			}
		})
	}
}

// TestConnCountsAgreeWithSummary cross-checks the counts the collector makes
// from the records against the decoder's own conn records.
func TestConnCountsAgreeWithSummary(t *testing.T) {
	for _, tc := range manifestOps {
		c, recs := collect(t, tc.name)
		sums := map[int]*flows.ConnSummary{}
		for _, r := range recs {
			if r.Type == flows.RecConn {
				sums[r.Conn] = r.Summary
			}
		}
		for _, cs := range c.sortedConns() {
			s := sums[cs.id]
			if s == nil || !cs.hasSum {
				t.Errorf("%s conn %d: no conn record", tc.name, cs.id)
				continue
			}
			if cs.fpdus != s.FPDUs || cs.messages != s.Messages || cs.octets != s.Octets || cs.crcErrors != s.CRCErrors || cs.findings != s.Findings {
				t.Errorf("%s conn %d: counted fpdus %d messages %d octets %d crc %d findings %d; summary %+v",
					tc.name, cs.id, cs.fpdus, cs.messages, cs.octets, cs.crcErrors, cs.findings, *s)
			}
		}
	}
}

// TestTerminateFindings checks the findings table of the Terminate
// captures: a Terminate is an error finding in the frame the MANIFEST names.
func TestTerminateFindings(t *testing.T) {
	for name, frame := range map[string]string{"term_badwrite": "11", "term_sendinv": "13", "term_toolong": "16"} {
		c, _ := collect(t, name)
		var b strings.Builder
		if err := c.WriteFindings(&b); err != nil {
			t.Fatal(err)
		}
		_, rows := tableRows(t, b.String())
		found := false
		for _, r := range rows {
			if len(r) >= 4 && r[1] == "rdmap.terminate" {
				found = true
				if r[0] != "error" || r[2] != "1" || r[3] != frame {
					t.Errorf("%s: row %q, want error rdmap.terminate 1 %s", name, r, frame)
				}
			}
		}
		if !found {
			t.Errorf("%s: no rdmap.terminate row\n%s", name, b.String())
		}
		if sev, ok := c.Worst(); !ok || sev != dissect.SeverityError {
			t.Errorf("%s: Worst() = %v, %v; want error", name, sev, ok)
		}
		if !strings.Contains(b.String(), "total ") {
			t.Errorf("%s: no totals line", name)
		}
	}
}

// Synthetic records for the unit tests below.
var (
	epA = netip.MustParseAddrPort("192.0.2.1:1000")
	epB = netip.MustParseAddrPort("192.0.2.2:2000")
	t0  = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
)

func fpduRec(conn int, frame uint64, at time.Duration, dir flows.Dir, op rdmap.Opcode, payload int) *flows.Record {
	src, dst := epA, epB
	if dir == flows.DirR2I {
		src, dst = epB, epA
	}
	r := &flows.Record{Type: flows.RecFPDU, Frame: frame, TS: t0.Add(at), Conn: conn, Src: src, Dst: dst, Dir: dir,
		FPDU: &flows.FPDURecord{Len: payload + 24, SegOK: true, PayloadLen: payload, Frames: []uint64{frame}}}
	r.FPDU.Seg.Opcode = op
	return r
}

func findingRec(conn int, frame uint64, sev dissect.Severity, code, msg string) *flows.Record {
	return &flows.Record{Type: flows.RecFinding, Frame: frame, TS: t0.Add(time.Duration(frame) * time.Millisecond), Conn: conn,
		Finding: &dissect.Finding{Severity: sev, Code: code, Msg: msg, Ref: "RFC 5040 §4.8", Frames: []uint64{frame}}}
}

func readRec(conn int, frame, reqFrame uint64, lat time.Duration) *flows.Record {
	return &flows.Record{Type: flows.RecMessage, Frame: frame, TS: t0, Conn: conn, Src: epB, Dst: epA, Dir: flows.DirR2I,
		Message: &flows.MessageRecord{Opcode: rdmap.OpReadResponse, RequestFrame: reqFrame, Latency: lat}}
}

func TestWorst(t *testing.T) {
	c := NewCollector()
	if _, ok := c.Worst(); ok {
		t.Fatal("empty collector has a worst severity")
	}
	c.Add(fpduRec(0, 1, 0, flows.DirI2R, rdmap.OpSend, 10))
	if _, ok := c.Worst(); ok {
		t.Fatal("no findings, yet a worst severity")
	}
	for _, s := range []dissect.Severity{dissect.SeverityNote, dissect.SeverityWarning, dissect.SeverityNote} {
		c.Add(findingRec(0, 2, s, "x.y", "m"))
	}
	if s, ok := c.Worst(); !ok || s != dissect.SeverityWarning {
		t.Fatalf("Worst() = %v %v, want warning", s, ok)
	}
	c.Add(nil) // ignored
}

// TestFindingCap checks that findings past the cap are counted, not kept.
func TestFindingCap(t *testing.T) {
	c := NewCollector()
	c.maxFindings = 3
	for i := range 10 {
		c.Add(findingRec(0, uint64(i+1), dissect.SeverityError, "rdmap.terminate", "m"))
	}
	if len(c.kept) != 3 || c.dropped != 7 || c.nFindings != 10 {
		t.Fatalf("kept %d dropped %d total %d, want 3 7 10", len(c.kept), c.dropped, c.nFindings)
	}
	var b strings.Builder
	if err := c.WriteFindings(&b); err != nil {
		t.Fatal(err)
	}
	_, rows := tableRows(t, b.String())
	if len(rows) != 1 || rows[0][2] != "10" || rows[0][3] != "1" {
		t.Fatalf("rows %q, want one with count 10 first frame 1", rows)
	}
	b.Reset()
	if err := c.WriteJUnit(&b, "cap"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "7 more not listed") {
		t.Errorf("JUnit does not say 7 more:\n%s", b.String())
	}
}

// TestConnCap checks that connections past the cap share the row "other".
func TestConnCap(t *testing.T) {
	c := NewCollector()
	c.maxConns = 2
	for conn := range 5 {
		c.Add(fpduRec(conn, uint64(conn+1), 0, flows.DirI2R, rdmap.OpSend, 10))
		c.Add(readRec(conn, uint64(conn+1), 1, time.Duration(conn+1)*time.Microsecond))
	}
	if c.rowCount() != 2 || c.other == nil || c.other.fpdus != 3 || c.untracked != 6 {
		t.Fatalf("conns %d other %+v untracked %d", c.rowCount(), c.other, c.untracked)
	}
	var b strings.Builder
	if err := c.WriteConn(&b); err != nil {
		t.Fatal(err)
	}
	_, rows := tableRows(t, b.String())
	if len(rows) != 3 || rows[2][0] != "other" || rows[2][8] != "3" {
		t.Fatalf("rows %q, want 0, 1 and other with 3 FPDUs", rows)
	}
	if !strings.Contains(b.String(), "6 records of connections beyond the first 2") {
		t.Errorf("no note on untracked records:\n%s", b.String())
	}
	if c.lat.n != 5 {
		t.Errorf("overall latency samples %d, want 5", c.lat.n)
	}
}

// TestConnFallbackWithoutSummary checks the negotiated values taken from
// MPA records when no conn record came (records filtered, say).
func TestConnFallbackWithoutSummary(t *testing.T) {
	c := NewCollector()
	req := &flows.Record{Type: flows.RecMPA, Frame: 4, TS: t0, Conn: 3, Src: epA, Dst: epB, Dir: flows.DirI2R,
		MPA: &flows.MPARecord{Frame: mpa.Frame{Kind: mpa.KindRequest, M: true, C: true, Rev: 2}}}
	rep := &flows.Record{Type: flows.RecMPA, Frame: 6, TS: t0, Conn: 3, Src: epB, Dst: epA, Dir: flows.DirR2I,
		MPA: &flows.MPARecord{Frame: mpa.Frame{Kind: mpa.KindReply, Rev: 2}, HasEnhanced: true, Enhanced: mpa.Enhanced{IRD: 7, ORD: 9}}}
	c.Add(req)
	c.Add(rep)
	r := c.row(3).row()
	want := connRow{ID: 3, Label: "3", Initiator: epA.String(), Responder: epB.String(), State: "-", Rev: "2", CRC: "on", Markers: "off/on", IRDORD: "7/9", First: t0}
	if r != want {
		t.Fatalf("row %+v\nwant %+v", r, want)
	}
}

// TestTableSanitises checks that control characters from a capture cannot
// break the table layout.
func TestTableSanitises(t *testing.T) {
	c := NewCollector()
	c.Add(findingRec(0, 1, dissect.SeverityNote, "a.b", "line\nbreak\tand \x1b[31mescape\xff"))
	var b strings.Builder
	if err := c.WriteFindings(&b); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\t\x1b") || strings.Count(b.String(), "\n") != 7 {
		t.Fatalf("control characters leaked:\n%q", b.String())
	}
}

func TestAddNoAllocs(t *testing.T) {
	c := NewCollector()
	recs := []*flows.Record{
		fpduRec(0, 1, 0, flows.DirI2R, rdmap.OpReadRequest, 0),
		fpduRec(0, 2, 100*time.Microsecond, flows.DirR2I, rdmap.OpReadResponse, 64),
		readRec(0, 2, 1, 100*time.Microsecond),
	}
	for _, r := range recs { // warm up: connection, histogram buckets, timeline bucket
		c.Add(r)
	}
	n := testing.AllocsPerRun(1000, func() {
		for _, r := range recs {
			c.Add(r)
		}
	})
	if n != 0 {
		t.Fatalf("Add allocates %v times per record batch in steady state", n)
	}
}

func BenchmarkAdd(b *testing.B) {
	_, recs := collect(b, "crc_v2_iwtest_ops")
	c := NewCollector()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Add(recs[i%len(recs)])
	}
}

// BenchmarkCollectorAdd adds the records of a real capture (87% FPDU
// records, as iwarpdump -z conn over a bulk transfer) as one long capture:
// 64 copies, each later than the one before, over and over. ns/op is per
// record; in the steady state, with the findings list full (as after
// MaxFindings), Add allocates nothing. "same ids": every copy is the same
// connections, whose records go on after their conn record, as in no
// capture (the row packed at its conn record is unpacked again at the
// next, rowpack.go); "new ids": each copy its own connections (the
// benchmark going over them again, each row is unpacked once a pass: one
// unpack and pack per 119 records, some 9 ns a record).
func BenchmarkCollectorAdd(b *testing.B) {
	_, recs := collect(b, "crc_v2_iwtest_ops")
	var span time.Duration
	for _, r := range recs {
		span = max(span, r.TS.Sub(recs[0].TS))
	}
	for _, newIDs := range []bool{false, true} {
		name := "same ids"
		if newIDs {
			name = "new ids"
		}
		b.Run(name, func(b *testing.B) {
			var stream []*flows.Record
			for k := range 64 {
				for _, r := range recs {
					r2 := *r
					r2.TS = r.TS.Add(time.Duration(k) * (span + time.Millisecond))
					if newIDs && r2.Conn >= 0 {
						r2.Conn += k * 1000
					}
					stream = append(stream, &r2)
				}
			}
			c := NewCollector()
			for _, r := range stream { // warm up: connections, histograms, timeline
				c.Add(r)
			}
			c.maxFindings = len(c.kept)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				c.Add(stream[i%len(stream)])
			}
		})
	}
}

func BenchmarkWriteHTML(b *testing.B) {
	c, _ := collect(b, "basic_ib_read_bw_4096_v2_nocrc")
	b.ReportAllocs()
	for b.Loop() {
		var sb strings.Builder
		if err := c.WriteHTML(&sb, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConnMemory bounds what a Collector keeps per connection: up to
// MaxConns of them are tabulated, so this is what the -z tables cost on a
// capture of many connections. Each connection here has its MPA exchange,
// FPDUs of four opcodes both ways, a Read with its latency, a finding and a
// conn record. A dense opcode histogram, a copy of the conn record and a
// map of finding families took some 2 KB per connection.
func TestConnMemory(t *testing.T) {
	heapAfter := func(n int, keep bool) uint64 {
		c := NewCollector()
		c.keepRows = keep
		for id := range n {
			f := uint64(id * 100)
			for _, r := range []*flows.Record{
				{Type: flows.RecMPA, Frame: f + 1, TS: t0, Conn: id, Src: epA, Dst: epB, Dir: flows.DirI2R,
					MPA: &flows.MPARecord{Frame: mpa.Frame{Kind: mpa.KindRequest, C: true, Rev: 2}}},
				{Type: flows.RecMPA, Frame: f + 2, TS: t0, Conn: id, Src: epB, Dst: epA, Dir: flows.DirR2I,
					MPA: &flows.MPARecord{Frame: mpa.Frame{Kind: mpa.KindReply, C: true, Rev: 2}}},
				fpduRec(id, f+3, time.Millisecond, flows.DirI2R, rdmap.OpSend, 100),
				fpduRec(id, f+4, 2*time.Millisecond, flows.DirI2R, rdmap.OpWrite, 1000),
				fpduRec(id, f+5, 3*time.Millisecond, flows.DirI2R, rdmap.OpReadRequest, 0),
				fpduRec(id, f+6, 4*time.Millisecond, flows.DirR2I, rdmap.OpReadResponse, 1000),
				fpduRec(id, f+7, 5*time.Millisecond, flows.DirR2I, rdmap.OpSend, 10),
				readRec(id, f+6, f+5, time.Millisecond),
				findingRec(id, f+8, dissect.SeverityWarning, "tcp.gap", "octets missing"),
				{Type: flows.RecConn, Frame: f + 9, TS: t0.Add(6 * time.Millisecond), Conn: id, Summary: &flows.ConnSummary{
					Initiator: epA, Responder: epB, InitiatorKnown: true, A: epA, B: epB, State: "closed",
					HaveRequest: true, HaveReply: true, Rev: 2, CRC: true, FPDUs: 5, Interop: &flows.Interop{}}},
			} {
				c.Add(r)
			}
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		runtime.KeepAlive(c)
		return ms.HeapAlloc
	}
	// Both above MaxFindings, so that the findings kept for the reports
	// (bounded) do not count.
	per := func(keep bool) int64 {
		small := heapAfter(MaxFindings+1000, keep)
		large := heapAfter(MaxFindings+11000, keep)
		return (int64(large) - int64(small)) / 10000
	}
	// The rows of connections that ended are packed (rowpack.go).
	packed, kept := per(false), per(true)
	t.Logf("%d octets of heap per connection, %d with the rows kept whole", packed, kept)
	if packed > 256 {
		t.Errorf("%d octets of heap per connection, want at most 256", packed)
	}
}

func TestWithoutFrames(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"no frames here", "no frames here"},
		{"the Request (frame 4) asked for markers", "the Request (frame ) asked for markers"},
		{"frame 12 and frame 345, frame x", "frame  and frame , frame x"},
		{"ends with frame 7", "ends with frame "},
	} {
		if got := withoutFrames(c.in); got != c.want {
			t.Errorf("withoutFrames(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestNoReportsSameTables: a Collector that keeps no findings for the
// reports (NoReports) writes the same four tables and has the same worst
// severity as one that does, on every bundled capture; and keeps none.
func TestNoReportsSameTables(t *testing.T) {
	tables := func(c *Collector) string {
		var b bytes.Buffer
		for _, w := range []func(io.Writer) error{c.WriteConn, c.WriteOps, c.WriteFindings, c.WriteLatency} {
			if err := w(&b); err != nil {
				t.Fatal(err)
			}
		}
		s, ok := c.Worst()
		return fmt.Sprint(b.String(), s, ok)
	}
	kept := 0
	for _, f := range bundled(t) {
		data, err := os.ReadFile(filepath.Join("..", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		full, bare := NewCollector(), NewCollector()
		bare.NoReports()
		d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) { full.Add(r); bare.Add(r) })
		pkts := testutil.ReadPackets(data)
		for i := range pkts {
			d.Packet(&pkts[i])
		}
		d.Close()
		if got, want := tables(bare), tables(full); got != want {
			t.Errorf("%s: tables differ with NoReports\n got %q\nwant %q", f, got, want)
		}
		if len(bare.kept) != 0 {
			t.Errorf("%s: %d findings kept with NoReports", f, len(bare.kept))
		}
		kept += len(full.kept)
	}
	if kept == 0 {
		t.Error("no bundled capture has a finding to keep")
	}
}

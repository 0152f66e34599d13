package report

import (
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// decodeMerged decodes the bundled captures files (paths under testdata)
// and returns their records as one capture of their connections: the
// connection ids and frames of the k-th capture moved up by k*1000, so that
// the captures' connections and frames are told apart.
func decodeMerged(t *testing.T, files ...string) []*flows.Record {
	t.Helper()
	var recs []*flows.Record
	for k, f := range files {
		if !filepath.IsAbs(f) {
			f = filepath.Join("..", "testdata", f)
		}
		for _, r := range testutil.Decode(t, f, flows.Options{}) {
			off := uint64(k * 1000)
			if r.Conn >= 0 {
				r.Conn += k * 1000
			}
			r.Frame += off
			for _, fs := range recordFindings(r) {
				for i := range fs.Frames {
					fs.Frames[i] += off
				}
			}
			recs = append(recs, r)
		}
	}
	return recs
}

// recordFindings returns pointers to the findings r carries.
func recordFindings(r *flows.Record) []*dissect.Finding {
	var fs []dissect.Finding
	switch {
	case r.Finding != nil:
		return []*dissect.Finding{r.Finding}
	case r.FPDU != nil:
		fs = r.FPDU.Findings
	case r.MPA != nil:
		fs = r.MPA.Findings
	case r.SCTP != nil:
		fs = r.SCTP.Findings
	case r.CM != nil:
		fs = r.CM.Findings
	}
	out := make([]*dissect.Finding, len(fs))
	for i := range fs {
		out[i] = &fs[i]
	}
	return out
}

// termRec is an FPDU record of connection conn carrying a Terminate with
// the given Layer, EType and Code that terminates the Send of MSN msn, and
// the findings rdmap's Check makes of it.
func termRec(conn int, frame uint64, layer rdmap.TermLayer, etype, code uint8, msn uint32) *flows.Record {
	r := fpduRec(conn, frame, time.Duration(frame)*time.Millisecond, flows.DirR2I, rdmap.OpTerminate, 0)
	seg := &r.FPDU.Seg
	seg.DDP.L, seg.DDP.DV, seg.RV = true, 1, 1
	seg.Term = rdmap.Terminate{Layer: uint8(layer), EType: etype, Code: code, D: true, HasDDP: true}
	seg.Term.DDP.QN, seg.Term.DDP.MSN, seg.Term.DDP.L = 0, msn, true
	seg.Term.DDP.ULPCtrl = uint8(rdmap.MakeControl(1, 0, rdmap.OpSend))
	r.FPDU.Findings = seg.Check(nil)
	for i := range r.FPDU.Findings {
		r.FPDU.Findings[i].Frames = []uint64{frame}
	}
	return r
}

// TestTerminateRowPerCause: the findings table gives rdmap.terminate a
// row per cause, the Terminate's Layer, EType and Code as the records
// decode them (or, for a finding record without the Terminate, its
// message): each row counts the Terminates of its cause, gives the lowest
// of their frames and the first one's message, which names the cause
// (Terminate.Explain); every other code keeps one row.
func TestTerminateRowPerCause(t *testing.T) {
	tests := []struct {
		name string
		recs func(t *testing.T) []*flows.Record
		// distinct: each cause has one message, so the rows' messages
		// are the findings' distinct messages.
		distinct bool
	}{
		{"siw and synthetic captures, five causes", func(t *testing.T) []*flows.Record {
			return decodeMerged(t, "siw/term_badwrite.pcap", "siw/term_toolong.pcap",
				"synth/terminate-llp.pcap", "synth/terminate-rdmap.pcap", "synth/terminate-siw.pcap")
		}, true},
		{"siw and synthetic captures, causes met twice", func(t *testing.T) []*flows.Record {
			// term_badwrite and terminate-ddp are both DDP Invalid
			// STag, term_sendinv and terminate-siw both STag cannot be
			// invalidated: each pair terminates a different segment.
			return decodeMerged(t, "siw/term_badwrite.pcap", "siw/term_sendinv.pcap", "siw/term_toolong.pcap",
				"synth/terminate-ddp.pcap", "synth/terminate-llp.pcap", "synth/terminate-rdmap.pcap", "synth/terminate-siw.pcap")
		}, false},
		{"records, one cause on three MSNs", func(*testing.T) []*flows.Record {
			return []*flows.Record{
				termRec(2, 40, rdmap.LayerDDP, rdmap.ETypeDDPUntagged, 0x01, 7),
				termRec(0, 10, rdmap.LayerDDP, rdmap.ETypeDDPUntagged, 0x01, 5),
				termRec(1, 20, rdmap.LayerDDP, rdmap.ETypeDDPUntagged, 0x01, 6),
			}
		}, false},
		{"records, the first cause again after others", func(*testing.T) []*flows.Record {
			return []*flows.Record{
				termRec(0, 10, rdmap.LayerDDP, rdmap.ETypeDDPUntagged, 0x01, 2),
				termRec(1, 11, rdmap.LayerRDMAP, rdmap.ETypeRDMAPRemoteProtection, 0x00, 2),
				termRec(2, 12, rdmap.LayerDDP, rdmap.ETypeDDPUntagged, 0x02, 2),
				termRec(3, 13, rdmap.LayerDDP, rdmap.ETypeDDPTagged, 0x01, 2),
				termRec(4, 9, rdmap.LayerDDP, rdmap.ETypeDDPUntagged, 0x01, 2),
			}
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs := tc.recs(t)
			// What the records say: per cause, the Terminates, their
			// lowest frame and the first one's message.
			type cause struct {
				n     int
				first uint64
				msg   string
			}
			want := map[[3]uint8]*cause{}
			msgs := map[string]bool{}
			var order [][3]uint8
			otherCodes := map[string]bool{}
			c := NewCollector()
			for _, r := range recs {
				c.Add(r)
				for _, f := range recordFindings(r) {
					if f.Code != rdmap.CodeTerminate {
						otherCodes[f.Severity.String()+" "+f.Code] = true
						continue
					}
					if r.Type != flows.RecFPDU || !r.FPDU.SegOK || r.FPDU.Seg.Opcode != rdmap.OpTerminate {
						t.Fatalf("frame %d: a Terminate finding on a record without the Terminate", r.Frame)
					}
					tm := r.FPDU.Seg.Term
					k := [3]uint8{tm.Layer, tm.EType, tm.Code}
					frame := f.Frames[0]
					msgs[f.Msg] = true
					if w := want[k]; w != nil {
						w.n++
						w.first = min(w.first, frame)
						continue
					}
					want[k] = &cause{1, frame, f.Msg}
					order = append(order, k)
				}
			}
			var b strings.Builder
			if err := c.WriteFindings(&b); err != nil {
				t.Fatal(err)
			}
			hdr, rows := tableRows(t, b.String())
			col := columns(t, hdr, "Severity", "Code", "Count", "First frame", "Message")
			var terms [][]string
			seen := map[string]bool{}
			for _, r := range rows {
				if r[col["Code"]] == rdmap.CodeTerminate {
					terms = append(terms, r)
					continue
				}
				k := r[col["Severity"]] + " " + r[col["Code"]]
				if seen[k] {
					t.Errorf("code %s has two rows:\n%s", k, b.String())
				}
				seen[k] = true
			}
			if len(seen) != len(otherCodes) {
				t.Errorf("%d rows of other codes, the records have %d codes:\n%s", len(seen), len(otherCodes), b.String())
			}
			if len(terms) != len(want) {
				t.Fatalf("%d rdmap.terminate rows, the records have %d causes:\n%s", len(terms), len(want), b.String())
			}
			got := map[[3]uint8]bool{}
			var firsts []uint64
			for _, r := range terms {
				msg := r[col["Message"]]
				// The row's cause: the one whose explanation its message
				// starts with.
				var ks [][3]uint8
				for _, k := range order {
					bare := rdmap.Terminate{Layer: k[0], EType: k[1], Code: k[2]}
					if strings.HasPrefix(msg, "Terminate: "+bare.Explain()) {
						ks = append(ks, k)
					}
				}
				if len(ks) != 1 {
					t.Fatalf("row %q names %d of the causes %v", r, len(ks), order)
				}
				k, w := ks[0], want[ks[0]]
				if got[k] {
					t.Errorf("cause %v has two rows:\n%s", k, b.String())
				}
				got[k] = true
				if r[col["Severity"]] != "error" || r[col["Count"]] != strconv.Itoa(w.n) ||
					r[col["First frame"]] != strconv.FormatUint(w.first, 10) || msg != w.msg {
					t.Errorf("row %q, want error, count %d, first frame %d, message %q", r, w.n, w.first, w.msg)
				}
				firsts = append(firsts, w.first)
			}
			if !slices.IsSorted(firsts) {
				t.Errorf("rdmap.terminate rows not in order of first frame: %v", firsts)
			}
			if tc.distinct {
				var rowMsgs, findMsgs []string
				for _, r := range terms {
					rowMsgs = append(rowMsgs, r[col["Message"]])
				}
				for m := range msgs {
					findMsgs = append(findMsgs, m)
				}
				slices.Sort(rowMsgs)
				slices.Sort(findMsgs)
				if !slices.Equal(rowMsgs, findMsgs) {
					t.Errorf("row messages %q\nwant the findings' %q", rowMsgs, findMsgs)
				}
			}
			// The table is the same written again.
			var again strings.Builder
			if err := c.WriteFindings(&again); err != nil || again.String() != b.String() {
				t.Errorf("written again (%v):\n%s\nfirst:\n%s", err, again.String(), b.String())
			}
		})
	}
}

// TestTerminateFindingRecords: Terminate findings in finding records,
// which carry no Terminate, are told apart by their message.
func TestTerminateFindingRecords(t *testing.T) {
	msgs := []string{"Terminate: cause A", "Terminate: cause B", "Terminate: cause A", "Terminate: cause C", "Terminate: cause B"}
	c := NewCollector()
	want := map[string][2]uint64{} // count, first frame
	for i, m := range msgs {
		frame := uint64(len(msgs) - i)
		c.Add(findingRec(i, frame, dissect.SeverityError, rdmap.CodeTerminate, m))
		w := want[m]
		if w[0] == 0 {
			w[1] = frame
		}
		want[m] = [2]uint64{w[0] + 1, min(w[1], frame)}
	}
	c.Add(findingRec(9, 1, dissect.SeverityNote, "tcp.gap", "one"))
	c.Add(findingRec(9, 2, dissect.SeverityNote, "tcp.gap", "two"))
	var b strings.Builder
	if err := c.WriteFindings(&b); err != nil {
		t.Fatal(err)
	}
	hdr, rows := tableRows(t, b.String())
	col := columns(t, hdr, "Code", "Count", "First frame", "Message")
	got := map[string][2]uint64{}
	gaps := 0
	for _, r := range rows {
		if r[col["Code"]] != rdmap.CodeTerminate {
			gaps++
			continue
		}
		n, _ := strconv.ParseUint(r[col["Count"]], 10, 64)
		f, _ := strconv.ParseUint(r[col["First frame"]], 10, 64)
		got[r[col["Message"]]] = [2]uint64{n, f}
	}
	if len(got) != len(want) || gaps != 1 {
		t.Fatalf("%d Terminate rows and %d others, want %d and 1:\n%s", len(got), gaps, len(want), b.String())
	}
	for m, w := range want {
		if got[m] != w {
			t.Errorf("%q: count and first frame %v, want %v", m, got[m], w)
		}
	}
}

// columns returns the index of each named column in a table's header.
func columns(t *testing.T, hdr []string, names ...string) map[string]int {
	t.Helper()
	col := map[string]int{}
	for _, n := range names {
		i := slices.Index(hdr, n)
		if i < 0 {
			t.Fatalf("no column %q in %q", n, hdr)
		}
		col[n] = i
	}
	return col
}

// TestConnTCPColumns: the -z conn table's TCP columns give each
// connection's conn record's TCPHealth, the records added one by one or
// taken by a Partial (as iwarpdump -q -z conn does), and "-" for a
// connection without a conn record or not over TCP.
func TestConnTCPColumns(t *testing.T) {
	tcpCols := []string{"Retrans", "ZeroWin", "Stalls", "Stalled s", "Cut"}
	cells := func(h flows.TCPHealth) []float64 {
		return []float64{float64(h.Retransmissions), float64(h.ZeroWindows), float64(h.Stalls), h.Stalled.Seconds(), float64(h.Cut)}
	}
	synthetic := func() []*flows.Record {
		conn := func(id int, h flows.TCPHealth) *flows.Record {
			return &flows.Record{Type: flows.RecConn, Frame: uint64(100 + id), TS: t0.Add(time.Second), Conn: id,
				Summary: &flows.ConnSummary{Initiator: epA, Responder: epB, InitiatorKnown: true, A: epA, B: epB,
					State: "closed", FPDUs: 1, TCP: h}}
		}
		return []*flows.Record{
			fpduRec(0, 1, 0, flows.DirI2R, rdmap.OpSend, 10),
			conn(0, flows.TCPHealth{Retransmissions: 3, ZeroWindows: 2, Stalls: 1, Stalled: 1500 * time.Millisecond, Cut: 7}),
			fpduRec(1, 2, 0, flows.DirI2R, rdmap.OpSend, 10),
			conn(1, flows.TCPHealth{Retransmissions: 123456, Stalls: 4, Stalled: 3*time.Second + 1234*time.Microsecond}),
			fpduRec(2, 3, 0, flows.DirI2R, rdmap.OpSend, 10), // no conn record
			conn(3, flows.TCPHealth{}),
		}
	}
	tests := []struct {
		name string
		file string // a bundled capture, or
		recs func() []*flows.Record
	}{
		{name: "retransmissions", file: "synth/retransmit-conflict.pcap"},
		{name: "snap length", file: "synth/snaplen.pcap"},
		{name: "siw", file: "siw/basic_ib_read_bw_4096_v2_nocrc.pcap"},
		{name: "ib_cm", file: "synthext/roce-cm-v4.pcap"},
		{name: "sctp", file: "synthext/sctp-ddp.pcap"},
		{name: "records", recs: synthetic},
	}
	for _, tc := range tests {
		for _, partial := range []bool{false, true} {
			if partial && tc.file == "" {
				continue
			}
			name := tc.name
			if partial {
				name += ", through a Partial"
			}
			t.Run(name, func(t *testing.T) {
				c := NewCollector()
				var recs []*flows.Record
				switch {
				case tc.recs != nil:
					recs = tc.recs()
				default:
					recs = testutil.Decode(t, filepath.Join("..", "testdata", tc.file), flows.Options{})
				}
				if partial {
					data, err := os.ReadFile(filepath.Join("..", "testdata", tc.file))
					if err != nil {
						t.Fatal(err)
					}
					pkts := testutil.ReadPackets(data)
					d := flows.NewDecoder(flows.Options{}, c.Add)
					d.SetLocal(c.Local(), c.Absorb)
					for i := range pkts {
						d.Packet(&pkts[i])
					}
					d.Close()
				} else {
					for _, r := range recs {
						c.Add(r)
					}
				}
				// What the records say: the TCPHealth of each TCP
				// connection's conn record.
				want := map[string]*flows.TCPHealth{}
				for _, r := range recs {
					if r.Type == flows.RecConn && r.Summary != nil {
						want[strconv.Itoa(r.Conn)] = &r.Summary.TCP
					}
				}
				var b strings.Builder
				if err := c.WriteConn(&b); err != nil {
					t.Fatal(err)
				}
				hdr, rows := tableRows(t, b.String())
				col := columns(t, hdr, append([]string{"ID"}, tcpCols...)...)
				if len(rows) == 0 {
					t.Fatalf("no rows:\n%s", b.String())
				}
				for _, r := range rows {
					if len(r) != len(hdr) {
						t.Fatalf("row %q: %d cells, want %d", r, len(r), len(hdr))
					}
					w := want[r[col["ID"]]]
					if w == nil {
						for _, n := range tcpCols {
							if r[col[n]] != "-" {
								t.Errorf("row %q without a TCP conn record: %s %s, want -", r, n, r[col[n]])
							}
						}
						continue
					}
					for i, v := range cells(*w) {
						n := tcpCols[i]
						got, err := strconv.ParseFloat(r[col[n]], 64)
						if err != nil || got != v && !(n == "Stalled s" && math.Abs(got-v) < 5e-7) {
							t.Errorf("row %q: %s %s, the conn record's %v", r, n, r[col[n]], v)
						}
					}
				}
			})
		}
	}
}

// TestRejectRowPerReason: the mpa.rejected rows of -z findings tell the
// reasons apart: the siw capture whose iwtest server rejected with
// "iwtest-server-REJECT" and the synth one with the same private data are
// one row of 2, a synth rejection with other private data ("server-full")
// a row of its own, and an RNIC's own reject of a Request with markers
// (a warning) one more; the messages name the reason (flows' rejectCause).
func TestRejectRowPerReason(t *testing.T) {
	c := synth.Conn{Initiator: netip.MustParseAddrPort("192.0.2.2:40100"), Responder: netip.MustParseAddrPort("192.0.2.1:7174"),
		Handshake: true, MPA: &synth.MPAParams{
			Request: synth.MPAFrame{Rev: 2, Enhanced: &mpa.Enhanced{IRD: 4, ORD: 4}, PD: []byte("client\x00")},
			Reply:   synth.MPAFrame{Rev: 2, R: true, Enhanced: &mpa.Enhanced{IRD: 4, ORD: 4}, PD: []byte("server-full\x00")},
		}}
	path := filepath.Join(t.TempDir(), "full.pcap")
	if _, err := synth.WriteFiles(synth.Scenario{Conns: []synth.Conn{c}}, path); err != nil {
		t.Fatal(err)
	}
	recs := decodeMerged(t, "siw/reject_app_v2.pcap", "synth/reject.pcap", "siw/mpareq_markers.pcap", path)
	col := NewCollector()
	for _, r := range recs {
		col.Add(r)
	}
	var b strings.Builder
	if err := col.WriteFindings(&b); err != nil {
		t.Fatal(err)
	}
	hdr, rows := tableRows(t, b.String())
	k := columns(t, hdr, "Severity", "Code", "Count", "Message")
	got := map[string]string{} // reason -> severity and count
	for _, r := range rows {
		if r[k["Code"]] != "mpa.rejected" {
			continue
		}
		reason := "rnic"
		for _, pd := range []string{"iwtest-server-REJECT", "server-full"} {
			if strings.Contains(r[k["Message"]], `"`+pd+`"`) {
				reason = pd
			}
		}
		got[reason] += r[k["Severity"]] + " " + r[k["Count"]]
	}
	want := map[string]string{"iwtest-server-REJECT": "note 2", "server-full": "note 1", "rnic": "warning 1"}
	if len(got) != len(want) || got["iwtest-server-REJECT"] != want["iwtest-server-REJECT"] ||
		got["server-full"] != want["server-full"] || got["rnic"] != want["rnic"] {
		t.Errorf("mpa.rejected rows %v, want %v\n%s", got, want, b.String())
	}
}

package model

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

const rping = "../../../testdata/siw/crc_v2_rping.pcap"

func rpingIndex(t testing.TB) *Index {
	t.Helper()
	x := NewIndex()
	x.Add(testutil.Decode(t, rping, flows.Options{})...)
	x.SetProgress(Progress{Done: true, Frames: 50})
	return x
}

// TestListRows: the default list of crc_v2_rping has the 35 FPDUs and 2
// MPA frames tshark decodes (MANIFEST.md), the 5 Read Responses with
// their latency (message records of one segment are not listed unless
// they carry one) and the connection summary.
func TestListRows(t *testing.T) {
	x := rpingIndex(t)
	l := NewList(x)
	if !l.Sync(time.Time{}) {
		t.Fatal("Sync did not catch up")
	}
	count := map[flows.RecordType]int{}
	for i := range l.Len() {
		count[x.Entry(l.Record(i)).Type]++
	}
	if count[flows.RecFPDU] != 35 || count[flows.RecMPA] != 2 || count[flows.RecMessage] != 5 || count[flows.RecConn] != 1 || l.Len() != 43 {
		t.Fatalf("rows by type %v (%d rows)", count, l.Len())
	}
	if l.Selected() != 0 || l.Row(0).No != "4" || l.Row(0).Kind != KindMPA || l.Row(0).Proto != "MPA" {
		t.Fatalf("first row %+v, selected %d", l.Row(0), l.Selected())
	}
}

type opcodeIs uint8

func (o opcodeIs) MatchRecord(r *flows.Record) bool {
	return r.Type == flows.RecFPDU && r.FPDU.SegOK && uint8(r.FPDU.Seg.Opcode) == uint8(o)
}

// TestListFilterKeepsSelection: a filter keeps the selected record, or
// selects the next one it passes; the connection restriction combines
// with it.
func TestListFilterKeepsSelection(t *testing.T) {
	x := rpingIndex(t)
	l := NewList(x)
	l.Sync(time.Time{})
	if !l.GotoFrame(13) {
		t.Fatal("no row for frame 13")
	}
	l.SetFilter("rdmap.opcode == 1", opcodeIs(1))
	l.Sync(time.Time{})
	if l.Len() != 5 {
		t.Fatalf("%d Read Requests, want 5", l.Len())
	}
	if f := x.Entry(l.SelectedRecord()).Frame; f != 17 {
		t.Errorf("selection after the filter: frame %d, want 17 (the next Read Request after 13)", f)
	}
	l.SetConn(1)
	l.Sync(time.Time{})
	if l.Len() != 0 || l.Selected() != -1 {
		t.Errorf("conn 1: %d rows, selected %d", l.Len(), l.Selected())
	}
	l.SetConn(0)
	l.SetFilter("", nil)
	l.Sync(time.Time{})
	if l.Len() != 43 {
		t.Errorf("no filter: %d rows", l.Len())
	}
}

// TestListFollowsIndex: rows appear as the index grows; Sync with a
// deadline in the past does one slice of work and reports it is behind.
func TestListFollowsIndex(t *testing.T) {
	recs := testutil.Decode(t, rping, flows.Options{})
	x := NewIndex()
	l := NewList(x)
	l.SetFilter("op", opcodeIs(3))
	for _, r := range recs {
		x.Add(r)
		l.Sync(time.Now().Add(-time.Second))
	}
	x.SetProgress(Progress{Done: true})
	l.Sync(time.Time{})
	if l.Len() != 20 { // MANIFEST.md: 20 x 0x03 (Send)
		t.Fatalf("%d Sends, want 20", l.Len())
	}
	if l.Selected() != 0 {
		t.Errorf("selected %d", l.Selected())
	}
}

// TestListSearchAndWindow: search wraps around; the window follows the
// selection and the wheel moves it alone.
func TestListSearchAndWindow(t *testing.T) {
	x := rpingIndex(t)
	l := NewList(x)
	l.Sync(time.Time{})
	l.GotoFrame(45)
	l.Search("mpa reply", true)
	l.Sync(time.Time{})
	if running, found := l.SearchResult(); running || !found || l.Row(l.Selected()).No != "6" {
		t.Fatalf("search: running %v found %v row %+v", running, found, l.Row(l.Selected()))
	}
	l.Search("no such text", true)
	l.Sync(time.Time{})
	if _, found := l.SearchResult(); found {
		t.Error("found what is not there")
	}
	l.Select(30)
	if top := l.Window(10); top != 21 {
		t.Errorf("window top %d, want 21", top)
	}
	l.Scroll(-5)
	if top := l.Window(10); top != 16 {
		t.Errorf("after the wheel: top %d, want 16", top)
	}
	l.Move(-20)
	if top := l.Window(10); top != 10 {
		t.Errorf("after moving up: top %d, want 10", top)
	}
}

// TestTreeExpansionPersists: rdmap.read starts collapsed; expanded on one
// Read Request it stays so on the next; descriptions come from the
// registry.
func TestTreeExpansionPersists(t *testing.T) {
	x := rpingIndex(t)
	l := NewList(x)
	l.Sync(time.Time{})
	tr := NewTree()
	l.GotoFrame(9)
	tr.SetRecord(x.Record(l.SelectedRecord()))
	var read *Node
	for _, v := range tr.Visible() {
		if v.Node.Path == "rdmap.read" {
			read = v.Node
		}
		if v.Node.Path == "rdmap.read.size" {
			t.Fatal("rdmap.read expanded by default")
		}
	}
	if read == nil || read.Desc != "RDMA Read Request header" || read.Ref != "RFC 5040 §4.4" {
		t.Fatalf("rdmap.read node %+v", read)
	}
	tr.SetCurrent("rdmap.read")
	tr.Expand()
	l.GotoFrame(17)
	tr.SetRecord(x.Record(l.SelectedRecord()))
	if tr.Current() == nil || tr.Current().Path != "rdmap.read" {
		t.Fatalf("current node %v", tr.Current())
	}
	tr.Move(3)
	if n := tr.Current(); n.Path != "rdmap.read.size" || n.Label != "rdmap.read.size: 64" || n.Name != "rdmap.read.size" {
		t.Fatalf("3 below rdmap.read: %+v", n)
	}
	tr.Collapse()
	tr.Collapse()
	if tr.Current().Path != "rdmap.read" {
		t.Errorf("collapse went to %s", tr.Current().Path)
	}
}

// TestSafe: control characters and bidirectional overrides are escaped.
func TestSafe(t *testing.T) {
	if got := Safe("a\x1b[31mb\u202e"); got != `a\x1b[31mb\u202e` {
		t.Errorf("Safe: %q", got)
	}
}

// TestStateFilterError: a filter that does not compile leaves the list as
// it was and says where.
func TestStateFilterError(t *testing.T) {
	x := rpingIndex(t)
	compile := func(expr string) (Matcher, error) {
		if strings.HasPrefix(expr, "bad") {
			return nil, &FilterError{Pos: 3, Msg: "nope"}
		}
		if expr == "broken" {
			return nil, errors.New("other failure")
		}
		return opcodeIs(0), nil
	}
	s := NewState("x", x, nil, compile)
	s.Sync(time.Time{})
	if s.ApplyFilter("bad filter") || s.FilterErr.Pos != 3 || s.FilterErr.Error() != "column 4: nope" || s.List.Filter() != "" {
		t.Fatalf("bad filter: %+v", s.FilterErr)
	}
	if s.ApplyFilter("broken") || s.FilterErr.Pos != 0 {
		t.Fatalf("broken: %+v", s.FilterErr)
	}
	if !s.ApplyFilter("writes") {
		t.Fatal("good filter refused")
	}
	s.Sync(time.Time{})
	if s.List.Len() != 5 || !strings.Contains(s.StatusLine(), "filtered") {
		t.Fatalf("%d rows; status %q", s.List.Len(), s.StatusLine())
	}
	if s.HexNote() != "octets not available" {
		t.Errorf("hex note without frames: %q", s.HexNote())
	}
}

// TestBuildHexFrames: octets spread over two frames come out under two
// headers at their frame offsets; an octet a retransmission repeats is
// shown once; octets no frame holds are named.
func TestBuildHexFrames(t *testing.T) {
	f := &flows.FPDURecord{Seq: 1000, Len: 24, ULPDULen: 18, Pad: 0}
	l := NewLayout(&flows.Record{Type: flows.RecFPDU, FPDU: f})
	a := RawFrame{Frame: 7, TCP: true, Seq: 990, PayloadOff: 54}
	a.Data = make([]byte, 54+20)
	a.Payload = a.Data[54:]
	b := RawFrame{Frame: 8, TCP: true, Seq: 1005, PayloadOff: 66}
	b.Data = make([]byte, 66+10)
	b.Payload = b.Data[66:]
	lines := BuildHex(l, []RawFrame{a, b}, l.Spans("mpa.crc"))
	var heads []string
	hi := 0
	for _, ln := range lines {
		if ln.Header != "" {
			heads = append(heads, ln.Header)
		}
		for _, c := range ln.Cells {
			if c.Hi {
				hi++
			}
		}
	}
	want := []string{
		"frame 7: octets 0-9 of 24 (seq 1000)",
		"frame 8: octets 10-14 of 24 (seq 1010)",
		"octets 15-23 not in the capture",
	}
	if strings.Join(heads, "|") != strings.Join(want, "|") {
		t.Fatalf("headers %q", heads)
	}
	if hi != 0 {
		t.Errorf("%d CRC octets highlighted, but the CRC is not in the capture", hi)
	}
	if lines[1].Off != 64 || !lines[1].Cells[0].Valid || lines[1].Cells[0].Class != ClassLength {
		t.Errorf("first octet line %+v", lines[1])
	}
}

// TestLadderReadSize: the ladder labels an RDMA Read Request with the
// size it asks for, as iwarpdump's line for the same frame does ("size
// 4096" in frame 33 of basic_ib_read_bw; "size 0" for the zero-length
// RTR Read of p2p_rtr2_rping, PROTOCOL.md D.2), not with its payload (a
// Read Request has none); other messages keep their length.
func TestLadderReadSize(t *testing.T) {
	tests := []struct {
		file  string
		frame uint64
		op    string
		want  string
	}{
		{"basic_ib_read_bw_4096_v2_nocrc.pcap", 33, "RDMA Read Request", "RDMA Read Request size 4096"},
		{"basic_ib_read_bw_4096_v2_nocrc.pcap", 40, "RDMA Read Response", "RDMA Read Response 4096 B in 3 segments"},
		{"p2p_rtr2_rping.pcap", 8, "RDMA Read Request", "RDMA Read Request size 0"},
	}
	for _, tc := range tests {
		t.Run(tc.file+"/"+strconv.FormatUint(tc.frame, 10), func(t *testing.T) {
			x := NewIndex()
			x.Add(testutil.Decode(t, "../../../testdata/siw/"+tc.file, flows.Options{})...)
			found := false
			for i := range x.Len() {
				r := x.Record(i)
				if r.Type != flows.RecMessage || r.Message.FirstFrame != tc.frame || r.Message.Opcode.String() != tc.op {
					continue
				}
				found = true
				if got := x.LadderRow(i).Label; got != tc.want && !strings.HasPrefix(got, tc.want+" ") {
					t.Errorf("label %q, want %q", got, tc.want)
				}
			}
			if !found {
				t.Fatalf("no %s message at frame %d", tc.op, tc.frame)
			}
		})
	}
}

// TestSeverityMarks: a record with findings starts its Info with the mark
// of its highest severity, so that the mark is never cut off, and a
// warning gets its own kind (colour); errors stay findings (red) and a
// Terminate stays a Terminate. Severities from iwarpdump's text for the
// same frames: term_badwrite frame 8 "warning mpa.responder_first",
// frame 11 "error rdmap.terminate" with two notes; basic_ib_read_bw
// frame 14 "note mpa.pad_nonzero" alone; crc_v2_rping frame 9 none.
func TestSeverityMarks(t *testing.T) {
	tests := []struct {
		file     string
		frame    uint64
		mark     string
		kind     Kind
		codeTail string
	}{
		{"term_badwrite.pcap", 8, "⚠ ", KindWarning, "[mpa.responder_first]"},
		{"term_badwrite.pcap", 11, "✖ ", KindTerminate, "[rdmap.terminate +2]"},
		{"basic_ib_read_bw_4096_v2_nocrc.pcap", 14, "✎ ", KindSend, "[mpa.pad_nonzero]"},
		{"crc_v2_rping.pcap", 9, "", KindRead, ""},
	}
	for _, tc := range tests {
		t.Run(tc.file+"/"+strconv.FormatUint(tc.frame, 10), func(t *testing.T) {
			var row *Row
			for i, r := range testutil.Decode(t, "../../../testdata/siw/"+tc.file, flows.Options{}) {
				if r.Type == flows.RecFPDU && r.Frame == tc.frame {
					rw := MakeRow(i, r)
					row = &rw
					break
				}
			}
			if row == nil {
				t.Fatalf("no FPDU in frame %d", tc.frame)
			}
			if tc.mark == "" {
				for _, m := range []string{MarkError, MarkWarning, MarkNote} {
					if strings.Contains(row.Info, m) {
						t.Errorf("Info %q has a mark, the record has no finding", row.Info)
					}
				}
			} else if !strings.HasPrefix(row.Info, tc.mark) {
				t.Errorf("Info %q does not start with %q", row.Info, tc.mark)
			}
			if !strings.HasSuffix(row.Info, tc.codeTail) {
				t.Errorf("Info %q does not end with %q", row.Info, tc.codeTail)
			}
			if row.Kind != tc.kind {
				t.Errorf("kind %v, want %v", row.Kind, tc.kind)
			}
		})
	}
}

// TestGotoFrameLate: on a capture that starts mid-stream, the records of a
// direction framed late come after later frames' records (docs/jsonl.md);
// going to any frame selects its first row, or the first row of the
// nearest frame after it, as a search through every row finds them, in
// the whole list and in a filtered one.
func TestGotoFrameLate(t *testing.T) {
	x := NewIndex()
	x.Add(testutil.Decode(t, "../../../testdata/midstream/iwtest_ops_from_frame15.pcap", flows.Options{})...)
	x.SetProgress(Progress{Done: true, Frames: 100})
	late := 0
	for i := range x.Len() {
		if x.Entry(i).Flags&FlagLate != 0 {
			late++
		}
	}
	if late == 0 {
		t.Fatal("no record out of frame order: the test needs some")
	}
	want := func(l *List, f uint64) (rec int) {
		rec = -1
		for i := range l.Len() {
			r := l.Record(i)
			if g := x.Entry(r).Frame; g >= f && (rec < 0 || g < x.Entry(rec).Frame) {
				rec = r
			}
		}
		return rec
	}
	for _, filtered := range []bool{false, true} {
		l := NewList(x)
		if filtered {
			l.SetFilter("rdmap.opcode == 1", opcodeIs(1))
		}
		l.Sync(time.Time{})
		if l.Len() == 0 {
			t.Fatal("empty list")
		}
		for f := uint64(1); f <= 70; f++ {
			w := want(l, f)
			found := l.GotoFrame(f)
			got := l.SelectedRecord()
			if w < 0 {
				if found {
					t.Errorf("filtered %v: frame %d found, no row has it or a later frame", filtered, f)
				}
				continue
			}
			if got != w || found != (x.Entry(w).Frame == f) {
				t.Errorf("filtered %v: GotoFrame(%d) selected record %d (frame %d), found %v; want record %d (frame %d)",
					filtered, f, got, x.Entry(got).Frame, found, w, x.Entry(w).Frame)
			}
		}
	}
	for f := uint64(1); f <= 70; f++ {
		w := x.Len()
		for i := range x.Len() {
			if g := x.Entry(i).Frame; g >= f && (w == x.Len() || g < x.Entry(w).Frame) {
				w = i
			}
		}
		if got := x.AtFrame(f); got != w {
			t.Errorf("AtFrame(%d) = %d, want %d", f, got, w)
		}
	}
}

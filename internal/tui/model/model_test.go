package model

import (
	"errors"
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

// TestLookup: names inside nested objects find their registry entries.
func TestLookup(t *testing.T) {
	for path, want := range map[string]string{
		"rdmap.term.ddp.stag":             "ddp.stag",
		"rdmap.term.rdmap.read.sink_stag": "rdmap.read.sink_stag",
		"mpa.markers[2].fpduptr":          "mpa.marker.fpduptr",
		"findings[0].code":                "code",
		"enhanced.ird":                    "enhanced.ird",
	} {
		f, ok := lookup(path)
		if !ok || f.Name != want {
			t.Errorf("lookup(%q) = %q %v, want %q", path, f.Name, ok, want)
		}
	}
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

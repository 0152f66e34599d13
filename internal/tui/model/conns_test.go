package model

import (
	"strconv"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/flows"
)

// TestConnRowTCP: the TCP columns of the connection table are the conn
// record's flows.TCPHealth, as -z conn prints them, and "-" while the
// connection is open (no conn record yet).
func TestConnRowTCP(t *testing.T) {
	if len(ConnColumns) != 18 || ConnColumns[13] != "Retrans" || ConnColumns[17] != "Cut" {
		t.Fatalf("columns %v", ConnColumns)
	}
	open := ConnRow(ConnInfo{ID: 3})
	for _, c := range open[13:] {
		if c != "-" {
			t.Errorf("open connection: TCP cells %v", open[13:])
		}
	}
	h := flows.TCPHealth{Retransmissions: 5, ZeroWindows: 3, Stalls: 1, Stalled: 6200 * time.Millisecond, Cut: 101}
	row := ConnRow(ConnInfo{ID: 3, Summary: &flows.ConnSummary{TCP: h}})
	want := []string{strconv.Itoa(h.Retransmissions), strconv.Itoa(h.ZeroWindows), strconv.Itoa(h.Stalls), "6.200000", strconv.Itoa(h.Cut)}
	if len(row) != len(ConnColumns) {
		t.Fatalf("%d cells for %d columns", len(row), len(ConnColumns))
	}
	for i, w := range want {
		if row[13+i] != w {
			t.Errorf("%s = %q, want %q", ConnColumns[13+i], row[13+i], w)
		}
	}
}

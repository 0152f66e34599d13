package model_test

import (
	"fmt"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/tui/model"
)

// readRequests is a display filter: RDMA Read Requests (RFC 5040 §4.4).
type readRequests struct{}

func (readRequests) MatchRecord(r *flows.Record) bool {
	return r.Type == flows.RecFPDU && r.FPDU.SegOK && r.FPDU.Seg.Opcode == rdmap.OpReadRequest
}

// Example indexes records, filters the list and lays out the octets of
// the selected record's fields.
func Example() {
	x := model.NewIndex()
	x.Add(&flows.Record{Type: flows.RecFPDU, Frame: 9, Conn: 0, FPDU: &flows.FPDURecord{
		Seq: 1000, Len: 48, ULPDULen: 42, Frames: []uint64{9},
		SegOK: true, Seg: rdmap.Segment{Opcode: rdmap.OpReadRequest},
	}})
	x.SetProgress(model.Progress{Done: true})

	l := model.NewList(x)
	l.Sync(time.Time{})
	fmt.Println("rows:", l.Len())
	l.SetFilter("rdmap.opcode == 1", readRequests{})
	l.Sync(time.Time{})
	fmt.Println("read requests:", l.Len())

	lay := model.NewLayout(x.Record(0))
	fmt.Println("ULPDU_Length:", lay.Spans("mpa.ulpdu_len"), "CRC:", lay.Spans("mpa.crc"))
	// Output:
	// rows: 1
	// read requests: 1
	// ULPDU_Length: [{0 2}] CRC: [{44 48}]
}

package model

import (
	"strconv"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
)

// ConnColumns are the columns of the connection table, as iwarpdump -z
// conn prints them.
var ConnColumns = [...]string{"ID", "Initiator", "Responder", "State", "Rev", "CRC", "Markers i2r/r2i", "Reply IRD/ORD", "FPDUs", "Messages", "Octets", "CRC errors", "Findings",
	"Retrans", "ZeroWin", "Stalls", "Stalled s", "Cut"}

// ConnRow returns the cells of connection c: from its summary once the
// decoder closed it, from what the index counted while it is open ("-"
// where nothing is known; "(?)" marks endpoints whose roles are unknown).
func ConnRow(c ConnInfo) []string {
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	row := []string{strconv.Itoa(c.ID), "-", "-", "open", "-", "-", "-", "-",
		strconv.Itoa(c.FPDUs), strconv.Itoa(c.Messages), strconv.FormatUint(c.Octets, 10),
		strconv.Itoa(c.CRCErrors), strconv.Itoa(c.Findings), "-", "-", "-", "-", "-"}
	if s := c.Summary; s != nil {
		row[3] = s.State
		if s.InitiatorKnown {
			row[1], row[2] = s.Initiator.String(), s.Responder.String()
		} else if c.A.IsValid() {
			row[1], row[2] = c.A.String()+" (?)", c.B.String()+" (?)"
		}
		if s.HaveRequest || s.HaveReply {
			row[4] = strconv.Itoa(int(s.Rev))
			row[5] = onOff(s.CRC)
		}
		if s.InitiatorKnown && (s.HaveRequest || s.HaveReply || s.FPDUs > 0) {
			row[6] = onOff(s.MarkersI2R) + "/" + onOff(s.MarkersR2I)
		}
		if s.Enhanced {
			row[7] = strconv.Itoa(int(s.IRD)) + "/" + strconv.Itoa(int(s.ORD))
		}
		row[8], row[9] = strconv.Itoa(s.FPDUs), strconv.Itoa(s.Messages)
		row[10], row[11], row[12] = strconv.FormatUint(s.Octets, 10), strconv.Itoa(s.CRCErrors), strconv.Itoa(s.Findings)
		// How its TCP fared (flows.TCPHealth), as -z conn prints it.
		h := &s.TCP
		row[13], row[14], row[15] = strconv.Itoa(h.Retransmissions), strconv.Itoa(h.ZeroWindows), strconv.Itoa(h.Stalls)
		row[16], row[17] = strconv.FormatFloat(h.Stalled.Seconds(), 'f', 6, 64), strconv.Itoa(h.Cut)
		return row
	}
	if c.A.IsValid() {
		row[1], row[2] = c.A.String(), c.B.String()
		if !c.HaveRequest {
			row[1] += " (?)"
			row[2] += " (?)"
		}
	}
	if c.HaveRequest || c.HaveReply {
		row[4] = strconv.Itoa(int(c.Rev))
		row[5] = onOff(c.CRC)
		row[6] = onOff(c.MarkersI2R) + "/" + onOff(c.MarkersR2I)
		if c.Rejected {
			row[3] = "rejected"
		}
	}
	return row
}

// LadderRow is one RDMA message of a connection's ladder: who sent it and
// what it was, with the Read Request an RDMA Read Response answers and the
// time between them (RFC 5040 §4.4, §5.2).
type LadderRow struct {
	Rec     int
	Frame   uint64
	Time    string
	Dir     flows.Dir
	Label   string // "Send 16 B", "RDMA Read Response 64 B"
	Detail  string // "request frame 9, latency 1.222ms" for a Read Response
	Brief   string // Detail in a narrow ladder: "req 9, 1.222ms"
	Kind    Kind
	Request bool // an RDMA Read Request (the responder will answer it)
}

// MakeLadderRow formats a message record for the ladder.
func MakeLadderRow(i int, r *flows.Record) LadderRow {
	m := r.Message
	row := LadderRow{Rec: i, Frame: r.Frame, Time: Clock(r), Dir: r.Dir, Kind: KindOf(r)}
	if m == nil {
		row.Label = r.Type.String()
		return row
	}
	row.Label = m.Opcode.String()
	if m.Opcode != rdmap.OpReadRequest {
		// A Read Request carries no payload: its size is the one it asks
		// for (RFC 5040 §4.4), which Index.LadderRow adds.
		row.Label += " " + strconv.FormatUint(m.Length, 10) + " B"
	}
	if m.Segments > 1 {
		row.Label += " in " + strconv.Itoa(m.Segments) + " segments"
	}
	switch {
	case m.Opcode == rdmap.OpReadRequest:
		row.Request = true
	case m.Opcode == rdmap.OpReadResponse && m.RequestFrame != 0:
		lat := m.Latency.Round(time.Microsecond).String()
		row.Detail = "request frame " + strconv.FormatUint(m.RequestFrame, 10) + ", latency " + lat
		row.Brief = "req " + strconv.FormatUint(m.RequestFrame, 10) + ", " + lat
	case m.Opcode == rdmap.OpReadResponse:
		row.Detail, row.Brief = "request not captured", "no request"
	}
	if m.Tagged {
		row.Label += " STag 0x" + strconv.FormatUint(uint64(m.STag), 16)
	}
	return row
}

// LadderRow formats message record rec for the ladder, as MakeLadderRow,
// and labels an RDMA Read Request with the size it asks for ("size 4096",
// RFC 5040 §4.4 RDMA Read Message Size, as the list shows it), read from
// the FPDU that carried it.
func (x *Index) LadderRow(rec int) LadderRow {
	r := x.Record(rec)
	row := MakeLadderRow(rec, r)
	if row.Request {
		if rr, cut, ok := x.readRequest(r); ok {
			if _, _, size, _, _ := rdmap.ReadRequestKnown(cut); size {
				row.Label += " size " + strconv.FormatUint(uint64(rr.Size), 10)
			}
		}
	}
	return row
}

// readRequest finds the Read Request header of message record r: the
// FPDU of the same connection and direction in the message's frame that
// is a Read Request with the message's MSN (RFC 5040 §5.2: Read Requests
// travel untagged on queue 1).
func (x *Index) readRequest(r *flows.Record) (rr rdmap.ReadRequest, cut int, ok bool) {
	m := r.Message
	if m == nil || m.Opcode != rdmap.OpReadRequest {
		return rdmap.ReadRequest{}, 0, false
	}
	for i := x.AtFrame(m.FirstFrame); i < x.Len(); i++ {
		e := x.Entry(i)
		if e.Frame != m.FirstFrame {
			break
		}
		if e.Type != flows.RecFPDU || int(e.Conn) != r.Conn || e.Dir != r.Dir {
			continue
		}
		f := x.Record(i).FPDU
		if f != nil && f.SegOK && f.Seg.Opcode == rdmap.OpReadRequest && !f.Seg.DDP.T && f.Seg.DDP.MSN == m.MSN {
			return f.Seg.Read, f.Seg.HdrCut, true
		}
	}
	return rdmap.ReadRequest{}, 0, false
}

// NewLadder returns the list of RDMA messages of connection c, in frame
// order.
func NewLadder(x *Index, c int) *List {
	l := NewListOf(x, func(e *Entry) bool { return e.Type == flows.RecMessage })
	l.SetConn(c)
	return l
}

// FindingColumns are the columns of the findings view.
var FindingColumns = [...]string{"Frame", "Severity", "Code", "Conn", "Message"}

// FindingRow returns the cells of finding ref, whose record is r.
func FindingRow(ref FindingRef, r *flows.Record) []string {
	f := r.Finding
	if ref.Sub >= 0 {
		if fs := attached(r); ref.Sub < len(fs) {
			f = &fs[ref.Sub]
		}
	}
	if f == nil {
		return []string{strconv.FormatUint(ref.Frame, 10), "", "", "", ""}
	}
	msg := Safe(f.Msg)
	if f.Ref != "" {
		msg += " [" + Safe(f.Ref) + "]"
	}
	return []string{strconv.FormatUint(ref.Frame, 10), f.Severity.String(), Safe(f.Code), strconv.Itoa(r.Conn), msg}
}

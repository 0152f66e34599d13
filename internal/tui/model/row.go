package model

import (
	"bytes"
	"strconv"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// Row is one formatted line of the record list.
type Row struct {
	Rec   int    // record index
	No    string // frame number
	Time  string // UTC time of day, microseconds, or as List.SetTimeFormat says
	Src   string
	Dst   string
	Proto string
	Info  string // the record's iwarpdump text line after the endpoints
	Kind  Kind
}

// Columns are the list's column titles, in Row field order.
var Columns = [...]string{"No.", "Time", "Source", "Destination", "Protocol", "Info"}

// Cell returns column c of the row.
func (r *Row) Cell(c int) string {
	switch c {
	case 0:
		return r.No
	case 1:
		return r.Time
	case 2:
		return r.Src
	case 3:
		return r.Dst
	case 4:
		return r.Proto
	}
	return r.Info
}

// Clock formats a record time as the text output does: UTC hh:mm:ss and
// microseconds.
func Clock(r *flows.Record) string {
	return r.TS.UTC().Format("15:04:05.000000")
}

// Protocol names the layer a record belongs to, for the Protocol column.
func Protocol(r *flows.Record) string {
	switch r.Type {
	case flows.RecMPA:
		return "MPA"
	case flows.RecFPDU:
		if r.FPDU.SegOK {
			return "DDP/RDMAP"
		}
		return "MPA"
	case flows.RecMessage:
		return "RDMA msg"
	case flows.RecFinding:
		return "expert"
	case flows.RecConn:
		return "conn"
	}
	return r.Type.String()
}

// Severity marks lead the Info column of a record with findings, so that
// they are seen however narrow the column and without colour: one glyph
// per severity (Wireshark's expert info levels).
const (
	MarkError   = "✖"
	MarkWarning = "⚠"
	MarkNote    = "✎"
)

// SeverityMark returns the mark of severity s followed by a space, ""
// for none.
func SeverityMark(s dissect.Severity) string {
	switch {
	case s >= dissect.SeverityError:
		return MarkError + " "
	case s == dissect.SeverityWarning:
		return MarkWarning + " "
	case s == dissect.SeverityNote:
		return MarkNote + " "
	}
	return ""
}

// Summary returns the record's line as iwarpdump prints it, without the
// frame, time and endpoints ("RDMA Read Request sink STag ..."), led by
// the mark of its highest finding severity (SeverityMark) and followed by
// the code of its first attached finding, if any.
func Summary(r *flows.Record) string {
	return SeverityMark(Severity(r)) + summary(r)
}

func summary(r *flows.Record) string {
	line := format.AppendText(nil, r, format.TextOptions{})
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	if r.Type == flows.RecMessage && len(line) == 0 {
		// A single-segment message: the text output leaves it out.
		line = []byte("0 00:00:00.000000 x: ")
		line = append(line, messageLine(r.Message)...)
	}
	skip := len(strconv.FormatUint(r.Frame, 10)) + 1 + len("15:04:05.000000") + 1
	if skip > len(line) {
		return string(line)
	}
	rest := line[skip:]
	if j := bytes.Index(rest, []byte(": ")); j >= 0 {
		rest = rest[j+2:]
	}
	s := string(rest)
	if fs := attached(r); len(fs) > 0 {
		s += "  [" + fs[0].Code
		if len(fs) > 1 {
			s += " +" + strconv.Itoa(len(fs)-1)
		}
		s += "]"
	}
	return s
}

func messageLine(m *flows.MessageRecord) string {
	s := "message " + m.Opcode.String() + " " + strconv.FormatUint(m.Length, 10) + " octets in " + strconv.Itoa(m.Segments)
	if m.Segments == 1 {
		s += " segment"
	} else {
		s += " segments"
	}
	return s + " frames " + strconv.FormatUint(m.FirstFrame, 10) + "-" + strconv.FormatUint(m.LastFrame, 10)
}

// Endpoints returns the source and destination shown for a record: its
// own, or a connection summary's initiator and responder.
func Endpoints(r *flows.Record) (string, string) {
	if r.Type == flows.RecConn && r.Summary != nil && r.Summary.InitiatorKnown {
		return r.Summary.Initiator.String(), r.Summary.Responder.String()
	}
	var s, d string
	if r.Src.IsValid() {
		s = r.Src.String()
	}
	if r.Dst.IsValid() {
		d = r.Dst.String()
	}
	return s, d
}

// MakeRow formats record r (index i) for the list.
func MakeRow(i int, r *flows.Record) Row {
	s, d := Endpoints(r)
	return Row{
		Rec:   i,
		No:    strconv.FormatUint(r.Frame, 10),
		Time:  Clock(r),
		Src:   s,
		Dst:   d,
		Proto: Protocol(r),
		Info:  Summary(r),
		Kind:  KindOf(r),
	}
}

package model

import (
	"bytes"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// TimeText formats t as iwarpdump's text lines give a record's time under
// o.Time (-t, tshark's -t formats), with o.Ref the first packet's time
// (r) and o.Prev the time of the previous row shown (dd). The text comes
// from format.AppendText, so that the list and iwarpdump never disagree:
// it formats a line of a bare finding record, whose time sits between the
// frame number and " conn ".
func TimeText(t time.Time, o format.TextOptions) string {
	r := flows.Record{Type: flows.RecFinding, Finding: &dissect.Finding{}, TS: t}
	line := format.AppendText(make([]byte, 0, 64), &r, format.TextOptions{Time: o.Time, Ref: o.Ref, Prev: o.Prev, Quiet: true})
	line = line[min(2, len(line)):] // "0 "
	if i := bytes.Index(line, []byte(" conn ")); i >= 0 {
		line = line[:i]
	}
	return string(line)
}

// TimeWidth returns the width of the time column for format f: the
// widest time it writes (for r and dd, up to 99999 seconds, some 28
// hours, before the column cuts the text).
func TimeWidth(f format.TimeFormat) int {
	switch f {
	case format.TimeUTCDate, format.TimeLocalDate:
		return len("2006-01-02 15:04:05.000000")
	case format.TimeEpoch:
		return len("1795313467.706735")
	case format.TimeRelative, format.TimeDelta:
		return len("99999.999999")
	}
	return len("15:04:05.000000")
}

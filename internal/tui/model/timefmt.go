package model

import (
	"time"

	"github.com/iwarpkit/iwarpkit/format"
)

// TimeText formats t as iwarpdump's text lines give a record's time under
// o.Time (-t, tshark's -t formats), with o.Ref the first packet's time
// (r) and o.Prev the time of the previous row shown (dd): format renders
// both, so that the list and iwarpdump never disagree.
func TimeText(t time.Time, o format.TextOptions) string {
	return string(o.AppendTime(make([]byte, 0, 32), t))
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

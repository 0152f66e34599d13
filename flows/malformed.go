package flows

import (
	"errors"
	"strconv"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect"
)

// badTCP reports p, a segment whose TCP header could not be decoded
// (capture.Packet.BadTCP), on its connection when that is an iWARP one
// (tcp.malformed): its octets are not in the stream, which has a hole
// there, and the tcp.gap that follows is not capture loss. tshark marks
// such a segment tcp.bogus_header_length (or a malformed packet).
func (d *Decoder) badTCP(p *capture.Packet) {
	c := d.conns[keyOf(p.Src, p.Dst)]
	if c == nil || c.summarised || !c.isIWARP() {
		return
	}
	why := "its Data Offset runs past the end of the frame, captured whole"
	var de *dissect.DecodeError
	switch {
	case errors.As(p.Err, &de) && errors.Is(de.Err, dissect.ErrBadLength):
		why = "its Data Offset is below the 5 words of the fixed header"
	case p.CapLen < p.WireLen:
		return // the snap length cut it: not malformed
	}
	c.hint = frameTS{p.Frame, p.TS}
	c.finding(nil, dissect.SeverityWarning, "tcp.malformed",
		"the TCP header of frame "+strconv.FormatUint(p.Frame, 10)+" from "+p.Src.String()+" cannot be decoded: "+why+
			". Its octets are left out, and the stream has a hole there (a tcp.gap that is not capture loss)",
		"RFC 9293 §3.1", p.Frame)
}

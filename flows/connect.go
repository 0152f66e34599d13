package flows

import (
	"strconv"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ibcm"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
)

// Failed connects (finding tcp.connect_failed). An RDMA connection over
// iWARP starts with a TCP connection (RFC 5044 §7.1); when that fails, no
// octet of iWARP is ever sent and the connection is not iWARP to the
// decoder, but "why did my RDMA connection fail?" has its answer there: the
// host refused the SYN with a reset (RFC 9293 §3.10.7.1: no listener), or
// never answered it (the SYN sent again and again, RFC 6298 §5.7: the
// host is down or unreachable, or a firewall drops it). Only connects to
// the ports of RDMA services are reported (iwarpService), so that the
// other TCP traffic of a capture stays out of the output.

// connectState is what a connection's handshake showed (conn.handshake).
type connectState struct {
	syns      uint32 // SYNs without ACK
	synAcked  bool   // a SYN-ACK came
	refused   uint64 // the frame of the reset that answered the SYN, 0 if none
	lastSyn   uint64 // the last SYN's frame
	lastSynNs int64  // and its time, Unix nanoseconds
	failed    string // the conn record's state: "refused" or "unanswered"
	// The first FIN and the first RST: their frames (0: none) and sides.
	fin, rst     uint64
	finBy, rstBy side
}

// handshake notes the SYN, SYN-ACK, FIN or RST p from side s.
func (c *conn) handshake(p *capture.Packet, s side) {
	h := &c.connect
	if p.Flags&capture.FlagFIN != 0 && h.fin == 0 {
		h.fin, h.finBy = p.Frame, s
	}
	if p.Flags&capture.FlagRST != 0 && h.rst == 0 {
		h.rst, h.rstBy = p.Frame, s
	}
	switch {
	case p.Flags&capture.FlagSYN != 0 && p.Flags&capture.FlagACK == 0:
		h.syns++
		h.lastSyn, h.lastSynNs = p.Frame, p.TS.UnixNano()
	case p.Flags&capture.FlagSYN != 0:
		h.synAcked = true
	case p.Flags&capture.FlagRST != 0 && !h.synAcked && h.refused == 0 && c.initiator != noSide && s != c.initiator:
		h.refused = p.Frame
	}
}

// rejectCause says why the Reply m rejected the connection, as far as its
// private data tells (RFC 5044 §7.1.1): text the application gave
// (rdma_reject's private data), or nothing at all (zeros after the
// Enhanced data), which is how an RNIC's own MPA-level reject looks (Linux
// siw sends 4 zero octets), with the Request's likely offence. An
// application's reject is a note; an MPA-level one, a setting the two
// ends do not share, a warning.
func (c *conn) rejectCause(m *MPARecord) (dissect.Severity, string) {
	pd := m.Frame.PD
	if m.HasEnhanced {
		pd = pd[mpa.EnhancedLen:]
	}
	if text, ok := printable(pd); ok {
		return dissect.SeverityNote, "its private data reads \"" + text + "\" (the application's reason)"
	}
	for _, b := range pd {
		if b != 0 {
			return dissect.SeverityNote, "its private data (" + plural(len(pd), "octet") + ") is the application's"
		}
	}
	why := "the Reply carries no application data, as an RNIC's own MPA-level reject (Linux siw sends 4 zero octets)"
	if len(m.Frame.PD) > len(pd) && m.Enhanced.IRD == 0 && m.Enhanced.ORD == 0 {
		why += ", with IRD and ORD 0"
	}
	q := c.req
	switch {
	case q == nil:
		return dissect.SeverityWarning, why
	case q.Frame.M:
		return dissect.SeverityWarning, why + ": the Request (frame " + strconv.FormatUint(c.reqFrame, 10) +
			") asked for markers (M=1), which Linux siw and most RNICs refuse"
	case q.Frame.C != m.Frame.C:
		return dissect.SeverityWarning, why + ": the Request (frame " + strconv.FormatUint(c.reqFrame, 10) +
			") and the Reply disagree on CRC (C=" + strconv.Itoa(b2i(q.Frame.C)) + " and C=" + strconv.Itoa(b2i(m.Frame.C)) +
			"), which a responder that requires its own CRC setting refuses (siw's mpa_crc_strict)"
	}
	return dissect.SeverityWarning, why + ": check the Request's revision and flags against what the responder supports"
}

// printable returns b as text when it is printable ASCII (3 characters or
// more), a C string's trailing NULs left out.
func printable(b []byte) (string, bool) {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	if len(b) < 3 {
		return "", false
	}
	for _, x := range b {
		if x < 0x20 || x > 0x7e || x == '"' || x == '\\' {
			return "", false
		}
	}
	return string(b), true
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// iwarpService names the RDMA service whose port port is, or "": the
// well-known RDMA ports (dissect/ibcm), less those that plain TCP services
// use as much (NFS's 2049, NVMe-oF discovery's 8009, AJP's too).
func iwarpService(port uint16) string {
	switch n := ibcm.ServiceName(port); n {
	case "nfs", "nvme-disc":
		return ""
	default:
		return n
	}
}

// connectFailed reports, for a connection that never carried an octet, a
// connect to an RDMA service's port that the host refused or never
// answered; the connection then has a conn record, whose state says which.
func (c *conn) connectFailed() bool {
	h := &c.connect
	if h.syns == 0 || h.synAcked || c.initiator == noSide || c.dirs[0].seqKnown || c.dirs[1].seqKnown {
		return false
	}
	to := c.endpoint(1 - c.initiator)
	svc := iwarpService(to.Port())
	if svc == "" {
		return false
	}
	msg := c.endpoint(c.initiator).String() + " could not open a TCP connection to " + to.String() + " (the " + svc + " port): "
	var frames []uint64
	switch {
	case h.refused != 0:
		msg += to.Addr().String() + " refused it with a reset (frame " + strconv.FormatUint(h.refused, 10) +
			"): nothing listens on the port (the RDMA service is not running, or listens on another address or port)"
		frames, h.failed = []uint64{h.refused, c.firstFrame}, "refused"
	case h.syns >= 2:
		msg += "no answer to " + plural(int(h.syns), "SYN") + " over " + seconds(time.Duration(h.lastSynNs-c.firstTS.UnixNano())) +
			": the host is down or unreachable, or a firewall drops the SYNs"
		frames, h.failed = []uint64{h.lastSyn, c.firstFrame}, "unanswered"
	default:
		return false
	}
	c.finding(nil, dissect.SeverityWarning, "tcp.connect_failed", msg, "RFC 9293 §3.5, §3.10.7.1; RFC 6298 §5.7", frames...)
	return true
}

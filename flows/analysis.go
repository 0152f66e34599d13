package flows

import (
	"strconv"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// Interop is the interoperability verdict of a connection under the RNIC
// interoperability rules of draft-carrier-rddp-rnic-interop (seeds 000/001,
// PROTOCOL.md section E): what each side is, which row of the negotiation
// matrix applies, what it predicts and what the capture shows.
type Interop struct {
	Initiator string // "rdmac", "ietf"
	Responder string // "rdmac", "ietf", "rdmac_or_ietf_permissive", "unknown"
	Row       string // "1/3", "2", "4", "5", "4/5", "6"
	// Expected outcome: Close, or V and the marker state per direction.
	ExpectClose      bool
	ExpectV          int
	ExpectMarkersI2R bool
	ExpectMarkersR2I bool
	// Observed: whether FPDUs followed, the DDP version seen, the markers
	// framing used per direction.
	ObservedClose      bool
	ObservedV          int // -1 when no FPDU was seen
	ObservedMarkersI2R bool
	ObservedMarkersR2I bool
	Match              bool
}

// ref for the matrix rows.
const interopRef = "draft-carrier-rddp-rnic-interop (seed 000) §5, Figures 2-4"

// classify computes the expected outcome from the MPA Request and Reply.
func (c *conn) classify() *Interop {
	if c.req == nil || c.rep == nil || c.rejected {
		return nil
	}
	q, p := c.req.Frame, c.rep.Frame
	iv := &Interop{Initiator: "ietf", Responder: "ietf", ObservedV: c.ddpVersion}
	if q.Rev == 0 {
		iv.Initiator = "rdmac"
	}
	switch {
	case q.Rev == 0 && p.Rev == 0:
		// Rows 1 and 3: an RDMAC responder, or a permissive IETF one
		// answering rev 0; the wire cannot tell them apart.
		iv.Responder = "rdmac_or_ietf_permissive"
		iv.Row = "1/3"
		iv.ExpectV, iv.ExpectMarkersI2R, iv.ExpectMarkersR2I = 0, true, true
	case q.Rev == 0:
		iv.Row = "2"
		iv.ExpectClose = true
	case p.Rev == 0:
		iv.Responder = "rdmac"
		// Row 4 (non-permissive initiator closes) or row 5 (permissive
		// initiator goes on with V=0 and markers both ways).
		iv.Row = "4/5"
		iv.ExpectV, iv.ExpectMarkersI2R, iv.ExpectMarkersR2I = 0, true, true
	default:
		iv.Row = "6"
		iv.ExpectV = 1
		iv.ExpectMarkersI2R = p.M // the Reply's M: the responder wants to receive markers
		iv.ExpectMarkersR2I = q.M
	}
	return iv
}

// interopVerdict fills the observed side and reports mismatches as findings.
func (c *conn) interopVerdict() *Interop {
	iv := c.classify()
	if iv == nil {
		return nil
	}
	iv.ObservedClose = c.fpdus == 0 && (c.rstSeen || c.finSeen[0] || c.finSeen[1])
	iv.ObservedV = c.ddpVersion
	if c.initiator != noSide {
		iv.ObservedMarkersI2R = c.dirs[c.initiator].markers
		iv.ObservedMarkersR2I = c.dirs[1-c.initiator].markers
	}
	iv.Match = true
	switch {
	case iv.Row == "4/5":
		if iv.ObservedClose {
			iv.Row, iv.ExpectClose = "4", true
		} else if c.fpdus > 0 {
			iv.Row = "5"
		}
	}
	if iv.ExpectClose {
		if c.fpdus > 0 {
			iv.Match = false
			c.finding(nil, dissect.SeverityError, "interop.close_expected",
				"matrix row "+iv.Row+": the side that cannot interoperate should close after the MPA exchange, but FPDUs followed",
				interopRef, c.lastFrame)
		}
		return iv
	}
	if c.fpdus == 0 {
		return iv
	}
	if iv.ObservedV >= 0 && iv.ObservedV != iv.ExpectV {
		iv.Match = false
		c.finding(nil, dissect.SeverityError, "interop.version_mismatch",
			"matrix row "+iv.Row+" predicts DDP/RDMAP version "+strconv.Itoa(iv.ExpectV)+", the FPDUs carry "+strconv.Itoa(iv.ObservedV),
			interopRef, c.lastFrame)
	}
	if c.initiator != noSide {
		for _, x := range []struct {
			name           string
			dir            *direction
			expect, actual bool
		}{
			{"initiator->responder", c.dirs[c.initiator], iv.ExpectMarkersI2R, iv.ObservedMarkersI2R},
			{"responder->initiator", c.dirs[1-c.initiator], iv.ExpectMarkersR2I, iv.ObservedMarkersR2I},
		} {
			if x.dir.sawFPDU && x.expect != x.actual {
				iv.Match = false
				c.finding(nil, dissect.SeverityError, "interop.markers_mismatch",
					"matrix row "+iv.Row+" predicts markers "+onOff(x.expect)+" "+x.name+", the capture has them "+onOff(x.actual),
					interopRef, c.lastFrame)
			}
		}
	}
	return iv
}

// expectedMarkers returns the marker state the matrix predicts for the
// direction sent by side s, once both MPA frames are known: for a V=0
// outcome (a rev 0 frame on either side) markers are on in both directions,
// as RDMAC requires (seed 000 §5.3).
func (c *conn) rdmacOutcome() bool {
	return c.req != nil && c.rep != nil && !c.rejected && (c.req.Frame.Rev == 0 || c.rep.Frame.Rev == 0)
}

// ---- per-FPDU analysis ----

// sentSeg remembers what Terminate matching compares of a recent
// segment's DDP header: the Tagged flag, and the STag and TO (tagged) or
// the QN, MSN and MO (untagged). 32 octets where the whole header and frame
// took 48: a direction keeps recentSegs of them, and a connection reset
// after many segments keeps its rings to the end of the capture.
type sentSeg struct {
	frame  uint64
	off    uint64 // TO, or MO
	id     uint32 // STag, or MSN
	qn     uint32 // untagged: QN
	tagged bool
	segLen uint16 // the DDP segment's length (MPA ULPDU_Length)
}

// segOf is what s.remember keeps of h, a segment of segLen octets sent in
// frame.
func segOf(h *ddp.Header, segLen uint16, frame uint64) sentSeg {
	if h.T {
		return sentSeg{frame: frame, off: h.TO, id: h.STag, tagged: true, segLen: segLen}
	}
	return sentSeg{frame: frame, off: uint64(h.MO), id: h.MSN, qn: h.QN, segLen: segLen}
}

// set makes e segOf(h, segLen, frame) field by field: a sentSeg built
// aside and copied in stalled the copy's loads on the stores just made (a
// store-to-load forwarding failure; 1 % of a -j 1 profile's samples).
func (e *sentSeg) set(h *ddp.Header, segLen uint16, frame uint64) {
	e.frame, e.tagged, e.segLen = frame, h.T, segLen
	if h.T {
		e.off, e.id, e.qn = h.TO, h.STag, 0
	} else {
		e.off, e.id, e.qn = uint64(h.MO), h.MSN, h.QN
	}
}

const recentSegs = 1024

// msnTable holds the last MSN completed on each untagged queue: in an
// array for the queues RDMAP uses (0-3, RFC 5040 §5, RFC 7306), which a
// map lookup and store per message cost more than the rest of the check,
// and in a map for any other.
type msnTable struct {
	low  [4]uint32
	seen [4]bool
	more map[uint32]uint32
}

func (t *msnTable) get(qn uint32) (uint32, bool) {
	if qn < uint32(len(t.low)) {
		return t.low[qn], t.seen[qn]
	}
	msn, ok := t.more[qn]
	return msn, ok
}

func (t *msnTable) set(qn, msn uint32) {
	if qn < uint32(len(t.low)) {
		t.low[qn], t.seen[qn] = msn, true
		return
	}
	if t.more == nil {
		t.more = make(map[uint32]uint32)
	}
	t.more[qn] = msn
}

// reset empties t, keeping its map.
func (t *msnTable) reset() {
	more := t.more
	clear(more)
	*t = msnTable{more: more}
}

// dirState holds the analysis state of one direction.
type dirState struct {
	recent    []sentSeg // ring of recent segments' headers
	recentPos int
	msn       msnTable // last MSN started per untagged queue (direction.firstSegment)
	termFrame uint64   // frame of a Terminate this direction sent
	after     bool     // a finding for traffic after the Terminate was made
	firstFPDU uint64   // frame of the first FPDU
	crcBad    uint64   // frame of the last FPDU this direction sent whose CRC failed
}

func (s *dirState) remember(h *ddp.Header, segLen uint16, frame uint64) {
	if n := len(s.recent); n < recentSegs {
		if n == cap(s.recent) {
			// Doubled up to exactly recentSegs: append's growth (and
			// slices.Grow's) overshoots it by a quarter or more.
			r := make([]sentSeg, n, min(max(2*n, 16), recentSegs))
			copy(r, s.recent)
			s.recent = r
		}
		s.recent = s.recent[:n+1]
		s.recent[n].set(h, segLen, frame)
		return
	}
	s.recent[s.recentPos].set(h, segLen, frame)
	if s.recentPos++; s.recentPos == recentSegs {
		s.recentPos = 0
	}
}

// find returns the most recent segment whose header is the terminated one
// and, when the Terminate gives its DDP Segment Length (M set, segLen
// valid), whose length is that one too: several segments can carry the
// same header (Writes again to the same buffer), and the length tells
// them apart (RFC 5040 §4.8). Without one of that length, the most recent
// with the header. "The length handed up by the DDP Layer" (RFC 5040
// §4.8) is read two ways: the DDP segment's length (MPA ULPDU_Length), or
// its payload's, without the DDP header, as Linux siw sends it (the three
// siw Terminates of testdata/siw give 64, 1424 and 40 for segments of 78,
// 1442 and 58 octets); either tells segments apart.
func (s *dirState) find(t ddp.Header, segLen uint16, valid bool) (sentSeg, bool) {
	k := segOf(&t, segLen, 0)
	hdr := uint32(t.Len())
	var best, bestLen sentSeg
	for _, e := range s.recent {
		if e.tagged == k.tagged && e.off == k.off && e.id == k.id && e.qn == k.qn {
			if e.frame > best.frame {
				best = e
			}
			if valid && (e.segLen == segLen || uint32(e.segLen) == uint32(segLen)+hdr) && e.frame > bestLen.frame {
				bestLen = e
			}
		}
	}
	if bestLen.frame != 0 {
		return bestLen, true
	}
	return best, best.frame != 0
}

// termSegment links the Terminate of rec, which includes a terminated DDP
// header, to the segment of other's direction that header names (find):
// the record's TermFrame and a note (rdmap.term_segment). When the
// Terminate gives the DDP Segment Length (M) and it is neither that
// segment's length nor its payload's, a warning
// (rdmap.term_seglen_mismatch).
func (c *conn) termSegment(rec *Record, other *dirState) {
	t := &rec.FPDU.Seg.Term
	e, ok := other.find(t.DDP, t.DDPSegLen, t.M)
	if !ok {
		return
	}
	f := e.frame
	rec.FPDU.TermFrame = f
	c.finding(rec, dissect.SeverityNote, "rdmap.term_segment",
		"the terminated segment is the one in frame "+strconv.FormatUint(f, 10), "RFC 5040 §4.8", rec.Frame, f)
	hdr := uint32(t.DDP.Len())
	if t.M && t.DDPSegLen != e.segLen && uint32(t.DDPSegLen)+hdr != uint32(e.segLen) {
		payload := "none"
		if uint32(e.segLen) >= hdr {
			payload = strconv.FormatUint(uint64(uint32(e.segLen)-hdr), 10)
		}
		c.finding(rec, dissect.SeverityWarning, "rdmap.term_seglen_mismatch",
			"the Terminate's DDP Segment Length is "+strconv.FormatUint(uint64(t.DDPSegLen), 10)+
				", which is neither the length of the terminated segment of frame "+strconv.FormatUint(f, 10)+
				" ("+strconv.FormatUint(uint64(e.segLen), 10)+" octets) nor that of its payload ("+payload+")",
			"RFC 5040 §4.8", rec.Frame, f)
	}
}

// enhancedExchange reports whether the connection's MPA Request and Reply
// carried MPA rev 2 Enhanced data (RFC 6581 §9), or were not captured: the
// LLP error codes 0x06 and 0x07 are RFC 6581's and mean nothing after a
// rev 1 exchange.
func (c *conn) enhancedExchange() bool {
	return c.req == nil || c.rep == nil || c.req.HasEnhanced && c.rep.HasEnhanced
}

// analyzeFPDU runs the stateful checks on a decoded FPDU (RFC 5040 §5,
// §7; RFC 5041 §5; RFC 6581 §7-9).
func (c *conn) analyzeFPDU(d *direction, rec *Record) {
	fr := rec.FPDU
	seg := &fr.Seg
	st := &d.an
	other := &c.dirs[1-d.side].an
	if st.firstFPDU == 0 {
		st.firstFPDU = rec.Frame
		c.checkFirstFPDU(d, rec)
	}
	// Nothing may follow a Terminate in the same direction (RFC 5040 §5.4).
	if st.termFrame != 0 && !st.after {
		st.after = true
		c.finding(rec, dissect.SeverityWarning, "rdmap.after_terminate",
			"sent after this side's Terminate of frame "+strconv.FormatUint(st.termFrame, 10), "RFC 5040 §5.4", rec.Frame, st.termFrame)
	}
	if seg.Opcode == rdmap.OpTerminate {
		st.termFrame = rec.Frame
		if seg.Term.HasDDP {
			// The segment the Terminate names, among those the other
			// side sent (rdmap.term_segment), and whether its DDP
			// Segment Length fits it (rdmap.term_seglen_mismatch).
			// (Kept to the lines this took before: default.pgo keys
			// the call sites below by their line in the function.)
			c.termSegment(rec, other)
		}
		if t := &seg.Term; t.Layer == uint8(rdmap.LayerLLP) && t.EType == 0 && t.Code == 0x02 && other.crcBad != 0 {
			// "MPA CRC error" (RFC 5044 §8) names no segment: the last
			// FPDU from the other side whose CRC failed is the likely one.
			fr.TermFrame = other.crcBad
			c.finding(rec, dissect.SeverityNote, "rdmap.term_segment",
				"the FPDU whose CRC failed is likely the one in frame "+strconv.FormatUint(other.crcBad, 10)+
					", the last from "+c.endpoint(1-d.side).String()+" with a bad CRC (RFC 5044 §8)", "RFC 5040 §4.8", rec.Frame, other.crcBad)
		}
		if t := &seg.Term; t.Layer == uint8(rdmap.LayerLLP) && t.EType == 0 && c.enhancedExchange() {
			switch seg.Term.Code {
			case 0x06:
				c.finding(rec, dissect.SeverityError, "mpa.ird_insufficient_term",
					"the peer reports insufficient IRD resources for the negotiated ORD (MPA rev 2 IRD/ORD negotiation)", "RFC 6581 §7", rec.Frame)
			case 0x07:
				c.finding(rec, dissect.SeverityError, "mpa.no_rtr_match",
					"the peer found no RTR type both sides support (MPA rev 2 peer-to-peer)", "RFC 6581 §7", rec.Frame)
			}
		}
	}
	st.remember(&seg.DDP, fr.ULPDULen, rec.Frame)
}

// checkFirstFPDU applies the rules on who speaks first (RFC 5044 §7.1) and
// on the RTR message of peer-to-peer mode (RFC 6581 §4, §9).
func (c *conn) checkFirstFPDU(d *direction, rec *Record) {
	if c.initiator == noSide || c.req == nil || c.rep == nil {
		return
	}
	seg := &rec.FPDU.Seg
	if d.side != c.initiator {
		if c.dirs[c.initiator].an.firstFPDU == 0 {
			sev := dissect.SeverityWarning
			ref := "RFC 5044 §7.1 ('client sends first', seed 003 §4.2, §6)"
			msg := "the responder sent an FPDU before the initiator's first FPDU: an initiator that has not yet entered MPA mode could misparse it"
			if c.p2p() {
				sev, ref = dissect.SeverityError, "RFC 6581 §4 (seed 003 §4.2)"
				msg = "the responder sent an FPDU before receiving the initiator's RTR (peer-to-peer mode)"
			}
			c.finding(rec, sev, "mpa.responder_first", msg, ref, rec.Frame)
		}
		return
	}
	if !c.p2p() {
		return
	}
	// The initiator's first FPDU is the RTR: a zero-length Send, RDMA
	// Write or RDMA Read Request of a type the Reply allows.
	var typ mpa.RTRSet
	zero := rec.FPDU.PayloadLen == 0
	switch seg.Opcode {
	case rdmap.OpSend, rdmap.OpSendSE:
		typ = mpa.RTRSend
	case rdmap.OpWrite:
		typ = mpa.RTRWrite
	case rdmap.OpReadRequest:
		if _, _, size, _, _ := rdmap.ReadRequestKnown(seg.HdrCut); !size {
			return // the capture cut the request before its size
		}
		typ = mpa.RTRRead
		zero = seg.Read.Size == 0
		if zero {
			c.rtrFrame = rec.Frame
		}
	}
	allowed := c.rep.RTR
	switch {
	case typ == 0 || !zero:
		c.finding(rec, dissect.SeverityError, "mpa.rtr_missing",
			"peer-to-peer mode: the initiator's first FPDU should be the zero-length RTR message", "RFC 6581 §4", rec.Frame)
	case allowed != 0 && allowed&typ == 0:
		c.finding(rec, dissect.SeverityError, "mpa.rtr_type",
			"the RTR is a zero-length "+typ.String()+" but the Reply allows only "+allowed.String(), "RFC 6581 §9", rec.Frame)
	case allowed == 0 && typ != mpa.RTRSend:
		// A warning: the rule is draft-01's, which the RFC's text,
		// not at hand here, is presumed to keep (PROTOCOL.md B).
		c.finding(rec, dissect.SeverityWarning, "mpa.rtr_type",
			"the RTR is a zero-length "+typ.String()+" but the Reply sets no RTR type, which asks for a zero-length Send",
			"seed 003 §8 (draft-ietf-storm-mpa-peer-connect-01); RFC 6581 §9", rec.Frame)
	default:
		c.finding(rec, dissect.SeverityNote, "mpa.rtr",
			"this zero-length "+typ.String()+" is the RTR (ready to receive) of peer-to-peer mode", "RFC 6581 §4", rec.Frame)
	}
}

// p2p reports whether peer-to-peer mode was negotiated (RFC 6581 §9).
func (c *conn) p2p() bool {
	return c.req != nil && c.rep != nil && c.req.HasEnhanced && c.rep.HasEnhanced && c.req.P2P && c.rep.P2P
}

// checkIRDORD compares the Enhanced IRD/ORD values of the Request and the
// Reply (RFC 6581 §9): the responder may not initiate more RDMA Reads than
// the initiator can take in (Reply ORD <= Request IRD).
func (c *conn) checkIRDORD(rec *Record) {
	if c.req == nil || !c.req.HasEnhanced || !c.rep.HasEnhanced {
		return
	}
	q, p := c.req.Enhanced, c.rep.Enhanced
	if q.IRD == mpa.IRDORDNoNegotiation || p.ORD == mpa.IRDORDNoNegotiation {
		return
	}
	if p.ORD > q.IRD {
		c.finding(rec, dissect.SeverityError, "mpa.ord_exceeds_ird",
			"the Reply's ORD "+strconv.Itoa(int(p.ORD))+" exceeds the Request's IRD "+strconv.Itoa(int(q.IRD))+
				" (the initiator should answer with Terminate 0x06)", "RFC 6581 §9", rec.Frame)
	}
}

// readLimit is how many RDMA Reads side s may have outstanding under the
// negotiated IRD/ORD (RFC 6581 §9): its own ORD and the peer's IRD.
func (c *conn) readLimit(s side) (int, bool) {
	if c.initiator == noSide || c.req == nil || c.rep == nil || !c.req.HasEnhanced || !c.rep.HasEnhanced {
		return 0, false
	}
	var own, peer uint16
	if s == c.initiator {
		own, peer = c.req.Enhanced.ORD, c.rep.Enhanced.IRD
	} else {
		own, peer = c.rep.Enhanced.ORD, c.req.Enhanced.IRD
	}
	if own == mpa.IRDORDNoNegotiation || peer == mpa.IRDORDNoNegotiation {
		return 0, false
	}
	return int(min(own, peer)), true
}

// analyzeMessage checks a completed message: outstanding Reads against
// IRD/ORD, and Read Response size against the Read Request (RFC 5040
// §5.2.1). (MSN order is checked at a message's first segment:
// direction.firstSegment.)
func (c *conn) analyzeMessage(d *direction, r *Record, pr *pendingRead) {
	m := r.Message
	switch m.Opcode {
	case rdmap.OpReadRequest:
		if lim, ok := c.readLimit(d.side); ok {
			n := 0
			for _, p := range c.reads.live() {
				if p.requester == d.side {
					n++
				}
			}
			if n > lim {
				c.finding(nil, dissect.SeverityError, "rdmap.reads_exceed_ord",
					strconv.Itoa(n)+" RDMA Read Requests outstanding, more than the negotiated "+strconv.Itoa(lim)+" (ORD/IRD)",
					"RFC 6581 §9; RFC 5040 §5.2", m.FirstFrame)
			}
		}
	case rdmap.OpReadResponse:
		if pr != nil && !pr.noSize && uint64(pr.size) != m.Length {
			c.finding(nil, dissect.SeverityError, "rdmap.read_size_mismatch",
				"the Read Response carries "+strconv.FormatUint(m.Length, 10)+" octets, the Read Request of frame "+
					strconv.FormatUint(pr.frame, 10)+" asked for "+strconv.FormatUint(uint64(pr.size), 10), "RFC 5040 §5.2.1", m.FirstFrame, pr.frame)
		}
	}
}

// latency is a helper kept for symmetry with MessageRecord.Latency.
var _ = time.Duration(0)

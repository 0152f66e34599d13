package replay

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
)

// Negotiation overrides what the replayed MPA Request and Reply ask for
// (RFC 5044 §7.1, RFC 6581 §8-9). A nil field keeps the recorded value.
// Markers, PAD and CRC of the replayed FPDUs follow the new negotiation, in
// the new connection's sequence space.
type Negotiation struct {
	// Rev is the MPA revision of both frames: 0 (RDMAC interop), 1 (RFC
	// 5044) or 2 (RFC 6581, Enhanced data).
	Rev *uint8
	// MarkersI2R turns markers on or off from initiator to responder (the
	// Reply's M bit); MarkersR2I from responder to initiator (the Request's
	// M bit), RFC 5044 §7.1.2.
	MarkersI2R, MarkersR2I *bool
	// CRC sets the C bit of both frames: CRCs in both directions or in none.
	CRC *bool
	// IRD and ORD are the initiator's Enhanced IRD/ORD (revision 2); the
	// responder answers with them swapped, as Linux siw does.
	IRD, ORD *uint16
	// P2P asks for (and accepts) the peer-to-peer model (revision 2).
	P2P *bool
	// RTR is the set of RTR message types the initiator offers; the
	// responder accepts one of them (Write, then Read, then Send).
	RTR *mpa.RTRSet
}

// IsZero reports whether n overrides nothing.
func (n Negotiation) IsZero() bool { return n == Negotiation{} }

// ErrNegotiation is the error of a Negotiation no RNIC would send.
var ErrNegotiation = errors.New("replay: impossible negotiation")

// Check reports a Negotiation that asks for what no RNIC sends: revision 0
// is the RDMA Consortium's, whose RNICs always use markers and CRC in both
// directions (draft-carrier-rddp-rnic-interop Figure 1, seed 000 §4), so
// it cannot be asked for with markers or CRC off. Revision 0 alone turns
// both on. The replay functions return Check's error.
func (n Negotiation) Check() error {
	if n.Rev == nil || *n.Rev != mpa.Rev0 {
		return nil
	}
	for _, f := range []struct {
		v    *bool
		what string
	}{{n.MarkersI2R, "markers initiator to responder"}, {n.MarkersR2I, "markers responder to initiator"}, {n.CRC, "CRC"}} {
		if f.v != nil && !*f.v {
			return fmt.Errorf("%w: MPA revision 0 (RDMAC RNICs) always has markers and CRC both ways; it cannot be asked for with %s off", ErrNegotiation, f.what)
		}
	}
	return nil
}

// CheckScripts reports, past Check, a Negotiation that asks for what the
// replay of scripts cannot carry: IRD, ORD, peer-to-peer and RTR are MPA
// revision 2 Enhanced data (RFC 6581 §8), so they are refused for a
// connection whose replayed Request is not revision 2 (recorded so, or
// made so by Rev or the initiator's RNIC kind): they would be dropped
// without a word. The replay functions return its error.
func (o Options) CheckScripts(scripts []*Script) error {
	n := o.Negotiation
	if err := n.Check(); err != nil {
		return err
	}
	// Asking for no peer-to-peer mode or no RTR asks for nothing a
	// revision 1 Request would drop.
	if n.IRD == nil && n.ORD == nil && (n.P2P == nil || !*n.P2P) && (n.RTR == nil || *n.RTR == 0) {
		return nil
	}
	for _, s := range scripts {
		p := &plan{s: s, neg: n, init: o.Initiator, resp: o.Responder}
		if p.raw() {
			return fmt.Errorf("%w: the IRD, ORD, peer-to-peer and RTR overrides need MPA revision 2 (RFC 6581 §8), and connection %d has no MPA exchange", ErrNegotiation, s.Conn)
		}
		if req := p.request(); req.Rev != mpa.Rev2 {
			return fmt.Errorf("%w: the IRD, ORD, peer-to-peer and RTR overrides need MPA revision 2 (RFC 6581 §8), and connection %d's Request is revision %d", ErrNegotiation, s.Conn, req.Rev)
		}
	}
	return nil
}

// RNIC is the kind of RDMA NIC whose MPA behaviour the engine emulates
// (draft-carrier-rddp-rnic-interop, seeds 000/001; PROTOCOL.md section E).
type RNIC uint8

// RNIC kinds.
const (
	// RNICScript plays the recorded frames (with the Negotiation overrides)
	// and accepts what the peer answers under the plain RFC 5044 rules.
	RNICScript RNIC = iota
	// RNICRDMAC is an upgraded RDMA Consortium RNIC: its frames carry Rev 0
	// with M and C set, it always sends and expects markers and CRC, and
	// DDP/RDMAP version 0; it cannot talk to a peer answering Rev 1.
	RNICRDMAC
	// RNICIETF is a non-permissive IETF RNIC: Rev 1 (or 2), version 1, and
	// it closes the connection on a Rev 0 frame.
	RNICIETF
	// RNICIETFPermissive is a permissive IETF RNIC: Rev 1 (or 2) itself,
	// but it answers a Rev 0 Request with Rev 0, M and C, and accepts a Rev
	// 0 Reply, downgrading to version 0 with markers both ways.
	RNICIETFPermissive
)

var rnicNames = [...]string{"script", "rdmac", "ietf", "ietf-permissive"}

// String returns the --rnic name.
func (r RNIC) String() string {
	if int(r) < len(rnicNames) {
		return rnicNames[r]
	}
	return fmt.Sprintf("rnic(%d)", uint8(r))
}

// ParseRNIC parses an --rnic name: rdmac, ietf, ietf-permissive (or
// permissive), or script.
func ParseRNIC(s string) (RNIC, error) {
	switch strings.ToLower(s) {
	case "script", "recorded", "":
		return RNICScript, nil
	case "rdmac":
		return RNICRDMAC, nil
	case "ietf", "ietf-non-permissive", "strict":
		return RNICIETF, nil
	case "ietf-permissive", "permissive":
		return RNICIETFPermissive, nil
	}
	return 0, fmt.Errorf("replay: unknown RNIC type %q (rdmac, ietf, ietf-permissive)", s)
}

// Outcome is the result of an MPA exchange as one side sees it.
type Outcome struct {
	// NoMPA: the stream starts in FPDU mode without Request/Reply frames.
	NoMPA bool
	// Request and Reply are the frames exchanged (nil when not sent).
	Request, Reply *mpa.Frame
	// Rejected: the Reply had R set (RFC 5044 §7.1.1).
	Rejected bool
	// Closed: a side closed the connection after the exchange because it
	// cannot interoperate (interop matrix rows 2 and 4) or the Rev 2
	// negotiation failed; ClosedBy says which side, Reason why.
	Closed   bool
	ClosedBy Dir
	Reason   string
	// V is the DDP and RDMAP version of both directions.
	V uint8
	// MarkersI2R, MarkersR2I and CRC are what the FPDUs carry.
	MarkersI2R, MarkersR2I, CRC bool
	// P2P is the peer-to-peer model (RFC 6581 §4); RTR the RTR message type
	// the initiator sends.
	P2P bool
	RTR mpa.RTRSet
	// Row is the interoperability matrix row (PROTOCOL.md E): "1", "2",
	// "3", "4", "5", "6", or "1/3" and "4/5" when the sides' kinds are
	// not known.
	Row string
}

// Negotiated reports whether the MPA exchange ended: the connection went to
// FPDU mode, or was rejected or closed. It is false when the exchange
// failed or never started (a refused connection, no Reply in time, a Reply
// that is not MPA).
func (o Outcome) Negotiated() bool {
	return o.NoMPA || o.Rejected || o.Closed || (o.Request != nil && o.Reply != nil)
}

// String describes the outcome in one line ("not negotiated" when the
// exchange did not end).
func (o Outcome) String() string {
	if !o.Negotiated() {
		return "not negotiated"
	}
	var b strings.Builder
	switch {
	case o.Rejected:
		b.WriteString("rejected")
	case o.Closed:
		fmt.Fprintf(&b, "closed by the %s", sideName(o.ClosedBy))
		if o.Reason != "" {
			b.WriteString(" (" + o.Reason + ")")
		}
	default:
		fmt.Fprintf(&b, "V=%d markers i2r %s r2i %s CRC %s", o.V, onOff(o.MarkersI2R), onOff(o.MarkersR2I), onOff(o.CRC))
		if o.P2P {
			fmt.Fprintf(&b, " P2P RTR %s", o.RTR)
		}
	}
	if o.Row != "" {
		b.WriteString(", matrix row " + o.Row)
	}
	return b.String()
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func sideName(d Dir) string {
	if d == R2I {
		return "responder"
	}
	return "initiator"
}

// plan is the negotiation to play for one script: the overrides and the
// kinds of RNIC at each end.
type plan struct {
	s          *Script
	neg        Negotiation
	init, resp RNIC
}

// raw reports whether the connection starts in FPDU mode without an MPA
// exchange: an RDMAC stream replayed as recorded.
func (p *plan) raw() bool {
	return p.s.NoMPA && p.neg.Rev == nil && p.init == RNICScript && p.resp == RNICScript
}

// rawOutcome is the negotiation of a stream without an exchange: what the
// decoder's summary says, with the overrides.
func (p *plan) rawOutcome() Outcome {
	sum := &p.s.Summary
	o := Outcome{NoMPA: true, MarkersI2R: p.s.MarkersI2R, MarkersR2I: p.s.MarkersR2I, CRC: sum.CRC}
	if sum.DDPVersion > 0 {
		o.V = uint8(sum.DDPVersion)
	}
	if p.neg.MarkersI2R != nil {
		o.MarkersI2R = *p.neg.MarkersI2R
	}
	if p.neg.MarkersR2I != nil {
		o.MarkersR2I = *p.neg.MarkersR2I
	}
	if p.neg.CRC != nil {
		o.CRC = *p.neg.CRC
	}
	return o
}

// splitEnhanced returns the Enhanced data of f and the ULP private data after
// it (RFC 6581 §8-9); without Enhanced data, a zero Enhanced and all of PD.
func splitEnhanced(f *mpa.Frame) (mpa.Enhanced, []byte, bool) {
	if f == nil {
		return mpa.Enhanced{}, nil, false
	}
	return f.Enhanced()
}

// setEnhanced rewrites f's private data for its Rev: revision 2 frames get S
// and the Enhanced data e in front of ulp, others the ULP data alone. A frame
// whose revision is the recorded one's (rec), when the recording has no
// Enhanced data to rewrite and nothing overrides it (keep), keeps the
// recorded S bit and private data as captured: a Rev 3 Request's S=1, or a
// Rev 2 frame without S.
func setEnhanced(f *mpa.Frame, e mpa.Enhanced, ulp []byte, rec *mpa.Frame, keep bool) {
	if keep && rec != nil && rec.Rev == f.Rev {
		if _, _, hadE := rec.Enhanced(); !hadE {
			f.S, f.PD = rec.S, slices.Clone(rec.PD)
			f.PDLen = uint16(len(f.PD))
			return
		}
	}
	if f.Rev == mpa.Rev2 {
		f.S = true
		f.PD = append(mpa.AppendEnhanced(nil, e), ulp...)
	} else {
		f.S = false
		f.PD = slices.Clone(ulp)
	}
	f.PDLen = uint16(len(f.PD))
}

// rtrFlags sets the RTR flags of e for the set t under RFC 6581 §9 meanings:
// B Send, C Write, D Read.
func rtrFlags(e *mpa.Enhanced, t mpa.RTRSet) {
	e.B, e.C, e.D = t.Has(mpa.RTRSend), t.Has(mpa.RTRWrite), t.Has(mpa.RTRRead)
}

// request builds the MPA Request the initiator sends.
func (p *plan) request() mpa.Frame {
	s := p.s
	var f mpa.Frame
	if s.Request != nil {
		f = *s.Request
		f.PD = slices.Clone(f.PD)
	} else {
		f = mpa.Frame{Rev: mpa.Rev1, M: s.MarkersR2I, C: s.Summary.CRC}
		if s.Summary.DDPVersion == 0 || s.NoMPA {
			f.Rev = mpa.Rev0
		}
	}
	f.Kind = mpa.KindRequest
	f.R = false
	e, ulp, hadE := splitEnhanced(s.Request)
	if !hadE {
		e = mpa.Enhanced{IRD: 1, ORD: 1}
	}
	switch p.init {
	case RNICRDMAC:
		f.Rev, f.M, f.C = mpa.Rev0, true, true
	case RNICIETF, RNICIETFPermissive:
		if f.Rev == mpa.Rev0 || f.Rev > mpa.Rev2 {
			f.Rev = mpa.Rev1
		}
	}
	if p.neg.Rev != nil {
		f.Rev = *p.neg.Rev
	}
	if p.neg.MarkersR2I != nil {
		f.M = *p.neg.MarkersR2I
	}
	if p.neg.CRC != nil {
		f.C = *p.neg.CRC
	}
	if p.neg.Rev != nil && *p.neg.Rev == mpa.Rev0 {
		f.M, f.C = true, true // an RDMAC RNIC's Request (Check)
	}
	if p.neg.IRD != nil {
		e.IRD = *p.neg.IRD
	}
	if p.neg.ORD != nil {
		e.ORD = *p.neg.ORD
	}
	if p.neg.P2P != nil {
		e.A = *p.neg.P2P
		if e.A && e.RTR(mpa.FlagsRFC6581) == 0 && p.neg.RTR == nil {
			rtrFlags(&e, mpa.RTRWrite|mpa.RTRRead)
		}
		if !e.A {
			rtrFlags(&e, 0)
		}
	}
	if p.neg.RTR != nil {
		rtrFlags(&e, *p.neg.RTR)
		if p.neg.P2P == nil && *p.neg.RTR != 0 {
			e.A = true
		}
	}
	setEnhanced(&f, e, ulp, s.Request, !p.neg.enhanced())
	return f
}

// enhanced reports whether n overrides what the Enhanced data of RFC 6581
// §8 carries (IRD, ORD, peer-to-peer, RTR).
func (n Negotiation) enhanced() bool {
	return n.IRD != nil || n.ORD != nil || n.P2P != nil || n.RTR != nil
}

// chooseRTR picks the RTR type a responder accepts from the offered set:
// Write if offered, else Read, else Send (Linux siw's order).
func chooseRTR(offered mpa.RTRSet) mpa.RTRSet {
	for _, t := range []mpa.RTRSet{mpa.RTRWrite, mpa.RTRRead, mpa.RTRSend} {
		if offered.Has(t) {
			return t
		}
	}
	return 0
}

// reply builds the responder's answer to the Request it received, and says
// whether the responder closes the connection after sending it (matrix row
// 2: a non-permissive IETF RNIC that received Rev 0) or sends nothing and
// closes (no answer possible).
func (p *plan) reply(req *mpa.Frame) (f mpa.Frame, closeAfter bool, reason string) {
	s := p.s
	if s.Reply != nil {
		f = *s.Reply
		f.PD = slices.Clone(f.PD)
	} else {
		f = mpa.Frame{Rev: req.Rev, M: s.MarkersI2R, C: s.Summary.CRC}
	}
	f.Kind = mpa.KindReply
	e, ulp, hadE := splitEnhanced(s.Reply)
	switch p.resp {
	case RNICRDMAC:
		// Rows 1, 4, 5: an RDMAC responder answers Rev 0, M, C, whatever
		// the Request said.
		f.Rev, f.M, f.C, f.R = mpa.Rev0, true, true, false
	case RNICIETF:
		if req.Rev == mpa.Rev0 {
			// Row 2: reply Rev 1, then close.
			f.Rev, f.R = mpa.Rev1, false
			closeAfter, reason = true, "non-permissive IETF RNIC received MPA Rev 0"
		} else {
			f.Rev = min(req.Rev, mpa.Rev2)
		}
	case RNICIETFPermissive:
		if req.Rev == mpa.Rev0 {
			// Row 3: a permissive responder downgrades.
			f.Rev, f.M, f.C, f.R = mpa.Rev0, true, true, false
		} else {
			f.Rev = min(req.Rev, mpa.Rev2)
		}
	}
	if p.neg.Rev != nil && p.resp == RNICScript {
		f.Rev = *p.neg.Rev
	}
	if p.neg.MarkersI2R != nil && f.Rev != mpa.Rev0 {
		f.M = *p.neg.MarkersI2R
	}
	if p.neg.CRC != nil && f.Rev != mpa.Rev0 {
		f.C = *p.neg.CRC
	}
	if p.neg.Rev != nil && *p.neg.Rev == mpa.Rev0 && p.resp == RNICScript {
		f.M, f.C = true, true // an RDMAC RNIC's Reply (Check)
	}
	re, _, reqE := splitEnhanced(req)
	if f.Rev == mpa.Rev2 {
		if !hadE {
			e = mpa.Enhanced{IRD: re.ORD, ORD: re.IRD}
		}
		if p.neg.IRD != nil || p.neg.ORD != nil || !hadE {
			e.IRD, e.ORD = re.ORD, re.IRD
		}
		wantP2P := reqE && re.P2P(mpa.FlagsRFC6581)
		if p.neg.P2P != nil {
			wantP2P = wantP2P && *p.neg.P2P
		} else if hadE && !e.A {
			wantP2P = false
		}
		e.A = wantP2P
		rtr := mpa.RTRSet(0)
		if wantP2P {
			offered := re.RTR(mpa.FlagsRFC6581)
			if recorded := e.RTR(mpa.FlagsRFC6581); recorded != 0 && offered&recorded != 0 {
				rtr = chooseRTR(offered & recorded)
			} else {
				rtr = chooseRTR(offered)
			}
		}
		rtrFlags(&e, rtr)
	}
	setEnhanced(&f, e, ulp, s.Reply, !p.neg.enhanced() && p.resp == RNICScript)
	return f, closeAfter, reason
}

// outcome computes what side d (I2R: the initiator, R2I: the responder) does
// after the exchange of req and rep, as its RNIC kind says (PROTOCOL.md E,
// RFC 5044 §7.1.2, RFC 6581 §9).
func (p *plan) outcome(d Dir, req, rep *mpa.Frame) Outcome {
	o := Outcome{Request: req, Reply: rep, Row: p.row(req, rep)}
	if rep.R {
		o.Rejected = true
		return o
	}
	kind := p.init
	if d == R2I {
		kind = p.resp
	}
	peer := rep
	if d == R2I {
		peer = req
	}
	downgrade := false
	switch kind {
	case RNICRDMAC:
		// An RDMAC responder answers Rev 0 whatever it received and lets
		// the initiator decide (rows 4, 5); an RDMAC initiator cannot use
		// a Rev 1 Reply (row 2, where the responder closes too).
		if d == I2R && peer.Rev != mpa.Rev0 {
			return p.closed(o, d, "RDMAC RNIC received MPA Rev "+fmt.Sprint(peer.Rev))
		}
		downgrade = true
	case RNICIETF:
		if peer.Rev == mpa.Rev0 {
			return p.closed(o, d, "non-permissive IETF RNIC received MPA Rev 0")
		}
	case RNICIETFPermissive:
		downgrade = peer.Rev == mpa.Rev0
	}
	o.CRC = req.C || rep.C
	o.MarkersI2R, o.MarkersR2I = rep.M, req.M
	if req.Rev == mpa.Rev0 || rep.Rev == mpa.Rev0 {
		o.V = 0
	} else {
		o.V = 1
	}
	if downgrade {
		// RDMAC mode: markers and CRC both ways, version 0 (rows 1, 3, 5).
		o.V, o.MarkersI2R, o.MarkersR2I, o.CRC = 0, true, true, true
	}
	// Rev 2 peer-to-peer: the RTR type (RFC 6581 §9).
	qe, _, qok := splitEnhanced(req)
	pe, _, pok := splitEnhanced(rep)
	if qok && pok && qe.P2P(mpa.FlagsRFC6581) && pe.P2P(mpa.FlagsRFC6581) {
		o.P2P = true
		acc := pe.RTR(mpa.FlagsRFC6581)
		if acc == 0 {
			acc = mpa.RTRSend // a Reply with no RTR flag asks for a Send
		}
		o.RTR = chooseRTR(acc & qe.RTR(mpa.FlagsRFC6581))
		if o.RTR == 0 {
			o.RTR = chooseRTR(acc)
		}
	}
	return o
}

func (p *plan) closed(o Outcome, d Dir, why string) Outcome {
	o.Closed, o.ClosedBy, o.Reason = true, d, why
	return o
}

// row names the interoperability matrix row of the exchange (PROTOCOL.md E).
func (p *plan) row(req, rep *mpa.Frame) string {
	q0, r0 := req.Rev == mpa.Rev0, rep.Rev == mpa.Rev0
	switch {
	case q0 && r0:
		switch p.resp {
		case RNICRDMAC:
			return "1"
		case RNICIETFPermissive:
			return "3"
		}
		return "1/3"
	case q0:
		return "2"
	case r0:
		switch p.init {
		case RNICIETF:
			return "4"
		case RNICIETFPermissive:
			return "5"
		}
		return "4/5"
	}
	return "6"
}

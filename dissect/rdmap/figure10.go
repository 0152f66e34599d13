package rdmap

import (
	"github.com/iwarpkit/iwarpkit/dissect"
)

// Need says whether a Terminate should carry a header, in the words of
// seed 004 (draft-ietf-rddp-rdmap-06) Figure 10, "Error Type to RDMA
// Message Mapping" (RFC 5040 §4.8 keeps the table).
type Need uint8

// Answers of Figure 10.
const (
	NeedNo         Need = iota // No
	NeedIfPossible             // Yes, if possible
	NeedYes                    // Yes
)

// Finding codes of Terminate.CheckHeaders.
const (
	// CodeTermHdrMissing: Figure 10 says the Terminate must carry a
	// header (the DDP Segment Length and DDP header, or the RDMA header)
	// and it does not.
	CodeTermHdrMissing = "rdmap.term_hdr_missing"
	// CodeTermHdrUnexpected: the Terminate carries a header Figure 10
	// says it should not.
	CodeTermHdrUnexpected = "rdmap.term_hdr_unexpected"
	// CodeTermLenMissing: the DDP header is included (D) but M, which
	// says the DDP Segment Length is valid, is clear.
	CodeTermLenMissing = "rdmap.term_len_not_valid"
	// CodeTermCauseUnexpected: the terminated DDP header is of a message
	// Figure 10's last column says cannot cause the error (an RDMAP
	// Remote Protection Error terminating an RDMA Write).
	CodeTermCauseUnexpected = "rdmap.term_cause_unexpected"
)

const refFigure10 = "seed 004 Figure 10 (RFC 5040 §4.8)"

// ExpectedHeaders returns what seed 004 Figure 10 says a Terminate of this
// layer and error type should include: ddpHdr for the DDP Segment Length
// and Terminated DDP Header (bits M and D), rdmaHdr for the Terminated
// RDMA Header (bit R).
//
//	RDMAP Local Catastrophic   No                No
//	RDMAP Remote Protection    Yes, if possible  Yes
//	RDMAP Remote Operation     Yes, if possible  No
//	DDP (any error type)       Yes               No
//	LLP (e.g. MPA)             No                No
//
// Two refinements: §4.8 says the Terminated DDP Header "is not present if
// the Terminate Error Type is a Local Catastrophic Error", which
// contradicts the DDP row for DDP's own Local Catastrophic type; that
// cell is NeedIfPossible, so neither reading is reported. Reserved layers
// and RDMAP error types the figure does not list get NeedIfPossible for
// both, meaning no rule.
//
// The "Yes" for the RDMA header of a Remote Protection Error applies only
// when a Read Request caused the error (§4.8: the header "is only sent
// back if the terminate is associated with an RDMA Read Request");
// CheckHeaders takes that into account.
func ExpectedHeaders(layer, etype uint8) (ddpHdr, rdmaHdr Need) {
	switch TermLayer(layer) {
	case LayerRDMAP:
		switch etype {
		case ETypeRDMAPLocalCatastrophic:
			return NeedNo, NeedNo
		case ETypeRDMAPRemoteProtection:
			return NeedIfPossible, NeedYes
		case ETypeRDMAPRemoteOperation:
			return NeedIfPossible, NeedNo
		}
	case LayerDDP:
		if etype == ETypeDDPLocalCatastrophic {
			return NeedIfPossible, NeedNo
		}
		return NeedYes, NeedNo
	case LayerLLP:
		return NeedNo, NeedNo
	}
	return NeedIfPossible, NeedIfPossible
}

// CheckHeaders appends to dst a finding for each way t departs from seed
// 004 Figure 10 (see [ExpectedHeaders]) and returns the extended slice:
//
//   - rdmap.term_hdr_missing (warning): the DDP header is required (DDP
//     errors) and D is clear; or the RDMA header is required (RDMAP Remote
//     Protection Error) and R is clear while the terminated message is a
//     Read Request, or unknown because D is clear too;
//   - rdmap.term_hdr_unexpected (warning): D or M is set where Figure 10
//     says No (RDMAP Local Catastrophic, LLP), or R is set where Figure 10
//     says No, or R is set while the included DDP header shows the
//     terminated message was not a Read Request;
//   - rdmap.term_len_not_valid (note): D is set but M is clear, so the
//     DDP Segment Length is present but not declared valid.
func (t Terminate) CheckHeaders(dst []dissect.Finding) []dissect.Finding {
	needDDP, needRDMA := ExpectedHeaders(t.Layer, t.EType)
	what := LayerName(t.Layer) + " " + ETypeName(t.Layer, t.EType)
	switch {
	case needDDP == NeedYes && !t.D:
		dst = append(dst, dissect.Finding{
			Severity: dissect.SeverityWarning,
			Code:     CodeTermHdrMissing,
			Msg:      "Terminate for a " + what + " does not include the terminated DDP header (D bit clear)",
			Ref:      refFigure10,
		})
	case needDDP == NeedNo && (t.D || t.M):
		dst = append(dst, dissect.Finding{
			Severity: dissect.SeverityWarning,
			Code:     CodeTermHdrUnexpected,
			Msg:      "Terminate for a " + what + " includes the DDP segment length or header, which it should not",
			Ref:      refFigure10,
		})
	}
	// A terminated DDP header the capture cut (Cut) was sent but is not
	// known.
	causeKnown := t.D && (t.HasDDP || !t.Cut)
	causeRead := causeKnown && Control(t.DDP.ULPCtrl).Opcode() == OpReadRequest
	switch {
	case needRDMA == NeedYes && !t.R && (causeRead || !t.D):
		msg := "Terminate for a " + what + " caused by an RDMA Read Request does not include the Read Request header (R bit clear)"
		if !t.D {
			msg = "Terminate for a " + what + " includes neither the terminated DDP header nor the RDMA header, so the message it terminates is unknown"
		}
		dst = append(dst, dissect.Finding{
			Severity: dissect.SeverityWarning,
			Code:     CodeTermHdrMissing,
			Msg:      msg,
			Ref:      refFigure10,
		})
	case t.R && needRDMA == NeedNo:
		dst = append(dst, dissect.Finding{
			Severity: dissect.SeverityWarning,
			Code:     CodeTermHdrUnexpected,
			Msg:      "Terminate for a " + what + " includes an RDMA header, which it should not",
			Ref:      refFigure10,
		})
	case t.R && causeKnown && !causeRead:
		dst = append(dst, dissect.Finding{
			Severity: dissect.SeverityWarning,
			Code:     CodeTermHdrUnexpected,
			Msg:      "Terminate includes an RDMA Read Request header but terminates a " + Control(t.DDP.ULPCtrl).Opcode().String() + " message",
			Ref:      refFigure10,
		})
	}
	if op := Control(t.DDP.ULPCtrl).Opcode(); causeKnown && t.HasDDP && t.Layer == uint8(LayerRDMAP) &&
		t.EType == ETypeRDMAPRemoteProtection && op <= OpTerminate && op != OpReadRequest && !op.HasInvalidate() {
		// Of RFC 5040's own opcodes; RFC 7306's (atomics) are not in
		// the figure.
		dst = append(dst, dissect.Finding{
			Severity: dissect.SeverityWarning,
			Code:     CodeTermCauseUnexpected,
			Msg: "Terminate for an RDMAP Remote Protection Error terminates a message of type " + op.String() +
				": only an RDMA Read Request, a Send with Invalidate or a Send with SE and Invalidate can cause one (a bad STag or offset of a tagged message is a DDP Tagged Buffer Error)",
			Ref: refFigure10,
		})
	}
	if t.D && !t.M {
		dst = append(dst, dissect.Finding{
			Severity: dissect.SeverityNote,
			Code:     CodeTermLenMissing,
			Msg:      "Terminate includes the DDP header (D) but does not declare the DDP Segment Length valid (M clear)",
			Ref:      "RFC 5040 §4.8",
		})
	}
	return dst
}

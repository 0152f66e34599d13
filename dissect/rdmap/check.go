package rdmap

import (
	"strconv"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ddp"
)

// Finding codes of Segment.Check. They are stable: tools and tests may
// match on them.
const (
	// CodeDDPVersionRDMAC (note): DV is 0, the RDMA Consortium version.
	CodeDDPVersionRDMAC = "ddp.dv_rdmac"
	// CodeDDPVersionUnknown (warning): DV is 2 or 3, which no
	// specification defines.
	CodeDDPVersionUnknown = "ddp.dv_unknown"
	// CodeDDPRsvdNonzero (warning): reserved bits of the DDP control octet
	// are set.
	CodeDDPRsvdNonzero = "ddp.rsvd_nonzero"
	// CodeDDPQNInvalid (error): an untagged segment names a queue RDMAP
	// does not define (0 to 3).
	CodeDDPQNInvalid = "ddp.qn_invalid"

	// CodeRDMAPVersionRDMAC (note): RV is 0, the RDMA Consortium version.
	CodeRDMAPVersionRDMAC = "rdmap.rv_rdmac"
	// CodeRDMAPVersionUnknown (warning): RV is 2 or 3.
	CodeRDMAPVersionUnknown = "rdmap.rv_unknown"
	// CodeVersionMix (warning): DV and RV differ; DDP and RDMAP versions
	// never mix.
	CodeVersionMix = "rdmap.version_mix"
	// CodeRDMAPRsvdNonzero (warning): the reserved bits of the RDMAP
	// control octet are set.
	CodeRDMAPRsvdNonzero = "rdmap.rsvd_nonzero"
	// CodeOpcodeReserved (error): opcode 0xC to 0xF.
	CodeOpcodeReserved = "rdmap.opcode_reserved"
	// CodeTaggedMismatch (error): the DDP Tagged flag contradicts the
	// opcode.
	CodeTaggedMismatch = "rdmap.tagged_mismatch"
	// CodeQNMismatch (error): an untagged message on a queue its opcode
	// does not use.
	CodeQNMismatch = "rdmap.qn_mismatch"
	// CodeInvalSTagNonzero (warning): DDP octets 2..5 are nonzero on an
	// untagged message that carries no Invalidate STag.
	CodeInvalSTagNonzero = "rdmap.inval_stag_nonzero"
	// CodeReadReqNotLast (error): an RDMA Read Request segment with L=0.
	CodeReadReqNotLast = "rdmap.read_req_not_last"
	// CodeReadReqMO (error): an RDMA Read Request segment with MO != 0.
	CodeReadReqMO = "rdmap.read_req_mo_nonzero"
	// CodeTermNotLast (error): a Terminate segment with L=0.
	CodeTermNotLast = "rdmap.term_not_last"
	// CodeTermMO (error): a Terminate segment with MO != 0.
	CodeTermMO = "rdmap.term_mo_nonzero"
	// CodePayloadUnexpected (warning): octets after the header of an RDMA
	// Read Request or Terminate, which carry no ULP payload.
	CodePayloadUnexpected = "rdmap.payload_unexpected"

	// CodeTerminate (error): a Terminate message; Msg says what it
	// reports (Terminate.Explain).
	CodeTerminate = "rdmap.terminate"
	// CodeTermSiwLayout (note): the Terminate control word is in Linux
	// siw's little-endian bitfield layout, not the RFC's.
	CodeTermSiwLayout = "rdmap.term_siw_layout"
	// CodeTermCodeUnknown (warning): the Layer/EType/Code is in no table.
	CodeTermCodeUnknown = "rdmap.term_code_unknown"
	// CodeTermRsvdNonzero (warning): reserved bits of the Terminate
	// control word are set.
	CodeTermRsvdNonzero = "rdmap.term_rsvd_nonzero"
)

// References used in findings.
const (
	refDDPCtrl   = "RFC 5041 §4 (DDP Control Field)"
	refRDMAPCtrl = "RFC 5040 §4.1"
	refFigure4   = "RFC 5040 §4.1 Figure 4"
	refValidate  = "RFC 5040 §7.2"
	refInterop   = "draft-carrier-rddp-rnic-interop (seed 000) §3, §5.1"
	refReadReq   = "RFC 5040 §4.4, §5.2.1"
	refTerm      = "RFC 5040 §4.8, §5.4"
	refFigure5   = "RFC 5040 §4.2 Figure 5"
	refSiw       = "Linux siw 6.1 struct iwarp_terminate (captures MANIFEST)"
)

func finding(dst []dissect.Finding, sev dissect.Severity, code, msg, ref string) []dissect.Finding {
	return append(dst, dissect.Finding{Severity: sev, Code: code, Msg: msg, Ref: ref})
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }

// Check appends to dst the findings a single segment supports on its own
// and returns the extended slice. It validates what RFC 5040 §7.2 asks of
// every incoming message (DDP fields, opcode, version) using RFC 5040
// §4.1 Figure 4 and RFC 5041:
//
//   - DV and RV not 1: a note when 0 (RDMA Consortium), a warning
//     otherwise, and a warning when they differ;
//   - reserved bits set in the DDP or RDMAP control octets;
//   - a reserved opcode; a Tagged flag that contradicts the opcode;
//   - an untagged queue number RDMAP does not define, or one the opcode
//     does not use (Terminate not on queue 2, ...);
//   - an RDMA Read Request or Terminate not in a single segment (L=0 or
//     MO != 0), or followed by payload;
//   - a nonzero Invalidate STag field on an untagged message that has
//     none;
//   - for a Terminate: the Terminate itself (an error finding whose Msg is
//     Explain), the siw layout, an undefined error code, reserved bits,
//     and the header rules of Figure 10 (Terminate.CheckHeaders). Its
//     DDP Segment Length needs the terminated segment: flows checks it.
//
// Codes are the Code... constants of this package. Things that need more
// than one segment (MSN order, Read Response matching) are not checked.
func (s *Segment) Check(dst []dissect.Finding) []dissect.Finding {
	h := s.DDP
	switch h.DV {
	case ddp.VersionIETF:
	case ddp.VersionRDMAC:
		dst = finding(dst, dissect.SeverityNote, CodeDDPVersionRDMAC,
			"DDP version 0 (RDMA Consortium RNIC); IETF RNICs use 1", refDDPCtrl+"; "+refInterop)
	default:
		dst = finding(dst, dissect.SeverityWarning, CodeDDPVersionUnknown,
			"unknown DDP version "+itoa(uint64(h.DV))+" (IETF uses 1, RDMA Consortium 0)", refDDPCtrl+"; "+refValidate)
	}
	if h.Rsvd != 0 {
		dst = finding(dst, dissect.SeverityWarning, CodeDDPRsvdNonzero,
			"reserved bits of the DDP control octet are "+hex1(h.Rsvd)+", must be zero", refDDPCtrl)
	}
	switch s.RV {
	case VersionIETF:
	case VersionRDMAC:
		dst = finding(dst, dissect.SeverityNote, CodeRDMAPVersionRDMAC,
			"RDMAP version 0 (RDMA Consortium RNIC); IETF RNICs use 1", refRDMAPCtrl+"; "+refInterop)
	default:
		dst = finding(dst, dissect.SeverityWarning, CodeRDMAPVersionUnknown,
			"unknown RDMAP version "+itoa(uint64(s.RV))+" (IETF uses 1, RDMA Consortium 0)", refRDMAPCtrl+"; "+refValidate)
	}
	if s.RV != h.DV {
		dst = finding(dst, dissect.SeverityWarning, CodeVersionMix,
			"DDP version "+itoa(uint64(h.DV))+" with RDMAP version "+itoa(uint64(s.RV))+"; the two are always the same", refInterop)
	}
	if s.Rsvd != 0 {
		dst = finding(dst, dissect.SeverityWarning, CodeRDMAPRsvdNonzero,
			"reserved bits of the RDMAP control octet are "+hex1(s.Rsvd)+", must be zero", refRDMAPCtrl)
	}
	op := s.Opcode
	if !op.Valid() {
		return finding(dst, dissect.SeverityError, CodeOpcodeReserved,
			"reserved opcode "+hex1(uint8(op)), refFigure4+"; RFC 7306; "+refValidate)
	}
	if h.T != op.Tagged() {
		model := "untagged"
		if op.Tagged() {
			model = "tagged"
		}
		dst = finding(dst, dissect.SeverityError, CodeTaggedMismatch,
			""+op.String()+" must use the "+model+" buffer model but its Tagged flag is "+strconv.FormatBool(h.T), refFigure4)
	}
	if !h.T {
		dst = s.checkUntagged(dst)
	}
	switch op {
	case OpReadRequest:
		if len(s.Payload) > 0 {
			dst = finding(dst, dissect.SeverityWarning, CodePayloadUnexpected,
				""+itoa(uint64(len(s.Payload)))+" octets follow the RDMA Read Request header, which carries no payload", refFigure5)
		}
	case OpTerminate:
		if len(s.Payload) > 0 {
			dst = finding(dst, dissect.SeverityWarning, CodePayloadUnexpected,
				""+itoa(uint64(len(s.Payload)))+" octets follow the Terminate header, which carries no payload", refFigure5)
		}
		dst = s.Term.check(dst)
	}
	return dst
}

// checkUntagged holds the checks of untagged segments: queue number,
// single-segment messages and the Invalidate STag field.
func (s *Segment) checkUntagged(dst []dissect.Finding) []dissect.Finding {
	h, op := s.DDP, s.Opcode
	if h.QN > ddp.QNAtomic {
		dst = finding(dst, dissect.SeverityError, CodeDDPQNInvalid,
			"queue number "+itoa(uint64(h.QN))+" is not one RDMAP uses (0 Send, 1 Read Request, 2 Terminate, 3 RFC 7306 atomics)",
			refFigure4+"; RFC 5041 DDP error numbers (Invalid QN)")
	} else if want, ok := op.QN(); ok && h.QN != want && !(op == OpAtomicRequest && h.QN == ddp.QNAtomic) {
		dst = finding(dst, dissect.SeverityError, CodeQNMismatch,
			""+op.String()+" on queue "+itoa(uint64(h.QN))+", must use queue "+itoa(uint64(want)), refFigure4)
	}
	switch op {
	case OpReadRequest:
		if !h.L {
			dst = finding(dst, dissect.SeverityError, CodeReadReqNotLast,
				"RDMA Read Request segment without the Last flag; the request is one segment", refReadReq)
		}
		if h.MO != 0 {
			dst = finding(dst, dissect.SeverityError, CodeReadReqMO,
				"RDMA Read Request segment at message offset "+itoa(uint64(h.MO))+", must be 0", refReadReq)
		}
	case OpTerminate:
		if !h.L {
			dst = finding(dst, dissect.SeverityError, CodeTermNotLast,
				"Terminate segment without the Last flag; the Terminate is one segment", refTerm)
		}
		if h.MO != 0 {
			dst = finding(dst, dissect.SeverityError, CodeTermMO,
				"Terminate segment at message offset "+itoa(uint64(h.MO))+", must be 0", refTerm)
		}
	}
	if !op.HasInvalidate() && h.ULPRsvd != 0 {
		dst = finding(dst, dissect.SeverityWarning, CodeInvalSTagNonzero,
			"Invalidate STag field is "+hex32(h.ULPRsvd)+" on a "+op.String()+", must be zero", refRDMAPCtrl)
	}
	return dst
}

// check holds the Terminate header checks of Segment.Check.
func (t Terminate) check(dst []dissect.Finding) []dissect.Finding {
	dst = finding(dst, dissect.SeverityError, CodeTerminate, "Terminate: "+t.Explain(), refTerm)
	if t.SiwLayout {
		msg := "Terminate control word in Linux siw's little-endian bitfield layout (Layer and EType nibbles swapped, M/D/R in the low bits of octet 2); decoded as siw meant it"
		if !t.M && !t.D && !t.R {
			// No header bits to go by (DecodeTerminate): the layout
			// is guessed from the codes alone.
			msg += "; no header follows, so the layout is a guess: read in the RFC's it is " +
				hex1(t.EType) + "/" + hex1(t.Layer) + "/" + hex2(t.Code) + " (Layer/EType/Code), which no table defines"
		}
		dst = finding(dst, dissect.SeverityNote, CodeTermSiwLayout, msg, refSiw+"; RFC 5040 §4.8 Figure 8")
	}
	if !Defined(t.Layer, t.EType, t.Code) {
		dst = finding(dst, dissect.SeverityWarning, CodeTermCodeUnknown,
			"Terminate error "+hex1(t.Layer)+"/"+hex1(t.EType)+"/"+hex2(t.Code)+" (Layer/EType/Code) is not in the RFC 5040, 5041, 5044 or 6581 tables",
			"RFC 5040 §4.8 Figure 9; RFC 6580 (IANA RDDP registry)")
	}
	if t.Rsvd != 0 {
		dst = finding(dst, dissect.SeverityWarning, CodeTermRsvdNonzero,
			"reserved bits of the Terminate control word are "+hex32(uint32(t.Rsvd))+", must be zero", "RFC 5040 §4.8")
	}
	return t.CheckHeaders(dst)
}

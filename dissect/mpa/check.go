package mpa

import (
	"strconv"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// Finding codes that Frame.Check reports. Each is stable and names one rule.
const (
	// CodePDLenTooLong: PD_Length is above MaxPDLen (warning).
	CodePDLenTooLong = "mpa.pd_len_too_long"
	// CodeResNonzero: reserved flag bits are set (note).
	CodeResNonzero = "mpa.res_nonzero"
	// CodeRevUnknown: Rev is none of 0, 1, 2 (warning).
	CodeRevUnknown = "mpa.rev_unknown"
	// CodeRejectInRequest: the Reject bit is set in a Request (warning).
	CodeRejectInRequest = "mpa.reject_in_request"
	// CodeEnhancedMissing: S is set with Rev 2 but the Private Data is too
	// short to hold the Enhanced data (error).
	CodeEnhancedMissing = "mpa.enhanced_missing"
	// CodeSWithoutRev2: S is set but Rev is not 2 (note).
	CodeSWithoutRev2 = "mpa.s_without_rev2"
)

// References cited by the findings.
const (
	refFrame5044 = "RFC 5044 §7.1.1"
	refFrame6581 = "RFC 6581 §8"
)

// gsoExp is the reserved bit Linux siw sets when its try_gso parameter is
// on (MPA_RR_FLAG_GSO_EXP, 0x0800 of the big-endian word at offset 16).
const gsoExp = 0x08

// Check appends to dst the findings about f's own fields and returns the
// extended slice. It judges the frame alone; rules that need both frames
// of a connection (for example a Reply's Rev against the Request's) belong
// to the caller. Frames of the findings are left nil for the caller to
// fill in.
//
//   - mpa.pd_len_too_long (warning): PD_Length > 512, RFC 5044 §7.1.1.
//   - mpa.res_nonzero (note): reserved bits set; Linux siw sets 0x08
//     (GSO_EXP) when try_gso is on. RFC 5044 §7.1.1, RFC 6581 §8.
//   - mpa.rev_unknown (warning): Rev not 0, 1 or 2. RFC 5044 §7.1.1,
//     RFC 6581 §8.
//   - mpa.reject_in_request (warning): R set in a Request, RFC 5044 §7.1.1.
//   - mpa.enhanced_missing (error): S set with Rev 2 but the Private Data
//     is shorter than 4 octets, RFC 6581 §8.
//   - mpa.s_without_rev2 (note): S set while Rev is not 2; in Rev 0/1 the
//     bit is reserved. RFC 6581 §8.
func (f Frame) Check(dst []dissect.Finding) []dissect.Finding {
	if f.PDLen > MaxPDLen {
		dst = append(dst, dissect.Finding{
			Severity: dissect.SeverityWarning,
			Code:     CodePDLenTooLong,
			Msg:      "PD_Length " + strconv.Itoa(int(f.PDLen)) + " exceeds the maximum of 512 octets",
			Ref:      refFrame5044,
		})
	}
	if f.Res != 0 {
		msg := "reserved flag bits 0x" + strconv.FormatUint(uint64(f.Res), 16) + " are set (should be sent as zero)"
		if f.Res&gsoExp != 0 {
			msg += "; 0x08 is the Linux siw GSO_EXP flag (try_gso)"
		}
		dst = append(dst, dissect.Finding{
			Severity: dissect.SeverityNote,
			Code:     CodeResNonzero,
			Msg:      msg,
			Ref:      refFrame5044 + "; " + refFrame6581,
		})
	}
	if f.Rev > Rev2 {
		dst = append(dst, dissect.Finding{
			Severity: dissect.SeverityWarning,
			Code:     CodeRevUnknown,
			Msg:      "unknown revision " + strconv.Itoa(int(f.Rev)) + " (known: 0, 1, 2)",
			Ref:      refFrame5044 + "; " + refFrame6581,
		})
	}
	if f.Kind == KindRequest && f.R {
		dst = append(dst, dissect.Finding{
			Severity: dissect.SeverityWarning,
			Code:     CodeRejectInRequest,
			Msg:      "Reject bit set in an MPA Request (it must be zero there)",
			Ref:      refFrame5044,
		})
	}
	if f.S {
		if f.Rev == Rev2 && len(f.PD) < EnhancedLen {
			dst = append(dst, dissect.Finding{
				Severity: dissect.SeverityError,
				Code:     CodeEnhancedMissing,
				Msg:      "S bit set in a revision 2 frame but the private data (" + strconv.Itoa(len(f.PD)) + " octets) cannot hold the 4-octet Enhanced data",
				Ref:      refFrame6581,
			})
		}
		if f.Rev != Rev2 {
			dst = append(dst, dissect.Finding{
				Severity: dissect.SeverityNote,
				Code:     CodeSWithoutRev2,
				Msg:      "S (Enhanced) bit set in a revision " + strconv.Itoa(int(f.Rev)) + " frame; it means Enhanced data only with revision 2",
				Ref:      refFrame6581,
			})
		}
	}
	return dst
}

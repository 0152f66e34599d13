package rdmap

import (
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
)

func codesOf(fs []dissect.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code)
	}
	return out
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string // whole ULPDU
		want []string
	}{
		{"clean send", "41 43 00000000 00000000 00000001 00000000 6869", nil},
		{"clean write", "c1 40 4d93c500 00005588df645ed0 6869", nil},
		{"clean read request", "41 41 00000000 00000001 00000001 00000000 b069b300 0000559cab83b550 00000040 56770c00 00005588df645c60", nil},
		{"clean send with invalidate", "41 44 07bf1600 00000000 00000001 00000000", nil},
		{"clean immediate data", "41 48 00000000 00000000 00000001 00000000 0102030405060708", nil},
		{"atomic request on QN 1", "41 4a 00000000 00000001 00000001 00000000" + strings.Repeat("00", 52), nil},
		{"atomic request on QN 3", "41 4a 00000000 00000003 00000001 00000000" + strings.Repeat("00", 52), nil},
		{"atomic response on QN 3", "41 4b 00000000 00000003 00000001 00000000" + strings.Repeat("00", 12), nil},
		{"atomic response on QN 1", "41 4b 00000000 00000001 00000001 00000000" + strings.Repeat("00", 12), []string{CodeQNMismatch}},
		{"RDMAC versions", "40 03 00000000 00000000 00000001 00000000", []string{CodeDDPVersionRDMAC, CodeRDMAPVersionRDMAC}},
		{"unknown versions", "43 c3 00000000 00000000 00000001 00000000", []string{CodeDDPVersionUnknown, CodeRDMAPVersionUnknown}},
		{"version mix", "41 03 00000000 00000000 00000001 00000000", []string{CodeRDMAPVersionRDMAC, CodeVersionMix}},
		{"reserved bits", "45 73 00000000 00000000 00000001 00000000", []string{CodeDDPRsvdNonzero, CodeRDMAPRsvdNonzero}},
		{"reserved opcode", "41 4e 00000000 00000000 00000001 00000000", []string{CodeOpcodeReserved}},
		{"untagged write", "41 40 00000000 00000000 00000001 00000000", []string{CodeTaggedMismatch}},
		{"tagged send", "c1 43 4d93c500 00005588df645ed0", []string{CodeTaggedMismatch}},
		{"invalid QN", "41 43 00000000 00000004 00000001 00000000", []string{CodeDDPQNInvalid}},
		{"send on terminate queue", "41 43 00000000 00000002 00000001 00000000", []string{CodeQNMismatch}},
		{"read request not last, MO", "01 41 00000000 00000001 00000001 00000010 b069b300 0000559cab83b550 00000040 56770c00 00005588df645c60", []string{CodeReadReqNotLast, CodeReadReqMO}},
		{"read request with payload", "41 41 00000000 00000001 00000001 00000000 b069b300 0000559cab83b550 00000040 56770c00 00005588df645c60 00", []string{CodePayloadUnexpected}},
		{"inval STag on plain send", "41 43 07bf1600 00000000 00000001 00000000", []string{CodeInvalSTagNonzero}},
		{
			"terminate on send queue, not last, MO, reserved bits",
			"01 47 00000000 00000000 00000001 00000004 | 20 02 00 10",
			[]string{CodeQNMismatch, CodeTermNotLast, CodeTermMO, CodeTerminate, CodeTermRsvdNonzero},
		},
		{
			"terminate with undefined code",
			"41 47 00000000 00000002 00000001 00000000 | 02 0a 00 00",
			[]string{CodeTerminate, CodeTermCodeUnknown},
		},
		{
			// A DDP Segment Length below the header's is what Linux siw
			// sends for a short segment (its payload length): no
			// finding here (flows compares it with the segment).
			"terminate with short segment length",
			"41 47 00000000 00000002 00000001 00000000 | 11 00 c0 00 0004 c140 07bf1600 00007fe0b8347000",
			[]string{CodeTerminate},
		},
		{
			"terminate missing DDP header",
			"41 47 00000000 00000002 00000001 00000000 | 12 01 00 00",
			[]string{CodeTerminate, CodeTermHdrMissing},
		},
	} {
		s, err := Decode(unhex(t, tc.in))
		if err != nil && err != dissect.ErrUnknownOpcode {
			t.Fatalf("%s: Decode: %v", tc.name, err)
		}
		fs := s.Check(nil)
		got := codesOf(fs)
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: codes %v, want %v", tc.name, got, tc.want)
			for _, f := range fs {
				t.Logf("  %v %s: %s", f.Severity, f.Code, f.Msg)
			}
		}
		for _, f := range fs {
			if f.Severity < dissect.SeverityNote || f.Severity > dissect.SeverityError || f.Ref == "" ||
				f.Msg == "" || strings.HasPrefix(f.Msg, "rdmap: ") || strings.HasPrefix(f.Msg, "ddp: ") || // the code names the layer

				!(strings.HasPrefix(f.Code, "rdmap.") || strings.HasPrefix(f.Code, "ddp.")) {
				t.Errorf("%s: malformed finding %+v", tc.name, f)
			}
		}
	}
}

func TestCheckRealTerminates(t *testing.T) {
	for _, p := range []string{capTermBadWrite, capTermSendInv, capTermTooLong} {
		s, err := Decode(ulpduOf(t, p))
		if err != nil {
			t.Fatal(err)
		}
		fs := s.Check(nil)
		if got := strings.Join(codesOf(fs), ","); got != CodeTerminate+","+CodeTermSiwLayout {
			t.Errorf("codes %s", got)
		}
		if fs[0].Severity != dissect.SeverityError || fs[0].Msg != "Terminate: "+s.Term.Explain() {
			t.Errorf("terminate finding %+v", fs[0])
		}
		if fs[1].Severity != dissect.SeverityNote {
			t.Errorf("siw finding %+v", fs[1])
		}
	}
}

func TestCheckAppends(t *testing.T) {
	prev := []dissect.Finding{{Code: "x"}}
	s, _ := Decode(unhex(t, "41 40 00000000 00000000 00000001 00000000"))
	got := s.Check(prev)
	if len(got) != 2 || got[0].Code != "x" {
		t.Errorf("Check did not append: %+v", got)
	}
}

package rdmap

import (
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/ddp"
)

// TestExpectedHeaders is seed 004 Figure 10, row by row.
func TestExpectedHeaders(t *testing.T) {
	for _, tc := range []struct {
		layer, etype  uint8
		ddpHdr, rdmaH Need
	}{
		{0, 0, NeedNo, NeedNo},                 // RDMAP Local Catastrophic
		{0, 1, NeedIfPossible, NeedYes},        // RDMAP Remote Protection
		{0, 2, NeedIfPossible, NeedNo},         // RDMAP Remote Operation
		{1, 1, NeedYes, NeedNo},                // DDP Tagged Buffer
		{1, 2, NeedYes, NeedNo},                // DDP Untagged Buffer
		{1, 3, NeedYes, NeedNo},                // DDP (reserved for LLP)
		{1, 0, NeedIfPossible, NeedNo},         // DDP Local Catastrophic: §4.8 text vs figure
		{2, 0, NeedNo, NeedNo},                 // LLP (MPA)
		{2, 5, NeedNo, NeedNo},                 // LLP, any type
		{0, 3, NeedIfPossible, NeedIfPossible}, // not in the figure
		{7, 0, NeedIfPossible, NeedIfPossible}, // reserved layer
	} {
		d, r := ExpectedHeaders(tc.layer, tc.etype)
		if d != tc.ddpHdr || r != tc.rdmaH {
			t.Errorf("ExpectedHeaders(%d, %d) = %v, %v; want %v, %v", tc.layer, tc.etype, d, r, tc.ddpHdr, tc.rdmaH)
		}
	}
	if NeedNo.String() != "No" || NeedIfPossible.String() != "Yes, if possible" || NeedYes.String() != "Yes" {
		t.Error("Need.String")
	}
}

func TestCheckHeaders(t *testing.T) {
	readReq := ddp.Header{L: true, DV: 1, ULPCtrl: 0x41, QN: 1, MSN: 1}
	sendInv := ddp.Header{L: true, DV: 1, ULPCtrl: 0x44, QN: 0, MSN: 1, ULPRsvd: 5}
	rr := ReadRequest{Size: 8}
	for _, tc := range []struct {
		name string
		t    Terminate
		want []string
	}{
		{"siw badwrite is fine", wantTermBadWrite, nil},
		{"siw sendinv is fine", wantTermSendInv, nil},
		{"siw toolong is fine", wantTermTooLong, nil},
		{"DDP error without DDP header", Terminate{Layer: 1, EType: 2, Code: 1}, []string{CodeTermHdrMissing}},
		{"LLP error with DDP header", Terminate{Layer: 2, Code: 2, M: true, D: true, DDP: readReq, HasDDP: true}, []string{CodeTermHdrUnexpected}},
		{"LLP error with segment length only", Terminate{Layer: 2, Code: 2, M: true}, []string{CodeTermHdrUnexpected}},
		{"local catastrophic, nothing", Terminate{}, nil},
		{"remote protection on read, all headers", Terminate{Layer: 0, EType: 1, M: true, D: true, R: true, DDP: readReq, HasDDP: true, RDMA: rr, HasRDMA: true}, nil},
		{"remote protection on read, no RDMA header", Terminate{Layer: 0, EType: 1, M: true, D: true, DDP: readReq, HasDDP: true}, []string{CodeTermHdrMissing}},
		{"remote protection on send/inv, no RDMA header", Terminate{Layer: 0, EType: 1, Code: 9, M: true, D: true, DDP: sendInv, HasDDP: true}, nil},
		{"remote protection on send/inv with RDMA header", Terminate{Layer: 0, EType: 1, Code: 9, M: true, D: true, R: true, DDP: sendInv, HasDDP: true, RDMA: rr, HasRDMA: true}, []string{CodeTermHdrUnexpected}},
		{"remote protection, no headers at all", Terminate{Layer: 0, EType: 1}, []string{CodeTermHdrMissing}},
		{"remote operation with RDMA header", Terminate{Layer: 0, EType: 2, Code: 6, M: true, D: true, R: true, DDP: readReq, HasDDP: true, RDMA: rr, HasRDMA: true}, []string{CodeTermHdrUnexpected}},
		{"D without M", Terminate{Layer: 1, EType: 1, D: true, DDP: readReq, HasDDP: true}, []string{CodeTermLenMissing}},
	} {
		got := tc.t.CheckHeaders(nil)
		var codes []string
		for _, f := range got {
			codes = append(codes, f.Code)
			if f.Ref == "" || f.Msg == "" || f.Severity == 0 {
				t.Errorf("%s: incomplete finding %+v", tc.name, f)
			}
		}
		if len(codes) != len(tc.want) {
			t.Errorf("%s: codes %v, want %v", tc.name, codes, tc.want)
			continue
		}
		for i := range codes {
			if codes[i] != tc.want[i] {
				t.Errorf("%s: codes %v, want %v", tc.name, codes, tc.want)
			}
		}
	}
}

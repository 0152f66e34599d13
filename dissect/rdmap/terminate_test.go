package rdmap

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ddp"
)

// The three real siw Terminates, read as siw meant them (captures
// MANIFEST; octet values as tshark shows them).
var (
	wantTermBadWrite = Terminate{
		Layer: 1, EType: 1, Code: 0x00, M: true, D: true,
		DDPSegLen: 64,
		DDP:       ddp.Header{T: true, L: true, DV: 1, ULPCtrl: 0x40, STag: 0x07bf1600, TO: 0x00007fe0b8347000},
		HasDDP:    true,
		SiwLayout: true,
	}
	wantTermSendInv = Terminate{
		Layer: 0, EType: 2, Code: 0x09, M: true, D: true,
		DDPSegLen: 40,
		DDP:       ddp.Header{L: true, DV: 1, ULPCtrl: 0x46, QN: 0, MSN: 2, MO: 0},
		HasDDP:    true,
		SiwLayout: true,
	}
	wantTermTooLong = Terminate{
		Layer: 1, EType: 2, Code: 0x02, M: true, D: true,
		DDPSegLen: 1424,
		DDP:       ddp.Header{L: false, DV: 1, ULPCtrl: 0x43, QN: 0, MSN: 1, MO: 2848},
		HasDDP:    true,
		SiwLayout: true,
	}
)

var terminateTests = []struct {
	name string
	in   string // octets after the untagged DDP header
	want Terminate
	n    int
}{
	{"siw badwrite", "11 00 03 00 0040 c140 07bf1600 00007fe0b8347000", wantTermBadWrite, 20},
	{"siw sendinv", "20 09 03 00 0028 4146 00000000 00000000 00000002 00000000", wantTermSendInv, 24},
	{"siw toolong", "21 02 03 00 0590 0143 00000000 00000000 00000001 00000b20", wantTermTooLong, 24},
	{
		// The same errors in the RFC 5040 §4.8 layout (M=0x80, D=0x40).
		"rfc badwrite", "11 00 c0 00 0040 c140 07bf1600 00007fe0b8347000",
		Terminate{Layer: 1, EType: 1, M: true, D: true, DDPSegLen: 64, DDP: wantTermBadWrite.DDP, HasDDP: true}, 20,
	},
	{
		"rfc sendinv", "02 09 c0 00 0028 4146 00000000 00000000 00000002 00000000",
		Terminate{Layer: 0, EType: 2, Code: 9, M: true, D: true, DDPSegLen: 40, DDP: wantTermSendInv.DDP, HasDDP: true}, 24,
	},
	{
		// RFC layout: RDMAP Remote Protection / Invalid STag for a Read
		// Request, with all three headers (the 52-octet maximum).
		"rfc read request, all headers",
		"01 00 e0 00 002e 4141 00000000 00000001 00000007 00000000 b069b300 0000559cab83b550 00000040 56770c00 00005588df645c60",
		Terminate{
			Layer: 0, EType: 1, Code: 0, M: true, D: true, R: true, DDPSegLen: 46,
			DDP:     ddp.Header{L: true, DV: 1, ULPCtrl: 0x41, QN: 1, MSN: 7},
			HasDDP:  true,
			RDMA:    ReadRequest{SinkSTag: 0xb069b300, SinkTO: 0x0000559cab83b550, Size: 64, SrcSTag: 0x56770c00, SrcTO: 0x00005588df645c60},
			HasRDMA: true,
		}, 52,
	},
	{"rfc LLP CRC error, no headers", "20 02 00 00", Terminate{Layer: 2, EType: 0, Code: 2}, 4},
	{
		// siw's LLP CRC error: nibbles swapped, no flags. The RFC reading
		// (RDMAP / Remote Operation / 0x02) is undefined, the swapped one
		// is MPA CRC error.
		"siw LLP CRC error, no headers", "02 02 00 00", Terminate{Layer: 2, EType: 0, Code: 2, SiwLayout: true}, 4,
	},
	{
		// The RFC reading is defined (RDMAP / Remote Protection / Invalid
		// STag), so no swap even though the swapped one (DDP Local
		// Catastrophic) is defined too.
		"ambiguous no-header terminate stays RFC", "01 00 00 00", Terminate{Layer: 0, EType: 1, Code: 0}, 4,
	},
	{"rfc local catastrophic", "00 00 00 00", Terminate{}, 4},
	{
		// Only the control word: the siw reading of 03 (M and D) would need
		// more octets, so this is the RFC layout with reserved bits 0x300.
		"siw-like control word alone stays RFC", "20 09 03 00", Terminate{Layer: 2, EType: 0, Code: 9, Rsvd: 0x300}, 4,
	},
	{
		// siw reading would need 2+18 octets; 5 are there: RFC layout, and
		// the 5 octets are left over.
		"siw-like with inconsistent length stays RFC", "20 09 03 00 0028 4146 000000",
		Terminate{Layer: 2, EType: 0, Code: 9, Rsvd: 0x300}, 4,
	},
	{
		// Low nibble 3 is not a layer siw would write: RFC layout.
		"siw-like with reserved siw layer stays RFC", "23 09 03 00 0028 4146 00000000 00000000 00000002 00000000",
		Terminate{Layer: 2, EType: 3, Code: 9, Rsvd: 0x300}, 4,
	},
	{
		// Octet 3 nonzero: RFC layout.
		"siw-like with octet 3 set stays RFC", "11 00 03 01 0040 c140 07bf1600 00007fe0b8347000",
		Terminate{Layer: 1, EType: 1, Rsvd: 0x301}, 4,
	},
	{
		// siw with M only: 2 octets of length, nothing else.
		"siw M only", "11 00 01 00 0040", Terminate{Layer: 1, EType: 1, M: true, DDPSegLen: 64, SiwLayout: true}, 6,
	},
	{
		// siw with R only (all three flag positions used).
		"siw R only", "10 00 04 00 b069b300 0000559cab83b550 00000040 56770c00 00005588df645c60",
		Terminate{Layer: 0, EType: 1, R: true, SiwLayout: true, HasRDMA: true,
			RDMA: ReadRequest{SinkSTag: 0xb069b300, SinkTO: 0x0000559cab83b550, Size: 64, SrcSTag: 0x56770c00, SrcTO: 0x00005588df645c60}}, 32,
	},
	{
		// All reserved bits set in the RFC layout.
		"rfc reserved bits", "ff ff 1f ff", Terminate{Layer: 0xF, EType: 0xF, Code: 0xFF, Rsvd: 0x1FFF}, 4,
	},
}

func TestDecodeTerminate(t *testing.T) {
	for _, tt := range terminateTests {
		t.Run(tt.name, func(t *testing.T) {
			in := unhex(t, tt.in)
			got, n, err := DecodeTerminate(in)
			if err != nil {
				t.Fatalf("DecodeTerminate: %v", err)
			}
			if got != tt.want || n != tt.n {
				t.Fatalf("DecodeTerminate =\n %+v, %d\nwant\n %+v, %d", got, n, tt.want, tt.n)
			}
			if got.Len() != n {
				t.Errorf("Len() = %d, want %d", got.Len(), n)
			}
			if enc := AppendTerminate(nil, got); !bytes.Equal(enc, in[:n]) {
				t.Errorf("AppendTerminate = %x, want %x", enc, in[:n])
			}
		})
	}
}

// TestRealTerminates decodes the three Terminates of the siw captures from
// the whole TCP payload, through Decode.
func TestRealTerminates(t *testing.T) {
	for _, tc := range []struct {
		name, payload string
		want          Terminate
	}{
		{"term_badwrite frame 11", capTermBadWrite, wantTermBadWrite},
		{"term_sendinv frame 13", capTermSendInv, wantTermSendInv},
		{"term_toolong frame 16", capTermTooLong, wantTermTooLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := ulpduOf(t, tc.payload)
			s, err := Decode(u)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			// tshark: untagged, L, DV 1, RV 1, Terminate, QN 2, MSN 1, MO 0.
			wantDDP := ddp.Header{L: true, DV: 1, ULPCtrl: 0x47, QN: 2, MSN: 1}
			if s.DDP != wantDDP || s.RV != 1 || s.Opcode != OpTerminate {
				t.Errorf("DDP = %+v RV %d %#v", s.DDP, s.RV, s.Opcode)
			}
			if s.Term != tc.want {
				t.Errorf("Term =\n %+v\nwant\n %+v", s.Term, tc.want)
			}
			if s.HdrLen != len(u) || len(s.Payload) != 0 {
				t.Errorf("HdrLen %d, payload %d octets; want %d, 0", s.HdrLen, len(s.Payload), len(u))
			}
			if enc := AppendSegment(nil, s); !bytes.Equal(enc, u) {
				t.Errorf("AppendSegment = %x, want %x", enc, u)
			}
		})
	}
}

func TestDecodeTerminateTruncated(t *testing.T) {
	full := [][]byte{
		unhex(t, "01 00 e0 00 002e 4141 00000000 00000001 00000007 00000000 b069b300 0000559cab83b550 00000040 56770c00 00005588df645c60"),
		unhex(t, "11 00 c0 00 0040 c140 07bf1600 00007fe0b8347000"),
		unhex(t, "11 00 80 00 0040"),
	}
	for _, b := range full {
		for i := 0; i < len(b); i++ {
			got, n, err := DecodeTerminate(b[:i])
			if err != dissect.ErrTruncated {
				t.Errorf("DecodeTerminate(%x) err = %v, want ErrTruncated", b[:i], err)
			}
			if got != (Terminate{}) || n != 0 {
				t.Errorf("DecodeTerminate(%x) = %+v, %d; want zero values", b[:i], got, n)
			}
		}
	}
}

func TestTerminateRoundTrip(t *testing.T) {
	rr := ReadRequest{SinkSTag: 1, SinkTO: 2, Size: 3, SrcSTag: 4, SrcTO: 5}
	tagged := ddp.Header{T: true, L: true, DV: 1, ULPCtrl: 0x42, STag: 9, TO: 10}
	untagged := ddp.Header{L: true, DV: 1, ULPCtrl: 0x41, QN: 1, MSN: 3}
	for _, tr := range []Terminate{
		{},
		{Layer: 2, Code: 1},
		{Layer: 1, EType: 2, Code: 5, M: true, D: true, DDPSegLen: 100, DDP: untagged, HasDDP: true},
		{Layer: 1, EType: 1, Code: 1, M: true, D: true, DDPSegLen: 100, DDP: tagged, HasDDP: true},
		{Layer: 0, EType: 1, Code: 2, M: true, D: true, R: true, DDPSegLen: 46, DDP: untagged, HasDDP: true, RDMA: rr, HasRDMA: true},
		{Layer: 0, EType: 1, Code: 0xFF, M: true, DDPSegLen: 7},
		{Layer: 0, EType: 2, Code: 6, Rsvd: 0x1ABC},
		{Layer: 1, EType: 1, Code: 0, M: true, D: true, DDPSegLen: 64, DDP: tagged, HasDDP: true, SiwLayout: true},
		{Layer: 0, EType: 1, Code: 3, M: true, D: true, R: true, DDPSegLen: 46, DDP: untagged, HasDDP: true, RDMA: rr, HasRDMA: true, SiwLayout: true},
	} {
		b := AppendTerminate(nil, tr)
		if len(b) != tr.Len() {
			t.Errorf("%+v: wrote %d octets, Len %d", tr, len(b), tr.Len())
		}
		got, n, err := DecodeTerminate(b)
		if err != nil || got != tr || n != len(b) {
			t.Errorf("round trip of %+v:\n got %+v, %d, %v", tr, got, n, err)
		}
	}
}

func FuzzTerminate(f *testing.F) {
	for _, tt := range terminateTests {
		f.Add(unhex(f, tt.in))
	}
	f.Add([]byte{0x20, 0x09, 0x03, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, n, err := DecodeTerminate(b)
		if err != nil {
			if tr != (Terminate{}) || n != 0 {
				t.Fatalf("error %v with non-zero result", err)
			}
			return
		}
		if n > len(b) || n != tr.Len() || tr.HasDDP != tr.D || tr.HasRDMA != tr.R {
			t.Fatalf("inconsistent: n=%d len=%d Len=%d %+v", n, len(b), tr.Len(), tr)
		}
		if tr.SiwLayout && tr.Rsvd != 0 {
			t.Fatalf("siw layout with reserved bits %#x", tr.Rsvd)
		}
		enc := AppendTerminate(nil, tr)
		if !bytes.Equal(enc, b[:n]) {
			t.Fatalf("AppendTerminate(DecodeTerminate(%x)) = %x", b[:n], enc)
		}
		tr2, n2, err := DecodeTerminate(enc)
		if err != nil || tr2 != tr || n2 != n {
			t.Fatalf("second decode of %x: %+v, %d, %v; want %+v, %d", enc, tr2, n2, err, tr, n)
		}
		_ = tr.Explain()
		_ = tr.CheckHeaders(nil)
	})
}

// TestDecodeTerminateCut cuts Terminates (the three real siw ones, and
// RFC-layout ones with each header) after every octet from the control
// word on: the cut decode must agree with the whole one on every field the
// octets held, and choose the same layout from the wire length.
func TestDecodeTerminateCut(t *testing.T) {
	// Each body is a whole header and nothing after it.
	bodies := [][]byte{
		unhex(t, "01 00 e0 00 002e 4141 00000000 00000001 00000007 00000000 b069b300 0000559cab83b550 00000040 56770c00 00005588df645c60"),
		unhex(t, "11 00 c0 00 0040 c140 07bf1600 00007fe0b8347000"),
		unhex(t, "11 00 80 00 0040"),
		unhex(t, "10 00 04 00 b069b300 0000559cab83b550 00000040 56770c00 00005588df645c60"),
	}
	for _, p := range []string{capTermBadWrite, capTermSendInv, capTermTooLong} {
		u := ulpduOf(t, p)
		bodies = append(bodies, u[18:])
	}
	for _, b := range bodies {
		whole, n, err := DecodeTerminate(b)
		if err != nil || n != len(b) {
			t.Fatalf("DecodeTerminate(%x) = %d, %v", b, n, err)
		}
		for i := 0; i <= len(b); i++ {
			got, m, err := DecodeTerminateCut(b[:i], len(b))
			if i < terminateMinLen {
				if err != dissect.ErrTruncated {
					t.Errorf("%x cut at %d: err %v, want ErrTruncated", b, i, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%x cut at %d: %v", b, i, err)
			}
			want := whole
			if i < len(b) {
				want.Cut = true
				segLen := 4
				if whole.M || whole.D {
					segLen = 6
				}
				if i < segLen {
					want.DDPSegLen = 0
				}
				if whole.D && i < segLen+whole.DDP.Len() {
					want.DDP, want.HasDDP = ddp.Header{}, false
				}
				if whole.R {
					// The Read Request header is last: any cut is in it.
					want.RDMA, want.HasRDMA = ReadRequest{}, false
				}
			}
			if got != want || m > i {
				t.Errorf("%x cut at %d:\n got %+v, %d\nwant %+v", b, i, got, m, want)
			}
		}
	}
}

// TestDecodeCutInto decodes the real siw Terminates of term_badwrite,
// term_sendinv and term_toolong from ULPDUs cut after every octet: the
// Terminate is known from its control word on, and other cut segments
// give DecodeInto's error.
func TestDecodeCutInto(t *testing.T) {
	for _, p := range []string{capTermBadWrite, capTermSendInv, capTermTooLong} {
		u := ulpduOf(t, p)
		whole, err := Decode(u)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i <= len(u); i++ {
			var s Segment
			err := DecodeCutInto(&s, u[:i], len(u))
			if i < 18+terminateMinLen {
				if err != dissect.ErrTruncated {
					t.Errorf("cut at %d: err %v, want ErrTruncated", i, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("cut at %d: %v", i, err)
			}
			w := whole.Term
			if s.DDP != whole.DDP || s.Opcode != OpTerminate || s.Term.Layer != w.Layer || s.Term.EType != w.EType ||
				s.Term.Code != w.Code || s.Term.SiwLayout != w.SiwLayout || s.Term.D != w.D || s.Term.M != w.M {
				t.Errorf("cut at %d: %+v, want %+v", i, s, whole)
			}
			if s.HdrLen != len(u) || len(s.Payload) != 0 {
				t.Errorf("cut at %d: HdrLen %d payload %d octets, want %d, none", i, s.HdrLen, len(s.Payload), len(u))
			}
			if s.Term.Cut != (i < len(u)) {
				t.Errorf("cut at %d: Cut %v", i, s.Term.Cut)
			}
		}
	}
	// A Read Request (the real one of the siw iwtest capture) cut after
	// every octet: undecodable before its Data Sink STag, then the fields
	// it holds whole, those of the whole decode.
	u := ulpduOf(t, capReadReq)
	whole, err := Decode(u)
	if err != nil || whole.Opcode != OpReadRequest {
		t.Fatalf("Read Request: %v %v", whole.Opcode, err)
	}
	for i := 0; i <= len(u); i++ {
		var s Segment
		err := DecodeCutInto(&s, u[:i], len(u))
		have := i - 18
		switch {
		case i == len(u):
			if err != nil || !reflect.DeepEqual(s, whole) {
				t.Errorf("uncut: %+v %v, want %+v", s, err, whole)
			}
		case have < 4:
			if err != dissect.ErrTruncated || !reflect.DeepEqual(s, Segment{}) {
				t.Errorf("cut at %d: %+v %v, want ErrTruncated and nothing", i, s, err)
			}
		default:
			if err != nil {
				t.Fatalf("cut at %d: %v", i, err)
			}
			want := ReadRequest{}
			sinkSTag, sinkTO, size, srcSTag, srcTO := ReadRequestKnown(have)
			if sinkSTag {
				want.SinkSTag = whole.Read.SinkSTag
			}
			if sinkTO {
				want.SinkTO = whole.Read.SinkTO
			}
			if size {
				want.Size = whole.Read.Size
			}
			if srcSTag {
				want.SrcSTag = whole.Read.SrcSTag
			}
			if srcTO {
				t.Errorf("cut at %d: Data Source TO known", i)
			}
			if s.Read != want || s.HdrCut != have || s.DDP != whole.DDP || s.Opcode != OpReadRequest ||
				s.HdrLen != len(u) || s.Payload != nil {
				t.Errorf("cut at %d: %+v HdrCut %d HdrLen %d, want %+v, %d, %d", i, s.Read, s.HdrCut, s.HdrLen, want, have, len(u))
			}
			if fs := s.Check(nil); len(fs) != 0 {
				t.Errorf("cut at %d: findings %v", i, fs)
			}
		}
	}
	// Known fields by the octets held.
	for _, c := range []struct {
		have int
		want [5]bool
	}{{0, [5]bool{true, true, true, true, true}}, {3, [5]bool{}}, {4, [5]bool{true}}, {11, [5]bool{true}},
		{12, [5]bool{true, true}}, {16, [5]bool{true, true, true}}, {20, [5]bool{true, true, true, true}},
		{27, [5]bool{true, true, true, true}}, {28, [5]bool{true, true, true, true, true}}} {
		a, b, c2, d, e := ReadRequestKnown(c.have)
		if got := [5]bool{a, b, c2, d, e}; got != c.want {
			t.Errorf("ReadRequestKnown(%d) = %v, want %v", c.have, got, c.want)
		}
	}
}

// FuzzDecodeCut: DecodeTerminateCut and DecodeCutInto on any octets and
// any wire length never panic, never claim more octets than they were
// given or than the wire held, agree with the whole decode when nothing
// was cut, and, when they decode a Terminate the capture cut, keep the
// control word the cut octets hold.
func FuzzDecodeCut(f *testing.F) {
	for _, p := range []string{capTermBadWrite, capTermSendInv, capTermTooLong, capReadReq, capWrite} {
		u := ulpduOf(f, p)
		for _, cut := range []int{0, 18, 22, 24, 30, len(u) - 1, len(u)} {
			f.Add(u[:max(0, min(cut, len(u)))], len(u))
		}
	}
	for _, op := range []Opcode{OpImmediate, OpAtomicRequest, OpAtomicResponse} {
		u := AppendSegment(nil, Segment{DDP: ddp.Header{L: true, DV: 1, QN: 1}, RV: 1, Opcode: op, Immediate: 1,
			AtomicReq: AtomicRequest{Op: AtomicSwap, ReqID: 2, CompareMask: 3}, AtomicResp: AtomicResponse{ReqID: 4, OrigValue: 5}})
		for _, cut := range []int{18, 22, 25, len(u) - 1} {
			f.Add(u[:cut], len(u))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, wire int) {
		wire %= 1 << 16
		tr, n, err := DecodeTerminateCut(b, wire)
		switch {
		case err != nil:
			if tr != (Terminate{}) || n != 0 {
				t.Fatalf("DecodeTerminateCut: error %v with %+v, %d", err, tr, n)
			}
		case n > len(b) || n > max(wire, 0) && len(b) >= wire:
			t.Fatalf("DecodeTerminateCut(%d octets, wire %d) took %d", len(b), wire, n)
		case len(b) >= wire:
			whole, wn, werr := DecodeTerminate(b[:max(wire, 0)])
			if whole != tr || wn != n || werr != nil {
				t.Fatalf("uncut: %+v %d, DecodeTerminate %+v %d %v", tr, n, whole, wn, werr)
			}
		case !tr.Cut && n != tr.Len():
			t.Fatalf("whole header of %d octets, Len %d", n, tr.Len())
		}
		var s Segment
		err = DecodeCutInto(&s, b, wire)
		if len(b) >= wire || err != nil {
			var whole Segment
			werr := DecodeInto(&whole, b)
			if len(b) >= wire && (werr != err || !reflect.DeepEqual(whole, s)) {
				t.Fatalf("uncut: %+v %v, DecodeInto %+v %v", s, err, whole, werr)
			}
			return
		}
		if s.Opcode == OpTerminate && s.Term.Cut && (s.HdrLen != wire || s.Payload != nil) {
			t.Fatalf("cut Terminate: HdrLen %d (wire %d), payload %d octets", s.HdrLen, wire, len(s.Payload))
		}
		if s.HdrCut != 0 {
			m := cutHeaderLen(s.Opcode)
			if m == 0 || s.HdrCut < 4 || s.HdrCut >= m || s.HdrLen != wire || s.Payload != nil || s.DDP.Len()+s.HdrCut != len(b) {
				t.Fatalf("cut %v of %d octets (wire %d): %+v", s.Opcode, len(b), wire, s)
			}
			// The last field is past the octets captured: unknown, zero.
			var known, zero bool
			switch s.Opcode {
			case OpReadRequest:
				_, _, _, _, known = ReadRequestKnown(s.HdrCut)
				zero = s.Read.SrcTO == 0
			case OpAtomicRequest:
				_, _, _, _, _, _, _, known = AtomicRequestKnown(s.HdrCut)
				zero = s.AtomicReq.CompareMask == 0
			case OpAtomicResponse:
				_, known = AtomicResponseKnown(s.HdrCut)
				zero = s.AtomicResp.OrigValue == 0
			default:
				zero = s.Immediate == 0
			}
			if known || !zero {
				t.Fatalf("cut %v of %d octets (wire %d): fields past the cut: %+v", s.Opcode, len(b), wire, s)
			}
		}
		if s.HdrLen+len(s.Payload) > len(b) && !(s.Opcode == OpTerminate && s.Term.Cut) && s.HdrCut == 0 {
			t.Fatalf("HdrLen %d + payload %d > %d octets", s.HdrLen, len(s.Payload), len(b))
		}
		_ = s.Check(nil)
		if s.Opcode == OpTerminate {
			_ = s.Term.Explain()
		}
	})
}

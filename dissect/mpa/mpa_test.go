package mpa

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// PROTOCOL.md G.1: RFC 3720 Appendix B.4 vectors (on-wire octets are the
// value least significant octet first) and the standard check value.
func TestCRC32CVectors(t *testing.T) {
	seq := func(from, step int) []byte {
		b := make([]byte, 32)
		for i := range b {
			b[i] = byte(from + step*i)
		}
		return b
	}
	tests := []struct {
		name  string
		in    []byte
		value uint32
		wire  string
	}{
		{"32 zeros", make([]byte, 32), 0x8A9136AA, "aa 36 91 8a"},
		{"32 x ff", bytes.Repeat([]byte{0xff}, 32), 0x62A8AB43, "43 ab a8 62"},
		{"incrementing", seq(0, 1), 0x46DD794E, "4e 79 dd 46"},
		{"decrementing", seq(0x1f, -1), 0x113FDB5C, "5c db 3f 11"},
		{"123456789", []byte("123456789"), 0xE3069283, "83 92 06 e3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CRC32C(tt.in); got != tt.value {
				t.Errorf("CRC32C = %#08x, want %#08x", got, tt.value)
			}
			// Piecewise, in every split, as a caller checksumming around
			// markers does.
			for i := 0; i <= len(tt.in); i++ {
				if got := UpdateCRC32C(UpdateCRC32C(0, tt.in[:i]), tt.in[i:]); got != tt.value {
					t.Fatalf("split at %d: %#08x, want %#08x", i, got, tt.value)
				}
			}
			// The CRC field of an FPDU carries it least significant octet
			// first: the octets RFC 3720 B.4 lists.
			p := FPDU{CRC: tt.value}
			wire := make([]byte, 4)
			wire[0], wire[1], wire[2], wire[3] = byte(p.CRC), byte(p.CRC>>8), byte(p.CRC>>16), byte(p.CRC>>24)
			if want := unhex(t, tt.wire); !bytes.Equal(wire, want) {
				t.Errorf("wire octets % x, want % x", wire, want)
			}
		})
	}
}

// PROTOCOL.md G.2: a Rev 1 Request with C=1, M=0 and no private data.
func TestSampleRequest(t *testing.T) {
	wire := unhex(t, "4d 50 41 20 49 44 20 52 65 71 20 46 72 61 6d 65 40 01 00 00")
	want := Frame{Kind: KindRequest, C: true, Rev: 1, PD: wire[20:20]}
	f, n, err := DecodeFrame(wire)
	if err != nil || n != 20 {
		t.Fatalf("DecodeFrame = n %d, err %v; want 20, nil", n, err)
	}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("DecodeFrame = %+v, want %+v", f, want)
	}
	if got := AppendFrame(nil, want); !bytes.Equal(got, wire) {
		t.Errorf("AppendFrame = % x, want % x", got, wire)
	}
	if fs := f.Check(nil); len(fs) != 0 {
		t.Errorf("Check = %+v, want no findings", fs)
	}
}

// PROTOCOL.md G.3: an untagged Send carrying "hello", CRC on.
func TestSampleFPDU(t *testing.T) {
	wire := unhex(t, `00 17  41 43  00 00 00 00  00 00 00 00  00 00 00 01  00 00 00 00
		68 65 6c 6c 6f  00 00 00  b9 90 b1 0c`)
	ulpdu := wire[2:25]
	if got := AppendFPDU(nil, ulpdu, true); !bytes.Equal(got, wire) {
		t.Fatalf("AppendFPDU =\n% x\nwant\n% x", got, wire)
	}
	p, n, err := DecodeFPDU(wire)
	if err != nil || n != 32 {
		t.Fatalf("DecodeFPDU = n %d, err %v; want 32, nil", n, err)
	}
	if p.ULPDULen != 23 || !bytes.Equal(p.ULPDU, ulpdu) || !bytes.Equal(p.Pad, []byte{0, 0, 0}) {
		t.Errorf("DecodeFPDU = %+v", p)
	}
	if p.CRC != 0x0CB190B9 {
		t.Errorf("CRC = %#08x, want 0x0cb190b9", p.CRC)
	}
	if !p.CRCOK() || !p.PadZero() || p.ComputedCRC() != 0x0CB190B9 {
		t.Errorf("CRCOK %v PadZero %v ComputedCRC %#x", p.CRCOK(), p.PadZero(), p.ComputedCRC())
	}
	// With CRCs off the field is zero and everything else identical.
	off := AppendFPDU(nil, ulpdu, false)
	if !bytes.Equal(off[:28], wire[:28]) || !bytes.Equal(off[28:], []byte{0, 0, 0, 0}) {
		t.Errorf("AppendFPDU(crc=false) = % x", off)
	}
	// Every shorter prefix is truncated.
	for i := range wire {
		if _, _, err := DecodeFPDU(wire[:i]); err != dissect.ErrTruncated {
			t.Fatalf("DecodeFPDU(%d octets) err = %v, want ErrTruncated", i, err)
		}
	}
	// A wrong CRC is seen.
	bad := bytes.Clone(wire)
	bad[10] ^= 1
	if p, _, _ := DecodeFPDU(bad); p.CRCOK() {
		t.Error("CRCOK true after corrupting the ULPDU")
	}
}

func TestPadAndPlainLen(t *testing.T) {
	// RFC 5044 §4.1: 2 + ULPDU + PAD is a multiple of 4.
	tests := []struct{ ulpdu, pad, plain int }{
		{0, 2, 8}, {1, 1, 8}, {2, 0, 8}, {3, 3, 12}, {18, 0, 24},
		{23, 3, 32}, {34, 0, 40}, {1442, 0, 1448}, {65535, 3, 65544},
	}
	for _, tt := range tests {
		if got := PadLen(tt.ulpdu); got != tt.pad {
			t.Errorf("PadLen(%d) = %d, want %d", tt.ulpdu, got, tt.pad)
		}
		if got := PlainLen(tt.ulpdu); got != tt.plain {
			t.Errorf("PlainLen(%d) = %d, want %d", tt.ulpdu, got, tt.plain)
		}
	}
	for u := range 4096 {
		if (LenFieldLen+u+PadLen(u))%4 != 0 || PadLen(u) > 3 {
			t.Fatalf("PadLen(%d) = %d breaks alignment", u, PadLen(u))
		}
	}
	if PlainLen(0) != MinFPDULen || PlainLen(2) != MinFPDULen {
		t.Error("the smallest FPDUs are not MinFPDULen")
	}
}

func TestMULPDU(t *testing.T) {
	tests := []struct {
		emss    int
		markers bool
		want    int
		why     string
	}{
		{1460, true, 1442, "PROTOCOL.md A.3 worked example: 1460-(6+12+0)"},
		// siw on lo (MTU 1500, timestamps: EMSS 1448, no markers) sends
		// full-size FPDUs with ULPDU_Length 1442 (crc_v2_iwtest_ops.pcap
		// frame 17, tshark).
		{1448, false, 1442, "siw capture"},
		{1448, true, 1430, "1448-(6+12+0)"},
		{1461, true, 1442, "1461-(6+12+1)"},
		{512, true, 502, "512-(6+4+0)"},
		{513, true, 498, "513-(6+8+1)"},
		{8, false, 2, "8-(6+0)"},
		{6, false, 0, "no room"},
		{0, true, 0, "nonsense"},
		{-5, false, 0, "nonsense"},
	}
	for _, tt := range tests {
		if got := MULPDU(tt.emss, tt.markers); got != tt.want {
			t.Errorf("MULPDU(%d, %v) = %d, want %d (%s)", tt.emss, tt.markers, got, tt.want, tt.why)
		}
	}
	// A MULPDU-sized FPDU fits the segment, markers included.
	for emss := 8; emss <= 9000; emss++ {
		for _, m := range []bool{false, true} {
			u := MULPDU(emss, m)
			size := PlainLen(u)
			if m {
				size += MarkerLen * ((emss + MarkerPeriod - 1) / MarkerPeriod)
			}
			if u > 0 && size > emss {
				t.Fatalf("MULPDU(%d, %v) = %d: FPDU of %d octets does not fit", emss, m, u, size)
			}
		}
	}
}

func TestFPDURoundTrip(t *testing.T) {
	for _, size := range []int{0, 1, 2, 3, 4, 5, 17, 18, 1442, 4096, MaxULPDULen} {
		for _, crc := range []bool{false, true} {
			ulpdu := make([]byte, size)
			for i := range ulpdu {
				ulpdu[i] = byte(i*7 + size)
			}
			prefix := []byte("prefix")
			wire := AppendFPDU(bytes.Clone(prefix), ulpdu, crc)
			if !bytes.Equal(wire[:len(prefix)], prefix) {
				t.Fatal("AppendFPDU changed dst's octets")
			}
			wire = wire[len(prefix):]
			p, n, err := DecodeFPDU(wire)
			if err != nil || n != len(wire) || n != PlainLen(size) {
				t.Fatalf("size %d: n %d len %d err %v", size, n, len(wire), err)
			}
			if int(p.ULPDULen) != size || !bytes.Equal(p.ULPDU, ulpdu) || len(p.Pad) != PadLen(size) || !p.PadZero() {
				t.Errorf("size %d: decoded %d octets, pad %d", size, p.ULPDULen, len(p.Pad))
			}
			if crc != p.CRCOK() && !(size == 0 && p.CRC == 0) {
				t.Errorf("size %d crc %v: CRCOK %v", size, crc, p.CRCOK())
			}
			if !crc && p.CRC != 0 {
				t.Errorf("size %d: CRC field %#x with crc off", size, p.CRC)
			}
			if cap(p.ULPDU) != len(p.ULPDU) || cap(p.Pad) != len(p.Pad) || cap(p.Raw) != len(p.Raw) {
				t.Error("decoded slices are not capped")
			}
		}
	}
}

func TestAppendFPDUTooLong(t *testing.T) {
	dst := []byte("keep")
	big := make([]byte, MaxULPDULen+1)
	if got := AppendFPDU(dst, big, true); !bytes.Equal(got, dst) || len(got) != 4 {
		t.Errorf("AppendFPDU(too long) appended %d octets", len(got)-4)
	}
	got, err := AppendFPDUChecked(dst, big, true)
	if !errors.Is(err, dissect.ErrBadLength) || !bytes.Equal(got, dst) {
		t.Errorf("AppendFPDUChecked(too long) = %d octets, %v", len(got), err)
	}
	got, err = AppendFPDUChecked(nil, []byte{1, 2}, true)
	if err != nil || len(got) != 8 {
		t.Errorf("AppendFPDUChecked = % x, %v", got, err)
	}
}

func TestDecodeFrameErrors(t *testing.T) {
	req := AppendFrame(nil, Frame{Kind: KindRequest, Rev: 1, PD: []byte("abc")})
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, dissect.ErrTruncated},
		{"one octet", []byte("M"), dissect.ErrTruncated},
		{"key prefix", []byte("MPA ID Re"), dissect.ErrTruncated},
		{"request prefix", []byte("MPA ID Req Fr"), dissect.ErrTruncated},
		{"reply prefix", []byte("MPA ID Rep Fr"), dissect.ErrTruncated},
		{"key only", KeyReply[:], dissect.ErrTruncated},
		{"header cut", req[:19], dissect.ErrTruncated},
		{"pd cut", req[:22], dissect.ErrTruncated},
		{"not a key", []byte("GET / HTTP/1.1\r\n\r\n"), dissect.ErrNotMPA},
		{"short not a key", []byte("MPB"), dissect.ErrNotMPA},
		{"bad diff octet", []byte("MPA ID Rex Frame\x40\x01\x00\x00"), dissect.ErrNotMPA},
		{"lowercase", []byte("mpa id req frame\x40\x01\x00\x00"), dissect.ErrNotMPA},
		{"fpdu", unhex(t, "00 17 41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00"), dissect.ErrNotMPA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, n, err := DecodeFrame(tt.in)
			if err != tt.want {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if n != 0 || !reflect.DeepEqual(f, Frame{}) {
				t.Errorf("error with non-zero result: n %d f %+v", n, f)
			}
		})
	}
	f, n, err := DecodeFrame(append(bytes.Clone(req), "next"...))
	if err != nil || n != 23 || string(f.PD) != "abc" || cap(f.PD) != 3 {
		t.Errorf("trailing octets: n %d err %v pd %q cap %d", n, err, f.PD, cap(f.PD))
	}
}

func TestFrameLen(t *testing.T) {
	req := AppendFrame(nil, Frame{Kind: KindRequest, Rev: 1, PD: []byte("abc")})
	// A Reply with PD_Length 26 whose private data the snap length cut.
	rep := append(append([]byte(nil), KeyReply[:]...), 0x40, 2, 0, 26, 'x')
	tests := []struct {
		name string
		in   []byte
		n    int
		ok   bool
	}{
		{"whole", req, 23, true},
		{"pd cut", req[:20], 23, true},
		{"reply pd cut", rep, 46, true},
		{"header cut", req[:19], 0, false},
		{"not a key", []byte("GET / HTTP/1.1\r\n\r\n"), 0, false},
		{"empty", nil, 0, false},
	}
	for _, tt := range tests {
		if n, ok := FrameLen(tt.in); n != tt.n || ok != tt.ok {
			t.Errorf("%s: FrameLen = %d, %v; want %d, %v", tt.name, n, ok, tt.n, tt.ok)
		}
	}
}

func TestIsKeyPrefix(t *testing.T) {
	for i := 0; i <= KeyLen; i++ {
		if !IsKeyPrefix(KeyRequest[:i]) || !IsKeyPrefix(KeyReply[:i]) {
			t.Fatalf("key prefix of %d octets rejected", i)
		}
	}
	for _, s := range []string{"X", "MPA ID Rex", "MPA ID Req Framf", "MPA ID Req Framex", "xMPA ID Req Frame"} {
		want := strings.HasPrefix(s, "MPA ID Req Frame")
		if got := IsKeyPrefix([]byte(s)); got != want {
			t.Errorf("IsKeyPrefix(%q) = %v", s, got)
		}
	}
	if !IsKeyPrefix([]byte("MPA ID Rep Frame\x00\x01")) {
		t.Error("key followed by more octets rejected")
	}
}

func TestFrameRoundTrip(t *testing.T) {
	pd := bytes.Repeat([]byte{0xA5}, 600)
	frames := []Frame{
		{Kind: KindRequest, Rev: 1},
		{Kind: KindReply, M: true, C: true, R: true, S: true, Res: 0x0F, Rev: 2, PDLen: 4, PD: []byte{0x80, 1, 0x80, 1}},
		{Kind: KindRequest, C: true, S: true, Res: 0x08, Rev: 2, PDLen: 26, PD: []byte("\x00\x04\x00\x04iwtest-client-request\x00")},
		{Kind: KindReply, Rev: 0x81, PDLen: 600, PD: pd},
		{Kind: KindRequest, Rev: 255, PDLen: 0xFFFF, PD: make([]byte, 0xFFFF)},
	}
	for _, want := range frames {
		wire := AppendFrame([]byte{9, 9}, want)[2:]
		got, n, err := DecodeFrame(wire)
		if err != nil || n != len(wire) {
			t.Fatalf("%v rev %d: n %d of %d, err %v", want.Kind, want.Rev, n, len(wire), err)
		}
		if want.PD == nil {
			want.PD = got.PD[:0] // decoding yields an empty, non-nil slice
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
		}
		// And back to the same octets.
		if again := AppendFrame(nil, got); !bytes.Equal(again, wire) {
			t.Errorf("re-encode differs")
		}
	}
	// Over-long private data is cut to 65535 octets.
	wire := AppendFrame(nil, Frame{Kind: KindReply, PD: make([]byte, 70000)})
	if f, n, err := DecodeFrame(wire); err != nil || n != HeaderLen+0xFFFF || f.PDLen != 0xFFFF {
		t.Errorf("over-long PD: n %d PDLen %d err %v", n, f.PDLen, err)
	}
	// Res keeps only its four bits; an invalid Kind encodes a Request.
	wire = AppendFrame(nil, Frame{Kind: 7, Res: 0xFF, Rev: 1})
	if f, _, _ := DecodeFrame(wire); f.Kind != KindRequest || f.Res != 0x0F || f.M || f.C || f.R || f.S {
		t.Errorf("masking: %+v", f)
	}
}

func TestKindString(t *testing.T) {
	if KindRequest.String() != "request" || KindReply.String() != "reply" || Kind(0).String() != "Kind(0)" {
		t.Errorf("Kind strings: %q %q %q", KindRequest, KindReply, Kind(0))
	}
}

func TestCheck(t *testing.T) {
	codes := func(fs []dissect.Finding) string {
		var s []string
		for _, f := range fs {
			s = append(s, f.Code+"/"+f.Severity.String())
			if f.Ref == "" || f.Msg == "" || strings.HasPrefix(f.Msg, "mpa: ") || f.Frames != nil {
				t.Errorf("finding %+v: needs Ref, a message (not repeating the code's layer as \"mpa: \") and nil Frames", f)
			}
		}
		return strings.Join(s, " ")
	}
	tests := []struct {
		name string
		f    Frame
		want string
	}{
		{"clean v1", Frame{Kind: KindRequest, Rev: 1}, ""},
		{"clean v2", Frame{Kind: KindReply, S: true, Rev: 2, PDLen: 4, PD: make([]byte, 4)}, ""},
		{"rev 0", Frame{Kind: KindRequest, Rev: 0}, ""},
		{"reply reject", Frame{Kind: KindReply, R: true, Rev: 1}, ""},
		{"pd 512", Frame{Kind: KindRequest, Rev: 1, PDLen: 512, PD: make([]byte, 512)}, ""},
		{"pd 513", Frame{Kind: KindRequest, Rev: 1, PDLen: 513, PD: make([]byte, 513)}, "mpa.pd_len_too_long/warning"},
		{"gso", Frame{Kind: KindRequest, S: true, Res: 0x08, Rev: 2, PDLen: 4, PD: make([]byte, 4)}, "mpa.res_nonzero/note"},
		{"rev 3", Frame{Kind: KindRequest, S: true, Rev: 3, PDLen: 8, PD: make([]byte, 8)}, "mpa.rev_unknown/warning mpa.s_without_rev2/note"},
		{"erdma rev", Frame{Kind: KindRequest, Rev: 0x81}, "mpa.rev_unknown/warning"},
		{"request reject", Frame{Kind: KindRequest, R: true, Rev: 1}, "mpa.reject_in_request/warning"},
		{"enhanced missing", Frame{Kind: KindReply, S: true, Rev: 2, PDLen: 3, PD: make([]byte, 3)}, "mpa.enhanced_missing/error"},
		{"s in v1", Frame{Kind: KindReply, S: true, Rev: 1}, "mpa.s_without_rev2/note"},
		{"everything", Frame{Kind: KindRequest, R: true, S: true, Res: 1, Rev: 9, PDLen: 600, PD: make([]byte, 600)},
			"mpa.pd_len_too_long/warning mpa.res_nonzero/note mpa.rev_unknown/warning mpa.reject_in_request/warning mpa.s_without_rev2/note"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := []dissect.Finding{{Code: "keep"}}
			got := tt.f.Check(prev)
			if got[0].Code != "keep" {
				t.Fatal("Check dropped dst")
			}
			if s := codes(got[1:]); s != tt.want {
				t.Errorf("Check = %q, want %q", s, tt.want)
			}
		})
	}
	gso := Frame{Kind: KindRequest, Res: 0x08, Rev: 1}.Check(nil)
	if len(gso) != 1 || !strings.Contains(gso[0].Msg, "GSO_EXP") {
		t.Errorf("res 0x08 message does not name siw GSO_EXP: %+v", gso)
	}
	if fs := (Frame{Kind: KindRequest, Res: 0x04, Rev: 1}).Check(nil); strings.Contains(fs[0].Msg, "GSO") {
		t.Errorf("res 0x04 message names GSO: %q", fs[0].Msg)
	}
}

func TestEnhanced(t *testing.T) {
	tests := []struct {
		name      string
		wire      string
		want      Enhanced
		rfcRTR    RTRSet
		rfcP2P    bool
		draftRTR  RTRSet
		draftP2P  bool
		rfcString string
	}{
		// rping, iwtest, ib_*_bw and ib_read_bw (MANIFEST.md: siw, P2P off).
		{"rping", "00010001", Enhanced{IRD: 1, ORD: 1}, 0, false, 0, false, "none"},
		{"iwtest", "00040004", Enhanced{IRD: 4, ORD: 4}, 0, false, 0, false, "none"},
		{"read_bw", "00800080", Enhanced{IRD: 128, ORD: 128}, 0, false, 0, false, "none"},
		// siw peer_to_peer=1 rtr_mode=1: P2P with the Write RTR (MANIFEST.md,
		// p2p_rtr1_rping.pcap).
		{"p2p write", "80018001", Enhanced{IRD: 1, ORD: 1, A: true, C: true}, RTRWrite, true, RTRSend | RTRRead, true, "write"},
		// rtr_mode=2: P2P with the Read RTR (p2p_rtr2_rping.pcap).
		{"p2p read", "80014001", Enhanced{IRD: 1, ORD: 1, A: true, D: true}, RTRRead, true, RTRSend, true, "read"},
		// siw default rtr_type READ|WRITE (PROTOCOL.md B).
		{"siw default", "8004c004", Enhanced{IRD: 4, ORD: 4, A: true, C: true, D: true}, RTRWrite | RTRRead, true, RTRSend | RTRRead, true, "write,read"},
		// i40iw/irdma Request: P2P | zero-length FPDU on IRD, WRITE|READ on ORD.
		{"irdma request", "c040c020", Enhanced{IRD: 0x40, ORD: 0x20, A: true, B: true, C: true, D: true}, RTRSend | RTRWrite | RTRRead, true, RTRSend | RTRWrite | RTRRead, true, "send,write,read"},
		// draft-01 peer offering a zero-length Write RTR only (B).
		{"draft write", "40020002", Enhanced{IRD: 2, ORD: 2, B: true}, RTRSend, false, RTRWrite, true, "send"},
		{"no negotiation", "3fff3fff", Enhanced{IRD: IRDORDNoNegotiation, ORD: IRDORDNoNegotiation}, 0, false, 0, false, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wire := unhex(t, tt.wire)
			e, err := DecodeEnhanced(wire)
			if err != nil || e != tt.want {
				t.Fatalf("DecodeEnhanced = %+v, %v; want %+v", e, err, tt.want)
			}
			if got := AppendEnhanced(nil, e); !bytes.Equal(got, wire) {
				t.Errorf("AppendEnhanced = % x", got)
			}
			if got := e.RTR(FlagsRFC6581); got != tt.rfcRTR || got.String() != tt.rfcString {
				t.Errorf("RTR(rfc) = %v, want %v", got, tt.rfcRTR)
			}
			if got := e.RTR(FlagsDraft01); got != tt.draftRTR {
				t.Errorf("RTR(draft) = %v, want %v", got, tt.draftRTR)
			}
			if e.P2P(FlagsRFC6581) != tt.rfcP2P || e.P2P(FlagsDraft01) != tt.draftP2P {
				t.Errorf("P2P rfc %v draft %v", e.P2P(FlagsRFC6581), e.P2P(FlagsDraft01))
			}
		})
	}
	if _, err := DecodeEnhanced([]byte{0x80, 1, 0x80}); err != dissect.ErrTruncated {
		t.Errorf("short Enhanced: err %v", err)
	}
	if got := AppendEnhanced(nil, Enhanced{IRD: 0xFFFF, ORD: 0x4001}); !bytes.Equal(got, []byte{0x3f, 0xff, 0, 1}) {
		t.Errorf("AppendEnhanced does not mask IRD/ORD: % x", got)
	}
}

func TestFrameEnhanced(t *testing.T) {
	pd := unhex(t, "00040004 6977746573742d636c69656e742d7265717565737400")
	f := Frame{Kind: KindRequest, S: true, Rev: 2, PDLen: uint16(len(pd)), PD: pd}
	e, ulp, ok := f.Enhanced()
	if !ok || e != (Enhanced{IRD: 4, ORD: 4}) || string(ulp) != "iwtest-client-request\x00" {
		t.Errorf("Enhanced = %+v %q %v", e, ulp, ok)
	}
	for _, g := range []Frame{
		{Kind: KindRequest, S: true, Rev: 1, PD: pd},
		{Kind: KindRequest, Rev: 2, PD: pd},
		{Kind: KindRequest, S: true, Rev: 2, PD: pd[:3]},
	} {
		if e, ulp, ok := g.Enhanced(); ok || e != (Enhanced{}) || !bytes.Equal(ulp, g.PD) {
			t.Errorf("%+v: Enhanced = %+v %v", g, e, ok)
		}
	}
}

func TestRTRSet(t *testing.T) {
	tests := []struct {
		s     RTRSet
		str   string
		names []string
	}{
		{0, "none", nil},
		{RTRSend, "send", []string{"send"}},
		{RTRSend | RTRWrite, "send,write", []string{"send", "write"}},
		{RTRWrite | RTRRead, "write,read", []string{"write", "read"}},
		{RTRRead | 0x80, "read,0x80", []string{"read"}},
	}
	for _, tt := range tests {
		if tt.s.String() != tt.str || !reflect.DeepEqual(tt.s.Names(), tt.names) {
			t.Errorf("%#x: String %q Names %q", uint8(tt.s), tt.s.String(), tt.s.Names())
		}
	}
	s := RTRWrite | RTRRead
	if !s.Has(RTRWrite) || !s.Has(RTRWrite|RTRRead) || s.Has(RTRSend) || s.Has(RTRSend|RTRRead) {
		t.Error("Has")
	}
	if FlagsRFC6581.String() != "rfc6581" || FlagsDraft01.String() != "draft-01" || FlagMeaning(9).String() != "flagmeaning(9)" {
		t.Error("FlagMeaning strings")
	}
}

func TestSMBD(t *testing.T) {
	tests := []struct {
		name string
		pd   string
		want SMBDIRDORD
		ok   bool
	}{
		// Octets quoted in the Linux ksmbd review of the legacy IRD/ORD
		// handling: a fixed cifs.ko sends IRD 32, ORD 1 big-endian as
		// [MS-SMBD] Appendix A says; an old one sent them little-endian.
		{"big-endian", "00000020 00000001", SMBDIRDORD{IRD: 32, ORD: 1}, true},
		{"broken little-endian", "20000000 01000000", SMBDIRDORD{IRD: 32, ORD: 1, LittleEndian: true}, true},
		{"large values", "0000ffff 00000100", SMBDIRDORD{IRD: 0xFFFF, ORD: 256}, true},
		{"longer pd", "00000010 00000010 ffff", SMBDIRDORD{IRD: 16, ORD: 16}, true},
		{"zeros", "00000000 00000000", SMBDIRDORD{}, false},
		{"zero ird", "00000000 00000001", SMBDIRDORD{}, false},
		{"ascii", "69777465 73742d63", SMBDIRDORD{}, false},
		{"rpc-rdma", "f6ab0e18 01000303", SMBDIRDORD{}, false},
		{"short", "00000020 000000", SMBDIRDORD{}, false},
		// mpareq_markers.pcap: the ULP data after the Enhanced word.
		{"markers ulp", "00000000 68656c6c6f", SMBDIRDORD{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pd := unhex(t, tt.pd)
			got, ok := DecodeSMBD(pd)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("DecodeSMBD = %+v %v, want %+v %v", got, ok, tt.want, tt.ok)
			}
			if ok {
				if enc := AppendSMBD(nil, got); !bytes.Equal(enc, pd[:SMBDLen]) {
					t.Errorf("AppendSMBD = % x", enc)
				}
			}
		})
	}
}

func TestRPCRDMA(t *testing.T) {
	// PROTOCOL.md A.8: a public NFS client's block after the Rev 2 IRD/ORD
	// word; sizes per RFC 8797 §4 and Linux rpcrdma_decode_buffer_size.
	pd := unhex(t, "f6ab0e18 01 00 03 03")
	r, ok := DecodeRPCRDMA(pd)
	want := RPCRDMA{Version: 1, Flags: 0, SendSize: 4096, RecvSize: 4096, RawSend: 3, RawRecv: 3}
	if !ok || r != want {
		t.Fatalf("DecodeRPCRDMA = %+v %v, want %+v", r, ok, want)
	}
	if enc := AppendRPCRDMA(nil, r); !bytes.Equal(enc, pd) {
		t.Errorf("AppendRPCRDMA = % x", enc)
	}
	r, ok = DecodeRPCRDMA(unhex(t, "f6ab0e18 01 01 00 ff 99"))
	if !ok || r.SendSize != 1024 || r.RecvSize != 256*1024 || r.Flags&RPCRDMAFlagRemoteInvalidate == 0 {
		t.Errorf("extremes: %+v %v", r, ok)
	}
	for _, bad := range []string{"f6ab0e18 01 00 03", "f6ab0e19 01 00 03 03", "00040004 00000000", ""} {
		if r, ok := DecodeRPCRDMA(unhex(t, bad)); ok || r != (RPCRDMA{}) {
			t.Errorf("DecodeRPCRDMA(%s) = %+v %v", bad, r, ok)
		}
	}
	for _, c := range []struct {
		size uint32
		raw  uint8
	}{{0, 0}, {1023, 0}, {1024, 0}, {4096, 3}, {5000, 3}, {256 << 10, 255}, {1 << 30, 255}} {
		if got := RPCRDMASizeRaw(c.size); got != c.raw {
			t.Errorf("RPCRDMASizeRaw(%d) = %d, want %d", c.size, got, c.raw)
		}
	}
}

func TestMarker(t *testing.T) {
	wire := []byte{0, 0, 0x01, 0xF8}
	m, err := DecodeMarker(wire)
	if err != nil || m != (Marker{FPDUPtr: 504}) {
		t.Fatalf("DecodeMarker = %+v, %v", m, err)
	}
	if got := AppendMarker(nil, m); !bytes.Equal(got, wire) {
		t.Errorf("AppendMarker = % x", got)
	}
	m = Marker{Rsvd: 0xABCD, FPDUPtr: 0x1234}
	if got, _ := DecodeMarker(AppendMarker(nil, m)); got != m {
		t.Errorf("round trip %+v", got)
	}
	if _, err := DecodeMarker(wire[:3]); err != dissect.ErrTruncated {
		t.Errorf("short marker: %v", err)
	}
}

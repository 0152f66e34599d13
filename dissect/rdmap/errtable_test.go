package rdmap

import (
	"strings"
	"testing"
)

// expectedCodes is every Layer/EType/Code the RFC tables define, written
// out from seed 004 Figure 9 (RFC 5040), PROTOCOL.md section C (RFC 5041
// DDP errors) and A.7 (RFC 5044 and RFC 6581 MPA errors). The Local
// Catastrophic types (any code) are tested separately.
var expectedCodes = []struct {
	layer, etype, code uint8
	name               string
}{
	{0, 1, 0x00, "Invalid STag"},
	{0, 1, 0x01, "Base or bounds violation"},
	{0, 1, 0x02, "Access rights violation"},
	{0, 1, 0x03, "STag not associated with RDMAP Stream"},
	{0, 1, 0x04, "TO wrap"},
	{0, 1, 0x09, "STag cannot be invalidated"},
	{0, 1, 0xFF, "Unspecified Error"},
	{0, 2, 0x05, "Invalid RDMAP version"},
	{0, 2, 0x06, "Unexpected OpCode"},
	{0, 2, 0x07, "Catastrophic error, localized to RDMAP Stream"},
	{0, 2, 0x08, "Catastrophic error, global"},
	{0, 2, 0x09, "STag cannot be invalidated"},
	{0, 2, 0xFF, "Unspecified Error"},
	{1, 1, 0x00, "Invalid STag"},
	{1, 1, 0x01, "Base or bounds violation"},
	{1, 1, 0x02, "STag not associated with DDP Stream"},
	{1, 1, 0x03, "TO wrap"},
	{1, 1, 0x04, "Invalid DDP version"},
	{1, 2, 0x01, "Invalid QN"},
	{1, 2, 0x02, "Invalid MSN - no buffer available"},
	{1, 2, 0x03, "Invalid MSN - MSN range is not valid"},
	{1, 2, 0x04, "Invalid MO"},
	{1, 2, 0x05, "DDP Message too long for available buffer"},
	{1, 2, 0x06, "Invalid DDP version"},
	{2, 0, 0x01, "TCP connection closed, terminated or lost"},
	{2, 0, 0x02, "MPA CRC error"},
	{2, 0, 0x03, "MPA Marker and ULPDU Length field mismatch"},
	{2, 0, 0x04, "Invalid MPA Request Frame or MPA Response Frame"},
	{2, 0, 0x05, "Local Catastrophic Error"},
	{2, 0, 0x06, "Insufficient IRD resources"},
	{2, 0, 0x07, "No matching RTR option"},
}

func TestCodeTextTable(t *testing.T) {
	for _, e := range expectedCodes {
		got, ok := CodeText(e.layer, e.etype, e.code)
		if !ok || got != e.name {
			t.Errorf("CodeText(%d, %d, %#x) = %q, %v; want %q", e.layer, e.etype, e.code, got, ok, e.name)
		}
		if h, ok := CodeHint(e.layer, e.etype, e.code); !ok || h == "" {
			t.Errorf("CodeHint(%d, %d, %#x) empty", e.layer, e.etype, e.code)
		}
	}
}

// TestCodeTextComplete walks every Layer/EType/Code and checks that
// exactly the expected ones, plus the Local Catastrophic types of RDMAP
// and DDP with any code, are defined.
func TestCodeTextComplete(t *testing.T) {
	want := map[[3]uint8]bool{}
	for _, e := range expectedCodes {
		want[[3]uint8{e.layer, e.etype, e.code}] = true
	}
	defined := 0
	for layer := 0; layer < 16; layer++ {
		for etype := 0; etype < 16; etype++ {
			for code := 0; code < 256; code++ {
				l, e, c := uint8(layer), uint8(etype), uint8(code)
				name, ok := CodeText(l, e, c)
				localCat := (layer == 0 || layer == 1) && etype == 0
				expect := want[[3]uint8{l, e, c}] || localCat
				if ok != expect {
					t.Fatalf("CodeText(%d, %d, %#x) ok = %v, want %v", l, e, c, ok, expect)
				}
				if ok {
					defined++
					if localCat && name != "None" {
						t.Fatalf("Local Catastrophic %d/%d/%#x named %q, want None", l, e, c, name)
					}
					if Defined(l, e, c) != ok {
						t.Fatalf("Defined disagrees with CodeText at %d/%d/%#x", l, e, c)
					}
				} else if name != "" {
					t.Fatalf("undefined code %d/%d/%#x has name %q", l, e, c, name)
				}
			}
		}
	}
	if defined != len(expectedCodes)+2*256 {
		t.Errorf("%d codes defined, want %d", defined, len(expectedCodes)+2*256)
	}
}

func TestLayerAndETypeNames(t *testing.T) {
	for _, tc := range []struct {
		layer, etype uint8
		layerName    string
		etypeName    string
	}{
		{0, 0, "RDMAP", "Local Catastrophic Error"},
		{0, 1, "RDMAP", "Remote Protection Error"},
		{0, 2, "RDMAP", "Remote Operation Error"},
		{0, 3, "RDMAP", "Reserved error type (0x3)"},
		{1, 0, "DDP", "Local Catastrophic Error"},
		{1, 1, "DDP", "Tagged Buffer Error"},
		{1, 2, "DDP", "Untagged Buffer Error"},
		{1, 3, "DDP", "Reserved for use by the LLP"},
		{1, 4, "DDP", "Reserved error type (0x4)"},
		{2, 0, "LLP", "MPA Error"},
		{2, 1, "LLP", "Reserved error type (0x1)"},
		{3, 0, "Reserved layer (0x3)", "Reserved error type (0x0)"},
		{15, 15, "Reserved layer (0xF)", "Reserved error type (0xF)"},
	} {
		if got := LayerName(tc.layer); got != tc.layerName {
			t.Errorf("LayerName(%d) = %q, want %q", tc.layer, got, tc.layerName)
		}
		if got := ETypeName(tc.layer, tc.etype); got != tc.etypeName {
			t.Errorf("ETypeName(%d, %d) = %q, want %q", tc.layer, tc.etype, got, tc.etypeName)
		}
	}
	if LayerRDMAP.String() != "RDMAP" || LayerDDP.String() != "DDP" || LayerLLP.String() != "LLP" {
		t.Error("TermLayer.String")
	}
}

func TestExplain(t *testing.T) {
	const siw = " [control word in Linux siw's little-endian bitfield layout]"
	for _, tc := range []struct {
		name string
		t    Terminate
		want string
	}{
		{
			"brief example",
			Terminate{Layer: 0, EType: 1, Code: 0},
			"RDMAP Remote Protection Error: Invalid STag (the STag in the request was not valid at the receiver)",
		},
		{
			"term_badwrite frame 11", wantTermBadWrite,
			"DDP Tagged Buffer Error: Invalid STag (a tagged segment (RDMA Write or Read Response) named an STag the receiver does not know)" +
				"; terminated segment: RDMA Write, STag 0x07bf1600, TO 0x7fe0b8347000, 64 octets" + siw,
		},
		{
			"term_sendinv frame 13", wantTermSendInv,
			"RDMAP Remote Operation Error: STag cannot be invalidated (the receiver could not invalidate the STag a Send with Invalidate named (unknown STag, or one it may not invalidate))" +
				"; terminated segment: Send with SE and Invalidate, QN 0, MSN 2, MO 0, invalidate STag 0x00000000, 40 octets" + siw,
		},
		{
			"term_toolong frame 16", wantTermTooLong,
			"DDP Untagged Buffer Error: Invalid MSN - no buffer available (no receive buffer was posted for this message: the application had not posted a receive, or posted too small a one)" +
				"; terminated segment: Send, QN 0, MSN 1, MO 2848, not the last segment, 1424 octets" + siw,
		},
		{
			"local catastrophic",
			Terminate{},
			"RDMAP Local Catastrophic Error (the peer hit an internal error that is not tied to any message it received)",
		},
		{
			"MPA CRC",
			Terminate{Layer: 2, Code: 2},
			"LLP MPA Error: MPA CRC error (an FPDU failed its CRC32c check)",
		},
		{
			"read request header",
			Terminate{Layer: 0, EType: 1, Code: 1, R: true, HasRDMA: true, RDMA: ReadRequest{SinkSTag: 0xb069b300, SinkTO: 0x559cab83b550, Size: 64, SrcSTag: 0x56770c00, SrcTO: 0x5588df645c60}},
			"RDMAP Remote Protection Error: Base or bounds violation (the request reached outside the memory region its STag names)" +
				"; terminated RDMA Read Request: 64 octets from STag 0x56770c00 TO 0x5588df645c60 to STag 0xb069b300 TO 0x559cab83b550",
		},
		{"unknown code", Terminate{Layer: 0, EType: 2, Code: 0x0A}, "RDMAP Remote Operation Error: unknown error code 0x0A"},
		{"unknown etype", Terminate{Layer: 2, EType: 1, Code: 2}, "LLP Reserved error type (0x1), error code 0x02"},
		{"unknown layer", Terminate{Layer: 3, EType: 1, Code: 2}, "Reserved layer (0x3) Reserved error type (0x1), error code 0x02"},
	} {
		if got := tc.t.Explain(); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestHintsArePlainWords(t *testing.T) {
	for _, e := range errTable {
		if e.hint == "" || strings.HasSuffix(e.hint, ".") || e.hint[0] < 'a' || e.hint[0] > 'z' {
			t.Errorf("%d/%d/%d: hint %q should be a lowercase phrase without a final period", e.layer, e.etype, e.code, e.hint)
		}
	}
}

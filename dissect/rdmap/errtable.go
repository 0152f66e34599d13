package rdmap

// TermLayer is the Layer field of the Terminate control (RFC 5040 §4.8
// Figure 9): the layer that detected the error.
type TermLayer uint8

// Terminate layers (RFC 5040 §4.8 Figure 9). Other values are reserved.
const (
	LayerRDMAP TermLayer = 0 // RDMAP
	LayerDDP   TermLayer = 1 // DDP
	LayerLLP   TermLayer = 2 // LLP
)

// Error types of the RDMAP layer (RFC 5040 §4.8 Figure 9).
const (
	ETypeRDMAPLocalCatastrophic uint8 = 0x0
	ETypeRDMAPRemoteProtection  uint8 = 0x1
	ETypeRDMAPRemoteOperation   uint8 = 0x2
)

// Error types of the DDP layer (RFC 5041 error numbers; the same in
// Wireshark, siw, cxgb4 and urdma).
const (
	ETypeDDPLocalCatastrophic uint8 = 0x0
	ETypeDDPTagged            uint8 = 0x1
	ETypeDDPUntagged          uint8 = 0x2
	ETypeDDPReservedLLP       uint8 = 0x3
)

// ETypeLLPMPA is the only error type of the LLP layer, MPA errors (RFC
// 5044).
const ETypeLLPMPA uint8 = 0x0

// anyCode marks a table entry that covers every error code of its error
// type (the Local Catastrophic errors, whose code RFC 5040 Figure 9 names
// "None" and IANA registers as "ALL").
const anyCode = -1

type errEntry struct {
	layer, etype uint8
	code         int // 0..255 or anyCode
	name         string
	hint         string // plain words for a storage engineer
	ref          string
}

// errTable lists every error RFC 5040 (Figure 9), RFC 5041 (DDP error
// numbers), RFC 5044 and RFC 6581 (MPA errors 0x05-0x07) define for a
// Terminate, in IANA's Layer/EType/Code order. RFC 7306 registers more
// RDMAP error codes; they could not be retrieved and are not listed.
var errTable = [...]errEntry{
	{0, 0x0, anyCode, "None", "the peer hit an internal error that is not tied to any message it received", "RFC 5040 §4.8 Figure 9"},
	{0, 0x1, 0x00, "Invalid STag", "the STag in the request was not valid at the receiver", "RFC 5040 §4.8 Figure 9"},
	{0, 0x1, 0x01, "Base or bounds violation", "the request reached outside the memory region its STag names", "RFC 5040 §4.8 Figure 9"},
	{0, 0x1, 0x02, "Access rights violation", "the memory region does not allow this kind of remote access (read or write)", "RFC 5040 §4.8 Figure 9"},
	{0, 0x1, 0x03, "STag not associated with RDMAP Stream", "the STag belongs to another connection or protection domain", "RFC 5040 §4.8 Figure 9"},
	{0, 0x1, 0x04, "TO wrap", "the tagged offset plus the length wrapped around 2^64", "RFC 5040 §4.8 Figure 9"},
	{0, 0x1, 0x09, "STag cannot be invalidated", "the receiver refused to invalidate the STag a Send with Invalidate named", "RFC 5040 §4.8 Figure 9"},
	{0, 0x1, 0xFF, "Unspecified Error", "the receiver found a protection problem and gave no detail", "RFC 5040 §4.8 Figure 9"},
	{0, 0x2, 0x05, "Invalid RDMAP version", "the RDMAP version (RV) is not the one the receiver speaks: 1 for IETF, 0 for RDMA Consortium RNICs", "RFC 5040 §4.8 Figure 9"},
	{0, 0x2, 0x06, "Unexpected OpCode", "the receiver does not accept this RDMAP opcode here (unknown, unsupported, or its Tagged flag is wrong)", "RFC 5040 §4.8 Figure 9"},
	{0, 0x2, 0x07, "Catastrophic error, localized to RDMAP Stream", "the receiver hit a fatal error that ends this connection only", "RFC 5040 §4.8 Figure 9"},
	{0, 0x2, 0x08, "Catastrophic error, global", "the receiver hit a fatal error that affects the whole adapter", "RFC 5040 §4.8 Figure 9"},
	{0, 0x2, 0x09, "STag cannot be invalidated", "the receiver could not invalidate the STag a Send with Invalidate named (unknown STag, or one it may not invalidate)", "RFC 5040 §4.8 Figure 9"},
	{0, 0x2, 0xFF, "Unspecified Error", "the receiver rejected the operation and gave no detail", "RFC 5040 §4.8 Figure 9"},

	{1, 0x0, anyCode, "None", "the peer's DDP layer hit an internal error", "RFC 5041 DDP error numbers"},
	{1, 0x1, 0x00, "Invalid STag", "a tagged segment (RDMA Write or Read Response) named an STag the receiver does not know", "RFC 5041 DDP error numbers"},
	{1, 0x1, 0x01, "Base or bounds violation", "a tagged segment would land outside the registered buffer", "RFC 5041 DDP error numbers"},
	{1, 0x1, 0x02, "STag not associated with DDP Stream", "a tagged segment used an STag that belongs to another connection", "RFC 5041 DDP error numbers"},
	{1, 0x1, 0x03, "TO wrap", "the tagged offset of a segment wrapped around 2^64", "RFC 5041 DDP error numbers"},
	{1, 0x1, 0x04, "Invalid DDP version", "a tagged segment carried a DDP version (DV) the receiver does not speak", "RFC 5041 DDP error numbers"},
	{1, 0x2, 0x01, "Invalid QN", "an untagged segment named a queue the receiver does not have (0 Send, 1 Read Request, 2 Terminate)", "RFC 5041 DDP error numbers"},
	{1, 0x2, 0x02, "Invalid MSN - no buffer available", "no receive buffer was posted for this message: the application had not posted a receive, or posted too small a one", "RFC 5041 DDP error numbers"},
	{1, 0x2, 0x03, "Invalid MSN - MSN range is not valid", "the message sequence number is outside the window the receiver expects", "RFC 5041 DDP error numbers"},
	{1, 0x2, 0x04, "Invalid MO", "the message offset does not fit the receive buffer", "RFC 5041 DDP error numbers"},
	{1, 0x2, 0x05, "DDP Message too long for available buffer", "the message is larger than the receive buffer posted for it", "RFC 5041 DDP error numbers"},
	{1, 0x2, 0x06, "Invalid DDP version", "an untagged segment carried a DDP version (DV) the receiver does not speak", "RFC 5041 DDP error numbers"},

	{2, 0x0, 0x01, "TCP connection closed, terminated or lost", "the TCP connection under MPA broke", "RFC 5044"},
	{2, 0x0, 0x02, "MPA CRC error", "an FPDU failed its CRC32c check", "RFC 5044"},
	{2, 0x0, 0x03, "MPA Marker and ULPDU Length field mismatch", "an MPA marker did not point at the FPDU it sits in", "RFC 5044"},
	{2, 0x0, 0x04, "Invalid MPA Request Frame or MPA Response Frame", "the MPA start-up exchange (Request/Reply) was malformed", "RFC 5044"},
	{2, 0x0, 0x05, "Local Catastrophic Error", "the peer's MPA layer hit an internal error", "RFC 6581"},
	{2, 0x0, 0x06, "Insufficient IRD resources", "the peer cannot accept as many outstanding RDMA Reads as were asked for", "RFC 6581"},
	{2, 0x0, 0x07, "No matching RTR option", "the two ends found no ready-to-receive (RTR) message type they both support", "RFC 6581"},
}

func lookupErr(layer, etype, code uint8) (errEntry, bool) {
	for i := range errTable {
		e := &errTable[i]
		if e.layer == layer && e.etype == etype && (e.code == anyCode || e.code == int(code)) {
			return *e, true
		}
	}
	return errEntry{}, false
}

// definedCode reports whether a table entry names this very code, not
// one that covers every code of its error type (anyCode).
func definedCode(layer, etype, code uint8) bool {
	e, ok := lookupErr(layer, etype, code)
	return ok && e.code != anyCode
}

const hexDigits = "0123456789ABCDEF"

// hex2 formats v as "0xNN".
func hex2(v uint8) string { return "0x" + string([]byte{hexDigits[v>>4], hexDigits[v&0xF]}) }

// hex1 formats a nibble-sized value as "0xN" (two digits if larger).
func hex1(v uint8) string {
	if v < 16 {
		return "0x" + string(hexDigits[v])
	}
	return hex2(v)
}

// LayerName returns the name of a Terminate Layer value (RFC 5040 §4.8
// Figure 9): "RDMAP", "DDP" or "LLP", and "Reserved layer (0xN)" for the
// others.
func LayerName(layer uint8) string {
	switch TermLayer(layer) {
	case LayerRDMAP, LayerDDP, LayerLLP:
		return TermLayer(layer).String()
	}
	return "Reserved layer (" + hex1(layer) + ")"
}

// etypeName returns the name of an error type and whether the layer
// defines it.
func etypeName(layer, etype uint8) (string, bool) {
	switch TermLayer(layer) {
	case LayerRDMAP:
		switch etype {
		case ETypeRDMAPLocalCatastrophic:
			return "Local Catastrophic Error", true
		case ETypeRDMAPRemoteProtection:
			return "Remote Protection Error", true
		case ETypeRDMAPRemoteOperation:
			return "Remote Operation Error", true
		}
	case LayerDDP:
		switch etype {
		case ETypeDDPLocalCatastrophic:
			return "Local Catastrophic Error", true
		case ETypeDDPTagged:
			return "Tagged Buffer Error", true
		case ETypeDDPUntagged:
			return "Untagged Buffer Error", true
		case ETypeDDPReservedLLP:
			return "Reserved for use by the LLP", true
		}
	case LayerLLP:
		if etype == ETypeLLPMPA {
			return "MPA Error", true
		}
	}
	return "Reserved error type (" + hex1(etype) + ")", false
}

// ETypeName returns the name of an error type of the given layer: RDMAP
// (RFC 5040 §4.8 Figure 9) "Local Catastrophic Error", "Remote Protection
// Error", "Remote Operation Error"; DDP (RFC 5041) "Local Catastrophic
// Error", "Tagged Buffer Error", "Untagged Buffer Error", "Reserved for use
// by the LLP"; LLP "MPA Error" (RFC 5044). Others give "Reserved error type
// (0xN)".
func ETypeName(layer, etype uint8) string {
	s, _ := etypeName(layer, etype)
	return s
}

// CodeText returns the name the RFCs give an error code (RFC 5040 §4.8
// Figure 9, RFC 5041, RFC 5044, RFC 6581), and false when no table defines
// that Layer/EType/Code. The Local Catastrophic error types of RDMAP and
// DDP define no codes: every code gives "None", true.
func CodeText(layer, etype, code uint8) (string, bool) {
	e, ok := lookupErr(layer, etype, code)
	return e.name, ok
}

// CodeHint returns a short explanation in plain words of an error code, as
// [Terminate.Explain] uses it, and false when no table defines the code.
func CodeHint(layer, etype, code uint8) (string, bool) {
	e, ok := lookupErr(layer, etype, code)
	return e.hint, ok
}

// Defined reports whether the RFC tables define this Layer/EType/Code.
func Defined(layer, etype, code uint8) bool {
	_, ok := lookupErr(layer, etype, code)
	return ok
}

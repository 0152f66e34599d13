package format

import (
	"strconv"
	"strings"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// AppendNumber appends how a field tree (iwarpdump -v, the TUI's detail
// pane) shows the number v of the field at path (a record key with its
// parents' keys, "rdmap.term.ddp.stag"): hexadecimal padded to the field's
// width on the wire for the registry's hex fields, as Wireshark shows them
// (0x07bf1600), decimal otherwise; then, where the RFCs name the value, the
// name in parentheses, as Wireshark's trees give it: "3 (Send)". siblings
// are the keys beside it, which name a Terminate's error type and code.
// JSON and the display filters keep the bare number.
func AppendNumber(dst []byte, path string, v uint64, siblings []KV) []byte {
	if w, ok := hexWidth(path); ok {
		dst = appendHex(dst, v, w)
	} else {
		dst = strconv.AppendUint(dst, v, 10)
	}
	if name := ValueName(path, v, siblings); name != "" {
		dst = append(dst, " ("...)
		dst = append(dst, name...)
		dst = append(dst, ')')
	}
	return dst
}

// hexWidth reports whether the numbers of the field at path print in hex,
// and with how many digits at least: the registry's hex fields (nested
// ones by their registry name, dissect.LookupPath) to their width, STags
// and tagged offsets nested under names the registry does not know to 8
// and 16 digits.
func hexWidth(path string) (int, bool) {
	if f, ok := dissect.LookupPath(path); ok {
		if f.Type == dissect.TypeHex {
			return int(f.Bits) / 4, true
		}
		return 0, false
	}
	switch last(path) {
	case "stag", "sink_stag", "src_stag", "crc":
		return 8, true
	case "to", "sink_to", "src_to":
		return 16, true
	}
	return 0, false
}

// last is the key of a path: what follows its last dot.
func last(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// ValueName returns the name the RFCs give the number v of the field at
// path, or "" when the field's values have no names or v has none:
//   - an RDMAP opcode (RFC 5040 §4.1 Figure 4, RFC 7306): "Send";
//   - a Terminate's layer, error type and code (RFC 5040 §4.8 Figure 9,
//     RFC 5041 §7, RFC 5044 §8): "DDP", "Tagged Buffer Error", "Invalid
//     STag"; the type and code are named by the layer and type beside them
//     in siblings;
//   - a DDP queue number (RFC 5040 §5.1): "Send queue";
//   - the MPA revision (RFC 5044 §7.1, RFC 6581): "RFC 5044";
//   - the DDP and RDMAP versions (RFC 5041 §4.2, RFC 5040 §4.1): 1 "IETF",
//     0 "RDMAC";
//   - an SCTP payload protocol identifier of DDP (seed 003): 16 "DDP
//     Segment", 17 "DDP Stream Session Control";
//   - an InfiniBand CM path MTU code and transport service type.
func ValueName(path string, v uint64, siblings []KV) string {
	if f := namer(path); f != nil {
		return f(v, siblings)
	}
	return ""
}

// namer returns the function that names the values of the field at path,
// nil when they have no names (ValueName).
func namer(path string) func(v uint64, siblings []KV) string {
	switch path {
	case "rdmap.opcode", "opcode", "rdmap.term.rdmap.opcode":
		return opcodeName
	case "rdmap.term.layer":
		return layerName
	case "rdmap.term.etype":
		return etypeName
	case "rdmap.term.code":
		return codeName
	case "ddp.qn", "qn", "rdmap.term.ddp.qn":
		return qnName
	case "rev", "mpa.rev":
		return revName
	case "ddp.dv", "rdmap.rv", "ddp_version", "rdmap.term.ddp.dv", "rdmap.term.rdmap.rv":
		return versionName
	case "sctp.ppid":
		return ppidName
	case "rdmap.atomic.op":
		return atomicOpName
	case "path_mtu":
		return mtuName
	case "transport_service_type":
		return serviceTypeName
	}
	return nil
}

func opcodeName(v uint64, _ []KV) string {
	if v < 16 {
		return rdmap.Opcode(v).String()
	}
	return ""
}

func layerName(v uint64, _ []KV) string {
	if v < 16 {
		return rdmap.LayerName(uint8(v))
	}
	return ""
}

func etypeName(v uint64, siblings []KV) string {
	if layer, ok := sibling(siblings, "layer"); ok && v < 16 {
		return rdmap.ETypeName(uint8(layer), uint8(v))
	}
	return ""
}

func codeName(v uint64, siblings []KV) string {
	layer, ok1 := sibling(siblings, "layer")
	etype, ok2 := sibling(siblings, "etype")
	if ok1 && ok2 && v < 256 {
		if s, ok := rdmap.CodeText(uint8(layer), uint8(etype), uint8(v)); ok {
			return s
		}
	}
	return ""
}

func qnName(v uint64, _ []KV) string {
	switch v {
	case 0:
		return "Send queue"
	case 1:
		return "RDMA Read Request queue"
	case 2:
		return "Terminate queue"
	}
	return ""
}

func revName(v uint64, _ []KV) string {
	switch v {
	case 0:
		return "RDMAC"
	case 1:
		return "RFC 5044"
	case 2:
		return "RFC 6581 enhanced"
	case 129:
		return "Alibaba erdma extension, not standard"
	}
	return ""
}

func versionName(v uint64, _ []KV) string {
	switch v {
	case 0:
		return "RDMAC"
	case 1:
		return "IETF"
	}
	return ""
}

func atomicOpName(v uint64, _ []KV) string {
	if v <= uint64(rdmap.AtomicCmpSwap) {
		return rdmap.AtomicOp(v).String()
	}
	return ""
}

func ppidName(v uint64, _ []KV) string {
	switch v {
	case 16:
		return "DDP Segment"
	case 17:
		return "DDP Stream Session Control"
	}
	return ""
}

func mtuName(v uint64, _ []KV) string {
	if v >= 1 && v <= 5 {
		return strconv.Itoa(128<<v) + " octets"
	}
	return ""
}

func serviceTypeName(v uint64, _ []KV) string {
	switch v {
	case 0:
		return "RC"
	case 1:
		return "UC"
	}
	return ""
}

// sibling finds the number under key among siblings.
func sibling(siblings []KV, key string) (uint64, bool) {
	for _, e := range siblings {
		if e.Key == key && e.Val.Kind == KUint {
			return e.Val.U, true
		}
	}
	return 0, false
}

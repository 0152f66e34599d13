package filter

import (
	"strconv"
	"strings"
)

// valueNames are the names tshark 4.0 gives the values of some Wireshark
// fields (tshark -G values), which a filter may compare with instead of the
// number, in double quotes or, for a one-word name, without, in any case:
// iwarp_rdma.opcode == "Send", iwarp_rdma.term_layer == ddp. They are keyed
// by the field's name as String prints it: the registry name for an alias
// of the registry (rdmap.opcode for iwarp_rdma.opcode), the Wireshark name
// for the per-layer Terminate fields (termAliases). Note that they are
// tshark's names, not rdmap.name's ("Write", not "RDMA Write").
var valueNames = map[string][]valueName{
	"rdmap.opcode": { // iwarp_rdma.opcode
		{0, "Write"},
		{1, "Read Request"},
		{2, "Read Response"},
		{3, "Send"},
		{4, "Send with Invalidate"},
		{5, "Send with SE"},
		{6, "Send with SE and Invalidate"},
		{7, "Terminate"},
		{10, "Atomic Request"},
		{11, "Atomic Response"},
	},
	"iwarp_rdma.term_layer": {
		{0, "RDMA"},
		{1, "DDP"},
		{2, "LLP"},
	},
	"iwarp_rdma.term_etype_rdma": {
		{0, "Local Catastrophic Error"},
		{1, "Remote Protection Error"},
		{2, "Remote Operation Error"},
	},
	"iwarp_rdma.term_etype_ddp": {
		{0, "Local Catastrophic Error"},
		{1, "Tagged Buffer Error"},
		{2, "Untagged Buffer Error"},
		{3, "Reserved for the use by the LLP"},
	},
	"iwarp_rdma.term_etype_llp": {
		{0, "MPA Error"},
	},
	"iwarp_rdma.term_errcode_rdma": {
		{0, "Invalid STag"},
		{1, "Base or bounds violation"},
		{2, "Access rights violation"},
		{3, "STag not associated with RDMAP Stream"},
		{4, "TO wrap"},
		{5, "Invalid RDMAP version"},
		{6, "Unexpected OpCode"},
		{7, "Catastrophic error, localized to RDMAP Stream"},
		{8, "Catastrophic error, global"},
		{9, "STag cannot be Invalidated"},
		{255, "Unspecific Error"},
	},
	"iwarp_rdma.term_errcode_ddp_tagged": {
		{0, "Invalid STag"},
		{1, "Base or bounds violation"},
		{2, "STag not associated with DDP Stream"},
		{3, "TO wrap"},
		{4, "Invalid DDP version"},
	},
	"iwarp_rdma.term_errcode_ddp_untagged": {
		{1, "Invalid QN"},
		{2, "Invalid MSN - no buffer available"},
		{3, "Invalid MSN - MSN range is not valid"},
		{4, "Invalid MO"},
		{5, "DDP Message too long for available buffer"},
		{6, "Invalid DDP version"},
	},
	"iwarp_rdma.term_errcode_llp": {
		{1, "TCP connection closed, terminated or lost"},
		{2, "MPA CRC Error"},
		{3, "MPA Marker and ULPDU Length field mismatch"},
		{4, "Invalid MPA Request Frame or MPA Response Frame"},
		{5, "Local Catastrophic Error"},
		{6, "Insufficient IRD Resources"},
		{7, "No Matching RTR Option"},
	},
	"rdmap.atomic.op": { // iwarp_rdma.atomic.opcode
		{0, "FetchAdd"},
		{2, "CmpSwap"},
	},
}

// valueName is a value and its name.
type valueName struct {
	v    uint64
	name string
}

// namedValue returns the value of field name called s (case-insensitive,
// as tshark compares them). known is false when the field has no names.
func namedValue(name, s string) (v uint64, found, known bool) {
	names, known := valueNames[name]
	for _, n := range names {
		if strings.EqualFold(n.name, s) {
			return n.v, true, true
		}
	}
	return 0, false, known
}

// valueNamesOf lists the names of field name's values, for an error.
func valueNamesOf(name string) string {
	var b strings.Builder
	for i, n := range valueNames[name] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(n.name))
	}
	return b.String()
}

package filter

import (
	"strings"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/format"
)

// ftype is how a field's values are compared.
type ftype uint8

const (
	fNone   ftype = iota // a protocol: presence only
	fBool                // true/false
	fNum                 // unsigned (or signed) integer
	fString              // text
	fBytes               // octets
	fObject              // a nested object: presence, or descend with a dotted name
	fDyn                 // not known in advance: the value's own kind decides
	fAddr                // an IP address (endpoints.go)
	fTime                // a time, in nanoseconds (times.go)
)

var ftypeNames = [...]string{"protocol", "boolean", "number", "string", "bytes", "object", "value", "address", "time"}

// field is a resolved field name: how to find its values in a record and
// how to compare them.
type field struct {
	name string // canonical name, as String prints it
	typ  ftype  // the type of the value, or of each element of a list
	hex  bool   // numbers print in hexadecimal
	bits uint8  // a hex number's width (dissect.Field.Bits; 0: unknown), a port's (16), or wsWidths
	// unsigned: a wire field (the registry's numbers, ports, tcp.stream);
	// a literal past bits is an error, as tshark's.
	unsigned bool
	list     bool // the value is a list; comparisons look at its elements
	open     bool // an object whose members are not in the registry: any dotted member is accepted
	routes   []route
	// derive, when set, is an endpoint field (endpoints.go), a time field
	// (times.go) or one of wireFields (wire.go): its values come from the
	// record or are computed from its keys, not found by routes.
	derive derive
	end    end
	clk    clock // a time field's clock (derive dClock)
	// wire computes the value of a field of wireFields (derive dWire).
	wire func(kvs []format.KV) (format.Value, bool)
	// when, for Wireshark's fields that exist on some headers only (the
	// per-layer Terminate fields, termAliases; the atomic fields of some
	// operations, atomicAliases), says whether a record has the field.
	when func(kvs []format.KV) bool
}

// termWhen reports whether a per-layer Terminate field applies to a
// Terminate of that layer and error type.
type termWhen func(layer, etype uint64) bool

// termAliases are Wireshark's Terminate fields that exist for one layer
// (or one error type) only: iwarp_rdma.term_errcode_ddp_tagged is the
// code of a DDP Tagged Buffer Error, and absent from other Terminates.
// The code of the others is iwarp_rdma.term_errcode, as Wireshark's
// dissector (packet-iwarp-ddp-rdmap.c) and tshark 4.0 give it: an RDMAP
// Local Catastrophic Error (error type 0) has no term_errcode_rdma, and an
// LLP error other than an MPA one (type 0) no term_errcode_llp. tshark
// prints them in hex, two digits (tshark -G fields: FT_UINT8, BASE_HEX).
var termAliases = [...]struct {
	name, field string
	when        termWhen
}{
	{"iwarp_rdma.term_layer", "rdmap.term.layer", func(l, e uint64) bool { return true }},
	{"iwarp_rdma.term_etype_rdma", "rdmap.term.etype", func(l, e uint64) bool { return l == 0 }},
	{"iwarp_rdma.term_etype_ddp", "rdmap.term.etype", func(l, e uint64) bool { return l == 1 }},
	{"iwarp_rdma.term_etype_llp", "rdmap.term.etype", func(l, e uint64) bool { return l == 2 }},
	{"iwarp_rdma.term_etype", "rdmap.term.etype", func(l, e uint64) bool { return l > 2 }},
	{"iwarp_rdma.term_errcode_rdma", "rdmap.term.code", func(l, e uint64) bool { return l == 0 && e != 0 }},
	{"iwarp_rdma.term_errcode_ddp_tagged", "rdmap.term.code", func(l, e uint64) bool { return l == 1 && e == 1 }},
	{"iwarp_rdma.term_errcode_ddp_untagged", "rdmap.term.code", func(l, e uint64) bool { return l == 1 && e == 2 }},
	{"iwarp_rdma.term_errcode_llp", "rdmap.term.code", func(l, e uint64) bool { return l == 2 && e == 0 }},
	{"iwarp_rdma.term_errcode", "rdmap.term.code", func(l, e uint64) bool {
		// Every Terminate the fields above leave out.
		return l == 0 && e == 0 || l == 1 && e != 1 && e != 2 || l == 2 && e != 0 || l > 2
	}},
}

// atomicAliases are Wireshark's fields of an Atomic Request header (RFC
// 7306 §6.1), which tshark 4.0 names by operation: the first 16 octets
// after the remote TO are add_data and add_mask for FetchAdd (0),
// swap_data and swap_mask for CmpSwap (2), and compare_data and
// compare_mask for any other operation (Swap among them); the next 16 are
// compare_data and compare_mask for FetchAdd and CmpSwap, and not shown
// for the others. (tshark -T fields on a capture of each operation.)
var atomicAliases = [...]struct {
	name, field string
	ops         func(op uint64) bool
}{
	{"iwarp_rdma.atomic.add_data", "rdmap.atomic.add_swap_data", func(op uint64) bool { return op == 0 }},
	{"iwarp_rdma.atomic.add_mask", "rdmap.atomic.add_swap_mask", func(op uint64) bool { return op == 0 }},
	{"iwarp_rdma.atomic.swap_data", "rdmap.atomic.add_swap_data", func(op uint64) bool { return op == 2 }},
	{"iwarp_rdma.atomic.swap_mask", "rdmap.atomic.add_swap_mask", func(op uint64) bool { return op == 2 }},
	{"iwarp_rdma.atomic.compare_data", "rdmap.atomic.compare_data", func(op uint64) bool { return op == 0 || op == 2 }},
	{"iwarp_rdma.atomic.compare_mask", "rdmap.atomic.compare_mask", func(op uint64) bool { return op == 0 || op == 2 }},
	{"iwarp_rdma.atomic.compare_data", "rdmap.atomic.add_swap_data", func(op uint64) bool { return op != 0 && op != 2 }},
	{"iwarp_rdma.atomic.compare_mask", "rdmap.atomic.add_swap_mask", func(op uint64) bool { return op != 0 && op != 2 }},
}

// atomicOp returns a test of an Atomic Request's operation.
func atomicOp(ops func(uint64) bool) func(kvs []format.KV) bool {
	return func(kvs []format.KV) bool {
		v, ok := get(kvs, "rdmap.atomic.op")
		return ok && v.Kind == format.KUint && ops(v.U)
	}
}

// route is one place a field's values are found. path is looked up in the
// record with format.Get semantics (flat dotted keys or nested objects);
// when sub is set the value at path is a list of objects (or an object)
// and sub is looked up in each of them. A route with onlyType applies only
// to records of that type.
type route struct {
	path, sub, onlyType string
	when                func(kvs []format.KV) bool // the route applies only where it holds (atomicAliases)
}

// wsWidths are the widths of the registry's decimal fields that have a
// Wireshark field (tshark -G fields: FT_UINT8, FT_UINT16, FT_UINT32), so that
// a number past them is an error, as tshark's ("4294967296" too big for
// this field) rather than a test that matches nothing. The registry gives
// widths to its hexadecimal fields only (dissect.Field.Bits).
var wsWidths = map[string]uint8{
	"frame": 32, "seq": 32, "res": 8, "rev": 8, "pd_len": 16,
	"mpa.ulpdu_len": 16, "mpa.marker.fpduptr": 16, "mpa.marker.res": 16,
	"ddp.rsvd": 8, "ddp.dv": 8, "ddp.qn": 32, "ddp.msn": 32, "ddp.mo": 32,
	"rdmap.rv": 8, "rdmap.rsvd": 8, "rdmap.opcode": 8, "rdmap.read.size": 32,
	"rdmap.term.layer": 8, "rdmap.term.etype": 8, "rdmap.term.code": 8,
	"rdmap.atomic.op": 32, "rdmap.atomic.req_id": 32, "rdmap.atomic.orig_req_id": 32,
}

// extra is a record key that the dissect registry does not (yet) name: the
// keys of message and conn records (JSONL.md).
type extra struct {
	name string
	typ  ftype
	hex  bool
	desc string
	bits uint8
}

// extraFields are the message and conn record keys (JSONL.md), named as in
// the JSON Lines output. They are here because the registry describes the
// wire fields only; a registry entry of the same name takes precedence.
var extraFields = [...]extra{
	{"opcode", fNum, false, "message: RDMAP opcode", 0},
	{"name", fString, false, "message: opcode name", 0},
	{"segments", fNum, false, "message: DDP segments gathered", 0},
	{"length", fNum, false, "message: payload octets", 0},
	{"first_frame", fNum, false, "message, conn: first frame", 0},
	{"last_frame", fNum, false, "message, conn: last frame", 0},
	{"stag", fNum, true, "message: STag (tagged)", 32},
	{"to", fNum, true, "message: tagged offset of the first segment (tagged)", 64},
	{"qn", fNum, false, "message: queue number (untagged)", 0},
	{"msn", fNum, false, "message: message sequence number (untagged)", 0},
	{"request_frame", fNum, false, "message: frame of the RDMA Read Request a Read Response answers", 0},
	{"latency_ns", fNum, false, "message: Read Request to Read Response time in nanoseconds", 0},
	{"initiator", fString, false, "conn: initiator endpoint", 0},
	{"responder", fString, false, "conn: responder endpoint", 0},
	{"state", fString, false, "conn: how far the connection got", 0},
	{"ddp_version", fNum, false, "conn: DDP version seen in FPDUs", 0},
	{"interop", fDyn, false, "conn: interoperability verdict", 0},
	{"midstream", fBool, false, "conn: framing recovered without a handshake", 0},
	{"fpdus", fNum, false, "conn: FPDU count", 0},
	{"messages", fNum, false, "conn: message count", 0},
	{"octets", fNum, false, "conn: octet count", 0},
	{"crc_errors", fNum, false, "conn: CRC error count", 0},
	{"retransmissions", fNum, false, "conn: TCP segments sent again (or overtaken on the way)", 0},
	{"zero_windows", fNum, false, "conn: TCP segments advertising a zero window", 0},
	{"stalls", fNum, false, "conn: tcp.stall pauses", 0},
	{"stalled_ns", fNum, false, "conn: time of the tcp.stall pauses in nanoseconds", 0},
	{"cut_segments", fNum, false, "conn: TCP segments the snap length cut", 0},
	{"mpa.markers_i2r", fBool, false, "conn: markers initiator to responder", 0},
	{"mpa.markers_r2i", fBool, false, "conn: markers responder to initiator", 0},
	{"mpa.rejected", fBool, false, "conn: the responder rejected the connection", 0},
	{"mpa.p2p", fBool, false, "conn: peer-to-peer mode", 0},
}

// recordTypes are the record-type shorthands: a bare name is true for
// records of that kind (see the package documentation).
var recordTypes = [...]string{"mpa", "ddp", "rdmap", "fpdu", "message", "finding", "conn", "cm", "sctp_session"}

// findingKeys are the members of a finding, found at the top level of a
// finding record and in the findings list of fpdu and mpa records.
var findingKeys = [...]string{"severity", "code", "msg", "ref", "frames"}

// markerKeys are the members of an entry of mpa.markers.
var markerKeys = [...]struct {
	name string
	typ  ftype
}{{"seq", fNum}, {"fpduptr", fNum}, {"ok", fBool}}

// shorthand returns the record-type shorthand a bare name stands for
// (Wireshark's protocol names iwarp_mpa, iwarp_ddp, iwarp_rdma included).
func shorthand(name string) (string, bool) {
	if _, ok := subtrees[name]; ok {
		return name, true
	}
	if c := dissect.Canonical(name); c != "" {
		name = c
	}
	for _, t := range recordTypes {
		if name == t {
			return t, true
		}
	}
	return "", false
}

func fromRegistry(f dissect.Field) *field {
	r := &field{name: f.Name, routes: []route{{path: f.Name}}}
	switch f.Type {
	case dissect.TypeBool:
		r.typ = fBool
	case dissect.TypeUint:
		r.typ, r.unsigned, r.bits = fNum, true, wsWidths[f.Name]
	case dissect.TypeHex:
		r.typ, r.hex, r.bits, r.unsigned = fNum, true, f.Bits, true
	case dissect.TypeString:
		r.typ = fString
	case dissect.TypeBytes:
		r.typ = fBytes
	case dissect.TypeList:
		r.list = true
		switch f.Name {
		case "frames":
			r.typ = fNum
		case "enhanced.rtr":
			r.typ = fString
		case "findings", "mpa.markers":
			r.typ = fObject
		default:
			r.typ = fDyn
		}
	case dissect.TypeObject:
		r.typ = fObject
		r.open = !hasMembers(f.Name)
	default:
		r.typ = fNone
	}
	switch f.Name {
	case "severity", "code", "msg", "ref":
		// A finding's keys: at the top of a finding record, and in the
		// findings attached to fpdu and mpa records ("any" semantics).
		r.routes = []route{{path: f.Name, onlyType: "finding"}, {path: "findings", sub: f.Name}}
		if f.Name == "msg" {
			// A cm record's msg is its message: "req", "rej", ...
			r.routes = append(r.routes, route{path: "msg", onlyType: "cm"})
		}
	case "mpa.marker.fpduptr":
		r.routes = []route{{path: "mpa.markers", sub: "fpduptr"}}
	case "mpa.marker.res":
		r.routes = []route{{path: "mpa.markers", sub: "res"}}
	}
	return r
}

// hasMembers says whether the registry names members of the object name.
func hasMembers(name string) bool {
	for _, f := range dissect.Fields() {
		if strings.HasPrefix(f.Name, name+".") {
			return true
		}
	}
	return false
}

// resolve maps a field name (registry name, Wireshark alias, message/conn
// key, or a member of an object or of a list of objects) to a field.
func resolve(name string) (*field, bool) {
	if f, ok := named(name); ok {
		return f, true
	}
	// A member of an object: the longest prefix that names an object.
	for i := len(name) - 1; i > 0; i-- {
		if name[i] != '.' {
			continue
		}
		p, ok := named(name[:i])
		if !ok {
			continue
		}
		if p.typ == fObject || p.typ == fDyn && p.open {
			return member(p, name[i+1:])
		}
		return nil, false
	}
	return nil, false
}

// named resolves a registry name or alias, or a message/conn key.
func named(name string) (*field, bool) {
	for _, a := range termAliases {
		if a.name == name {
			return &field{name: a.name, typ: fNum, hex: true, bits: 8, routes: []route{{path: a.field}}, when: a.when.holds}, true
		}
	}
	// An atomic field is one of two registry fields, by operation: a
	// route each, with its own condition.
	var atomic *field
	for _, a := range atomicAliases {
		if a.name != name {
			continue
		}
		f, _ := dissect.Lookup(a.field)
		if atomic == nil {
			atomic = &field{name: a.name, typ: fNum, hex: f.Type == dissect.TypeHex, bits: f.Bits}
		}
		atomic.routes = append(atomic.routes, route{path: a.field, when: atomicOp(a.ops)})
	}
	if atomic != nil {
		return atomic, true
	}
	if f, ok := wireField(name); ok {
		return f, true
	}
	if f, ok := dissect.Lookup(name); ok {
		r := fromRegistry(f)
		if name == "iwarp_rdma.term_rdma_h" {
			// tshark's terminated RDMA header is there when the
			// Terminate's R is set; rdmap.term.rdmap also holds the RDMAP
			// control octet of a terminated DDP header.
			r.name, r.when = name, func(kvs []format.KV) bool { return boolKey(kvs, "rdmap.term.r", true) }
		}
		return r, true
	}
	for _, e := range extraFields {
		if e.name == name {
			return &field{name: e.name, typ: e.typ, hex: e.hex, bits: e.bits, open: e.typ == fDyn, routes: []route{{path: e.name}}}, true
		}
	}
	if f, ok := endpointField(name); ok {
		return f, true
	}
	return timeField(name)
}

// member resolves rest inside the object (or list of objects) p.
func member(p *field, rest string) (*field, bool) {
	if rest == "" {
		return nil, false
	}
	base := p.routes[0]
	in := func(typ ftype, hex, list bool) *field {
		f := &field{name: p.name + "." + rest, typ: typ, hex: hex, list: list}
		if p.list || base.sub != "" {
			// Members of the list's elements.
			sub := rest
			if base.sub != "" {
				sub = base.sub + "." + rest
			}
			f.routes = []route{{path: base.path, sub: sub}}
		} else {
			f.routes = []route{{path: base.path + "." + rest}}
		}
		return f
	}
	// Members mirrored from registry fields: the terminated headers of a
	// Terminate are decoded like the top-level ddp.* and rdmap.* fields.
	mirror := ""
	switch p.name {
	case "rdmap.term.ddp":
		mirror = "ddp."
	case "rdmap.term.rdmap":
		mirror = "rdmap."
	case "findings":
		for _, k := range findingKeys {
			if k == rest {
				f, _ := dissect.Lookup(k)
				r := fromRegistry(f)
				m := in(r.typ, r.hex, r.list)
				m.bits = r.bits
				return m, true
			}
		}
		return nil, false
	case "mpa.markers":
		for _, k := range markerKeys {
			if k.name == rest {
				return in(k.typ, false, false), true
			}
		}
		return nil, false
	}
	if mirror != "" {
		f, ok := dissect.Lookup(mirror + rest)
		if !ok || f.Name != mirror+rest {
			return nil, false
		}
		r := fromRegistry(f)
		m := in(r.typ, r.hex, r.list)
		m.open, m.bits = r.open, r.bits
		return m, true
	}
	if p.open {
		m := in(fDyn, false, false)
		m.open = true
		return m, true
	}
	return nil, false
}

// knownNames lists every name a filter accepts, for suggestions.
func knownNames() []string {
	var out []string
	for _, f := range dissect.Fields() {
		out = append(out, f.Name)
		out = append(out, f.Aliases...)
		if strings.HasPrefix(f.Name, "ddp.") {
			out = append(out, "rdmap.term.ddp."+f.Name[4:])
		}
		if strings.HasPrefix(f.Name, "rdmap.") && !strings.HasPrefix(f.Name, "rdmap.term") {
			out = append(out, "rdmap.term.rdmap."+f.Name[6:])
		}
	}
	for _, e := range extraFields {
		out = append(out, e.name)
	}
	for _, k := range findingKeys {
		out = append(out, "findings."+k)
	}
	for _, k := range markerKeys {
		out = append(out, "mpa.markers."+k.name)
	}
	for _, e := range endpointFields {
		out = append(out, e.name)
	}
	for _, p := range endpointProtocols {
		out = append(out, p.name)
	}
	for _, e := range timeFields {
		out = append(out, e.name)
	}
	return append(out, recordTypes[:]...)
}

// nearest returns the known name closest to name (edit distance, case
// ignored: names are case-sensitive, as in Wireshark, and all lowercase,
// so IWARP_DDP.MSN is nearest to iwarp_ddp.msn).
func nearest(name string) string {
	if len(name) > 64 {
		name = name[:64] // names are short: bound the work on long input
	}
	name = strings.ToLower(name)
	best, bestD := "", -1
	for _, c := range knownNames() {
		d := editDistance(name, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (octets).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

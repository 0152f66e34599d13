package filter

import (
	"math/bits"

	"github.com/iwarpkit/iwarpkit/format"
)

// Wireshark fields whose values a record holds in another form than
// tshark 4.0 shows them (packet-iwarp-mpa.c and packet-iwarp-ddp-rdmap.c,
// read for facts; checked with tshark -Y and -T fields on the bundled
// captures, tshark_test.go):
//
//   - iwarp_mpa.crc and iwarp_mpa.crc_check are the same four octets, the
//     FPDU's CRC field, read most significant octet first (mpa.crc is
//     read least significant octet first). tshark names them crc_check
//     when CRC32c was negotiated and it checked them, good or bad
//     (mpa.crc_status ok or bad), and crc when it was not (unchecked);
//     an FPDU whose CRC is not in the capture has neither.
//   - iwarp_mpa.res is the five bits after R in an MPA Request or Reply
//     (mask 0x1f), the S flag of MPA revision 2 (RFC 6581) included:
//     res holds the four after S.
//   - iwarp_ddp.rsvd and iwarp_rdma.rsv are the reserved bits of the DDP
//     and RDMAP control octets, in every decoded header; a record has
//     ddp.rsvd and rdmap.rsvd only when they are not zero.
//   - iwarp_mpa.privatedata is an MPA Request's or Reply's private data
//     when it has some: tshark has no such field when PD_Length is 0,
//     where the record's pd is empty.
var wireFields = [...]struct {
	name  string
	reads []string // the record keys the value is computed from
	bits  uint8    // tshark's width (FT_UINT8, FT_UINT32), printed in hex; 0: octets (FT_BYTES)
	val   func(kvs []format.KV) (format.Value, bool)
}{
	{"iwarp_mpa.crc", []string{"mpa.crc", "mpa.crc_status"}, 32, func(kvs []format.KV) (format.Value, bool) {
		return wireCRC(kvs, false)
	}},
	{"iwarp_mpa.crc_check", []string{"mpa.crc", "mpa.crc_status"}, 32, func(kvs []format.KV) (format.Value, bool) {
		return wireCRC(kvs, true)
	}},
	{"iwarp_mpa.res", []string{"type", "res", "s"}, 8, func(kvs []format.KV) (format.Value, bool) {
		if recType(kvs) != "mpa" {
			return format.Value{}, false
		}
		res, ok := get(kvs, "res")
		if !ok || res.Kind != format.KUint {
			return format.Value{}, false
		}
		v := res.U
		if boolKey(kvs, "s", true) {
			v |= 0x10
		}
		return format.Uint(v), true
	}},
	{"iwarp_ddp.rsvd", []string{"ddp.t", "ddp.rsvd"}, 8, func(kvs []format.KV) (format.Value, bool) {
		return zeroUnless(kvs, "ddp.t", "ddp.rsvd")
	}},
	{"iwarp_rdma.rsv", []string{"rdmap.opcode", "rdmap.rsvd"}, 8, func(kvs []format.KV) (format.Value, bool) {
		return zeroUnless(kvs, "rdmap.opcode", "rdmap.rsvd")
	}},
	{"iwarp_mpa.privatedata", []string{"type", "pd"}, 0, func(kvs []format.KV) (format.Value, bool) {
		if recType(kvs) != "mpa" {
			return format.Value{}, false
		}
		pd, ok := get(kvs, "pd")
		if !ok || pd.Kind != format.KBytes || len(pd.Bytes) == 0 {
			return format.Value{}, false
		}
		return pd, true
	}},
}

// wireCRC returns an FPDU's CRC field as tshark reads it, when tshark
// names it crc_check (checked) or crc (not checked).
func wireCRC(kvs []format.KV, checked bool) (format.Value, bool) {
	st, ok := get(kvs, "mpa.crc_status")
	if !ok || st.Kind != format.KString {
		return format.Value{}, false
	}
	switch st.S {
	case "ok", "bad":
		if !checked {
			return format.Value{}, false
		}
	case "unchecked":
		if checked {
			return format.Value{}, false
		}
	default:
		return format.Value{}, false
	}
	crc, ok := get(kvs, "mpa.crc")
	if !ok || crc.Kind != format.KUint {
		return format.Value{}, false
	}
	return format.Uint(uint64(bits.ReverseBytes32(uint32(crc.U)))), true
}

// zeroUnless returns the value of key, or 0 when the record has header (a
// decoded header) but not key.
func zeroUnless(kvs []format.KV, header, key string) (format.Value, bool) {
	if v, ok := get(kvs, key); ok && v.Kind == format.KUint {
		return v, true
	}
	if !hasKey(kvs, header) {
		return format.Value{}, false
	}
	return format.Uint(0), true
}

// wireField resolves a name of wireFields.
func wireField(name string) (*field, bool) {
	for _, w := range wireFields {
		if w.name != name {
			continue
		}
		f := &field{name: w.name, typ: fNum, hex: true, bits: w.bits, unsigned: true, derive: dWire, wire: w.val}
		if w.bits == 0 {
			f.typ, f.hex, f.unsigned = fBytes, false, false
		}
		for _, k := range w.reads {
			f.routes = append(f.routes, route{path: k}) // what the field reads (Reads, the omitted keys), not where scan looks
		}
		return f, true
	}
	return nil, false
}

// derived visits the values of a field a record has no key of: an
// endpoint field (endpoints.go) or one of wireFields.
func (t *test) derived(e env, s *scanState) {
	if t.f.derive != dWire {
		t.endpoints(e.r, s)
		return
	}
	if v, ok := t.f.wire(e.kvs); ok {
		t.one(&v, s)
	}
}

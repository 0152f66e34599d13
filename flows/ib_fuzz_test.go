package flows_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// FuzzIBNative replaces one packet of the generated native InfiniBand
// exchange (testdata/synthext/ib-cm-native.pcap) with arbitrary octets.
// Invariants: no panic; every record renders as JSON valid under the v1
// schema and as text naming no invalid address; cm records over native
// InfiniBand carry their LRH.
func FuzzIBNative(f *testing.F) {
	ps := loadPackets(f, "../testdata/synthext/ib-cm-native.pcap")
	schema := compileTestSchema(f)
	for i, p := range ps {
		f.Add(uint8(i), bytes.Clone(p.Payload))
	}
	f.Add(uint8(0), ps[2].Payload[:60])
	f.Add(uint8(4), []byte{0x00, 0x03, 0x00, 0x01, 0x00, 0x10, 0x00, 0x02})
	f.Fuzz(func(t *testing.T, idx uint8, data []byte) {
		if len(data) > 4096 {
			return
		}
		mut := make([]capture.Packet, len(ps))
		copy(mut, ps)
		i := int(idx) % len(mut)
		p := &mut[i]
		p.Payload, p.Data = data, data
		p.CapLen, p.WireLen, p.PayloadWireLen = len(data), len(data), len(data)
		for _, r := range decodePackets(mut) {
			js := format.AppendJSON(nil, format.Fields(r))
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
			if err != nil {
				t.Fatalf("invalid JSON: %s", js)
			}
			if err := schema.Validate(v); err != nil {
				t.Fatalf("record breaks the v1 schema: %v\n%s", err, js)
			}
			// A zero netip value prints as "invalid IP" or "invalid
			// AddrPort" (REJ reasons such as invalid_flow_label are
			// names, not that).
			if l := string(format.AppendText(nil, r, format.TextOptions{Verbose: true})); strings.Contains(l, "invalid IP") || strings.Contains(l, "invalid AddrPort") {
				t.Fatalf("text %q", l)
			}
			if r.Type == flows.RecCM && !r.CM.HasLRH {
				t.Fatalf("frame %d: native cm record without its LRH", r.Frame)
			}
		}
	})
}

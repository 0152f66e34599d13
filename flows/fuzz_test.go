package flows_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileTestSchema compiles docs/jsonl.schema.json.
func compileTestSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile("../docs/jsonl.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// decodeBytes runs the whole pipeline over a capture file's bytes and renders
// every record as JSON, checking that each line is valid JSON.
func decodeBytes(t *testing.T, data []byte) []*flows.Record {
	src, err := capture.NewSource(bytes.NewReader(data), "fuzz")
	if err != nil {
		return nil
	}
	var out []*flows.Record
	d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) { out = append(out, r) })
	for i := 0; i < 100000; i++ {
		p, err := src.Next()
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
		d.Packet(&p)
	}
	d.Close()
	for _, r := range out {
		js := format.AppendJSON(nil, format.Fields(r))
		if !json.Valid(js) {
			t.Fatalf("invalid JSON: %s", js)
		}
		_ = format.AppendText(nil, r, format.TextOptions{Verbose: true})
	}
	return out
}

// FuzzPipeline: any file bytes in, records out, no panic, valid JSON.
func FuzzPipeline(f *testing.F) {
	files, _ := filepath.Glob("../testdata/siw/*.pcap")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 8<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		decodeBytes(t, data)
	})
}

// FuzzTCPPayload mutates the TCP payload of one packet of a real siw
// connection, so that mutations reach MPA, DDP and RDMAP. Invariants: no
// panic, valid JSON, and every FPDU that lies wholly in frames before the
// mutated one decodes exactly as without the mutation.
func FuzzTCPPayload(f *testing.F) {
	ps := loadPackets(f, "../testdata/siw/crc_v2_iwtest_ops.pcap")
	ps = ps[:60]
	base := map[uint64]*flows.FPDURecord{}
	for _, r := range decodePackets(ps) {
		if r.Type == flows.RecFPDU {
			base[uint64(r.FPDU.Seq)<<8|uint64(r.Conn)] = r.FPDU
		}
	}
	schema := compileTestSchema(f)
	f.Add(uint8(7), uint16(0), []byte{0xff})
	f.Add(uint8(3), uint16(16), []byte{0x30})
	f.Add(uint8(9), uint16(2), []byte{0, 0, 0, 0})
	f.Add(uint8(20), uint16(100), []byte("MPA ID Req Frame"))
	f.Fuzz(func(t *testing.T, idx uint8, off uint16, data []byte) {
		i := int(idx) % len(ps)
		mut := make([]capture.Packet, len(ps))
		copy(mut, ps)
		pl := append([]byte(nil), mut[i].Payload...)
		for j := range data {
			k := int(off) + j
			if k < len(pl) {
				pl[k] ^= data[j]
			} else {
				pl = append(pl, data[j])
			}
		}
		mut[i].Payload = pl
		mut[i].PayloadWireLen = len(pl)
		mf := mut[i].Frame
		for _, r := range decodePackets(mut) {
			js := format.AppendJSON(nil, format.Fields(r))
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
			if err != nil {
				t.Fatalf("invalid JSON: %s", js)
			}
			if err := schema.Validate(v); err != nil {
				t.Fatalf("record breaks the v1 schema: %v\n%s", err, js)
			}
			if r.Type != flows.RecFPDU || r.FPDU.Frames[len(r.FPDU.Frames)-1] >= mf {
				continue
			}
			w, ok := base[uint64(r.FPDU.Seq)<<8|uint64(r.Conn)]
			if !ok || w.Len != r.FPDU.Len || w.Seg.DDP != r.FPDU.Seg.DDP || w.CRCStatus != r.FPDU.CRCStatus {
				t.Fatalf("FPDU at seq %d before the mutated frame %d changed", r.FPDU.Seq, mf)
			}
		}
	})
}

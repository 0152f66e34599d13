package format

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// TestAtomicAsTruth: the rdmap.atomic object of RFC 7306's Atomic Request
// and Response FPDUs, written by the JSON Lines encoder and by Fields, is
// the header the generator recorded in its ground truth (which names the
// response's request id req_id, the RFC's "Original Request Identifier").
func TestAtomicAsTruth(t *testing.T) {
	const base = "../testdata/synth/rfc7306"
	f, err := os.Open(base + ".truth.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[uint64]map[string]any{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Frame uint64
			RDMAP struct {
				Atomic map[string]any
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if a := r.RDMAP.Atomic; a != nil {
			if _, resp := a["orig_value"]; resp {
				a["orig_req_id"] = a["req_id"]
				delete(a, "req_id")
			}
			want[r.Frame] = a
		}
	}
	n := 0
	var w JSONWriter
	for _, r := range testutil.Decode(t, base+".pcap", flows.Options{}) {
		if r.Type != flows.RecFPDU || want[r.Frame] == nil {
			continue
		}
		for _, line := range [][]byte{w.Append(nil, r), AppendJSON(nil, Fields(r))} {
			var got struct {
				Atomic map[string]any `json:"rdmap.atomic"`
			}
			if err := json.Unmarshal(line, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Atomic, want[r.Frame]) {
				t.Errorf("frame %d: rdmap.atomic %v, truth %v", r.Frame, got.Atomic, want[r.Frame])
			}
		}
		n++
	}
	if n != 4 {
		t.Errorf("%d atomic FPDUs compared, want 4 (2 requests, 2 responses)", n)
	}
}

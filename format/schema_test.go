package format_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("../docs/jsonl.schema.json")
	if err != nil {
		t.Fatalf("compile schema: %v", err)
	}
	return sch
}

// jsonlOf renders records as JSON Lines.
func jsonlOf(rs []*flows.Record) []byte {
	var b []byte
	for _, r := range rs {
		b = format.AppendJSON(b, format.Fields(r))
		b = append(b, '\n')
	}
	return b
}

// TestJSONLValidatesAgainstSchema renders every bundled capture and validates
// each line against docs/jsonl.schema.json (JSON Schema draft 2020-12).
func TestJSONLValidatesAgainstSchema(t *testing.T) {
	sch := compileSchema(t)
	files, _ := filepath.Glob("../testdata/siw/*.pcap")
	for _, dir := range []string{"synth", "rxe", "synthext", "midstream", "snaplen", "tcp"} {
		more, _ := filepath.Glob("../testdata/" + dir + "/*.pcap")
		files = append(files, more...)
	}
	types := map[string]int{}
	for _, path := range files {
		out := jsonlOf(testutil.Decode(t, path, flows.Options{}))
		for i, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
			if err != nil {
				t.Fatalf("%s line %d: not JSON: %v\n%s", path, i+1, err, line)
			}
			if err := sch.Validate(v); err != nil {
				t.Fatalf("%s line %d: %v\n%s", path, i+1, err, line)
			}
			types[v.(map[string]any)["type"].(string)]++
		}
	}
	for _, typ := range []string{"mpa", "fpdu", "message", "finding", "conn"} {
		if types[typ] == 0 {
			t.Errorf("no %q record in any capture: the schema's %s branch is untested", typ, typ)
		}
	}
}

// TestSchemaRejects makes sure the schema is not vacuous: records that break
// the contract fail validation.
func TestSchemaRejects(t *testing.T) {
	sch := compileSchema(t)
	bad := []string{
		`{"v":2,"type":"fpdu","frame":1,"ts":"2026-01-01T00:00:00.000000000Z","conn":0}`,
		`{"v":1,"type":"fpdu","frame":1,"ts":"2026-01-01T00:00:00Z","conn":0}`,
		`{"v":1,"type":"fpdu","frame":1,"ts":"2026-01-01T00:00:00.000000000Z","conn":0,"src":"1.2.3.4:1","dst":"1.2.3.4:2","dir":"i2r","seq":1,"len":8,"frames":[1],"mpa.ulpdu_len":0,"mpa.pad":2,"mpa.crc":0,"mpa.crc_status":"maybe"}`,
		`{"v":1,"type":"finding","frame":1,"ts":"2026-01-01T00:00:00.000000000Z","conn":0,"severity":"fatal","code":"a.b","msg":"","frames":[],"ref":""}`,
		`{"v":1,"type":"mpa","frame":1,"ts":"2026-01-01T00:00:00.000000000Z","conn":0,"kind":"request"}`,
	}
	for _, s := range bad {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(v) == nil {
			t.Errorf("schema accepted %s", s)
		}
	}
}

// TestKeysInRegistry checks the one-registry rule: every key path of every
// record (objects descended with dots) names a field of dissect's registry,
// directly or by a registered prefix.
func TestKeysInRegistry(t *testing.T) {
	files, _ := filepath.Glob("../testdata/siw/*.pcap")
	seen := map[string]bool{}
	for _, path := range files {
		for _, r := range testutil.Decode(t, path, flows.Options{}) {
			walkKeys(format.Fields(r), "", r.Type.String(), seen)
		}
	}
	for k := range seen {
		if _, ok := dissect.Lookup(k); ok {
			continue
		}
		// Nested keys are covered by their registered parent object.
		parent := k
		found := false
		for i := strings.LastIndexByte(parent, '.'); i > 0; i = strings.LastIndexByte(parent, '.') {
			parent = parent[:i]
			if f, ok := dissect.Lookup(parent); ok && (f.Type == dissect.TypeObject || f.Type == dissect.TypeList) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("key %q is not in the field registry", k)
		}
	}
}

func walkKeys(kvs []format.KV, prefix, typ string, seen map[string]bool) {
	for _, e := range kvs {
		name := e.Key
		if prefix != "" {
			name = prefix + "." + e.Key
		}
		switch typ {
		case "message", "conn":
			// Record-specific keys of message and conn records are
			// documented in JSONL.md; only shared keys are registry fields.
			if prefix == "" {
				continue
			}
		}
		seen[name] = true
		if e.Val.Kind == format.KObject {
			walkKeys(e.Val.Obj, name, typ, seen)
		}
	}
}

// TestJSONEscaping: strings are valid JSON and UTF-8 whatever they hold.
func TestJSONEscaping(t *testing.T) {
	in := "a\x1b[31mred\x07\xff\"\\\u2028<"
	out := format.AppendJSON(nil, []format.KV{{Key: "k", Val: format.Str(in)}})
	var m map[string]string
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("invalid JSON %s: %v", out, err)
	}
	if bytes.ContainsAny(out, "\x1b\x07") {
		t.Errorf("control characters not escaped: %q", out)
	}
	if m["k"] != "a\x1b[31mred\x07\ufffd\"\\\u2028<" {
		t.Errorf("round trip = %q", m["k"])
	}
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }

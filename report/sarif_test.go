package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
)

// sarifDoc mirrors the SARIF 2.1.0 properties the checks look at; unknown
// properties are ignored, missing ones stay zero (and the checks say so).
type sarifDoc struct {
	Version *string `json:"version"`
	Schema  *string `json:"$schema"`
	Runs    []struct {
		Tool *struct {
			Driver *struct {
				Name  *string `json:"name"`
				Rules []struct {
					ID               *string `json:"id"`
					HelpURI          *string `json:"helpUri"`
					ShortDescription *struct {
						Text *string `json:"text"`
					} `json:"shortDescription"`
					DefaultConfiguration *struct {
						Level string `json:"level"`
					} `json:"defaultConfiguration"`
					Properties map[string]any `json:"properties"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Artifacts []struct {
			Location struct {
				URI string `json:"uri"`
			} `json:"location"`
		} `json:"artifacts"`
		Results []struct {
			RuleID    *string `json:"ruleId"`
			RuleIndex *int    `json:"ruleIndex"`
			Level     *string `json:"level"`
			Message   *struct {
				Text *string `json:"text"`
			} `json:"message"`
			Locations []struct {
				PhysicalLocation *struct {
					ArtifactLocation struct {
						URI   string `json:"uri"`
						Index *int   `json:"index"`
					} `json:"artifactLocation"`
				} `json:"physicalLocation"`
				LogicalLocations []struct {
					Name               string `json:"name"`
					FullyQualifiedName string `json:"fullyQualifiedName"`
				} `json:"logicalLocations"`
			} `json:"locations"`
		} `json:"results"`
		Properties map[string]any `json:"properties"`
	} `json:"runs"`
}

var frameName = regexp.MustCompile(`^frame [0-9]+$`)

// checkSARIF validates a SARIF log structurally against the SARIF 2.1.0
// requirements (OASIS SARIF v2.1.0: §3.13 sarifLog version and $schema,
// §3.14 runs, §3.18.2 tool.driver.name, §3.27 result with ruleId, message.text
// and level in {none, note, warning, error}, §3.49 rule id) and the
// conventions WriteSARIF documents.
func checkSARIF(t testing.TB, doc []byte, uri string) *sarifDoc {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(doc, &raw); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	var d sarifDoc
	dec := json.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("SARIF shape: %v", err)
	}
	if d.Version == nil || *d.Version != "2.1.0" {
		t.Fatalf("version %v", d.Version)
	}
	if d.Schema == nil || !strings.HasSuffix(*d.Schema, "sarif-schema-2.1.0.json") {
		t.Fatalf("$schema %v", d.Schema)
	}
	if len(d.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(d.Runs))
	}
	run := &d.Runs[0]
	if run.Tool == nil || run.Tool.Driver == nil || run.Tool.Driver.Name == nil || *run.Tool.Driver.Name == "" {
		t.Fatalf("no tool.driver.name")
	}
	ids := map[string]int{}
	var order []string
	for i, r := range run.Tool.Driver.Rules {
		if r.ID == nil || *r.ID == "" {
			t.Fatalf("rule %d without id", i)
		}
		if _, dup := ids[*r.ID]; dup {
			t.Errorf("rule id %q twice", *r.ID)
		}
		ids[*r.ID] = i
		order = append(order, *r.ID)
		if r.HelpURI != nil {
			t.Errorf("rule %s has a helpUri", *r.ID)
		}
		if r.ShortDescription == nil || r.ShortDescription.Text == nil || *r.ShortDescription.Text == "" {
			t.Errorf("rule %s without shortDescription.text", *r.ID)
		}
		if _, ok := r.Properties["ref"]; !ok {
			t.Errorf("rule %s without properties.ref", *r.ID)
		}
		if r.DefaultConfiguration == nil || !validLevel(r.DefaultConfiguration.Level) {
			t.Errorf("rule %s: defaultConfiguration %v", *r.ID, r.DefaultConfiguration)
		}
	}
	if !sort.StringsAreSorted(order) {
		t.Errorf("rules not sorted by id: %v", order)
	}
	if run.Results == nil {
		t.Fatalf("results missing (must be an array, empty when nothing was found)")
	}
	for i, r := range run.Results {
		if r.RuleID == nil || r.Message == nil || r.Message.Text == nil || *r.Message.Text == "" || r.Level == nil {
			t.Fatalf("result %d lacks ruleId, message.text or level", i)
		}
		if !validLevel(*r.Level) {
			t.Errorf("result %d level %q", i, *r.Level)
		}
		ri, ok := ids[*r.RuleID]
		if !ok || r.RuleIndex == nil || *r.RuleIndex != ri {
			t.Errorf("result %d: ruleId %q ruleIndex %v, rule at %d (%v)", i, *r.RuleID, r.RuleIndex, ri, ok)
		}
		if len(r.Locations) != 1 || len(r.Locations[0].LogicalLocations) != 1 || !frameName.MatchString(r.Locations[0].LogicalLocations[0].Name) {
			t.Errorf("result %d locations %+v", i, r.Locations)
			continue
		}
		pl := r.Locations[0].PhysicalLocation
		if uri == "" && pl != nil || uri != "" && (pl == nil || pl.ArtifactLocation.URI != uri || pl.ArtifactLocation.Index == nil || *pl.ArtifactLocation.Index != 0) {
			t.Errorf("result %d physicalLocation %+v, want uri %q index 0", i, pl, uri)
		}
	}
	if uri != "" && (len(run.Artifacts) != 1 || run.Artifacts[0].Location.URI != uri) {
		t.Errorf("artifacts %+v, want %q", run.Artifacts, uri)
	}
	return &d
}

func validLevel(l string) bool {
	return l == "none" || l == "note" || l == "warning" || l == "error"
}

func TestSARIFCaptures(t *testing.T) {
	for _, name := range []string{"basic_rping_v2_nocrc", "term_badwrite", "term_sendinv", "mpareq_rev3"} {
		t.Run(name, func(t *testing.T) {
			c, _ := collect(t, name)
			var b bytes.Buffer
			path := "../testdata/siw/" + name + ".pcap"
			if err := c.WriteSARIF(&b, "iwarpdump", path); err != nil {
				t.Fatal(err)
			}
			d := checkSARIF(t, b.Bytes(), path)
			run := d.Runs[0]
			if len(run.Results) != c.nFindings || len(run.Tool.Driver.Rules) != len(c.codes) {
				t.Errorf("%d results and %d rules; %d findings with %d codes", len(run.Results), len(run.Tool.Driver.Rules), c.nFindings, len(c.codes))
			}
			// Each Terminate is an error result located at the MANIFEST's frame.
			want := map[string]string{"term_badwrite": "frame 11", "term_sendinv": "frame 13"}[name]
			got := ""
			for _, r := range run.Results {
				if *r.RuleID == "rdmap.terminate" {
					if *r.Level != "error" {
						t.Errorf("terminate level %s", *r.Level)
					}
					got = r.Locations[0].LogicalLocations[0].Name
				}
			}
			if got != want {
				t.Errorf("terminate result at %q, want %q", got, want)
			}
		})
	}
}

func TestSARIFLevelsAndURIs(t *testing.T) {
	c := NewCollector()
	c.maxFindings = 2
	c.Add(fpduRec(0, 1, 0, flows.DirI2R, rdmap.OpSend, 1))
	c.Add(findingRec(0, 5, dissect.SeverityNote, "b.note", "a note"))
	c.Add(findingRec(0, 6, dissect.SeverityWarning, "a.warn", "")) // empty message: the code stands in
	c.Add(findingRec(0, 7, dissect.SeverityError, "c.err", "dropped"))
	for _, tc := range []struct{ path, uri string }{
		{"", ""},
		{"/tmp/my capture.pcap", "file:///tmp/my%20capture.pcap"},
		{"a:b.pcap", "./a:b.pcap"},
		{"dir/x#1.pcapng", "dir/x%231.pcapng"},
	} {
		var b bytes.Buffer
		if err := c.WriteSARIF(&b, "t", tc.path); err != nil {
			t.Fatal(err)
		}
		d := checkSARIF(t, b.Bytes(), tc.uri)
		run := d.Runs[0]
		if len(run.Results) != 2 || *run.Results[0].Level != "note" || *run.Results[1].Level != "warning" || *run.Results[1].Message.Text != "a.warn" {
			t.Fatalf("results %s", b.String())
		}
		if run.Properties["droppedFindings"] != float64(1) || run.Properties["findings"] != float64(3) {
			t.Errorf("run properties %v", run.Properties)
		}
		if ids := []string{*run.Tool.Driver.Rules[0].ID, *run.Tool.Driver.Rules[1].ID, *run.Tool.Driver.Rules[2].ID}; strings.Join(ids, " ") != "a.warn b.note c.err" {
			t.Errorf("rules %v", ids)
		}
	}
}

// TestSARIFSeveralInputs: a decode of several merged files lists each file
// as an artifact (not their names joined, nor the glob), and its results,
// whose frame numbers count the merged packets, point at none of them.
func TestSARIFSeveralInputs(t *testing.T) {
	c := NewCollector()
	c.Add(findingRec(0, 5, dissect.SeverityWarning, "a.warn", "w"))
	var b bytes.Buffer
	if err := c.WriteSARIFInputs(&b, "t", []string{"/c/ring-00.pcap", "/c/ring-01.pcap"}); err != nil {
		t.Fatal(err)
	}
	var d struct {
		Runs []struct {
			Artifacts []struct {
				Location struct{ URI string } `json:"location"`
			} `json:"artifacts"`
			Results []struct {
				Locations []map[string]any `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	run := d.Runs[0]
	if len(run.Artifacts) != 2 || run.Artifacts[0].Location.URI != "file:///c/ring-00.pcap" || run.Artifacts[1].Location.URI != "file:///c/ring-01.pcap" {
		t.Errorf("artifacts %+v", run.Artifacts)
	}
	if len(run.Results) != 1 || len(run.Results[0].Locations) != 1 || run.Results[0].Locations[0]["physicalLocation"] != nil {
		t.Errorf("results %+v", run.Results)
	}
}

package report

import (
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// SARIFSchema is the $schema URI WriteSARIF puts in its documents (the OASIS
// SARIF 2.1.0 schema, errata 01).
const SARIFSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// SARIF 2.1.0 objects (OASIS SARIF v2.1.0 §3), only the properties used.
type sarifLog struct {
	Version string     `json:"version"`
	Schema  string     `json:"$schema"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations,omitempty"`
	Artifacts   []sarifArtifact   `json:"artifacts,omitempty"`
	Results     []sarifResult     `json:"results"`
	Properties  *sarifRunProps    `json:"properties,omitempty"`
}

// sarifInvocation (§3.20) is written only for a damaged capture: a run
// that did not read all of its input.
type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications"`
}

type sarifNotification struct {
	Level   string       `json:"level"`
	Message sarifMessage `json:"message"`
}

type sarifRunProps struct {
	Findings        int `json:"findings"`
	DroppedFindings int `json:"droppedFindings"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name  string      `json:"name"`
	Rules []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	ShortDescription     sarifMessage   `json:"shortDescription"`
	DefaultConfiguration sarifRuleConf  `json:"defaultConfiguration"`
	Properties           sarifRuleProps `json:"properties"`
}

type sarifRuleConf struct {
	Level string `json:"level"`
}

type sarifRuleProps struct {
	Ref string `json:"ref"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifArtifact struct {
	Location sarifArtifactLocation `json:"location"`
}

type sarifArtifactLocation struct {
	URI   string `json:"uri"`
	Index *int   `json:"index,omitempty"`
}

type sarifResult struct {
	RuleID     string           `json:"ruleId"`
	RuleIndex  int              `json:"ruleIndex"`
	Level      string           `json:"level"`
	Message    sarifMessage     `json:"message"`
	Locations  []sarifLocation  `json:"locations"`
	Properties sarifResultProps `json:"properties"`
}

type sarifResultProps struct {
	Conn   int      `json:"conn"`
	Frames []uint64 `json:"frames,omitempty"`
	Ref    string   `json:"ref,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
}

type sarifLogical struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
}

// sarifLevel maps a severity to a SARIF result level (§3.27.10).
func sarifLevel(s dissect.Severity) string {
	switch s {
	case dissect.SeverityError:
		return "error"
	case dissect.SeverityWarning:
		return "warning"
	}
	return "note"
}

// fileURI turns a capture path into a URI reference (§3.4.3): absolute
// paths become file:// URIs, relative ones relative references with
// forward slashes. An empty path gives "".
func fileURI(p string) string {
	if p == "" {
		return ""
	}
	p = filepath.ToSlash(p)
	if strings.HasPrefix(p, "/") {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}

// WriteSARIF writes the findings as one SARIF 2.1.0 run (OASIS SARIF
// v2.1.0) for code-scanning dashboards:
//
//   - tool.driver.name is tool; one rule per finding code, sorted by code:
//     id = the code, shortDescription = the first message seen with that
//     code, defaultConfiguration.level = the first one's severity,
//     properties.ref = its reference; no helpUri;
//   - one result per kept finding (at most MaxFindings, in the order added):
//     ruleId and ruleIndex, level error, warning or note, message.text, a
//     location with the logical location "frame N" (fullyQualifiedName
//     "conn C/frame N") and, when capturePath is not empty, the capture file
//     as artifactLocation (also listed in run.artifacts);
//   - run.properties counts all findings and those dropped past MaxFindings.
func (c *Collector) WriteSARIF(w io.Writer, tool string, capturePath string) error {
	var paths []string
	if capturePath != "" {
		paths = []string{capturePath}
	}
	return c.WriteSARIFInputs(w, tool, paths)
}

// WriteSARIFInputs is WriteSARIF for a decode of the capture files paths
// merged in timestamp order (iwarpdump -r A -r B): every file is listed
// in run.artifacts, and with several files the results have no
// artifactLocation, since their frame numbers count the packets of the
// merged files (capture.Merge), not of one file.
func (c *Collector) WriteSARIFInputs(w io.Writer, tool string, paths []string) error {
	codes := make([]string, 0, len(c.codes))
	for code := range c.codes {
		codes = append(codes, code)
	}
	// Sorted as the JSON shows them: encoding/json writes U+FFFD for each
	// octet that is not valid UTF-8 (codes from the decoder are ASCII; a
	// fuzzed one need not be).
	sort.Slice(codes, func(i, j int) bool {
		a, b := asJSONString(codes[i]), asJSONString(codes[j])
		if a != b {
			return a < b
		}
		return codes[i] < codes[j]
	})
	index := make(map[string]int, len(codes))
	rules := make([]sarifRule, 0, len(codes))
	last := ""
	for _, code := range codes {
		// Codes that read the same in JSON share one rule.
		if id := asJSONString(code); len(rules) > 0 && id == last {
			index[code] = len(rules) - 1
			continue
		} else {
			last = id
		}
		ci := c.codes[code]
		index[code] = len(rules)
		rules = append(rules, sarifRule{
			ID:                   code,
			ShortDescription:     sarifMessage{Text: nonEmpty(ci.msg, code)},
			DefaultConfiguration: sarifRuleConf{Level: sarifLevel(ci.sev)},
			Properties:           sarifRuleProps{Ref: ci.ref},
		})
	}
	run := sarifRun{
		Tool:       sarifTool{Driver: sarifDriver{Name: tool, Rules: rules}},
		Results:    make([]sarifResult, 0, len(c.kept)),
		Properties: &sarifRunProps{Findings: c.nFindings, DroppedFindings: c.dropped},
	}
	if c.damage != "" {
		run.Invocations = []sarifInvocation{{ToolExecutionNotifications: []sarifNotification{
			{Level: "error", Message: sarifMessage{Text: "the capture is damaged, and its decode stopped there: " + c.damage}}}}}
	}
	for _, p := range paths {
		if u := fileURI(p); u != "" {
			run.Artifacts = append(run.Artifacts, sarifArtifact{Location: sarifArtifactLocation{URI: u}})
		}
	}
	uri := ""
	if len(paths) == 1 && len(run.Artifacts) == 1 {
		uri = run.Artifacts[0].Location.URI
	}
	for i := range c.kept {
		k := &c.kept[i]
		frame := "frame " + utoa(k.frame)
		conn := "other"
		if k.conn >= 0 {
			conn = itoa(k.conn)
		}
		loc := sarifLocation{LogicalLocations: []sarifLogical{{Name: frame, FullyQualifiedName: "conn " + conn + "/" + frame}}}
		if uri != "" {
			zero := 0
			loc.PhysicalLocation = &sarifPhysical{ArtifactLocation: sarifArtifactLocation{URI: uri, Index: &zero}}
		}
		run.Results = append(run.Results, sarifResult{
			RuleID:     k.code,
			RuleIndex:  index[k.code],
			Level:      sarifLevel(k.sev),
			Message:    sarifMessage{Text: nonEmpty(k.msg, k.code)},
			Locations:  []sarifLocation{loc},
			Properties: sarifResultProps{Conn: k.conn, Frames: k.frames, Ref: k.ref},
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Version: "2.1.0", Schema: SARIFSchema, Runs: []sarifRun{run}})
}

// asJSONString returns s as encoding/json writes it: every octet that is
// not part of valid UTF-8 becomes U+FFFD.
func asJSONString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func nonEmpty(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

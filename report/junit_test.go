package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// xmlNode is a generic XML element for structural checks.
type xmlNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []xmlNode  `xml:",any"`
	Text    string     `xml:",chardata"`
}

func (n *xmlNode) attr(name string) (string, bool) {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

func (n *xmlNode) children(name string) []*xmlNode {
	var out []*xmlNode
	for i := range n.Nodes {
		if n.Nodes[i].XMLName.Local == name {
			out = append(out, &n.Nodes[i])
		}
	}
	return out
}

var (
	junitTimestamp = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$`)
	junitDecimal   = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
)

// checkJUnit parses a JUnit document and checks it against the structure
// the Ant JUnit task, Jenkins' junit-10.xsd and the windyroad JUnit.xsd have
// in common: attribute presence and types, element order, and counts that
// add up. It returns the parsed root.
func checkJUnit(t testing.TB, doc []byte) *xmlNode {
	t.Helper()
	if !bytes.HasPrefix(doc, []byte(xml.Header)) {
		t.Errorf("no XML declaration")
	}
	var root xmlNode
	if err := xml.Unmarshal(doc, &root); err != nil {
		t.Fatalf("not well-formed XML: %v\n%s", err, doc)
	}
	need := func(n *xmlNode, names ...string) {
		t.Helper()
		for _, a := range names {
			if _, ok := n.attr(a); !ok {
				t.Errorf("<%s> lacks required attribute %q", n.XMLName.Local, a)
			}
		}
	}
	num := func(n *xmlNode, a string) int {
		t.Helper()
		v, _ := n.attr(a)
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 {
			t.Errorf("<%s %s=%q>: not a count", n.XMLName.Local, a, v)
		}
		return i
	}
	dec := func(n *xmlNode, a string) {
		t.Helper()
		if v, _ := n.attr(a); !junitDecimal.MatchString(v) {
			t.Errorf("<%s %s=%q>: not a decimal", n.XMLName.Local, a, v)
		}
	}
	if root.XMLName.Local != "testsuites" {
		t.Fatalf("root is <%s>, want <testsuites>", root.XMLName.Local)
	}
	need(&root, "name", "tests", "failures", "errors", "time")
	dec(&root, "time")
	var tests, failures, errors int
	for i := range root.Nodes {
		s := &root.Nodes[i]
		if s.XMLName.Local != "testsuite" {
			t.Fatalf("<testsuites> child <%s>", s.XMLName.Local)
		}
		need(s, "name", "tests", "failures", "errors", "time", "timestamp", "hostname", "id", "package")
		dec(s, "time")
		if v, _ := s.attr("timestamp"); !junitTimestamp.MatchString(v) {
			t.Errorf("testsuite timestamp %q", v)
		}
		// Element order: properties, testcase*, system-out, system-err.
		var order []string
		for _, c := range s.Nodes {
			if len(order) == 0 || order[len(order)-1] != c.XMLName.Local {
				order = append(order, c.XMLName.Local)
			}
		}
		if o := strings.Join(order, ","); o != "properties,testcase,system-out,system-err" {
			t.Errorf("testsuite children %s", o)
		}
		for _, p := range s.children("properties")[0].Nodes {
			if p.XMLName.Local != "property" {
				t.Errorf("<properties> child <%s>", p.XMLName.Local)
			}
			need(&p, "name", "value")
		}
		cases := s.children("testcase")
		nf, ne := 0, 0
		for _, c := range cases {
			need(c, "name", "classname", "time")
			dec(c, "time")
			for _, f := range c.Nodes {
				switch f.XMLName.Local {
				case "failure":
					nf++
				case "error":
					ne++
				default:
					t.Errorf("testcase child <%s>", f.XMLName.Local)
				}
				need(&f, "message", "type")
			}
			if len(c.Nodes) > 1 {
				t.Errorf("testcase %v has %d children, at most one failure or error", c.Attrs, len(c.Nodes))
			}
		}
		if num(s, "tests") != len(cases) || num(s, "failures") != nf || num(s, "errors") != ne || num(s, "skipped") != 0 {
			t.Errorf("testsuite counts %v, have %d testcases, %d failures and %d errors", s.Attrs, len(cases), nf, ne)
		}
		tests += len(cases)
		failures += nf
		errors += ne
	}
	if num(&root, "tests") != tests || num(&root, "failures") != failures || num(&root, "errors") != errors {
		t.Errorf("testsuites counts %v, have %d tests, %d failures and %d errors", root.Attrs, tests, failures, errors)
	}
	return &root
}

func TestJUnitCaptures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		suites   int
		failing  map[string]string // testcase name -> failure type it must have
		contains []string
	}{
		{"basic_rping_v2_nocrc", 1, map[string]string{}, []string{`name="initiator" value="192.0.2.2:36789"`}},
		{"basic_ib_read_bw_4096_v2_nocrc", 2, map[string]string{}, nil},
		{"term_badwrite", 1, map[string]string{"rdmap": "error"}, []string{"frame 11: error rdmap.terminate"}},
		{"term_toolong", 1, map[string]string{"rdmap": "error"}, []string{"frame 16: error rdmap.terminate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := collect(t, tc.name)
			var b bytes.Buffer
			if err := c.WriteJUnit(&b, "iwarpdump"); err != nil {
				t.Fatal(err)
			}
			root := checkJUnit(t, b.Bytes())
			if len(root.Nodes) != tc.suites {
				t.Fatalf("%d testsuites, want one per connection: %d", len(root.Nodes), tc.suites)
			}
			for i, s := range root.Nodes {
				cs := c.sortedConns()[i]
				names := map[string]bool{}
				for _, tcase := range s.children("testcase") {
					name, _ := tcase.attr("name")
					names[name] = true
					fs := tcase.children("failure")
					// A family fails exactly when the connection has error or
					// warning findings of it.
					n := cs.fam.of(name)
					if bad := n[dissect.SeverityError]+n[dissect.SeverityWarning] > 0; bad != (len(fs) == 1) {
						t.Errorf("testcase %s: failures %d, error+warning findings %v", name, len(fs), n)
					}
					typ, fails := tc.failing[name]
					if fails && len(fs) != 1 {
						t.Errorf("testcase %s does not fail", name)
					}
					if fails && len(fs) == 1 {
						if ft, _ := fs[0].attr("type"); ft != typ {
							t.Errorf("testcase %s: failure type %q, want %q", name, ft, typ)
						}
					}
				}
				for _, f := range checkFamilies {
					if !names[f.name] {
						t.Errorf("no testcase for family %s", f.name)
					}
				}
			}
			for _, s := range tc.contains {
				if !strings.Contains(b.String(), s) {
					t.Errorf("no %q in\n%s", s, b.String())
				}
			}
		})
	}
}

// TestJUnitHostileText checks that text from a capture that looks like
// markup, ends CDATA or holds control characters and invalid UTF-8 still
// gives well-formed XML and survives the round trip.
func TestJUnitHostileText(t *testing.T) {
	c := NewCollector()
	c.Add(fpduRec(0, 1, 0, flows.DirI2R, rdmap.OpSend, 1))
	msg := `<failure type="x">]]><![CDATA[ & "quotes" 'apos'` + "\x00\x01\x1b\xff\ufffe"
	c.Add(findingRec(0, 2, dissect.SeverityWarning, "mpa.evil]]>", msg))
	c.Add(findingRec(0, 3, dissect.SeverityNote, "cap.note", "note ]]> text"))
	var b bytes.Buffer
	if err := c.WriteJUnit(&b, `name "with" <markup> & ]]>`); err != nil {
		t.Fatal(err)
	}
	root := checkJUnit(t, b.Bytes())
	if v, _ := root.attr("name"); v != `name "with" <markup> & ]]>` {
		t.Errorf("name round trip: %q", v)
	}
	s := &root.Nodes[0]
	var fail *xmlNode
	for _, tcase := range s.children("testcase") {
		if n, _ := tcase.attr("name"); n == "mpa" {
			fail = tcase.children("failure")[0]
		}
	}
	if fail == nil || !strings.Contains(fail.Text, `<failure type="x">]]><![CDATA[ & "quotes"`) {
		t.Fatalf("failure text lost: %+v", fail)
	}
	if out := s.children("system-out")[0].Text; !strings.Contains(out, "note ]]> text") {
		t.Errorf("system-out %q", out)
	}
}

// TestJUnitTCPHealth: a connection's suite carries the TCP health of its
// conn record under the JSON Lines keys, and a CM exchange's or SCTP
// association's carries none. The retransmissions of the synth capture are
// also those tshark flags (tcp.analysis.retransmission).
func TestJUnitTCPHealth(t *testing.T) {
	keys := []string{"retransmissions", "zero_windows", "stalls", "stalled_ns", "cut_segments"}
	for _, file := range []string{"synth/retransmit-conflict.pcap", "synth/snaplen.pcap",
		"siw/basic_ib_read_bw_4096_v2_nocrc.pcap", "synthext/roce-cm-v4.pcap", "synthext/sctp-ddp.pcap"} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join("..", "testdata", file)
			recs := testutil.Decode(t, path, flows.Options{})
			c := NewCollector()
			want := map[int][]string{} // conn id -> values of keys
			for _, r := range recs {
				c.Add(r)
				if r.Type == flows.RecConn && r.Summary != nil {
					h := r.Summary.TCP
					want[r.Conn] = []string{strconv.Itoa(h.Retransmissions), strconv.Itoa(h.ZeroWindows),
						strconv.Itoa(h.Stalls), strconv.FormatInt(int64(h.Stalled), 10), strconv.Itoa(h.Cut)}
				}
			}
			var b bytes.Buffer
			if err := c.WriteJUnit(&b, "iwarpdump"); err != nil {
				t.Fatal(err)
			}
			root := checkJUnit(t, b.Bytes())
			retrans := 0
			for _, s := range root.Nodes {
				idAttr, _ := s.attr("id")
				id, _ := strconv.Atoi(idAttr)
				props := map[string]string{}
				for _, p := range s.children("properties")[0].Nodes {
					name, _ := p.attr("name")
					props[name], _ = p.attr("value")
				}
				w, ok := want[id]
				for i, k := range keys {
					got, has := props[k]
					switch {
					case !ok && has:
						t.Errorf("conn %d (no TCP conn record): property %s=%q", id, k, got)
					case ok && got != w[i]:
						t.Errorf("conn %d: property %s=%q, the conn record has %s", id, k, got, w[i])
					}
				}
				if ok {
					n, _ := strconv.Atoi(props["retransmissions"])
					retrans += n
				}
			}
			if len(want) == 0 && strings.Contains(b.String(), `name="retransmissions"`) {
				t.Errorf("TCP properties without a TCP connection")
			}
			if file == "synth/retransmit-conflict.pcap" {
				flagged := testutil.TsharkColumn(t, []string{"-n", "-r", path, "-Y", "tcp.analysis.retransmission",
					"-T", "fields", "-e", "frame.number", "-e", "tcp.stream"})
				if retrans != len(flagged) || retrans == 0 {
					t.Errorf("retransmissions %d, tshark flags %d frames (%v)", retrans, len(flagged), flagged)
				}
			}
		})
	}
}

// TestReportsDamaged: a capture that ended in damage says so in each
// report: JUnit's one error (a testsuite "capture" whose testcase "read"
// has it; errors="1" on the document), SARIF's invocation that did not
// succeed, with the message as an error notification (§3.20.14,
// §3.20.21, §3.58), HTML's summary. Without damage there is none of it.
func TestReportsDamaged(t *testing.T) {
	const msg = `capture: t.pcap: frame 10 at offset 909: truncated record <&"> (decoded 9 packets before the damage)`
	for _, damaged := range []bool{false, true} {
		c, _ := collect(t, "term_badwrite")
		if damaged {
			c.InputDamaged(msg)
		}
		var j, s, h bytes.Buffer
		if err := c.WriteJUnit(&j, "iwarpdump t.pcap"); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteSARIF(&s, "iwarpdump", "t.pcap"); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteHTML(&h, "iwarpdump: t.pcap"); err != nil {
			t.Fatal(err)
		}
		root := checkJUnit(t, j.Bytes())
		checkSARIF(t, s.Bytes(), "t.pcap")
		var errs []string
		for _, suite := range root.Nodes {
			for _, tc := range suite.children("testcase") {
				for _, e := range tc.children("error") {
					name, _ := suite.attr("name")
					errs = append(errs, name+"/"+strings.TrimSpace(e.Text))
				}
			}
		}
		var sd struct {
			Runs []struct {
				Invocations []struct {
					ExecutionSuccessful        *bool `json:"executionSuccessful"`
					ToolExecutionNotifications []struct {
						Level   string `json:"level"`
						Message struct {
							Text string `json:"text"`
						} `json:"message"`
					} `json:"toolExecutionNotifications"`
				} `json:"invocations"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(s.Bytes(), &sd); err != nil {
			t.Fatal(err)
		}
		inv := sd.Runs[0].Invocations
		html := h.String()
		if !damaged {
			if len(errs) != 0 || len(inv) != 0 || strings.Contains(html, "damaged") {
				t.Errorf("undamaged: JUnit errors %v, SARIF invocations %+v, HTML says damaged %v", errs, inv, strings.Contains(html, "damaged"))
			}
			continue
		}
		if len(errs) != 1 || errs[0] != "capture/"+msg {
			t.Errorf("JUnit errors %q, want the one of suite capture: %q", errs, msg)
		}
		if len(inv) != 1 || inv[0].ExecutionSuccessful == nil || *inv[0].ExecutionSuccessful || len(inv[0].ToolExecutionNotifications) != 1 ||
			inv[0].ToolExecutionNotifications[0].Level != "error" || !strings.HasSuffix(inv[0].ToolExecutionNotifications[0].Message.Text, msg) {
			t.Errorf("SARIF invocations %+v", inv)
		}
		if !strings.Contains(html, "truncated record &lt;&amp;&#34;&gt;") {
			t.Errorf("the HTML summary does not say it, escaped")
		}
	}
}

package report

import (
	"encoding/xml"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/flows"
)

// checkFamilies are the check families every iWARP connection's JUnit
// suite lists, passing or not (a CM exchange's lists "cm", an SCTP
// association's "sctp", "ddp" and "rdmap"); other families (the prefix of a finding code
// before its first dot, e.g. "cap" or "interop") get a testcase only on the
// connections that have findings of theirs.
var checkFamilies = []struct{ name, doc string }{
	{"tcp", "TCP stream: gaps, retransmissions, out-of-order limits"},
	{"mpa", "MPA (RFC 5044, RFC 6581): Request/Reply, framing, markers, CRC"},
	{"ddp", "DDP (RFC 5041): segment headers, message gathering"},
	{"rdmap", "RDMAP (RFC 5040, RFC 7306): opcodes, Read, Terminate"},
}

// JUnit XML, following the structure common to the Ant JUnit task, the
// Jenkins junit-10.xsd and the windyroad JUnit.xsd: testsuites > testsuite
// (properties, testcase*, system-out, system-err) > testcase (failure?).
// The testsuites element (attributes name, tests, failures, errors, time)
// is written by WriteJUnit token by token around its suites.
type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Hostname   string          `xml:"hostname,attr"`
	ID         int             `xml:"id,attr"`
	Package    string          `xml:"package,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  junitText       `xml:"system-out"`
	SystemErr  junitText       `xml:"system-err"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure"`
	Error     *junitFailure `xml:"error"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// seconds formats a duration as JUnit's decimal seconds (and the -z conn
// table its stalled time, six decimals as the conn line).
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 6, 64)
}

// junitTime formats a timestamp as JUnit wants it: ISO 8601 in UTC without
// zone or fraction (the windyroad schema's pattern).
func junitTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05")
}

// WriteJUnit writes the findings as JUnit XML for CI test reporting. The
// mapping:
//
//   - the document (testsuites) is named name;
//   - one testsuite per connection, in id order, named "conn ID INITIATOR >
//     RESPONDER", with package name, id the connection id, timestamp the
//     connection's first record, time its duration in the capture, and the
//     connection table's values as properties (with a conn record over
//     TCP, its TCP health under its JSON Lines keys: retransmissions,
//     zero_windows, stalls, stalled_ns, cut_segments);
//   - one testcase per check family (the code prefix before the first dot):
//     always tcp, mpa, ddp and rdmap, plus any other family with findings on
//     the connection; classname is "NAME.connID";
//   - a testcase fails (one failure element) when the connection has error
//     or warning findings of its family: type is the worst severity
//     ("error" or "warning"), message counts them and names the first, and
//     the text lists each kept finding "frame N: severity code: message
//     [ref]";
//   - note findings never fail a testcase; they are listed in the suite's
//     system-out;
//   - a damaged capture (InputDamaged) is the one JUnit error: a first
//     testsuite "capture" whose testcase "read" (classname "capture") has
//     an error element of type "damaged capture" saying where the decode
//     stopped; otherwise errors are 0.
func (c *Collector) WriteJUnit(w io.Writer, name string) error {
	all := c.total()
	byConn := make(map[int][]*keptFinding)
	for i := range c.kept {
		k := &c.kept[i]
		byConn[k.conn] = append(byConn[k.conn], k)
	}
	// The suites are written one by one as they are made (the document
	// of 65,536 connections held 100 MB of XML's worth): the counts of
	// the document's attributes come first, from a pass of their own.
	tests, failures, errors := 0, 0, 0
	c.eachConn(func(cs *connStats) {
		t, f := junitCounts(cs)
		tests, failures = tests+t, failures+f
	})
	if c.damage != "" {
		tests, errors = tests+1, 1
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	// The attributes of junitSuites, in its order.
	start := xml.StartElement{Name: xml.Name{Local: "testsuites"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "name"}, Value: name}, {Name: xml.Name{Local: "tests"}, Value: itoa(tests)},
		{Name: xml.Name{Local: "failures"}, Value: itoa(failures)}, {Name: xml.Name{Local: "errors"}, Value: itoa(errors)},
		{Name: xml.Name{Local: "time"}, Value: seconds(all.duration())}}}
	if err := enc.EncodeToken(start); err != nil {
		return err
	}
	var err error
	suite := xml.StartElement{Name: xml.Name{Local: "testsuite"}}
	if c.damage != "" {
		s := junitSuite{Name: "capture", Tests: 1, Errors: 1, Time: seconds(0), Timestamp: junitTime(all.first()),
			Hostname: "localhost", ID: -1, Package: name,
			Cases: []junitCase{{Name: "read", ClassName: "capture", Time: seconds(0),
				Error: &junitFailure{Message: "the capture is damaged: the decode stopped there", Type: "damaged capture", Text: xmlSafe(c.damage)}}}}
		err = enc.EncodeElement(&s, suite)
	}
	c.eachConn(func(cs *connStats) {
		if err == nil {
			s := c.junitSuite(cs, name, &all, byConn[cs.id])
			err = enc.EncodeElement(&s, suite)
		}
	})
	if err != nil {
		return err
	}
	if err := enc.EncodeToken(start.End()); err != nil {
		return err
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n")
	return err
}

// junitFamilies returns the check families of cs's testcases: those of
// checkFamilies, then the others it has findings of, sorted.
func junitFamilies(cs *connStats) []string {
	fams := make([]string, 0, len(checkFamilies)+len(cs.fam))
	switch cs.ext {
	case flows.TransportIBCM:
		fams = append(fams, "cm")
	case flows.TransportSCTP:
		fams = append(fams, "sctp", "ddp", "rdmap")
	default:
		for _, f := range checkFamilies {
			fams = append(fams, f.name)
		}
	}
	base := len(fams)
	var extra []string
	for _, f := range cs.fam {
		if !slices.Contains(fams[:base], f.fam) {
			extra = append(extra, f.fam)
		}
	}
	sort.Strings(extra)
	return append(fams, extra...)
}

// junitCounts returns the testcases of cs's suite and how many fail.
func junitCounts(cs *connStats) (tests, failures int) {
	for _, fam := range junitFamilies(cs) {
		tests++
		if n := cs.fam.of(fam); n[dissect.SeverityError]+n[dissect.SeverityWarning] > 0 {
			failures++
		}
	}
	return tests, failures
}

// junitSuite returns the testsuite of cs, whose kept findings are kept.
func (c *Collector) junitSuite(cs *connStats, name string, all *span, kept []*keptFinding) junitSuite {
	row := cs.row()
	s := junitSuite{
		Name:     "conn " + row.Label + " " + row.Initiator + " > " + row.Responder,
		Time:     seconds(row.Duration),
		Hostname: "localhost",
		ID:       cs.id,
		Package:  name,
	}
	ts := cs.first()
	if !cs.haveTS {
		ts = all.first()
	}
	s.Timestamp = junitTime(ts)
	s.Properties = []junitProperty{
		{"initiator", row.Initiator}, {"responder", row.Responder}, {"state", row.State},
		{"mpa.rev", row.Rev}, {"mpa.crc", row.CRC}, {"mpa.markers_i2r_r2i", row.Markers},
		{"mpa.ird_ord", row.IRDORD}, {"fpdus", itoa(row.FPDUs)}, {"messages", itoa(row.Messages)},
		{"octets", utoa(row.Octets)}, {"crc_errors", itoa(row.CRCErrors)}, {"findings", itoa(row.Findings)},
	}
	if row.HasTCP {
		// The TCP health of the conn record, under its JSON Lines keys:
		// a stalled or retransmitting connection can pass every check
		// family and still be why a CI job ran slow.
		h := &row.TCP
		s.Properties = append(s.Properties, junitProperty{"retransmissions", itoa(h.Retransmissions)},
			junitProperty{"zero_windows", itoa(h.ZeroWindows)}, junitProperty{"stalls", itoa(h.Stalls)},
			junitProperty{"stalled_ns", strconv.FormatInt(int64(h.Stalled), 10)}, junitProperty{"cut_segments", itoa(h.Cut)})
	}
	var notes strings.Builder
	for _, k := range kept {
		if k.sev < dissect.SeverityWarning {
			notes.WriteString(findingLine(k))
		}
	}
	class := name + ".conn" + row.Label
	for _, fam := range junitFamilies(cs) {
		tc := junitCase{Name: fam, ClassName: class, Time: "0"}
		n := cs.fam.of(fam)
		bad := n[dissect.SeverityError] + n[dissect.SeverityWarning]
		if bad > 0 {
			typ := dissect.SeverityWarning.String()
			if n[dissect.SeverityError] > 0 {
				typ = dissect.SeverityError.String()
			}
			var text strings.Builder
			listed, first := 0, ""
			for _, k := range kept {
				if k.sev >= dissect.SeverityWarning && family(k.code) == fam {
					if first == "" {
						first = k.code + " in frame " + utoa(k.frame)
					}
					text.WriteString(findingLine(k))
					listed++
				}
			}
			if listed < bad {
				text.WriteString(itoa(bad-listed) + " more not listed (only the first " + itoa(c.maxFindings) + " findings are kept)\n")
			}
			msg := itoa(n[dissect.SeverityError]) + " error, " + itoa(n[dissect.SeverityWarning]) + " warning findings"
			if first != "" {
				msg += "; first: " + first
			}
			tc.Failure = &junitFailure{Message: xmlSafe(msg), Type: typ, Text: text.String()}
			s.Failures++
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Tests = len(s.Cases)
	s.SystemOut = junitText{notes.String()}
	return s
}

// findingLine formats a kept finding for the JUnit texts.
func findingLine(k *keptFinding) string {
	s := "frame " + utoa(k.frame) + ": " + k.sev.String() + " " + k.code + ": " + k.msg
	if k.ref != "" {
		s += " [" + k.ref + "]"
	}
	return xmlSafe(s) + "\n"
}

// xmlSafe drops the characters XML 1.0 cannot carry (control characters
// other than tab, newline and carriage return; invalid UTF-8), which
// encoding/xml would otherwise replace or reject inconsistently.
func xmlSafe(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == 0xFFFE, r == 0xFFFF:
			return '\uFFFD'
		}
		return r
	}, s)
}

// junitText is element content written as CDATA, so that line breaks stay
// line breaks.
type junitText struct {
	Text string `xml:",cdata"`
}

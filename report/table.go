package report

import (
	"bufio"
	"bytes"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/flows"
)

// textTable is an aligned plain-text table in the style of tshark -z: a rule,
// the title, a rule, the column headers, the rows, a closing rule, then any
// notes.
type textTable struct {
	title string
	cols  []string
	right []bool // right-align column i (numbers)
	rows  [][]string
	// each, when set, gives the rows after rows, by calling row once per
	// row; write calls it twice (the column widths, then the lines), so
	// that a table of a row per connection is never held whole: with
	// MaxConns connections that was some 100 MB of cells.
	each  func(row func(cells ...string))
	notes []string
}

func (t *textTable) add(cells ...string) { t.rows = append(t.rows, cells) }

// forRows calls f with the cells of every row, in order.
func (t *textTable) forRows(f func(cells []string)) {
	for _, r := range t.rows {
		f(r)
	}
	if t.each != nil {
		t.each(func(cells ...string) { f(cells) })
	}
}

// write renders the table; it sanitises control characters so that text from
// a capture cannot break the layout.
func (t *textTable) write(w io.Writer) error {
	width := make([]int, len(t.cols))
	for i, c := range t.cols {
		width[i] = utf8.RuneCountInString(c)
	}
	t.forRows(func(r []string) {
		for i := range min(len(r), len(width)) {
			width[i] = max(width[i], utf8.RuneCountInString(clean(r[i])))
		}
	})
	total := 0
	for _, n := range width {
		total += n + 2
	}
	total = max(min(total-2, maxRule), utf8.RuneCountInString(t.title), 40)
	b := bufio.NewWriter(w)
	rule := strings.Repeat("=", total) + "\n"
	b.WriteString(rule)
	b.WriteString(clean(t.title))
	b.WriteString("\n")
	b.WriteString(rule)
	var l []byte
	line := func(cells []string) {
		l = l[:0]
		for i, c := range cells {
			if i >= len(width) {
				break
			}
			if i > 0 {
				l = append(l, "  "...)
			}
			c = clean(c)
			pad := width[i] - utf8.RuneCountInString(c)
			if t.right[i] {
				l = appendSpaces(l, pad)
				l = append(l, c...)
			} else {
				l = append(l, c...)
				l = appendSpaces(l, pad)
			}
		}
		b.Write(bytes.TrimRight(l, " "))
		b.WriteString("\n")
	}
	line(t.cols)
	t.forRows(line)
	b.WriteString(rule)
	for _, n := range t.notes {
		b.WriteString(clean(n))
		b.WriteString("\n")
	}
	return b.Flush()
}

func appendSpaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}

// maxRule caps the width of the rules around a table.
const maxRule = 100

// clean replaces control characters (tabs and newlines included) by spaces
// and invalid UTF-8 by U+FFFD.
func clean(s string) string {
	ok := true
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

func itoa(n int) string    { return strconv.Itoa(n) }
func utoa(n uint64) string { return strconv.FormatUint(n, 10) }
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// connRow is one row of the connection table (text, JUnit properties, HTML).
type connRow struct {
	ID                   int
	Label                string // the id, or "other" for connections beyond MaxConns
	Initiator, Responder string
	State                string
	Rev                  string
	CRC                  string
	Markers              string // i2r/r2i
	IRDORD               string
	FPDUs, Messages      int
	Octets               uint64
	CRCErrors, Findings  int
	Worst                string // highest finding severity, "" when none
	Duration             time.Duration
	First                time.Time
	// TCP is the health of the connection's TCP, from its conn record:
	// HasTCP is false without one, and for a connection not over TCP.
	TCP    flows.TCPHealth
	HasTCP bool
}

// TCPCells are the row's TCP columns (-z conn, HTML): retransmissions,
// zero windows, stalls, their time in seconds and segments the snap length
// cut; "-" each without a conn record, and for a connection not over TCP.
func (r connRow) TCPCells() [5]string {
	if !r.HasTCP {
		return [5]string{"-", "-", "-", "-", "-"}
	}
	h := &r.TCP
	return [5]string{itoa(h.Retransmissions), itoa(h.ZeroWindows), itoa(h.Stalls), seconds(h.Stalled), itoa(h.Cut)}
}

// label names the connection in tables: its id, or "other".
func (cs *connStats) label() string {
	if cs.other {
		return "other"
	}
	return itoa(cs.id)
}

func (cs *connStats) row() connRow {
	r := connRow{
		ID: cs.id, State: "-", Rev: "-", CRC: "-", Markers: "-", IRDORD: "-",
		FPDUs: cs.fpdus, Messages: cs.messages, Octets: cs.octets,
		CRCErrors: cs.crcErrors, Findings: cs.findings, First: cs.first(),
	}
	if cs.haveTS {
		r.Duration = cs.duration()
	}
	r.Label = itoa(cs.id)
	switch {
	case cs.other:
		r.Label, r.Initiator, r.Responder = "other", "-", "-"
	case cs.native:
		// No IP over native InfiniBand: the LRH's LIDs name the ends.
		r.Initiator, r.Responder = "LID "+itoa(int(cs.lids[0])), "LID "+itoa(int(cs.lids[1]))
	case cs.initKnown && cs.ext == flows.TransportIBCM:
		r.Initiator, r.Responder = cs.initiator.Addr().String(), cs.responder.Addr().String()
	case cs.initKnown:
		r.Initiator, r.Responder = cs.initiator.String(), cs.responder.String()
	case cs.a.IsValid():
		r.Initiator, r.Responder = cs.a.String()+" (?)", cs.b.String()+" (?)"
	default:
		r.Initiator, r.Responder = "-", "-"
	}
	for s := dissect.SeverityError; s >= dissect.SeverityNote; s-- {
		if cs.sev[s] > 0 {
			r.Worst = s.String()
			break
		}
	}
	if s := &cs.sum; cs.hasSum {
		r.State = s.state
		if cs.ext != "" {
			// Not iWARP: the transport says what the row is.
			r.State = cs.ext + " " + s.state
		} else {
			r.TCP, r.HasTCP = s.tcp, true
		}
		if s.haveReq || s.haveRep {
			r.Rev = strconv.Itoa(int(s.rev))
		}
		if s.haveReq || s.haveRep || s.fpdus {
			// Without the MPA exchange, as the FPDUs showed them; with
			// the initiator unknown, between the endpoints in the order
			// the row lists them (setSummary).
			r.CRC = onOff(s.crc)
			if s.initKnown || cs.a.IsValid() {
				r.Markers = onOff(s.mI2R) + "/" + onOff(s.mR2I)
			}
		}
		if s.enhanced {
			r.IRDORD = strconv.Itoa(int(s.ird)) + "/" + strconv.Itoa(int(s.ord))
		}
		return r
	}
	if cs.req || cs.rep {
		r.Rev = strconv.Itoa(int(cs.rev))
		r.CRC = onOff(cs.crc)
		r.Markers = onOff(cs.mI2R) + "/" + onOff(cs.mR2I)
		if cs.rejected {
			r.State = "rejected"
		}
	}
	if cs.enhanced {
		r.IRDORD = strconv.Itoa(int(cs.ird)) + "/" + strconv.Itoa(int(cs.ord))
	}
	return r
}

// connSeq yields the connection table's rows (an iter.Seq), made one at a
// time: the HTML page's 65,536 rows held together took 17 MB.
func (c *Collector) connSeq(yield func(connRow) bool) {
	more := true
	c.eachConn(func(cs *connStats) {
		if more {
			more = yield(cs.row())
		}
	})
}

func (c *Collector) untrackedNote() []string {
	if c.untracked == 0 {
		return nil
	}
	return []string{utoa(uint64(c.untracked)) + " records of connections beyond the first " + itoa(c.maxConns) + " are counted in the totals only"}
}

// WriteConn writes the -z conn table: one row per connection (by id) with
// its endpoints, state, the negotiated MPA revision, CRC, markers per
// direction (RFC 5044 §7.1) and the Reply's IRD/ORD (RFC 6581 §9), and the counts of
// FPDUs, RDMA messages, octets on the wire, CRC errors (RFC 5044 §4.4) and
// findings. The negotiated values come from the connection's conn record
// (or, without one, from its MPA Request/Reply records); the counts are of
// the records added. "-" means not known; "(?)" marks endpoints whose roles
// are unknown (neither SYN nor MPA Request captured). A CM exchange over
// RoCEv2 or InfiniBand and an SCTP association carrying DDP (RFC 5043) get
// a row too, their state led by the transport ("ib_cm rejected"): a CM
// exchange's ends are its IP addresses (or LIDs), its IRD/ORD the REP's
// responder resources and initiator depth, its FPDUs and octets the data
// packets sent to its QPs; an association's FPDUs are its DDP segments and
// its octets their payload.
//
// The last columns say how the connection's TCP fared, from its conn
// record (flows.TCPHealth; "-" without one, and for a connection not over
// TCP): Retrans the segments sent again or out of order, ZeroWin those
// advertising a zero window, Stalls the tcp.stall pauses and Stalled s
// their time in seconds, Cut the segments the capture's snap length cut
// (cap.snaplen).
func (c *Collector) WriteConn(w io.Writer) error {
	t := &textTable{
		title: "iWARP connections (-z conn)",
		cols: []string{"ID", "Initiator", "Responder", "State", "Rev", "CRC", "Markers i2r/r2i", "Reply IRD/ORD", "FPDUs", "Messages", "Octets", "CRC errors", "Findings",
			"Retrans", "ZeroWin", "Stalls", "Stalled s", "Cut"},
		right: []bool{true, false, false, false, true, false, false, false, true, true, true, true, true,
			true, true, true, true, true},
		notes: c.untrackedNote(),
	}
	t.each = func(row func(...string)) {
		c.eachConn(func(cs *connStats) {
			r := cs.row()
			tcp := r.TCPCells()
			row(r.Label, r.Initiator, r.Responder, r.State, r.Rev, r.CRC, r.Markers, r.IRDORD,
				itoa(r.FPDUs), itoa(r.Messages), utoa(r.Octets), itoa(r.CRCErrors), itoa(r.Findings),
				tcp[0], tcp[1], tcp[2], tcp[3], tcp[4])
		})
	}
	return t.write(w)
}

// dirOrder is the order of directions in tables: i2r, r2i, unknown.
var dirOrder = [3]flows.Dir{flows.DirI2R, flows.DirR2I, flows.DirUnknown}

func dirName(d flows.Dir) string {
	if s := d.String(); s != "" {
		return s
	}
	return "?"
}

// opRow is one row of the opcode histogram.
type opRow struct {
	Conn   string
	Dir    string
	Opcode string // "0x3", or "-" for FPDUs whose segment was not decoded
	Name   string
	Count  uint64
	Octets uint64
}

func opRows(conn string, t *opTally, rows []opRow) []opRow {
	ops := t.dense()
	for _, d := range dirOrder {
		for op := range nOps {
			v := ops[d][op]
			if v.n == 0 {
				continue
			}
			code := "-"
			if op != opUndecoded {
				code = "0x" + strconv.FormatUint(uint64(op), 16)
			}
			rows = append(rows, opRow{Conn: conn, Dir: dirName(d), Opcode: code, Name: opName(op), Count: v.n, Octets: v.octets})
		}
	}
	return rows
}

// opTotals returns the histogram summed over connections and directions.
func (c *Collector) opTotals() []opRow {
	var rows []opRow
	for op := range nOps {
		var v opCount
		for d := range c.ops {
			v.n += c.ops[d][op].n
			v.octets += c.ops[d][op].octets
		}
		if v.n == 0 {
			continue
		}
		code := "-"
		if op != opUndecoded {
			code = "0x" + strconv.FormatUint(uint64(op), 16)
		}
		rows = append(rows, opRow{Conn: "all", Dir: "all", Opcode: code, Name: opName(op), Count: v.n, Octets: v.octets})
	}
	return rows
}

// WriteOps writes the -z ops table: the RDMAP opcode histogram (RFC 5040
// §4.1 Figure 4, RFC 7306) per connection and direction, counting DDP
// segments (one per FPDU, as tshark counts iwarp_rdma.opcode) and their
// payload octets (after the DDP/RDMAP headers), then the totals over all
// connections and directions (Conn and Dir "all"). FPDUs whose DDP segment
// could not be decoded are counted as "(not decoded)".
func (c *Collector) WriteOps(w io.Writer) error {
	t := &textTable{
		title: "RDMAP opcodes per direction (-z ops)",
		cols:  []string{"Conn", "Dir", "Opcode", "Name", "Segments", "Payload octets"},
		right: []bool{true, false, false, false, true, true},
		notes: c.untrackedNote(),
	}
	t.each = func(row func(...string)) {
		var rows []opRow
		c.eachConn(func(cs *connStats) {
			rows = opRows(cs.label(), &cs.ops, rows[:0])
			for _, r := range rows {
				row(r.Conn, r.Dir, r.Opcode, r.Name, utoa(r.Count), utoa(r.Octets))
			}
		})
		for _, r := range c.opTotals() {
			row(r.Conn, r.Dir, r.Opcode, r.Name, utoa(r.Count), utoa(r.Octets))
		}
	}
	return t.write(w)
}

// findRow is one row of the findings table.
type findRow struct {
	Severity string
	Code     string
	Count    int
	First    uint64
	Ref      string
	Msg      string
}

// findRows returns the findings table, most severe first, then by code;
// the rows of one code (the causes of rdmap.terminate, findCause) by
// first frame, then by message and cause, for a stable order.
func (c *Collector) findRows() []findRow {
	keys := make([]findKey, 0, len(c.finds))
	for k := range c.finds {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ki, kj := &keys[i], &keys[j]
		if ki.sev != kj.sev {
			return ki.sev > kj.sev
		}
		if ki.code != kj.code {
			return ki.code < kj.code
		}
		ai, aj := c.finds[*ki], c.finds[*kj]
		if ai.first != aj.first {
			return ai.first < aj.first
		}
		if ai.msg != aj.msg {
			return ai.msg < aj.msg
		}
		if ki.cause.msg != kj.cause.msg {
			return ki.cause.msg < kj.cause.msg
		}
		if ki.cause.isTerm != kj.cause.isTerm {
			return kj.cause.isTerm
		}
		return bytes.Compare(ki.cause.term[:], kj.cause.term[:]) < 0
	})
	rows := make([]findRow, len(keys))
	for i, k := range keys {
		a := c.finds[k]
		rows[i] = findRow{Severity: k.sev.String(), Code: k.code, Count: a.n, First: a.first, Ref: a.ref, Msg: a.msg}
	}
	return rows
}

// WriteFindings writes the -z findings table: the number of findings per
// severity and code, most severe first, with the first frame, the reference
// (RFC section or rule) and the first message, then a count per severity.
// Terminates (rdmap.terminate) get a row per cause, their Layer, EType and
// Code (RFC 5040 §4.8), in order of first frame: the message says the
// cause.
func (c *Collector) WriteFindings(w io.Writer) error {
	t := &textTable{
		title: "Findings (-z findings)",
		cols:  []string{"Severity", "Code", "Count", "First frame", "Ref", "Message"},
		right: []bool{false, false, true, true, false, false},
	}
	for _, r := range c.findRows() {
		t.add(r.Severity, r.Code, itoa(r.Count), utoa(r.First), r.Ref, r.Msg)
	}
	t.notes = append(t.notes, "total "+itoa(c.nFindings)+": "+
		itoa(c.sev[dissect.SeverityError])+" error, "+
		itoa(c.sev[dissect.SeverityWarning])+" warning, "+
		itoa(c.sev[dissect.SeverityNote])+" note")
	return t.write(w)
}

// latRow is one row of the latency table.
type latRow struct {
	Conn                          string
	Count                         uint64
	Min, P50, P90, P99, Max, Mean time.Duration
}

func mkLatRow(conn string, h *latHist) latRow {
	return latRow{Conn: conn, Count: h.n, Min: h.min, P50: h.quantile(0.50), P90: h.quantile(0.90),
		P99: h.quantile(0.99), Max: h.max, Mean: h.mean()}
}

func (c *Collector) latRows() []latRow {
	var rows []latRow
	c.eachConn(func(cs *connStats) {
		if cs.lat != nil && cs.lat.n > 0 {
			rows = append(rows, mkLatRow(cs.label(), cs.lat))
		}
	})
	return append(rows, mkLatRow("all", &c.lat))
}

// micros formats a duration in microseconds with three decimals.
func micros(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/1e3, 'f', 3, 64)
}

// WriteLatency writes the -z latency table: RDMA Read latency (from a Read
// Request, RFC 5040 §4.4, to the last segment of the Read Response that
// answers it) per connection and overall, in microseconds: count, minimum,
// nearest-rank percentiles p50, p90 and p99, maximum and mean. Minimum, maximum
// and mean are exact; the percentiles come from a log-bucket histogram within
// LatencyRelErr (1%) of the exact value.
func (c *Collector) WriteLatency(w io.Writer) error {
	t := &textTable{
		title: "RDMA Read latency in microseconds (-z latency)",
		cols:  []string{"Conn", "Reads", "Min", "P50", "P90", "P99", "Max", "Mean"},
		right: []bool{true, true, true, true, true, true, true, true},
		notes: append([]string{"percentiles within 1% (log-bucket histogram); min, max and mean exact"}, c.untrackedNote()...),
	}
	if c.rtrReads > 0 {
		t.notes = append(t.notes, itoa(c.rtrReads)+" zero-length Reads sent as the RTR of a peer-to-peer setup (RFC 6581) are not counted")
	}
	for _, r := range c.latRows() {
		if r.Count == 0 {
			t.add(r.Conn, "0", "-", "-", "-", "-", "-", "-")
			continue
		}
		t.add(r.Conn, utoa(r.Count), micros(r.Min), micros(r.P50), micros(r.P90), micros(r.P99), micros(r.Max), micros(r.Mean))
	}
	return t.write(w)
}

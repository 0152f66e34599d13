package report

import (
	"net/netip"
	"strings"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/varpack"
)

// MaxFindings is how many individual findings a Collector keeps (for the
// JUnit failure texts, the SARIF results and the HTML findings list). Later
// findings are still counted per severity, code and connection, and reported
// as dropped.
const MaxFindings = 10000

// MaxConns is how many connections a Collector tabulates. Records of later
// connections count in the totals (opcodes, latency, findings, throughput)
// but get no row of their own; the tables say how many records that was.
const MaxConns = 65536

// nOps counts the 16 RDMAP opcode values (RFC 5040 §4.1 Figure 4, RFC 7306)
// and one more slot for FPDUs whose DDP segment could not be decoded.
const (
	nOps        = 17
	opUndecoded = 16
)

// opCount is one cell of the opcode histogram.
type opCount struct {
	n      uint64 // DDP segments
	octets uint64 // payload octets (RDMAP header excluded)
}

// sevCount counts findings by severity (index = dissect.Severity).
type sevCount [4]int

func (s *sevCount) add(sev dissect.Severity) {
	if int(sev) < len(s) {
		s[sev]++
	} else {
		s[0]++
	}
}

// connStats aggregates one connection.
type connStats struct {
	id         int
	other      bool           // the connections beyond MaxConns, together
	settled    bool           // a and initiator known: conn has nothing left to note
	a, b       netip.AddrPort // source and destination of the first record
	initiator  netip.AddrPort
	responder  netip.AddrPort
	initKnown  bool
	sum        connSum // of the conn record, when it came (hasSum)
	hasSum     bool
	req, rep   bool // MPA Request / Reply seen (fallback without a summary)
	rev        uint8
	crc        bool
	mI2R, mR2I bool
	enhanced   bool
	ird, ord   uint16
	rejected   bool
	ended      bool // Absorb had the Partials' counts of its end (Local)
	// ext is the transport of a connection that is not MPA over TCP:
	// flows.TransportIBCM or TransportSCTP, "" for iWARP.
	ext      string
	native   bool      // a CM exchange over native InfiniBand
	lids     [2]uint16 // its initiator's and responder's LIDs
	messages int
	findings int
	sev      sevCount
	fam      famCounts // finding counts per check family
	fpduCounts
	lat  *latHist
	span // first and last timestamp
}

// famCounts counts a connection's findings per check family: a few
// families at most (a map took some 500 octets per connection).
type famCounts []famCount

type famCount struct {
	fam string
	n   sevCount
}

func (f *famCounts) add(fam string, sev dissect.Severity) {
	for i := range *f {
		if c := &(*f)[i]; c.fam == fam {
			c.n.add(sev)
			return
		}
	}
	*f = append(*f, famCount{fam: fam})
	(*f)[len(*f)-1].n.add(sev)
}

// of returns the counts of family fam.
func (f famCounts) of(fam string) (n sevCount) {
	for _, c := range f {
		if c.fam == fam {
			return c.n
		}
	}
	return n
}

// connSum is what the connection table reads of a conn record
// (flows.ConnSummary): a copy of the whole record took 336 octets, with its
// Interop verdict, in each of up to MaxConns connections' statistics.
type connSum struct {
	state                     string
	haveReq, haveRep          bool
	initKnown, fpdus          bool // InitiatorKnown; FPDUs > 0
	crc, mI2R, mR2I, enhanced bool
	rev                       uint8
	ird, ord                  uint16
	tcp                       flows.TCPHealth // of an iWARP connection's TCP
}

// summaryOf returns what the connection table reads of a conn record's
// summary: the connSum, and the initiator and responder when known; when
// not, the endpoints A and B, which its markers_i2r goes between.
func summaryOf(s *flows.ConnSummary) (sum connSum, initKnown bool, initiator, responder netip.AddrPort) {
	ini, res := s.Initiator, s.Responder
	if !s.InitiatorKnown {
		ini, res = s.A, s.B
	}
	return connSum{
		state: s.State, haveReq: s.HaveRequest, haveRep: s.HaveReply, rev: s.Rev, crc: s.CRC,
		initKnown: s.InitiatorKnown, fpdus: s.FPDUs > 0, mI2R: s.MarkersI2R, mR2I: s.MarkersR2I,
		enhanced: s.Enhanced, ird: s.IRD, ord: s.ORD, tcp: s.TCP,
	}, s.InitiatorKnown, ini, res
}

// setSummary notes a conn record's summary (summaryOf). Without a known
// initiator the table lists the endpoints as the summary does, in the order
// of their first packet (its A and B, which its markers go between), not
// in the order of the first record written: the conn line, the JSON Lines
// endpoints and the row then agree.
func (cs *connStats) setSummary(sum connSum, initKnown bool, initiator, responder netip.AddrPort) {
	if !initKnown && initiator.IsValid() && !cs.initKnown {
		cs.a, cs.b = initiator, responder
	}
	cs.sum, cs.hasSum = sum, true
	if initKnown {
		cs.initiator, cs.responder, cs.initKnown = initiator, responder, true
	}
}

// findKey identifies a row of the findings table: a severity and a code,
// and for codes whose findings say different things (causeOf), the cause.
type findKey struct {
	sev   dissect.Severity
	code  string
	cause findCause
}

// findCause tells apart the rows of one code whose findings have different
// causes. For rdmap.terminate it is the Terminate's Layer, EType and Code
// (RFC 5040 §4.8 Figure 9) when the record carries the Terminate, and the
// message when not (a finding record); for mpa.rejected the message with
// its frame numbers left out (the reason: what the application's private
// data reads, or what an RNIC's own reject points at); zero for every
// other code, which gets one row.
type findCause struct {
	term   [3]uint8 // Layer, EType, Code
	isTerm bool
	msg    string
}

// causeOf returns the cause of finding f of record r (findCause). The
// message of an rdmap.terminate finding goes on to name the terminated
// segment (its MSN, STag, TO), so Terminates of one cause are one row,
// told apart by their Layer, EType and Code: four connections terminated
// for four causes were one row that gave the first cause four times.
func causeOf(r *flows.Record, f *dissect.Finding) findCause {
	if f.Code == codeRejected {
		return findCause{msg: withoutFrames(f.Msg)}
	}
	if f.Code != rdmap.CodeTerminate {
		return findCause{}
	}
	var seg *rdmap.Segment
	switch {
	case r.Type == flows.RecFPDU && r.FPDU != nil && r.FPDU.SegOK:
		seg = &r.FPDU.Seg
	case r.Type == flows.RecDDPSCTP && r.SCTP != nil && r.SCTP.SegOK:
		seg = &r.SCTP.Seg
	}
	if seg == nil || seg.Opcode != rdmap.OpTerminate {
		return findCause{msg: f.Msg}
	}
	t := &seg.Term
	return findCause{term: [3]uint8{t.Layer, t.EType, t.Code}, isTerm: true}
}

// codeRejected is the code of flows' finding on an MPA Reply with R set.
const codeRejected = "mpa.rejected"

// withoutFrames returns msg with the number after every "frame " left out,
// so that findings which differ only in the frames they point at (the
// MPA Request of each rejected connection) are one row.
func withoutFrames(msg string) string {
	const w = "frame "
	if !strings.Contains(msg, w) {
		return msg
	}
	var b strings.Builder
	for {
		i := strings.Index(msg, w)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i+len(w)])
		msg = msg[i+len(w):]
		msg = strings.TrimLeft(msg, "0123456789")
	}
}

// findAgg is one row of the findings table.
type findAgg struct {
	n     int
	first uint64 // lowest frame
	ref   string
	msg   string // the first message
}

// codeInfo describes a finding code (one SARIF rule).
type codeInfo struct {
	sev dissect.Severity // severity of the first finding with the code
	msg string
	ref string
}

// keptFinding is one finding kept for the reports.
type keptFinding struct {
	conn   int
	frame  uint64
	ts     time.Time
	sev    dissect.Severity
	code   string
	msg    string
	ref    string
	frames []uint64
}

// maxKeptFrames bounds the frame list copied with each kept finding.
const maxKeptFrames = 16

// Collector aggregates flows records into statistics for the -z tables and
// the CI reports (JUnit, SARIF, HTML). Feed it every record with Add, then
// call the Write methods; they may be called more than once and in any order.
// A Collector is not safe for concurrent use.
//
// Memory is bounded (see the package documentation): records are never kept.
type Collector struct {
	conns     map[int]*connStats
	byID      []*connStats // conns and other by id, for ids below maxIndexed
	other     *connStats   // connections beyond maxConns, aggregated together
	untracked int          // records of connections beyond maxConns

	records  int
	messages int
	allCounts
	lat latHist
	// rtrReads counts the RTR Reads (flows.MessageRecord.RTR) matched
	// to their request, which the latency table leaves out.
	rtrReads int
	tl       timeline
	span     span // of all records, once allSpan; see total
	allSpan  bool

	finds     map[findKey]*findAgg
	codes     map[string]*codeInfo
	nFindings int
	sev       sevCount
	worst     dissect.Severity
	kept      []keptFinding
	dropped   int

	maxFindings int
	maxConns    int
	shared      *partShared // what the Partials of Local read
	noTimeline  bool        // NoTimeline
	opPool      opPool      // dense opcode histograms for reuse
	// openOps lists, from openHead on, the connections whose opcode
	// histogram the Collector made dense, oldest first (segment).
	openOps  []int
	openHead int

	// The rows of connections that ended, packed (rowpack.go).
	packedAt rowSlots
	rows     varpack.Arena
	rowEnc   []byte // a row being packed
	revived  struct {
		rowSlot
		id int
		ok bool
	} // the slot of the row revived last
	deadRows   int          // octets of rows revived since
	packedSpan span         // the spans of the rows packed, merged
	strs       []string     // states and check families of packed rows
	spareRows  []*connStats // rows dropped by packRow, for revive
	keepRows   bool         // tests: pack no row

	damage string // InputDamaged (last, not to move the hot fields above)
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{
		conns:       make(map[int]*connStats),
		finds:       make(map[findKey]*findAgg),
		codes:       make(map[string]*codeInfo),
		maxFindings: MaxFindings,
		maxConns:    MaxConns,
	}
}

// NoTimeline has c keep no throughput timeline, which only the HTML
// report draws (its chart is then empty): for the tables, JUnit and SARIF.
// Its Partials (Local) then take FPDU records from the first, where
// otherwise they wait for the timeline's origin, the first FPDU c adds.
// With thousands of connections in the middle of a message, the records
// waiting for those messages' records held that first FPDU back, and
// everything after it (flows.Options.MaxHeld, some 10 MB). Call it before
// Local and Add.
func (c *Collector) NoTimeline() { c.noTimeline = true }

// InputDamaged records that the capture was damaged and its decode ended
// there, msg saying how (the reader's error as iwarpdump prints it): the
// JUnit report counts it as an error, the SARIF report as a notification
// of a run that did not read all of its input, the HTML report in its
// summary. The tables, which count what was decoded, do not show it.
func (c *Collector) InputDamaged(msg string) { c.damage = msg }

// NoReports has c keep none of the findings that the JUnit, SARIF and HTML
// reports list one by one (MaxFindings of them, some 1.4 MB): for the
// tables, which count findings by code and connection, and Worst. Those
// reports then list none. Call it before Add.
func (c *Collector) NoReports() { c.maxFindings = 0 }

// Add aggregates one record. It keeps nothing that points into r except
// strings (finding codes, messages and references), which are immutable.
func (c *Collector) Add(r *flows.Record) {
	if r == nil {
		return
	}
	c.records++
	w, slow := wallOf(&r.TS)
	cs := c.conn(r)
	if !r.TS.IsZero() {
		if slow && !c.allSpan {
			c.span, c.allSpan = c.total(), true
		}
		if c.allSpan {
			c.span.add(&r.TS, w, slow)
		}
		cs.span.add(&r.TS, w, slow)
	}
	switch r.Type {
	case flows.RecMPA:
		if r.MPA != nil {
			cs.mpa(r)
			for i := range r.MPA.Findings {
				c.finding(r, cs, &r.MPA.Findings[i])
			}
		}
	case flows.RecFPDU:
		if r.FPDU != nil {
			c.fpdu(r, cs, w, slow)
			for i := range r.FPDU.Findings {
				c.finding(r, cs, &r.FPDU.Findings[i])
			}
		}
	case flows.RecMessage:
		c.messages++
		cs.messages++
		if m := r.Message; m != nil && m.RequestFrame != 0 {
			if m.RTR {
				// The zero-length Read of a peer-to-peer setup's RTR
				// (RFC 6581 §4): its latency is the peer's connection
				// set-up, not a transfer's.
				c.rtrReads++
			} else {
				c.latency(cs, m.Latency)
			}
		}
	case flows.RecFinding:
		if r.Finding != nil {
			c.finding(r, cs, r.Finding)
		}
	case flows.RecConn:
		if s := r.Summary; s != nil && !cs.other {
			if !cs.a.IsValid() {
				// No record before had its endpoints (a connection
				// --decode-as forced that framed nothing).
				cs.a, cs.b = s.A, s.B
			}
			cs.setSummary(summaryOf(s))
			cs.ops.pack(&c.opPool)
		}
	case flows.RecCM:
		if m := r.CM; m != nil {
			cs.ext = flows.TransportIBCM
			if m.ICRCStatus == flows.CRCBad {
				cs.crcErrors++
			}
			for i := range m.Findings {
				c.finding(r, cs, &m.Findings[i])
			}
		}
	case flows.RecDDPSCTP, flows.RecSCTPSession:
		if m := r.SCTP; m != nil {
			cs.ext = flows.TransportSCTP
			if r.Type == flows.RecDDPSCTP {
				c.sctpSegment(r, cs, w, slow)
			}
			for i := range m.Findings {
				c.finding(r, cs, &m.Findings[i])
			}
		}
	case flows.RecExtConn:
		if !cs.other {
			cs.extSummary(r)
		}
	}
	if (r.Type == flows.RecConn || r.Type == flows.RecFinding) && c.done(cs) {
		// The records a connection ends with (rowpack.go); an FPDU or
		// message record after its conn record leaves the row as it
		// is until the next of them, rather than pack it at every
		// record (a stream that goes on with a connection's records
		// after its conn record, as BenchmarkCollectorAdd's does).
		c.packRow(cs)
	}
}

// maxIndexed bounds Collector.byID: connection ids from 0 up to it (flows
// numbers connections 0, 1, 2, ... in order) are found by indexing, others
// in the map.
const maxIndexed = 1 << 17

// conn returns the statistics of r's connection, creating them; once
// MaxConns connections are tabulated, later ones share one "other" entry.
// It notes r's addresses and direction, not its timestamp. It inlines: most
// records find a settled connection in byID.
func (c *Collector) conn(r *flows.Record) *connStats {
	if id := uint(r.Conn); id < uint(len(c.byID)) {
		if cs := c.byID[id]; cs != nil && cs.settled {
			return cs
		}
	}
	return c.connSlow(r)
}

// connSlow is conn for a connection not in byID, or not yet settled.
func (c *Collector) connSlow(r *flows.Record) *connStats {
	var cs *connStats
	if id := uint(r.Conn); id < uint(len(c.byID)) {
		cs = c.byID[id]
	}
	if cs == nil {
		cs = c.lookup(r)
	}
	if cs.other {
		c.untracked++
		return cs
	}
	if !cs.a.IsValid() && r.Src.IsValid() {
		cs.a, cs.b = r.Src, r.Dst
	}
	if !cs.initKnown && r.Src.IsValid() {
		switch r.Dir {
		case flows.DirI2R:
			cs.initiator, cs.responder, cs.initKnown = r.Src, r.Dst, true
		case flows.DirR2I:
			cs.initiator, cs.responder, cs.initKnown = r.Dst, r.Src, true
		}
	}
	cs.settled = cs.a.IsValid() && cs.initKnown
	return cs
}

// lookup finds or creates the statistics of r's connection in the map (or
// chooses "other" for a new connection), and remembers them in byID.
func (c *Collector) lookup(r *flows.Record) *connStats {
	cs := c.conns[r.Conn]
	if cs == nil {
		if at, ok := c.packedAt.get(r.Conn); ok {
			return c.revive(r.Conn, at)
		}
		if c.rowCount() >= c.maxConns {
			if c.other == nil {
				c.other = &connStats{id: -1, other: true}
			}
			cs = c.other
		} else {
			cs = &connStats{id: r.Conn, a: r.Src, b: r.Dst}
			c.conns[r.Conn] = cs
		}
	}
	if id := r.Conn; id >= 0 && id < maxIndexed {
		if id >= len(c.byID) {
			n := min(max(id+1, 2*len(c.byID), 64), maxIndexed)
			c.byID = append(c.byID, make([]*connStats, n-len(c.byID))...)
		}
		c.byID[id] = cs
	}
	return cs
}

// mpa notes what an MPA Request or Reply negotiates (RFC 5044 §7.1: the
// Request's M bit asks for markers responder->initiator, the Reply's M bit
// initiator->responder; either C bit turns CRC on; RFC 6581 §9 IRD/ORD).
func (cs *connStats) mpa(r *flows.Record) {
	m := r.MPA
	switch m.Frame.Kind {
	case mpa.KindRequest:
		cs.req = true
		cs.mR2I = m.Frame.M
		if !cs.initKnown && !cs.other && r.Src.IsValid() {
			cs.initiator, cs.responder, cs.initKnown = r.Src, r.Dst, true
		}
	case mpa.KindReply:
		cs.rep = true
		cs.mI2R = m.Frame.M
		cs.rejected = m.Frame.R
		if m.HasEnhanced {
			cs.enhanced, cs.ird, cs.ord = true, m.Enhanced.IRD, m.Enhanced.ORD
		}
	}
	cs.rev = m.Frame.Rev
	cs.crc = cs.crc || m.Frame.C
}

// opIndex returns the histogram slot of an FPDU.
func opIndex(fr *flows.FPDURecord) int {
	if !fr.SegOK {
		return opUndecoded
	}
	return int(fr.Seg.Opcode & 0x0f)
}

func dirIndex(d flows.Dir) int {
	if int(d) < 3 {
		return int(d)
	}
	return 0
}

// fpduCounts counts FPDUs: of a connection, or of what a Partial took.
type fpduCounts struct {
	fpdus     int
	octets    uint64
	crcErrors int
	ops       opTally
}

// absorb adds o's counts.
func (f *fpduCounts) absorb(o *fpduCounts, pool *opPool) {
	f.fpdus += o.fpdus
	f.octets += o.octets
	f.crcErrors += o.crcErrors
	o.ops.each(func(dir, op int, v opCount) { f.ops.add(dir, op, v, pool) })
}

// allCounts counts the FPDUs of all connections.
type allCounts struct {
	fpdus     int
	octets    uint64
	crcErrors int
	ops       opHist
}

// add counts an FPDU of n octets on the wire, pl of them payload.
func (f *allCounts) add(n, pl uint64, dir, op int, crcBad bool) {
	f.fpdus++
	f.octets += n
	f.ops[dir][op].n++
	f.ops[dir][op].octets += pl
	if crcBad {
		f.crcErrors++
	}
}

// absorb adds o's counts.
func (f *allCounts) absorb(o *fpduCounts) {
	f.fpdus += o.fpdus
	f.octets += o.octets
	f.crcErrors += o.crcErrors
	o.ops.each(func(dir, op int, v opCount) {
		f.ops[dir][op].n += v.n
		f.ops[dir][op].octets += v.octets
	})
}

// opHist is an opcode histogram per direction: [flows.Dir][opcode].
type opHist [3][nOps]opCount

// opTally is a connection's opHist: dense while the connection is open, so
// that counting an FPDU is one increment, and packed into the cells in use
// once its conn record came (pack). A connection uses a few of the 51
// cells, and the dense histogram took 816 octets in the statistics of each
// of up to MaxConns connections, closed ones included.
type opTally struct {
	open   *opHist  // while counting; nil before the first FPDU and once packed
	cells  []opCell // once packed
	packed bool
}

// opCell is one cell of a packed opTally.
type opCell struct {
	opCount
	dir, op uint8
}

// opPool keeps the dense histograms of packed opTallies for reuse, up to
// maxOpPool of them.
type opPool []*opHist

const maxOpPool = 64

// counting returns t's dense histogram, making it (from pool, which may be
// nil) before t's first FPDU.
func (t *opTally) counting(pool *opPool) *opHist {
	if t.open == nil {
		if pool != nil && len(*pool) > 0 {
			t.open = (*pool)[len(*pool)-1]
			*pool = (*pool)[:len(*pool)-1]
		} else {
			t.open = new(opHist)
		}
	}
	return t.open
}

// add adds v to cell [dir][op].
func (t *opTally) add(dir, op int, v opCount, pool *opPool) {
	if t.packed {
		for i := range t.cells {
			if c := &t.cells[i]; int(c.dir) == dir && int(c.op) == op {
				c.n += v.n
				c.octets += v.octets
				return
			}
		}
		t.cells = append(t.cells, opCell{v, uint8(dir), uint8(op)})
		return
	}
	h := t.counting(pool)
	h[dir][op].n += v.n
	h[dir][op].octets += v.octets
}

// pack keeps only the cells in use and gives the dense histogram back to
// pool: the connection's FPDUs were all counted.
func (t *opTally) pack(pool *opPool) {
	if t.packed {
		return
	}
	t.packed = true
	h := t.open
	if h == nil {
		return
	}
	n := 0
	for d := range h {
		for op := range h[d] {
			if h[d][op] != (opCount{}) {
				n++
			}
		}
	}
	cells := make([]opCell, 0, n)
	for d := range h {
		for op := range h[d] {
			if v := h[d][op]; v != (opCount{}) {
				cells = append(cells, opCell{v, uint8(d), uint8(op)})
			}
		}
	}
	t.cells = cells
	if pool != nil && len(*pool) < maxOpPool {
		*h = opHist{}
		*pool = append(*pool, h)
	}
	t.open = nil
}

// each calls f for every cell in use, dense ones in order of direction and
// opcode.
func (t *opTally) each(f func(dir, op int, v opCount)) {
	if h := t.open; h != nil {
		for d := range h {
			for op := range h[d] {
				if v := h[d][op]; v != (opCount{}) {
					f(d, op, v)
				}
			}
		}
	}
	for _, c := range t.cells {
		f(int(c.dir), int(c.op), c.opCount)
	}
}

// dense returns the histogram.
func (t *opTally) dense() (h opHist) {
	t.each(func(dir, op int, v opCount) {
		h[dir][op].n += v.n
		h[dir][op].octets += v.octets
	})
	return h
}

// sctpSegment counts a DDP segment carried over SCTP (RFC 5043) as an
// FPDU is counted. Its octets are its payload's, as the association's conn
// record counts them (flows.SCTPSummary.Octets); the SCTP checksum is
// checked per packet, not per segment.
func (c *Collector) sctpSegment(r *flows.Record, cs *connStats, w wall, slow bool) {
	m := r.SCTP
	op := opUndecoded
	var pl uint64
	if m.SegOK {
		op = int(m.Seg.Opcode & 0x0f)
		pl = uint64(max(m.PayloadLen, 0))
	}
	c.segment(r, cs, w, slow, pl, pl, dirIndex(r.Dir), op, false)
}

// extSummary notes the summary of a CM exchange or an SCTP association
// (a RecExtConn record) in the statistics of its connection: its ends,
// state, IRD/ORD and the counts the decoder kept (a CM exchange's data
// packets have no records of their own).
func (cs *connStats) extSummary(r *flows.Record) {
	sum := connSum{state: "-"}
	switch {
	case r.CM != nil && r.CM.Summary != nil:
		s := r.CM.Summary
		cs.ext = flows.TransportIBCM
		sum.state = s.State
		if s.Native {
			cs.lids = [2]uint16{s.InitiatorLID, s.ResponderLID}
			cs.native = true
		} else if s.InitiatorKnown && s.Initiator.IsValid() {
			// The IP addresses: the UDP ports of RoCEv2 are a
			// flow's entropy, not an end's (IBA Annex A17.2.1).
			cs.initiator = netip.AddrPortFrom(s.Initiator, 0)
			cs.responder = netip.AddrPortFrom(s.Responder, 0)
			cs.initKnown = true
		}
		if s.HaveREP {
			// Responder resources and initiator depth: IRD and ORD
			// in IB's words (IBA Vol. 1 §12.6.5), the REP's, as the
			// column is the Reply's (a REQ rejected or unanswered
			// has none).
			sum.enhanced, sum.ird, sum.ord = true, uint16(s.ResponderResources), uint16(s.InitiatorDepth)
		}
		cs.messages = max(cs.messages, s.Messages)
		cs.fpdus = max(cs.fpdus, int(s.DataPackets))
		cs.octets = max(cs.octets, s.DataOctets)
	case r.SCTP != nil && r.SCTP.Summary != nil:
		s := r.SCTP.Summary
		cs.ext = flows.TransportSCTP
		sum.state = s.State
		if s.InitiatorKnown {
			cs.initiator, cs.responder, cs.initKnown = s.Initiator, s.Responder, true
		}
		if s.Enhanced {
			sum.enhanced, sum.ird, sum.ord = true, s.IRD, s.ORD
		}
		cs.crcErrors = max(cs.crcErrors, s.ChecksumErrors)
	default:
		return
	}
	sum.initKnown = cs.initKnown
	cs.sum, cs.hasSum = sum, true
}

// maxOpenOps is the most dense opcode histograms the Collector keeps: past
// it, the oldest is packed (opened), and its connection's later FPDUs go
// to the packed cells. A histogram is packed at its connection's conn
// record, which for a connection reset comes at the end of the capture
// (flows' retired connections): without a bound, iwarpdump -z conn kept
// one of 816 octets for each of up to MaxConns such connections, 61 MB
// of the 184 MiB that 100,000 resets took.
var maxOpenOps = 1024 // a variable for tests

// opened notes that connection id's histogram was made dense, and packs
// the oldest still dense past maxOpenOps.
func (c *Collector) opened(id int) {
	c.openOps = append(c.openOps, id)
	for len(c.openOps)-c.openHead > maxOpenOps {
		old := c.openOps[c.openHead]
		c.openHead++
		if cs := c.conns[old]; cs != nil && cs.ops.open != nil {
			cs.ops.pack(&c.opPool)
		}
	}
	if c.openHead > maxOpenOps && c.openHead > len(c.openOps)/2 {
		n := copy(c.openOps, c.openOps[c.openHead:])
		c.openOps, c.openHead = c.openOps[:n], 0
	}
}

// fpduFacts returns what an FPDU record counts: its octets on the wire, its
// payload octets, and its direction and opcode slots.
func fpduFacts(r *flows.Record) (n, pl uint64, dir, op int) {
	fr := r.FPDU
	n = uint64(max(fr.Len, 0))
	if fr.SegOK {
		pl = uint64(max(fr.PayloadLen, 0))
	}
	return n, pl, dirIndex(r.Dir), opIndex(fr)
}

func (c *Collector) fpdu(r *flows.Record, cs *connStats, w wall, slow bool) {
	n, pl, dir, op := fpduFacts(r)
	c.segment(r, cs, w, slow, n, pl, dir, op, r.FPDU.CRCStatus == flows.CRCBad)
}

// segment counts one DDP segment of n octets (pl of payload) in
// direction and opcode slots dir and op: an FPDU, or a segment over SCTP.
func (c *Collector) segment(r *flows.Record, cs *connStats, w wall, slow bool, n, pl uint64, dir, op int, bad bool) {
	c.allCounts.add(n, pl, dir, op, bad)
	cs.fpdus++
	cs.octets += n
	h := cs.ops.open
	if h == nil {
		if c.shared != nil || cs.ops.packed {
			// Partials count most of a connection's FPDUs (Local): the
			// few left to the Collector go into packed cells, rather
			// than a dense histogram kept to the connection's conn
			// record (the end of the capture for one reset). And an
			// FPDU after its connection's histogram was packed (at its
			// conn record, rowpack.go) adds to the cells: a dense
			// histogram beside them would be packed over them.
			cs.ops.packed = true
			cs.ops.add(dir, op, opCount{1, pl}, nil)
			h = nil
		} else {
			h = cs.ops.counting(&c.opPool)
			c.opened(r.Conn)
		}
	}
	if h != nil {
		h[dir][op].n++
		h[dir][op].octets += pl
	}
	if bad {
		cs.crcErrors++
	}
	if c.noTimeline {
		return
	}
	if b := c.tl.hit(w, slow); b != nil { // timeline.add, inlined
		b[dir] += n // dirIndex maps as add does
	} else {
		c.tl.addSlow(r.TS, r.Dir, n)
		if c.shared != nil {
			c.shared.publish(&c.tl)
		}
	}
}

// total returns the span of all records' timestamps. Until a slow one
// came (see wallOf), the Collector keeps only the spans per connection,
// and merges them here.
func (c *Collector) total() span {
	if c.allSpan {
		return c.span
	}
	m := c.packedSpan
	for _, cs := range c.conns {
		m.mergeFast(&cs.span)
	}
	if c.other != nil {
		m.mergeFast(&c.other.span)
	}
	return m
}

// latency adds the latency of an RDMA Read (RFC 5040 §4.4) to the totals
// and to its connection.
func (c *Collector) latency(cs *connStats, d time.Duration) {
	i := latBucketOf(d)
	c.lat.addIn(d, i)
	if cs.lat == nil {
		cs.lat = new(latHist)
	}
	cs.lat.addIn(d, i)
}

// family returns the check family of a finding code: the part before the
// first dot ("rdmap" for "rdmap.terminate").
func family(code string) string {
	if i := strings.IndexByte(code, '.'); i > 0 {
		return code[:i]
	}
	return code
}

func (c *Collector) finding(r *flows.Record, cs *connStats, f *dissect.Finding) {
	frame := r.Frame
	if len(f.Frames) > 0 {
		frame = f.Frames[0]
	}
	// Severities outside note..error (not produced by the decoder) are
	// clamped into it.
	sev := min(max(f.Severity, dissect.SeverityNote), dissect.SeverityError)
	code := f.Code
	if code == "" {
		code = "unknown"
	}
	c.nFindings++
	c.sev.add(sev)
	if sev > c.worst {
		c.worst = sev
	}
	k := findKey{sev, code, causeOf(r, f)}
	a := c.finds[k]
	if a == nil {
		a = &findAgg{first: frame, ref: f.Ref, msg: f.Msg}
		c.finds[k] = a
	}
	a.n++
	if frame < a.first {
		a.first = frame
	}
	if c.codes[code] == nil {
		c.codes[code] = &codeInfo{sev: sev, msg: f.Msg, ref: f.Ref}
	}
	cs.findings++
	cs.sev.add(sev)
	cs.fam.add(family(code), sev)
	if len(c.kept) >= c.maxFindings {
		c.dropped++
		return
	}
	conn := cs.id
	frames := f.Frames
	if len(frames) > maxKeptFrames {
		frames = frames[:maxKeptFrames]
	}
	c.kept = append(c.kept, keptFinding{
		conn: conn, frame: frame, ts: r.TS, sev: sev, code: code, msg: f.Msg, ref: f.Ref,
		frames: append([]uint64(nil), frames...),
	})
}

// Worst returns the highest severity of all findings added (for --fail-on),
// and false when there were none.
func (c *Collector) Worst() (dissect.Severity, bool) {
	return c.worst, c.worst != 0
}

// opName names a histogram slot.
func opName(op int) string {
	if op == opUndecoded {
		return "(not decoded)"
	}
	return rdmap.Opcode(op).String()
}

package synth

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/dissect/sctp"
)

// SCTPScenario describes SCTP associations carrying DDP (RFC 5043): DATA
// chunks of PPID 16 holding DDP segments (encoded with packages ddp and
// rdmap) and of PPID 17 holding DDP Stream Session Control messages,
// including seed 003's enhanced function codes.
type SCTPScenario struct {
	Name   string
	Seed   int64
	Start  time.Time
	Assocs []SCTPAssoc
}

// SessionMode selects the session control an association starts with.
type SessionMode uint8

// Session control modes.
const (
	// SessionPlain: Initiate, then Accept (or Reject) (RFC 5043).
	SessionPlain SessionMode = iota
	// SessionEnhanced: Enhanced Initiate, then Enhanced Accept (or
	// Enhanced Reject), each private data starting with IRD/ORD (seed 003
	// §7-§8).
	SessionEnhanced
	// SessionNone: DDP segments without any session control.
	SessionNone
)

// SCTPAssoc is one association. Initiator and Responder are the SCTP
// endpoints.
type SCTPAssoc struct {
	Initiator, Responder netip.AddrPort
	// Handshake sends INIT (with the Adaptation Layer Indication), INIT
	// ACK, COOKIE ECHO and COOKIE ACK first; Shutdown ends with SHUTDOWN,
	// SHUTDOWN ACK and SHUTDOWN COMPLETE.
	Handshake, Shutdown bool
	Session             SessionMode
	// Request and Reply are the Enhanced data of SessionEnhanced.
	Request, Reply mpa.Enhanced
	// RequestPD and ReplyPD are the ULP private data of the session
	// control messages (after the Enhanced data).
	RequestPD, ReplyPD []byte
	// Reject answers the Initiate with a Reject (no operations follow).
	Reject bool
	// Terminate sends a session Terminate from the initiator after the
	// operations.
	Terminate bool
	Ops       []Op
	// MaxSegment is the largest DDP payload of one segment (default 1024).
	MaxSegment int
	// Fragment, when positive, cuts user messages longer than it into DATA
	// chunks of at most Fragment octets (B/E flags, RFC 9260 §6.9).
	Fragment int
	// Retransmit lists user messages (0-based, in sending order) that are
	// sent twice, as an SCTP retransmission: the decoder must drop the
	// copy.
	Retransmit []int
}

// TruthSCTP is the "sctp" object of a ddp or sctp_session truth record.
type TruthSCTP struct {
	Stream uint16 `json:"stream"`
	SSN    uint16 `json:"ssn"`
	TSN    uint32 `json:"tsn"`
	PPID   uint32 `json:"ppid"`
	U      bool   `json:"u"`
}

// TruthSCTPDDP is one DDP segment carried over SCTP as generated (JSON
// Lines "ddp").
type TruthSCTPDDP struct {
	V          int         `json:"v"`
	Type       string      `json:"type"` // "ddp"
	Frame      uint64      `json:"frame"`
	TS         string      `json:"ts"`
	Conn       int         `json:"conn"`
	Src        string      `json:"src"`
	Dst        string      `json:"dst"`
	Dir        string      `json:"dir"`
	Frames     []uint64    `json:"frames"`
	SCTP       TruthSCTP   `json:"sctp"`
	DDP        *TruthDDP   `json:"ddp"`
	RDMAP      *TruthRDMAP `json:"rdmap"`
	PayloadLen int         `json:"payload_len"`
}

// TruthSCTPSession is one DDP Stream Session Control message as generated
// (JSON Lines "sctp_session").
type TruthSCTPSession struct {
	V        int       `json:"v"`
	Type     string    `json:"type"` // "sctp_session"
	Frame    uint64    `json:"frame"`
	TS       string    `json:"ts"`
	Conn     int       `json:"conn"`
	Src      string    `json:"src"`
	Dst      string    `json:"dst"`
	Dir      string    `json:"dir"`
	Frames   []uint64  `json:"frames"`
	SCTP     TruthSCTP `json:"sctp"`
	Function uint16    `json:"function"`
	Name     string    `json:"name"`
	PDLen    int       `json:"pd_len"`
	IRD      *uint16   `json:"ird,omitempty"`
	ORD      *uint16   `json:"ord,omitempty"`
	A        *bool     `json:"a,omitempty"`
	B        *bool     `json:"b,omitempty"`
	C        *bool     `json:"c,omitempty"`
	D        *bool     `json:"d,omitempty"`
	RTR      []string  `json:"rtr,omitempty"`
	PD       string    `json:"pd"`
	// Findings the message must produce (codes only).
	Findings []TruthFindingC `json:"findings,omitempty"`
}

// TruthSCTPConn summarises an association (JSON Lines "conn" with
// transport "sctp").
type TruthSCTPConn struct {
	V         int    `json:"v"`
	Type      string `json:"type"` // "conn"
	Conn      int    `json:"conn"`
	Transport string `json:"transport"`
	// Initiator and Responder are null when nothing in the capture says
	// which side initiated (no INIT, no session Initiate).
	Initiator *string `json:"initiator"`
	Responder *string `json:"responder"`
	State     string  `json:"state"`
	Enhanced  bool    `json:"enhanced"`
	IRD       *uint16 `json:"ird,omitempty"`
	ORD       *uint16 `json:"ord,omitempty"`
	Segments  int     `json:"segments"`
	Messages  int     `json:"messages"`
	Octets    uint64  `json:"octets"`
}

// RecordType implements Record.
func (*TruthSCTPDDP) RecordType() string { return "ddp" }

// RecordType implements Record.
func (*TruthSCTPSession) RecordType() string { return "sctp_session" }

// RecordType implements Record.
func (*TruthSCTPConn) RecordType() string { return "conn" }

// sctpPkt is one SCTP packet to send.
type sctpPkt struct {
	conn  int
	fromI bool
	t     time.Duration
	tag   uint32 // verification tag (RFC 9260 §8.5: the receiver's, 0 in an INIT)
	body  []byte // chunks
	// truth records whose frames include this packet; first marks the
	// packet holding the record's first octet.
	truths []sctpTruthRef
}

type sctpTruthRef struct {
	rec   Record
	first bool
}

// sctpGen generates one association.
type sctpGen struct {
	a       *SCTPAssoc
	conn    int
	pkts    []sctpPkt
	tm      func() time.Duration
	tsn     [2]uint32
	ssn     [2][2]uint16 // per direction, per stream
	msn     [2]map[uint32]uint32
	tags    [2]uint32
	sent    int  // user messages sent
	known   bool // the capture says which side initiated
	sum     *TruthSCTPConn
	payload func(op *Op, n int) []byte
}

// Generate builds the scenario (see ExtScenario).
func (s SCTPScenario) Generate(pcapW, truthW io.Writer) (*Result, error) {
	start := s.Start
	if start.IsZero() {
		start = defaultStart
	}
	var pkts []sctpPkt
	var conns []*TruthSCTPConn
	for i := range s.Assocs {
		g, err := newSCTPGen(&s.Assocs[i], i, s.Seed)
		if err != nil {
			return nil, err
		}
		if err := g.run(); err != nil {
			return nil, fmt.Errorf("association %d: %w", i, err)
		}
		pkts = append(pkts, g.pkts...)
		conns = append(conns, g.sum)
	}
	sortStable(pkts, func(a, b *sctpPkt) bool { return a.t < b.t })
	var frames []extFrame
	var recs []Record
	for i := range pkts {
		p := &pkts[i]
		a := &s.Assocs[p.conn]
		src, dst := a.Initiator, a.Responder
		tag := p.tag
		if !p.fromI {
			src, dst = dst, src
		}
		pkt := sctp.AppendHeader(nil, sctp.Header{SrcPort: src.Port(), DstPort: dst.Port(), VerificationTag: tag})
		pkt = append(pkt, p.body...)
		sctp.SetChecksum(pkt)
		data, err := ipFrame(src.Addr(), dst.Addr(), layers.IPProtocolSCTP, uint16(i+1), gopacket.Payload(pkt))
		if err != nil {
			return nil, err
		}
		frames = append(frames, extFrame{t: p.t, data: data})
		n := uint64(len(frames))
		for _, tr := range p.truths {
			switch r := tr.rec.(type) {
			case *TruthSCTPDDP:
				r.Frames = append(r.Frames, n)
				if tr.first {
					r.Frame, r.TS = n, formatTS(start.Add(p.t))
					recs = append(recs, r)
				}
			case *TruthSCTPSession:
				r.Frames = append(r.Frames, n)
				if tr.first {
					r.Frame, r.TS = n, formatTS(start.Add(p.t))
					recs = append(recs, r)
				}
			}
		}
	}
	for _, c := range conns {
		recs = append(recs, c)
	}
	return finishExt(start, frames, recs, pcapW, truthW)
}

func newSCTPGen(a *SCTPAssoc, conn int, seed int64) (*sctpGen, error) {
	if !a.Initiator.IsValid() || !a.Responder.IsValid() || a.Initiator.Addr().Is4() != a.Responder.Addr().Is4() {
		return nil, fmt.Errorf("%w: association %d endpoints", ErrBadOp, conn)
	}
	r := newRand(seed, conn, streamMisc)
	tm := newRand(seed, conn, streamTiming)
	pay := newRand(seed, conn, streamPayload)
	g := &sctpGen{a: a, conn: conn}
	g.tags[0], g.tags[1] = r.Uint32()|1, r.Uint32()|1
	g.tsn[0], g.tsn[1] = r.Uint32(), r.Uint32()
	g.msn[0], g.msn[1] = map[uint32]uint32{}, map[uint32]uint32{}
	t := time.Duration(conn)*5*time.Millisecond + time.Duration(between(tm, 0, 300))*time.Microsecond
	g.tm = func() time.Duration {
		t += time.Duration(between(tm, 10, 400)) * time.Microsecond
		return t
	}
	g.payload = func(op *Op, n int) []byte { return fillPayload(pay, op, n) }
	g.sum = &TruthSCTPConn{V: 1, Type: "conn", Conn: conn, Transport: "sctp", State: "streaming"}
	g.known = a.Handshake || a.Session != SessionNone
	if g.known {
		g.sum.Initiator, g.sum.Responder = ptr(a.Initiator.String()), ptr(a.Responder.String())
	}
	return g, nil
}

func dirOf(fromI bool) int {
	if fromI {
		return 0
	}
	return 1
}

func (g *sctpGen) send(fromI bool, body []byte, truths ...sctpTruthRef) {
	tag := g.tags[dirOf(!fromI)]
	if len(body) > 0 && body[0] == uint8(sctp.ChunkInit) {
		tag = 0
	}
	g.pkts = append(g.pkts, sctpPkt{conn: g.conn, fromI: fromI, t: g.tm(), tag: tag, body: body, truths: truths})
}

// sack acknowledges everything the other side sent so far.
func (g *sctpGen) sack(fromI bool) {
	other := dirOf(!fromI)
	v := make([]byte, 12)
	cum := g.tsn[other] - 1
	v[0], v[1], v[2], v[3] = byte(cum>>24), byte(cum>>16), byte(cum>>8), byte(cum)
	v[5] = 1 // a_rwnd 65536
	g.send(fromI, sctp.AppendChunk(nil, sctp.ChunkSack, 0, v))
}

// userMessage sends one user message (a DDP segment or a session control
// message) as one or more DATA chunks, each in its own packet.
func (g *sctpGen) userMessage(fromI bool, stream uint16, ppid uint32, msg []byte, rec Record) {
	d := dirOf(fromI)
	ssn := g.ssn[d][stream]
	g.ssn[d][stream]++
	first := g.tsn[d]
	tr := TruthSCTP{Stream: stream, SSN: ssn, TSN: first, PPID: ppid}
	switch r := rec.(type) {
	case *TruthSCTPDDP:
		r.SCTP = tr
	case *TruthSCTPSession:
		r.SCTP = tr
	}
	frag := g.a.Fragment
	if frag <= 0 || frag >= len(msg) {
		frag = max(len(msg), 1)
	}
	idx := g.sent
	g.sent++
	var chunks [][]byte
	for off := 0; off < len(msg) || off == 0; {
		n := min(frag, len(msg)-off)
		var fl uint8
		if off == 0 {
			fl |= sctp.FlagBegin
		}
		if off+n == len(msg) {
			fl |= sctp.FlagEnd
		}
		chunks = append(chunks, sctp.AppendData(nil, sctp.Data{Flags: fl, TSN: g.tsn[d], Stream: stream, SSN: ssn, PPID: ppid,
			UserData: msg[off : off+n]}))
		g.tsn[d]++
		off += n
		if off >= len(msg) {
			break
		}
	}
	for i, c := range chunks {
		g.send(fromI, c, sctpTruthRef{rec: rec, first: i == 0})
	}
	for _, k := range g.a.Retransmit {
		if k == idx {
			for _, c := range chunks {
				g.send(fromI, c)
			}
		}
	}
	if g.sent%2 == 0 {
		g.sack(!fromI)
	}
}

func (g *sctpGen) endpoints(fromI bool) (string, string, string) {
	dir := "i2r"
	src, dst := g.a.Initiator.String(), g.a.Responder.String()
	if !fromI {
		dir, src, dst = "r2i", dst, src
	}
	if !g.known {
		dir = ""
	}
	return src, dst, dir
}

// session sends one session control message.
func (g *sctpGen) session(fromI bool, f sctp.FuncCode, enh *mpa.Enhanced, ulp []byte) *TruthSCTPSession {
	var pd []byte
	src, dst, dir := g.endpoints(fromI)
	tr := &TruthSCTPSession{V: 1, Type: "sctp_session", Conn: g.conn, Src: src, Dst: dst, Dir: dir,
		Function: uint16(f), Name: f.String()}
	if enh != nil {
		pd = mpa.AppendEnhanced(pd, *enh)
		rtr := enh.RTR(mpa.FlagsDraft01).Names()
		if rtr == nil {
			rtr = []string{}
		}
		tr.IRD, tr.ORD, tr.A, tr.B, tr.C, tr.D, tr.RTR = ptr(enh.IRD), ptr(enh.ORD), ptr(enh.A), ptr(enh.B), ptr(enh.C), ptr(enh.D), rtr
	}
	pd = append(pd, ulp...)
	tr.PDLen, tr.PD = len(pd), hex.EncodeToString(pd)
	g.userMessage(fromI, 0, sctp.PPIDDDPSessionControl, sctp.AppendSessionControl(nil, sctp.SessionControl{Func: f, PD: pd}), tr)
	return tr
}

// segment sends one DDP segment.
func (g *sctpGen) segment(fromI bool, s rdmap.Segment) {
	src, dst, dir := g.endpoints(fromI)
	tr := &TruthSCTPDDP{V: 1, Type: "ddp", Conn: g.conn, Src: src, Dst: dst, Dir: dir,
		DDP: truthDDP(s.DDP, false), RDMAP: truthRDMAP(&s), PayloadLen: len(s.Payload)}
	g.sum.Segments++
	g.sum.Octets += uint64(len(s.Payload))
	g.userMessage(fromI, 1, sctp.PPIDDDPSegment, rdmap.AppendSegment(nil, s), tr)
}

func (g *sctpGen) maxSeg() int {
	if g.a.MaxSegment > 0 {
		return g.a.MaxSegment
	}
	return 1024
}

func (g *sctpGen) untagged(fromI bool, s rdmap.Segment, payload []byte) {
	qn, _ := s.Opcode.QN()
	d := dirOf(fromI)
	g.msn[d][qn]++
	msn := g.msn[d][qn]
	g.sum.Messages++
	for mo := 0; ; {
		n := min(len(payload)-mo, g.maxSeg())
		seg := s
		seg.RV = 1
		seg.DDP = ddp.Header{L: mo+n == len(payload), DV: 1, QN: qn, MSN: msn, MO: uint32(mo)}
		seg.Payload = payload[mo : mo+n]
		g.segment(fromI, seg)
		mo += n
		if mo >= len(payload) {
			return
		}
	}
}

func (g *sctpGen) tagged(fromI bool, opc rdmap.Opcode, stag uint32, to uint64, payload []byte) {
	g.sum.Messages++
	for off := 0; ; {
		n := min(len(payload)-off, g.maxSeg())
		g.segment(fromI, rdmap.Segment{DDP: ddp.Header{T: true, L: off+n == len(payload), DV: 1, STag: stag, TO: to + uint64(off)},
			RV: 1, Opcode: opc, Payload: payload[off : off+n]})
		off += n
		if off >= len(payload) {
			return
		}
	}
}

func (g *sctpGen) op(op *Op) error {
	size := op.Size
	if size == 0 && op.Payload != nil {
		size = len(op.Payload)
	}
	fromI := op.Dir == I2R
	switch op.Kind {
	case Send, SendInv, SendSE, SendSEInv:
		opc := [...]rdmap.Opcode{rdmap.OpSend, rdmap.OpSendInvalidate, rdmap.OpSendSE, rdmap.OpSendSEInvalidate}[op.Kind-Send]
		s := rdmap.Segment{Opcode: opc}
		if opc.HasInvalidate() {
			s.InvalSTag = op.STag
		}
		g.untagged(fromI, s, g.payload(op, size))
	case Write:
		g.tagged(fromI, rdmap.OpWrite, op.STag, op.TO, g.payload(op, size))
	case Read:
		rr := rdmap.ReadRequest{SinkSTag: op.STag, SinkTO: op.TO, Size: uint32(size), SrcSTag: op.SrcSTag, SrcTO: op.SrcTO}
		g.untagged(fromI, rdmap.Segment{Opcode: rdmap.OpReadRequest, Read: rr}, nil)
		if !op.NoResponse {
			g.tagged(!fromI, rdmap.OpReadResponse, op.STag, op.TO, g.payload(op, size))
		}
	case Terminate:
		g.untagged(fromI, rdmap.Segment{Opcode: rdmap.OpTerminate, Term: op.Term}, nil)
	default:
		return fmt.Errorf("%w: kind %v over SCTP", ErrBadOp, op.Kind)
	}
	return nil
}

func (g *sctpGen) run() error {
	a := g.a
	if a.Handshake {
		in := sctp.Init{InitiateTag: g.tags[0], ARwnd: 65536, OutboundStreams: 2, InboundStreams: 2, InitialTSN: g.tsn[0],
			HasAdaptation: true, AdaptationIndication: 1}
		g.send(true, sctp.AppendInit(nil, sctp.ChunkInit, in))
		in = sctp.Init{InitiateTag: g.tags[1], ARwnd: 65536, OutboundStreams: 2, InboundStreams: 2, InitialTSN: g.tsn[1],
			HasAdaptation: true, AdaptationIndication: 1}
		g.send(false, sctp.AppendInit(nil, sctp.ChunkInitAck, in))
		g.send(true, sctp.AppendChunk(nil, sctp.ChunkCookieEcho, 0, []byte("cookie-0123456789")))
		g.send(false, sctp.AppendChunk(nil, sctp.ChunkCookieAck, 0, nil))
	}
	switch a.Session {
	case SessionPlain, SessionEnhanced:
		fi, fa, fr := sctp.FuncInitiate, sctp.FuncAccept, sctp.FuncReject
		var req, rep *mpa.Enhanced
		if a.Session == SessionEnhanced {
			fi, fa, fr = sctp.FuncEnhancedInitiate, sctp.FuncEnhancedAccept, sctp.FuncEnhancedReject
			req, rep = &a.Request, &a.Reply
		}
		g.session(true, fi, req, a.RequestPD)
		g.sum.State = "initiated"
		if a.Reject {
			tr := g.session(false, fr, rep, a.ReplyPD)
			tr.Findings = []TruthFindingC{{"sctp.session_rejected"}}
			g.sum.State = "rejected"
			return nil
		}
		g.session(false, fa, rep, a.ReplyPD)
		g.sum.State = "accepted"
		if rep != nil {
			g.sum.Enhanced, g.sum.IRD, g.sum.ORD = true, ptr(rep.IRD), ptr(rep.ORD)
		}
	}
	for i := range a.Ops {
		if err := g.op(&a.Ops[i]); err != nil {
			return err
		}
	}
	if a.Terminate {
		g.session(true, sctp.FuncTerminate, nil, nil)
		g.sum.State = "terminated"
	}
	if a.Shutdown {
		cum := g.tsn[1] - 1
		g.send(true, sctp.AppendChunk(nil, sctp.ChunkShutdown, 0, []byte{byte(cum >> 24), byte(cum >> 16), byte(cum >> 8), byte(cum)}))
		g.send(false, sctp.AppendChunk(nil, sctp.ChunkShutdownAck, 0, nil))
		g.send(true, sctp.AppendChunk(nil, sctp.ChunkShutdownComplete, 0, nil))
	}
	return nil
}

// GenerateSCTP is SCTPScenario.Generate.
func GenerateSCTP(s SCTPScenario, pcapW, truthW io.Writer) (*Result, error) {
	return s.Generate(pcapW, truthW)
}

func sctpOps() []Op {
	return []Op{
		{Dir: I2R, Kind: Send, Size: 64, Pattern: PatternText},
		{Dir: R2I, Kind: Send, Size: 100, Pattern: PatternText},
		{Dir: I2R, Kind: Write, Size: 2500, STag: 0x1000, TO: 0x10000},
		{Dir: I2R, Kind: Read, Size: 1500, STag: 0x2000, TO: 0x20000, SrcSTag: 0x3000, SrcTO: 0x30000},
		{Dir: I2R, Kind: SendInv, Size: 32, STag: 0x1000},
		{Dir: R2I, Kind: SendSE, Size: 10},
		{Dir: I2R, Kind: Send, Size: 0},
	}
}

func sctpBasic(seed int64) ExtScenario {
	return SCTPScenario{Name: "sctp-ddp", Seed: seed, Assocs: []SCTPAssoc{{
		Initiator: netip.AddrPortFrom(addrI4, 5001), Responder: netip.AddrPortFrom(addrR4, 5000),
		Handshake: true, Shutdown: true, Session: SessionPlain, RequestPD: []byte("ddp-sctp-request"), ReplyPD: []byte("ok"),
		Ops: sctpOps(), Terminate: true, Retransmit: []int{3},
	}}}
}

func sctpEnhanced(seed int64) ExtScenario {
	return SCTPScenario{Name: "sctp-ddp-enhanced", Seed: seed, Assocs: []SCTPAssoc{{
		Initiator: netip.AddrPortFrom(addrI6, 5001), Responder: netip.AddrPortFrom(addrR6, 5000),
		Handshake: true, Session: SessionEnhanced,
		Request: mpa.Enhanced{IRD: 16, ORD: 16, A: true, B: true, C: true},
		Reply:   mpa.Enhanced{IRD: 8, ORD: 16, B: true},
		Ops:     sctpOps(), Fragment: 600, MaxSegment: 1400,
	}, {
		Initiator: netip.AddrPortFrom(addrI4, 5003), Responder: netip.AddrPortFrom(addrR4, 5000),
		Session: SessionNone, Ops: []Op{{Dir: I2R, Kind: Send, Size: 40}, {Dir: R2I, Kind: Write, Size: 40, STag: 7}},
	}}}
}

func sctpReject(seed int64) ExtScenario {
	return SCTPScenario{Name: "sctp-ddp-reject", Seed: seed, Assocs: []SCTPAssoc{{
		Initiator: netip.AddrPortFrom(addrI4, 5001), Responder: netip.AddrPortFrom(addrR4, 5000),
		Handshake: true, Session: SessionEnhanced, Reject: true,
		Request: mpa.Enhanced{IRD: 64, ORD: 64}, Reply: mpa.Enhanced{IRD: 4, ORD: 4},
		RequestPD: []byte("want 64"), ReplyPD: []byte("would accept 4/4"),
	}}}
}

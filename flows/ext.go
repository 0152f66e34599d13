package flows

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ibcm"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/dissect/sctp"
)

// extState is the decoder state of the transports other than MPA over TCP:
// InfiniBand CM over RoCEv2 (exchanges tied together by communication ID)
// and DDP over SCTP (associations, RFC 5043).
type extState struct {
	cm     map[cmKey]*cmExch // (owner address, communication ID) of both sides
	cmQP   map[cmKey]*cmExch // (address, QPN) of both sides, for RC traffic
	cmAll  []*cmExch
	assocs map[connKey]*assoc
	asAll  []*assoc
	// open holds the associations with a user message being reassembled
	// or an RDMA message being gathered: records of earlier frames may
	// still come from them (see extPending).
	open map[*assoc]struct{}
}

// cmEnd identifies one end of a CM exchange: its IP address over RoCEv2,
// its LID over native InfiniBand (where addr is the zero Addr). LIDs, not
// GIDs, key native exchanges: the LRH is always there, the GRH only on
// some packets; a LID is unique within the subnet the capture was taken
// in, and a router's LID stands for the ends beyond it consistently.
type cmEnd struct {
	addr netip.Addr
	lid  uint16
}

// cmKey is an end and a 24- or 32-bit identifier owned by it.
type cmKey struct {
	end cmEnd
	id  uint32
}

// cmExch is one CM exchange.
type cmExch struct {
	id       int
	sum      CMSummary
	ini      cmEnd   // the REQ's (SIDR_REQ's) sender, or the first sender
	seen     [16]int // messages seen per type (MsgType - MsgREQ)
	lastTS   time.Time
	findings int
}

// maxExtFindingsPerConn bounds the findings of one exchange or association.
const maxExtFindingsPerConn = 400

// otherPacket handles a packet that is not TCP: RoCEv2 (UDP port 4791),
// native InfiniBand (capture.KindIB) and SCTP.
func (d *Decoder) otherPacket(p *capture.Packet) {
	switch p.Kind {
	case capture.KindUDP:
		if p.Dst.Port() == ibcm.UDPPort {
			d.rocePacket(p)
		}
	case capture.KindIB:
		d.ibPacket(p)
	case capture.KindBad:
		if p.BadTCP() {
			d.badTCP(p)
		}
	case capture.KindOther:
		if p.Fragment || !p.Src.IsValid() {
			return
		}
		if _, l4, proto, ok := findIP(p); ok && proto == sctp.IPProto {
			d.sctpPacket(p, l4)
		}
	}
}

// findIP locates the innermost IP header of p in p.Data: the
// capture package has decoded it and gives its addresses, so the header is
// the one at which those addresses sit. It returns the IP header, the
// transport octets after it (ending at the IP length) and the transport
// protocol; IPv6 extension headers are skipped.
func findIP(p *capture.Packet) (ip, l4 []byte, proto uint8, ok bool) {
	data := p.Data
	src, dst := p.Src.Addr(), p.Dst.Addr()
	// Scan upward: the capture package reports the innermost IP header's
	// addresses, which an outer (tunnel) header does not carry, and the
	// payload after the header cannot then be mistaken for one.
	for o := 0; o <= min(len(data)-20, 96); o++ {
		switch data[o] >> 4 {
		case 4:
			if !src.Is4() || len(data)-o < 20 {
				continue
			}
			hl := int(data[o]&15) * 4
			if hl < 20 || len(data)-o < hl || [4]byte(data[o+12:o+16]) != src.As4() || [4]byte(data[o+16:o+20]) != dst.As4() {
				continue
			}
			end := len(data)
			if tl := int(binary.BigEndian.Uint16(data[o+2:])); tl >= hl && o+tl < end {
				end = o + tl
			}
			return data[o : o+hl], data[o+hl : end], data[o+9], true
		case 6:
			if !src.Is6() || len(data)-o < 40 || [16]byte(data[o+8:o+24]) != src.As16() || [16]byte(data[o+24:o+40]) != dst.As16() {
				continue
			}
			end := len(data)
			if pl := int(binary.BigEndian.Uint16(data[o+4:])); pl != 0 && o+40+pl < end {
				end = o + 40 + pl
			}
			next, off := data[o+6], o+40
			for {
				switch next {
				case 0, 43, 60: // hop-by-hop, routing, destination options
					if end-off < 8 {
						return nil, nil, 0, false
					}
					next, off = data[off], off+(int(data[off+1])+1)*8
					if off > end {
						return nil, nil, 0, false
					}
					continue
				case 44: // fragment (an atomic one: capture marks the others)
					if end-off < 8 {
						return nil, nil, 0, false
					}
					next, off = data[off], off+8
					continue
				}
				break
			}
			return data[o:off], data[off:end], next, true
		}
	}
	return nil, nil, 0, false
}

// offsetOf returns the offset of sub within data (sub is a reslice of
// data), or -1.
func offsetOf(data, sub []byte) int {
	off := cap(data) - cap(sub)
	if off < 0 || off > len(data) {
		return -1
	}
	return off
}

// ---- InfiniBand CM over RoCEv2 and native InfiniBand ----

// rocePacket handles a RoCEv2 UDP datagram (IBA Annex A17): a CM MAD, or
// traffic to the QPs of an exchange.
func (d *Decoder) rocePacket(p *capture.Packet) {
	pk, err := ibcm.DecodeRoCE(p.Payload)
	src, dst := cmEnd{addr: p.Src.Addr().Unmap()}, cmEnd{addr: p.Dst.Addr().Unmap()}
	if err == ibcm.ErrNotCM {
		if len(p.Payload) >= ibcm.BTHLen {
			d.cmData(p, dst, pk.BTH.DestQP, max(p.PayloadWireLen, len(p.Payload)))
		}
		return
	}
	if err != nil {
		return // truncated, or a CM attribute that is not a message
	}
	icrc := CRCIncomplete
	if pk.HasICRC && p.PayloadWireLen <= len(p.Payload) {
		icrc = CRCUnchecked
		if ip, _, _, ok := findIP(p); ok {
			if off := offsetOf(p.Data, p.Payload); off >= 8 {
				icrc = CRCBad
				if ibcm.ICRCv2(ip, p.Data[off-8:off+len(p.Payload)]) == pk.ICRC {
					icrc = CRCOK
				}
			}
		}
	}
	rec := &CMRecord{BTH: pk.BTH, DETH: pk.DETH, MAD: pk.MAD, Msg: pk.Msg, ICRC: pk.ICRC, ICRCStatus: icrc}
	d.cmMessage(p, rec, src, dst, p.Src, p.Dst)
}

// ibPacket handles a native InfiniBand packet (capture.KindIB, pcap
// LINKTYPE_INFINIBAND) with the same CM logic as over RoCEv2: the ends are
// named by the LRH's LIDs and, when the packet has a GRH, the record's
// addresses are its GIDs (IBA Vol. 1 §7.7, §8.3).
//
// The native ICRC (IBA §7.8.1: for a local packet the LRH with VL masked,
// for a global one the GRH with TClass, FlowLabel and HopLmt masked) and
// the VCRC (§7.8.2) are not computed: no native capture was at hand to
// check such a computation against, so the ICRC of a native CM MAD is
// reported "unchecked" ("incomplete" when the capture cut the packet).
func (d *Decoder) ibPacket(p *capture.Packet) {
	pk, err := ibcm.DecodeIB(p.Payload)
	src, dst := cmEnd{lid: pk.LRH.SLID}, cmEnd{lid: pk.LRH.DLID}
	if err == ibcm.ErrNotCM {
		hdr := ibcm.LRHLen
		if pk.HasGRH {
			hdr += ibcm.GRHLen
		}
		if (pk.LRH.LNH == ibcm.LNHIBALocal || pk.HasGRH) && len(p.Payload) >= hdr+ibcm.BTHLen {
			// Count the BTH to the ICRC, as the RoCEv2 UDP payload is
			// counted: without LRH, GRH and the VCRC.
			d.cmData(p, dst, pk.BTH.DestQP, max(max(p.PayloadWireLen, len(p.Payload))-hdr-ibVCRCLen, ibcm.BTHLen))
		}
		return
	}
	if err != nil {
		return // truncated, a raw or IP packet, or a CM attribute that is not a message
	}
	icrc := CRCIncomplete
	if pk.HasICRC && p.PayloadWireLen <= len(p.Payload) {
		icrc = CRCUnchecked
	}
	rec := &CMRecord{HasLRH: true, LRH: pk.LRH, HasGRH: pk.HasGRH, GRH: pk.GRH,
		BTH: pk.BTH, DETH: pk.DETH, MAD: pk.MAD, Msg: pk.Msg, ICRC: pk.ICRC, ICRCStatus: icrc}
	var rsrc, rdst netip.AddrPort
	if pk.HasGRH {
		rsrc = netip.AddrPortFrom(netip.AddrFrom16(pk.GRH.SGID), 0)
		rdst = netip.AddrPortFrom(netip.AddrFrom16(pk.GRH.DGID), 0)
	}
	d.cmMessage(p, rec, src, dst, rsrc, rdst)
}

// ibVCRCLen is the size of the Variant CRC that ends a native InfiniBand
// packet (IBA Vol. 1 §7.8.2).
const ibVCRCLen = 2

// cmMessage ties one CM message to its exchange and emits its record. rec
// holds the headers, the message and the ICRC verdict; src and dst are the
// packet's ends, rsrc and rdst the record's addresses (the IP addresses
// and UDP ports over RoCEv2, the GIDs over native InfiniBand, zero without
// a GRH).
func (d *Decoder) cmMessage(p *capture.Packet, rec *CMRecord, src, dst cmEnd, rsrc, rdst netip.AddrPort) {
	e := &d.ext
	if e.cm == nil {
		e.cm = make(map[cmKey]*cmExch)
		e.cmQP = make(map[cmKey]*cmExch)
	}
	m := &rec.Msg
	local, remote := m.CommIDs()
	var ex *cmExch
	switch m.Type {
	case ibcm.MsgREQ, ibcm.MsgSIDRREQ:
		ex = e.cm[cmKey{src, local}]
	case ibcm.MsgSIDRREP:
		ex = e.cm[cmKey{dst, local}]
	default:
		if local != 0 {
			ex = e.cm[cmKey{src, local}]
		}
		if ex == nil && remote != 0 {
			ex = e.cm[cmKey{dst, remote}]
		}
	}
	if ex == nil {
		ex = &cmExch{id: d.newID(false), sum: CMSummary{FirstFrame: p.Frame, Native: rec.HasLRH}, ini: src}
		e.cmAll = append(e.cmAll, ex)
		if len(e.cmAll) > d.opts.MaxConns {
			d.evictCM()
		}
		s := &ex.sum
		// Who sent the first message captured says who the initiator
		// (the active side) is: REQ and RTU come from it, REP from the
		// passive side; a REJ or an MRA names the message it answers
		// (IBA §12.6.6-§12.6.7: 0 REQ, 1 REP), so one of a REP comes
		// from the initiator. A DREQ, a DREP or a REJ of "no message"
		// can come from either side.
		switch m.Type {
		case ibcm.MsgREQ, ibcm.MsgSIDRREQ, ibcm.MsgRTU:
			s.InitiatorKnown = true
		case ibcm.MsgREP, ibcm.MsgSIDRREP:
			ex.ini, s.InitiatorKnown = dst, true
		case ibcm.MsgREJ, ibcm.MsgMRA:
			switch answered(m) {
			case 0:
				ex.ini, s.InitiatorKnown = dst, true
			case 1:
				s.InitiatorKnown = true
			}
		}
		s.Initiator, s.Responder = src.addr, dst.addr
		s.InitiatorLID, s.ResponderLID = src.lid, dst.lid
		if ex.ini != src {
			s.Initiator, s.Responder = dst.addr, src.addr
			s.InitiatorLID, s.ResponderLID = dst.lid, src.lid
		}
	}
	s := &ex.sum
	if rec.HasGRH {
		// Over native InfiniBand the GRH, when there is one, names the
		// ends by GID: the summary keeps the last ones seen.
		s.Initiator, s.Responder = rsrc.Addr(), rdst.Addr()
		if ex.ini != src {
			s.Initiator, s.Responder = rdst.Addr(), rsrc.Addr()
		}
	}
	switch m.Type {
	case ibcm.MsgSIDRREQ, ibcm.MsgSIDRREP:
		e.cm[cmKey{ex.ini, local}] = ex
	default:
		if local != 0 {
			e.cm[cmKey{src, local}] = ex
		}
		if remote != 0 {
			e.cm[cmKey{dst, remote}] = ex
		}
	}
	s.Messages++
	s.LastFrame = p.Frame
	ex.lastTS = p.TS

	rec.Msg.PrivateData = append([]byte(nil), m.PrivateData...)

	// State and identity of the exchange.
	if sid, ok := m.ServiceID(); ok && (m.Type != ibcm.MsgSIDRREP || !s.HasService) {
		s.ServiceID, s.HasService = sid, true
	}
	rec.ServiceID, rec.HasService = s.ServiceID, s.HasService
	kind := ibcm.PDRaw
	if s.HasService {
		kind = ibcm.PDKindFor(m.Type, s.ServiceID)
	}
	rec.PD, _ = ibcm.DecodePrivateData(kind, rec.Msg.PrivateData)
	rec.Findings = rec.PD.Check(rec.Findings)
	if idx := int(m.Type - ibcm.MsgREQ); idx >= 0 && idx < len(ex.seen) {
		if ex.seen[idx] > 0 && m.Type != ibcm.MsgMRA {
			rec.Findings = append(rec.Findings, dissect.Finding{Severity: dissect.SeverityNote, Code: "cm.repeated",
				Msg: "CM " + m.Type.String() + " sent again (a retry: the answer was lost or late)", Ref: "IBA §12.9.2"})
		}
		ex.seen[idx]++
	}
	switch m.Type {
	case ibcm.MsgREQ:
		r := &m.REQ
		s.LocalCommID, s.PDKind, s.HaveREQ = r.LocalCommID, kind, true
		s.QPNI, s.PSNI = r.LocalQPN, r.StartingPSN
		if !s.HaveREP {
			s.ResponderResources, s.InitiatorDepth = r.ResponderResources, r.InitiatorDepth
		}
		if s.State == "" {
			s.State = "requested"
		}
		e.cmQP[cmKey{src, r.LocalQPN}] = ex
	case ibcm.MsgREP:
		r := &m.REP
		s.RemoteCommID, s.HaveREP = r.LocalCommID, true
		s.QPNR, s.PSNR = r.LocalQPN, r.StartingPSN
		s.ResponderResources, s.InitiatorDepth = r.ResponderResources, r.InitiatorDepth
		if s.State == "" || s.State == "requested" {
			s.State = "replied"
		}
		e.cmQP[cmKey{src, r.LocalQPN}] = ex
	case ibcm.MsgRTU:
		if s.State != "disconnecting" && s.State != "closed" {
			s.State = "established"
		}
	case ibcm.MsgREJ:
		r := &m.REJ
		s.Rejected, s.Reason, s.State = true, r.Reason, "rejected"
		// The REJ's local communication ID is its sender's: the
		// responder's when it rejects the REQ, the initiator's when
		// the initiator rejects the REP (Message REJected 1).
		switch {
		case r.LocalCommID == 0 || !s.InitiatorKnown:
		case src != ex.ini:
			s.RemoteCommID = r.LocalCommID
		case s.LocalCommID == 0:
			s.LocalCommID = r.LocalCommID
		}
		rec.Findings = append(rec.Findings, dissect.Finding{Severity: dissect.SeverityNote, Code: "cm.rejected",
			Msg: "the connection was rejected, reason " + strconv.Itoa(int(r.Reason)) + " (" + r.Reason.String() + ")",
			Ref: "IBA §12.6.7"})
	case ibcm.MsgDREQ:
		s.State = "disconnecting"
	case ibcm.MsgDREP:
		s.State = "closed"
	case ibcm.MsgSIDRREQ:
		s.SIDR, s.LocalCommID, s.PDKind = true, m.SIDRReq.RequestID, kind
		if s.State == "" {
			s.State = "sidr_requested"
		}
	case ibcm.MsgSIDRREP:
		r := &m.SIDRRep
		s.SIDR, s.QPNR = true, r.QPN
		if r.Status == 0 {
			s.State = "sidr_resolved"
		} else {
			s.State = "sidr_rejected"
			rec.Findings = append(rec.Findings, dissect.Finding{Severity: dissect.SeverityNote, Code: "cm.sidr_rejected",
				Msg: "service ID resolution failed: status " + strconv.Itoa(int(r.Status)) + " (" + r.Status.String() + ")",
				Ref: "IBA §12.11.2"})
		}
	}
	if rec.ICRCStatus == CRCBad {
		rec.Findings = append(rec.Findings, dissect.Finding{Severity: dissect.SeverityError, Code: "cm.icrc_bad",
			Msg: "the RoCEv2 invariant CRC does not match the packet", Ref: "IBA Annex A17 §A17.4.4"})
	}
	if (rec.PD.Kind == ibcm.PDIPCM || rec.PD.Kind == ibcm.PDHello) && !rec.HasLRH {
		// Over RoCEv2 the private data must name the packet's own IP
		// addresses. Native InfiniBand has none to compare with (the
		// private data names the IPoIB addresses).
		src, dst := src.addr, dst.addr
		ps, pd := rec.PD.IPCM.SrcAddr(), rec.PD.IPCM.DstAddr()
		if rec.PD.Kind == ibcm.PDHello {
			ps, pd = rec.PD.Hello.SrcAddr(), rec.PD.Hello.DstAddr()
		}
		if ps.Unmap() != src || pd.Unmap() != dst {
			rec.Findings = append(rec.Findings, dissect.Finding{Severity: dissect.SeverityNote, Code: "cm.pd_addr_mismatch",
				Msg: "the private data names " + ps.String() + " > " + pd.String() + ", the packet goes " + src.String() + " > " + dst.String(),
				Ref: "IBA Annex A11"})
		}
	}
	ex.findings += len(rec.Findings)
	for i := range rec.Findings {
		rec.Findings[i].Frames = []uint64{p.Frame}
	}
	r := mkRecord(RecCM, p.Frame, p.TS)
	r.Conn, r.Src, r.Dst, r.CM = ex.id, rsrc, rdst, rec
	r.Dir = DirUnknown
	if s.InitiatorKnown {
		r.Dir = DirR2I
		if src == ex.ini {
			r.Dir = DirI2R
		}
	}
	d.push(r)
}

// answered returns the message a REJ rejects or an MRA acknowledges (IBA
// §12.6.6 Table 107, §12.6.7 Table 108: 0 REQ, 1 REP, 2 LAP or no
// message).
func answered(m *ibcm.Message) uint8 {
	if m.Type == ibcm.MsgMRA {
		return m.MRA.MessageMRAed
	}
	return m.REJ.MessageRejected
}

// evictCM summarises and forgets the oldest exchange (the table holds at
// most Options.MaxConns).
func (d *Decoder) evictCM() {
	e := &d.ext
	victim := e.cmAll[0]
	e.cmAll = e.cmAll[1:]
	for k, ex := range e.cm {
		if ex == victim {
			delete(e.cm, k)
		}
	}
	for k, ex := range e.cmQP {
		if ex == victim {
			delete(e.cmQP, k)
		}
	}
	d.finishCM(victim)
}

// cmData counts traffic (RoCEv2, or native InfiniBand) to the QPs a CM
// exchange set up: a packet to QP qpn of end dst, of the given number of
// octets from the BTH to the ICRC.
func (d *Decoder) cmData(p *capture.Packet, dst cmEnd, qpn uint32, octets int) {
	if d.ext.cmQP == nil {
		return
	}
	ex := d.ext.cmQP[cmKey{dst, qpn}]
	if ex == nil {
		return
	}
	ex.sum.DataPackets++
	ex.sum.DataOctets += uint64(octets)
	ex.sum.LastFrame = p.Frame
	ex.lastTS = p.TS
}

// finishCM emits the summary of an exchange.
func (d *Decoder) finishCM(ex *cmExch) {
	s := ex.sum
	s.Findings = ex.findings
	if s.State == "" {
		s.State = "unknown"
	}
	r := mkRecord(RecExtConn, s.LastFrame, ex.lastTS)
	r.Conn = ex.id
	r.CM = &CMRecord{Summary: &s}
	d.push(r)
}

// ---- DDP over SCTP (RFC 5043) ----

// assoc is one SCTP association: two endpoints, in order of first
// appearance.
type assoc struct {
	id             int // -1 until a DDP chunk is seen
	a, b           netip.AddrPort
	sum            SCTPSummary
	initKnown      bool
	initiator      int    // 0: a, 1: b
	initTag        uint32 // Initiate Tag of the INIT that opened it, when hasInit
	hasInit        bool
	done           bool // summarised: a new association took its endpoints
	dirs           [2]sctpDir
	reads          []pendingRead
	checksumErrors int
	findings       int
	firstFrame     uint64
	lastFrame      uint64
	lastTS         time.Time
}

// sctpDir is the state of one direction of an association.
type sctpDir struct {
	// frags holds the fragments of user messages not yet whole, by TSN:
	// a message is the run of consecutive TSNs from a B chunk to an E
	// chunk (RFC 9260 §6.9), whatever order the capture has them in.
	frags      map[uint32]*sctpFrag
	fragOctets int
	highTSN    uint32 // highest TSN of a fragment seen (serial order)
	lowTSN     uint32 // lowest TSN in frags, when lowOK
	lowOK      bool
	minFrame   uint64 // earliest frame in frags, when minOK
	minOK      bool
	seen       map[uint32]struct{} // recent TSNs, to drop retransmissions
	seenFIFO   []uint32
	msgs       map[msgKey]*sctpMsg
}

// sctpFrag is one fragment of a user message: the DATA chunk (its user
// data copied) and the frame that carried it.
type sctpFrag struct {
	d     sctp.Data
	frame uint64
}

type sctpMsg struct {
	m      MessageRecord
	ts     time.Time
	lastTS time.Time
	next   uint64
}

const (
	maxSCTPMessage = 1 << 20 // largest reassembled user message
	seenTSNs       = 8192    // TSNs remembered per direction
	// fragWindow is how far (in TSNs) the fragments of a direction may
	// run ahead of a fragment whose message is not yet whole before that
	// message is given up as lost: a retransmission fills a hole within
	// about a congestion window.
	fragWindow = 4096
	// maxFragOctets bounds the fragment octets held per direction.
	maxFragOctets = 4 * maxSCTPMessage
)

func (a *assoc) side(src netip.AddrPort) int {
	if src == a.a {
		return 0
	}
	return 1
}

func (a *assoc) dir(s int) Dir {
	switch {
	case !a.initKnown:
		return DirUnknown
	case s == a.initiator:
		return DirI2R
	}
	return DirR2I
}

func (d *Decoder) sctpPacket(p *capture.Packet, pkt []byte) {
	h, err := sctp.DecodeHeader(pkt)
	if err != nil {
		return
	}
	src := netip.AddrPortFrom(p.Src.Addr(), h.SrcPort)
	dst := netip.AddrPortFrom(p.Dst.Addr(), h.DstPort)
	e := &d.ext
	if e.assocs == nil {
		e.assocs = make(map[connKey]*assoc)
	}
	k := keyOf(src, dst)
	a := e.assocs[k]
	if a == nil {
		a = &assoc{id: -1, a: src, b: dst, firstFrame: p.Frame}
		e.assocs[k] = a
		e.asAll = append(e.asAll, a)
	}
	a.lastFrame, a.lastTS = p.Frame, p.TS
	side := a.side(src)
	if p.CapLen >= p.WireLen && sctp.Checksum(pkt) != h.Checksum {
		a.checksumErrors++
	}
	for off := sctp.HeaderLen; off < len(pkt); {
		c, next, err := sctp.NextChunk(pkt, off)
		off = next
		if err != nil {
			break
		}
		switch c.Type {
		case sctp.ChunkInit:
			in, err := sctp.DecodeInit(c)
			if err != nil {
				break
			}
			if a.hasInit && in.InitiateTag != a.initTag {
				// A new association between the same endpoints (an
				// INIT with another Initiate Tag, RFC 9260 §5.1): the
				// old one ends here. An INIT sent again keeps its tag.
				a = d.newAssoc(a, src, dst, p)
				side = a.side(src)
			}
			if !a.hasInit {
				a.hasInit, a.initTag = true, in.InitiateTag
			}
			if !a.initKnown {
				a.initKnown, a.initiator = true, side
			}
		case sctp.ChunkData:
			dc, err := sctp.DecodeData(c)
			if err != nil || (dc.PPID != sctp.PPIDDDPSegment && dc.PPID != sctp.PPIDDDPSessionControl) {
				continue
			}
			d.sctpData(p, a, side, dc)
			if _, ok := a.pendingFrame(); ok {
				if e.open == nil {
					e.open = make(map[*assoc]struct{})
				}
				e.open[a] = struct{}{}
			}
		}
	}
}

// newAssoc summarises the association old (when it carried DDP) and puts
// a new one for the same endpoints in its place, starting at packet p.
func (d *Decoder) newAssoc(old *assoc, src, dst netip.AddrPort, p *capture.Packet) *assoc {
	e := &d.ext
	if old.id >= 0 {
		d.finishAssoc(old)
	}
	old.done = true
	delete(e.open, old)
	a := &assoc{id: -1, a: src, b: dst, firstFrame: p.Frame, lastFrame: p.Frame, lastTS: p.TS}
	e.assocs[keyOf(src, dst)] = a
	e.asAll = append(e.asAll, a)
	return a
}

// sctpData handles one DATA chunk of PPID 16 or 17: drops retransmissions,
// reassembles fragmented user messages, and decodes whole ones.
func (d *Decoder) sctpData(p *capture.Packet, a *assoc, side int, dc sctp.Data) {
	if a.id < 0 {
		a.id = d.newID(false)
	}
	sd := &a.dirs[side]
	if sd.seen == nil {
		sd.seen = make(map[uint32]struct{})
	}
	if _, dup := sd.seen[dc.TSN]; dup {
		return
	}
	sd.seen[dc.TSN] = struct{}{}
	sd.seenFIFO = append(sd.seenFIFO, dc.TSN)
	if len(sd.seenFIFO) > seenTSNs {
		delete(sd.seen, sd.seenFIFO[0])
		sd.seenFIFO = sd.seenFIFO[1:]
	}
	if dc.Unfragmented() {
		d.sctpMessage(p, a, side, dc, dc.UserData, []uint64{p.Frame})
		return
	}
	d.sctpFragment(p, a, side, dc)
}

// tsnBefore reports whether TSN x comes before y in serial number
// arithmetic (RFC 9260 §1.6, RFC 1982).
func tsnBefore(x, y uint32) bool { return int32(x-y) < 0 }

// sctpFragment files one fragment of a user message and, when the run of
// TSNs from its message's B chunk to its E chunk is all there, decodes
// the message (RFC 9260 §6.9: the fragments of a message have consecutive
// TSNs; they may be captured in any order, a lost one sent again later).
// A message is given up as lost (sctp.fragment_lost) when fragments
// fragWindow TSNs further on arrive while it is not whole, when the
// direction holds more than maxFragOctets of fragments, or at the end of
// the capture.
func (d *Decoder) sctpFragment(p *capture.Packet, a *assoc, side int, dc sctp.Data) {
	sd := &a.dirs[side]
	if sd.frags == nil {
		sd.frags = make(map[uint32]*sctpFrag)
	}
	if len(sd.frags) == 0 || tsnBefore(sd.highTSN, dc.TSN) {
		sd.highTSN = dc.TSN
	}
	dc.UserData = append([]byte(nil), dc.UserData...)
	sd.frags[dc.TSN] = &sctpFrag{d: dc, frame: p.Frame}
	sd.fragOctets += len(dc.UserData)
	if !sd.minOK || p.Frame < sd.minFrame {
		sd.minFrame, sd.minOK = p.Frame, true
	}
	if !sd.lowOK || tsnBefore(dc.TSN, sd.lowTSN) {
		sd.lowTSN, sd.lowOK = dc.TSN, true
	}
	if first, last, ok := sd.fragRun(dc.TSN); ok {
		d.sctpWhole(a, side, first, last)
	}
	d.sctpExpire(a, side)
}

// fragRun returns the TSNs of the first and last fragments of the message
// the fragment of TSN tsn belongs to, and whether all of them are there:
// consecutive TSNs on one stream with one SSN, from a B chunk to an E
// chunk.
func (sd *sctpDir) fragRun(tsn uint32) (first, last uint32, ok bool) {
	f := sd.frags[tsn]
	same := func(g *sctpFrag) bool { return g.d.Stream == f.d.Stream && g.d.SSN == f.d.SSN }
	first = tsn
	for n := 0; sd.frags[first].d.Flags&sctp.FlagBegin == 0; n++ {
		g := sd.frags[first-1]
		if g == nil || g.d.Flags&sctp.FlagEnd != 0 || !same(g) || n > len(sd.frags) {
			return 0, 0, false
		}
		first--
	}
	last = tsn
	for n := 0; sd.frags[last].d.Flags&sctp.FlagEnd == 0; n++ {
		g := sd.frags[last+1]
		if g == nil || g.d.Flags&sctp.FlagBegin != 0 || !same(g) || n > len(sd.frags) {
			return 0, 0, false
		}
		last++
	}
	return first, last, true
}

// sctpWhole decodes the message made of the fragments first..last (TSNs)
// and forgets them. The message's record is at the earliest frame that
// carried one of them.
func (d *Decoder) sctpWhole(a *assoc, side int, first, last uint32) {
	sd := &a.dirs[side]
	var msg []byte
	var frames []uint64
	head := sd.frags[first].d
	tooLong := false
	for t := first; ; t++ {
		f := sd.frags[t]
		if !tooLong && len(msg)+len(f.d.UserData) > maxSCTPMessage {
			tooLong, msg = true, nil
		}
		if !tooLong {
			msg = append(msg, f.d.UserData...)
		}
		frames = append(frames, f.frame)
		sd.dropFrag(t)
		if t == last {
			break
		}
	}
	sort.Slice(frames, func(i, j int) bool { return frames[i] < frames[j] })
	frames = slices.Compact(frames)
	if tooLong {
		d.sctpFinding(a, dissect.SeverityWarning, "sctp.fragment_too_long",
			"a fragmented user message exceeds "+strconv.Itoa(maxSCTPMessage)+" octets and was dropped", "", frames[len(frames)-1])
		return
	}
	fp := capture.Packet{Frame: frames[0]}
	if ts, ok := d.frameTime(frames[0]); ok {
		fp.TS = ts
	} else {
		fp.TS = a.lastTS
	}
	head.UserData = nil
	d.sctpMessage(&fp, a, side, head, msg, frames)
}

// dropFrag forgets the fragment of TSN t.
func (sd *sctpDir) dropFrag(t uint32) {
	f := sd.frags[t]
	if f == nil {
		return
	}
	sd.fragOctets -= len(f.d.UserData)
	delete(sd.frags, t)
	if f.frame == sd.minFrame {
		sd.minOK = false
	}
	if t == sd.lowTSN {
		sd.lowOK = false
	}
}

// earliestFrag returns the earliest frame that carried a fragment still
// held.
func (sd *sctpDir) earliestFrag() (uint64, bool) {
	if len(sd.frags) == 0 {
		return 0, false
	}
	if !sd.minOK {
		for _, f := range sd.frags {
			if !sd.minOK || f.frame < sd.minFrame {
				sd.minFrame, sd.minOK = f.frame, true
			}
		}
	}
	return sd.minFrame, true
}

// sctpExpire gives up the messages of side whose fragments fell
// fragWindow TSNs behind the newest, or the oldest ones while the side
// holds more than maxFragOctets: one sctp.fragment_lost per run of
// consecutive TSNs given up, at its first frame.
func (d *Decoder) sctpExpire(a *assoc, side int) {
	sd := &a.dirs[side]
	if len(sd.frags) == 0 {
		return
	}
	if !sd.lowOK {
		for t := range sd.frags {
			if !sd.lowOK || tsnBefore(t, sd.lowTSN) {
				sd.lowTSN, sd.lowOK = t, true
			}
		}
	}
	low := sd.highTSN - fragWindow
	if !tsnBefore(sd.lowTSN, low) && sd.fragOctets <= maxFragOctets {
		return
	}
	var gone []uint32
	for t := range sd.frags {
		if tsnBefore(t, low) {
			gone = append(gone, t)
		}
	}
	if len(gone) == 0 {
		// Over the octet bound: give up the oldest TSNs, down to half.
		all := make([]uint32, 0, len(sd.frags))
		for t := range sd.frags {
			all = append(all, t)
		}
		sort.Slice(all, func(i, j int) bool { return tsnBefore(all[i], all[j]) })
		held := sd.fragOctets
		for _, t := range all {
			if held <= maxFragOctets/2 {
				break
			}
			held -= len(sd.frags[t].d.UserData)
			gone = append(gone, t)
		}
	}
	d.sctpLost(a, side, gone)
}

// sctpLost forgets the fragments of TSNs ts and reports each message
// among them as lost: a message runs from a B chunk (or the first TSN) to
// an E chunk (or the last), holes included.
func (d *Decoder) sctpLost(a *assoc, side int, ts []uint32) {
	sd := &a.dirs[side]
	sort.Slice(ts, func(i, j int) bool { return tsnBefore(ts[i], ts[j]) })
	for i := 0; i < len(ts); {
		j, frame := i, sd.frags[ts[i]].frame
		for j+1 < len(ts) && sd.frags[ts[j+1]].d.Flags&sctp.FlagBegin == 0 && sd.frags[ts[j]].d.Flags&sctp.FlagEnd == 0 {
			j++
			frame = min(frame, sd.frags[ts[j]].frame)
		}
		held := "TSN " + strconv.FormatUint(uint64(ts[i]), 10)
		if j > i {
			held = "TSNs " + strconv.FormatUint(uint64(ts[i]), 10) + "-" + strconv.FormatUint(uint64(ts[j]), 10)
		}
		d.sctpFinding(a, dissect.SeverityWarning, "sctp.fragment_lost",
			"a fragmented DDP user message never became whole: fragments missing from the capture ("+
				strconv.Itoa(j-i+1)+" held, "+held+")", "RFC 9260 §6.9", frame)
		for k := i; k <= j; k++ {
			sd.dropFrag(ts[k])
		}
		i = j + 1
	}
}

// pendingFrame returns the earliest frame an association may still emit a
// record for: the first fragment of a user message being reassembled, or
// the first segment of an RDMA message being gathered.
func (a *assoc) pendingFrame() (uint64, bool) {
	var f uint64
	ok := false
	for i := range a.dirs {
		sd := &a.dirs[i]
		if ff, fok := sd.earliestFrag(); fok && (!ok || ff < f) {
			f, ok = ff, true
		}
		for _, m := range sd.msgs {
			if !ok || m.m.FirstFrame < f {
				f, ok = m.m.FirstFrame, true
			}
		}
	}
	return f, ok
}

// extPending returns the earliest frame for which the non-TCP transports
// may still emit a record (an RDMA message over SCTP is emitted, with the
// frame of its first segment, when its last segment arrives). Decoder.release
// must not release records from that frame on: it is the counterpart of
// direction.pendingFrame for the TCP connections.
func (d *Decoder) extPending() (uint64, bool) {
	if len(d.ext.open) == 0 {
		return 0, false
	}
	var f uint64
	ok := false
	for a := range d.ext.open {
		af, aok := a.pendingFrame()
		if !aok {
			delete(d.ext.open, a)
			continue
		}
		if !ok || af < f {
			f, ok = af, true
		}
	}
	return f, ok
}

// sctpFinding emits a finding record on an association.
func (d *Decoder) sctpFinding(a *assoc, sev dissect.Severity, code, msg, ref string, frame uint64) {
	if a.findings >= maxExtFindingsPerConn {
		return
	}
	a.findings++
	ts, ok := d.frameTime(frame)
	if !ok {
		ts = a.lastTS
	}
	r := mkRecord(RecFinding, frame, ts)
	r.Conn = a.id
	r.Finding = &dissect.Finding{Severity: sev, Code: code, Msg: msg, Ref: ref, Frames: []uint64{frame}}
	d.push(r)
}

// sctpMessage decodes one whole user message of PPID 16 or 17.
func (d *Decoder) sctpMessage(p *capture.Packet, a *assoc, side int, dc sctp.Data, msg []byte, frames []uint64) {
	rec := &SCTPRecord{Stream: dc.Stream, SSN: dc.SSN, TSN: dc.TSN, PPID: dc.PPID, Flags: dc.Flags, Frames: frames}
	r := &Record{Frame: p.Frame, TS: p.TS, Conn: a.id, SCTP: rec}
	r.Src, r.Dst = a.a, a.b
	if side == 1 {
		r.Src, r.Dst = a.b, a.a
	}
	s := &a.sum
	if dc.PPID == sctp.PPIDDDPSessionControl {
		r.Type = RecSCTPSession
		sc, err := sctp.DecodeSessionControl(msg)
		if err != nil && err != dissect.ErrBadLength {
			rec.Findings = append(rec.Findings, dissect.Finding{Severity: dissect.SeverityWarning, Code: "sctp.session_truncated",
				Msg: "DDP Stream Session Control message shorter than its 4-octet header", Ref: "RFC 5043"})
		} else if err == dissect.ErrBadLength {
			rec.Findings = append(rec.Findings, dissect.Finding{Severity: dissect.SeverityWarning, Code: "sctp.session_pd_len",
				Msg: "private data length " + strconv.Itoa(int(sc.PDLen)) + " runs past the message (" +
					strconv.Itoa(len(sc.PD)) + " octets)", Ref: "RFC 5043"})
		}
		sc.PD = append([]byte(nil), sc.PD...)
		rec.Session = sc
		rec.Findings = sc.Check(rec.Findings)
		if en, _, ok := sc.Enhanced(); ok {
			rec.HasEnhanced, rec.Enhanced, rec.RTR = true, en, en.RTR(mpa.FlagsDraft01)
		}
		if sc.Func.Initiating() && !a.initKnown {
			a.initKnown, a.initiator = true, side
		}
		switch {
		case sc.Func.Initiating():
			if s.State == "" || s.State == "streaming" {
				s.State = "initiated"
			}
		case sc.Func == sctp.FuncAccept || sc.Func == sctp.FuncEnhancedAccept:
			s.State = "accepted"
			if rec.HasEnhanced {
				s.Enhanced, s.IRD, s.ORD, s.RTR = true, rec.Enhanced.IRD, rec.Enhanced.ORD, rec.RTR
			}
		case sc.Func.Rejecting():
			s.State = "rejected"
			rec.Findings = append(rec.Findings, dissect.Finding{Severity: dissect.SeverityNote, Code: "sctp.session_rejected",
				Msg: "the DDP stream session was rejected (" + sc.Func.String() + ")", Ref: "RFC 5043"})
		case sc.Func == sctp.FuncTerminate:
			s.State = "terminated"
		}
	} else {
		r.Type = RecDDPSCTP
		seg, err := rdmap.Decode(msg)
		if err == nil || err == dissect.ErrUnknownOpcode {
			rec.SegOK = true
			rec.PayloadLen = len(seg.Payload)
			seg.Payload = nil
			rec.Seg = seg
			rec.Findings = seg.Check(rec.Findings)
			s.DDPVersion = int(seg.DDP.DV)
			s.Segments++
			s.Octets += uint64(rec.PayloadLen)
			if s.State == "" {
				s.State = "streaming"
			}
		} else {
			rec.SegErr = err
			rec.Findings = append(rec.Findings, dissect.Finding{Severity: dissect.SeverityWarning, Code: "sctp.ddp_undecodable",
				Msg: "the DDP segment could not be decoded: " + err.Error(), Ref: "RFC 5043; RFC 5041 §4"})
		}
	}
	if n := maxExtFindingsPerConn - a.findings; len(rec.Findings) > n {
		rec.Findings = rec.Findings[:max(n, 0)]
	}
	a.findings += len(rec.Findings)
	for i := range rec.Findings {
		rec.Findings[i].Frames = []uint64{p.Frame}
	}
	r.Dir = a.dir(side)
	d.push(r)
	if r.Type == RecDDPSCTP && rec.SegOK {
		d.sctpGather(a, side, r)
	}
}

// sctpGather gathers the DDP segments of RDMA messages (RFC 5041 §5) and
// emits a RecMessage when the last one arrives; an RDMA Read Response is
// tied to its Read Request as over MPA.
func (d *Decoder) sctpGather(a *assoc, si int, r *Record) {
	rec := r.SCTP
	seg := &rec.Seg
	sd := &a.dirs[si]
	if sd.msgs == nil {
		sd.msgs = make(map[msgKey]*sctpMsg)
	}
	k := msgKey{tagged: seg.DDP.T}
	off := uint64(seg.DDP.MO)
	if seg.DDP.T {
		k.stag, off = seg.DDP.STag, seg.DDP.TO
	} else {
		k.qn, k.msn = seg.DDP.QN, seg.DDP.MSN
	}
	m := sd.msgs[k]
	if m == nil {
		if len(sd.msgs) >= d.opts.MaxMessages {
			return
		}
		m = &sctpMsg{m: MessageRecord{Opcode: seg.Opcode, FirstFrame: r.Frame, Tagged: seg.DDP.T,
			STag: seg.DDP.STag, TO: seg.DDP.TO, QN: seg.DDP.QN, MSN: seg.DDP.MSN}, ts: r.TS, next: off}
		sd.msgs[k] = m
	}
	m.m.Segments++
	m.m.Length += uint64(rec.PayloadLen)
	m.m.LastFrame = rec.Frames[len(rec.Frames)-1]
	m.lastTS = r.TS
	m.next = off + uint64(rec.PayloadLen)
	if !seg.DDP.L {
		return
	}
	delete(sd.msgs, k)
	switch m.m.Opcode {
	case rdmap.OpReadRequest:
		if len(a.reads) >= maxPendingReads {
			a.reads = a.reads[1:]
		}
		a.reads = append(a.reads, pendingRead{requester: side(si), sinkSTag: seg.Read.SinkSTag, size: seg.Read.Size,
			frame: m.m.FirstFrame, ts: m.ts})
	case rdmap.OpReadResponse:
		for i, pr := range a.reads {
			if pr.requester != side(si) && pr.sinkSTag == m.m.STag {
				m.m.RequestFrame, m.m.Latency = pr.frame, m.lastTS.Sub(pr.ts)
				a.reads = append(a.reads[:i], a.reads[i+1:]...)
				break
			}
		}
	}
	a.sum.Messages++
	mr := m.m
	mr.SCTP = true
	out := mkRecord(RecMessage, mr.FirstFrame, m.ts)
	out.Conn, out.Src, out.Dst, out.Dir, out.Message = a.id, r.Src, r.Dst, r.Dir, &mr
	d.push(out)
}

// finishAssoc emits the summary of an association that carried DDP.
func (d *Decoder) finishAssoc(a *assoc) {
	if a.id < 0 {
		return
	}
	for s := range a.dirs {
		if sd := &a.dirs[s]; len(sd.frags) > 0 {
			ts := make([]uint32, 0, len(sd.frags))
			for t := range sd.frags {
				ts = append(ts, t)
			}
			d.sctpLost(a, s, ts)
		}
	}
	for s := range a.dirs {
		sd := &a.dirs[s]
		keys := make([]msgKey, 0, len(sd.msgs))
		for k := range sd.msgs {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			fi, fj := sd.msgs[keys[i]].m.FirstFrame, sd.msgs[keys[j]].m.FirstFrame
			return fi < fj || fi == fj && lessKey(keys[i], keys[j])
		})
		for _, k := range keys {
			d.sctpFinding(a, dissect.SeverityNote, "ddp.message_incomplete",
				"an RDMA message was still incomplete (no segment with L=1) when the capture ended", "RFC 5041 §5",
				sd.msgs[k].m.FirstFrame)
		}
	}
	if a.checksumErrors > 0 {
		d.sctpFinding(a, dissect.SeverityNote, "sctp.checksum_bad",
			strconv.Itoa(a.checksumErrors)+" packets with a CRC32c that does not match (checksum offload on the capturing host leaves them so)",
			"RFC 9260 §6.8", a.lastFrame)
	}
	s := a.sum
	s.A, s.B = a.a, a.b
	if a.initKnown {
		s.InitiatorKnown = true
		s.Initiator, s.Responder = a.a, a.b
		if a.initiator == 1 {
			s.Initiator, s.Responder = a.b, a.a
		}
	}
	if s.Segments == 0 {
		s.DDPVersion = -1
	}
	if s.State == "" {
		s.State = "streaming"
	}
	s.ChecksumErrors = a.checksumErrors
	s.Findings = a.findings
	s.FirstFrame, s.LastFrame = a.firstFrame, a.lastFrame
	r := mkRecord(RecExtConn, a.lastFrame, a.lastTS)
	r.Conn = a.id
	r.SCTP = &SCTPRecord{Summary: &s}
	d.push(r)
}

// closeExt ends the non-TCP transports at the end of the capture: the
// summaries of CM exchanges and SCTP associations, in connection order.
func (d *Decoder) closeExt() {
	e := &d.ext
	type fin struct {
		id int
		f  func()
	}
	var all []fin
	for _, ex := range e.cmAll {
		all = append(all, fin{ex.id, func() { d.finishCM(ex) }})
	}
	for _, a := range e.asAll {
		if a.id >= 0 && !a.done {
			all = append(all, fin{a.id, func() { d.finishAssoc(a) }})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].id < all[j].id })
	for _, f := range all {
		f.f()
	}
	*e = extState{}
}

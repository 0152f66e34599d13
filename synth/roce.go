package synth

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/dissect/ibcm"
)

// CMScenario describes InfiniBand Communication Management exchanges over
// RoCEv2 (IBA Annex A17, UDP port 4791) as Linux rdma_cm and the rxe driver
// send them, or the same exchanges over native InfiniBand (Link). Each
// exchange is one connection of the ground truth.
type CMScenario struct {
	Name      string
	Seed      int64
	Start     time.Time
	Link      CMLink
	Exchanges []CMExchange
}

// CMLink says how the MADs of a CMScenario travel.
type CMLink uint8

// Links of a CMScenario.
const (
	// CMRoCEv2: Ethernet, IPv4 or IPv6, UDP to port 4791, BTH, DETH, MAD,
	// ICRC (IBA Annex A17), in an Ethernet pcap.
	CMRoCEv2 CMLink = iota
	// CMNativeIB: native InfiniBand packets, LRH, a GRH when
	// CMExchange.GRH says so, BTH, DETH, MAD, ICRC and VCRC (IBA Vol. 1
	// §5, §7.7, §8.3), in a pcap of link type LINKTYPE_INFINIBAND (247).
	// The IP addresses of the exchange appear only in the private data
	// (the IP CM header or Hello, naming the IPoIB addresses).
	CMNativeIB
)

// CMOutcome says how an exchange ends.
type CMOutcome uint8

// Outcomes of a CM exchange.
const (
	// CMAccept: REQ, [MRA], REP, RTU, RC traffic, DREQ, DREP.
	CMAccept CMOutcome = iota
	// CMReject: REQ, REJ with CMExchange.Reason and ReplyPD.
	CMReject
	// CMNoReply: the REQ alone.
	CMNoReply
	// CMSIDR: SIDR_REQ (UDP port space) and SIDR_REP.
	CMSIDR
)

// CMExchange is one CM exchange. Initiator is the active side's address and
// rdma_cm source port (the port of the IP CM header), Responder the passive
// side's address and the service's port (the service ID's port).
type CMExchange struct {
	Initiator, Responder netip.AddrPort
	// Hello selects seed 002's format: service ID 0x0000000001 02 <port>,
	// a Hello at the start of the REQ's private data and a HelloAck in the
	// REP's. Otherwise the deployed format of IBA Annex A11: service ID
	// 0x0000000001 06 <port> and the IP CM header.
	Hello bool
	// Cap is the Hello and HelloAck capability nibble (ibcm.CapInvalidate,
	// ibcm.CapZBVA). HelloMajV and HelloIPV override MajV 1 and the IPV of
	// the addresses when non-zero (to produce findings).
	Cap       uint8
	HelloMajV uint8
	HelloIPV  uint8
	Outcome   CMOutcome
	Reason    ibcm.RejectReason
	// MRA sends an MRA for the REQ before the REP.
	MRA bool
	// RequestPD and ReplyPD are the consumers' private data (after the IP
	// CM header or the Hello/HelloAck).
	RequestPD, ReplyPD []byte
	// DataPackets is the number of RC packets sent after the RTU (half
	// each way, alternating).
	DataPackets int
	// Repeat sends the REQ twice (a CM retry).
	Repeat bool
	// InitiatorLID and ResponderLID are the ports' LIDs over native
	// InfiniBand (0: 2i+2 and 2i+1 for exchange i). GRH puts a Global
	// Route Header with the ports' link-local GIDs (fe80::/64 and the CA
	// GUID) on every packet of the exchange. RoCEv2 ignores the three.
	InitiatorLID, ResponderLID uint16
	GRH                        bool
}

// ErrBadExchange: a CM exchange cannot be generated as described.
var ErrBadExchange = errors.New("synth: bad CM exchange")

// TruthCM is one CM message as generated. Keys follow iwarpdump's JSON
// Lines "cm" record.
type TruthCM struct {
	V                  int             `json:"v"`
	Type               string          `json:"type"` // "cm"
	Frame              uint64          `json:"frame"`
	TS                 string          `json:"ts"`
	Conn               int             `json:"conn"`
	Src                *string         `json:"src"` // null: native InfiniBand without a GRH
	Dst                *string         `json:"dst"`
	SLID               *uint16         `json:"slid,omitempty"` // native InfiniBand only
	DLID               *uint16         `json:"dlid,omitempty"`
	Dir                string          `json:"dir"`
	Msg                string          `json:"msg"`
	TransactionID      uint64          `json:"transaction_id"`
	LocalCommID        uint32          `json:"local_comm_id"`
	RemoteCommID       uint32          `json:"remote_comm_id"`
	ServiceID          *uint64         `json:"service_id,omitempty"`
	PortSpace          string          `json:"port_space,omitempty"`
	Port               *uint16         `json:"port,omitempty"`
	Service            string          `json:"service,omitempty"`
	QPN                *uint32         `json:"qpn,omitempty"`
	StartPSN           *uint32         `json:"start_psn,omitempty"`
	ResponderResources *uint8          `json:"responder_resources,omitempty"`
	InitiatorDepth     *uint8          `json:"initiator_depth,omitempty"`
	Reason             *uint16         `json:"reason,omitempty"`
	ReasonName         string          `json:"reason_name,omitempty"`
	PDLen              int             `json:"pd_len"`
	IPCM               *TruthIPCM      `json:"ip_cm,omitempty"`
	Hello              *TruthHello     `json:"hello,omitempty"`
	HelloAck           *TruthHelloAck  `json:"hello_ack,omitempty"`
	PD                 string          `json:"pd"`
	ICRCStatus         string          `json:"icrc_status"`
	Findings           []TruthFindingC `json:"findings,omitempty"`
}

// TruthIPCM is the IP CM header of a REQ (IBA Annex A11).
type TruthIPCM struct {
	MajV uint8  `json:"majv"`
	MinV uint8  `json:"minv"`
	IPV  uint8  `json:"ipv"`
	Port uint16 `json:"port"`
	Src  string `json:"src"`
	Dst  string `json:"dst"`
}

// TruthHello is a seed 002 Hello.
type TruthHello struct {
	MajV       uint8  `json:"majv"`
	MinV       uint8  `json:"minv"`
	IPV        uint8  `json:"ipv"`
	Invalidate bool   `json:"invalidate"`
	ZBVA       bool   `json:"zbva"`
	Src        string `json:"src"`
	Dst        string `json:"dst"`
}

// TruthHelloAck is a seed 002 HelloAck.
type TruthHelloAck struct {
	MajV       uint8 `json:"majv"`
	MinV       uint8 `json:"minv"`
	Invalidate bool  `json:"invalidate"`
	ZBVA       bool  `json:"zbva"`
}

// TruthFindingC is a finding the generated message must produce (code
// only: the decoder's wording is its own).
type TruthFindingC struct {
	Code string `json:"code"`
}

// TruthCMConn summarises one exchange (iwarpdump's "conn" record with
// transport "ib_cm").
type TruthCMConn struct {
	V            int     `json:"v"`
	Type         string  `json:"type"` // "conn"
	Conn         int     `json:"conn"`
	Transport    string  `json:"transport"`
	Initiator    *string `json:"initiator"` // null: native InfiniBand without a GRH
	Responder    *string `json:"responder"`
	InitiatorLID *uint16 `json:"initiator_lid,omitempty"` // native InfiniBand only
	ResponderLID *uint16 `json:"responder_lid,omitempty"`
	State        string  `json:"state"`
	SIDR         bool    `json:"sidr"`
	LocalCommID  uint32  `json:"local_comm_id"`
	RemoteCommID uint32  `json:"remote_comm_id"`
	PDFormat     string  `json:"pd_format"`
	Rejected     bool    `json:"rejected"`
	Reason       *uint16 `json:"reason,omitempty"`
	Messages     int     `json:"messages"`
	DataPackets  uint64  `json:"data_packets"`
}

// RecordType implements Record.
func (*TruthCM) RecordType() string { return "cm" }

// RecordType implements Record.
func (*TruthCMConn) RecordType() string { return "conn" }

// cmMsg is one message to send, with its truth.
type cmMsg struct {
	conn    int
	fromI   bool
	t       time.Duration
	pkt     ibcm.Packet
	payload []byte // RC traffic: BTH to ICRC, the RoCEv2 UDP payload (ICRC set later)
	truth   *TruthCM
}

// Generate builds the scenario (see ExtScenario).
func (s CMScenario) Generate(pcapW, truthW io.Writer) (*Result, error) {
	start := s.Start
	if start.IsZero() {
		start = defaultStart
	}
	var msgs []cmMsg
	var conns []*TruthCMConn
	for i := range s.Exchanges {
		m, c, err := s.exchange(i)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m...)
		conns = append(conns, c)
	}
	// Merge by time (stable: exchange order, then message order).
	sortStable(msgs, func(a, b *cmMsg) bool { return a.t < b.t })
	var frames []extFrame
	var recs []Record
	lastFrame := map[int]uint64{}
	for i := range msgs {
		m := &msgs[i]
		x := &s.Exchanges[m.conn]
		src, dst := x.Initiator.Addr(), x.Responder.Addr()
		if !m.fromI {
			src, dst = dst, src
		}
		payload := m.payload
		if payload == nil {
			payload = ibcm.AppendRoCE(nil, &m.pkt)
		}
		if s.Link == CMNativeIB {
			e := x.ibEnds(m.conn)
			if !m.fromI {
				e = e.reverse()
			}
			frames = append(frames, extFrame{t: m.t, data: ibFrame(payload, e, x.GRH)})
		} else {
			data, err := roceFrame(src, dst, uint16(m.conn)*7919+uint16(i)*31, uint16(i+1), payload)
			if err != nil {
				return nil, err
			}
			frames = append(frames, extFrame{t: m.t, data: data})
		}
		n := uint64(len(frames))
		lastFrame[m.conn] = n
		if m.truth != nil {
			m.truth.Frame, m.truth.TS = n, formatTS(start.Add(m.t))
			recs = append(recs, m.truth)
		}
	}
	for _, c := range conns {
		recs = append(recs, c)
	}
	if s.Link == CMNativeIB {
		return finishExtLink(start, frames, recs, pcapW, truthW, linkTypeInfiniBand)
	}
	return finishExt(start, frames, recs, pcapW, truthW)
}

// roceFrame serialises one RoCEv2 packet from src to dst: Ethernet, IP,
// UDP from an entropy source port (made from salt) to port 4791, and the
// payload (BTH to ICRC) with its ICRC computed.
func roceFrame(src, dst netip.Addr, salt, ipid uint16, payload []byte) ([]byte, error) {
	sport := uint16(0xC000 | salt&0x3FFF) // RoCEv2 entropy port
	udp := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: ibcm.UDPPort}
	data, err := ipFrame(src, dst, layers.IPProtocolUDP, ipid, udp, gopacket.Payload(payload))
	if err != nil {
		return nil, err
	}
	// The ICRC covers the final IP and UDP headers with their variant
	// fields masked, so it can be computed on the serialised frame.
	ipLen := 20
	if src.Is6() {
		ipLen = 40
	}
	icrc := ibcm.ICRCv2(data[14:14+ipLen], data[14+ipLen:])
	payload = append([]byte(nil), payload...)
	binary.LittleEndian.PutUint32(payload[len(payload)-4:], icrc)
	return ipFrame(src, dst, layers.IPProtocolUDP, ipid, udp, gopacket.Payload(payload))
}

// exchange expands exchange i into its messages.
func (s CMScenario) exchange(i int) ([]cmMsg, *TruthCMConn, error) {
	x := &s.Exchanges[i]
	if !x.Initiator.IsValid() || !x.Responder.IsValid() || x.Initiator.Addr().Is4() != x.Responder.Addr().Is4() {
		return nil, nil, ErrBadExchange
	}
	r := newRand(s.Seed, i, streamMisc)
	tm := newRand(s.Seed, i, streamTiming)
	t := time.Duration(i)*3*time.Millisecond + time.Duration(between(tm, 0, 500))*time.Microsecond
	step := func() time.Duration {
		t += time.Duration(between(tm, 20, 2000)) * time.Microsecond
		return t
	}
	ps := ibcm.PortSpaceTCP
	if x.Hello {
		ps = ibcm.PortSpaceHello
	}
	if x.Outcome == CMSIDR {
		ps = ibcm.PortSpaceUDP
	}
	sid := ibcm.MakeServiceID(ps, x.Responder.Port())
	tid := uint64(0x400000000) | uint64(r.Uint32())
	commI, commR := r.Uint32()|1, r.Uint32()|1
	qpnI, qpnR := uint32(0x11+2*i), uint32(0x12+2*i)
	psnI, psnR := r.Uint32()&0xFFFFFF, r.Uint32()&0xFFFFFF
	var bthPSN [2]uint32
	native := s.Link == CMNativeIB
	ends := x.ibEnds(i)
	conn := &TruthCMConn{V: 1, Type: "conn", Conn: i, Transport: "ib_cm",
		Initiator: ptr(x.Initiator.Addr().String()), Responder: ptr(x.Responder.Addr().String()), LocalCommID: commI}
	if native {
		// The LIDs name the ends, and the GIDs when there is a GRH.
		conn.Initiator, conn.Responder = ends.gidStrings(x.GRH)
		conn.InitiatorLID, conn.ResponderLID = ptr(ends.slid), ptr(ends.dlid)
	}
	var out []cmMsg
	send := func(fromI bool, m ibcm.Message, tr *TruthCM) {
		side := 0
		if !fromI {
			side = 1
		}
		p := ibcm.NewCMPacket(bthPSN[side], tid, m)
		bthPSN[side]++
		src, dst := x.Initiator.Addr(), x.Responder.Addr()
		tr.Dir = "i2r"
		if !fromI {
			src, dst = dst, src
			tr.Dir = "r2i"
		}
		tr.V, tr.Type, tr.Conn = 1, "cm", i
		tr.Src, tr.Dst = ptr(src.String()), ptr(dst.String())
		if native {
			e := ends
			if !fromI {
				e = e.reverse()
			}
			tr.Src, tr.Dst = e.gidStrings(x.GRH)
			tr.SLID, tr.DLID = ptr(e.slid), ptr(e.dlid)
		}
		tr.Msg, tr.TransactionID = m.Type.String(), tid
		tr.LocalCommID, tr.RemoteCommID = m.CommIDs()
		_, size := ibcm.PrivateDataOffset(m.Type)
		tr.PDLen, tr.ICRCStatus = size, "ok"
		if native {
			tr.ICRCStatus = "unchecked" // the decoder does not compute the native ICRC
		}
		if sid, ok := m.ServiceID(); ok {
			v := uint64(sid)
			tr.ServiceID = &v
			if ps, port, ok := sid.IP(); ok {
				tr.PortSpace, tr.Port, tr.Service = ps.String(), ptr(port), ibcm.ServiceName(port)
			}
		}
		conn.Messages++
		out = append(out, cmMsg{conn: i, fromI: fromI, t: step(), pkt: p, truth: tr})
	}

	// The REQ.
	req := ibcm.Message{Type: ibcm.MsgREQ, REQ: ibcm.REQ{LocalCommID: commI, ServiceID: sid, LocalCAGUID: cmCAGUID(i, true),
		LocalQPN: qpnI, ResponderResources: 4, InitiatorDepth: 4, RemoteCMResponseTimeout: 20, StartingPSN: psnI,
		LocalCMResponseTimeout: 20, RetryCount: 7, PKey: 0xFFFF, PathMTU: 3, RNRRetryCount: 7, MaxCMRetries: 15,
		Primary: ibcm.Path{LocalLID: 0xFFFF, RemoteLID: 0xFFFF, HopLimit: 64, LocalACKTimeout: 19}}}
	if native {
		// The path the REQ proposes is the one the packets take (IBA
		// §12.6.5): the ports' LIDs and GIDs, subnet-local without a GRH.
		pa := &req.REQ.Primary
		pa.LocalLID, pa.RemoteLID, pa.LocalGID, pa.RemoteGID = ends.slid, ends.dlid, ends.sgid, ends.dgid
		pa.SubnetLocal = !x.GRH
		if !x.GRH {
			pa.HopLimit = 1
		}
	}
	reqTruth := &TruthCM{}
	var pd []byte
	if x.Outcome == CMSIDR {
		req = ibcm.Message{Type: ibcm.MsgSIDRREQ, SIDRReq: ibcm.SIDRReq{RequestID: commI, PKey: 0xFFFF, ServiceID: sid}}
	}
	if x.Hello {
		h := ibcm.MakeHello(x.Initiator.Addr(), x.Responder.Addr(), x.Cap)
		if x.HelloMajV != 0 {
			h.MajV = x.HelloMajV
		}
		if x.HelloIPV != 0 {
			h.IPV = x.HelloIPV
		}
		pd = ibcm.AppendHello(nil, h)
		th := &TruthHello{MajV: h.MajV, MinV: h.MinV, IPV: h.IPV, Invalidate: h.Invalidate(), ZBVA: h.ZBVA(),
			Src: h.SrcAddr().String(), Dst: h.DstAddr().String()}
		reqTruth.Hello = th
		if h.MajV != 1 {
			reqTruth.Findings = append(reqTruth.Findings, TruthFindingC{"cm.hello_majv"})
		}
		if h.IPV != 4 && h.IPV != 6 {
			// The addresses are then read as 16 octets and no longer
			// match the packet's.
			reqTruth.Findings = append(reqTruth.Findings, TruthFindingC{"cm.hello_ipv"}, TruthFindingC{"cm.pd_addr_mismatch"})
		}
		conn.PDFormat = "hello"
	} else {
		h := ibcm.MakeIPCMHeader(x.Initiator, x.Responder)
		pd = ibcm.AppendIPCMHeader(nil, h)
		reqTruth.IPCM = &TruthIPCM{MajV: h.MajV, MinV: h.MinV, IPV: h.IPV, Port: h.Port, Src: h.SrcAddr().String(), Dst: h.DstAddr().String()}
		conn.PDFormat = "ip_cm"
	}
	req.PrivateData = append(pd, x.RequestPD...)
	reqTruth.PD = consumerHex(x.RequestPD)
	if req.Type == ibcm.MsgREQ {
		reqTruth.QPN, reqTruth.StartPSN = ptr(qpnI), ptr(psnI)
		reqTruth.ResponderResources, reqTruth.InitiatorDepth = ptr(uint8(4)), ptr(uint8(4))
	}
	send(true, req, reqTruth)
	if x.Repeat {
		again := *reqTruth
		again.Findings = append(append([]TruthFindingC(nil), again.Findings...), TruthFindingC{"cm.repeated"})
		send(true, req, &again)
	}

	switch x.Outcome {
	case CMNoReply:
		conn.State = "requested"
		return out, conn, nil
	case CMSIDR:
		rep := ibcm.Message{Type: ibcm.MsgSIDRREP, SIDRRep: ibcm.SIDRRep{RequestID: commI, QPN: qpnR, ServiceID: sid, QKey: 0x12345678},
			PrivateData: x.ReplyPD}
		send(false, rep, &TruthCM{QPN: ptr(qpnR), PD: consumerHex(x.ReplyPD)})
		conn.State, conn.SIDR, conn.LocalCommID = "sidr_resolved", true, commI
		return out, conn, nil
	case CMReject:
		rej := ibcm.Message{Type: ibcm.MsgREJ, REJ: ibcm.REJ{LocalCommID: commR, RemoteCommID: commI, Reason: x.Reason},
			PrivateData: x.ReplyPD}
		tr := &TruthCM{Reason: ptr(uint16(x.Reason)), ReasonName: x.Reason.String(), Findings: []TruthFindingC{{"cm.rejected"}},
			PD: consumerHex(x.ReplyPD)}
		send(false, rej, tr)
		conn.State, conn.Rejected, conn.Reason, conn.RemoteCommID = "rejected", true, ptr(uint16(x.Reason)), commR
		return out, conn, nil
	}
	if x.MRA {
		send(false, ibcm.Message{Type: ibcm.MsgMRA, MRA: ibcm.MRA{LocalCommID: commR, RemoteCommID: commI, ServiceTimeout: 20}}, &TruthCM{})
	}
	rep := ibcm.Message{Type: ibcm.MsgREP, REP: ibcm.REP{LocalCommID: commR, RemoteCommID: commI, LocalQPN: qpnR, StartingPSN: psnR,
		ResponderResources: 4, InitiatorDepth: 4, TargetACKDelay: 15, RNRRetryCount: 7, LocalCAGUID: cmCAGUID(i, false)}}
	repTruth := &TruthCM{QPN: ptr(qpnR), StartPSN: ptr(psnR), ResponderResources: ptr(uint8(4)), InitiatorDepth: ptr(uint8(4))}
	if x.Hello {
		ack := ibcm.HelloAck{MajV: 1, MinV: 1, Cap: x.Cap}
		rep.PrivateData = ibcm.AppendHelloAck(nil, ack)
		repTruth.HelloAck = &TruthHelloAck{MajV: 1, MinV: 1, Invalidate: ack.Invalidate(), ZBVA: ack.ZBVA()}
	}
	rep.PrivateData = append(rep.PrivateData, x.ReplyPD...)
	repTruth.PD = consumerHex(x.ReplyPD)
	send(false, rep, repTruth)
	send(true, ibcm.Message{Type: ibcm.MsgRTU, Comm: ibcm.CommIDs{LocalCommID: commI, RemoteCommID: commR}}, &TruthCM{})
	// RC traffic: SEND Only packets (opcode 0x04) to the peer's QP.
	for k := 0; k < x.DataPackets; k++ {
		fromI := k%2 == 0
		qp, psn := qpnR, psnI+uint32(k/2)
		if !fromI {
			qp, psn = qpnI, psnR+uint32(k/2)
		}
		b := ibcm.AppendBTH(nil, ibcm.BTH{OpCode: 0x04, PKey: 0xFFFF, DestQP: qp, A: true, PSN: psn & 0xFFFFFF})
		b = append(b, make([]byte, 32+4)...) // payload and ICRC
		out = append(out, cmMsg{conn: i, fromI: fromI, t: step(), payload: b})
	}
	conn.DataPackets = uint64(x.DataPackets)
	send(true, ibcm.Message{Type: ibcm.MsgDREQ, DREQ: ibcm.DREQ{LocalCommID: commI, RemoteCommID: commR, RemoteQPN: qpnR}}, &TruthCM{})
	send(false, ibcm.Message{Type: ibcm.MsgDREP, Comm: ibcm.CommIDs{LocalCommID: commR, RemoteCommID: commI}}, &TruthCM{})
	conn.State, conn.RemoteCommID = "closed", commR
	return out, conn, nil
}

// consumerHex is the truth's "pd": the consumer's private data without its
// trailing zero octets, in hex.
func consumerHex(pd []byte) string { return hex.EncodeToString(ibcm.TrimZeros(pd)) }

// sortStable sorts s stably by less (insertion sort: scenarios are small).
func sortStable[T any](s []T, less func(a, b *T) bool) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && less(&s[j], &s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// GenerateCM is CMScenario.Generate.
func GenerateCM(s CMScenario, pcapW, truthW io.Writer) (*Result, error) {
	return s.Generate(pcapW, truthW)
}

var (
	cmI4 = netip.MustParseAddr("198.51.100.2")
	cmR4 = netip.MustParseAddr("198.51.100.1")
	cmI6 = netip.MustParseAddr("2001:db8:1::2")
	cmR6 = netip.MustParseAddr("2001:db8:1::1")
)

func cmV4(seed int64) ExtScenario {
	return CMScenario{Name: "roce-cm-v4", Seed: seed, Exchanges: []CMExchange{{
		Initiator: netip.AddrPortFrom(cmI4, 39835), Responder: netip.AddrPortFrom(cmR4, 4420),
		MRA: true, RequestPD: []byte("nvme-connect"), ReplyPD: []byte("ok"), DataPackets: 6, Repeat: true,
	}}}
}

func cmV6Reject(seed int64) ExtScenario {
	return CMScenario{Name: "roce-cm-v6-reject", Seed: seed, Exchanges: []CMExchange{{
		Initiator: netip.AddrPortFrom(cmI6, 60037), Responder: netip.AddrPortFrom(cmR6, 7471),
		Outcome: CMReject, Reason: ibcm.RejConsumerDefined, RequestPD: []byte("iwtest-client-request"), ReplyPD: []byte("iwtest-server-REJECT"),
	}}}
}

func cmHello(seed int64) ExtScenario {
	return CMScenario{Name: "roce-cm-hello", Seed: seed, Exchanges: []CMExchange{
		{Initiator: netip.AddrPortFrom(cmI4, 40001), Responder: netip.AddrPortFrom(cmR4, 3260), Hello: true,
			Cap: ibcm.CapInvalidate | ibcm.CapZBVA, DataPackets: 2, RequestPD: []byte{0, 0, 0, 16}},
		{Initiator: netip.AddrPortFrom(cmI6, 40002), Responder: netip.AddrPortFrom(cmR6, 2049), Hello: true,
			Cap: ibcm.CapInvalidate},
		{Initiator: netip.AddrPortFrom(cmI4, 40003), Responder: netip.AddrPortFrom(cmR4, 2049), Hello: true,
			Outcome: CMReject, Reason: ibcm.RejInvalidServiceID},
	}}
}

func cmHelloBad(seed int64) ExtScenario {
	return CMScenario{Name: "roce-cm-hello-bad", Seed: seed, Exchanges: []CMExchange{
		{Initiator: netip.AddrPortFrom(cmI4, 40011), Responder: netip.AddrPortFrom(cmR4, 3260), Hello: true,
			HelloMajV: 2, HelloIPV: 5, Outcome: CMReject, Reason: ibcm.RejConsumerDefined},
		{Initiator: netip.AddrPortFrom(cmI4, 40012), Responder: netip.AddrPortFrom(cmR4, 18515), Outcome: CMSIDR},
		{Initiator: netip.AddrPortFrom(cmI6, 40013), Responder: netip.AddrPortFrom(cmR6, 5445), Outcome: CMNoReply},
	}}
}

// ibCMNative is the native InfiniBand counterpart of the RoCEv2 scenarios
// (link type LINKTYPE_INFINIBAND): an NFS/RDMA connection between LIDs 3
// and 1 with the IP CM header naming the IPoIB addresses, MRA, RC data and
// disconnection; then, with Global Route Headers, an NVMe-oF REQ over
// IPv6 rejected by the consumer.
func ibCMNative(seed int64) ExtScenario {
	return CMScenario{Name: "ib-cm-native", Seed: seed, Link: CMNativeIB, Exchanges: []CMExchange{
		{Initiator: netip.AddrPortFrom(cmI4, 41000), Responder: netip.AddrPortFrom(cmR4, 20049), InitiatorLID: 3, ResponderLID: 1,
			MRA: true, RequestPD: []byte("nfs-rdma-hello"), ReplyPD: []byte("ok"), DataPackets: 4},
		{Initiator: netip.AddrPortFrom(cmI6, 41001), Responder: netip.AddrPortFrom(cmR6, 4420), InitiatorLID: 3, ResponderLID: 1,
			GRH: true, Outcome: CMReject, Reason: ibcm.RejConsumerDefined, ReplyPD: []byte("busy")},
	}}
}

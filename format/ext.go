package format

import (
	"net/netip"
	"strconv"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ibcm"
	"github.com/iwarpkit/iwarpkit/dissect/sctp"
	"github.com/iwarpkit/iwarpkit/flows"
)

// extFields appends the values of records of the non-TCP transports:
// "cm" (InfiniBand CM over RoCEv2 or native InfiniBand), "ddp" and
// "sctp_session" (DDP over SCTP, RFC 5043) and their "conn" summaries
// (JSONL.md).
func extFields(out []KV, r *flows.Record) []KV {
	switch r.Type {
	case flows.RecCM:
		if r.CM != nil {
			return cmFields(out, r)
		}
	case flows.RecDDPSCTP:
		if r.SCTP != nil {
			return sctpDDPFields(out, r)
		}
	case flows.RecSCTPSession:
		if r.SCTP != nil {
			return sctpSessionFields(out, r)
		}
	case flows.RecExtConn:
		switch {
		case r.CM != nil && r.CM.Summary != nil:
			return cmConnFields(out, r.CM.Summary)
		case r.SCTP != nil && r.SCTP.Summary != nil:
			return sctpConnFields(out, r.SCTP.Summary)
		}
	}
	return out
}

// ExtFindings returns the findings attached to a record of the non-TCP
// transports (nil for other records), for the text output to print under
// its line as it does for FPDUs.
func ExtFindings(r *flows.Record) []dissect.Finding {
	switch {
	case r.Type == flows.RecCM && r.CM != nil:
		return r.CM.Findings
	case (r.Type == flows.RecDDPSCTP || r.Type == flows.RecSCTPSession) && r.SCTP != nil:
		return r.SCTP.Findings
	}
	return nil
}

func addrOnly(r *flows.Record) (Value, Value) {
	s, d := Null(), Null()
	if r.Src.IsValid() {
		s = Str(r.Src.Addr().Unmap().String())
	}
	if r.Dst.IsValid() {
		d = Str(r.Dst.Addr().Unmap().String())
	}
	return s, d
}

func serviceFields(out []KV, sid ibcm.ServiceID) []KV {
	out = append(out, kvu("service_id", uint64(sid)))
	if ps, port, ok := sid.IP(); ok {
		out = append(out, kvs("port_space", ps.String()), kvu("port", uint64(port)))
		if n := ibcm.ServiceName(port); n != "" {
			out = append(out, kvs("service", n))
		}
	}
	return out
}

func cmFields(out []KV, r *flows.Record) []KV {
	c := r.CM
	m := &c.Msg
	src, dst := addrOnly(r)
	local, remote := m.CommIDs()
	out = append(out, kv("src", src), kv("dst", dst))
	if c.HasLRH {
		// Native InfiniBand: the LIDs name the ends; src and dst are the
		// GRH's GIDs, null without a GRH.
		out = append(out, kvu("slid", uint64(c.LRH.SLID)), kvu("dlid", uint64(c.LRH.DLID)))
	}
	out = append(out, kvs("dir", r.Dir.String()), kvs("msg", m.Type.String()),
		kvu("transaction_id", c.MAD.TransactionID), kvu("local_comm_id", uint64(local)), kvu("remote_comm_id", uint64(remote)))
	if sid, ok := m.ServiceID(); ok {
		out = serviceFields(out, sid)
	}
	switch m.Type {
	case ibcm.MsgREQ:
		q := &m.REQ
		out = append(out, kvu("qpn", uint64(q.LocalQPN)), kvu("start_psn", uint64(q.StartingPSN)),
			kvu("responder_resources", uint64(q.ResponderResources)), kvu("initiator_depth", uint64(q.InitiatorDepth)),
			kvu("transport_service_type", uint64(q.TransportServiceType)), kvu("path_mtu", uint64(q.PathMTU)),
			kvu("pkey", uint64(q.PKey)), kvu("ca_guid", q.LocalCAGUID))
	case ibcm.MsgREP:
		q := &m.REP
		out = append(out, kvu("qpn", uint64(q.LocalQPN)), kvu("start_psn", uint64(q.StartingPSN)),
			kvu("responder_resources", uint64(q.ResponderResources)), kvu("initiator_depth", uint64(q.InitiatorDepth)),
			kvu("ca_guid", q.LocalCAGUID))
	case ibcm.MsgREJ:
		out = append(out, kvu("reason", uint64(m.REJ.Reason)), kvs("reason_name", m.REJ.Reason.String()),
			kvu("message_rejected", uint64(m.REJ.MessageRejected)))
	case ibcm.MsgMRA:
		out = append(out, kvu("message_mraed", uint64(m.MRA.MessageMRAed)), kvu("service_timeout", uint64(m.MRA.ServiceTimeout)))
	case ibcm.MsgDREQ:
		out = append(out, kvu("remote_qpn", uint64(m.DREQ.RemoteQPN)))
	case ibcm.MsgSIDRREP:
		out = append(out, kvu("qpn", uint64(m.SIDRRep.QPN)), kvu("sidr_status", uint64(m.SIDRRep.Status)),
			kvs("sidr_status_name", m.SIDRRep.Status.String()))
	}
	out = append(out, kvu("pd_len", uint64(len(m.PrivateData))))
	p := &c.PD
	switch p.Kind {
	case ibcm.PDIPCM:
		h := p.IPCM
		out = append(out, kv("ip_cm", Object([]KV{kvu("majv", uint64(h.MajV)), kvu("minv", uint64(h.MinV)),
			kvu("ipv", uint64(h.IPV)), kvu("port", uint64(h.Port)), kvs("src", h.SrcAddr().String()), kvs("dst", h.DstAddr().String())})))
	case ibcm.PDHello:
		h := p.Hello
		out = append(out, kv("hello", Object([]KV{kvu("majv", uint64(h.MajV)), kvu("minv", uint64(h.MinV)),
			kvu("ipv", uint64(h.IPV)), kvb("invalidate", h.Invalidate()), kvb("zbva", h.ZBVA()),
			kvs("src", h.SrcAddr().String()), kvs("dst", h.DstAddr().String())})))
	case ibcm.PDHelloAck:
		h := p.HelloAck
		out = append(out, kv("hello_ack", Object([]KV{kvu("majv", uint64(h.MajV)), kvu("minv", uint64(h.MinV)),
			kvb("invalidate", h.Invalidate()), kvb("zbva", h.ZBVA())})))
	}
	out = append(out, kv("pd", Bytes(ibcm.TrimZeros(p.Consumer))), kvu("psn", uint64(c.BTH.PSN)),
		kvu("icrc", uint64(c.ICRC)), kvs("icrc_status", c.ICRCStatus.String()))
	if len(c.Findings) > 0 {
		out = append(out, kv("findings", findingList(c.Findings)))
	}
	return out
}

func cmConnFields(out []KV, s *flows.CMSummary) []KV {
	ini, res := Null(), Null()
	if s.InitiatorKnown && s.Initiator.IsValid() && s.Responder.IsValid() {
		ini, res = Str(s.Initiator.String()), Str(s.Responder.String())
	}
	out = append(out, kvs("transport", flows.TransportIBCM), kv("initiator", ini), kv("responder", res))
	if s.Native && s.InitiatorKnown {
		// Native InfiniBand: the LIDs name the ends (initiator and
		// responder are GIDs, null when no packet had a GRH).
		out = append(out, kvu("initiator_lid", uint64(s.InitiatorLID)), kvu("responder_lid", uint64(s.ResponderLID)))
	}
	out = append(out, kvs("state", s.State), kvb("sidr", s.SIDR), kvu("local_comm_id", uint64(s.LocalCommID)),
		kvu("remote_comm_id", uint64(s.RemoteCommID)))
	if s.HasService {
		out = serviceFields(out, s.ServiceID)
	}
	out = append(out, kvs("pd_format", s.PDKind.String()))
	if s.HaveREQ {
		out = append(out, kvu("qpn_i", uint64(s.QPNI)), kvu("start_psn_i", uint64(s.PSNI)))
	}
	if s.HaveREP || (s.SIDR && s.QPNR != 0) {
		out = append(out, kvu("qpn_r", uint64(s.QPNR)))
	}
	if s.HaveREP {
		out = append(out, kvu("start_psn_r", uint64(s.PSNR)))
	}
	if s.HaveREQ || s.HaveREP {
		out = append(out, kvu("responder_resources", uint64(s.ResponderResources)), kvu("initiator_depth", uint64(s.InitiatorDepth)))
	}
	out = append(out, kvb("rejected", s.Rejected))
	if s.Rejected {
		out = append(out, kvu("reason", uint64(s.Reason)), kvs("reason_name", s.Reason.String()))
	}
	return append(out, kvu("messages", uint64(s.Messages)), kvu("data_packets", s.DataPackets), kvu("data_octets", s.DataOctets),
		kvu("findings", uint64(s.Findings)), kvu("first_frame", s.FirstFrame), kvu("last_frame", s.LastFrame))
}

func sctpCommon(out []KV, r *flows.Record) []KV {
	x := r.SCTP
	src, dst := addr(r, 0)
	frames := make([]Value, len(x.Frames))
	for i, f := range x.Frames {
		frames[i] = Uint(f)
	}
	return append(out, kvs("src", src), kvs("dst", dst), kvs("dir", r.Dir.String()), kv("frames", List(frames)),
		kv("sctp", Object([]KV{kvu("stream", uint64(x.Stream)), kvu("ssn", uint64(x.SSN)), kvu("tsn", uint64(x.TSN)),
			kvu("ppid", uint64(x.PPID)), kvb("u", x.Flags&sctp.FlagUnordered != 0)})))
}

func sctpDDPFields(out []KV, r *flows.Record) []KV {
	x := r.SCTP
	out = sctpCommon(out, r)
	if x.SegOK {
		// The ddp/rdmap keys as fpduFields writes them.
		f := flows.FPDURecord{Seg: x.Seg, SegOK: true, PayloadLen: x.PayloadLen}
		kvs := fpduFields(nil, &flows.Record{FPDU: &f}, 0, nil)
		for i, e := range kvs {
			if e.Key == "mpa.crc_status" {
				out = append(out, kvs[i+1:]...)
				break
			}
		}
	}
	if len(x.Findings) > 0 {
		out = append(out, kv("findings", findingList(x.Findings)))
	}
	return out
}

func sctpSessionFields(out []KV, r *flows.Record) []KV {
	x := r.SCTP
	s := &x.Session
	out = sctpCommon(out, r)
	out = append(out, kvu("function", uint64(s.Func)), kvs("name", s.Func.String()), kvu("pd_len", uint64(s.PDLen)))
	if x.HasEnhanced {
		e := x.Enhanced
		rtr := make([]Value, 0, 3)
		for _, n := range x.RTR.Names() {
			rtr = append(rtr, Str(n))
		}
		out = append(out, kvu("ird", uint64(e.IRD)), kvu("ord", uint64(e.ORD)), kvb("a", e.A), kvb("b", e.B),
			kvb("c", e.C), kvb("d", e.D), kv("rtr", List(rtr)))
	}
	out = append(out, kv("pd", Bytes(s.PD)))
	if len(x.Findings) > 0 {
		out = append(out, kv("findings", findingList(x.Findings)))
	}
	return out
}

func sctpConnFields(out []KV, s *flows.SCTPSummary) []KV {
	ini, res := Null(), Null()
	if s.InitiatorKnown {
		ini, res = Str(s.Initiator.String()), Str(s.Responder.String())
	}
	out = append(out, kvs("transport", flows.TransportSCTP), kv("initiator", ini), kv("responder", res), kvs("state", s.State),
		kvb("enhanced", s.Enhanced))
	if s.Enhanced {
		rtr := make([]Value, 0, 3)
		for _, n := range s.RTR.Names() {
			rtr = append(rtr, Str(n))
		}
		out = append(out, kvu("ird", uint64(s.IRD)), kvu("ord", uint64(s.ORD)), kv("rtr", List(rtr)))
	}
	dv := Null()
	if s.DDPVersion >= 0 {
		dv = Uint(uint64(s.DDPVersion))
	}
	return append(out, kv("ddp_version", dv), kvu("segments", uint64(s.Segments)), kvu("messages", uint64(s.Messages)),
		kvu("octets", s.Octets), kvu("checksum_errors", uint64(s.ChecksumErrors)), kvu("findings", uint64(s.Findings)),
		kvu("first_frame", s.FirstFrame), kvu("last_frame", s.LastFrame))
}

// appendExtLine appends the one-line text of a non-TCP record (after
// "FRAME TIME conn N: ").
func appendExtLine(dst []byte, r *flows.Record) []byte {
	switch r.Type {
	case flows.RecCM:
		if r.CM != nil {
			return appendCMLine(dst, r)
		}
	case flows.RecDDPSCTP, flows.RecSCTPSession:
		if r.SCTP != nil {
			return appendSCTPLine(dst, r)
		}
	case flows.RecExtConn:
		switch {
		case r.CM != nil && r.CM.Summary != nil:
			return appendCMConnLine(dst, r.CM.Summary)
		case r.SCTP != nil && r.SCTP.Summary != nil:
			return appendSCTPConnLine(dst, r.SCTP.Summary)
		}
	}
	return append(dst, r.Type.String()...)
}

func appendUpper(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func appendCMLine(dst []byte, r *flows.Record) []byte {
	c := r.CM
	m := &c.Msg
	dst = append(dst, "CM "...)
	dst = appendUpper(dst, m.Type.String())
	dst = append(dst, ' ')
	if c.HasLRH {
		dst = appendIBEnd(dst, r.Src.Addr(), c.LRH.SLID)
		dst = append(dst, " > "...)
		dst = appendIBEnd(dst, r.Dst.Addr(), c.LRH.DLID)
	} else {
		dst = append(dst, r.Src.Addr().Unmap().String()...)
		dst = append(dst, " > "...)
		dst = append(dst, r.Dst.Addr().Unmap().String()...)
	}
	local, remote := m.CommIDs()
	dst = append(dst, " comm "...)
	dst = appendHex(dst, uint64(local), 8)
	if remote != 0 {
		dst = append(dst, " remote "...)
		dst = appendHex(dst, uint64(remote), 8)
	}
	if sid, ok := m.ServiceID(); ok {
		dst = append(dst, " service "...)
		dst = append(dst, sid.Describe()...)
	}
	switch m.Type {
	case ibcm.MsgREQ:
		dst = appendQP(dst, m.REQ.LocalQPN, m.REQ.StartingPSN, m.REQ.ResponderResources, m.REQ.InitiatorDepth)
	case ibcm.MsgREP:
		dst = appendQP(dst, m.REP.LocalQPN, m.REP.StartingPSN, m.REP.ResponderResources, m.REP.InitiatorDepth)
	case ibcm.MsgREJ:
		dst = append(dst, " reason "...)
		dst = strconv.AppendUint(dst, uint64(m.REJ.Reason), 10)
		dst = append(dst, " ("...)
		dst = append(dst, m.REJ.Reason.String()...)
		dst = append(dst, ')')
	case ibcm.MsgDREQ:
		dst = append(dst, " remote QPN "...)
		dst = appendHex(dst, uint64(m.DREQ.RemoteQPN), 1)
	case ibcm.MsgSIDRREP:
		dst = append(dst, " QPN "...)
		dst = appendHex(dst, uint64(m.SIDRRep.QPN), 1)
		dst = append(dst, " status "...)
		dst = append(dst, m.SIDRRep.Status.String()...)
	}
	p := &c.PD
	switch p.Kind {
	case ibcm.PDIPCM:
		dst = append(dst, " IP CM "...)
		dst = strconv.AppendUint(dst, uint64(p.IPCM.MajV), 10)
		dst = append(dst, '.')
		dst = strconv.AppendUint(dst, uint64(p.IPCM.MinV), 10)
		dst = append(dst, ' ')
		dst = append(dst, p.IPCM.SrcAddr().String()...)
		dst = append(dst, " port "...)
		dst = strconv.AppendUint(dst, uint64(p.IPCM.Port), 10)
		dst = append(dst, " > "...)
		dst = append(dst, p.IPCM.DstAddr().String()...)
	case ibcm.PDHello:
		h := p.Hello
		dst = append(dst, " Hello "...)
		dst = strconv.AppendUint(dst, uint64(h.MajV), 10)
		dst = append(dst, '.')
		dst = strconv.AppendUint(dst, uint64(h.MinV), 10)
		dst = append(dst, ' ')
		dst = append(dst, h.SrcAddr().String()...)
		dst = append(dst, " > "...)
		dst = append(dst, h.DstAddr().String()...)
		dst = appendCaps(dst, h.Invalidate(), h.ZBVA())
	case ibcm.PDHelloAck:
		h := p.HelloAck
		dst = append(dst, " HelloAck "...)
		dst = strconv.AppendUint(dst, uint64(h.MajV), 10)
		dst = append(dst, '.')
		dst = strconv.AppendUint(dst, uint64(h.MinV), 10)
		dst = appendCaps(dst, h.Invalidate(), h.ZBVA())
	}
	if n := len(ibcm.TrimZeros(p.Consumer)); n > 0 {
		dst = append(dst, " pd "...)
		dst = strconv.AppendInt(dst, int64(n), 10)
	}
	if c.ICRCStatus == flows.CRCBad {
		dst = append(dst, " ICRC BAD"...)
	}
	return dst
}

// appendIBEnd appends one end of a native InfiniBand packet: "LID 3", or
// with a GRH "fe80::2 (LID 3)".
func appendIBEnd(dst []byte, gid netip.Addr, lid uint16) []byte {
	if gid.IsValid() {
		dst = append(dst, gid.String()...)
		dst = append(dst, " (LID "...)
		dst = strconv.AppendUint(dst, uint64(lid), 10)
		return append(dst, ')')
	}
	dst = append(dst, "LID "...)
	return strconv.AppendUint(dst, uint64(lid), 10)
}

func appendCaps(dst []byte, inval, zbva bool) []byte {
	if inval {
		dst = append(dst, " INVALIDATE"...)
	}
	if zbva {
		dst = append(dst, " ZBVA"...)
	}
	return dst
}

func appendQP(dst []byte, qpn, psn uint32, rr, id uint8) []byte {
	dst = append(dst, " QPN "...)
	dst = appendHex(dst, uint64(qpn), 1)
	dst = append(dst, " PSN "...)
	dst = appendHex(dst, uint64(psn), 1)
	dst = append(dst, " RR "...)
	dst = strconv.AppendUint(dst, uint64(rr), 10)
	dst = append(dst, " ID "...)
	return strconv.AppendUint(dst, uint64(id), 10)
}

func appendCMConnLine(dst []byte, s *flows.CMSummary) []byte {
	dst = append(dst, "ib_cm "...)
	sep := " > "
	if !s.InitiatorKnown {
		sep = " <> "
	}
	if s.Native {
		dst = appendIBEnd(dst, s.Initiator, s.InitiatorLID)
		dst = append(dst, sep...)
		dst = appendIBEnd(dst, s.Responder, s.ResponderLID)
	} else {
		dst = append(dst, s.Initiator.String()...)
		dst = append(dst, sep...)
		dst = append(dst, s.Responder.String()...)
	}
	dst = append(dst, ' ')
	dst = append(dst, s.State...)
	if s.Rejected {
		dst = append(dst, " ("...)
		dst = append(dst, s.Reason.String()...)
		dst = append(dst, ')')
	}
	if s.HasService {
		dst = append(dst, ", service "...)
		dst = append(dst, s.ServiceID.Describe()...)
	}
	if s.HaveREQ || s.HaveREP {
		dst = append(dst, ", QPN "...)
		dst = appendHex(dst, uint64(s.QPNI), 1)
		dst = append(dst, '/')
		dst = appendHex(dst, uint64(s.QPNR), 1)
	}
	dst = append(dst, ", "...)
	dst = strconv.AppendInt(dst, int64(s.Messages), 10)
	dst = append(dst, " CM messages, "...)
	dst = strconv.AppendUint(dst, s.DataPackets, 10)
	dst = append(dst, " data packets, "...)
	dst = strconv.AppendInt(dst, int64(s.Findings), 10)
	return append(dst, " findings"...)
}

func appendSCTPLine(dst []byte, r *flows.Record) []byte {
	x := r.SCTP
	dst = append(dst, "SCTP "...)
	dst = append(dst, r.Src.String()...)
	dst = append(dst, " > "...)
	dst = append(dst, r.Dst.String()...)
	dst = append(dst, " stream "...)
	dst = strconv.AppendUint(dst, uint64(x.Stream), 10)
	dst = append(dst, " TSN "...)
	dst = strconv.AppendUint(dst, uint64(x.TSN), 10)
	dst = append(dst, ' ')
	if r.Type == flows.RecSCTPSession {
		s := &x.Session
		dst = append(dst, "session "...)
		dst = append(dst, s.Func.String()...)
		if x.HasEnhanced {
			dst = append(dst, " IRD "...)
			dst = strconv.AppendUint(dst, uint64(x.Enhanced.IRD), 10)
			dst = append(dst, " ORD "...)
			dst = strconv.AppendUint(dst, uint64(x.Enhanced.ORD), 10)
			if x.RTR != 0 {
				dst = append(dst, " RTR "...)
				dst = append(dst, x.RTR.String()...)
			}
		}
		dst = append(dst, " pd_len "...)
		return strconv.AppendUint(dst, uint64(s.PDLen), 10)
	}
	f := flows.FPDURecord{Seg: x.Seg, SegOK: x.SegOK, SegErr: x.SegErr, PayloadLen: x.PayloadLen}
	return appendFPDULine(dst, &f, false)
}

func appendSCTPConnLine(dst []byte, s *flows.SCTPSummary) []byte {
	dst = append(dst, "sctp "...)
	if s.InitiatorKnown {
		dst = append(dst, s.Initiator.String()...)
		dst = append(dst, " > "...)
		dst = append(dst, s.Responder.String()...)
	} else {
		dst = append(dst, s.A.String()...)
		dst = append(dst, " <> "...)
		dst = append(dst, s.B.String()...)
		dst = append(dst, " (initiator unknown)"...)
	}
	dst = append(dst, ' ')
	dst = append(dst, s.State...)
	if s.Enhanced {
		dst = appendIRDORD(dst, uint64(s.IRD), uint64(s.ORD))
	}
	dst = append(dst, ", "...)
	dst = strconv.AppendInt(dst, int64(s.Segments), 10)
	dst = append(dst, " DDP segments, "...)
	dst = strconv.AppendInt(dst, int64(s.Messages), 10)
	dst = append(dst, " messages, "...)
	dst = strconv.AppendUint(dst, s.Octets, 10)
	dst = append(dst, " octets, "...)
	dst = strconv.AppendInt(dst, int64(s.Findings), 10)
	return append(dst, " findings"...)
}

package ibcm_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"reflect"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ibcm"
)

func fill(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i)
	}
	return b
}

// sampleMessages has one message of every type with every field non-zero.
func sampleMessages() []ibcm.Message {
	path := ibcm.Path{LocalLID: 1, RemoteLID: 2, FlowLabel: 0xABCDE, Resv6: 1, PacketRate: 0x2A,
		TrafficClass: 3, HopLimit: 64, SL: 5, SubnetLocal: true, Resv3a: 1, LocalACKTimeout: 0x13, Resv3b: 4}
	copy(path.LocalGID[:], fill(16, 0x10))
	copy(path.RemoteGID[:], fill(16, 0x20))
	alt := path
	alt.HopLimit = 1
	var ari [ibcm.ARILen]byte
	copy(ari[:], fill(ibcm.ARILen, 0x40))
	var cpi [ibcm.ClassPortInfoLen]byte
	copy(cpi[:], fill(ibcm.ClassPortInfoLen, 0x50))
	var lapRest [52]byte
	copy(lapRest[:], fill(52, 0x60))
	pd := func(t ibcm.MsgType) []byte { _, n := ibcm.PrivateDataOffset(t); return fill(n, byte(t)) }
	return []ibcm.Message{
		{Type: ibcm.MsgREQ, REQ: ibcm.REQ{LocalCommID: 0x5d491b2d, Resv32: 7, ServiceID: 0x0000000001061144,
			LocalCAGUID: 0x00005efffe000102, Resv32b: 9, LocalQKey: 0x1234, LocalQPN: 0x11, ResponderResources: 16,
			LocalEECN: 0xABCDEF, InitiatorDepth: 8, RemoteEECN: 0x123456, RemoteCMResponseTimeout: 0x14,
			TransportServiceType: 2, EndToEndFlowControl: true, StartingPSN: 0xbc9b26, LocalCMResponseTimeout: 0x15,
			RetryCount: 7, PKey: 0xFFFF, PathMTU: 3, RDCExists: true, RNRRetryCount: 6, MaxCMRetries: 15, SRQ: true,
			ExtTransportType: 5, Primary: path, Alternate: alt}, PrivateData: pd(ibcm.MsgREQ)},
		{Type: ibcm.MsgMRA, MRA: ibcm.MRA{LocalCommID: 1, RemoteCommID: 2, MessageMRAed: 2, Resv6: 3, ServiceTimeout: 0x1F, Resv3: 5},
			PrivateData: pd(ibcm.MsgMRA)},
		{Type: ibcm.MsgREJ, REJ: ibcm.REJ{LocalCommID: 3, RemoteCommID: 4, MessageRejected: 1, Resv6: 2, RejectInfoLen: 72,
			Resv1: 1, Reason: ibcm.RejConsumerDefined, ARI: ari}, PrivateData: pd(ibcm.MsgREJ)},
		{Type: ibcm.MsgREP, REP: ibcm.REP{LocalCommID: 5, RemoteCommID: 6, LocalQKey: 7, LocalQPN: 0x22, Resv8a: 1,
			LocalEECN: 0x33, Resv8b: 2, StartingPSN: 0x33d3a2, Resv8c: 3, ResponderResources: 4, InitiatorDepth: 5,
			TargetACKDelay: 0x11, FailoverAccepted: 2, EndToEndFlowControl: true, RNRRetryCount: 7, SRQ: true, Resv4: 9,
			LocalCAGUID: 0x00005efffe000101}, PrivateData: pd(ibcm.MsgREP)},
		{Type: ibcm.MsgRTU, Comm: ibcm.CommIDs{LocalCommID: 8, RemoteCommID: 9}, PrivateData: pd(ibcm.MsgRTU)},
		{Type: ibcm.MsgDREQ, DREQ: ibcm.DREQ{LocalCommID: 10, RemoteCommID: 11, RemoteQPN: 0x11, Resv8: 1}, PrivateData: pd(ibcm.MsgDREQ)},
		{Type: ibcm.MsgDREP, Comm: ibcm.CommIDs{LocalCommID: 12, RemoteCommID: 13}, PrivateData: pd(ibcm.MsgDREP)},
		{Type: ibcm.MsgLAP, LAP: ibcm.LAP{LocalCommID: 14, RemoteCommID: 15, Resv32: 16, Rest: lapRest}, PrivateData: pd(ibcm.MsgLAP)},
		{Type: ibcm.MsgAPR, APR: ibcm.APR{LocalCommID: 17, RemoteCommID: 18, AddInfoLen: 19, APStatus: 3, Resv16: 20, AddInfo: ari},
			PrivateData: pd(ibcm.MsgAPR)},
		{Type: ibcm.MsgSIDRREQ, SIDRReq: ibcm.SIDRReq{RequestID: 21, PKey: 0xFFFF, Resv16: 1, ServiceID: 0x0000000001110000 | 4791},
			PrivateData: pd(ibcm.MsgSIDRREQ)},
		{Type: ibcm.MsgSIDRREP, SIDRRep: ibcm.SIDRRep{RequestID: 22, Status: 2, AddInfoLen: 3, Resv16: 4, QPN: 0x123456, Resv8: 5,
			ServiceID: 0x0000000001110000 | 4791, QKey: 0x80010000, ClassPortInfo: cpi}, PrivateData: pd(ibcm.MsgSIDRREP)},
	}
}

// TestMessageRoundTrip: decode(encode(m)) == m for every message type, and
// the encoding is always the 232 octets of MAD data.
func TestMessageRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		b := ibcm.AppendMessage(nil, &m)
		if len(b) != ibcm.MADDataLen {
			t.Fatalf("%v: %d octets", m.Type, len(b))
		}
		got, err := ibcm.DecodeMessage(m.Type, b)
		if err != nil {
			t.Fatalf("%v: %v", m.Type, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%v: round trip\n got %+v\nwant %+v", m.Type, got, m)
		}
		// A short private data area is padded with zeros.
		short := m
		short.PrivateData = []byte{1, 2, 3}
		b = ibcm.AppendMessage(nil, &short)
		got, _ = ibcm.DecodeMessage(m.Type, b)
		if !bytes.Equal(ibcm.TrimZeros(got.PrivateData), []byte{1, 2, 3}) {
			t.Errorf("%v: short private data %x", m.Type, got.PrivateData)
		}
	}
}

// TestPrivateDataOffsets checks the offsets against PROTOCOL.md §F and IBA
// §12.6 (via Linux ibta_vol1_c12.h): the private data of each message
// ends exactly at the end of the 232-octet MAD data.
func TestPrivateDataOffsets(t *testing.T) {
	want := map[ibcm.MsgType][2]int{
		ibcm.MsgREQ: {140, 92}, ibcm.MsgMRA: {10, 222}, ibcm.MsgREJ: {84, 148}, ibcm.MsgREP: {36, 196},
		ibcm.MsgRTU: {8, 224}, ibcm.MsgDREQ: {12, 220}, ibcm.MsgDREP: {8, 224}, ibcm.MsgLAP: {64, 168},
		ibcm.MsgAPR: {84, 148}, ibcm.MsgSIDRREQ: {16, 216}, ibcm.MsgSIDRREP: {96, 136},
	}
	for typ, w := range want {
		off, n := ibcm.PrivateDataOffset(typ)
		if off != w[0] || n != w[1] {
			t.Errorf("%v: %d/%d, want %d/%d", typ, off, n, w[0], w[1])
		}
	}
	if off, n := ibcm.PrivateDataOffset(ibcm.ClassPortInfo); off != 0 || n != 0 {
		t.Errorf("ClassPortInfo: %d/%d", off, n)
	}
}

// TestFieldOffsets places marker values at the offsets of Linux
// ibta_vol1_c12.h and checks that the decoder reads them there.
func TestFieldOffsets(t *testing.T) {
	b := make([]byte, ibcm.MADDataLen)
	binary.BigEndian.PutUint32(b[0:], 0xA1A2A3A4) // local comm ID
	binary.BigEndian.PutUint64(b[8:], 0x0102030405060708)
	b[32], b[33], b[34], b[35] = 0, 0, 0x11, 0x10 // QPN 0x11, responder resources 16
	b[39] = 0x08                                  // initiator depth
	b[44], b[45], b[46] = 0xbc, 0x9b, 0x26        // starting PSN
	b[47] = 0xa7                                  // local CM response timeout 0x14, retry count 7
	b[88], b[89], b[90], b[91] = 0x2f, 0x3c, 0xb0, 0x00
	b[93] = 0x40
	b[95] = 0x98
	m, err := ibcm.DecodeMessage(ibcm.MsgREQ, b)
	if err != nil {
		t.Fatal(err)
	}
	r := m.REQ
	if r.LocalCommID != 0xA1A2A3A4 || r.ServiceID != 0x0102030405060708 || r.LocalQPN != 0x11 ||
		r.ResponderResources != 16 || r.InitiatorDepth != 8 || r.StartingPSN != 0xbc9b26 ||
		r.LocalCMResponseTimeout != 0x14 || r.RetryCount != 7 {
		t.Errorf("REQ %+v", r)
	}
	// The octets of frame 1 of rxe_v4_rping.pcap at offset 88: flow label
	// 0x2f3cb, packet rate 0, hop limit 64, local ACK timeout 0x13.
	if p := r.Primary; p.FlowLabel != 0x2f3cb || p.PacketRate != 0 || p.HopLimit != 0x40 || p.LocalACKTimeout != 0x13 {
		t.Errorf("primary path %+v", p)
	}
	b = make([]byte, ibcm.MADDataLen)
	b[10], b[11] = 0, 28
	b[8] = 0x40 // message rejected = 1 (REP)
	b[9] = 0x90 // reject info length 72
	m, _ = ibcm.DecodeMessage(ibcm.MsgREJ, b)
	if m.REJ.Reason != ibcm.RejConsumerDefined || m.REJ.MessageRejected != 1 || m.REJ.RejectInfoLen != 72 {
		t.Errorf("REJ %+v", m.REJ)
	}
}

func TestDecodeMessageErrors(t *testing.T) {
	for _, m := range sampleMessages() {
		off, _ := ibcm.PrivateDataOffset(m.Type)
		b := ibcm.AppendMessage(nil, &m)
		if _, err := ibcm.DecodeMessage(m.Type, b[:off-1]); !errors.Is(err, dissect.ErrTruncated) {
			t.Errorf("%v cut at %d: %v", m.Type, off-1, err)
		}
		got, err := ibcm.DecodeMessage(m.Type, b[:off+3])
		if err != nil || len(got.PrivateData) != 3 {
			t.Errorf("%v cut in private data: %v, %d octets", m.Type, err, len(got.PrivateData))
		}
	}
	if _, err := ibcm.DecodeMessage(ibcm.ClassPortInfo, make([]byte, 232)); err != ibcm.ErrUnknownAttribute {
		t.Errorf("ClassPortInfo: %v", err)
	}
}

func TestHeadersRoundTrip(t *testing.T) {
	bth := ibcm.BTH{OpCode: 0x64, SE: true, M: true, PadCnt: 3, TVer: 0xF, PKey: 0xFFFF, FECN: true, BECN: true,
		Resv6: 0x2A, DestQP: 0xABCDEF, A: true, Resv7: 0x55, PSN: 0xFEDCBA}
	b := ibcm.AppendBTH(nil, bth)
	if got, err := ibcm.DecodeBTH(b); err != nil || got != bth || len(b) != ibcm.BTHLen {
		t.Errorf("BTH %+v %v", got, err)
	}
	deth := ibcm.DETH{QKey: ibcm.GSIQKey, Resv8: 7, SrcQP: 0x123456}
	b = ibcm.AppendDETH(nil, deth)
	if got, err := ibcm.DecodeDETH(b); err != nil || got != deth || len(b) != ibcm.DETHLen {
		t.Errorf("DETH %+v %v", got, err)
	}
	mad := ibcm.MAD{BaseVersion: 1, MgmtClass: 7, ClassVersion: 2, R: true, Method: 3, Status: 0x1234,
		ClassSpecific: 0x5678, TransactionID: 0x000000042d1b495d, AttributeID: 0x10, Resv16: 9, AttributeMod: 0xdeadbeef}
	b = ibcm.AppendMAD(nil, mad)
	if got, err := ibcm.DecodeMAD(b); err != nil || got != mad || len(b) != ibcm.MADHeaderLen {
		t.Errorf("MAD %+v %v", got, err)
	}
	lrh := ibcm.LRH{VL: 15, LVer: 1, SL: 3, Rsvd2: 2, LNH: 3, DLID: 0x1234, Rsvd5: 0x1F, PktLen: 0x7FF, SLID: 0x5678}
	b = ibcm.AppendLRH(nil, lrh)
	if got, err := ibcm.DecodeLRH(b); err != nil || got != lrh || len(b) != ibcm.LRHLen {
		t.Errorf("LRH %+v %v", got, err)
	}
	grh := ibcm.GRH{IPVer: 6, TClass: 0xAB, FlowLabel: 0xCDEF1, PayLen: 300, NxtHdr: 0x1B, HopLmt: 255}
	copy(grh.SGID[:], fill(16, 1))
	copy(grh.DGID[:], fill(16, 100))
	b = ibcm.AppendGRH(nil, grh)
	if got, err := ibcm.DecodeGRH(b); err != nil || got != grh || len(b) != ibcm.GRHLen {
		t.Errorf("GRH %+v %v", got, err)
	}
	for n := 0; n < ibcm.GRHLen; n++ {
		if _, err := ibcm.DecodeGRH(b[:n]); err != dissect.ErrTruncated {
			t.Fatalf("GRH cut at %d: %v", n, err)
		}
	}
}

func TestPacketRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		p := ibcm.NewCMPacket(42, 0x1122334455667788, m)
		p.HasICRC, p.ICRC = true, 0xCAFEBABE
		b := ibcm.AppendRoCE(nil, &p)
		if len(b) != 12+8+256+4 {
			t.Fatalf("%v: %d octets", m.Type, len(b))
		}
		got, err := ibcm.DecodeRoCE(b)
		if err != nil {
			t.Fatalf("%v: %v", m.Type, err)
		}
		if !reflect.DeepEqual(got, p) {
			t.Errorf("%v: round trip\n got %+v\nwant %+v", m.Type, got, p)
		}
		// Native InfiniBand: LRH + GRH, ICRC, VCRC.
		ib := ibcm.AppendLRH(nil, ibcm.LRH{LNH: ibcm.LNHIBAGlobal, DLID: 1, SLID: 2})
		ib = ibcm.AppendGRH(ib, ibcm.GRH{IPVer: 6, NxtHdr: 0x1B})
		ib = append(ib, b...)
		ib = append(ib, 0xAA, 0xBB)
		gp, err := ibcm.DecodeIB(ib)
		if err != nil || !gp.HasLRH || !gp.HasGRH || gp.Msg.Type != m.Type || gp.ICRC != 0xCAFEBABE {
			t.Errorf("%v over IB: %v %+v", m.Type, err, gp.LRH)
		}
	}
	// Immediate data.
	p := ibcm.NewCMPacket(1, 2, sampleMessages()[4])
	p.BTH.OpCode, p.HasImm, p.Imm = ibcm.OpUDSendOnlyImm, true, 0xABCD
	p.HasICRC = true
	got, err := ibcm.DecodeRoCE(ibcm.AppendRoCE(nil, &p))
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Errorf("with immediate: %v %+v", err, got)
	}
}

func TestDecodeRoCEErrors(t *testing.T) {
	p := ibcm.NewCMPacket(1, 2, sampleMessages()[0])
	b := ibcm.AppendRoCE(nil, &p)
	for n := 0; n < 20+24+140; n++ {
		if _, err := ibcm.DecodeRoCE(b[:n]); err == nil {
			t.Fatalf("cut at %d: no error", n)
		}
	}
	// Without the ICRC the message still decodes.
	got, err := ibcm.DecodeRoCE(b[:len(b)-4])
	if err != nil || got.HasICRC {
		t.Errorf("no ICRC: %v %v", err, got.HasICRC)
	}
	rc := append([]byte(nil), b...)
	rc[0] = 0x04 // RC SEND Only
	if _, err := ibcm.DecodeRoCE(rc); err != ibcm.ErrNotCM {
		t.Errorf("RC: %v", err)
	}
	other := append([]byte(nil), b...)
	other[20+1] = 0x03 // subnet administration
	if _, err := ibcm.DecodeRoCE(other); err != ibcm.ErrNotCM {
		t.Errorf("SA class: %v", err)
	}
	qp := append([]byte(nil), b...)
	qp[7] = 2
	if _, err := ibcm.DecodeRoCE(qp); err != ibcm.ErrNotCM {
		t.Errorf("QP 2: %v", err)
	}
	raw := ibcm.AppendLRH(nil, ibcm.LRH{LNH: ibcm.LNHRaw})
	if _, err := ibcm.DecodeIB(append(raw, b...)); err != ibcm.ErrNotCM {
		t.Errorf("raw IB: %v", err)
	}
}

func TestServiceID(t *testing.T) {
	cases := []struct {
		sid      ibcm.ServiceID
		ps       ibcm.PortSpace
		port     uint16
		ok       bool
		describe string
	}{
		// PROTOCOL.md §F: NVMe-oF 4420 in the TCP port space.
		{0x0000000001061144, ibcm.PortSpaceTCP, 4420, true, "nvme (tcp port 4420)"},
		{ibcm.MakeServiceID(ibcm.PortSpaceTCP, 2049), ibcm.PortSpaceTCP, 2049, true, "nfs (tcp port 2049)"},
		{ibcm.MakeServiceID(ibcm.PortSpaceTCP, 20049), ibcm.PortSpaceTCP, 20049, true, "nfsrdma (tcp port 20049)"},
		{0x0000000001110000 | 3260, ibcm.PortSpaceUDP, 3260, true, "iser (udp port 3260)"},
		{0x00000000013F0000 | 5445, ibcm.PortSpaceIB, 5445, true, "smb-direct (ib port 5445)"},
		{0x0000000001020000 | 2049, ibcm.PortSpaceHello, 2049, true, "nfs (iwarp port 2049)"},
		{0x0000000001060000 | 9999, ibcm.PortSpaceTCP, 9999, true, "tcp port 9999"},
		{0x1000000001061144, 0, 0, false, "0x1000000001061144"},
		{0x0000000001070000, 0, 0, false, "0x0000000001070000"},
	}
	for _, c := range cases {
		ps, port, ok := c.sid.IP()
		if ps != c.ps || port != c.port || ok != c.ok {
			t.Errorf("%v: %v %d %v", c.sid, ps, port, ok)
		}
		if d := c.sid.Describe(); d != c.describe {
			t.Errorf("%v: Describe %q, want %q", c.sid, d, c.describe)
		}
	}
	if ibcm.PortSpaceTCP.String() != "tcp" || ibcm.PortSpace(0x0199).String() != "ps(0x0199)" {
		t.Error("port space names")
	}
}

func TestNames(t *testing.T) {
	if ibcm.RejConsumerDefined.String() != "consumer_defined" || ibcm.RejectReason(34).String() != "reason(34)" ||
		ibcm.RejVendorOptionUnsupp.String() != "vendor_option_not_supported" || ibcm.RejectReason(999).Defined() {
		t.Error("reject reason names")
	}
	names := map[ibcm.MsgType]string{ibcm.MsgREQ: "req", ibcm.MsgSIDRREP: "sidr_rep", ibcm.MsgAPR: "apr",
		ibcm.ClassPortInfo: "class_port_info", 0x0020: "attr(0x0020)"}
	for m, n := range names {
		if m.String() != n {
			t.Errorf("%d: %q", m, m.String())
		}
	}
	if ibcm.SIDRStatus(0).String() != "success" || ibcm.SIDRStatus(9).String() != "status(9)" {
		t.Error("SIDR status names")
	}
	if (ibcm.MAD{Method: 3}).MethodName() != "send" || (ibcm.MAD{R: true, Method: 1}).MethodName() != "get_resp" {
		t.Error("method names")
	}
}

func TestPrivateDataFormats(t *testing.T) {
	src := netip.MustParseAddrPort("198.51.100.2:39835")
	dst := netip.MustParseAddrPort("198.51.100.1:7174")
	h := ibcm.MakeIPCMHeader(src, dst)
	b := ibcm.AppendIPCMHeader(nil, h)
	// MANIFEST.md: byte 0 = 0x00, IP version in the high nibble of byte 1,
	// the source port, 16-octet addresses with IPv4 in the last four.
	want := []byte{0x00, 0x40, 0x9b, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 198, 51, 100, 2,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 198, 51, 100, 1}
	if !bytes.Equal(b, want) {
		t.Errorf("IP CM header % x", b)
	}
	if got, err := ibcm.DecodeIPCMHeader(b); err != nil || got != h {
		t.Errorf("IP CM round trip %+v %v", got, err)
	}
	hello := ibcm.MakeHello(netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::2"), ibcm.CapInvalidate|ibcm.CapZBVA)
	b = ibcm.AppendHello(nil, hello)
	if b[0] != 0x11 || b[1] != 0x63 || len(b) != ibcm.HelloLen {
		t.Errorf("Hello % x", b[:4])
	}
	if got, err := ibcm.DecodeHello(b); err != nil || got != hello || !got.Invalidate() || !got.ZBVA() ||
		got.SrcAddr().String() != "2001:db8::1" {
		t.Errorf("Hello round trip %+v %v", got, err)
	}
	ack := ibcm.HelloAck{MajV: 1, MinV: 1, Cap: ibcm.CapZBVA}
	b = ibcm.AppendHelloAck(nil, ack)
	if got, err := ibcm.DecodeHelloAck(b); err != nil || got != ack || got.Invalidate() || !got.ZBVA() {
		t.Errorf("HelloAck round trip %+v %v", got, err)
	}

	kinds := []struct {
		t    ibcm.MsgType
		sid  ibcm.ServiceID
		kind ibcm.PDKind
	}{
		{ibcm.MsgREQ, 0x0000000001061144, ibcm.PDIPCM},
		{ibcm.MsgSIDRREQ, 0x0000000001110000, ibcm.PDIPCM},
		{ibcm.MsgREP, 0x0000000001061144, ibcm.PDRaw},
		{ibcm.MsgREQ, 0x0000000001020801, ibcm.PDHello},
		{ibcm.MsgREP, 0x0000000001020801, ibcm.PDHelloAck},
		{ibcm.MsgRTU, 0x0000000001020801, ibcm.PDRaw},
		{ibcm.MsgREQ, 0x1234, ibcm.PDRaw},
		{ibcm.MsgREQ, 0x0000000000020801, ibcm.PDRaw}, // IPoIB port space: no header
	}
	for _, k := range kinds {
		if got := ibcm.PDKindFor(k.t, k.sid); got != k.kind {
			t.Errorf("%v %v: %v, want %v", k.t, k.sid, got, k.kind)
		}
	}
}

func TestChecks(t *testing.T) {
	codes := func(fs []dissect.Finding) []string {
		var c []string
		for _, f := range fs {
			c = append(c, f.Code)
		}
		return c
	}
	good := ibcm.MakeHello(netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), 0)
	if fs := good.Check(nil); len(fs) != 0 {
		t.Errorf("good Hello: %v", codes(fs))
	}
	bad := good
	bad.MajV, bad.IPV = 2, 5
	if got := codes(bad.Check(nil)); !reflect.DeepEqual(got, []string{"cm.hello_majv", "cm.hello_ipv"}) {
		t.Errorf("bad Hello: %v", got)
	}
	minor := good
	minor.MinV = 2
	minor.Src[0] = 1
	if got := codes(minor.Check(nil)); !reflect.DeepEqual(got, []string{"cm.hello_minv", "cm.hello_addr_upper"}) {
		t.Errorf("minor Hello: %v", got)
	}
	if got := codes((ibcm.HelloAck{MajV: 3, MinV: 1}).Check(nil)); !reflect.DeepEqual(got, []string{"cm.hello_ack_majv"}) {
		t.Errorf("HelloAck: %v", got)
	}
	if got := codes((ibcm.IPCMHeader{MajV: 1, IPV: 7}).Check(nil)); !reflect.DeepEqual(got, []string{"cm.ip_cm_version", "cm.ip_cm_ipv"}) {
		t.Errorf("IP CM: %v", got)
	}
	pd, err := ibcm.DecodePrivateData(ibcm.PDHello, []byte{1, 2})
	if err != dissect.ErrTruncated || pd.Kind != ibcm.PDRaw || len(pd.Consumer) != 2 {
		t.Errorf("short Hello: %v %+v", err, pd)
	}
}

func TestICRCv2Masking(t *testing.T) {
	// The variant fields do not change the ICRC.
	ip := []byte{0x45, 0x00, 0x01, 0x34, 0x49, 0x83, 0x40, 0x00, 0x40, 0x11, 0x9b, 0xcb, 198, 51, 100, 2, 198, 51, 100, 1}
	p := ibcm.NewCMPacket(0, 1, sampleMessages()[4])
	udp := append([]byte{0xd8, 0x72, 0x12, 0xb7, 0x01, 0x20, 0, 0}, ibcm.AppendRoCE(nil, &p)...)
	c := ibcm.ICRCv2(ip, udp)
	ip2 := append([]byte(nil), ip...)
	ip2[1], ip2[8], ip2[10] = 0xb8, 1, 0
	udp2 := append([]byte(nil), udp...)
	udp2[6], udp2[8+4] = 0x12, 0x80
	if ibcm.ICRCv2(ip2, udp2) != c {
		t.Error("ICRC depends on variant fields")
	}
	udp2[8+5] ^= 1 // destination QP is invariant
	if ibcm.ICRCv2(ip2, udp2) == c {
		t.Error("ICRC ignores the destination QP")
	}
	if ibcm.ICRCv2(ip, udp[:10]) != 0 {
		t.Error("short input")
	}
}

func TestNoAllocs(t *testing.T) {
	p := ibcm.NewCMPacket(1, 2, sampleMessages()[0])
	b := ibcm.AppendRoCE(nil, &p)
	ip := make([]byte, 20)
	ip[0] = 0x45
	udp := append(make([]byte, 8), b...)
	n := testing.AllocsPerRun(100, func() {
		q, err := ibcm.DecodeRoCE(b)
		if err != nil {
			t.Fatal(err)
		}
		pd, _ := ibcm.DecodePrivateData(ibcm.PDKindFor(q.Msg.Type, q.Msg.REQ.ServiceID), q.Msg.PrivateData)
		_ = pd
		_ = ibcm.ICRCv2(ip, udp)
	})
	if n != 0 {
		t.Errorf("%v allocations per decode", n)
	}
}

func BenchmarkDecodeRoCE(b *testing.B) {
	p := ibcm.NewCMPacket(1, 2, sampleMessages()[0])
	buf := ibcm.AppendRoCE(nil, &p)
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if _, err := ibcm.DecodeRoCE(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkICRCv2(b *testing.B) {
	p := ibcm.NewCMPacket(1, 2, sampleMessages()[0])
	udp := append(make([]byte, 8), ibcm.AppendRoCE(nil, &p)...)
	ip := make([]byte, 20)
	ip[0] = 0x45
	b.ReportAllocs()
	b.SetBytes(int64(len(udp)))
	for b.Loop() {
		_ = ibcm.ICRCv2(ip, udp)
	}
}

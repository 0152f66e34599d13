package synth

import (
	"net/netip"
	"slices"

	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// named is one entry of the scenario library.
type named struct {
	name  string
	desc  string
	build func(seed int64) Scenario
}

// library lists the named scenarios. Each builds a small capture (a few
// kilobytes) that holds the layout or condition its name promises; the
// package tests check every promise against the generated files.
var library = []named{
	{"rev1-crc", "MPA rev 1, CRC on, no markers: Send variants, Write, Read, zero-length messages", rev1Scenario(true)},
	{"rev1-nocrc", "MPA rev 1, CRC off, no markers, one FPDU per TCP segment (siw style)", rev1Scenario(false)},
	{"rev2-enhanced", "MPA rev 2 with Enhanced data (IRD/ORD) and private data, CRC on", rev2Enhanced},
	{"rev2-p2p-write-rtr", "MPA rev 2 peer-to-peer, RTR = zero-length RDMA Write (STag 1, TO 0)", rev2P2P(false)},
	{"rev2-p2p-read-rtr", "MPA rev 2 peer-to-peer, RTR = zero-length RDMA Read Request and its zero-length Read Response", rev2P2P(true)},
	{"rdmac", "RDMAC stream without MPA Request/Reply: markers and CRC both ways, DV = RV = 0", rdmacScenario},
	{"rev0-interop", "MPA rev 0 Request and Reply with M=1 C=1 (RDMAC interop): V=0, markers both ways", rev0Interop},
	{"markers-both", "MPA rev 1, markers both directions, CRC on, FPDUs sized to the MSS", markersScenario(true, true)},
	{"markers-i2r", "markers initiator->responder only (Reply M=1, Request M=0)", markersScenario(true, false)},
	{"markers-r2i", "markers responder->initiator only (Request M=1, Reply M=0)", markersScenario(false, true)},
	{"marker-grid-end", "FPDUs ending exactly on the 512-octet marker grid (next FPDU starts with a marker, FPDUPTR 0)", markerGridEnd},
	{"marker-multi", "FPDUs holding two or more markers, both directions", markerMulti},
	{"marker-pad-crc", "a marker between an FPDU's PAD and its CRC (covered by the CRC)", markerPadCRC},
	{"marker-split-len", "a marker splitting the ULPDU_Length field (rev 0 frames of odd length, grid anchored at ISN+1)", markerSplitLen},
	{"tiny-segments", "TCP segments holding fewer than 8 FPDU octets, markers cut across segments", tinySegments},
	{"mss-span", "FPDUs spanning several TCP segments, and several FPDUs sharing one segment", mssSpan},
	{"ipv6", "IPv6, MPA rev 2, CRC on", ipv6Scenario},
	{"retransmit-dup", "identical TCP retransmissions", impairScenario(Impairments{Duplicate: []SegRef{{I2R, 2}, {R2I, 1}}})},
	{"retransmit-conflict", "retransmissions of the same range with different octets", impairScenario(Impairments{Conflict: []SegRef{{I2R, 2}, {R2I, 1}}})},
	{"reorder", "segments captured out of order", impairScenario(Impairments{Reorder: []SegRef{{I2R, 2}, {R2I, 1}}})},
	{"gap", "segments missing from the capture (never retransmitted)", impairScenario(Impairments{Drop: []SegRef{{I2R, 3}, {R2I, 2}}})},
	{"crc-bad", "CRC on, some FPDUs with a wrong CRC", impairScenario(Impairments{CorruptCRC: []FPDURef{{I2R, 1}, {R2I, 0}, {I2R, 4}}})},
	{"midstream", "capture starts mid-stream (no handshake, no MPA frames), no markers", midstream(false, false)},
	{"midstream-markers", "capture starts mid-stream, markers both directions", midstream(true, true)},
	{"midstream-markers-r2i", "capture starts mid-stream, markers responder->initiator only (Request M=1, Reply M=0)", midstream(false, true)},
	{"terminate-rdmap", "Terminate, layer RDMAP (remote protection, Read Request header included)", terminateScenario(0)},
	{"terminate-ddp", "Terminate, layer DDP (tagged buffer error, DDP header included)", terminateScenario(1)},
	{"terminate-llp", "Terminate, layer LLP/MPA (CRC error), then RST", terminateScenario(2)},
	{"terminate-siw", "Terminate in Linux siw's little-endian control-word layout", terminateScenario(3)},
	{"reject", "MPA rev 2 Reply with R=1 and private data; the responder closes", rejectScenario},
	{"no-reply", "MPA Request rev 3 left unanswered; the responder closes", noReplyScenario},
	{"multi-conn", "three interleaved connections: rev 1 IPv4, rev 2 markers IPv6, RDMAC", multiConn},
	{"seq-wrap", "sequence numbers wrapping through 2^32 in both directions, markers and CRC", seqWrap},
	{"snaplen", "frames cut by a 128-octet snaplen: FPDUs incomplete", snaplenScenario},
	{"link-raw", "raw IP link type (DLT_RAW)", linkScenario(LinkRaw)},
	{"link-sll", "Linux cooked link type (DLT_LINUX_SLL)", linkScenario(LinkSLL)},
	{"rfc7306", "RFC 7306 Immediate Data and Atomic operations", rfc7306},
}

// Names returns the names of the library's scenarios, in library order.
func Names() []string {
	out := make([]string, len(library))
	for i, n := range library {
		out[i] = n.name
	}
	return out
}

// Describe returns a one-line description of a named scenario ("" when
// unknown).
func Describe(name string) string {
	for _, n := range library {
		if n.name == name {
			return n.desc
		}
	}
	return ""
}

// Named returns the library scenario called name, built with seed.
func Named(name string, seed int64) (Scenario, bool) {
	for _, n := range library {
		if n.name == name {
			s := n.build(seed)
			s.Name, s.Seed = name, seed
			return s, true
		}
	}
	return Scenario{}, false
}

var (
	addrI4 = netip.MustParseAddr("192.0.2.2")
	addrR4 = netip.MustParseAddr("192.0.2.1")
	addrI6 = netip.MustParseAddr("2001:db8::2")
	addrR6 = netip.MustParseAddr("2001:db8::1")
)

// conn4 returns a connection between the IPv4 test addresses, with the
// handshake and a FIN close.
func conn4(iport uint16) Conn {
	return Conn{
		Initiator: netip.AddrPortFrom(addrI4, iport),
		Responder: netip.AddrPortFrom(addrR4, 7174),
		Handshake: true,
	}
}

// rev1 returns rev 1 MPA parameters: markers wanted by the initiator
// (mR2I) and by the responder (mI2R), and CRC.
func rev1(mI2R, mR2I, crc bool) *MPAParams {
	return &MPAParams{
		Request: MPAFrame{Rev: 1, M: mR2I, C: crc},
		Reply:   MPAFrame{Rev: 1, M: mI2R, C: crc},
	}
}

// basicOps is a mix of every common operation, both directions.
func basicOps() []Op {
	return []Op{
		{Dir: I2R, Kind: Send, Size: 64, Pattern: PatternText},
		{Dir: R2I, Kind: Send, Size: 64, Pattern: PatternText},
		{Dir: I2R, Kind: Write, Size: 1600, STag: 0x1000, TO: 0x10000},
		{Dir: I2R, Kind: Read, Size: 1500, STag: 0x2000, TO: 0x20000, SrcSTag: 0x3000, SrcTO: 0x30000},
		{Dir: I2R, Kind: SendInv, Size: 32, STag: 0x1000},
		{Dir: R2I, Kind: SendSE, Size: 100},
		{Dir: R2I, Kind: SendSEInv, Size: 10, STag: 0x3000},
		{Dir: I2R, Kind: Send, Size: 0},
		{Dir: R2I, Kind: Write, Size: 0, STag: 0x4000},
		{Dir: R2I, Kind: Write, Size: 300, STag: 0x4000, TO: 8},
		{Dir: I2R, Kind: Send, Size: 1},
	}
}

func rev1Scenario(crc bool) func(int64) Scenario {
	return func(int64) Scenario {
		c := conn4(40001)
		c.MPA = rev1(false, false, crc)
		c.Ops = basicOps()
		if !crc {
			c.Segmentation = SegmentPerRecord
		}
		return Scenario{Conns: []Conn{c}}
	}
}

func rev2Enhanced(int64) Scenario {
	c := conn4(40002)
	c.MPA = &MPAParams{
		Request: MPAFrame{Rev: 2, C: true, Enhanced: &mpa.Enhanced{IRD: 4, ORD: 4}, PD: []byte("iwtest-client-request\x00")},
		Reply:   MPAFrame{Rev: 2, C: true, Enhanced: &mpa.Enhanced{IRD: 4, ORD: 4}, PD: []byte("iwtest-server-accept\x00")},
	}
	c.Ops = basicOps()
	return Scenario{Conns: []Conn{c}}
}

func rev2P2P(read bool) func(int64) Scenario {
	return func(int64) Scenario {
		c := conn4(40003)
		req := &mpa.Enhanced{IRD: 1, ORD: 1, A: true, C: true, D: true}
		rep := &mpa.Enhanced{IRD: 1, ORD: 1, A: true, C: !read, D: read}
		c.MPA = &MPAParams{
			Request: MPAFrame{Rev: 2, Enhanced: req},
			Reply:   MPAFrame{Rev: 2, Enhanced: rep},
		}
		c.Segmentation = SegmentPerRecord
		rtr := Op{Dir: I2R, Kind: Write, Size: 0, STag: 1, TO: 0}
		if read {
			rtr = Op{Dir: I2R, Kind: Read, Size: 0, STag: 0, SrcSTag: 1}
		}
		c.Ops = append([]Op{rtr}, basicOps()...)
		return Scenario{Conns: []Conn{c}}
	}
}

func rdmacScenario(int64) Scenario {
	c := conn4(40004)
	c.MPA = nil
	c.Ops = basicOps()
	return Scenario{Conns: []Conn{c}}
}

func rev0Interop(int64) Scenario {
	c := conn4(40005)
	c.MPA = &MPAParams{
		Request: MPAFrame{Rev: 0, M: true, C: true},
		Reply:   MPAFrame{Rev: 0, M: true, C: true},
	}
	c.Ops = basicOps()
	return Scenario{Conns: []Conn{c}}
}

func markersScenario(i2r, r2i bool) func(int64) Scenario {
	return func(int64) Scenario {
		c := conn4(40006)
		c.MPA = rev1(i2r, r2i, true)
		c.Segmentation = SegmentPerRecord
		c.Ops = append(basicOps(),
			Op{Dir: I2R, Kind: Write, Size: 2000, STag: 0x5000},
			Op{Dir: I2R, Kind: Read, Size: 1700, STag: 0x6000, SrcSTag: 0x7000},
		)
		return Scenario{Conns: []Conn{c}}
	}
}

// markerGridEnd: markers initiator->responder (origin = 20, after the
// 20-octet Request). Offsets below are relative to the origin:
//   - Send 484: [0, 512): leading marker + 508 plain octets, ends on the grid;
//   - Write 996: [512, 1536): leading marker, a second at 1024, ends on the grid;
//   - Send 100: [1536, 1664): leading marker + 124;
//   - Send 360: [1664, 2048): no marker, ends on the grid;
//   - Send 20: starts with a marker again.
func markerGridEnd(int64) Scenario {
	c := conn4(40007)
	c.MPA = rev1(true, false, true)
	c.MaxULPDU = 4000
	c.Ops = []Op{
		{Dir: I2R, Kind: Send, Size: 484},
		{Dir: I2R, Kind: Write, Size: 996, STag: 0x11},
		{Dir: I2R, Kind: Send, Size: 100},
		{Dir: I2R, Kind: Send, Size: 360},
		{Dir: I2R, Kind: Send, Size: 20},
		{Dir: R2I, Kind: Send, Size: 20},
	}
	return Scenario{Conns: []Conn{c}}
}

func markerMulti(int64) Scenario {
	c := conn4(40008)
	c.MPA = rev1(true, true, true)
	c.MaxULPDU = 2000
	c.Ops = []Op{
		{Dir: I2R, Kind: Write, Size: 6000, STag: 0x21, TO: 0x100},
		{Dir: I2R, Kind: Read, Size: 5000, STag: 0x22, SrcSTag: 0x23},
		{Dir: R2I, Kind: Send, Size: 1500},
	}
	return Scenario{Conns: []Conn{c}}
}

// markerPadCRC: markers initiator->responder; Send 485 from the origin:
// leading marker, 2+18+485 = 505 octets and 3 of PAD reach wire offset 512,
// where the next marker sits, then the CRC.
func markerPadCRC(int64) Scenario {
	c := conn4(40009)
	c.MPA = rev1(true, false, true)
	c.MaxULPDU = 4000
	c.Ops = []Op{
		{Dir: I2R, Kind: Send, Size: 485},
		{Dir: I2R, Kind: Send, Size: 64},
		{Dir: R2I, Kind: Send, Size: 64},
	}
	return Scenario{Conns: []Conn{c}}
}

// markerSplitLen: rev 0 frames with 3 octets of private data (23 octets)
// and the grid at ISN+1. The first FPDU (Send 464: 488 octets) spans
// [23, 511); the second starts at 511, so the marker at 512 falls between
// the two ULPDU_Length octets (FPDUPTR 1).
func markerSplitLen(int64) Scenario {
	c := conn4(40010)
	c.MPA = &MPAParams{
		Request: MPAFrame{Rev: 0, M: true, C: true, PD: []byte("abc")},
		Reply:   MPAFrame{Rev: 0, M: true, C: true, PD: []byte("xyz")},
	}
	c.Origin = OriginStreamStart
	c.MaxULPDU = 4000
	c.Ops = []Op{
		{Dir: I2R, Kind: Send, Size: 464},
		{Dir: I2R, Kind: Send, Size: 100},
		{Dir: R2I, Kind: Send, Size: 464},
		{Dir: R2I, Kind: Send, Size: 100},
	}
	return Scenario{Conns: []Conn{c}}
}

func tinySegments(int64) Scenario {
	c := conn4(40011)
	c.MPA = rev1(true, false, true)
	c.Segmentation = SegmentExact
	// The Request (20 octets) goes in 3 pieces, then FPDUs in slivers.
	c.ExactSegments[I2R] = []int{7, 6, 7, 1, 2, 3, 1, 5, 2, 4, 3, 6, 7, 1, 1, 200, 5, 3, 260, 2, 2, 6}
	c.ExactSegments[R2I] = []int{20, 3, 5, 1}
	c.Ops = []Op{
		{Dir: I2R, Kind: Send, Size: 40},
		{Dir: I2R, Kind: Send, Size: 3},
		{Dir: I2R, Kind: Write, Size: 500, STag: 0x31},
		{Dir: R2I, Kind: Send, Size: 30},
		{Dir: I2R, Kind: Send, Size: 0},
	}
	return Scenario{Conns: []Conn{c}}
}

func mssSpan(int64) Scenario {
	c := conn4(40012)
	c.MPA = rev1(false, false, true)
	c.MSS = 536
	c.MaxULPDU = 4000
	ops := []Op{{Dir: I2R, Kind: Write, Size: 4000, STag: 0x41}}
	for range 12 {
		ops = append(ops, Op{Dir: I2R, Kind: Send, Size: 16})
	}
	ops = append(ops, Op{Dir: I2R, Kind: Read, Size: 5000, STag: 0x42, SrcSTag: 0x43})
	c.Ops = ops
	return Scenario{Conns: []Conn{c}}
}

func ipv6Scenario(int64) Scenario {
	c := Conn{
		Initiator: netip.AddrPortFrom(addrI6, 40013),
		Responder: netip.AddrPortFrom(addrR6, 7174),
		Handshake: true,
		MPA: &MPAParams{
			Request: MPAFrame{Rev: 2, C: true, Enhanced: &mpa.Enhanced{IRD: 1, ORD: 1}},
			Reply:   MPAFrame{Rev: 2, C: true, Enhanced: &mpa.Enhanced{IRD: 1, ORD: 1}},
		},
		Ops: basicOps(),
	}
	return Scenario{Conns: []Conn{c}}
}

func impairScenario(im Impairments) func(int64) Scenario {
	return func(int64) Scenario {
		c := conn4(40014)
		c.MPA = rev1(false, false, true)
		c.Ops = basicOps()
		c.Impair = im
		c.Impair.Drop = slices.Clone(im.Drop)
		return Scenario{Conns: []Conn{c}}
	}
}

func midstream(mI2R, mR2I bool) func(int64) Scenario {
	return func(int64) Scenario {
		c := conn4(40015)
		c.MPA = rev1(mI2R, mR2I, true)
		c.Segmentation = SegmentPerRecord
		ops := basicOps()
		ops = append(ops, basicOps()...)
		c.Ops = ops
		c.Impair.StartAt = &StartAt{Dir: I2R, Offset: 3000}
		return Scenario{Conns: []Conn{c}}
	}
}

// terminateScenario: kind 0 RDMAP, 1 DDP, 2 LLP, 3 siw layout.
func terminateScenario(kind int) func(int64) Scenario {
	return func(int64) Scenario {
		c := conn4(40016)
		c.MPA = &MPAParams{
			Request: MPAFrame{Rev: 2, Enhanced: &mpa.Enhanced{IRD: 4, ORD: 4}},
			Reply:   MPAFrame{Rev: 2, Enhanced: &mpa.Enhanced{IRD: 4, ORD: 4}},
		}
		c.Segmentation = SegmentPerRecord
		ops := []Op{{Dir: I2R, Kind: Send, Size: 64}, {Dir: R2I, Kind: Send, Size: 64}}
		var term rdmap.Terminate
		switch kind {
		case 0: // a Read Request with a bad source STag
			rr := rdmap.ReadRequest{SinkSTag: 0x51, SinkTO: 0, Size: 1024, SrcSTag: 0xdead, SrcTO: 0x100}
			ops = append(ops, Op{Dir: I2R, Kind: Read, Size: 1024, STag: 0x51, SrcSTag: 0xdead, SrcTO: 0x100, NoResponse: true})
			term = rdmap.Terminate{Layer: 0, EType: rdmap.ETypeRDMAPRemoteProtection, Code: 0x00, M: true, D: true, R: true,
				DDPSegLen: 46, DDP: ddp.Header{L: true, DV: 1, ULPCtrl: 0x41, QN: 1, MSN: 1}, HasDDP: true, RDMA: rr, HasRDMA: true}
		case 1, 3: // a Write to a bad STag
			ops = append(ops, Op{Dir: I2R, Kind: Write, Size: 100, STag: 0xbad})
			term = rdmap.Terminate{Layer: 1, EType: rdmap.ETypeDDPTagged, Code: 0x00, M: true, D: true,
				DDPSegLen: 114, DDP: ddp.Header{T: true, L: true, DV: 1, ULPCtrl: 0x40, STag: 0xbad}, HasDDP: true}
			if kind == 3 { // siw writes RDMAP / remote operation / STag cannot be invalidated like this
				term = rdmap.Terminate{Layer: 0, EType: rdmap.ETypeRDMAPRemoteOperation, Code: 0x09, M: true, D: true,
					DDPSegLen: 114, DDP: ddp.Header{T: true, L: true, DV: 1, ULPCtrl: 0x40, STag: 0xbad}, HasDDP: true, SiwLayout: true}
			}
		case 2:
			ops = append(ops, Op{Dir: I2R, Kind: Send, Size: 200})
			c.Impair.CorruptCRC = []FPDURef{{I2R, 1}}
			c.MPA.Request.C, c.MPA.Reply.C = true, true
			term = rdmap.Terminate{Layer: 2, EType: rdmap.ETypeLLPMPA, Code: 0x02}
			c.Close = Close{Kind: CloseRST, By: R2I}
		}
		ops = append(ops, Op{Dir: R2I, Kind: Terminate, Term: term})
		c.Ops = ops
		if kind != 2 {
			c.Close = Close{Kind: CloseFIN, By: R2I}
		}
		return Scenario{Conns: []Conn{c}}
	}
}

func rejectScenario(int64) Scenario {
	c := conn4(40017)
	c.MPA = &MPAParams{
		Request: MPAFrame{Rev: 2, Enhanced: &mpa.Enhanced{IRD: 4, ORD: 4}, PD: []byte("iwtest-client-request\x00")},
		Reply:   MPAFrame{Rev: 2, R: true, Enhanced: &mpa.Enhanced{IRD: 4, ORD: 4}, PD: []byte("iwtest-server-REJECT\x00")},
	}
	return Scenario{Conns: []Conn{c}}
}

func noReplyScenario(int64) Scenario {
	c := conn4(40018)
	c.MPA = &MPAParams{
		Request: MPAFrame{Rev: 3, Enhanced: &mpa.Enhanced{IRD: 4, ORD: 4}, PD: []byte{0, 0, 0, 0}},
		NoReply: true,
	}
	return Scenario{Conns: []Conn{c}}
}

func multiConn(int64) Scenario {
	a := conn4(40019)
	a.MPA = rev1(false, false, true)
	a.Ops = basicOps()[:5]
	b := Conn{
		Initiator: netip.AddrPortFrom(addrI6, 40020),
		Responder: netip.AddrPortFrom(addrR6, 7174),
		Handshake: true,
		MPA: &MPAParams{
			Request: MPAFrame{Rev: 2, M: true, Enhanced: &mpa.Enhanced{IRD: 2, ORD: 2}},
			Reply:   MPAFrame{Rev: 2, M: true, Enhanced: &mpa.Enhanced{IRD: 2, ORD: 2}},
		},
		Ops: basicOps()[:5],
	}
	d := conn4(40021)
	d.MPA = nil
	d.Ops = basicOps()[:5]
	d.Segmentation = SegmentPerRecord
	return Scenario{Conns: []Conn{a, b, d}}
}

func seqWrap(int64) Scenario {
	c := conn4(40022)
	c.MPA = rev1(true, true, true)
	// Sequence number ISN+1+off reaches 2^32 at stream offset 100
	// (initiator) and 60 (responder): inside the first FPDUs.
	c.ISNI = 0xFFFFFFFF - 100
	c.ISNR = 0xFFFFFFFF - 60
	c.Ops = basicOps()
	return Scenario{Conns: []Conn{c}}
}

func snaplenScenario(int64) Scenario {
	c := conn4(40023)
	c.MPA = rev1(false, false, true)
	c.Ops = basicOps()
	return Scenario{Conns: []Conn{c}, Snaplen: 128}
}

func linkScenario(l LinkType) func(int64) Scenario {
	return func(int64) Scenario {
		c := conn4(40024)
		c.MPA = rev1(false, false, true)
		c.Ops = basicOps()
		return Scenario{Conns: []Conn{c}, LinkType: l}
	}
}

func rfc7306(int64) Scenario {
	c := conn4(40025)
	c.MPA = rev1(false, false, true)
	c.Segmentation = SegmentPerRecord
	c.Ops = []Op{
		{Dir: I2R, Kind: Send, Size: 16},
		{Dir: I2R, Kind: Immediate, Immediate: 0x0102030405060708},
		{Dir: R2I, Kind: ImmediateSE, Immediate: 0x1122334455667788},
		{Dir: I2R, Kind: Atomic,
			AtomicReq:  rdmap.AtomicRequest{Op: rdmap.AtomicFetchAdd, ReqID: 1, RemoteSTag: 0x61, RemoteTO: 0x1000, AddSwapData: 5},
			AtomicResp: rdmap.AtomicResponse{ReqID: 1, OrigValue: 42}},
		{Dir: I2R, Kind: Atomic,
			AtomicReq: rdmap.AtomicRequest{Op: rdmap.AtomicCmpSwap, ReqID: 2, RemoteSTag: 0x61, RemoteTO: 0x1008,
				AddSwapData: 7, AddSwapMask: ^uint64(0), CompareData: 42, CompareMask: ^uint64(0)},
			AtomicResp: rdmap.AtomicResponse{ReqID: 2, OrigValue: 42}},
	}
	return Scenario{Conns: []Conn{c}}
}

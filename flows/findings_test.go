package flows_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/reassembly"
	"github.com/iwarpkit/iwarpkit/synth"
)

// This file keeps docs/findings.md and the decoder's finding codes in step
// (issue 5): every code the decoder can emit is documented, every
// documented code has a capture that triggers it with the documented
// severity, and the clean captures trigger none.

// findingsDoc is the table of finding codes, relative to this package.
const findingsDoc = "../docs/findings.md"

// trigger is a capture generated here with the synth package that makes
// the decoder emit one or more codes. (Captures under testdata/ are named
// by their path instead; real captures are preferred where one shows the
// code.)
type trigger struct {
	// gen builds the scenario; patch, when set, then edits the generated
	// pcap in place (res is the generator's ground truth).
	gen   func() synth.Scenario
	patch func(t *testing.T, pcap []byte, res *synth.Result)
	// opts are the decoder options.
	opts flows.Options
}

// findingCase says that trigger (a testdata path or the name of a
// generated trigger) makes the decoder emit code with severity sev.
type findingCase struct {
	code    string
	sev     dissect.Severity
	trigger string
}

var (
	note    = dissect.SeverityNote
	warning = dissect.SeverityWarning
	errSev  = dissect.SeverityError
)

// findingCases lists, for every code, the captures that demonstrate it. A
// code emitted with two severities (on two paths) has a case for each.
var findingCases = []findingCase{
	// Capture limits.
	{"cap.conn_evicted", warning, "conn-table-of-one"},
	{"cap.findings_suppressed", note, "crc-bad-x101"},
	{"cap.reassembly_buffer", warning, "reorder-tiny-buffer"},
	{"cap.snaplen", warning, "testdata/synth/snaplen.pcap"},
	{"cap.caplen_above_len", warning, "caplen-above-len"},

	// TCP.
	{"tcp.gap", warning, "testdata/synth/gap.pcap"},
	{"tcp.stall", warning, "read-stall"},
	{"tcp.reset", warning, "read-reset"},
	{"tcp.reset", note, "testdata/synth/terminate-llp.pcap"},
	{"tcp.connect_failed", warning, "testdata/tcp/connect-refused.pcap"},
	{"tcp.connect_failed", warning, "testdata/tcp/connect-unanswered.pcap"},
	{"tcp.retransmit_conflict", warning, "testdata/synth/retransmit-conflict.pcap"},
	{"tcp.data_after_fin", warning, "send-moved-past-fin"},
	{"tcp.malformed", warning, "tcp-data-offset-4"},

	// MPA Request/Reply.
	{"mpa.pd_len_too_long", warning, "pd-len-600"},
	{"mpa.res_nonzero", note, "testdata/siw/gso_v2_nocrc_ib_write_bw_200000.pcap"},
	{"mpa.rev_unknown", warning, "testdata/siw/mpareq_rev3.pcap"},
	{"mpa.s_without_rev2", note, "testdata/siw/mpareq_rev3.pcap"},
	{"mpa.reject_in_request", warning, "reject-bit-in-request"},
	{"mpa.enhanced_missing", errSev, "s-without-enhanced-data"},
	{"mpa.rejected", note, "testdata/siw/reject_app_v2.pcap"},
	{"mpa.rejected", warning, "testdata/siw/mpareq_markers.pcap"},
	{"mpa.data_after_reject", warning, "data-after-reject"},
	{"mpa.data_after_reject", warning, "data-after-reject-by-initiator"},
	{"mpa.request_from_responder", warning, "mpa-roles-swapped"},
	{"mpa.request_from_responder", warning, "two-requests"},
	{"mpa.reply_from_initiator", warning, "mpa-roles-swapped"},
	{"mpa.reply_without_request", warning, "request-not-captured"},
	{"mpa.reply_without_request", warning, "two-replies"},
	{"mpa.duplicate_request", warning, "two-requests"},
	{"mpa.duplicate_reply", warning, "two-replies"},
	{"mpa.enhanced_not_answered", errSev, "enhanced-answered-rev1"},
	{"mpa.ord_exceeds_ird", errSev, "reply-ord-above-request-ird"},
	{"mpa.negotiation_not_captured", warning, "reply-not-captured"},
	{"mpa.negotiation_not_captured", warning, "request-not-captured"},

	// MPA framing.
	{"mpa.crc_bad", errSev, "testdata/synth/terminate-llp.pcap"},
	{"mpa.crc_byte_order", errSev, "crc-reversed-midstream"},
	{"mpa.crc_unverified", warning, "crc-wrong-midstream"},
	{"mpa.marker_ptr_bad", errSev, "marker-ptr-patched"},
	{"mpa.marker_ptr_bad", errSev, "marker-ptr-patched-crc-bad"},
	{"mpa.marker_ptr_bad", errSev, "marker-ptr-patched-nocrc"},
	{"mpa.pad_nonzero", note, "testdata/siw/basic_ib_read_bw_4096_v2_nocrc.pcap"},
	{"mpa.grid_at_isn", note, "testdata/synth/marker-split-len.pcap"},
	{"mpa.markers_unexpected", errSev, "markers-not-negotiated"},
	{"mpa.sync_lost", warning, "testdata/synth/gap.pcap"},
	{"mpa.resync", note, "testdata/synth/gap.pcap"},
	{"mpa.midstream_lock", note, "testdata/midstream/rping_nocrc_from_frame20.pcap"},
	{"mpa.forced_unframed", warning, "forced-markers-no-markers"},
	{"mpa.no_reply", warning, "testdata/synth/no-reply.pcap"},
	{"mpa.no_reply", warning, "testdata/siw/mpareq_rev3.pcap"},
	{"mpa.no_reply", note, "no-reply-open"},
	{"rdmap.read_unanswered", warning, "read-no-response"},
	{"rdmap.read_unanswered", note, "read-no-response-open"},

	// MPA connection rules.
	{"mpa.responder_first", warning, "testdata/siw/crc_v2_iwtest_ops.pcap"},
	{"mpa.responder_first", errSev, "p2p-responder-first"},
	{"mpa.rtr", note, "testdata/siw/p2p_rtr1_rping.pcap"},
	{"mpa.rtr_missing", errSev, "p2p-no-rtr"},
	{"mpa.rtr_type", errSev, "p2p-rtr-wrong-type"},
	{"mpa.rtr_type", warning, "p2p-no-rtr-flags-write"},
	{"mpa.ird_insufficient_term", errSev, "terminate-llp-0x06"},
	{"mpa.no_rtr_match", errSev, "terminate-llp-0x07"},

	// DDP.
	{"ddp.dv_rdmac", note, "testdata/synth/rdmac.pcap"},
	{"ddp.dv_unknown", warning, "dv-rv-2"},
	{"ddp.rsvd_nonzero", warning, "ddp-rsvd-bits"},
	{"ddp.qn_invalid", errSev, "send-on-queue-7"},
	{"ddp.malformed", errSev, "ulpdu-shorter-than-header"},
	{"ddp.version_mismatch", errSev, "dv-changes"},
	{"ddp.msn_first", warning, "msn-starts-at-5"},
	{"ddp.msn_duplicate", warning, "msn-repeated"},
	{"ddp.msn_gap", warning, "msn-skips"},
	{"ddp.offset_discontinuity", warning, "mo-jumps"},
	{"ddp.offset_discontinuity", warning, "send-starts-at-mo-100"},
	{"ddp.message_incomplete", note, "testdata/siw/term_toolong.pcap"},
	{"ddp.message_incomplete", warning, "message-gather-limit"},

	// RDMAP.
	{"rdmap.rv_rdmac", note, "testdata/synth/rdmac.pcap"},
	{"rdmap.rv_unknown", warning, "dv-rv-2"},
	{"rdmap.version_mix", warning, "rv-0-with-dv-1"},
	{"rdmap.rsvd_nonzero", warning, "rdmap-rsvd-bits"},
	{"rdmap.opcode_reserved", errSev, "opcode-0xc"},
	{"rdmap.tagged_mismatch", errSev, "send-tagged"},
	{"rdmap.qn_mismatch", errSev, "send-on-queue-1"},
	{"rdmap.inval_stag_nonzero", warning, "send-with-inval-stag"},
	{"rdmap.read_req_not_last", errSev, "read-request-not-last"},
	{"rdmap.read_req_mo_nonzero", errSev, "read-request-mo-4"},
	{"rdmap.payload_unexpected", warning, "read-request-with-payload"},
	{"rdmap.read_size_mismatch", errSev, "read-response-too-short"},
	{"rdmap.read_response_order", warning, "read-responses-swapped"},
	{"rdmap.reads_exceed_ord", errSev, "two-reads-ord-1"},
	{"rdmap.terminate", errSev, "testdata/siw/term_badwrite.pcap"},
	{"rdmap.term_siw_layout", note, "testdata/siw/term_badwrite.pcap"},
	{"rdmap.term_segment", note, "testdata/siw/term_badwrite.pcap"},
	{"rdmap.term_not_last", errSev, "terminate-not-last"},
	{"rdmap.term_mo_nonzero", errSev, "terminate-mo-4"},
	{"rdmap.term_code_unknown", warning, "terminate-code-0x50"},
	{"rdmap.term_rsvd_nonzero", warning, "terminate-rsvd-bits"},
	{"rdmap.term_seglen_mismatch", warning, "terminate-seglen-mismatch"},
	{"rdmap.term_cause_unexpected", warning, "terminate-protection-on-write"},
	{"rdmap.term_hdr_missing", warning, "terminate-ddp-without-header"},
	{"rdmap.term_hdr_unexpected", warning, "terminate-llp-with-header"},
	{"rdmap.term_len_not_valid", note, "terminate-d-without-m"},
	{"rdmap.after_terminate", warning, "send-after-terminate"},

	// Interoperability matrix.
	{"interop.close_expected", errSev, "rev0-request-rev1-reply"},
	{"interop.version_mismatch", errSev, "rev1-with-dv-0"},
	{"interop.markers_mismatch", errSev, "markers-not-negotiated"},
}

// unreachable lists codes that no valid capture can trigger, with the
// reason (docs/findings.md says "not reachable" for them). Empty: every
// code has a trigger.
var unreachable = map[string]string{}

// knownBugs lists cases ("code/trigger") that fail because of a decoder bug,
// with the bug. They are skipped while the bug lasts; once the code is
// emitted the test fails so that the entry is removed.
var knownBugs = map[string]string{}

// repeatedBugs lists codes that the decoder reports twice for the same
// event (same record, code and message), with the bug.
var repeatedBugs = map[string]string{}

// Endpoints of the generated connections (RFC 5737 documentation addresses).
var (
	hostI = netip.MustParseAddr("192.0.2.2")
	hostR = netip.MustParseAddr("192.0.2.1")
)

// isnI and isnR are the initial sequence numbers of generated connections,
// fixed so that spliced connections (see spliced) can continue a stream.
const (
	isnI = 1000
	isnR = 5000
)

// baseConn is an MPA rev 1 connection with CRC, no markers, the TCP
// handshake, each FPDU in a segment of its own and a FIN close.
func baseConn(port uint16) synth.Conn {
	return synth.Conn{
		Initiator:    netip.AddrPortFrom(hostI, port),
		Responder:    netip.AddrPortFrom(hostR, 7174),
		ISNI:         isnI,
		ISNR:         isnR,
		Handshake:    true,
		MPA:          &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}},
		Segmentation: synth.SegmentPerRecord,
	}
}

// unansweredRead is a Read Request never answered, on a connection that
// ends as end says.
func unansweredRead(end synth.CloseKind) synth.Scenario {
	c := baseConn(40100)
	c.Ops = append(opening(), synth.Op{Dir: synth.I2R, Kind: synth.Read, Size: 512, STag: 0x51, SrcSTag: 0x61, NoResponse: true})
	c.Close.Kind = end
	return scenario(c)
}

// scenario wraps connections in a scenario with a fixed seed.
func scenario(cs ...synth.Conn) synth.Scenario {
	return synth.Scenario{Seed: 1, Conns: cs}
}

// withOps is baseConn carrying ops.
func withOps(ops ...synth.Op) synth.Scenario {
	c := baseConn(40100)
	c.Ops = ops
	return scenario(c)
}

// opening is the start of most generated connections: the initiator speaks
// first (an RDMA Write, so no untagged queue is used yet) and the
// responder answers with a Send; the FPDUs under test follow. A valid
// first FPDU in each direction keeps the first-FPDU framing checks out of
// the way.
func opening() []synth.Op {
	return []synth.Op{
		{Dir: synth.I2R, Kind: synth.Write, Size: 16, STag: 0x99},
		{Dir: synth.R2I, Kind: synth.Send, Size: 16},
	}
}

// withRaw is baseConn with the opening and then ULPDUs sent as they are
// (synth.RawULPDU) by the initiator. CRC is on, so the decoder frames them
// on their length field whatever their headers say.
func withRaw(segs ...rdmap.Segment) synth.Scenario {
	ops := opening()
	for _, s := range segs {
		ops = append(ops, rawOp(synth.I2R, rdmap.AppendSegment(nil, s)))
	}
	return withOps(ops...)
}

func rawOp(d synth.Dir, ulpdu []byte) synth.Op {
	return synth.Op{Dir: d, Kind: synth.RawULPDU, Payload: ulpdu}
}

// untagged returns an RDMAP version 1 untagged segment.
func untagged(op rdmap.Opcode, qn, msn, mo uint32, last bool, payload []byte) rdmap.Segment {
	return rdmap.Segment{
		DDP:     ddp.Header{L: last, DV: 1, QN: qn, MSN: msn, MO: mo},
		RV:      1,
		Opcode:  op,
		Payload: payload,
	}
}

// send is a one-segment Send with MSN msn and 8 octets of payload.
func send(msn uint32) rdmap.Segment {
	return untagged(rdmap.OpSend, 0, msn, 0, true, []byte("iwarpkit"))
}

// readReq is an RDMA Read Request segment (RFC 5040 §4.4).
func readReq(last bool, mo uint32) rdmap.Segment {
	s := untagged(rdmap.OpReadRequest, 1, 1, mo, last, nil)
	s.Read = rdmap.ReadRequest{SinkSTag: 0x51, Size: 64, SrcSTag: 0x52}
	return s
}

// terminate is a Terminate segment carrying t (RFC 5040 §4.8).
func terminate(last bool, mo uint32, t rdmap.Terminate) rdmap.Segment {
	s := untagged(rdmap.OpTerminate, 2, 1, mo, last, nil)
	s.Term = t
	return s
}

// withTerm is baseConn with the opening and a Terminate t from the
// responder.
func withTerm(t rdmap.Terminate) synth.Scenario {
	return withOps(append(opening(), synth.Op{Dir: synth.R2I, Kind: synth.Terminate, Term: t})...)
}

// rev2Term is withTerm after an MPA rev 2 exchange with Enhanced data
// (IRD = ORD = 1), whose LLP error codes 0x05-0x07 (RFC 6581) apply.
func rev2Term(t rdmap.Terminate) synth.Scenario {
	s := withTerm(t)
	s.Conns[0].MPA = &synth.MPAParams{
		Request: synth.MPAFrame{Rev: 2, C: true, Enhanced: &mpa.Enhanced{IRD: 1, ORD: 1}},
		Reply:   synth.MPAFrame{Rev: 2, C: true, Enhanced: &mpa.Enhanced{IRD: 1, ORD: 1}},
	}
	return s
}

// readResponse is a one-segment RDMA Read Response of n octets into Data
// Sink STag stag at TO to.
func readResponse(stag uint32, to uint64, n int) []byte {
	return rdmap.AppendSegment(nil, rdmap.Segment{DDP: ddp.Header{T: true, L: true, DV: 1, STag: stag, TO: to},
		RV: 1, Opcode: rdmap.OpReadResponse, Payload: make([]byte, n)})
}

// writeHdr is the terminated header of an RDMA Write (tagged, RFC 5041 §4).
var writeHdr = ddp.Header{T: true, L: true, DV: 1, ULPCtrl: uint8(rdmap.MakeControl(1, 0, rdmap.OpWrite)), STag: 0xbad}

// p2p returns a rev 2 connection in peer-to-peer mode (RFC 6581 §9): the
// Request offers every RTR type; the Reply's Enhanced data is reply with
// A (peer-to-peer), IRD and ORD set here, its B, C and D flags allowing a
// Send, Write or Read RTR.
func p2p(reply mpa.Enhanced, ops ...synth.Op) synth.Scenario {
	c := baseConn(40100)
	reply.A, reply.IRD, reply.ORD = true, 1, 1
	c.MPA = &synth.MPAParams{
		Request: synth.MPAFrame{Rev: 2, C: true, Enhanced: &mpa.Enhanced{IRD: 1, ORD: 1, A: true, B: true, C: true, D: true}},
		Reply:   synth.MPAFrame{Rev: 2, C: true, Enhanced: &reply},
	}
	c.Ops = ops
	return scenario(c)
}

// spliced returns a connection that continues the TCP connection of
// baseConn(port) from the other end: its initiator is baseConn's
// responder. synth builds one MPA exchange per connection, started by the
// TCP active side; the MPA rules about who may send what need a stream in
// which the other side speaks MPA too. The decoder keys connections by
// their endpoints, so the two synth connections are one to it. offI and
// offR are where the new connection's octets start in baseConn's
// initiator->responder and responder->initiator streams; delay puts its
// frames after baseConn's.
func spliced(port uint16, offI, offR uint32, delay time.Duration) synth.Conn {
	return synth.Conn{
		Initiator:    netip.AddrPortFrom(hostR, 7174),
		Responder:    netip.AddrPortFrom(hostI, port),
		ISNI:         isnR + offR,
		ISNR:         isnI + offI,
		StartDelay:   delay,
		Segmentation: synth.SegmentPerRecord,
		AckEvery:     -1,
		Close:        synth.Close{Kind: synth.CloseNone},
	}
}

// mpaFrameLen is the length of an MPA frame without private data.
const mpaFrameLen = 20

// afterReject is a connection whose Reply rejects it (RFC 5044 §7.1.1),
// after which side d sends an FPDU (CRC on, no markers) anyway. synth
// refuses operations on a rejected connection, so the FPDU comes from a
// second synth connection that continues both streams after the MPA
// frames.
func afterReject(d synth.Dir) synth.Scenario {
	a := baseConn(40100)
	a.MPA.Reply.R = true
	a.Close = synth.Close{Kind: synth.CloseNone}
	b := synth.Conn{
		Initiator:    a.Initiator,
		Responder:    a.Responder,
		ISNI:         isnI + mpaFrameLen,
		ISNR:         isnR + mpaFrameLen,
		StartDelay:   10 * time.Millisecond,
		MarkersI2R:   synth.Bool(false),
		MarkersR2I:   synth.Bool(false),
		CRC:          synth.Bool(true),
		Segmentation: synth.SegmentPerRecord,
		AckEvery:     -1,
		Close:        synth.Close{Kind: synth.CloseNone},
		// No MPA frames: b is what follows a's.
		DV:  synth.U8(1),
		RV:  synth.U8(1),
		Ops: []synth.Op{{Dir: d, Kind: synth.Send, Size: 16}},
	}
	return scenario(a, b)
}

// triggers are the generated captures, by name.
var triggers = map[string]trigger{
	"send-moved-past-fin": {
		// The initiator's last Send, its sequence number moved 64 KiB
		// ahead: held out of order, then past the initiator's FIN.
		gen: func() synth.Scenario {
			return withOps(append(opening(), synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 16})...)
		},
		patch: func(t *testing.T, pcap []byte, res *synth.Result) {
			t.Helper()
			var last uint64
			for _, r := range res.Records {
				if f, ok := r.(*synth.TruthFPDU); ok && f.Src == hostI.String()+":40100" {
					last = f.Frames[len(f.Frames)-1]
				}
			}
			if last == 0 {
				t.Fatal("no FPDU from the initiator in the truth")
			}
			moveSeq(t, pcap, last, 64<<10)
		},
	},
	"no-reply-open": {
		// An MPA Request unanswered, the connection still open when
		// the capture ends.
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, NoReply: true}
			c.Close.Kind = synth.CloseNone
			return scenario(c)
		},
	},
	"read-no-response": {
		// A Read Request never answered; the connection then closes.
		gen: func() synth.Scenario {
			return withOps(append(opening(), synth.Op{Dir: synth.I2R, Kind: synth.Read, Size: 512, STag: 0x51, SrcSTag: 0x61, NoResponse: true})...)
		},
	},
	"read-no-response-open": {
		// The same, the connection still open when the capture ends.
		gen: func() synth.Scenario { return unansweredRead(synth.CloseNone) },
	},
	"read-reset": {
		// A Read Request never answered; the connection is then reset.
		gen: func() synth.Scenario { return unansweredRead(synth.CloseRST) },
	},
	"tcp-data-offset-4": {
		// The initiator's second FPDU in a segment whose TCP Data Offset
		// says 4 words, below the 5 of the fixed header.
		gen: func() synth.Scenario {
			return withOps(append(opening(), synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 100})...)
		},
		patch: func(t *testing.T, pcap []byte, res *synth.Result) {
			t.Helper()
			setDataOffset(t, pcap, truthFPDUs(res, hostI.String()+":40100")[1].Frames[0], 4)
		},
	},
	"caplen-above-len": {
		// Every record of the initiator's FPDUs says 10 octets fewer
		// were on the wire than were captured.
		gen: func() synth.Scenario {
			return withOps(append(opening(), synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 100})...)
		},
		patch: func(t *testing.T, pcap []byte, res *synth.Result) {
			t.Helper()
			for _, f := range truthFPDUs(res, hostI.String()+":40100") {
				for _, fr := range f.Frames {
					shortenWireLen(t, pcap, fr, 10)
				}
			}
		},
	},
	"read-stall": {
		// A Read Request answered only after a pause of a second: every
		// frame after the request's comes a second later.
		gen: func() synth.Scenario {
			return withOps(append(opening(), synth.Op{Dir: synth.I2R, Kind: synth.Read, Size: 512, STag: 0x51, SrcSTag: 0x61})...)
		},
		patch: func(t *testing.T, pcap []byte, res *synth.Result) {
			t.Helper()
			for _, r := range res.Records {
				if f, ok := r.(*synth.TruthFPDU); ok && f.RDMAP != nil && f.RDMAP.Opcode == uint8(rdmap.OpReadRequest) {
					delayAfter(t, pcap, f.Frames[len(f.Frames)-1], time.Second)
					return
				}
			}
			t.Fatal("no Read Request in the truth")
		},
	},
	"crc-reversed-midstream": {
		// Mid-stream, every CRC the initiator sends has its octets in
		// reverse order (TestCRCFaults).
		gen: func() synth.Scenario { return crcFaultScenario(false, false, false, "reverse") },
	},
	"crc-wrong-midstream": {
		// Mid-stream, every CRC the initiator sends is wrong.
		gen: func() synth.Scenario { return crcFaultScenario(false, false, false, "corrupt") },
	},
	"forced-markers-no-markers": {
		// --decode-as markers=both on a marker-free capture whose
		// handshake was not captured: nothing can be framed.
		gen: func() synth.Scenario {
			sc, _ := synth.Named("midstream", 1)
			return sc
		},
		opts: flows.Options{Force: []flows.Force{{Port: 7174, MarkersSet: true, MarkersTo: true, MarkersFrom: true, NeverGiveUp: true}}},
	},
	"conn-table-of-one": {
		// Two connections, the first still open when the second
		// starts, with room for one. (One that has closed is finished
		// then: it leaves room.)
		gen: func() synth.Scenario {
			a, b := baseConn(40100), baseConn(40101)
			a.Ops = opening()
			a.Close.Kind = synth.CloseNone
			b.Ops = opening()
			b.StartDelay = time.Second
			return scenario(a, b)
		},
		opts: flows.Options{MaxConns: 1},
	},
	"crc-bad-x101": {
		// 101 FPDUs with a bad CRC: the 101st mpa.crc_bad is not reported.
		gen: func() synth.Scenario {
			c := baseConn(40100)
			for i := range 101 {
				c.Ops = append(c.Ops, synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 8})
				c.Impair.CorruptCRC = append(c.Impair.CorruptCRC, synth.FPDURef{Dir: synth.I2R, Index: i})
			}
			return scenario(c)
		},
	},
	"reorder-tiny-buffer": {
		// Two segments captured in the wrong order with a one-octet
		// out-of-order buffer: the early one cannot be held.
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.Ops = append(opening(), synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 100}, synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 100})
			c.Impair.Reorder = []synth.SegRef{{Dir: synth.I2R, Index: 2}}
			return scenario(c)
		},
		opts: flows.Options{Reassembly: reassembly.Options{MaxBuffered: 1}},
	},
	"pd-len-600": {
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.MPA.Request.PD = bytes.Repeat([]byte{'p'}, 600)
			c.Ops = opening()
			return scenario(c)
		},
	},
	"reject-bit-in-request": {
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.MPA.Request.R = true
			c.Ops = opening()
			return scenario(c)
		},
	},
	"s-without-enhanced-data": {
		// Rev 2 with S set and no private data.
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.MPA.Request = synth.MPAFrame{Rev: 2, C: true, S: true}
			c.MPA.Reply = synth.MPAFrame{Rev: 2, C: true, Enhanced: &mpa.Enhanced{IRD: 1, ORD: 1}}
			c.Ops = opening()
			return scenario(c)
		},
	},
	"data-after-reject": {
		// The Reply rejects; then the responder sends an FPDU anyway.
		gen: func() synth.Scenario { return afterReject(synth.R2I) },
	},
	"data-after-reject-by-initiator": {
		// The Reply rejects; then the initiator sends an FPDU anyway.
		gen: func() synth.Scenario { return afterReject(synth.I2R) },
	},
	"mpa-roles-swapped": {
		// The TCP passive side sends the MPA Request and the active side
		// (the SYN's sender) the Reply.
		gen: func() synth.Scenario {
			a := baseConn(40100)
			a.MPA = nil // the TCP handshake only
			a.Close = synth.Close{Kind: synth.CloseNone}
			b := spliced(40100, 0, 0, 10*time.Millisecond)
			b.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}}
			b.Ops = []synth.Op{{Dir: synth.R2I, Kind: synth.Send, Size: 16}, {Dir: synth.I2R, Kind: synth.Send, Size: 16}}
			return scenario(a, b)
		},
	},
	"request-not-captured": {
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.Ops = opening()
			c.Impair.Drop = []synth.SegRef{{Dir: synth.I2R, Index: 0}}
			return scenario(c)
		},
	},
	"two-requests": {
		// The initiator sends a Request; so does the responder.
		gen: func() synth.Scenario {
			a := baseConn(40100)
			a.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, NoReply: true}
			a.Close = synth.Close{Kind: synth.CloseNone}
			a.AckEvery = -1
			b := spliced(40100, mpaFrameLen, 0, 10*time.Millisecond)
			b.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, NoReply: true}
			return scenario(a, b)
		},
	},
	"two-replies": {
		// Both sides send a Reply; neither Request is captured.
		gen: func() synth.Scenario {
			a := baseConn(40100)
			a.Close = synth.Close{Kind: synth.CloseNone}
			a.AckEvery = -1
			a.Impair.Drop = []synth.SegRef{{Dir: synth.I2R, Index: 0}}
			b := spliced(40100, 0, mpaFrameLen, 10*time.Millisecond)
			b.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}}
			b.Impair.Drop = []synth.SegRef{{Dir: synth.I2R, Index: 0}}
			return scenario(a, b)
		},
	},
	"enhanced-answered-rev1": {
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.MPA.Request = synth.MPAFrame{Rev: 2, C: true, Enhanced: &mpa.Enhanced{IRD: 4, ORD: 4}}
			c.Ops = opening()
			return scenario(c)
		},
	},
	"reply-ord-above-request-ird": {
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.MPA.Request = synth.MPAFrame{Rev: 2, C: true, Enhanced: &mpa.Enhanced{IRD: 1, ORD: 1}}
			c.MPA.Reply = synth.MPAFrame{Rev: 2, C: true, Enhanced: &mpa.Enhanced{IRD: 1, ORD: 4}}
			c.Ops = opening()
			return scenario(c)
		},
	},
	"reply-not-captured": {
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.Ops = opening()
			c.Impair.Drop = []synth.SegRef{{Dir: synth.R2I, Index: 0}}
			return scenario(c)
		},
	},
	"marker-ptr-patched": {
		// Markers both ways and CRC; the FPDUPTR of the marker inside
		// the initiator's second FPDU is changed and the CRC recomputed,
		// so the FPDU still validates.
		gen:   func() synth.Scenario { return markerPtrScenario(true) },
		patch: patchMarker,
	},
	"marker-ptr-patched-crc-bad": {
		// The same marker changed without the CRC recomputed: the FPDU
		// fails its CRC too, as after damage on the way.
		gen: func() synth.Scenario { return markerPtrScenario(true) },
		patch: func(t *testing.T, pcap []byte, res *synth.Result) {
			patchMarkerCRC(t, pcap, res, false)
		},
	},
	"marker-ptr-patched-nocrc": {
		// The same marker changed on a connection without CRC.
		gen: func() synth.Scenario { return markerPtrScenario(false) },
		patch: func(t *testing.T, pcap []byte, res *synth.Result) {
			patchMarkerCRC(t, pcap, res, false)
		},
	},
	"markers-not-negotiated": {
		// Neither side asks for markers, but the initiator sends them.
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.MarkersI2R = synth.Bool(true)
			for range 4 {
				c.Ops = append(c.Ops, synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 300})
			}
			c.Ops = append(c.Ops, synth.Op{Dir: synth.R2I, Kind: synth.Send, Size: 16})
			return scenario(c)
		},
	},
	"p2p-responder-first": {
		gen: func() synth.Scenario {
			return p2p(mpa.Enhanced{C: true},
				synth.Op{Dir: synth.R2I, Kind: synth.Send, Size: 16},
				synth.Op{Dir: synth.I2R, Kind: synth.Write, STag: 1})
		},
	},
	"p2p-no-rtr": {
		// The initiator's first FPDU is a Send with payload.
		gen: func() synth.Scenario {
			return p2p(mpa.Enhanced{C: true},
				synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 64},
				synth.Op{Dir: synth.R2I, Kind: synth.Send, Size: 16})
		},
	},
	"p2p-rtr-wrong-type": {
		// The Reply allows a Write RTR; the initiator sends a zero-length Send.
		gen: func() synth.Scenario {
			return p2p(mpa.Enhanced{C: true},
				synth.Op{Dir: synth.I2R, Kind: synth.Send},
				synth.Op{Dir: synth.R2I, Kind: synth.Send, Size: 16})
		},
	},
	"p2p-no-rtr-flags-write": {
		// The Reply sets no RTR type (a Send, by draft-01); the
		// initiator sends a zero-length Write.
		gen: func() synth.Scenario {
			return p2p(mpa.Enhanced{},
				synth.Op{Dir: synth.I2R, Kind: synth.Write, STag: 1},
				synth.Op{Dir: synth.R2I, Kind: synth.Send, Size: 16})
		},
	},
	"terminate-llp-0x06": {
		gen: func() synth.Scenario {
			return rev2Term(rdmap.Terminate{Layer: uint8(rdmap.LayerLLP), EType: rdmap.ETypeLLPMPA, Code: 0x06})
		},
	},
	"terminate-llp-0x07": {
		gen: func() synth.Scenario {
			return rev2Term(rdmap.Terminate{Layer: uint8(rdmap.LayerLLP), EType: rdmap.ETypeLLPMPA, Code: 0x07})
		},
	},
	"dv-rv-2": {
		gen: func() synth.Scenario {
			s := withOps(opening()...)
			s.Conns[0].DV, s.Conns[0].RV = synth.U8(2), synth.U8(2)
			return s
		},
	},
	"ddp-rsvd-bits": {
		gen: func() synth.Scenario {
			s := send(1)
			s.DDP.Rsvd = 0x5
			return withRaw(s)
		},
	},
	"send-on-queue-7": {
		gen: func() synth.Scenario {
			return withRaw(untagged(rdmap.OpSend, 7, 1, 0, true, []byte("iwarpkit")))
		},
	},
	"ulpdu-shorter-than-header": {
		// A 14-octet ULPDU whose control octet says untagged (18 octets).
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.Ops = append(opening(), rawOp(synth.I2R, rdmap.AppendSegment(nil, send(1))[:ddp.TaggedHeaderLen]))
			return scenario(c)
		},
	},
	"dv-changes": {
		// DDP version 1, then an FPDU with version 0.
		gen: func() synth.Scenario {
			s := send(1)
			s.DDP.DV, s.RV = 0, 0
			return withRaw(s)
		},
	},
	"msn-starts-at-5": {
		gen: func() synth.Scenario { return withRaw(send(5)) },
	},
	"msn-repeated": {
		gen: func() synth.Scenario { return withRaw(send(1), send(1)) },
	},
	"msn-skips": {
		gen: func() synth.Scenario { return withRaw(send(1), send(3)) },
	},
	"mo-jumps": {
		// Two segments of one Send: MO 0 (8 octets), then MO 100.
		gen: func() synth.Scenario {
			return withRaw(
				untagged(rdmap.OpSend, 0, 1, 0, false, []byte("iwarpkit")),
				untagged(rdmap.OpSend, 0, 1, 100, true, []byte("iwarpkit")))
		},
	},
	"message-gather-limit": {
		// Two Sends left open (L=0) with room to gather one message.
		gen: func() synth.Scenario {
			return withRaw(
				untagged(rdmap.OpSend, 0, 1, 0, false, []byte("iwarpkit")),
				untagged(rdmap.OpSend, 0, 2, 0, false, []byte("iwarpkit")))
		},
		opts: flows.Options{MaxMessages: 1},
	},
	"rv-0-with-dv-1": {
		gen: func() synth.Scenario {
			s := send(1)
			s.RV = 0
			return withRaw(s)
		},
	},
	"rdmap-rsvd-bits": {
		gen: func() synth.Scenario {
			s := send(1)
			s.Rsvd = 0x3
			return withRaw(s)
		},
	},
	"opcode-0xc": {
		gen: func() synth.Scenario { return withRaw(untagged(0xC, 0, 1, 0, true, []byte("iwarpkit"))) },
	},
	"send-tagged": {
		// A Send with the Tagged flag set (a 14-octet tagged header).
		gen: func() synth.Scenario {
			return withRaw(rdmap.Segment{DDP: ddp.Header{T: true, L: true, DV: 1, STag: 0x77}, RV: 1, Opcode: rdmap.OpSend, Payload: []byte("iwarpkit")})
		},
	},
	"send-on-queue-1": {
		gen: func() synth.Scenario {
			return withOps(append(opening(), synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 8, QN: synth.U32(1)})...)
		},
	},
	"send-with-inval-stag": {
		// A plain Send with octets 2..5 of the DDP header nonzero.
		gen: func() synth.Scenario {
			s := send(1)
			s.DDP.ULPRsvd = 0x1234
			return withRaw(s)
		},
	},
	"read-request-not-last": {
		gen: func() synth.Scenario { return withRaw(readReq(false, 0)) },
	},
	"read-request-mo-4": {
		gen: func() synth.Scenario { return withRaw(readReq(true, 4)) },
	},
	"read-request-with-payload": {
		gen: func() synth.Scenario {
			s := readReq(true, 0)
			s.Payload = []byte("iwarpkit")
			return withRaw(s)
		},
	},
	"read-response-too-short": {
		// A 64-octet Read answered with 8 octets.
		gen: func() synth.Scenario {
			resp := rdmap.Segment{DDP: ddp.Header{T: true, L: true, DV: 1, STag: 0x51}, RV: 1, Opcode: rdmap.OpReadResponse, Payload: []byte("iwarpkit")}
			return withOps(append(opening(),
				synth.Op{Dir: synth.I2R, Kind: synth.Read, Size: 64, STag: 0x51, SrcSTag: 0x52, NoResponse: true},
				rawOp(synth.R2I, rdmap.AppendSegment(nil, resp)))...)
		},
	},
	"two-reads-ord-1": {
		// IRD = ORD = 1; the initiator has two Reads outstanding.
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.MPA.Request = synth.MPAFrame{Rev: 2, C: true, Enhanced: &mpa.Enhanced{IRD: 1, ORD: 1}}
			c.MPA.Reply = synth.MPAFrame{Rev: 2, C: true, Enhanced: &mpa.Enhanced{IRD: 1, ORD: 1}}
			c.Ops = append(opening(),
				synth.Op{Dir: synth.I2R, Kind: synth.Read, Size: 64, STag: 0x51, SrcSTag: 0x52, NoResponse: true},
				synth.Op{Dir: synth.I2R, Kind: synth.Read, Size: 64, STag: 0x53, SrcSTag: 0x54, NoResponse: true})
			return scenario(c)
		},
	},
	"terminate-not-last": {
		gen: func() synth.Scenario {
			return withRaw(terminate(false, 0, rdmap.Terminate{Layer: uint8(rdmap.LayerLLP), EType: rdmap.ETypeLLPMPA, Code: 0x02}))
		},
	},
	"terminate-mo-4": {
		gen: func() synth.Scenario {
			return withRaw(terminate(true, 4, rdmap.Terminate{Layer: uint8(rdmap.LayerLLP), EType: rdmap.ETypeLLPMPA, Code: 0x02}))
		},
	},
	"terminate-code-0x50": {
		gen: func() synth.Scenario {
			return withTerm(rdmap.Terminate{Layer: uint8(rdmap.LayerLLP), EType: rdmap.ETypeLLPMPA, Code: 0x50})
		},
	},
	"terminate-rsvd-bits": {
		gen: func() synth.Scenario {
			return withTerm(rdmap.Terminate{Layer: uint8(rdmap.LayerLLP), EType: rdmap.ETypeLLPMPA, Code: 0x02, Rsvd: 0x55})
		},
	},
	"terminate-seglen-mismatch": {
		// A DDP Invalid STag Terminate of a 100-octet RDMA Write (a
		// 114-octet segment) whose DDP Segment Length is 4.
		gen: func() synth.Scenario {
			return withOps(append(opening(),
				synth.Op{Dir: synth.I2R, Kind: synth.Write, Size: 100, STag: writeHdr.STag},
				synth.Op{Dir: synth.R2I, Kind: synth.Terminate, Term: rdmap.Terminate{Layer: uint8(rdmap.LayerDDP), EType: rdmap.ETypeDDPTagged, Code: 0x00,
					M: true, D: true, DDPSegLen: 4, DDP: writeHdr, HasDDP: true}})...)
		},
	},
	"terminate-protection-on-write": {
		// An RDMAP Remote Protection Error (Invalid STag) that
		// terminates an RDMA Write: a DDP error by Figure 10.
		gen: func() synth.Scenario {
			return withOps(append(opening(),
				synth.Op{Dir: synth.I2R, Kind: synth.Write, Size: 16, STag: writeHdr.STag},
				synth.Op{Dir: synth.R2I, Kind: synth.Terminate, Term: rdmap.Terminate{Layer: uint8(rdmap.LayerRDMAP), EType: rdmap.ETypeRDMAPRemoteProtection, Code: 0x00,
					M: true, D: true, DDPSegLen: 30, DDP: writeHdr, HasDDP: true}})...)
		},
	},
	"read-responses-swapped": {
		// Two Reads into different buffers; the second is answered
		// first.
		gen: func() synth.Scenario {
			return withOps(append(opening(),
				synth.Op{Dir: synth.I2R, Kind: synth.Read, Size: 64, STag: 0x51, SrcSTag: 0x61, NoResponse: true},
				synth.Op{Dir: synth.I2R, Kind: synth.Read, Size: 32, STag: 0x52, SrcSTag: 0x62, NoResponse: true},
				rawOp(synth.R2I, readResponse(0x52, 0, 32)),
				rawOp(synth.R2I, readResponse(0x51, 0, 64)))...)
		},
	},
	"send-starts-at-mo-100": {
		// A Send of one segment at MO 100, nothing lost before it.
		gen: func() synth.Scenario {
			return withRaw(untagged(rdmap.OpSend, 0, 1, 100, true, make([]byte, 50)))
		},
	},
	"terminate-ddp-without-header": {
		// A DDP error without the terminated DDP header.
		gen: func() synth.Scenario {
			return withTerm(rdmap.Terminate{Layer: uint8(rdmap.LayerDDP), EType: rdmap.ETypeDDPTagged, Code: 0x00})
		},
	},
	"terminate-llp-with-header": {
		// An MPA CRC error Terminate that includes a DDP header.
		gen: func() synth.Scenario {
			return withTerm(rdmap.Terminate{Layer: uint8(rdmap.LayerLLP), EType: rdmap.ETypeLLPMPA, Code: 0x02,
				M: true, D: true, DDPSegLen: 30, DDP: writeHdr, HasDDP: true})
		},
	},
	"terminate-d-without-m": {
		gen: func() synth.Scenario {
			return withTerm(rdmap.Terminate{Layer: uint8(rdmap.LayerDDP), EType: rdmap.ETypeDDPTagged, Code: 0x00,
				D: true, DDPSegLen: 30, DDP: writeHdr, HasDDP: true})
		},
	},
	"send-after-terminate": {
		gen: func() synth.Scenario {
			return withOps(append(opening(),
				synth.Op{Dir: synth.R2I, Kind: synth.Terminate, Term: rdmap.Terminate{
					Layer: uint8(rdmap.LayerRDMAP), EType: rdmap.ETypeRDMAPRemoteOperation, Code: 0x06}},
				synth.Op{Dir: synth.R2I, Kind: synth.Send, Size: 16})...)
		},
	},
	"rev0-request-rev1-reply": {
		// Matrix row 2: an RDMAC initiator (rev 0) and an IETF responder
		// that answers rev 1; FPDUs follow instead of a close.
		gen: func() synth.Scenario {
			c := baseConn(40100)
			c.MPA.Request = synth.MPAFrame{Rev: 0, M: true, C: true}
			c.MPA.Reply = synth.MPAFrame{Rev: 1, M: true, C: true}
			c.Ops = opening()
			return scenario(c)
		},
	},
	"rev1-with-dv-0": {
		// Matrix row 6 (rev 1 both sides) predicts version 1; the FPDUs carry 0.
		gen: func() synth.Scenario {
			s := withOps(opening()...)
			s.Conns[0].DV, s.Conns[0].RV = synth.U8(0), synth.U8(0)
			return s
		},
	},
}

// markerPtrScenario has markers both ways, CRC as crc says, and an
// initiator's second FPDU long enough to hold a marker inside it.
func markerPtrScenario(crc bool) synth.Scenario {
	c := baseConn(40100)
	c.MPA.Request.M, c.MPA.Reply.M = true, true
	c.MPA.Request.C, c.MPA.Reply.C = crc, crc
	c.Ops = []synth.Op{
		{Dir: synth.I2R, Kind: synth.Send, Size: 64},
		{Dir: synth.I2R, Kind: synth.Send, Size: 800},
		{Dir: synth.R2I, Kind: synth.Send, Size: 64},
	}
	return scenario(c)
}

// patchMarker changes the FPDUPTR of the first marker inside (not leading)
// the initiator's second FPDU and recomputes that FPDU's CRC32c (RFC 5044
// §4.1, §5.1), so that only the marker is wrong.
func patchMarker(t *testing.T, pcap []byte, res *synth.Result) { patchMarkerCRC(t, pcap, res, true) }

// patchMarkerCRC is patchMarker, recomputing the CRC only with recompute:
// without, a CRC on fails as it would after damage on the way.
func patchMarkerCRC(t *testing.T, pcap []byte, res *synth.Result, recompute bool) {
	t.Helper()
	n := 0
	for _, r := range res.Records {
		f, ok := r.(*synth.TruthFPDU)
		if !ok || f.Dir != "i2r" {
			continue
		}
		if n++; n != 2 {
			continue
		}
		if len(f.Frames) != 1 {
			t.Fatalf("FPDU at seq %d spans frames %v", f.Seq, f.Frames)
		}
		seq, payload := tcpPayload(t, pcap, f.Frames[0])
		start := int(f.Seq - seq)
		wire := payload[start : start+f.Len]
		for _, m := range f.MPA.Markers {
			at := int(m.Seq - f.Seq)
			if at == 0 {
				continue
			}
			if at+4 > len(wire)-mpa.CRCLen {
				t.Fatalf("marker at %d of %d overlaps the CRC", at, len(wire))
			}
			binary.BigEndian.PutUint16(wire[at+2:], m.FPDUPtr+4)
			if recompute {
				binary.LittleEndian.PutUint32(wire[len(wire)-mpa.CRCLen:], mpa.CRC32C(wire[:len(wire)-mpa.CRCLen]))
			}
			return
		}
		t.Fatalf("FPDU at seq %d holds no inner marker", f.Seq)
	}
	t.Fatal("no second initiator FPDU")
}

// tcpPayload returns the TCP sequence number and payload (aliasing pcap)
// of frame (1-based) of a little-endian pcap file of Ethernet/IPv4 frames,
// as synth writes them by default.
func tcpPayload(t *testing.T, pcap []byte, frame uint64) (uint32, []byte) {
	t.Helper()
	off := 24 // pcap file header
	for i := uint64(1); off+16 <= len(pcap); i++ {
		n := int(binary.LittleEndian.Uint32(pcap[off+8:]))
		data := pcap[off+16 : off+16+n]
		off += 16 + n
		if i != frame {
			continue
		}
		if binary.BigEndian.Uint16(data[12:]) != 0x0800 {
			t.Fatalf("frame %d: not IPv4 over Ethernet", frame)
		}
		ip := data[14:]
		ihl := int(ip[0]&0x0F) * 4
		tcp := ip[ihl:binary.BigEndian.Uint16(ip[2:])]
		return binary.BigEndian.Uint32(tcp[4:]), tcp[int(tcp[12]>>4)*4:]
	}
	t.Fatalf("no frame %d", frame)
	return 0, nil
}

// delayAfter makes every frame of a pcap file after frame (1-based) come d
// later, in place.
func delayAfter(t *testing.T, pcap []byte, frame uint64, d time.Duration) {
	t.Helper()
	unit := time.Microsecond
	if binary.LittleEndian.Uint32(pcap) == 0xa1b23c4d {
		unit = time.Nanosecond
	} else if binary.LittleEndian.Uint32(pcap) != 0xa1b2c3d4 {
		t.Fatalf("not a little-endian pcap file")
	}
	off := 24 // pcap file header
	for i := uint64(1); off+16 <= len(pcap); i++ {
		if i > frame {
			sec, frac := binary.LittleEndian.Uint32(pcap[off:]), binary.LittleEndian.Uint32(pcap[off+4:])
			ts := time.Duration(sec)*time.Second + time.Duration(frac)*unit + d
			binary.LittleEndian.PutUint32(pcap[off:], uint32(ts/time.Second))
			binary.LittleEndian.PutUint32(pcap[off+4:], uint32(ts%time.Second/unit))
		}
		off += 16 + int(binary.LittleEndian.Uint32(pcap[off+8:]))
	}
}

// truthFPDUs returns the FPDUs of the truth that src sent.
func truthFPDUs(res *synth.Result, src string) []*synth.TruthFPDU {
	var fs []*synth.TruthFPDU
	for _, r := range res.Records {
		if f, ok := r.(*synth.TruthFPDU); ok && f.Src == src {
			fs = append(fs, f)
		}
	}
	return fs
}

// record returns the record of frame (its 16-octet header, then the
// frame) in a little-endian pcap file, to patch in place.
func record(t *testing.T, pcap []byte, frame uint64) []byte {
	t.Helper()
	off := 24 // pcap file header
	for i := uint64(1); off+16 <= len(pcap); i++ {
		n := 16 + int(binary.LittleEndian.Uint32(pcap[off+8:]))
		if i == frame {
			return pcap[off : off+n]
		}
		off += n
	}
	t.Fatalf("no frame %d", frame)
	return nil
}

// tcpHeader returns the TCP header (and what follows) of frame (Ethernet, IPv4)
// in a little-endian pcap file.
func tcpHeader(t *testing.T, pcap []byte, frame uint64) []byte {
	t.Helper()
	ip := record(t, pcap, frame)[16+14:]
	return ip[int(ip[0]&0x0f)*4:]
}

// shortenWireLen takes n from the original length of frame's record in a
// little-endian pcap file, leaving its captured length and octets.
func shortenWireLen(t *testing.T, pcap []byte, frame uint64, n uint32) {
	t.Helper()
	h := record(t, pcap, frame)
	binary.LittleEndian.PutUint32(h[12:], binary.LittleEndian.Uint32(h[12:])-n)
}

// setDataOffset sets the TCP Data Offset of frame (Ethernet, IPv4) of a
// little-endian pcap file to words.
func setDataOffset(t *testing.T, pcap []byte, frame uint64, words byte) {
	t.Helper()
	tcp := tcpHeader(t, pcap, frame)
	tcp[12] = words<<4 | tcp[12]&0x0f
}

// moveSeq adds delta to the TCP sequence number of frame (Ethernet, IPv4)
// of a little-endian pcap file. (The decoder does not check TCP
// checksums.)
func moveSeq(t *testing.T, pcap []byte, frame uint64, delta uint32) {
	t.Helper()
	seq := tcpHeader(t, pcap, frame)[4:]
	binary.BigEndian.PutUint32(seq, binary.BigEndian.Uint32(seq)+delta)
}

// decodeTrigger decodes a trigger's capture.
func decodeTrigger(t *testing.T, name string) []*flows.Record {
	t.Helper()
	if strings.HasPrefix(name, "testdata/") {
		return testutil.Decode(t, "../"+name, flows.Options{})
	}
	tr, ok := triggers[name]
	if !ok {
		t.Fatalf("no trigger %q", name)
	}
	var pcap bytes.Buffer
	res, err := synth.Generate(tr.gen(), &pcap, nil)
	if err != nil {
		t.Fatalf("generate %s: %v", name, err)
	}
	b := pcap.Bytes()
	if tr.patch != nil {
		tr.patch(t, b, res)
	}
	return decodeReader(t, bytes.NewReader(b), tr.opts)
}

// emitted is a finding as the test sees it.
type emitted struct {
	sev dissect.Severity
	ref string
}

// findingsOf collects the findings of records: finding records and the
// findings attached to MPA and FPDU records, by code.
func findingsOf(recs []*flows.Record) map[string][]emitted {
	out := map[string][]emitted{}
	add := func(fs ...dissect.Finding) {
		for _, f := range fs {
			out[f.Code] = append(out[f.Code], emitted{f.Severity, f.Ref})
		}
	}
	for _, r := range recs {
		switch {
		case r.Finding != nil:
			add(*r.Finding)
		case r.FPDU != nil:
			add(r.FPDU.Findings...)
		case r.MPA != nil:
			add(r.MPA.Findings...)
		}
	}
	return out
}

// docRow is one row of the table in docs/findings.md.
type docRow struct {
	sevs []dissect.Severity
	rule string
	// captures are the backquoted names in the capture column: testdata
	// paths and names of generated triggers.
	captures []string
	line     int
}

// docCode matches a table row's first cell: a code in backquotes.
var docCode = regexp.MustCompile("^`((?:cap|tcp|mpa|ddp|rdmap|interop)\\.[a-z0-9_]+)`$")

// backquoted finds the `names` of a cell.
var backquoted = regexp.MustCompile("`([^`]+)`")

// readFindingsDoc parses the tables of docs/findings.md, one row per code:
// | code | severity | meaning | what to do | rule | capture |. The severity
// cell holds one severity, or several separated by "/", each optionally
// followed by words saying when it applies.
func readFindingsDoc(t *testing.T) map[string]docRow {
	t.Helper()
	f, err := os.Open(findingsDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]docRow{}
	sc := bufio.NewScanner(f)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		m := docCode.FindStringSubmatch(cells[0])
		if m == nil {
			continue
		}
		if len(cells) != 6 {
			t.Errorf("%s:%d: %d cells, want 6", findingsDoc, ln, len(cells))
			continue
		}
		if prev, dup := rows[m[1]]; dup {
			t.Errorf("%s:%d: %s already documented on line %d", findingsDoc, ln, m[1], prev.line)
		}
		r := docRow{rule: cells[4], line: ln}
		for _, s := range strings.Split(cells[1], "/") {
			w, _, _ := strings.Cut(strings.TrimSpace(s), " ")
			sev, ok := dissect.ParseSeverity(w)
			if !ok {
				t.Errorf("%s:%d: bad severity %q", findingsDoc, ln, s)
			}
			r.sevs = append(r.sevs, sev)
		}
		for _, c := range backquoted.FindAllStringSubmatch(cells[5], -1) {
			if c[1] != "flows/findings_test.go" {
				r.captures = append(r.captures, c[1])
			}
		}
		rows[m[1]] = r
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no table rows", findingsDoc)
	}
	return rows
}

// decodedTriggers decodes each trigger once per test binary.
var decodedTriggers = map[string][]*flows.Record{}

func decodeTriggerOnce(t *testing.T, name string) []*flows.Record {
	t.Helper()
	recs, ok := decodedTriggers[name]
	if !ok {
		recs = decodeTrigger(t, name)
		decodedTriggers[name] = recs
	}
	return recs
}

// TestFindingCodes checks every documented code against its triggers: the
// code is emitted with the severity the doc states, its Ref is the rule
// the doc cites, and the doc's capture column names exactly the captures
// the cases use.
func TestFindingCodes(t *testing.T) {
	doc := readFindingsDoc(t)
	byCode := map[string][]findingCase{}
	for _, c := range findingCases {
		byCode[c.code] = append(byCode[c.code], c)
	}
	for code, row := range doc {
		cs := byCode[code]
		if len(cs) == 0 && unreachable[code] == "" {
			t.Errorf("%s:%d: %s is documented but has no trigger case", findingsDoc, row.line, code)
		}
		// Every severity the doc lists is demonstrated, and every
		// capture the doc names is a case of the code.
		for _, s := range row.sevs {
			if !slices.ContainsFunc(cs, func(c findingCase) bool { return c.sev == s }) && unreachable[code] == "" {
				t.Errorf("%s:%d: %s: severity %v documented but no case demonstrates it", findingsDoc, row.line, code, s)
			}
		}
		for _, name := range row.captures {
			if !slices.ContainsFunc(cs, func(c findingCase) bool { return c.trigger == name }) {
				t.Errorf("%s:%d: %s: the capture column names %q, which is no case of the code", findingsDoc, row.line, code, name)
			}
		}
	}
	for code := range byCode {
		if _, ok := doc[code]; !ok {
			t.Errorf("%s has a trigger case but no row in %s", code, findingsDoc)
		}
	}
	for key := range knownBugs {
		code, trig, _ := strings.Cut(key, "/")
		if !slices.ContainsFunc(byCode[code], func(c findingCase) bool { return c.trigger == trig }) {
			t.Errorf("knownBugs entry %q matches no case", key)
		}
	}

	for _, c := range findingCases {
		t.Run(c.code+"/"+c.trigger, func(t *testing.T) {
			if why := unreachable[c.code]; why != "" {
				t.Skip("not reachable: " + why)
			}
			row := doc[c.code]
			if !slices.Contains(row.sevs, c.sev) {
				t.Errorf("case severity %v not among the documented %v", c.sev, row.sevs)
			}
			if !slices.Contains(row.captures, c.trigger) {
				t.Errorf("%s:%d: the capture column does not name %q", findingsDoc, row.line, c.trigger)
			}
			got := findingsOf(decodeTriggerOnce(t, c.trigger))
			bug := knownBugs[c.code+"/"+c.trigger]
			var other []string
			for _, e := range got[c.code] {
				if e.sev != c.sev {
					other = append(other, e.sev.String())
					continue
				}
				if e.ref != "" && !strings.Contains(row.rule, e.ref) {
					t.Errorf("%s:%d: rule column %q does not cite the finding's ref %q", findingsDoc, row.line, row.rule, e.ref)
				}
				if bug != "" {
					t.Errorf("emitted now: remove the knownBugs entry (%s)", bug)
				}
				return
			}
			if bug != "" {
				t.Skip("known decoder bug: " + bug)
			}
			var all []string
			for code := range got {
				all = append(all, code)
			}
			sort.Strings(all)
			t.Errorf("%s not emitted with severity %v (other severities: %v); codes emitted: %v", c.code, c.sev, other, all)
		})
	}
}

// TestFindingCodesNotRepeated checks that no record of the trigger
// captures carries the same finding (code and message) twice.
func TestFindingCodesNotRepeated(t *testing.T) {
	repeated := map[string]bool{}
	done := map[string]bool{}
	for _, c := range findingCases {
		if done[c.trigger] {
			continue
		}
		done[c.trigger] = true
		for _, r := range decodeTriggerOnce(t, c.trigger) {
			var fs []dissect.Finding
			switch {
			case r.FPDU != nil:
				fs = r.FPDU.Findings
			case r.MPA != nil:
				fs = r.MPA.Findings
			}
			seen := map[[2]string]bool{}
			for _, f := range fs {
				k := [2]string{f.Code, f.Msg}
				if !seen[k] {
					seen[k] = true
					continue
				}
				repeated[f.Code] = true
				if bug := repeatedBugs[f.Code]; bug != "" {
					t.Logf("%s, frame %d: %s twice (known decoder bug: %s)", c.trigger, r.Frame, f.Code, bug)
					continue
				}
				t.Errorf("%s, frame %d: %s reported twice: %s", c.trigger, r.Frame, f.Code, f.Msg)
			}
		}
	}
	for code, bug := range repeatedBugs {
		if !repeated[code] {
			t.Errorf("%s is no longer repeated: remove the repeatedBugs entry (%s)", code, bug)
		}
	}
}

// cleanAllowed lists codes that may appear on the clean captures, with why.
// Empty: the clean captures below are conforming end to end (no GSO flag,
// no nonzero pad, the initiator speaks first), so any finding is a
// regression.
var cleanAllowed = map[string]string{}

// TestFindingCodesAbsentOnCleanCaptures decodes conforming captures, real
// and generated, and checks that they trigger no finding at all: every
// code has a capture that does not trigger it.
func TestFindingCodesAbsentOnCleanCaptures(t *testing.T) {
	doc := readFindingsDoc(t)
	type capture struct {
		name string
		recs func(t *testing.T) []*flows.Record
	}
	var caps []capture
	for _, p := range []string{"testdata/siw/crc_v2_rping.pcap", "testdata/siw/basic_rping_v2_nocrc.pcap"} {
		caps = append(caps, capture{p, func(t *testing.T) []*flows.Record { return testutil.Decode(t, "../"+p, flows.Options{}) }})
	}
	for _, n := range []string{"rev1-crc", "rev2-enhanced", "markers-both"} {
		caps = append(caps, capture{"synth " + n, func(t *testing.T) []*flows.Record {
			sc, ok := synth.Named(n, 1)
			if !ok {
				t.Fatalf("no scenario %s", n)
			}
			var pcap bytes.Buffer
			if _, err := synth.Generate(sc, &pcap, nil); err != nil {
				t.Fatal(err)
			}
			return decodeReader(t, &pcap, flows.Options{})
		}})
	}
	for _, c := range caps {
		t.Run(c.name, func(t *testing.T) {
			recs := c.recs(t)
			if len(testutil.OfType(recs, flows.RecFPDU)) == 0 {
				t.Fatal("no FPDU decoded")
			}
			for code, es := range findingsOf(recs) {
				if why, ok := cleanAllowed[code]; ok {
					t.Logf("%s allowed: %s", code, why)
					continue
				}
				if _, ok := doc[code]; !ok {
					t.Errorf("undocumented code %s", code)
				}
				t.Errorf("%s emitted %d times (severity %v)", code, len(es), es[0].sev)
			}
		})
	}
}

// codeLiteral matches a string that looks like a finding code.
var codeLiteral = regexp.MustCompile(`^(cap|tcp|mpa|ddp|rdmap|interop)\.[a-z0-9_]+$`)

// TestFindingCodesInSourceDocumented reads the decoder's sources (flows/
// and dissect/, tests excluded) and checks that every string literal
// shaped like a finding code is documented. Literals that are field names
// of the registry (mpa.crc, ddp.stag, tcp.seq_raw, ...) are not codes.
func TestFindingCodesInSourceDocumented(t *testing.T) {
	doc := readFindingsDoc(t)
	found := map[string]string{}
	fset := token.NewFileSet()
	for _, dir := range []string{".", "../dissect"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil || !codeLiteral.MatchString(s) {
					return true
				}
				if _, isField := dissect.Lookup(s); isField {
					return true
				}
				if _, seen := found[s]; !seen {
					found[s] = fset.Position(lit.Pos()).String()
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(found) < 50 {
		t.Fatalf("only %d codes found in the sources: the scan is broken", len(found))
	}
	for code, pos := range found {
		if _, ok := doc[code]; !ok {
			t.Errorf("%s (%s) is not documented in %s", code, pos, findingsDoc)
		}
	}
	for code, row := range doc {
		if _, ok := found[code]; !ok {
			t.Errorf("%s:%d: %s is documented but no source emits it", findingsDoc, row.line, code)
		}
	}
}

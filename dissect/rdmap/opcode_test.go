package rdmap

import (
	"fmt"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/ddp"
)

// TestOpcodeTable is RFC 5040 §4.1 Figure 4 (seed 004) plus RFC 7306 as
// PROTOCOL.md D.2 and D.5 list them.
func TestOpcodeTable(t *testing.T) {
	for _, tc := range []struct {
		op     Opcode
		name   string
		tagged bool
		qn     uint32
		hasQN  bool
		inval  bool
		hdr    int
	}{
		{OpWrite, "RDMA Write", true, 0, false, false, 0},
		{OpReadRequest, "RDMA Read Request", false, 1, true, false, 28},
		{OpReadResponse, "RDMA Read Response", true, 0, false, false, 0},
		{OpSend, "Send", false, 0, true, false, 0},
		{OpSendInvalidate, "Send with Invalidate", false, 0, true, true, 0},
		{OpSendSE, "Send with SE", false, 0, true, false, 0},
		{OpSendSEInvalidate, "Send with SE and Invalidate", false, 0, true, true, 0},
		{OpTerminate, "Terminate", false, 2, true, false, 4},
		{OpImmediate, "Immediate Data", false, 0, true, false, 8},
		{OpImmediateSE, "Immediate Data with SE", false, 0, true, false, 8},
		{OpAtomicRequest, "Atomic Request", false, 1, true, false, 52},
		{OpAtomicResponse, "Atomic Response", false, 3, true, false, 12},
		{0xC, "Reserved (0xC)", false, 0, false, false, 0},
		{0xD, "Reserved (0xD)", false, 0, false, false, 0},
		{0xE, "Reserved (0xE)", false, 0, false, false, 0},
		{0xF, "Reserved (0xF)", false, 0, false, false, 0},
		{0x10, "Reserved (0x10)", false, 0, false, false, 0},
		{0xFF, "Reserved (0xFF)", false, 0, false, false, 0},
	} {
		if got := tc.op.String(); got != tc.name {
			t.Errorf("%#x.String() = %q, want %q", uint8(tc.op), got, tc.name)
		}
		if got := tc.op.Valid(); got != (tc.op <= 0xB) {
			t.Errorf("%#x.Valid() = %v", uint8(tc.op), got)
		}
		if got := tc.op.Tagged(); got != tc.tagged {
			t.Errorf("%v.Tagged() = %v, want %v", tc.op, got, tc.tagged)
		}
		if qn, ok := tc.op.QN(); qn != tc.qn || ok != tc.hasQN {
			t.Errorf("%v.QN() = %d, %v; want %d, %v", tc.op, qn, ok, tc.qn, tc.hasQN)
		}
		if got := tc.op.HasInvalidate(); got != tc.inval {
			t.Errorf("%v.HasInvalidate() = %v", tc.op, got)
		}
		if got := tc.op.HeaderLen(); got != tc.hdr {
			t.Errorf("%v.HeaderLen() = %d, want %d", tc.op, got, tc.hdr)
		}
	}
	if ddp.QNSend != 0 || ddp.QNReadRequest != 1 || ddp.QNTerminate != 2 || ddp.QNAtomic != 3 {
		t.Error("ddp queue numbers")
	}
}

func TestOpcodeGoString(t *testing.T) {
	if got := fmt.Sprintf("%#v", OpSendSE); got != "rdmap.OpSendSE" {
		t.Errorf("GoString = %q", got)
	}
	if got := fmt.Sprintf("%#v", Opcode(0xD)); got != "rdmap.Opcode(0x0D)" {
		t.Errorf("GoString = %q", got)
	}
}

func TestOpcodeStringNoAllocs(t *testing.T) {
	if a := testing.AllocsPerRun(100, func() {
		for o := Opcode(0); o < 16; o++ {
			_ = o.String()
		}
	}); a != 0 {
		t.Errorf("String allocates %v times", a)
	}
}

func TestControl(t *testing.T) {
	// PROTOCOL.md D.1: RV 0xC0, Rsvd 0x30, Opcode 0x0F.
	for _, tc := range []struct {
		c        Control
		rv, rsvd uint8
		op       Opcode
	}{
		{0x43, 1, 0, OpSend},
		{0x47, 1, 0, OpTerminate},
		{0x00, 0, 0, OpWrite},
		{0xFF, 3, 3, 0xF},
		{0x71, 1, 3, OpReadRequest},
	} {
		if tc.c.RV() != tc.rv || tc.c.Rsvd() != tc.rsvd || tc.c.Opcode() != tc.op {
			t.Errorf("%#x: RV %d Rsvd %d Opcode %v", uint8(tc.c), tc.c.RV(), tc.c.Rsvd(), tc.c.Opcode())
		}
		if got := MakeControl(tc.rv, tc.rsvd, tc.op); got != tc.c {
			t.Errorf("MakeControl(%d, %d, %v) = %#x, want %#x", tc.rv, tc.rsvd, tc.op, uint8(got), uint8(tc.c))
		}
	}
	if got := MakeControl(0xFF, 0xFF, 0xFF); got != 0xFF {
		t.Errorf("MakeControl masks: %#x", uint8(got))
	}
}

func TestAtomicOpString(t *testing.T) {
	if AtomicFetchAdd.String() != "FetchAdd" || AtomicSwap.String() != "Swap" || AtomicCmpSwap.String() != "CmpSwap" {
		t.Error("AtomicOp.String")
	}
}

func TestReadRequestRoundTrip(t *testing.T) {
	// basic_rping_v2_nocrc frame 9 (tshark: sink 0xb069b300 /
	// 0x0000559cab83b550, 64 octets, source 0x56770c00 / 0x00005588df645c60).
	in := unhex(t, "b069b300 0000559cab83b550 00000040 56770c00 00005588df645c60")
	want := ReadRequest{SinkSTag: 0xb069b300, SinkTO: 0x0000559cab83b550, Size: 64, SrcSTag: 0x56770c00, SrcTO: 0x00005588df645c60}
	got, err := DecodeReadRequest(in)
	if err != nil || got != want {
		t.Fatalf("DecodeReadRequest = %+v, %v", got, err)
	}
	if enc := AppendReadRequest(nil, got); string(enc) != string(in) {
		t.Errorf("AppendReadRequest = %x", enc)
	}
	if _, err := DecodeReadRequest(in[:27]); err == nil {
		t.Error("short read request decoded")
	}
}

func TestAtomicRoundTrip(t *testing.T) {
	// PROTOCOL.md D.5 layout: reserved(28)|opcode(4), request id, STag,
	// TO, add/swap data, add/swap mask, compare data, compare mask.
	in := unhex(t, "00000002 00000007 4d93c500 00005588df645ed0 0000000000000001 ffffffffffffffff 0000000000000005 00000000ffffffff")
	want := AtomicRequest{Op: AtomicCmpSwap, ReqID: 7, RemoteSTag: 0x4d93c500, RemoteTO: 0x00005588df645ed0,
		AddSwapData: 1, AddSwapMask: ^uint64(0), CompareData: 5, CompareMask: 0xffffffff}
	got, err := DecodeAtomicRequest(in)
	if err != nil || got != want {
		t.Fatalf("DecodeAtomicRequest = %+v, %v", got, err)
	}
	if enc := AppendAtomicRequest(nil, got); string(enc) != string(in) {
		t.Errorf("AppendAtomicRequest = %x", enc)
	}
	if _, err := DecodeAtomicRequest(in[:51]); err == nil {
		t.Error("short atomic request decoded")
	}
	rin := unhex(t, "00000007 0123456789abcdef")
	r, err := DecodeAtomicResponse(rin)
	if err != nil || r != (AtomicResponse{ReqID: 7, OrigValue: 0x0123456789abcdef}) {
		t.Fatalf("DecodeAtomicResponse = %+v, %v", r, err)
	}
	if enc := AppendAtomicResponse(nil, r); string(enc) != string(rin) {
		t.Errorf("AppendAtomicResponse = %x", enc)
	}
	if _, err := DecodeAtomicResponse(rin[:11]); err == nil {
		t.Error("short atomic response decoded")
	}
}

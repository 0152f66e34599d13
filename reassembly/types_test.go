package reassembly

import (
	"net/netip"
	"testing"
)

func TestSeqNum(t *testing.T) {
	tests := []struct {
		a, b    SeqNum
		diff    int32
		less    bool
		compare int
	}{
		{5, 3, 2, false, 1},
		{3, 5, -2, true, -1},
		{7, 7, 0, false, 0},
		{2, 0xFFFFFFFE, 4, false, 1}, // across the wrap, 2 is after 2^32-2
		{0xFFFFFFFE, 2, -4, true, -1},
		{0x80000000, 0, -0x80000000, true, -1}, // 2^31 apart: undefined in RFC 1982
		{0x7FFFFFFF, 0, 0x7FFFFFFF, false, 1},
	}
	for _, tt := range tests {
		if got := tt.a.Diff(tt.b); got != tt.diff {
			t.Errorf("%d.Diff(%d) = %d, want %d", tt.a, tt.b, got, tt.diff)
		}
		if got := tt.a.Less(tt.b); got != tt.less {
			t.Errorf("%d.Less(%d) = %v, want %v", tt.a, tt.b, got, tt.less)
		}
		if got := tt.a.Compare(tt.b); got != tt.compare {
			t.Errorf("%d.Compare(%d) = %d, want %d", tt.a, tt.b, got, tt.compare)
		}
	}
	if got := SeqNum(0xFFFFFFFF).Add(2); got != 1 {
		t.Errorf("Add across the wrap = %d, want 1", got)
	}
	if got := SeqNum(1).Add(-2); got != 0xFFFFFFFF {
		t.Errorf("Add(-2) = %d, want 4294967295", got)
	}
	if got := SeqNum(4294967295).String(); got != "4294967295" {
		t.Errorf("String = %q", got)
	}
}

func TestFlowKey(t *testing.T) {
	a := FlowKey{Src: netip.MustParseAddrPort("1.2.3.4:5"), Dst: netip.MustParseAddrPort("6.7.8.9:10")}
	b := FlowKey{Src: netip.MustParseAddrPort("[2001:db8::1]:5"), Dst: netip.MustParseAddrPort("1.2.3.4:80")}
	if got := a.String(); got != "1.2.3.4:5->6.7.8.9:10" {
		t.Errorf("String = %q", got)
	}
	if got := b.String(); got != "[2001:db8::1]:5->1.2.3.4:80" {
		t.Errorf("String = %q", got)
	}
	if got := string(a.AppendTo([]byte("k="))); got != "k=1.2.3.4:5->6.7.8.9:10" {
		t.Errorf("AppendTo = %q", got)
	}
	if r := a.Reverse(); r.Src != a.Dst || r.Dst != a.Src || r.Reverse() != a {
		t.Errorf("Reverse = %v", r)
	}
	// IPv4 sorts before IPv6 (netip.Addr.Compare); then ports, then Dst.
	if a.Compare(b) != -1 || b.Compare(a) != 1 || a.Compare(a) != 0 {
		t.Errorf("Compare: %d %d %d", a.Compare(b), b.Compare(a), a.Compare(a))
	}
	if a.Compare(a.Reverse()) != -1 {
		t.Errorf("1.2.3.4:5 should sort before 6.7.8.9:10")
	}
	m := map[FlowKey]int{a: 1}
	if m[FlowKey{Src: netip.MustParseAddrPort("1.2.3.4:5"), Dst: netip.MustParseAddrPort("6.7.8.9:10")}] != 1 {
		t.Error("FlowKey is not usable as a map key")
	}
}

func TestStrings(t *testing.T) {
	flagTests := []struct {
		f    Flags
		want string
	}{
		{0, "0"}, {SYN, "SYN"}, {SYN | ACK, "SYN|ACK"}, {FIN | PSH | ACK, "FIN|PSH|ACK"}, {RST | 0x40, "RST|0x40"},
	}
	for _, tt := range flagTests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("Flags(%#x).String() = %q, want %q", uint8(tt.f), got, tt.want)
		}
	}
	// The values are those of the TCP header's flags octet (RFC 9293 §3.1).
	if FIN != 0x01 || SYN != 0x02 || RST != 0x04 || PSH != 0x08 || ACK != 0x10 {
		t.Error("flag values differ from the TCP header bits")
	}
	if EvGap.String() != "Gap" || EvBufferFull.String() != "BufferFull" || EventKind(99).String() != "EventKind(99)" {
		t.Errorf("EventKind strings: %v %v %v", EvGap, EvBufferFull, EventKind(99))
	}
}

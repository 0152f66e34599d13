package filter

import (
	"net/netip"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// TestEndpointsTsharkExt: over RoCEv2 CM and DDP over SCTP, the endpoint
// fields select the frames tshark's ip.*, ipv6.* and sctp.* fields select
// (with tshark's protocol for the record type): the frames of the records
// that match, every frame each one was decoded from.
func TestEndpointsTsharkExt(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	for _, c := range []struct{ file, ws, ours string }{
		{"roce-cm-v4.pcap", "ip.src == 198.51.100.1 && infiniband.mad", `ip.src == 198.51.100.1 && type == "cm"`},
		{"roce-cm-v4.pcap", "ip.addr == 198.51.100.0/24 && infiniband.mad", `ip.addr == 198.51.100.0/24 && type == "cm"`},
		{"roce-cm-hello.pcap", "ipv6.addr == 2001:db8:1::2 && infiniband.mad", `ipv6.addr == 2001:db8:1::2 && type == "cm"`},
		{"roce-cm-v6-reject.pcap", "ipv6.dst == 2001:db8:1::1 && infiniband.mad", `ipv6.dst == 2001:db8:1::1 && type == "cm"`},
		{"sctp-ddp.pcap", "sctp.srcport == 5000 && sctp.data_payload_proto_id in {16, 17} && !sctp.retransmission", `sctp.srcport == 5000 && type in {"ddp" "sctp_session"}`},
		{"sctp-ddp.pcap", "sctp.port == 5001 && ip.src == 192.0.2.2 && sctp.data_payload_proto_id == 16", `sctp.port == 5001 && ip.src == 192.0.2.2 && type == "ddp"`},
		{"sctp-ddp-enhanced.pcap", "ipv6.src == 2001:db8::2 && sctp.data_payload_proto_id in {16, 17}", `ipv6.src == 2001:db8::2 && type in {"ddp" "sctp_session"}`},
		// The record-type names cm and sctp_session, and a cm record's
		// msg (its CM message: MAD attribute 0x0010 REQ ... 0x0014 RTU).
		{"roce-cm-v4.pcap", "infiniband.mad", `cm`},
		{"roce-cm-v4.pcap", "infiniband.mad.attributeid == 0x0010", `cm && msg == "req"`},
		{"roce-cm-v4.pcap", "infiniband.mad.attributeid == 0x0013 || infiniband.mad.attributeid == 0x0014", `msg in {"rep" "rtu"}`},
		{"roce-cm-v6-reject.pcap", "infiniband.mad.attributeid == 0x0012", `msg == "rej"`},
		{"sctp-ddp.pcap", "sctp.data_payload_proto_id == 17 && !sctp.retransmission", `sctp_session`},
		// The endpoint protocols: RoCEv2 is over IP (and not TCP).
		{"roce-cm-v4.pcap", "ip && !tcp && !ipv6 && infiniband.mad", `ip && !tcp && !ipv6 && cm`},
		{"roce-cm-hello.pcap", "ipv6 && infiniband.mad", `ipv6 && cm`},
	} {
		t.Run(c.file+"/"+c.ours, func(t *testing.T) {
			path := filepath.Join("..", "testdata", "synthext", c.file)
			out, err := exec.Command(tshark, "-r", path, "-Y", c.ws, "-T", "fields", "-e", "frame.number").Output()
			if err != nil {
				t.Fatalf("tshark -Y %q: %v", c.ws, err)
			}
			var want []uint64
			for _, l := range strings.Fields(string(out)) {
				n, err := strconv.ParseUint(l, 10, 64)
				if err != nil {
					t.Fatalf("tshark line %q", l)
				}
				want = append(want, n)
			}
			if len(want) == 0 {
				t.Fatalf("tshark selects nothing: the case tests nothing")
			}
			f := mustCompile(t, c.ours)
			var got []uint64
			for _, r := range decodeFile(t, filepath.Join("synthext", c.file)) {
				if !f.MatchRecord(r.r) {
					continue
				}
				switch {
				case r.r.SCTP != nil:
					got = append(got, r.r.SCTP.Frames...)
				default:
					got = append(got, r.r.Frame)
				}
			}
			slices.Sort(got)
			got = slices.Compact(got)
			if !slices.Equal(got, want) {
				t.Errorf("%q selects frames %v, tshark -Y %q selects %v", c.ours, got, c.ws, want)
			}
		})
	}
}

// TestEndpointsByRecordType: which records have which endpoint fields
// (endpoints.go), on captures of each transport. The expected records are
// found from the records' own endpoints and types, independently of the
// filter's code: every record over TCP has tcp.* ports, a conn record its
// two ends and no source or destination, a finding record nothing.
func TestEndpointsByRecordType(t *testing.T) {
	type want struct {
		tcp, sctp, ip4, ip6, directed bool
	}
	byType := map[flows.RecordType]want{
		flows.RecMPA:         {tcp: true, directed: true},
		flows.RecFPDU:        {tcp: true, directed: true},
		flows.RecDDPSCTP:     {sctp: true, directed: true},
		flows.RecSCTPSession: {sctp: true, directed: true},
		flows.RecCM:          {directed: true},
		flows.RecConn:        {tcp: true},
		flows.RecFinding:     {},
	}
	files := []string{"synth/gap.pcap", "siw/siw6_rping_v2_crc.pcap", "siw/term_badwrite.pcap",
		"synthext/sctp-ddp-enhanced.pcap", "synthext/roce-cm-hello.pcap", "synthext/ib-cm-native.pcap"}
	seen := map[string]int{}
	for _, file := range files {
		for _, r := range decodeFile(t, file) {
			w, ok := byType[r.r.Type]
			var a, b netip.AddrPort
			switch r.r.Type {
			case flows.RecMessage:
				w, ok = want{tcp: !r.r.Message.SCTP, sctp: r.r.Message.SCTP, directed: true}, true
			case flows.RecConn:
				a, b = r.r.Summary.A, r.r.Summary.B
			case flows.RecExtConn:
				ok = true
				if s := r.r.SCTP; s != nil && s.Summary != nil {
					w, a, b = want{sctp: true}, s.Summary.A, s.Summary.B
				} else if s := r.r.CM; s != nil && s.Summary != nil && !s.Summary.Native {
					a, b = netip.AddrPortFrom(s.Summary.Initiator, 0), netip.AddrPortFrom(s.Summary.Responder, 0)
				}
			case flows.RecCM:
				if r.r.CM.HasLRH {
					w = want{} // native InfiniBand: GIDs are not IP addresses
				}
			}
			if !ok {
				t.Fatalf("%s: a %v record: add its type to the test", file, r.r.Type)
			}
			if w.directed {
				a, b = r.r.Src, r.r.Dst
			}
			if r.r.Type == flows.RecCM && r.r.CM.HasLRH {
				a, b = netip.AddrPort{}, netip.AddrPort{}
			}
			w.ip4 = a.Addr().Unmap().Is4()
			w.ip6 = a.Addr().Is6() && !a.Addr().Is4In6()
			seen[r.r.Type.String()]++
			check := func(expr string, want bool) {
				t.Helper()
				if got := mustCompile(t, expr).MatchRecord(r.r); got != want {
					t.Errorf("%s frame %d, %v record %v-%v: %q is %v, want %v", file, r.r.Frame, r.r.Type, a, b, expr, got, want)
				}
			}
			check("tcp.port", w.tcp)
			check("sctp.port", w.sctp)
			check("tcp.srcport || tcp.dstport", w.tcp && w.directed)
			check("sctp.srcport || sctp.dstport", w.sctp && w.directed)
			check("ip.addr", w.ip4)
			check("ipv6.addr", w.ip6)
			check("ip.src || ipv6.src", (w.ip4 || w.ip6) && w.directed)
			if w.ip4 || w.ip6 {
				field := "ip.addr == "
				if w.ip6 {
					field = "ipv6.addr == "
				}
				check(field+a.Addr().Unmap().String(), true)
				check(field+b.Addr().Unmap().String(), true)
			}
			if w.tcp || w.sctp {
				p := strconv.Itoa(int(a.Port()))
				check("tcp.port == "+p+" || sctp.port == "+p, true)
				check("tcp.port != "+p+" && sctp.port != "+p, false)
			}
			if w.directed && (w.tcp || w.sctp) {
				p := strconv.Itoa(int(a.Port()))
				check("tcp.srcport == "+p+" || sctp.srcport == "+p, true)
			}
		}
	}
	for _, typ := range []string{"mpa", "fpdu", "message", "finding", "conn", "cm", "ddp", "sctp_session"} {
		if seen[typ] == 0 {
			t.Errorf("no %s record in %v: the test misses a case", typ, files)
		}
	}
}

// TestEndpointValues: address values, their errors and canonical forms.
func TestEndpointValues(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ip.addr == 192.0.2.7/24", "ip.addr == 192.0.2.0/24"},
		{`ip.src == "192.0.2.1"`, "ip.src == 192.0.2.1"},
		{"ipv6.addr == 2001:DB8::1", "ipv6.addr == 2001:db8::1"},
		{"ipv6.dst in {2001:db8::/32 fe80::1..fe80::9}", "ipv6.dst in {2001:db8::/32, fe80::1..fe80::9}"},
		{"ip.dst >= 10.0.0.1 and tcp.dstport eq 4420", "ip.dst >= 10.0.0.1 && tcp.dstport == 4420"},
		{"!ip.addr", "!ip.addr"},
	} {
		if got := mustCompile(t, c.in).String(); got != c.want {
			t.Errorf("Compile(%q).String() = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, err string }{
		{"ip.addr == host.example", "names are not resolved"},
		{"ip.addr == 2001:db8::1", "not an IPv4 address"},
		{"ipv6.addr == 192.0.2.1", "not an IPv6 address"},
		{`ipv6.addr == "fe80::1%eth0"`, "has a zone"},
		{"ip.addr > 192.0.2.0/24", "not a subnet"},
		{"ip.addr in {192.0.2.0/24..192.0.2.9}", "not from or to a subnet"},
		{"ip.addr contains 192.0.2.1", "contains applies to strings and bytes"},
		{`ip.addr matches "192"`, "matches applies to strings"},
		{"ip.addr == 192.0.2.1/33", "not an address or subnet"},
		{`tcp.port == "7174"`, "is a string"},
		{"tcp.ports == 1", `did you mean "tcp.port"`},
	} {
		_, err := Compile(c.in)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("Compile(%q): error %v, want one with %q", c.in, err, c.err)
		}
	}
}

// TestEndpointsOnlyFromRecord: Match, which sees only the fields, finds no
// endpoint field; the record's other fields still work beside them.
func TestEndpointsOnlyFromRecord(t *testing.T) {
	f := mustCompile(t, "ip.addr == 192.0.2.1 || rdmap.opcode == 0")
	matched, withRecord := 0, 0
	for _, r := range siw(t, "crc_v2_rping.pcap") {
		if f.Match(r.kvs) {
			matched++
			if !r.r.FPDU.SegOK || r.r.FPDU.Seg.Opcode != 0 {
				t.Fatalf("frame %d: Match found an endpoint", r.r.Frame)
			}
		}
		if f.MatchRecord(r.r) {
			withRecord++
		}
	}
	if matched == 0 || withRecord <= matched {
		t.Errorf("Match %d records, MatchRecord %d", matched, withRecord)
	}
}

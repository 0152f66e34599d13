package bpf

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/capture"
)

// Differential tests against the real tcpdump: for every expression and
// link type, the program `tcpdump -ddd -y LINKTYPE EXPR` prints and the
// program Compile returns must give the same verdict, in the same VM, on
// every frame of the corpus; and where tcpdump refuses an expression,
// Compile must refuse it too.

// diffExprs are expressions of the supported subset (and a few that
// libpcap itself refuses).
var diffExprs = []string{
	"",
	"ip", "ip6", "arp", "rarp", "tcp", "udp", "sctp", "icmp", "icmp6",
	"not tcp", "! udp", "tcp or udp", "tcp || udp && ip6", "ip and not tcp",
	"host 10.0.0.1", "src host 10.0.0.1", "dst host 10.0.0.1",
	"src or dst host 10.0.0.2", "src and dst host 10.0.0.1", "dst and src host 1.2.3.4",
	"ip host 1.2.3.4", "arp host 1.2.3.4", "rarp host 10.0.0.1", "ip src 10.0.0.1",
	"src 1.2.3.4", "host 10.1", "host 10",
	"host 2001:db8::1", "ip6 host ::1", "src host fe80::1", "dst host ::ffff:1.2.3.4",
	"src and dst host ::1",
	"net 10.0.0.0/8", "src net 10.0.0.0/8", "dst net 10.1.0.0/16", "net 10",
	"net 10.1", "net 10.1.2", "net 192.168", "ip net 10.0.0.0 mask 255.0.0.0",
	"net 10.0.0.0 mask 255.255.0.0", "net 0.0.0.0/0", "net 1.2.3.4/32", "net 10/8",
	"net 2001:db8::/32", "ip6 src net 2001:db8:0:1::/64", "net ::/0", "ip6 dst net fe80::/10",
	"net ::ffff:0:0/96", "net 2001:db8::/33",
	"port 80", "src port 80", "dst port 22", "tcp port 80", "udp port 443",
	"sctp port 150", "tcp src port 80", "udp dst port 22", "port 0x50", "port 0120",
	"src or dst port 100", "src and dst port 80", "tcp dst port 80 or 443",
	"port 80 or 443 or 22", "port 80 and not 22", "not port 80 or 22",
	"portrange 100-200", "tcp portrange 100-200", "src portrange 1-100",
	"dst portrange 150-201", "udp portrange 10-5", "portrange 80", "sctp dst portrange 140-160",
	"proto 6", "ip proto 17", "ip6 proto 6", "ip proto \\tcp", "ip6 proto \\udp",
	"proto 47", "ip6 proto 44", "proto 58",
	"vlan", "vlan 100", "vlan 200", "vlan and ip", "vlan 100 and tcp port 80",
	"vlan and vlan", "vlan and vlan 200 and ip6", "ip or vlan and ip", "vlan or ip",
	"not vlan and tcp", "vlan and host 10.0.0.1", "vlan 100 and (port 80 or port 443)",
	"host 10.0.0.1 and port 80", "host 10.0.0.1 and (port 80 or port 443)",
	"(tcp and port 80) or (udp and port 443)", "host 1.2.3.4 or 80",
	"host 1.2.3.4 and (5.6.7.8 or 10.0.0.2)", "net 10.0.0.0/8 or 11",
	"port 80 or (443 or 22)", "not (host 10.0.0.1 or host 10.0.0.2)",
	"tcp and not port 22 and not port 80", "ip6 and tcp and dst port 7174",
	"src host 10.0.0.1 and dst port 80 or src host 10.0.0.2 and dst port 22",
	"not not ip", "((ip))", "icmp or icmp6 or arp",
	"tcp port 7174 and host 10.0.0.1",
	"port 80 or host 1.2.3.4 or 5", "src port 80 or dst port 80", "host ::1 or fe80::1",
	"portrange 1-10 or 20-30 or 100-150", "not host 10.0.0.1 and not 10.0.0.2",
	"tcp src port 80 or udp dst port 80 or 22", "host 10.0.0.1 or 10.0.0.2 and port 80",
	"src and dst port 80 or 22", "src and dst host 10.0.0.1 or 10.0.0.2", "net 10.0.0.0/8 or 10.1.0.0/16",
	"dst net 10.0.0.0/8 or 192.168.0.0/16 or 1.2.3.4/32", "ip6 net 2001:db8::/32 or ::1/128",
	"udp port 22 or sctp port 22 or tcp port 22", "not (port 80 or 443)", "vlan 100 or vlan 200",
	"vlan and (host 10.0.0.1 or 10.0.0.2)", "arp or rarp or net 10", "ip src 10.0.0.1 or 10.0.0.2",
	// Refused by libpcap as well.
	"ip6 port 80", "tcp host 1.2.3.4", "ip host ::1", "ip6 host 1.2.3.4",
	"host 10.0.0.1/8", "net 10.0.0.1/8", "host 10.0.0.0/8", "ip6 net ::1/127",
	"tcp src port 70000", "vlan 5000", "1.2.3.4", "tcp or 80", "port 80 and",
	"(port 80", "port 80)", "src dst host 1.2.3.4", "net 10.0.0.0/33",
	"host 10.0.0.256", "net 10.0.0.256/24", "host 10.256", "host 1.2.3.4444",
	"net 10.0.0.0 mask 255.256.0.0",
	// Leading zeros: libpcap's address parser takes them.
	"host 1.2.3.0004",
}

// unsupportedExprs are valid for libpcap but outside the subset: Compile
// must fail with ErrUnsupported.
var unsupportedExprs = []string{
	"tcp[13] & 2 != 0", "ether host 02:00:00:00:00:01", "port http", "host example.com",
	"greater 100", "len > 100", "ip[8] = 64", "multicast", "mpls", "inbound",
	"icmp[icmptype] == icmp-echo", "gateway foo", "ip proto \\foo",
	"ip broadcast", "ip multicast", "ip6 multicast", "ip protochain 6",
	"ip6 protochain 17", "ip  broadcast and tcp",
}

// linkTypes are the link types exercised, with tcpdump's names.
var diffLinkTypes = []struct {
	name string
	lt   layers.LinkType
}{
	{"EN10MB", layers.LinkTypeEthernet},
	{"LINUX_SLL", layers.LinkTypeLinuxSLL},
	{"LINUX_SLL2", layers.LinkTypeLinuxSLL2},
	{"RAW", layers.LinkTypeRaw},
	{"IPV4", layers.LinkTypeIPv4},
	{"IPV6", layers.LinkTypeIPv6},
}

// needTcpdump returns the path of tcpdump, or skips (fails when
// IWARP_REQUIRE_ROOT=1, as in CI, where tcpdump must be installed).
func needTcpdump(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("tcpdump")
	if err != nil {
		if os.Getenv("IWARP_REQUIRE_ROOT") == "1" {
			t.Fatalf("tcpdump is required (IWARP_REQUIRE_ROOT=1): %v (apt-get install tcpdump)", err)
		}
		t.Skipf("tcpdump not installed (apt-get install tcpdump): %v", err)
	}
	return path
}

// tcpdumpProgram compiles expr with tcpdump -ddd. rejectAll is set when
// tcpdump's optimizer found that the expression matches nothing; msg holds
// tcpdump's error otherwise.
func tcpdumpProgram(t testing.TB, bin, ltName, expr string) (p *Program, rejectAll bool, msg string) {
	t.Helper()
	args := []string{"-ddd", "-y", ltName}
	if expr != "" {
		args = append(args, expr)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	s := string(out)
	if err != nil {
		if strings.Contains(s, "expression rejects all packets") {
			return nil, true, ""
		}
		if strings.Contains(s, "is not one of the DLTs supported") || strings.Contains(s, "Invalid data link type") {
			t.Skipf("tcpdump does not know link type %s: %s", ltName, s)
		}
		return nil, false, strings.TrimSpace(s)
	}
	// Drop warnings tcpdump prints before the program.
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for len(lines) > 0 && strings.Contains(lines[0], "Warning") {
		lines = lines[1:]
	}
	p, err = ParseRaw(strings.Join(lines, "\n"))
	if err != nil {
		t.Fatalf("tcpdump -ddd -y %s %q: cannot parse its output: %v\n%s", ltName, expr, err, s)
	}
	return p, false, ""
}

func TestDifferentialTcpdump(t *testing.T) {
	bin := needTcpdump(t)
	for _, lt := range diffLinkTypes {
		frames := corpus(lt.lt)
		t.Run(lt.name, func(t *testing.T) {
			t.Parallel()
			checked := 0
			for _, expr := range diffExprs {
				want, rejectAll, msg := tcpdumpProgram(t, bin, lt.name, expr)
				got, err := Compile(expr, lt.lt, 0)
				if msg != "" {
					if err == nil {
						t.Errorf("%q: tcpdump refuses it (%s), Compile accepts it", expr, msg)
					}
					continue
				}
				if err != nil {
					t.Errorf("%q: tcpdump compiles it, Compile: %v", expr, err)
					continue
				}
				gm, err := got.NewMatcher()
				if err != nil {
					t.Fatalf("%q: %v", expr, err)
				}
				var wm *Matcher
				if !rejectAll {
					if wm, err = want.NewMatcher(); err != nil {
						t.Fatalf("%q: tcpdump's program: %v", expr, err)
					}
				}
				bad := 0
				for _, f := range frames {
					w := !rejectAll && wm.Match(f)
					if g := gm.Match(f); g != w {
						if bad < 3 {
							t.Errorf("%q on %s frame % x: tcpdump %v, Compile %v\nours:\n%s", expr, lt.name, f, w, g, got)
						}
						bad++
					}
				}
				if bad > 0 {
					t.Errorf("%q: %d of %d frames differ", expr, bad, len(frames))
				}
				checked++
			}
			t.Logf("%s: %d expressions agree with tcpdump on %d frames", lt.name, checked, len(frames))
		})
	}
}

func TestUnsupported(t *testing.T) {
	for _, expr := range unsupportedExprs {
		_, err := Compile(expr, layers.LinkTypeEthernet, 0)
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%q: got %v, want an error wrapping ErrUnsupported", expr, err)
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Token == "" || !strings.Contains(expr, e.Token) {
			t.Errorf("%q: error %v does not name the unsupported part", expr, err)
		}
	}
}

// TestRealCapturesTcpdump runs the real siw captures through tcpdump's
// programs and ours.
func TestRealCapturesTcpdump(t *testing.T) {
	bin := needTcpdump(t)
	files, _ := filepath.Glob("../testdata/siw/*.pcap")
	if len(files) == 0 {
		t.Skip("no captures in testdata/siw")
	}
	exprs := []string{
		"tcp", "port 7174", "tcp port 4791", "host 10.0.0.1", "net 192.168.0.0/16",
		"src portrange 1024-65535", "ip6", "tcp and not port 22", "vlan", "udp",
		"tcp dst port 7174 or 7175", "net 172.16.0.0/12 and tcp",
	}
	var frames [][]byte
	for _, f := range files {
		src, err := capture.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			p, err := src.Next()
			if err != nil {
				break
			}
			frames = append(frames, append([]byte(nil), p.Data...))
		}
		src.Close()
	}
	for _, expr := range exprs {
		want, rejectAll, msg := tcpdumpProgram(t, bin, "EN10MB", expr)
		if msg != "" {
			t.Fatalf("%q: %s", expr, msg)
		}
		got, err := Compile(expr, layers.LinkTypeEthernet, 0)
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		gm, _ := got.NewMatcher()
		var wm *Matcher
		if !rejectAll {
			wm, _ = want.NewMatcher()
		}
		n := 0
		for i, f := range frames {
			w := !rejectAll && wm.Match(f)
			if w {
				n++
			}
			if gm.Match(f) != w {
				t.Errorf("%q: frame %d: tcpdump %v", expr, i, w)
			}
		}
		t.Logf("%q: %d of %d frames match", expr, n, len(frames))
	}
}

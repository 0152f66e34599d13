package bpf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
	// Packet data accessors, arithmetic and relations.
	"tcp[13] == 2", "tcp[13] & 2 != 0", "tcp[13] = 0x12", "tcp[tcpflags] & tcp-syn != 0",
	"tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn", "tcp[tcpflags] & (tcp-fin|tcp-rst) != 0",
	"tcp[tcpflags] & tcp-push != 0", "tcp[tcpflags] & (tcp-urg|tcp-ece|tcp-cwr) != 0",
	"tcp[13] == tcp-ack", "ip[6:2] & 0x1fff != 0", "ip[6:2] & 0x1fff = 0", "ip[0] & 0xf > 5",
	"ip[0]&0xf>=6", "ip[0] & 0xf < 6", "ip[0] & 0xf <= 5", "ip[8] = 64", "ip[9] != 6",
	"ip[2:2] > 100", "ip[12:4] = 0x0a000001", "ip[16:4] & 0xffffff00 = 0x0a000000",
	"tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420", "tcp[(tcp[12] >> 4) * 4:4] = 0x504f5354",
	"udp[8:2] == 0x1234", "udp[8:2] = 0x4321", "udp[2:2] = 53", "udp[0:2] + udp[2:2] > 5100",
	"tcp[0:2] = 80 or tcp[2:2] = 80", "tcp[2:2] = 22 and tcp[0:2] > 100",
	"sctp[0:2] = 80", "sctp[2:2] >= 150", "icmp[icmptype] == icmp-echo",
	"icmp[icmptype] = icmp-echoreply", "icmp[icmptype] == icmp-unreach and icmp[icmpcode] = 3",
	"icmp[0] = icmp-timxceed", "icmp[icmptype] != icmp-echo and icmp[icmptype] != icmp-echoreply",
	"icmp6[icmp6type] == 128", "icmp6[icmp6type] = icmp6-echo", "icmp6[0] = icmp6-echoreply",
	"icmp6[icmp6type] = icmp6-neighborsolicit", "icmp6[icmp6type] = icmp6-routeradvert",
	"icmp6[icmp6type] = icmp6-destinationunreach", "icmp6[icmp6code] = 0",
	"ip6[6] = 6", "ip6[6] == 17 and ip6[40:2] = 5000", "ip6[24] = 0xff", "ip6[0:4] & 0xf0000000 = 0x60000000",
	"arp[7] = 1", "arp[6:2] = 2", "rarp[7] = 3", "igmp[0] = 0x11", "igmp[1] = 0x64", "pim[0] = 0x11",
	"vrrp[0] = 0x11", "ether[0] & 1 != 0", "ether[0] = 0xff", "ether[12:2] = 0x800", "ether[12:2] > 1500",
	"ether[6:4] = 0x10111213", "link[0] = 2", "ppp[0] = 2", "ether[0:4] = 0xffffffff",
	"ether[12:2] = 0x8100 and ether[16:2] = 0x800", "vlan and ether[16:2] = 0x800", "vlan and ip[0] = 0x45",
	"vlan and tcp[13] = 0x18", "vlan 100 and udp[2:2] = 22", "tcp[13] & 0x10 != 0 or vlan and tcp[13] = 0x18",
	"ip[8] = 1 + 7 * 9", "ip[0] - 1 = 0x44", "ip[0]-1 = 0x45", "ip[8] / 2 = 32", "ip[8] % 7 = 1",
	"ip[0] ^ 1 = 0x44", "ip[0] | 0x40 = 0x46", "ip[1] << 2 = 0", "ip[8] >> 1 = 32", "-ip[8] = 0xffffffc0",
	"- ip[8] + 64 = 0", "ip[8] * 2 = 128", "ip[0] & 0xf * 4 = 4", "ip[0] = 0x40 | ip[0] & 0xf",
	"ip[8] = 200 % 4 * 34", "ip[8] = 4 * 80 % 64", "ip[8] = 3 ^ 2 | 65", "ip[8] = 66 ^ 1 + 1",
	"ip[8] = - -64", "-ip[8] = -64", "ip[0] = --0x45", "(ip[0]) = 0x45", "((ip[0] & 0xf) > 5)",
	"(ip[0] & 0xf) * 4 > 20", "not ip[8] = 64", "not tcp[13] = 2", "! (tcp[13] & 2 != 0)",
	"ip[8] = 64 or ip6[7] = 64", "tcp and tcp[13] & 2 != 0", "port 80 and tcp[13] = 0x18",
	"host 10.0.0.1 and ip[8] = 64", "ip[0] = 0x45 or 1 = 1", "ip[0] = 0x45 and 1 = 0", "5 > 3", "3 > 5",
	"1 = 1 and tcp", "0 + tcp[13] == 2", "tcp[13] + udp[0] == 0x1b", "ip[8] * 0 = 0", "0 * ip[8] = 0",
	"0 / ip[30] = 0", "ip[30] & 0 = 0", "ip[0] / ip[9] = 11", "ip[(ip[0] & 0xf) + 4] = 6", "tcp[tcp[12] >> 5] = 0",
	"ip[0] - ip[0] = 0", "not tcp[13] & 0 == 1", "not 1 == tcp[13] + -tcp[13] & 0",
	"ip[8] = 64 % 4 * 20", "ip[8] = 64 ^ 4 * 0", "-ip[8] = - 64 % 100 * 2", "ip6[ip6[6]] = 0", "ether[ether[0] & 3] = 2",
	"len > 100", "len >= 60", "len < 60", "len <= 54", "len = 54", "len != 54", "len - 14 > 100",
	"len > 1000 and udp", "len * 2 > 200", "greater 100", "greater 0x40", "less 60", "less 100 and tcp",
	"not greater 100", "greater 1000 or less 40",
	// Link-layer primitives.
	"ether host 02:02:02:02:02:02", "ether src 10:11:12:13:14:15", "ether dst 02:02:02:02:02:02",
	"ether host 2:2:2:2:2:2", "ether src host 10-11-12-13-14-15", "ether dst host 0202.0202.0202",
	"ether host 020202020202", "ether host ff:ff:ff:ff:ff:ff", "ether src 10:11:12:13:14:15 or 02:02:02:02:02:02",
	"ether dst 01:00:5e:00:00:fb or ff:ff:ff:ff:ff:ff", "ether src and dst 10:11:12:13:14:15",
	"ether src or dst host 33:33:00:00:00:01", "not ether dst 02:02:02:02:02:02",
	"ether dst host 02:02:02:02:02:02 and ether src 10:11:12:13:14:15",
	"ether proto 0x806", "ether proto 0x0800", "ether proto \\ip", "ether proto \\ip6", "ether proto \\arp",
	"ether proto \\rarp", "ether proto \\loopback", "ether proto \\decnet", "ether proto 100",
	"ether proto 0x42", "ether proto 0x88cc", "ether proto 0x8100", "vlan and ether proto 0x800",
	"link proto 0x86dd", "ether proto \\tcp", "ether proto ip",
	"broadcast", "ether broadcast", "multicast", "ether multicast", "not multicast and ip",
	"ip multicast", "ip6 multicast", "ip multicast or ip6 multicast", "ip and not ip multicast",
	"ether broadcast and arp", "ip6 broadcast", "tcp multicast",
	"igmp", "igrp", "pim", "vrrp", "carp", "ah", "esp", "igmp or pim", "not igmp and ip",
	// Port names: this machine's /etc/services, as tcpdump resolves them.
	"port http", "port domain", "tcp port https", "udp port domain", "port ssh or port domain",
	"src port www", "port https", "portrange ftp-data-ssh", "dst portrange 1-http",
	"tcp port http or 22", "udp port http", "sctp port ssh", "port nosuchservice",
	// Refused by libpcap as well.
	"ip[0:3] = 1", "tcp[0] / 0 = 1", "ip[0] / (1 - 1) = 0", "ip[0] >> 32 = 0", "ip[0] % 0 = 1",
	"ip[1] / ip[0] = 1", "ip[1] >> ip[32] = 1", "ip[1] | ip[8] << (0 ^ -64) = 1", "ip[0] % 7 % 4 & 1 = 0", "ip[0:] = 1", "ip[0] = 1 and 2", "len", "len-1 > 0",
	"ip[0] = !1", "ip[0] == a", "ip[0] == 0x100000000", "ether 02:02:02:02:02:02",
	"host 02:02:02:02:02:02", "ether host 1.2.3.4", "ether port 80", "tcp[0:2] = 80 and vlan and tcp[0:2] = 80",
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
	"host example.com", "mpls", "inbound", "gateway foo", "ip proto \\foo",
	"ip broadcast", "ip protochain 6", "ip6 protochain 17", "ip  broadcast and tcp",
	"ether host foo", "ether proto \\atalk", "ether proto 0xfe", "tcp[13] = 2 and decnet host 1.2",
	"ip[0] = 0x45 and ifindex 1",
}

// constantExprs are expressions of diffExprs that match every frame or
// none on Ethernet, by design.
var constantExprs = map[string]bool{
	"": true, "host 10": true, "vlan 200": true, "not vlan and tcp": true,
	"ip[0] = 0x45 or 1 = 1": true, "ip[0] = 0x45 and 1 = 0": true, "5 > 3": true, "3 > 5": true,
	"0 * ip[8] = 0": true, "0 / ip[30] = 0": true, "tcp[0:2] = 80 and vlan and tcp[0:2] = 80": true,
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
// IWARP_REQUIRE_ROOT=1 or CI is set, as in CI, where tcpdump must be
// installed).
func needTcpdump(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("tcpdump")
	if err != nil {
		if os.Getenv("IWARP_REQUIRE_ROOT") == "1" || os.Getenv("CI") != "" {
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
		args = append(args, "--", expr) // "--": an expression may start with '-'
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
				bad, hits := 0, 0
				for _, f := range frames {
					w := !rejectAll && wm.Match(f)
					if w {
						hits++
					}
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
				if lt.name == "EN10MB" && (hits == 0 || hits == len(frames)) && !constantExprs[expr] {
					t.Errorf("%q: tcpdump's program matches %d of the %d frames: the corpus does not tell it apart", expr, hits, len(frames))
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
		"tcp[13] & 2 != 0", "tcp[tcpflags] & (tcp-syn|tcp-fin) != 0", "len > 100", "greater 200",
		"ip[6:2] & 0x1fff != 0", "tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420",
		"tcp[(tcp[12] >> 4) * 4] & 0xff = 0x01", "ether multicast", "broadcast", "ip multicast",
		"ether proto \\arp", "port ssh", "ip[8] < 64",
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

// qualifierExprs are every combination of a protocol qualifier, a
// direction qualifier and a host, net, port or portrange id (many of them
// refused by libpcap, which Compile must refuse too).
func qualifierExprs() []string {
	var out []string
	for _, pr := range []string{"", "ip ", "ip6 ", "tcp ", "udp ", "sctp ", "arp ", "rarp "} {
		for _, dir := range []string{"", "src ", "dst ", "src or dst ", "src and dst "} {
			for _, id := range []string{
				"host 10.0.0.1", "host 2001:db8::1", "host 10.0.0", "host ::ffff:1.2.3.4", "net 10.0.0.0/8",
				"net 10.0.0.0 mask 255.255.255.0", "net 192.168", "net 2001:db8::/32", "net fe80::/10",
				"port 80", "port ssh", "port 7174", "portrange 100-200", "portrange ftp-data-ssh",
			} {
				out = append(out, pr+dir+id)
			}
		}
	}
	return out
}

// pcapFile returns a pcap file of link type lt holding frames, the i-th
// stamped i seconds after the epoch, and captured whole unless wire says
// otherwise.
func pcapFile(lt layers.LinkType, frames [][]byte, wire []int) []byte {
	b := make([]byte, 24, 24+len(frames)*80)
	binary.LittleEndian.PutUint32(b[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(b[4:], 2)
	binary.LittleEndian.PutUint16(b[6:], 4)
	binary.LittleEndian.PutUint32(b[16:], DefaultSnaplen)
	binary.LittleEndian.PutUint32(b[20:], uint32(lt))
	for i, f := range frames {
		var h [16]byte
		binary.LittleEndian.PutUint32(h[0:], uint32(i))
		binary.LittleEndian.PutUint32(h[8:], uint32(len(f)))
		w := len(f)
		if wire != nil {
			w = wire[i]
		}
		binary.LittleEndian.PutUint32(h[12:], uint32(w))
		b = append(append(b, h[:]...), f...)
	}
	return b
}

// tcpdumpRead returns the indexes of the frames that tcpdump -r path EXPR
// passes (the frames are told apart by their timestamps, as pcapFile
// stamps them), or tcpdump's error. An expression that libpcap's optimizer
// finds matches nothing is an error for tcpdump -r; it passes no frame.
func tcpdumpRead(bin, path, expr string) (map[int]bool, string) {
	cmd := exec.Command(bin, "-r", path, "-w", "-", "--", expr)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if strings.Contains(errb.String(), "expression rejects all packets") {
			return nil, ""
		}
		return nil, strings.TrimSpace(errb.String())
	}
	src, err := capture.NewSource(&out, "tcpdump")
	if err != nil {
		return nil, "reading tcpdump's output: " + err.Error()
	}
	defer src.Close()
	pass := map[int]bool{}
	for {
		p, err := src.Next()
		if err != nil {
			return pass, ""
		}
		pass[int(p.TS.Unix())] = true
	}
}

// TestReadFileTcpdump runs the expressions through tcpdump -r, so through
// libpcap's own compiler, optimizer, savefile reader and interpreter (the
// other tests run tcpdump's program in golang.org/x/net/bpf's VM), on the
// corpus's whole frames of every link type and on the project's captures
// (Ethernet; some cut by a snap length), and checks that the frames it
// passes are those Compile's program passes with Matcher.MatchWire.
// Frames cut inside a header the program loads are left out: there,
// libpcap's optimizer may decide without the load (see the package doc).
func TestReadFileTcpdump(t *testing.T) {
	bin := needTcpdump(t)
	exprs := append(append([]string(nil), diffExprs...), qualifierExprs()...)
	dir := t.TempDir()
	type input struct {
		name string
		lt   layers.LinkType
		data [][]byte
		wire []int
		path string
	}
	var inputs []*input
	for _, lt := range diffLinkTypes {
		inputs = append(inputs, &input{name: lt.name, lt: lt.lt, data: corpusWhole(lt.lt)})
	}
	// DLT_RAW as Linux numbers it in a file header (12), and the captures.
	inputs = append(inputs, &input{name: "RAW12", lt: linkTypeRaw12, data: corpusWhole(layers.LinkTypeRaw)})
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	td := &input{name: "testdata", lt: layers.LinkTypeEthernet}
	for _, f := range files {
		src, err := capture.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		for src.LinkType(0) == layers.LinkTypeEthernet {
			p, err := src.Next()
			if err != nil {
				break
			}
			td.data = append(td.data, append([]byte(nil), p.Data...))
			td.wire = append(td.wire, p.WireLen)
		}
		src.Close()
	}
	if len(td.data) > 0 {
		inputs = append(inputs, td)
	}
	for _, in := range inputs {
		in.path = filepath.Join(dir, in.name+".pcap")
		if err := os.WriteFile(in.path, pcapFile(in.lt, in.data, in.wire), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	compared := 0
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			n := 0
			for _, expr := range exprs {
				pass, msg := tcpdumpRead(bin, in.path, expr)
				prog, err := Compile(expr, in.lt, 0)
				switch {
				case msg != "" && err == nil:
					t.Errorf("%q: tcpdump -r refuses it (%s), Compile accepts it", expr, msg)
					continue
				case msg != "" || errors.Is(err, ErrUnsupported):
					continue
				case err != nil:
					t.Errorf("%q: tcpdump -r reads %d frames with it, Compile: %v", expr, len(pass), err)
					continue
				}
				m, err := prog.NewMatcher()
				if err != nil {
					t.Fatalf("%q: %v", expr, err)
				}
				bad := 0
				for i, f := range in.data {
					w := len(f)
					if in.wire != nil {
						w = in.wire[i]
					}
					if got := m.MatchWire(f, w); got != pass[i] {
						if bad < 3 {
							t.Errorf("%q: frame %d (% x): tcpdump -r %v, Compile %v", expr, i, f[:min(len(f), 64)], pass[i], got)
						}
						bad++
					}
				}
				if bad > 0 {
					t.Errorf("%q: %d of %d frames differ", expr, bad, len(in.data))
				}
				n++
			}
			mu.Lock()
			compared += n
			mu.Unlock()
			t.Logf("%s: %d expressions agree with tcpdump -r on %d frames", in.name, n, len(in.data))
		})
	}
}

package bpf

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Service names for ports ("port http"), as libpcap's pcap_nametoport
// resolves them: the name's TCP and UDP ports from /etc/services; a name
// known for one protocol only means that protocol ("port http" is TCP port
// 80 alone where /etc/services lists http for TCP only), a name with the
// same port for both means either.

// servicesFile is read once, when it exists; otherwise (or when it cannot
// be read) builtinServices stands in.
var servicesFile = "/etc/services"

// builtinServices are common entries of Debian's netbase /etc/services:
// name, port, whether TCP and UDP are listed, aliases.
var builtinServices = []struct {
	name     string
	port     uint16
	tcp, udp bool
	aliases  string
}{
	{"echo", 7, true, true, ""}, {"discard", 9, true, true, "sink null"},
	{"daytime", 13, true, true, ""}, {"ftp-data", 20, true, false, ""},
	{"ftp", 21, true, false, ""}, {"ssh", 22, true, false, ""},
	{"telnet", 23, true, false, ""}, {"smtp", 25, true, false, "mail"},
	{"time", 37, true, true, "timserver"}, {"tacacs", 49, true, true, ""},
	{"domain", 53, true, true, ""}, {"bootps", 67, false, true, ""},
	{"bootpc", 68, false, true, ""}, {"tftp", 69, false, true, ""},
	{"gopher", 70, true, false, ""}, {"finger", 79, true, false, ""},
	{"http", 80, true, false, "www"}, {"kerberos", 88, true, true, "kerberos5 krb5 kerberos-sec"},
	{"pop3", 110, true, false, "pop-3"}, {"sunrpc", 111, true, true, "portmapper"},
	{"auth", 113, true, false, "authentication tap ident"}, {"nntp", 119, true, false, "readnews untp"},
	{"ntp", 123, false, true, ""}, {"epmap", 135, true, false, "loc-srv"},
	{"netbios-ns", 137, false, true, ""}, {"netbios-dgm", 138, false, true, ""},
	{"netbios-ssn", 139, true, false, ""}, {"imap2", 143, true, false, "imap"},
	{"snmp", 161, true, true, ""}, {"snmp-trap", 162, true, true, "snmptrap"},
	{"bgp", 179, true, false, ""}, {"ldap", 389, true, true, ""},
	{"https", 443, true, true, ""}, {"microsoft-ds", 445, true, false, ""},
	{"isakmp", 500, false, true, ""}, {"syslog", 514, false, true, ""},
	{"printer", 515, true, false, "spooler"}, {"submission", 587, true, false, ""},
	{"ldaps", 636, true, true, ""}, {"rsync", 873, true, false, ""},
	{"ftps", 990, true, false, ""}, {"imaps", 993, true, false, ""},
	{"pop3s", 995, true, false, ""}, {"socks", 1080, true, false, ""},
	{"openvpn", 1194, true, true, ""}, {"ms-sql-s", 1433, true, false, ""},
	{"radius", 1812, true, true, ""}, {"radius-acct", 1813, true, true, "radacct"},
	{"nfs", 2049, true, true, ""}, {"iscsi-target", 3260, true, false, ""},
	{"mysql", 3306, true, false, ""}, {"ms-wbt-server", 3389, true, false, ""},
	{"sip", 5060, true, true, ""}, {"postgresql", 5432, true, false, "postgres"},
	{"x11", 6000, true, false, "x11-0"},
}

var (
	servicesOnce sync.Once
	servicesTCP  map[string]uint32
	servicesUDP  map[string]uint32
)

func loadServices() {
	servicesTCP, servicesUDP = map[string]uint32{}, map[string]uint32{}
	if f, err := os.Open(servicesFile); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line, _, _ := strings.Cut(sc.Text(), "#")
			fields := strings.Fields(line)
			if len(fields) < 2 {
				continue
			}
			ps, proto, ok := strings.Cut(fields[1], "/")
			port, err := strconv.ParseUint(ps, 10, 16)
			if !ok || err != nil {
				continue
			}
			var m map[string]uint32
			switch proto {
			case "tcp":
				m = servicesTCP
			case "udp":
				m = servicesUDP
			default:
				continue
			}
			names := append([]string{fields[0]}, fields[2:]...)
			for _, n := range names {
				if _, dup := m[n]; !dup {
					m[n] = uint32(port) // the first entry wins, as with getservbyname
				}
			}
		}
		if sc.Err() == nil && len(servicesTCP)+len(servicesUDP) > 0 {
			return
		}
		servicesTCP, servicesUDP = map[string]uint32{}, map[string]uint32{}
	}
	for _, s := range builtinServices {
		for _, n := range append([]string{s.name}, strings.Fields(s.aliases)...) {
			if s.tcp {
				servicesTCP[n] = uint32(s.port)
			}
			if s.udp {
				servicesUDP[n] = uint32(s.port)
			}
		}
	}
}

// lookupService resolves a port name (or a decimal number, as
// getaddrinfo does) to a port and the IP protocol it is for: protoTCP,
// protoUDP, or 0 when it is the same for both.
func lookupService(name string) (port, proto uint32, ok bool) {
	if n, err := strconv.ParseUint(name, 10, 16); err == nil {
		return uint32(n), 0, true
	}
	servicesOnce.Do(loadServices)
	tp, tok := servicesTCP[name]
	up, uok := servicesUDP[name]
	switch {
	case tok && uok && tp == up:
		return tp, 0, true
	case tok:
		return tp, protoTCP, true
	case uok:
		return up, protoUDP, true
	}
	return 0, 0, false
}

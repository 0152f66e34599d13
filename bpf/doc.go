// Package bpf compiles tcpdump capture filter expressions (pcap-filter(7))
// to classic BPF programs in pure Go, without libpcap, and runs them.
//
// Design goals:
//
//   - Same verdicts as tcpdump. For the subset it accepts, a compiled
//     program accepts exactly the packets the program of `tcpdump -ddd -y
//     LINKTYPE EXPR` accepts. The tests check this differentially against the
//     real tcpdump over a corpus of generated frames (IPv4 with options and
//     fragments, IPv6 with and without a Fragment header, 802.1Q and 802.1ad
//     tags, ARP, TCP, UDP, SCTP, ICMP) and over real captures.
//   - The libpcap grammar, not a look-alike: "and" and "or" have the same
//     precedence and associate to the left, "not" binds tighter; an address
//     or number after "and"/"or" inherits the qualifiers of the term before it
//     ("tcp dst port 80 or 443"); "vlan" shifts the offsets of everything that
//     follows it in the expression; ports only match first IPv4 fragments;
//     "host A" for an IPv4 A also matches ARP and RARP packets.
//   - A clear error for everything else. An expression outside the subset
//     fails with an *[Error] that names the unsupported part (and unwraps to
//     [ErrUnsupported]); it is never approximated.
//   - No allocation per packet: [Matcher.Match] runs the program in
//     golang.org/x/net/bpf's VM.
//
// The subset: host, net (CIDR, "mask" and abbreviated forms such as
// "net 10.1"), port, portrange, proto with the direction qualifiers src, dst,
// "src or dst" and "src and dst"; the protocol qualifiers and primitives ip,
// ip6, arp, rarp, tcp, udp, sctp, icmp and icmp6; vlan [ID]; and, or, not
// (also &&, || and !) and parentheses. Host and port names are not looked up:
// use addresses and numbers. Link types: Ethernet (DLT_EN10MB), Linux cooked
// v1 and v2 (DLT_LINUX_SLL, DLT_LINUX_SLL2), raw IP (DLT_RAW, 12, 14 and 101)
// and LINKTYPE_IPV4/IPV6.
//
// For Linux sockets, [CookedForKernel] rewrites a program compiled for
// DLT_LINUX_SLL to the view a SOCK_DGRAM packet socket's filter has (the
// network header at offset 0, the cooked header's fields as ancillary loads),
// as libpcap does, and [DropOutgoing] prefixes a program with the check that
// drops the second copy of every packet on a loopback interface.
package bpf

// Package bpf compiles tcpdump capture filter expressions (pcap-filter(7))
// to classic BPF programs in pure Go, without libpcap, and runs them.
//
// Design goals:
//
//   - Same verdicts as tcpdump. For the subset it accepts, a compiled
//     program accepts exactly the packets the program of `tcpdump -ddd -y
//     LINKTYPE EXPR` accepts, and `tcpdump -r FILE EXPR` reads the frames
//     Matcher.MatchWire passes. The tests check this differentially against
//     the real tcpdump (its programs in the same VM, and tcpdump -r itself,
//     libpcap's interpreter and all) over a corpus of generated frames (IPv4 with options and
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
// The subset:
//
//   - host, net (CIDR, "mask" and abbreviated forms such as "net 10.1"),
//     port, portrange and proto, with the direction qualifiers src, dst,
//     "src or dst" and "src and dst"; ports may be service names ("port
//     http", "portrange ftp-data-ssh"), resolved as libpcap does through
//     /etc/services when it exists (a name listed for TCP only means TCP
//     ports only), else through a built-in table of common names.
//   - The protocol qualifiers and primitives ip, ip6, arp, rarp, tcp, udp,
//     sctp, icmp, icmp6, igmp, igrp, pim, vrrp, carp, ah and esp.
//   - Link layer: ether host/src/dst MAC (also "link", "ppp" and "slip"),
//     ether proto N or \NAME (ip, ip6, arp, rarp, loopback, decnet, lat,
//     sca, mopdl, moprc; values up to 1500 are 802.2 SAPs), broadcast,
//     multicast and "ether broadcast/multicast" (Ethernet only, as in
//     libpcap), ip multicast and ip6 multicast; vlan [ID].
//   - Relations "expr relop expr" (> < >= <= = == !=) over packet data
//     accessors proto[expr] and proto[expr:size] (size 1, 2 or 4; proto one
//     of ether, link, ppp, slip, ip, ip6, arp, rarp, tcp, udp, sctp, icmp,
//     icmp6, igmp, igrp, pim, vrrp, carp), len (the captured length, "ld
//     #pktlen"), numbers and the named numbers (tcpflags, tcp-syn...,
//     icmptype, icmp-echo..., icmp6type, icmp6-echo...), with + - * / % &
//     | ^ << >>, unary minus and parentheses; less N and greater N.
//   - and, or, not (also &&, || and !) and parentheses.
//
// Accessors follow libpcap: ip[...] and ip6[...] only match packets of
// that protocol; tcp[...], udp[...] and the other transport accessors only
// match IPv4 packets of that protocol that are not a fragment other than
// the first (never IPv6, as libpcap); icmp6[...] reads after a fixed IPv6
// header whose next header is ICMPv6. A binary operator keeps the protocol
// checks of its left operand only ("0 + tcp[13] = 2" has none, as in
// libpcap); constants fold, and "x * 0", "0 / x" and the like drop the
// loads of x, as libpcap's optimizer does. Division or modulus by a
// constant 0 and shifts by more than 31 bits are refused, as libpcap
// refuses them.
//
// Outside the subset: host names (use addresses), "ip broadcast" (its
// meaning depends on the capture interface's netmask), protochain, gateway,
// inbound/outbound, ifindex, MPLS, PPPoE, Geneve, 802.11, ATM and the
// other protocol families of pcap-filter(7), ether proto values that
// libpcap tests through several LLC/SNAP encapsulations (\iso, \ipx,
// \netbeui, \atalk, \aarp...). Link types: Ethernet (DLT_EN10MB), Linux
// cooked v1 and v2 (DLT_LINUX_SLL, DLT_LINUX_SLL2), raw IP (DLT_RAW, 12,
// 14 and 101) and LINKTYPE_IPV4/IPV6.
//
// Known differences, all from libpcap's optimizer removing or reordering
// code whose outcome it has proved irrelevant: on a frame too short for a
// load (cut by the snap length), or where a runtime division by zero
// aborts the program, tcpdump may still decide from the other tests. For
// example "port http or 443" (TCP port 80, or 443 of any protocol) on a TCP
// segment cut inside its destination port; "tcp[13] = 2 or tcp", whose
// tcpdump program is just "tcp"; and a division or shift by a computed
// constant (0, or more than 31) that libpcap only refuses where the code
// is reachable ("udp and icmp[0] / (1 - 1) = 0" compiles to "reject all"
// there, and is refused here).
//
// len is the wire length in libpcap's interpreter and in the kernel:
// [Matcher.MatchWire] takes it; [Matcher.Match] takes the length of the
// data it is given, which differs only for packets cut by a snap length.
//
// protochain stays out: libpcap's program for it loops over the IPv6
// extension headers with a backward jump, which neither a Linux socket
// filter nor golang.org/x/net/bpf's VM runs.
//
// A program that reads len or the cooked header (ether[...] on "-i any")
// cannot run as a Linux socket filter: [CookedForKernel] says so, and the
// packets are filtered in user space, as libpcap does.
//
// For Linux sockets, [CookedForKernel] rewrites a program compiled for
// DLT_LINUX_SLL to the view a SOCK_DGRAM packet socket's filter has (the
// network header at offset 0, the cooked header's fields as ancillary loads),
// as libpcap does, and [DropOutgoing] prefixes a program with the check that
// drops the second copy of every packet on a loopback interface.
package bpf

package capture

import (
	"errors"
	"net/netip"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
)

//go:generate go tool stringer -type=Kind -trimprefix=Kind

// Kind says what a [Packet] carries.
type Kind uint8

// Packet kinds. The zero Kind is not used by [Source.Next].
const (
	// KindTCP: an IPv4 or IPv6 packet (not a fragment) carrying a TCP
	// segment (RFC 9293 §3.1) whose header was decoded.
	KindTCP Kind = iota + 1
	// KindUDP: an IPv4 or IPv6 packet (not a fragment) carrying a UDP
	// datagram (RFC 768), e.g. RoCEv2.
	KindUDP
	// KindOther: anything else that decoded cleanly: not IP (ARP, LLC,
	// ...), another IP protocol (ICMP, SCTP, ESP, ...), or an IP fragment
	// (see [Packet.Fragment]). For IP packets Src and Dst hold the
	// addresses with port 0.
	KindOther
	// KindBad: the frame could not be decoded; [Packet.Err] says why.
	KindBad
	// KindIB: a native InfiniBand packet, from a capture of link type
	// [LinkTypeInfiniBand]: [Packet.Payload] is the whole packet, from the
	// Local Route Header to the VCRC (IBA Vol. 1 §5, §7.7), left to package
	// dissect/ibcm to decode. There is no IP: Src and Dst are invalid, IPv6
	// and Fragment false. (After KindBad so that the earlier values stay
	// as they were.)
	KindIB
)

// TCPFlags holds the TCP control bits with the bit values they have in
// octet 13 of the TCP header (RFC 9293 §3.1, RFC 3168 §6.1 for ECE/CWR).
type TCPFlags uint8

// TCP control bits.
const (
	FlagFIN TCPFlags = 0x01
	FlagSYN TCPFlags = 0x02
	FlagRST TCPFlags = 0x04
	FlagPSH TCPFlags = 0x08
	FlagACK TCPFlags = 0x10
	FlagURG TCPFlags = 0x20
	FlagECE TCPFlags = 0x40
	FlagCWR TCPFlags = 0x80
)

var flagNames = [8]string{"FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"}

// Has reports whether all bits of m are set in f.
func (f TCPFlags) Has(m TCPFlags) bool { return f&m == m }

// String returns the set flags joined by '|', e.g. "SYN|ACK", or "0" when
// none is set.
func (f TCPFlags) String() string {
	if f == 0 {
		return "0"
	}
	b := make([]byte, 0, 32)
	for i, n := range flagNames {
		if f&(1<<i) != 0 {
			if len(b) > 0 {
				b = append(b, '|')
			}
			b = append(b, n...)
		}
	}
	return string(b)
}

// BadTCP reports whether p is a TCP segment whose header could not be
// decoded (KindBad, its error at the transport layer, its ports known):
// Src and Dst name its connection.
func (p *Packet) BadTCP() bool {
	var de *dissect.DecodeError
	return p.Kind == KindBad && p.Src.Port() != 0 && p.Dst.Port() != 0 && errors.As(p.Err, &de) && de.Layer == dissect.LayerTCP
}

// Packet is one frame read from a capture, with its IP and TCP or UDP
// headers decoded. The slices alias the [Source]'s buffer and are valid only
// until the next call to [Source.Next]; copy what must be kept.
type Packet struct {
	// Frame is the 1-based frame number in the file: every pcap record and
	// every pcapng packet block counts, whatever it holds.
	Frame uint64
	// TS is the capture timestamp, in UTC.
	TS time.Time
	// Interface is the pcapng interface id (0 for pcap files).
	Interface int
	// CapLen is the number of octets captured; WireLen the frame's length
	// on the wire, as the file records them. A damaged record may give a
	// CapLen above WireLen: its captured octets are decoded all the same,
	// as tshark does (it reports frame.len_lt_caplen).
	CapLen, WireLen int

	// Kind says what the frame carries; Err says why when Kind is KindBad
	// (a *dissect.DecodeError naming the layer and offset, or one of this
	// package's sentinels), and is nil otherwise.
	Kind Kind
	Err  error

	// Src and Dst are the IP addresses with the TCP or UDP ports (port 0 for
	// KindOther; invalid for KindIB and for frames without IP). A KindBad
	// packet whose TCP header is malformed has its ports when they were
	// captured (BadTCP).
	Src, Dst netip.AddrPort
	// IPv6 is set when the (innermost) IP header is IPv6.
	IPv6 bool
	// Fragment is set for IPv4 fragments (MF set or a non-zero fragment
	// offset, RFC 791 §3.2) and IPv6 packets with a Fragment header that is
	// not an atomic fragment (RFC 8200 §4.5, RFC 6946); such packets are
	// KindOther and their transport header is not decoded.
	Fragment bool

	// Seq, Ack, Flags and Window are the TCP header fields (RFC 9293 §3.1),
	// zero unless Kind is KindTCP.
	Seq, Ack uint32
	Flags    TCPFlags
	Window   uint16

	// Payload is the TCP (or UDP) payload as captured. It ends at the IP
	// total length (never includes link-layer padding or trailers) and at
	// the end of the captured octets. For KindIB it is the whole frame.
	Payload []byte
	// PayloadWireLen is the payload length on the wire, from the IP total
	// length (IPv6 payload length) and, for UDP, the UDP length, bounded by
	// the frame's wire length. It is greater than len(Payload) when the snap
	// length cut the frame, and never less. For KindIB it is the frame's
	// wire length.
	PayloadWireLen int

	// Data is the whole frame as captured.
	Data []byte

	// PayloadPos is the offset of Payload[0] in the capture file, when the
	// Source can read the file there again (Source.ReadAt: an uncompressed
	// regular file, one input); 0 when it cannot (no capture file has
	// packet octets at offset 0).
	PayloadPos int64
}

// Errors reported in [Packet.Err] (usually inside a *dissect.DecodeError)
// or in a [FileError].
var (
	// ErrLinkType: the capture (or a pcapng interface) uses a link-layer
	// header type this package does not decode.
	ErrLinkType = errors.New("capture: unsupported link type")
	// ErrFormat: the input is not a pcap or pcapng file.
	ErrFormat = errors.New("capture: not a pcap or pcapng file")
	// ErrRecordTooLong: a record declares more than MaxRecordLength captured
	// octets; the file is treated as damaged from there on.
	ErrRecordTooLong = errors.New("capture: record longer than 262144 octets")
	// ErrNotSeekable: Source.ReadAt on a Source that is not an
	// uncompressed regular file.
	ErrNotSeekable = errors.New("capture: the capture cannot be read at an offset")
	// ErrBadBlock: a pcapng block is malformed: its total length is
	// impossible (below the minimum for its type, not a multiple of 4, too
	// short for the packet it declares) or its contents run past it.
	ErrBadBlock = errors.New("capture: malformed pcapng block")
	// ErrClosed: Next was called after Close.
	ErrClosed = errors.New("capture: source closed")
)

// MaxRecordLength is the largest captured length of one record that a
// [Source] accepts: libpcap's MAXIMUM_SNAPLEN, the limit tcpdump and
// Wireshark apply too. A longer record ends the file with a [FileError]
// wrapping [ErrRecordTooLong], without allocating for it.
const MaxRecordLength = 262144

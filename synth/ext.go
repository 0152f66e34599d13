package synth

import (
	"bufio"
	"io"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// ExtScenario is a capture of one of the transports other than MPA over
// TCP: InfiniBand CM over RoCEv2 or native InfiniBand ([CMScenario]) or
// DDP over SCTP
// ([SCTPScenario]). Generate writes the pcap and the ground truth as
// [Generate] does for iWARP scenarios.
type ExtScenario interface {
	Generate(pcapW, truthW io.Writer) (*Result, error)
}

// extLibrary lists the named scenarios of the other transports.
var extLibrary = []struct {
	name, desc string
	build      func(seed int64) ExtScenario
}{
	{"roce-cm-v4", "RoCEv2 CM over IPv4: REQ with the IP CM header (NVMe-oF), MRA, REP, RTU, RC data, DREQ, DREP", cmV4},
	{"roce-cm-v6-reject", "RoCEv2 CM over IPv6: REQ with the IP CM header, REJ reason 28 (consumer defined) with private data", cmV6Reject},
	{"roce-cm-hello", "RoCEv2 CM with seed 002's Hello/HelloAck (service ID 0x0000000001 02 <port>), IPv4 and IPv6, accept and reject", cmHello},
	{"roce-cm-hello-bad", "seed 002 Hello with MajV 2 and IPV 5, rejected; a SIDR_REQ/SIDR_REP resolution", cmHelloBad},
	{"ib-cm-native", "CM over native InfiniBand (LINKTYPE_INFINIBAND): LRH-only NFS/RDMA connect, MRA, RC data, disconnect; a REQ with GRHs rejected", ibCMNative},
	{"sctp-ddp", "DDP over SCTP (RFC 5043): INIT handshake, session Initiate/Accept, Sends, Writes, Reads, Terminate session", sctpBasic},
	{"sctp-ddp-enhanced", "DDP over SCTP with seed 003's enhanced session control (IRD/ORD), IPv6, fragmented user messages", sctpEnhanced},
	{"sctp-ddp-reject", "DDP over SCTP: enhanced Initiate answered by an Enhanced Reject", sctpReject},
}

// ExtNames returns the names of the scenarios of the other transports.
func ExtNames() []string {
	out := make([]string, len(extLibrary))
	for i, n := range extLibrary {
		out[i] = n.name
	}
	return out
}

// DescribeExt returns the description of a named scenario of the other
// transports ("" when unknown).
func DescribeExt(name string) string {
	for _, n := range extLibrary {
		if n.name == name {
			return n.desc
		}
	}
	return ""
}

// NamedExt returns the scenario of the other transports called name, built
// with seed.
func NamedExt(name string, seed int64) (ExtScenario, bool) {
	for _, n := range extLibrary {
		if n.name == name {
			return n.build(seed), true
		}
	}
	return nil, false
}

// extFrame is one frame of an ext scenario, before numbering.
type extFrame struct {
	t    time.Duration
	data []byte
}

// ipFrame serialises an Ethernet frame with an IPv4 or IPv6 header from src
// to dst of protocol proto and the given transport layers.
func ipFrame(src, dst netip.Addr, proto layers.IPProtocol, ipid uint16, ls ...gopacket.SerializableLayer) ([]byte, error) {
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	eth := &layers.Ethernet{SrcMAC: macFor(src), DstMAC: macFor(dst), EthernetType: layers.EthernetTypeIPv4}
	var ip gopacket.NetworkLayer
	if src.Is4() {
		ip = &layers.IPv4{Version: 4, IHL: 5, Id: ipid, Flags: layers.IPv4DontFragment, TTL: 64, Protocol: proto,
			SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
	} else {
		eth.EthernetType = layers.EthernetTypeIPv6
		ip = &layers.IPv6{Version: 6, NextHeader: proto, HopLimit: 64, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
	}
	for _, l := range ls {
		if u, ok := l.(*layers.UDP); ok {
			if err := u.SetNetworkLayerForChecksum(ip); err != nil {
				return nil, err
			}
		}
	}
	all := append([]gopacket.SerializableLayer{eth, ip.(gopacket.SerializableLayer)}, ls...)
	if err := gopacket.SerializeLayers(buf, opts, all...); err != nil {
		return nil, err
	}
	return append([]byte(nil), buf.Bytes()...), nil
}

// writeExt writes the frames (already in time order) as a pcap of link
// type link.
func writeExt(start time.Time, frames []extFrame, pcapW io.Writer, link layers.LinkType) error {
	if pcapW == nil {
		return nil
	}
	bw := bufio.NewWriterSize(pcapW, 1<<16)
	pw := pcapgo.NewWriter(bw)
	if err := pw.WriteFileHeader(defaultSnaplen, link); err != nil {
		return err
	}
	for _, f := range frames {
		ci := gopacket.CaptureInfo{Timestamp: start.Add(f.t), CaptureLength: len(f.data), Length: len(f.data)}
		if err := pw.WritePacket(ci, f.data); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// finishExt writes an Ethernet pcap of the frames and the truth records
// (ordered by frame by the caller), and returns the result.
func finishExt(start time.Time, frames []extFrame, recs []Record, pcapW, truthW io.Writer) (*Result, error) {
	return finishExtLink(start, frames, recs, pcapW, truthW, layers.LinkTypeEthernet)
}

// finishExtLink is finishExt for frames of link type link.
func finishExtLink(start time.Time, frames []extFrame, recs []Record, pcapW, truthW io.Writer, link layers.LinkType) (*Result, error) {
	if err := writeExt(start, frames, pcapW, link); err != nil {
		return nil, err
	}
	if truthW != nil {
		if err := writeTruth(truthW, recs); err != nil {
			return nil, err
		}
	}
	return &Result{Frames: len(frames), Records: recs}, nil
}

package bpf

import (
	xbpf "golang.org/x/net/bpf"
)

// Linux socket filter ancillary data offsets (linux/filter.h): a load from
// SKF_AD_OFF+n reads skb metadata instead of packet data.
const (
	skfADOff      = 0xfffff000 // SKF_AD_OFF (-0x1000)
	skfADProtocol = 0          // SKF_AD_PROTOCOL: skb->protocol, host order
	skfADPktType  = 4          // SKF_AD_PKTTYPE: skb->pkt_type
	skfADIfIndex  = 8          // SKF_AD_IFINDEX: skb->dev->ifindex

	packetOutgoing = 4 // PACKET_OUTGOING (linux/if_packet.h)
	sllHeaderLen   = 16
)

// Opcode fields of classic BPF (linux/bpf_common.h).
const (
	bpfClassMask = 0x07
	bpfLD        = 0x00
	bpfLDX       = 0x01
	bpfRET       = 0x06
	bpfModeMask  = 0xe0
	bpfABS       = 0x20
	bpfIND       = 0x40
	bpfLEN       = 0x80
	bpfMSH       = 0xa0
	bpfSizeMask  = 0x18
	bpfH         = 0x08
	bpfRVALMask  = 0x18
	bpfK         = 0x00
)

// CookedForKernel rewrites a program compiled for Linux cooked capture v1
// (DLT_LINUX_SLL, the link type of "-i any") to the view a Linux SOCK_DGRAM
// packet socket's filter has: the packet starts at the network header, the
// cooked header's protocol and packet type are ancillary loads. It returns
// false when the program reads the cooked header otherwise (libpcap then
// filters in user space, and so should the caller). As libpcap's
// fix_program/fix_offset do, indirect loads are taken to be relative to the
// start of the packet, and accepting return values are shortened by the 16
// octets of the cooked header that the kernel does not count.
func CookedForKernel(raw []xbpf.RawInstruction) ([]xbpf.RawInstruction, bool) {
	out := make([]xbpf.RawInstruction, len(raw))
	copy(out, raw)
	for i := range out {
		ins := &out[i]
		class := ins.Op & bpfClassMask
		switch {
		case class == bpfRET && ins.Op&bpfRVALMask == bpfK:
			if ins.K > sllHeaderLen {
				ins.K -= sllHeaderLen
			}
		case class == bpfLD || class == bpfLDX:
			mode := ins.Op & bpfModeMask
			switch mode {
			case bpfABS, bpfIND, bpfMSH:
			case bpfLEN:
				return nil, false // the kernel's length lacks the cooked header
			default:
				continue
			}
			if ins.K >= skfADOff {
				continue // already ancillary
			}
			switch {
			case ins.K >= sllHeaderLen:
				ins.K -= sllHeaderLen
			case mode == bpfABS && class == bpfLD && ins.Op&bpfSizeMask == bpfH && ins.K == 14:
				ins.K = skfADOff + skfADProtocol
			case mode == bpfABS && class == bpfLD && ins.Op&bpfSizeMask == bpfH && ins.K == 0:
				ins.K = skfADOff + skfADPktType
			default:
				return nil, false
			}
		}
	}
	return out, true
}

// DropOutgoing prefixes prog with a test that drops packets the kernel
// marks outgoing (PACKET_OUTGOING) on interface index ifindex, or on every
// interface when ifindex is 0. On a loopback interface a packet socket sees
// each packet twice, leaving and arriving; libpcap keeps only the arriving
// copy, and so does a socket with this filter.
func DropOutgoing(prog []xbpf.RawInstruction, ifindex int) []xbpf.RawInstruction {
	ld := func(k uint32) xbpf.RawInstruction {
		return xbpf.RawInstruction{Op: bpfLD | bpfABS /* size W is 0 */, K: skfADOff + k}
	}
	jeq := func(k uint32, jt, jf uint8) xbpf.RawInstruction {
		return xbpf.RawInstruction{Op: 0x05 | 0x10 /* JMP|JEQ|K */, Jt: jt, Jf: jf, K: k}
	}
	ret0 := xbpf.RawInstruction{Op: bpfRET | bpfK}
	var pre []xbpf.RawInstruction
	if ifindex != 0 {
		// ld ifindex; jeq #lo, +0, +3; ld pkttype; jeq #4, +0, +1; ret #0
		pre = append(pre, ld(skfADIfIndex), jeq(uint32(ifindex), 0, 3))
	}
	pre = append(pre, ld(skfADPktType), jeq(packetOutgoing, 0, 1), ret0)
	return append(pre, prog...)
}

package flows

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/shard"
)

// balanceBuckets is the number of buckets connections are hashed into
// before the buckets are dealt out to the workers.
const balanceBuckets = 1 << 12

// balancer decides which Parallel worker decodes a packet. Every packet of
// a TCP connection, in both directions, must reach the same worker for the
// whole decode (a segment whose TCP header is malformed too, to be reported
// on its connection); everything else goes to worker 0.
//
// A plain shard.Hash modulo the workers splits a few large connections
// badly: 2 connections share one of 2 workers half the time, leaving the
// other idle, and the 8 connections of the issue 6 workload fall 5/3 on 2
// workers (64 % of the octets on one) and 4/0/4 on 3.
//
// So the unordered 4-tuple is hashed into one of balanceBuckets buckets,
// and a bucket is given, the first time a packet falls in it, to the
// worker with the least load so far (payload octets plus a fixed cost per
// packet), lowest index first on a tie. A bucket keeps its worker to the
// end, which keeps every connection, and every later connection on the
// same 4-tuple, on one worker. The table is of fixed size (memory does not
// grow with the capture), and the decision depends only on the packets
// before, in capture order: a rerun deals the buckets out the same way.
// The hash need not be shard.Hash (nothing outside the process sees it):
// for IPv4 it is a multiply of the XORed addresses and ports, read
// straight from the frame by capture.ChunkWalker.Owners.
type balancer struct {
	n      int
	bucket [balanceBuckets]uint8 // worker+1; 0: not dealt yet
	load   [MaxWorkers]uint64
}

// perPacketLoad is the load a packet counts for besides its payload: the
// decode of its headers, in payload octets of about the same cost.
const perPacketLoad = 256

// Owner returns the worker of pk and counts pk in its load
// (capture.Owner).
func (b *balancer) Owner(pk *capture.Packet) uint8 {
	if b.n <= 1 {
		return 0
	}
	if pk.Kind != capture.KindTCP && !pk.BadTCP() {
		b.load[0] += uint64(len(pk.Payload)) + perPacketLoad
		return 0
	}
	if s, d := pk.Src.Addr(), pk.Dst.Addr(); s.Is4() && d.Is4() {
		return b.OwnerTCP4(s.As4(), d.As4(), pk.Src.Port(), pk.Dst.Port(), len(pk.Payload))
	}
	return b.deal(shard.Hash(pk.Src, pk.Dst)>>(64-12), len(pk.Payload))
}

// OwnerTCP4 is Owner for a TCP packet between IPv4 endpoints
// (capture.Owner).
func (b *balancer) OwnerTCP4(src, dst [4]byte, sport, dport uint16, payload int) uint8 {
	if b.n <= 1 {
		return 0
	}
	x := binary.BigEndian.Uint32(src[:]) ^ binary.BigEndian.Uint32(dst[:])
	h := (uint64(x)<<16 | uint64(sport^dport)) * 0x9e3779b97f4a7c15
	return b.deal(h>>(64-12), payload)
}

// deal returns the worker of bucket k, dealing it to the least loaded
// worker if it has none yet, and counts a packet of payload octets in the
// worker's load.
func (b *balancer) deal(k uint64, payload int) uint8 {
	e := &b.bucket[k%balanceBuckets]
	if *e == 0 {
		least := 0
		for i := 1; i < b.n; i++ {
			if b.load[i] < b.load[least] {
				least = i
			}
		}
		*e = uint8(least + 1)
	}
	w := *e - 1
	b.load[w] += uint64(payload) + perPacketLoad
	return w
}

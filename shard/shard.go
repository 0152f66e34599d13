package shard

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"strconv"
	"strings"

	"github.com/iwarpkit/iwarpkit/capture"
)

// PortRoCEv2 is the UDP destination port of RoCEv2 (IBTA Annex A17, IANA
// "roce"). UDP packets to or from it are sharded by address pair only.
const PortRoCEv2 = 4791

// MaxCount is the largest number of shards a [Selector] accepts.
const MaxCount = 1 << 16

// hashSeed starts the hash (the 64-bit golden ratio, as in SplitMix64).
const hashSeed = 0x9e3779b97f4a7c15

// fmix64 is MurmurHash3's 64-bit finalizer: every input bit affects every
// output bit, so that the hash modulo small N is uniform.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Hash returns the symmetric hash of a connection between endpoints a and
// b: Hash(a, b) == Hash(b, a). It is stable across machines and versions,
// so that other tools can compute it too:
//
//  1. Order the endpoints: lo is the smaller by netip.AddrPort.Compare
//     (IPv4 before IPv6, then by address, then by port), hi the other.
//  2. Take each address as 16 octets (IPv4 as the IPv4-mapped IPv6 address
//     ::ffff:a.b.c.d; an invalid address as 16 zero octets) and read them
//     as two big-endian 64-bit words.
//  3. h = 0x9e3779b97f4a7c15; for each word w of lo's address, hi's
//     address, then lo.port<<16 | hi.port: h = fmix64(h XOR w), fmix64 being
//     MurmurHash3's 64-bit finalizer.
//
// The shard of a connection among N is Hash % N.
func Hash(a, b netip.AddrPort) uint64 {
	if a.Addr().Is4() && b.Addr().Is4() {
		return HashIPv4(a.Addr().As4(), b.Addr().As4(), a.Port(), b.Port())
	}
	return hashAny(a, b)
}

// hashAny is Hash spelled out for any pair of endpoints.
func hashAny(a, b netip.AddrPort) uint64 {
	if a.Compare(b) > 0 {
		a, b = b, a
	}
	la, ha := a.Addr().As16(), b.Addr().As16() // all zero when invalid
	h := uint64(hashSeed)
	h = fmix64(h ^ binary.BigEndian.Uint64(la[0:8]))
	h = fmix64(h ^ binary.BigEndian.Uint64(la[8:16]))
	h = fmix64(h ^ binary.BigEndian.Uint64(ha[0:8]))
	h = fmix64(h ^ binary.BigEndian.Uint64(ha[8:16]))
	return fmix64(h ^ (uint64(a.Port())<<16 | uint64(b.Port())))
}

// mix1 is h after the first word of Hash for an IPv4 endpoint: the
// first 8 octets of an IPv4-mapped address are zero.
var mix1 = fmix64(hashSeed)

// HashIPv4 is Hash of the IPv4 endpoints a:ap and b:bp, from the raw
// addresses, for callers that read them from the octets of a frame (the
// owner walk of flows.Parallel) and need not build a netip.AddrPort. It
// computes the same value as Hash, in a fifth of the time.
func HashIPv4(a, b [4]byte, ap, bp uint16) uint64 {
	x, y := binary.BigEndian.Uint32(a[:]), binary.BigEndian.Uint32(b[:])
	if x > y || (x == y && ap > bp) {
		x, y, ap, bp = y, x, bp, ap
	}
	// The second word of an IPv4-mapped address is 0000ffff and the
	// IPv4 address; the first is zero, so h ^ 0 is h.
	h := fmix64(mix1 ^ (0xffff<<32 | uint64(x)))
	h = fmix64(h)
	h = fmix64(h ^ (0xffff<<32 | uint64(y)))
	return fmix64(h ^ (uint64(ap)<<16 | uint64(bp)))
}

// hostPair is Hash over the addresses alone (ports counted as 0).
func hostPair(a, b netip.AddrPort) uint64 {
	return Hash(netip.AddrPortFrom(a.Addr(), 0), netip.AddrPortFrom(b.Addr(), 0))
}

// Of returns the shard, in [0, n), that packet p belongs to (see the
// package documentation for what is hashed). n <= 1 puts everything in
// shard 0.
func Of(p *capture.Packet, n int) int {
	if n <= 1 {
		return 0
	}
	var h uint64
	switch p.Kind {
	case capture.KindTCP:
		h = Hash(p.Src, p.Dst)
	case capture.KindUDP:
		if p.Src.Port() == PortRoCEv2 || p.Dst.Port() == PortRoCEv2 {
			h = hostPair(p.Src, p.Dst)
		} else {
			h = Hash(p.Src, p.Dst)
		}
	case capture.KindOther:
		if !p.Src.Addr().IsValid() || !p.Dst.Addr().IsValid() {
			return 0
		}
		h = hostPair(p.Src, p.Dst)
	case capture.KindBad:
		if !p.BadTCP() {
			return 0
		}
		h = Hash(p.Src, p.Dst)
	default:
		return 0
	}
	return int(h % uint64(n))
}

// Selector picks one shard out of Count: the connections of shard Index.
// The zero Selector (Count 0) and any Selector with Count 1 select
// everything.
type Selector struct {
	Index, Count int
}

// ErrSelector is returned by Parse for a malformed shard selector.
var ErrSelector = errors.New("shard: bad shard selector (want I/N with 0 <= I < N <= 65536)")

// Parse reads a selector written "I/N" (e.g. "3/8": shard 3 of 8, counted
// from 0, as Kubernetes numbers the pods of an Indexed Job). It returns
// ErrSelector when s is not of that form or I is not below N.
func Parse(s string) (Selector, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Selector{}, ErrSelector
	}
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil || n < 1 || n > MaxCount || i < 0 || i >= n {
		return Selector{}, ErrSelector
	}
	return Selector{Index: i, Count: n}, nil
}

// All reports whether s selects every packet (Count <= 1).
func (s Selector) All() bool { return s.Count <= 1 }

// Keep reports whether packet p belongs to the selected shard.
func (s Selector) Keep(p *capture.Packet) bool {
	return s.Count <= 1 || Of(p, s.Count) == s.Index
}

// String returns "I/N", or "" for a selector that selects everything.
func (s Selector) String() string {
	if s.All() {
		return ""
	}
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// Name returns the deterministic name of the selected shard's output for an
// input called base: base + ".shard-I-of-N", or base itself when s selects
// everything. Reruns with the same input and selector write the same
// names, so they replace their earlier output rather than add to it.
func (s Selector) Name(base string) string {
	if s.All() {
		return base
	}
	return base + ".shard-" + strconv.Itoa(s.Index) + "-of-" + strconv.Itoa(s.Count)
}

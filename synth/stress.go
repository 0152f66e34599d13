package synth

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"
)

// The stress workloads are captures whose cost is in their connections
// rather than their octets, for issue 6's memory target: a decoder's peak
// memory must be bounded by the connections open at once and their
// windows, never by the capture's size. Each writes n connections (or
// SYNs) streamed, in memory that does not grow with n.
//
//   - StressSYNFlood: n SYNs from distinct endpoints, none answered (a SYN
//     flood, a port scan, a client retrying a dead server from new ports).
//   - StressOpen: n connections open at once, each in the middle of a
//     64 KiB RDMA Write when the capture ends (a storage cluster's
//     connections caught mid-transfer).
//   - StressChurn: n short connections, StressConcurrent open at a time,
//     each with a few messages, closed with FINs.
//   - StressResets: the same, each reset (RST) after its messages.
//   - StressResetsSlow: the same with frames 100 ms apart rather than
//     10 µs: the resets of a day (25,000 connections) rather than of
//     9 seconds, so that most connections are reset minutes before the
//     capture ends.
//   - StressLong: one connection sending one RDMA Write of n MiB (a
//     message whose record, about its first frame, comes only when it
//     completes).
const (
	StressSYNFlood   = "synflood"
	StressOpen       = "open"
	StressChurn      = "churn"
	StressResets     = "resets"
	StressResetsSlow = "resets-slow"
	StressLong       = "longmsg"
)

// StressKinds lists the stress workloads.
var StressKinds = []string{StressSYNFlood, StressOpen, StressChurn, StressResets, StressResetsSlow, StressLong}

// StressConcurrent is how many connections StressChurn and StressResets
// keep open at a time.
const StressConcurrent = 64

// ErrStressKind: WriteStress was given an unknown workload.
var ErrStressKind = errors.New("synth: unknown stress workload")

// stressFrameGap is the time between two frames of a stress capture;
// stressSlowGap, of StressResetsSlow.
const (
	stressFrameGap = 10 * time.Microsecond
	stressSlowGap  = 100 * time.Millisecond
)

// stressConn is connection i of a stress workload: the performance
// workload's connection i (MPA rev 2, CRC on, markers both ways on odd
// connections, MSS 1460) from initiator endpoint i, distinct for every i
// below 2^28.
func stressConn(i int) Conn {
	c := perfConn(i)
	c.Initiator = stressEndpoint(i)
	return c
}

// stressEndpoint is the initiator endpoint of connection i: address
// 10.0.0.0 + i/16, port 40000 + i%16 (distinct for every i below 2^28).
func stressEndpoint(i int) netip.AddrPort {
	a := i / 16
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(a >> 16), byte(a >> 8), byte(a)}), uint16(40000+i%16))
}

// stressWriter writes frames of stress workloads as a pcap file.
type stressWriter struct {
	bw    *bufio.Writer
	pw    *pcapgo.Writer
	fb    *frameBuilder
	t     time.Time
	ipid  uint16
	frame uint64
	gap   time.Duration // between two frames
}

func newStressWriter(w io.Writer) (*stressWriter, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	pw := pcapgo.NewWriter(bw)
	if err := pw.WriteFileHeader(defaultSnaplen, LinkEthernet.linkType()); err != nil {
		return nil, err
	}
	return &stressWriter{bw: bw, pw: pw, fb: newFrameBuilder(LinkEthernet), t: defaultStart, gap: stressFrameGap}, nil
}

// put writes segment s of connection c (window win).
func (sw *stressWriter) put(c *Conn, s *segment, win uint16) error {
	sw.frame++
	sw.ipid++
	s.frame, s.slot, s.cap, s.ipid = sw.frame, sw.frame, len(s.payload), sw.ipid
	src, dst := c.Initiator, c.Responder
	if s.dir == R2I {
		src, dst = dst, src
	}
	data, err := sw.fb.build(src, dst, s, win)
	if err != nil {
		return err
	}
	sw.t = sw.t.Add(sw.gap)
	return sw.pw.WritePacket(gopacket.CaptureInfo{Timestamp: sw.t, CaptureLength: len(data), Length: len(data)}, data)
}

// startConn makes connection i's generator and its handshake and MPA
// exchange.
func startConn(c *Conn, i int, seed int64) (*connGen, error) {
	g, err := newConnGen(c, i, seed)
	if err != nil {
		return nil, err
	}
	g.handshake()
	if err := g.mpaFrames(); err != nil {
		return nil, err
	}
	g.setOrigins()
	return g, nil
}

// drain writes the segments g has made so far, and forgets them.
func (sw *stressWriter) drain(g *connGen) error {
	for _, s := range g.segs {
		if err := sw.put(g.c, s, g.win); err != nil {
			return err
		}
	}
	clear(g.segs)
	clear(g.recs)
	g.segs, g.recs = g.segs[:0], g.recs[:0]
	return nil
}

// WriteStress streams stress workload kind (one of StressKinds) of n
// connections (for StressLong, n MiB) to w as a pcap file. The output
// depends only on kind, n and seed; memory does not grow with n, except
// for StressOpen, whose n connections are all open at once (some 90 KB
// each), and StressLong, whose Write is made whole before it is written
// (some 3 octets an octet of it).
func WriteStress(w io.Writer, kind string, n int, seed int64) error {
	sw, err := newStressWriter(w)
	if err != nil {
		return err
	}
	switch kind {
	case StressSYNFlood:
		err = sw.synFlood(n, seed)
	case StressOpen:
		err = sw.open(n, seed)
	case StressChurn, StressResets:
		err = sw.churn(n, seed, kind == StressResets)
	case StressResetsSlow:
		sw.gap = stressSlowGap
		err = sw.churn(n, seed, true)
	case StressLong:
		err = sw.long(n, seed)
	default:
		return fmt.Errorf("%w: %q", ErrStressKind, kind)
	}
	if err != nil {
		return err
	}
	return sw.bw.Flush()
}

// synFlood writes n SYNs, each from its own endpoint.
func (sw *stressWriter) synFlood(n int, seed int64) error {
	r := newRand(seed, 0, streamMisc)
	for i := range n {
		c := stressConn(i)
		s := &segment{dir: I2R, seq: r.Uint32(), flags: flagSYN, mssOpt: uint16(c.MSS), dataIdx: -1}
		if err := sw.put(&c, s, 29200); err != nil {
			return err
		}
	}
	return nil
}

// open writes n connections' handshakes and MPA exchanges, then, in
// turns, the first half of a 64 KiB RDMA Write of each (FPDUs cut across
// segments), and ends the capture there.
func (sw *stressWriter) open(n int, seed int64) error {
	conns := make([]Conn, n)
	gens := make([]*connGen, n)
	for i := range conns {
		conns[i] = stressConn(i)
		g, err := startConn(&conns[i], i, seed)
		if err != nil {
			return err
		}
		if err := sw.drain(g); err != nil {
			return err
		}
		gens[i] = g
	}
	// Each connection's Write, its first half in turns of 4 segments.
	held := make([][]*segment, n)
	for i, g := range gens {
		if err := g.op(&Op{Dir: I2R, Kind: Write, Size: 64 << 10, STag: uint32(i + 1), TO: 0}); err != nil {
			return err
		}
		g.flushAll(I2R)
		held[i] = slices.Clone(g.segs[:len(g.segs)/2])
		clear(g.segs)
		clear(g.recs)
		g.segs, g.recs = g.segs[:0], g.recs[:0]
	}
	for more := true; more; {
		more = false
		for i := range gens {
			k := min(4, len(held[i]))
			for _, s := range held[i][:k] {
				if err := sw.put(gens[i].c, s, gens[i].win); err != nil {
					return err
				}
			}
			held[i] = held[i][k:]
			more = more || len(held[i]) > 0
		}
	}
	return nil
}

// churn writes n connections, StressConcurrent open at a time: each does
// its handshake and MPA exchange, 4 turns of a Send and an RDMA Write of
// up to 4 KiB, and closes with FINs (with an RST after the last turn when
// reset).
func (sw *stressWriter) churn(n int, seed int64, reset bool) error {
	const turns = 4
	ops := newRand(seed, 0, streamOps)
	type live struct {
		c    Conn
		g    *connGen
		turn int
	}
	slots := make([]*live, StressConcurrent)
	next, done := 0, 0
	start := func(k int) error {
		if next >= n {
			slots[k] = nil
			return nil
		}
		l := &live{c: stressConn(next)}
		if reset {
			l.c.Close = Close{Kind: CloseRST, By: I2R}
		}
		g, err := startConn(&l.c, next, seed)
		if err != nil {
			return err
		}
		l.g = g
		next++
		slots[k] = l
		return sw.drain(g)
	}
	for k := range slots {
		if err := start(k); err != nil {
			return err
		}
	}
	for done < n {
		for k, l := range slots {
			if l == nil {
				continue
			}
			g := l.g
			stag := uint32(l.turn + 1)
			for _, op := range []Op{
				{Dir: I2R, Kind: Send, Size: ops.IntN(4 << 10)},
				{Dir: I2R, Kind: Write, Size: ops.IntN(4 << 10), STag: stag, TO: uint64(ops.Uint32())},
			} {
				if err := g.op(&op); err != nil {
					return err
				}
			}
			g.flushAll(I2R)
			if l.turn++; l.turn == turns {
				g.finish()
			}
			if err := sw.drain(g); err != nil {
				return err
			}
			if l.turn == turns {
				done++
				if err := start(k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// long writes one connection sending an RDMA Write of n MiB, then closing.
func (sw *stressWriter) long(n int, seed int64) error {
	c := stressConn(0)
	g, err := startConn(&c, 0, seed)
	if err != nil {
		return err
	}
	if err := g.op(&Op{Dir: I2R, Kind: Write, Size: n << 20, STag: 1}); err != nil {
		return err
	}
	g.finish()
	return sw.drain(g)
}

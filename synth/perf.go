package synth

import (
	"bufio"
	"io"
	"math/rand/v2"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
)

// PerfConns is the number of connections of the performance workload.
const PerfConns = 8

// perfConn is connection i of the performance workload: MPA rev 2, CRC on,
// markers in both directions on odd connections, MSS 1460.
func perfConn(i int) Conn {
	c := conn4(uint16(41000 + i))
	m := i%2 == 1
	c.MPA = &MPAParams{
		Request: MPAFrame{Rev: 2, C: true, M: m, Enhanced: &mpa.Enhanced{IRD: 16, ORD: 16}},
		Reply:   MPAFrame{Rev: 2, C: true, M: m, Enhanced: &mpa.Enhanced{IRD: 16, ORD: 16}},
	}
	c.MSS = 1460
	return c
}

// WritePerf streams the performance workload of issue 6 to w as a pcap file:
// PerfConns connections, markers in half of them, CRC on, message sizes from
// 0 octets to 256 KiB, MSS 1460. Connections take turns in batches of
// operations, so their packets interleave. It stops at the first round after
// the file reaches targetBytes; memory does not grow with targetBytes and
// the output depends only on targetBytes and seed. No ground truth is
// written (WriteLarge has it for correctness tests).
func WritePerf(w io.Writer, targetBytes int64, seed int64) error {
	return writeStreams(w, targetBytes, seed, PerfConns, perfConn, largeOpsPerBatch/4, func(ops *rand.Rand, stag *uint32) Op {
		op := largeOp(ops, stag)
		if op.Kind == Write && ops.IntN(8) == 0 {
			op.Size = ops.IntN(256<<10 + 1) // up to 256 KiB
		}
		return op
	})
}

// SmallConns is the number of connections of the small-message workload.
const SmallConns = 4

// WriteSmall streams a workload of small messages to w as a pcap file, as
// message-rate benchmarks (ib_send_bw and ib_write_bw with -s 64) make:
// SmallConns connections (MPA rev 2, CRC on, markers in both directions on
// odd connections, MSS 1460), each sending Sends and RDMA Writes of 0 to
// 64 octets, coalesced into full segments: some 40 FPDUs a packet, each an
// RDMA message of its own. It stops at the first round after the file
// reaches targetBytes; memory does not grow with targetBytes.
func WriteSmall(w io.Writer, targetBytes int64, seed int64) error {
	return writeStreams(w, targetBytes, seed, SmallConns, perfConn, 256, func(ops *rand.Rand, stag *uint32) Op {
		*stag++
		if ops.IntN(2) == 0 {
			return Op{Dir: I2R, Kind: Send, Size: ops.IntN(65)}
		}
		return Op{Dir: I2R, Kind: Write, Size: ops.IntN(65), STag: *stag, TO: uint64(ops.Uint32())}
	})
}

// writeStreams writes n connections (conn(i) each) that take turns in
// batches of perBatch operations from next, until the file reaches
// targetBytes.
func writeStreams(w io.Writer, targetBytes int64, seed int64, n int, conn func(int) Conn, perBatch int, next func(*rand.Rand, *uint32) Op) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	pw := pcapgo.NewWriter(bw)
	if err := pw.WriteFileHeader(defaultSnaplen, LinkEthernet.linkType()); err != nil {
		return err
	}
	conns := make([]Conn, n)
	gens := make([]*connGen, n)
	for i := range conns {
		conns[i] = conn(i)
		g, err := newConnGen(&conns[i], i, seed)
		if err != nil {
			return err
		}
		gens[i] = g
	}
	written := int64(24)
	st := newStamper(newRand(seed, 0, streamTiming), 0)
	fb := newFrameBuilder(LinkEthernet)
	var frame uint64
	drain := func(i int) error {
		g, c := gens[i], &conns[i]
		st.stamp(g.segs)
		for _, s := range g.segs {
			frame++
			s.frame, s.slot, s.cap = frame, frame, len(s.payload)
			ts := defaultStart.Add(time.Duration(s.t) * time.Microsecond)
			src, dst := c.Initiator, c.Responder
			if s.dir == R2I {
				src, dst = dst, src
			}
			data, err := fb.build(src, dst, s, g.win)
			if err != nil {
				return err
			}
			if err := pw.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(data), Length: len(data)}, data); err != nil {
				return err
			}
			written += 16 + int64(len(data))
		}
		clear(g.segs)
		clear(g.recs)
		g.segs, g.recs = g.segs[:0], g.recs[:0]
		return nil
	}
	for i, g := range gens {
		g.handshake()
		if err := g.mpaFrames(); err != nil {
			return err
		}
		g.setOrigins()
		if err := drain(i); err != nil {
			return err
		}
	}
	ops := newRand(seed, 0, streamOps)
	var stag uint32
	for written < targetBytes {
		for i, g := range gens {
			for range perBatch {
				op := next(ops, &stag)
				if err := g.op(&op); err != nil {
					return err
				}
			}
			g.flushAll(g.cur)
			g.flushAll(g.cur.Other())
			if err := drain(i); err != nil {
				return err
			}
		}
	}
	for i, g := range gens {
		g.finish()
		if err := drain(i); err != nil {
			return err
		}
	}
	return bw.Flush()
}

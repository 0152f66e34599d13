package synth

import (
	"bufio"
	"encoding/json"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
)

// streamOps is the random stream that picks the large scenario's operations.
const streamOps = 4

// largeOpsPerBatch is how many operations the large scenario generates
// before it writes them out and forgets them.
const largeOpsPerBatch = 32

// LargeConn is the connection WriteLarge streams: MPA rev 2 with Enhanced
// data, CRC on, markers initiator->responder only (so both marker-framed
// and plain directions are exercised), MSS segmentation that lets FPDUs
// span segments and share them. Its Ops are ignored: WriteLarge draws them
// from the seed.
func LargeConn() Conn {
	c := conn4(40100)
	c.MPA = &MPAParams{
		Request: MPAFrame{Rev: 2, C: true, Enhanced: &mpa.Enhanced{IRD: 16, ORD: 16}},
		Reply:   MPAFrame{Rev: 2, C: true, M: true, Enhanced: &mpa.Enhanced{IRD: 16, ORD: 16}},
	}
	return c
}

// largeOp draws one operation of the large scenario.
func largeOp(r *rand.Rand, stag *uint32) Op {
	*stag++
	d := I2R
	if r.IntN(4) == 0 {
		d = R2I
	}
	// Sizes spread over orders of magnitude: 2^k plus change.
	size := func(maxBits int) int {
		k := r.IntN(maxBits + 1)
		return (1 << k) - 1 + r.IntN(1<<k)
	}
	switch x := r.IntN(20); {
	case x < 8:
		return Op{Dir: d, Kind: Write, Size: size(16), STag: *stag, TO: uint64(r.Uint32())}
	case x < 12:
		return Op{Dir: d, Kind: Send, Size: size(12)}
	case x < 15:
		return Op{Dir: d, Kind: Read, Size: size(15), STag: *stag, TO: uint64(r.Uint32()), SrcSTag: *stag ^ 0x8000_0000, SrcTO: uint64(r.Uint32())}
	case x < 17:
		return Op{Dir: d, Kind: Send, Size: r.IntN(64)}
	case x < 18:
		return Op{Dir: d, Kind: SendInv, Size: size(8), STag: *stag}
	case x < 19:
		return Op{Dir: d, Kind: SendSE, Size: size(8)}
	}
	return Op{Dir: d, Kind: SendSEInv, Size: size(8), STag: *stag}
}

// WriteLarge streams one long iWARP connection (see LargeConn) to w as a
// pcap file and its ground truth to truth (nil discards it), stopping at
// the first batch boundary after the pcap reaches targetBytes. Memory use
// does not grow with targetBytes: operations are generated, written and
// forgotten in batches. The output depends only on targetBytes and seed.
func WriteLarge(w io.Writer, truth io.Writer, targetBytes int64, seed int64) error {
	c := LargeConn()
	g, err := newConnGen(&c, 0, seed)
	if err != nil {
		return err
	}
	if truth == nil {
		truth = io.Discard
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	tw := bufio.NewWriterSize(truth, 1<<20)
	pw := pcapgo.NewWriter(bw)
	if err := pw.WriteFileHeader(defaultSnaplen, LinkEthernet.linkType()); err != nil {
		return err
	}
	written := int64(24)
	st := newStamper(newRand(seed, 0, streamTiming), 0)
	fb := newFrameBuilder(LinkEthernet)
	var frame uint64
	tst := &tsTable{}
	var keys []keyed

	drain := func() error {
		st.stamp(g.segs)
		tst.base, tst.ts = frame, tst.ts[:0]
		for _, s := range g.segs {
			frame++
			s.frame, s.slot, s.cap = frame, frame, len(s.payload)
			ts := defaultStart.Add(time.Duration(s.t) * time.Microsecond)
			tst.ts = append(tst.ts, ts)
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
		keys = append(keys[:0], g.truth(0, tst, frame+1, false)...)
		slices.SortStableFunc(keys, func(a, b keyed) int { return a.k.compare(b.k) })
		for _, k := range keys {
			if err := writeJSONLine(tw, k.r); err != nil {
				return err
			}
		}
		clear(g.segs)
		clear(g.recs)
		g.segs, g.recs = g.segs[:0], g.recs[:0]
		return nil
	}

	g.handshake()
	if err := g.mpaFrames(); err != nil {
		return err
	}
	g.setOrigins()
	ops := newRand(seed, 0, streamOps)
	var stag uint32
	for written < targetBytes {
		for range largeOpsPerBatch {
			op := largeOp(ops, &stag)
			if err := g.op(&op); err != nil {
				return err
			}
		}
		g.flushAll(g.cur)
		g.flushAll(g.cur.Other())
		if err := drain(); err != nil {
			return err
		}
	}
	g.finish()
	if err := drain(); err != nil {
		return err
	}
	if err := writeJSONLine(tw, g.summary()); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return tw.Flush()
}

// writeJSONLine writes v as one line of JSON.
func writeJSONLine(w *bufio.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Write(b)
	return w.WriteByte('\n')
}

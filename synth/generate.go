package synth

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"
)

// Result summarises a generated capture.
type Result struct {
	// Frames is the number of frames written to the pcap.
	Frames int
	// Records is the ground truth, in file order.
	Records []Record
}

// Generate builds scenario s, writes the pcap file to pcapW and the ground
// truth (JSON Lines, one Record a line) to truthW. Either writer may be
// nil. The output depends only on s: the same scenario and seed give the
// same octets.
func Generate(s Scenario, pcapW, truthW io.Writer) (*Result, error) {
	if len(s.Conns) == 0 {
		return nil, ErrNoConns
	}
	start := s.Start
	if start.IsZero() {
		start = defaultStart
	}
	snap := s.Snaplen
	if snap <= 0 {
		snap = defaultSnaplen
	}
	conns := make([]*connGen, len(s.Conns))
	for i := range s.Conns {
		g, err := newConnGen(&s.Conns[i], i, s.Seed)
		if err != nil {
			return nil, err
		}
		if err := g.run(); err != nil {
			return nil, err
		}
		if err := g.impair(); err != nil {
			return nil, fmt.Errorf("conn %d: %w", i, err)
		}
		newStamper(newRand(s.Seed, i, streamTiming), s.Conns[i].StartDelay.Microseconds()).stamp(g.segs)
		conns[i] = g
	}

	// Merge the connections by time; ties go to the lower connection, then
	// to the earlier segment.
	type item struct {
		s    *segment
		conn int
		pos  int
	}
	var all []item
	for ci, g := range conns {
		for pi, sg := range g.segs {
			all = append(all, item{sg, ci, pi})
		}
	}
	slices.SortStableFunc(all, func(a, b item) int {
		return cmp.Or(cmp.Compare(a.s.t, b.s.t), cmp.Compare(a.conn, b.conn), cmp.Compare(a.pos, b.pos))
	})

	// Number the captured frames and give every segment its slot.
	var n uint64
	var frameTS []time.Time // index frame-1
	for _, it := range all {
		if it.s.drop == keep {
			n++
			it.s.frame = n
			frameTS = append(frameTS, start.Add(time.Duration(it.s.t)*time.Microsecond))
		}
	}
	next := n + 1
	for i := len(all) - 1; i >= 0; i-- {
		if sg := all[i].s; sg.frame != 0 {
			next = sg.frame
			sg.slot = sg.frame
		} else {
			sg.slot = next
		}
	}

	// Frames.
	var pw *pcapgo.Writer
	var bw *bufio.Writer
	if pcapW != nil {
		bw = bufio.NewWriterSize(pcapW, 1<<16)
		pw = pcapgo.NewWriter(bw)
		if err := pw.WriteFileHeader(uint32(snap), s.LinkType.linkType()); err != nil {
			return nil, err
		}
	}
	fb := newFrameBuilder(s.LinkType)
	for _, it := range all {
		sg := it.s
		if sg.frame == 0 {
			continue
		}
		c := conns[it.conn]
		src, dst := c.c.Initiator, c.c.Responder
		if sg.dir == R2I {
			src, dst = dst, src
		}
		data, err := fb.build(src, dst, sg, c.win)
		if err != nil {
			return nil, fmt.Errorf("conn %d frame %d: %w", it.conn, sg.frame, err)
		}
		capLen := min(len(data), snap)
		hdr := len(data) - len(sg.payload)
		sg.cap = max(0, min(len(sg.payload), capLen-hdr))
		if pw != nil {
			ci := gopacket.CaptureInfo{Timestamp: frameTS[sg.frame-1], CaptureLength: capLen, Length: len(data)}
			if err := pw.WritePacket(ci, data[:capLen]); err != nil {
				return nil, err
			}
		}
	}
	if bw != nil {
		if err := bw.Flush(); err != nil {
			return nil, err
		}
	}

	recs := assembleTruth(conns, &tsTable{ts: frameTS})
	if truthW != nil {
		if err := writeTruth(truthW, recs); err != nil {
			return nil, err
		}
	}
	return &Result{Frames: int(n), Records: recs}, nil
}

// writeTruth writes one JSON object a line.
func writeTruth(w io.Writer, recs []Record) error {
	bw := bufio.NewWriter(w)
	for _, r := range recs {
		if err := writeJSONLine(bw, r); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// TruthPath returns the truth file name for a pcap file name: "x.pcap"
// gives "x.truth.jsonl" (any other name just gets ".truth.jsonl" added).
func TruthPath(pcapPath string) string {
	return strings.TrimSuffix(pcapPath, ".pcap") + ".truth.jsonl"
}

// WriteFiles generates s into pcapPath and TruthPath(pcapPath).
func WriteFiles(s Scenario, pcapPath string) (*Result, error) {
	pf, err := os.Create(pcapPath)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	tf, err := os.Create(TruthPath(pcapPath))
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	res, err := Generate(s, pf, tf)
	if err != nil {
		return nil, err
	}
	if err := pf.Close(); err != nil {
		return nil, err
	}
	return res, tf.Close()
}

// endpoints returns "ip:port" of the source and destination of direction d.
func endpoints(c *Conn, d Dir) (string, string) {
	a, b := c.Initiator, c.Responder
	if d == R2I {
		a, b = b, a
	}
	return addrString(a), addrString(b)
}

func addrString(a netip.AddrPort) string { return a.String() }

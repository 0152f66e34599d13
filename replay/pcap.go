package replay

import (
	"bufio"
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// pcapSnaplen is the snapshot length WritePcap declares.
const pcapSnaplen = 262144

// WritePcap replays each script without sockets: both ends run in memory and
// the octets they exchange are written to w as a pcap file (Ethernet, IPv4
// or IPv6 and TCP, with a three-way handshake, segments of at most
// Options.MSS octets and FINs), using the recorded endpoints. Pacing moves
// the timestamps instead of sleeping: frame times follow Speed and MaxRate
// from the recording's start (timestamps advance by one microsecond per
// frame otherwise).
//
// Connections start in the capture's time as the concurrent replays start
// them (Options.Serial, Options.MaxConns): with Speed > 0 at their recorded
// start divided by Speed, with Speed 0 at once, and each after the
// connections that had ended before it started in the recording; their
// frames are interleaved in time order, as a capture of the replay would
// show them. Each connection is simulated in turn and its frames kept in a
// temporary file (os.CreateTemp's directory, removed at once: it holds
// about what w gets) until they are merged, which holds one frame and a
// small buffer per connection open at a time. Serial, and a replay of one
// connection, write the frames as they come.
func WritePcap(ctx context.Context, w io.Writer, scripts []*Script, o Options) (*Report, error) {
	o = o.withDefaults()
	if err := o.CheckScripts(scripts); err != nil {
		return nil, err
	}
	sc := newSchedule(scripts, &o)
	var sp *frameSpool
	if !o.Serial && len(scripts) > 1 {
		var err error
		if sp, err = newFrameSpool(); err != nil {
			return nil, err
		}
		defer sp.close()
	}
	bw := bufio.NewWriter(w)
	pw := pcapgo.NewWriterNanos(bw)
	if err := pw.WriteFileHeader(pcapSnaplen, layers.LinkTypeEthernet); err != nil {
		return nil, err
	}
	st := newStats(len(scripts), false)
	stop := st.report(&o)
	base := sc.base
	if base.IsZero() {
		base = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	var out packetWriter = pw
	if sp != nil {
		out = sp
	}
	reps := make([]*ConnReport, len(scripts))
	vs := &virtualStarts{sc: sc}
	last := base // Serial: each connection starts where the previous one ended
	var werr error
	for k, i := range sc.order {
		if ctx.Err() != nil {
			break
		}
		s := scripts[i]
		at, held := last, HoldNone
		if !o.Serial {
			at, held = vs.start(k, base)
		}
		clk := &virtualClock{now: at}
		st.begin(s.Conn)
		if sp != nil {
			sp.begin(at)
		}
		p := &plan{s: s, neg: o.Negotiation, init: o.Initiator, resp: o.Responder}
		ic, rc := memPipe()
		sim := newTCPSim(out, clk, s, i, o.MSS)
		ic.mss, rc.mss = sim.mss, sim.mss
		ic.tap = func(b []byte, fin bool) { sim.write(I2R, b, fin) }
		rc.tap = func(b []byte, fin bool) { sim.write(R2I, b, fin) }
		sim.handshake()
		ie := newEndpoint(I2R, p, &o, ic, clk, st, true)
		re := newEndpoint(R2I, p, &o, rc, clk, st, true)
		ie.rep.Local, ie.rep.Remote = sim.ep[I2R], sim.ep[R2I]
		re.rep.Local, re.rep.Remote = sim.ep[R2I], sim.ep[I2R]
		runPair(ctx, &o, ie, re)
		end := clk.latest()
		st.end(s.Conn)
		if sp != nil {
			sp.end()
		}
		c := connReport(s, [2]*endpoint{ie, re})
		c.Start, c.End = at.Sub(base), end.Sub(base)
		if sc.due != nil {
			c.Timed, c.Due, c.Held = true, sc.due[k], held
		}
		reps[i] = c
		if !o.Serial {
			vs.ended(k, end)
		}
		last = end
		if sim.err != nil && werr == nil {
			werr = sim.err
		}
	}
	stop()
	if sp != nil && werr == nil {
		werr = sp.merge(pw)
	}
	rep := &Report{Mode: "pcap"}
	rep.addAll(reps)
	cerr := rep.finish(ctx, st)
	// The capture's span, from the first connection's start to the last
	// frame (a connection that ends later than one after it counts).
	rep.Elapsed = 0
	for _, c := range rep.Conns {
		rep.Elapsed = max(rep.Elapsed, c.End+time.Microsecond)
	}
	rep.MaxOpen = maxOverlap(rep.Conns)
	if err := bw.Flush(); err != nil && werr == nil {
		werr = err
	}
	if werr != nil {
		return rep, werr
	}
	return rep, cerr
}

// maxOverlap returns the most connections whose spans (Start to End) meet
// at one time.
func maxOverlap(cs []*ConnReport) int {
	type event struct {
		t     time.Duration
		delta int
	}
	ev := make([]event, 0, 2*len(cs))
	for _, c := range cs {
		ev = append(ev, event{c.Start, 1}, event{c.End, -1})
	}
	// At the same time an end comes before a start: spans that only touch
	// do not overlap.
	slices.SortFunc(ev, func(a, b event) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.delta, b.delta)) })
	n, most := 0, 0
	for _, e := range ev {
		n += e.delta
		most = max(most, n)
	}
	return most
}

// packetWriter is where tcpSim writes frames: the pcap file, or the spool.
type packetWriter interface {
	WritePacket(ci gopacket.CaptureInfo, data []byte) error
}

// frameSpool holds the frames of the connections WritePcap simulated, one
// connection after the other, in an unlinked temporary file, until merge
// writes them in time order.
type frameSpool struct {
	f     *os.File
	bw    *bufio.Writer
	off   int64
	conns []spoolConn // in start order
	hdr   [spoolHdr]byte
}

// spoolConn is one connection's frames in the spool.
type spoolConn struct {
	start    time.Time
	off, len int64
}

// spoolHdr is a spooled frame's header: its time (Unix nanoseconds) and
// length.
const spoolHdr = 12

func newFrameSpool() (*frameSpool, error) {
	f, err := os.CreateTemp("", "iwarpreplay-*.frames")
	if err != nil {
		return nil, fmt.Errorf("replay: a temporary file for the frames of concurrent connections: %w", err)
	}
	os.Remove(f.Name()) // gone once closed, whatever happens
	return &frameSpool{f: f, bw: bufio.NewWriterSize(f, 256<<10)}, nil
}

func (s *frameSpool) close() { s.f.Close() }

// begin starts the frames of the next connection (in start order).
func (s *frameSpool) begin(start time.Time) {
	s.conns = append(s.conns, spoolConn{start: start, off: s.off})
}

func (s *frameSpool) end() {
	c := &s.conns[len(s.conns)-1]
	c.len = s.off - c.off
}

// WritePacket spools a frame of the current connection.
func (s *frameSpool) WritePacket(ci gopacket.CaptureInfo, data []byte) error {
	binary.BigEndian.PutUint64(s.hdr[:8], uint64(ci.Timestamp.UnixNano()))
	binary.BigEndian.PutUint32(s.hdr[8:], uint32(len(data)))
	if _, err := s.bw.Write(s.hdr[:]); err != nil {
		return err
	}
	if _, err := s.bw.Write(data); err != nil {
		return err
	}
	s.off += int64(spoolHdr + len(data))
	return nil
}

// spoolCursor reads one connection's spooled frames.
type spoolCursor struct {
	r    *bufio.Reader
	idx  int // the connection's place in start order: ties go to the earlier
	ts   int64
	data []byte
}

// next reads the next frame; false at the end.
func (c *spoolCursor) next() (bool, error) {
	var h [spoolHdr]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, err
	}
	c.ts = int64(binary.BigEndian.Uint64(h[:8]))
	n := int(binary.BigEndian.Uint32(h[8:]))
	if cap(c.data) < n {
		c.data = make([]byte, n)
	}
	c.data = c.data[:n]
	_, err := io.ReadFull(c.r, c.data)
	return true, err
}

// merge writes every spooled frame to pw in time order (ties: the
// connection that started first, then the order written). A connection's
// frames are read from when the merge reaches its start, so only the
// connections that overlap hold a cursor at a time.
func (s *frameSpool) merge(pw *pcapgo.Writer) error {
	if err := s.bw.Flush(); err != nil {
		return err
	}
	var h cursorHeap
	next := 0
	for {
		for next < len(s.conns) && (len(h) == 0 || s.conns[next].start.UnixNano() <= h[0].ts) {
			sc := s.conns[next]
			c := &spoolCursor{r: bufio.NewReaderSize(io.NewSectionReader(s.f, sc.off, sc.len), 32<<10), idx: next}
			next++
			ok, err := c.next()
			if err != nil {
				return err
			}
			if ok {
				heap.Push(&h, c)
			}
		}
		if len(h) == 0 {
			return nil
		}
		c := h[0]
		ts := time.Unix(0, c.ts).UTC()
		if err := pw.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(c.data), Length: len(c.data)}, c.data); err != nil {
			return err
		}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
}

// cursorHeap orders cursors by their next frame's time, then start order.
type cursorHeap []*spoolCursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	return h[i].ts < h[j].ts || (h[i].ts == h[j].ts && h[i].idx < h[j].idx)
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*spoolCursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// tcpSim turns the octets each side writes into the TCP segments a capture
// of the connection would show.
type tcpSim struct {
	mu  sync.Mutex
	pw  packetWriter
	clk clock
	ep  [2]netip.AddrPort
	seq [2]uint32 // next sequence number of each side
	mss int
	err error

	buf  gopacket.SerializeBuffer
	opts gopacket.SerializeOptions
	eth  layers.Ethernet
	ip4  layers.IPv4
	ip6  layers.IPv6
	tcp  layers.TCP
	ipid uint16
}

func newTCPSim(pw packetWriter, clk clock, s *Script, idx, mss int) *tcpSim {
	t := &tcpSim{pw: pw, clk: clk, mss: mss, buf: gopacket.NewSerializeBuffer(),
		opts: gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}}
	t.ep = [2]netip.AddrPort{s.Initiator, s.Responder}
	if !t.ep[0].IsValid() || !t.ep[1].IsValid() || t.ep[0].Addr().Is4() != t.ep[1].Addr().Is4() || t.ep[0] == t.ep[1] {
		t.ep = [2]netip.AddrPort{
			netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(40000+idx%20000)),
			netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 7174),
		}
	}
	// Fixed initial sequence numbers, different per connection.
	t.seq = [2]uint32{0x10000000 + uint32(idx)*0x10001, 0x80000000 + uint32(idx)*0x10001}
	return t
}

const (
	tcpSYN = 1 << iota
	tcpACK
	tcpPSH
	tcpFIN
)

// handshake writes SYN, SYN-ACK and ACK.
func (t *tcpSim) handshake() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.frame(I2R, tcpSYN, nil)
	t.seq[I2R]++
	t.frame(R2I, tcpSYN|tcpACK, nil)
	t.seq[R2I]++
	t.frame(I2R, tcpACK, nil)
}

// write records what side d wrote (or its FIN) as segments, each
// acknowledging everything the other side wrote so far.
func (t *tcpSim) write(d Dir, b []byte, fin bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(b) > 0 {
		n := min(len(b), t.mss)
		fl := tcpACK
		if n == len(b) {
			fl |= tcpPSH
		}
		t.frame(d, fl, b[:n])
		t.seq[d] += uint32(n)
		b = b[n:]
	}
	if fin {
		t.frame(d, tcpFIN|tcpACK, nil)
		t.seq[d]++
		t.frame(d.Other(), tcpACK, nil)
	}
}

// frame serialises and writes one segment of side d; t.mu is held.
func (t *tcpSim) frame(d Dir, flags int, payload []byte) {
	if t.err != nil {
		return
	}
	src, dst := t.ep[d], t.ep[d.Other()]
	t.tcp = layers.TCP{
		SrcPort: layers.TCPPort(src.Port()),
		DstPort: layers.TCPPort(dst.Port()),
		Seq:     t.seq[d],
		SYN:     flags&tcpSYN != 0,
		ACK:     flags&tcpACK != 0,
		PSH:     flags&tcpPSH != 0,
		FIN:     flags&tcpFIN != 0,
		Window:  65535,
	}
	if t.tcp.ACK {
		t.tcp.Ack = t.seq[d.Other()]
	}
	if t.tcp.SYN {
		t.tcp.Options = []layers.TCPOption{{OptionType: layers.TCPOptionKindMSS, OptionLength: 4,
			OptionData: binary.BigEndian.AppendUint16(nil, uint16(t.mss))}}
	}
	t.ipid++
	var ls []gopacket.SerializableLayer
	t.eth = layers.Ethernet{SrcMAC: macFor(src.Addr()), DstMAC: macFor(dst.Addr())}
	if src.Addr().Is4() {
		t.eth.EthernetType = layers.EthernetTypeIPv4
		t.ip4 = layers.IPv4{Version: 4, IHL: 5, Id: t.ipid, Flags: layers.IPv4DontFragment, TTL: 64,
			Protocol: layers.IPProtocolTCP, SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
		t.tcp.SetNetworkLayerForChecksum(&t.ip4)
		ls = append(ls, &t.eth, &t.ip4)
	} else {
		t.eth.EthernetType = layers.EthernetTypeIPv6
		t.ip6 = layers.IPv6{Version: 6, NextHeader: layers.IPProtocolTCP, HopLimit: 64,
			SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
		t.tcp.SetNetworkLayerForChecksum(&t.ip6)
		ls = append(ls, &t.eth, &t.ip6)
	}
	pl := gopacket.Payload(payload)
	ls = append(ls, &t.tcp, &pl)
	if err := gopacket.SerializeLayers(t.buf, t.opts, ls...); err != nil {
		t.err = err
		return
	}
	data := t.buf.Bytes()
	ci := gopacket.CaptureInfo{Timestamp: t.clk.Now(), CaptureLength: len(data), Length: len(data)}
	t.err = t.pw.WritePacket(ci, data)
}

// macFor derives a locally administered MAC address from an IP address.
func macFor(a netip.Addr) net.HardwareAddr {
	b := a.As16()
	return net.HardwareAddr{0x02, 0x00, b[12], b[13], b[14], b[15]}
}

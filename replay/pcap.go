package replay

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
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
func WritePcap(ctx context.Context, w io.Writer, scripts []*Script, o Options) (*Report, error) {
	o = o.withDefaults()
	if err := o.CheckScripts(scripts); err != nil {
		return nil, err
	}
	bw := bufio.NewWriter(w)
	pw := pcapgo.NewWriterNanos(bw)
	if err := pw.WriteFileHeader(pcapSnaplen, layers.LinkTypeEthernet); err != nil {
		return nil, err
	}
	st := &stats{start: time.Now()}
	stop := st.report(&o)
	rep := &Report{Mode: "pcap"}
	clk := &virtualClock{}
	if len(scripts) > 0 && !scripts[0].Start.IsZero() {
		clk.now = scripts[0].Start
	} else {
		clk.now = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	first := clk.now
	var werr error
	for i, s := range scripts {
		if err := ctx.Err(); err != nil {
			break
		}
		st.conn.Store(int64(s.Conn))
		p := &plan{s: s, neg: o.Negotiation, init: o.Initiator, resp: o.Responder}
		ic, rc := memPipe()
		sim := newTCPSim(pw, clk, s, i, o.MSS)
		ic.mss, rc.mss = sim.mss, sim.mss
		ic.tap = func(b []byte, fin bool) { sim.write(I2R, b, fin) }
		rc.tap = func(b []byte, fin bool) { sim.write(R2I, b, fin) }
		sim.handshake()
		ie := newEndpoint(I2R, p, &o, ic, clk, st, true)
		re := newEndpoint(R2I, p, &o, rc, clk, st, true)
		ie.rep.Local, ie.rep.Remote = sim.ep[I2R], sim.ep[R2I]
		re.rep.Local, re.rep.Remote = sim.ep[R2I], sim.ep[I2R]
		runPair(ctx, &o, ie, re)
		rep.add(connReport(s, [2]*endpoint{ie, re}))
		if sim.err != nil && werr == nil {
			werr = sim.err
		}
	}
	stop()
	cerr := rep.finish(ctx, st)
	rep.Elapsed = clk.Now().Sub(first)
	if err := bw.Flush(); err != nil && werr == nil {
		werr = err
	}
	if werr != nil {
		return rep, werr
	}
	return rep, cerr
}

// tcpSim turns the octets each side writes into the TCP segments a capture
// of the connection would show.
type tcpSim struct {
	mu  sync.Mutex
	pw  *pcapgo.Writer
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

func newTCPSim(pw *pcapgo.Writer, clk clock, s *Script, idx, mss int) *tcpSim {
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

// Package live captures packets from network interfaces, as tcpdump -i
// does, and hands them on as [capture.Packet]s decoded by the same code that
// reads capture files.
//
// Design goals:
//
//   - Pure Go by default (CGO_ENABLED=0): on Linux, an AF_PACKET socket with
//     a TPACKET_V3 memory-mapped ring (github.com/gopacket/gopacket/afpacket).
//     The libpcap build tag swaps in a libpcap backend
//     (github.com/gopacket/gopacket/pcap) instead, with libpcap's full filter
//     syntax and its other platforms; the default build does not link it.
//   - tcpdump's behaviour: "any" captures on every interface in Linux cooked
//     mode (DLT_LINUX_SLL); packets are cut to the snap length; the kernel's
//     statistics are those tcpdump prints (received by filter, dropped by
//     kernel); a loopback interface shows each packet once, not once leaving
//     and once arriving; VLAN tags the kernel stripped are put back.
//   - Filters run in the kernel. A tcpdump expression is compiled by package
//     bpf and attached to the socket (SO_ATTACH_FILTER); for "any" it is
//     rewritten for the cooked socket's view as libpcap does. A program that
//     cannot run in the kernel (vlan, whose tags Linux strips before socket
//     filters run) runs in user space on the tagged packet instead.
//   - Clean ends. An interface that is deleted ends the capture like the
//     end of a file ([Source.Next] returns io.EOF and [Handle.Err] says why:
//     an error that is [ErrInterfaceGone]); one that goes down and comes
//     back up does not, as with libpcap 1.10; [Handle.Interrupt] ends it
//     from another goroutine within a poll interval.
//
// Zero-copy stops at the ring: each packet is framed as a pcap record and
// decoded by [capture.NewSource], so live and file captures decode alike.
package live

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/bpf"
	"github.com/iwarpkit/iwarpkit/capture"
)

// Defaults, as tcpdump's.
const (
	// DefaultSnaplen is tcpdump's default snapshot length.
	DefaultSnaplen = 262144
	// DefaultBufferSize is libpcap's default capture buffer size (2 MiB).
	DefaultBufferSize = 2 << 20
	// AnyInterface captures on all interfaces, in cooked mode.
	AnyInterface = "any"
)

// Errors for Open and Handle.Err.
var (
	// ErrNoInterface: the interface does not exist.
	ErrNoInterface = errors.New("live: no such device")
	// ErrPermission: the process may not capture (it needs CAP_NET_RAW).
	ErrPermission = errors.New("live: you don't have permission to capture on that device")
	// ErrNotUp: the interface is down (not IFF_UP): nothing would be
	// captured on it. libpcap's text (PCAP_ERROR_IFACE_NOT_UP).
	ErrNotUp = errors.New("live: that device is not up")
	// ErrInterfaceGone: the interface was deleted during the capture
	// (libpcap: "The interface disappeared"). Handle.Err returns it
	// wrapped in a *CaptureError that names the interface. An interface
	// that merely goes down does not end the capture.
	ErrInterfaceGone = errors.New("live: the interface disappeared")
	// ErrNotSupported: live capture is not available in this build on this
	// platform (build with -tags libpcap).
	ErrNotSupported = errors.New("live: live capture is not supported on this platform in the pure-Go build (build with -tags libpcap)")
)

// OpenError reports why an interface could not be opened.
type OpenError struct {
	Interface string
	Op        string // e.g. "socket", "bind", "attach filter"
	Err       error  // ErrNoInterface, ErrPermission or a system error
	Detail    error  // the system error, when Err is a sentinel
}

// Error returns e.g. "eth9: no such device (bind: no such device)".
func (e *OpenError) Error() string {
	s := e.Interface + ": " + trimPrefix(e.Err.Error())
	if e.Detail != nil {
		s += " (" + e.Op + ": " + e.Detail.Error() + ")"
	} else if e.Op != "" {
		s = e.Interface + ": " + e.Op + ": " + trimPrefix(e.Err.Error())
	}
	return s
}

// Unwrap returns the cause.
func (e *OpenError) Unwrap() error { return e.Err }

func trimPrefix(s string) string {
	if len(s) > 6 && s[:6] == "live: " {
		return s[6:]
	}
	return s
}

// CaptureError reports why a capture ended by itself ([Handle.Err]).
type CaptureError struct {
	Interface string
	Err       error // e.g. ErrInterfaceGone
}

// Error returns e.g. "vc: the interface disappeared".
func (e *CaptureError) Error() string { return e.Interface + ": " + trimPrefix(e.Err.Error()) }

// Unwrap returns the cause.
func (e *CaptureError) Unwrap() error { return e.Err }

// Options configure a live capture.
type Options struct {
	// Interface is the interface name, or "any".
	Interface string
	// Snaplen cuts packets to this many octets (link header included); 0
	// means DefaultSnaplen.
	Snaplen int
	// BufferSize is the size of the kernel ring in octets (tcpdump -B is in
	// KiB); 0 means DefaultBufferSize.
	BufferSize int
	// NoPromiscuous leaves the interface out of promiscuous mode (tcpdump
	// -p). "any" is never put in promiscuous mode.
	NoPromiscuous bool
	// Filter is a compiled filter program for the handle's link type (see
	// Handle.LinkType and Compile); nil captures everything.
	Filter *bpf.Program
	// FilterExpr is a tcpdump expression, compiled for the interface's link
	// type when Filter is nil.
	FilterExpr string
}

// Stats are the capture statistics tcpdump prints at exit.
type Stats struct {
	// Received counts the packets the kernel filter accepted ("received
	// by filter"), including those dropped.
	Received uint64
	// Dropped counts packets the kernel dropped for lack of room in the
	// ring ("dropped by kernel").
	Dropped uint64
}

// Interface is a capture device, as tcpdump -D lists them.
type Interface struct {
	Index       int    // 1-based position in the list (tcpdump -i N)
	Name        string // e.g. "eth0", "any"
	Description string // e.g. "Pseudo-device that captures on all interfaces"
	Up          bool
	Running     bool
	Loopback    bool
}

// Handle is an open live capture. ReadPacket must not be called
// concurrently; Interrupt and Stats may be called from other goroutines.
type Handle struct {
	b        *backend
	name     string
	lt       layers.LinkType
	snaplen  int
	user     *bpf.Matcher // filter run in user space, or nil
	early    *bpf.Matcher // filter for packets the ring took before it was attached
	attached time.Time
	stopped  atomic.Bool
	err      error
	idle     func()
	lastIdle time.Time
	sllBuf   []byte
	cooked   bool
}

// Name returns the interface name.
func (h *Handle) Name() string { return h.name }

// LinkType returns the link-layer header type of the packets ReadPacket
// returns (DLT_LINUX_SLL for "any").
func (h *Handle) LinkType() layers.LinkType { return h.lt }

// Snaplen returns the snapshot length.
func (h *Handle) Snaplen() int { return h.snaplen }

// Err returns why the capture ended, when it ended by itself (nil after
// Interrupt or Close): for a deleted interface, a *CaptureError for which
// errors.Is(err, ErrInterfaceGone) holds.
func (h *Handle) Err() error { return h.err }

// Interrupt makes ReadPacket return io.EOF within a poll interval (100 ms);
// it may be called from any goroutine.
func (h *Handle) Interrupt() { h.stopped.Store(true) }

// SetIdle sets a function ReadPacket calls when no packet has arrived for
// a moment, and at least every 250 ms while packets flow: the place to
// flush buffered output.
func (h *Handle) SetIdle(f func()) { h.idle = f }

// Stats returns the kernel's counters since the handle was opened.
func (h *Handle) Stats() (Stats, error) { return h.b.stats() }

// Close releases the socket and its ring.
func (h *Handle) Close() error { return h.b.close() }

// FilterInUserSpace reports whether the filter runs in user space rather
// than in the kernel.
func (h *Handle) FilterInUserSpace() bool { return h.user != nil }

// errTimeout is what a backend's read returns when nothing arrived within
// the poll interval.
var errTimeout = errors.New("live: poll timeout")

// ReadPacket returns the next packet: its octets (valid until the next
// call) and capture info. It returns io.EOF when the capture ends:
// Interrupt was called, or the interface was deleted (Err says so).
func (h *Handle) ReadPacket() ([]byte, gopacket.CaptureInfo, error) {
	for {
		if h.stopped.Load() {
			return nil, gopacket.CaptureInfo{}, io.EOF
		}
		data, ci, err := h.b.read()
		if err == errTimeout {
			h.callIdle(time.Now())
			continue
		}
		if err != nil {
			if h.err == nil {
				if errors.Is(err, ErrInterfaceGone) {
					err = &CaptureError{Interface: h.name, Err: err}
				}
				h.err = err
			}
			return nil, ci, io.EOF
		}
		if h.cooked {
			data = h.toSLL(data, &ci)
		}
		if h.user != nil {
			n := h.user.Run(data)
			if n == 0 {
				continue
			}
			if n < len(data) {
				data = data[:n]
			}
		} else if h.early != nil {
			if ci.Timestamp.Before(h.attached) {
				if !h.early.Match(data) {
					continue
				}
			} else {
				h.early = nil
			}
		}
		if len(data) > h.snaplen {
			data = data[:h.snaplen]
		}
		ci.CaptureLength = len(data)
		if ci.Length < len(data) {
			ci.Length = len(data)
		}
		if h.idle != nil && ci.Timestamp.Sub(h.lastIdle) > 250*time.Millisecond {
			h.callIdle(ci.Timestamp)
		}
		return data, ci, nil
	}
}

func (h *Handle) callIdle(now time.Time) {
	h.lastIdle = now
	if h.idle != nil {
		h.idle()
	}
}

// ARPHRD and packet types for the cooked header (linux/if_arp.h,
// linux/if_packet.h).
const (
	sllHeaderLen = 16
)

// toSLL prefixes a packet from a cooked (SOCK_DGRAM) socket with the Linux
// cooked header (DLT_LINUX_SLL) built from its link-level address.
func (h *Handle) toSLL(data []byte, ci *gopacket.CaptureInfo) []byte {
	ll, ok := h.b.linkAddr(data, ci)
	need := sllHeaderLen + len(data)
	if cap(h.sllBuf) < need {
		h.sllBuf = make([]byte, need)
	}
	b := h.sllBuf[:need]
	if !ok {
		// The socket address was not found: guess the protocol from the
		// IP version, as the header must say something.
		ll = linkAddr{}
		if len(data) > 0 {
			switch data[0] >> 4 {
			case 4:
				ll.protocol = 0x0800
			case 6:
				ll.protocol = 0x86dd
			}
		}
	}
	binary.BigEndian.PutUint16(b[0:], uint16(ll.pktType))
	binary.BigEndian.PutUint16(b[2:], ll.haType)
	binary.BigEndian.PutUint16(b[4:], uint16(ll.haLen))
	clear(b[6:14])
	copy(b[6:14], ll.addr[:min(int(ll.haLen), 8)])
	binary.BigEndian.PutUint16(b[14:], ll.protocol)
	copy(b[sllHeaderLen:], data)
	ci.Length += sllHeaderLen
	return b
}

// linkAddr is what a cooked socket says about a packet (struct
// sockaddr_ll).
type linkAddr struct {
	protocol uint16 // ethertype, host order
	haType   uint16
	pktType  uint8
	haLen    uint8
	addr     [8]byte
}

// Open opens a live capture on opts.Interface and attaches its filter.
func Open(opts Options) (*Handle, error) {
	if opts.Snaplen <= 0 || opts.Snaplen > DefaultSnaplen {
		opts.Snaplen = DefaultSnaplen
	}
	if opts.BufferSize <= 0 {
		opts.BufferSize = DefaultBufferSize
	}
	return openHandle(opts)
}

// Source reads a live capture as a [capture.Packet] stream: each packet is
// decoded by capture's decoder, exactly as packets read from a file are.
type Source struct {
	h      *Handle
	cancel context.CancelFunc
	src    *capture.Source
	rd     recordReader
	count  uint64
}

// NewSource decodes the packets of h. When ctx is done, Next returns
// io.EOF (within a poll interval). Close closes h too.
func NewSource(ctx context.Context, h *Handle) (*Source, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Source{h: h, cancel: cancel}
	s.rd.h = h
	s.rd.header = pcapHeader(h.LinkType(), h.Snaplen())
	go func() {
		<-ctx.Done()
		h.Interrupt()
	}()
	src, err := capture.NewSource(&s.rd, h.Name())
	if err != nil {
		cancel()
		return nil, err
	}
	s.src = src
	return s, nil
}

// Handle returns the handle the source reads.
func (s *Source) Handle() *Handle { return s.h }

// LinkType returns the link type of the packets.
func (s *Source) LinkType() layers.LinkType { return s.h.LinkType() }

// Captured returns the number of packets Next has returned.
func (s *Source) Captured() uint64 { return s.count }

// Next returns the next packet, decoded; io.EOF when the capture ends.
// The packet's Data and Payload are valid until the next call.
func (s *Source) Next() (capture.Packet, error) {
	p, err := s.src.Next()
	if err != nil {
		if s.rd.err != nil && s.rd.err != io.EOF {
			return p, s.rd.err
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
			return p, io.EOF
		}
		return p, err
	}
	s.count++
	return p, nil
}

// Close stops the capture and closes the handle.
func (s *Source) Close() error {
	s.cancel()
	s.h.Interrupt()
	_ = s.src.Close()
	return s.h.Close()
}

// recordReader presents the packets of a handle as a pcap stream
// (nanosecond timestamps, little-endian) for capture.NewSource. Each Read
// returns whole records when they fit, so that the reader never blocks
// waiting for more octets of a record.
type recordReader struct {
	h       *Handle
	header  []byte
	pending []byte
	buf     []byte
	err     error
}

func pcapHeader(lt layers.LinkType, snaplen int) []byte {
	b := make([]byte, 24)
	binary.LittleEndian.PutUint32(b[0:], 0xa1b23c4d)
	binary.LittleEndian.PutUint16(b[4:], 2)
	binary.LittleEndian.PutUint16(b[6:], 4)
	binary.LittleEndian.PutUint32(b[16:], uint32(snaplen))
	binary.LittleEndian.PutUint32(b[20:], uint32(lt))
	return b
}

// Read returns the file header, then one record (or the rest of one) a call.
func (r *recordReader) Read(p []byte) (int, error) {
	if len(r.header) > 0 {
		n := copy(p, r.header)
		r.header = r.header[n:]
		return n, nil
	}
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		return n, nil
	}
	if r.err != nil {
		return 0, io.EOF
	}
	data, ci, err := r.h.ReadPacket()
	if err != nil {
		r.err = err
		return 0, io.EOF
	}
	var hdr [16]byte
	ts := ci.Timestamp
	binary.LittleEndian.PutUint32(hdr[0:], uint32(ts.Unix()))
	binary.LittleEndian.PutUint32(hdr[4:], uint32(ts.Nanosecond()))
	binary.LittleEndian.PutUint32(hdr[8:], uint32(len(data)))
	binary.LittleEndian.PutUint32(hdr[12:], uint32(ci.Length))
	if len(p) >= 16+len(data) {
		copy(p, hdr[:])
		copy(p[16:], data)
		return 16 + len(data), nil
	}
	r.buf = append(append(r.buf[:0], hdr[:]...), data...)
	n := copy(p, r.buf)
	r.pending = r.buf[n:]
	return n, nil
}

// Compile compiles a tcpdump filter expression for link type lt with the
// compiler of this build: package bpf's pure-Go subset, or libpcap's full
// syntax with the libpcap build tag.
func Compile(expr string, lt layers.LinkType, snaplen int) (*bpf.Program, error) {
	return compileFilter(expr, lt, snaplen)
}

//go:build linux && !libpcap

package live

import (
	"errors"
	"fmt"
	"net"
	"reflect"
	"syscall"
	"time"
	"unsafe"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/afpacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/sys/unix"

	"github.com/iwarpkit/iwarpkit/bpf"
)

// Ring geometry. TPACKET_V3 packs packets into blocks that the kernel
// hands over when full or after blockTimeout; a block must hold the
// largest packet (64 KiB on loopback, or with GRO), so blocks are 128 KiB
// unless the snap length is small.
const (
	blockTimeout = 50 * time.Millisecond
	pollTimeout  = 100 * time.Millisecond
	minBlocks    = 4
)

// ARPHRD_* values (linux/if_arp.h) that decide the link type.
const (
	arphrdEther    = 1
	arphrdLoopback = 772
	arphrdNone     = 0xfffe
)

// backend is the AF_PACKET capture.
type backend struct {
	tp      *afpacket.TPacket
	dgram   bool
	ifindex int     // the interface bound to; 0 for "any"
	macOff  uintptr // offset of the data from the tpacket3_hdr on a SOCK_DGRAM socket
	fd      int     // the socket, for SO_ERROR and getsockname; -1 if unknown
	closed  bool
}

// tpacketFD returns the socket of tp, which afpacket does not export, or
// -1. It is read by name, so that a change of afpacket's struct shows as -1
// (handled) rather than as a wrong descriptor.
func tpacketFD(tp *afpacket.TPacket) int {
	v := reflect.ValueOf(tp).Elem().FieldByName("fd")
	if !v.IsValid() || !v.CanInt() {
		return -1
	}
	return int(v.Int())
}

func compileFilter(expr string, lt layers.LinkType, snaplen int) (*bpf.Program, error) {
	return bpf.Compile(expr, lt, snaplen)
}

// hwType returns the ARPHRD type of an interface (SIOCGIFHWADDR), which
// works in any network namespace, unlike /sys/class/net.
func hwType(name string) (uint16, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return 0, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFHWADDR, ifr); err != nil {
		return 0, err
	}
	return ifr.Uint16(), nil // sa_family of ifr_hwaddr
}

func classify(op string, name string, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case unix.EPERM, unix.EACCES:
			return &OpenError{Interface: name, Op: op, Err: ErrPermission, Detail: errno}
		case unix.ENODEV, unix.ENXIO:
			return &OpenError{Interface: name, Op: op, Err: ErrNoInterface, Detail: errno}
		}
	}
	return &OpenError{Interface: name, Op: op, Err: err}
}

func openHandle(opts Options) (*Handle, error) {
	name := opts.Interface
	isAny := name == AnyInterface || name == ""
	if isAny {
		name = AnyInterface
	}
	h := &Handle{name: name, snaplen: opts.Snaplen, cooked: isAny}

	// Link type, MTU and interface index.
	mtu, ifindex := 0, 0
	if isAny {
		h.lt = layers.LinkTypeLinuxSLL
		ifs, err := net.Interfaces()
		if err != nil {
			return nil, classify("list interfaces", name, err)
		}
		for _, ifc := range ifs {
			mtu = max(mtu, ifc.MTU)
		}
	} else {
		ifc, err := net.InterfaceByName(name)
		if err != nil {
			return nil, &OpenError{Interface: name, Op: "", Err: ErrNoInterface}
		}
		if ifc.Flags&net.FlagUp == 0 {
			// As libpcap and tcpdump: a capture on a down interface
			// would wait for packets that cannot come.
			return nil, &OpenError{Interface: name, Op: "", Err: ErrNotUp}
		}
		ifindex, mtu = ifc.Index, ifc.MTU
		t, err := hwType(name)
		if err != nil {
			return nil, classify("SIOCGIFHWADDR", name, err)
		}
		switch t {
		case arphrdEther, arphrdLoopback:
			h.lt = layers.LinkTypeEthernet
		case arphrdNone:
			h.lt = layers.LinkTypeRaw
		default:
			// Other hardware types are captured in cooked mode, as
			// libpcap does for types it has no DLT for.
			h.lt = layers.LinkTypeLinuxSLL
			h.cooked = true
		}
	}

	// The filter, compiled for the link type the user sees.
	prog := opts.Filter
	if prog == nil && opts.FilterExpr != "" {
		p, err := compileFilter(opts.FilterExpr, h.lt, h.snaplen)
		if err != nil {
			return nil, err
		}
		prog = p
	}
	if prog == nil {
		prog = bpf.Accept(h.snaplen)
	}

	// Ring: blocks large enough for the largest packet.
	frame := min(h.snaplen, max(mtu, 65535)+64) + 128
	block := 128 << 10
	for block < frame {
		block <<= 1
	}
	if frame < 16<<10 {
		block = 64 << 10
	}
	blocks := max(opts.BufferSize/block, minBlocks)
	sockType := afpacket.SocketRaw
	if h.cooked {
		sockType = afpacket.SocketDgram
	}
	topts := []any{
		afpacket.OptTPacketVersion(afpacket.TPacketVersion3),
		afpacket.OptSocketType(sockType),
		afpacket.OptBlockSize(block),
		afpacket.OptFrameSize(block),
		afpacket.OptNumBlocks(blocks),
		afpacket.OptBlockTimeout(blockTimeout),
		afpacket.OptPollTimeout(pollTimeout),
		afpacket.OptAddVLANHeader(!h.cooked),
	}
	if !isAny {
		topts = append(topts, afpacket.OptInterface(name))
	}
	tp, err := afpacket.NewTPacket(topts...)
	if err != nil {
		if errors.Is(err, unix.ENODEV) || isNoSuchInterface(err) {
			return nil, &OpenError{Interface: name, Op: "bind", Err: ErrNoInterface, Detail: err}
		}
		return nil, classify("socket", name, err)
	}
	b := &backend{tp: tp, dgram: h.cooked, ifindex: ifindex, fd: tpacketFD(tp)}
	// TPACKET3_HDRLEN = TPACKET_ALIGN(sizeof(struct tpacket3_hdr)) +
	// sizeof(struct sockaddr_ll) = 48 + 20; on a SOCK_DGRAM socket the data
	// starts at TPACKET_ALIGN(68) + 16 = 96 (net/packet/af_packet.c).
	b.macOff = 96
	h.b = b

	// Attach the filter: in the kernel when it can run there, else in
	// user space behind a filter that only cuts to the snap length.
	if err := h.attach(prog); err != nil {
		tp.Close()
		return nil, err
	}
	if !isAny && !opts.NoPromiscuous {
		if err := tp.SetPromiscuous(true); err != nil {
			tp.Close()
			return nil, classify("promiscuous mode", name, err)
		}
	}
	return h, nil
}

func isNoSuchInterface(err error) bool {
	var ne *net.OpError
	if errors.As(err, &ne) {
		return true
	}
	s := err.Error()
	return len(s) >= 16 && s[:16] == "InterfaceByName:"
}

// attach installs prog as the socket filter, adapted to what the kernel
// sees, or runs it in user space.
func (h *Handle) attach(prog *bpf.Program) error {
	raw, err := prog.Raw()
	if err != nil {
		return &OpenError{Interface: h.name, Op: "filter", Err: err}
	}
	kernelOK := !prog.VLAN
	if kernelOK && h.cooked {
		raw, kernelOK = bpf.CookedForKernel(raw)
	}
	if !kernelOK {
		m, err := prog.NewMatcher()
		if err != nil {
			return &OpenError{Interface: h.name, Op: "filter", Err: err}
		}
		h.user = m
		raw, _ = bpf.Accept(h.snaplen).Raw()
		if h.cooked {
			raw, _ = bpf.CookedForKernel(raw)
		}
	} else if m, err := prog.NewMatcher(); err == nil {
		h.early = m
	}
	// On loopback, keep the arriving copy of each packet only.
	lo := loopbackIndex()
	switch {
	case h.name == AnyInterface && lo != 0:
		raw = bpf.DropOutgoing(raw, lo)
	case h.b.ifindex != 0 && h.b.ifindex == lo:
		raw = bpf.DropOutgoing(raw, 0)
	}
	if err := h.b.tp.SetBPF(raw); err != nil {
		return classify("attach filter", h.name, err)
	}
	h.attached = time.Now()
	return nil
}

// loopbackIndex returns the index of the loopback interface, or 0.
func loopbackIndex() int {
	ifs, err := net.Interfaces()
	if err != nil {
		return 0
	}
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagLoopback != 0 {
			if t, err := hwType(ifc.Name); err == nil && t == arphrdLoopback {
				return ifc.Index
			}
		}
	}
	return 0
}

// read returns the next packet, errTimeout when none came within the poll
// interval, or ErrInterfaceGone when the interface was deleted.
//
// As libpcap 1.10 does, an interface that goes down does not end the
// capture: the kernel reports ENETDOWN on the socket (poll says POLLERR) and
// stops feeding the ring, which stays valid, and feeds it again when the
// interface comes back up. Only an interface that no longer exists ends it:
// the kernel then unbinds the socket (its address has ifindex -1).
func (b *backend) read() ([]byte, gopacket.CaptureInfo, error) {
	data, ci, err := b.tp.ZeroCopyReadPacketData()
	switch {
	case err == nil:
		return data, ci, nil
	case errors.Is(err, afpacket.ErrTimeout):
		// Deleting an interface that is down reports nothing on the
		// socket (it no longer runs): look, when idle (one getsockname
		// a poll interval).
		if b.gone() {
			return nil, ci, ErrInterfaceGone
		}
		return nil, ci, errTimeout
	case errors.Is(err, afpacket.ErrPoll):
		return nil, ci, b.pollError()
	case errors.Is(err, unix.ENETDOWN), errors.Is(err, unix.ENODEV), errors.Is(err, unix.ENXIO):
		if b.gone() {
			return nil, ci, ErrInterfaceGone
		}
		return nil, ci, errTimeout
	}
	return nil, ci, err
}

// pollError handles POLLERR: it reads (and so clears) the socket's pending
// error, which would otherwise make every poll return at once, and says
// whether the capture goes on (errTimeout) or ends.
func (b *backend) pollError() error {
	if b.fd < 0 {
		// The error cannot be cleared: go on at the poll interval
		// rather than spin, while the interface exists.
		if b.gone() {
			return ErrInterfaceGone
		}
		time.Sleep(pollTimeout)
		return errTimeout
	}
	soerr, err := unix.GetsockoptInt(b.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return fmt.Errorf("SO_ERROR: %w", err)
	}
	switch errno := syscall.Errno(soerr); errno {
	case 0, unix.ENETDOWN:
		// Down, or deleted (the kernel says ENETDOWN for both).
		if b.gone() {
			return ErrInterfaceGone
		}
		return errTimeout
	case unix.ENODEV, unix.ENXIO:
		return ErrInterfaceGone
	default:
		return errno
	}
}

// gone reports whether the interface the socket is bound to was deleted:
// the kernel sets the socket's ifindex to -1 then (libpcap's
// device_still_exists). "any" is never gone.
func (b *backend) gone() bool {
	if b.ifindex == 0 {
		return false
	}
	if b.fd >= 0 {
		sa, err := unix.Getsockname(b.fd)
		if ll, ok := sa.(*unix.SockaddrLinklayer); err == nil && ok {
			return ll.Ifindex != b.ifindex
		}
	}
	_, err := net.InterfaceByIndex(b.ifindex)
	return err != nil
}

// linkAddr reads the struct sockaddr_ll the kernel stored in the ring
// before a packet of a SOCK_DGRAM socket. afpacket does not expose it, so it
// is found from the data's position: the tpacket3_hdr starts macOff octets
// before the data and the sockaddr_ll 48 octets into it. The header's own
// fields (tp_mac, tp_snaplen) and the address family confirm the position.
func (b *backend) linkAddr(data []byte, ci *gopacket.CaptureInfo) (linkAddr, bool) {
	if !b.dgram || len(data) == 0 {
		return linkAddr{}, false
	}
	hdr := unsafe.Add(unsafe.Pointer(unsafe.SliceData(data)), -int(b.macOff))
	snaplen := *(*uint32)(unsafe.Add(hdr, 12))
	mac := *(*uint16)(unsafe.Add(hdr, 24))
	sll := unsafe.Add(hdr, 48)
	family := *(*uint16)(sll)
	ifindex := *(*int32)(unsafe.Add(sll, 4))
	if uintptr(mac) != b.macOff || int(snaplen) != len(data) || family != unix.AF_PACKET || int(ifindex) != ci.InterfaceIndex {
		return linkAddr{}, false
	}
	var ll linkAddr
	proto := *(*[2]byte)(unsafe.Add(sll, 2))
	ll.protocol = uint16(proto[0])<<8 | uint16(proto[1])
	ll.haType = *(*uint16)(unsafe.Add(sll, 8))
	ll.pktType = *(*uint8)(unsafe.Add(sll, 10))
	ll.haLen = *(*uint8)(unsafe.Add(sll, 11))
	ll.addr = *(*[8]byte)(unsafe.Add(sll, 12))
	return ll, true
}

func (b *backend) stats() (Stats, error) {
	_, v3, err := b.tp.SocketStats()
	if err != nil {
		return Stats{}, err
	}
	return Stats{Received: uint64(v3.Packets()), Dropped: uint64(v3.Drops())}, nil
}

func (b *backend) close() error {
	if !b.closed {
		b.closed = true
		b.tp.Close()
	}
	return nil
}

// Interfaces lists the capture devices, as tcpdump -D: the system's
// interfaces, then "any".
func Interfaces() ([]Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var out []Interface
	for _, ifc := range ifs {
		d := Interface{Name: ifc.Name, Up: ifc.Flags&net.FlagUp != 0,
			Running: ifc.Flags&net.FlagRunning != 0, Loopback: ifc.Flags&net.FlagLoopback != 0}
		out = append(out, d)
	}
	out = append(out, Interface{Name: AnyInterface, Description: "Pseudo-device that captures on all interfaces", Up: true, Running: true})
	for i := range out {
		out[i].Index = i + 1
	}
	return out, nil
}

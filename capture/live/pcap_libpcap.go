//go:build libpcap

package live

// The libpcap backend (build tag libpcap, cgo): capture through
// github.com/gopacket/gopacket/pcap, on every platform libpcap supports,
// with libpcap's own filter compiler (the full pcap-filter(7) syntax) for
// live captures and for files.

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcap"
	xbpf "golang.org/x/net/bpf"

	"github.com/iwarpkit/iwarpkit/bpf"
)

// backend is a libpcap capture handle.
type backend struct {
	p      *pcap.Handle
	closed bool
}

// compileFilter compiles expr with libpcap (pcap_compile on a dead handle
// of link type lt) and returns it as a program package bpf can run.
func compileFilter(expr string, lt layers.LinkType, snaplen int) (*bpf.Program, error) {
	if snaplen <= 0 {
		snaplen = DefaultSnaplen
	}
	ins, err := pcap.CompileBPFFilter(lt, snaplen, expr)
	if err != nil {
		return nil, fmt.Errorf("libpcap: %v", err)
	}
	raw := make([]xbpf.RawInstruction, len(ins))
	for i, in := range ins {
		raw[i] = xbpf.RawInstruction{Op: in.Code, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	prog, ok := xbpf.Disassemble(raw)
	if !ok {
		return nil, errors.New("libpcap: program has instructions the VM cannot decode")
	}
	return &bpf.Program{Instructions: prog, LinkType: lt}, nil
}

func pcapError(name, op string, err error) error {
	s := strings.ToLower(err.Error())
	switch {
	case strings.Contains(s, "no such device") || strings.Contains(s, "doesn't exist"):
		return &OpenError{Interface: name, Op: op, Err: ErrNoInterface, Detail: err}
	case strings.Contains(s, "ermission"):
		return &OpenError{Interface: name, Op: op, Err: ErrPermission, Detail: err}
	}
	return &OpenError{Interface: name, Op: op, Err: err}
}

func openHandle(opts Options) (*Handle, error) {
	name := opts.Interface
	if name == "" {
		name = AnyInterface
	}
	in, err := pcap.NewInactiveHandle(name)
	if err != nil {
		return nil, pcapError(name, "create", err)
	}
	defer in.CleanUp()
	for _, set := range []func() error{
		func() error { return in.SetSnapLen(opts.Snaplen) },
		func() error { return in.SetPromisc(!opts.NoPromiscuous && name != AnyInterface) },
		func() error { return in.SetTimeout(100 * time.Millisecond) },
		func() error { return in.SetBufferSize(opts.BufferSize) },
	} {
		if err := set(); err != nil {
			return nil, pcapError(name, "configure", err)
		}
	}
	p, err := in.Activate()
	if err != nil {
		return nil, pcapError(name, "activate", err)
	}
	h := &Handle{b: &backend{p: p}, name: name, lt: p.LinkType(), snaplen: opts.Snaplen}
	switch {
	case opts.Filter != nil:
		raw, err := opts.Filter.Raw()
		if err != nil {
			p.Close()
			return nil, err
		}
		ins := make([]pcap.BPFInstruction, len(raw))
		for i, r := range raw {
			ins[i] = pcap.BPFInstruction{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
		}
		if err := p.SetBPFInstructionFilter(ins); err != nil {
			p.Close()
			return nil, pcapError(name, "attach filter", err)
		}
	case opts.FilterExpr != "":
		if err := p.SetBPFFilter(opts.FilterExpr); err != nil {
			p.Close()
			return nil, fmt.Errorf("libpcap: %v", err)
		}
	}
	h.attached = time.Now()
	return h, nil
}

func (b *backend) read() ([]byte, gopacket.CaptureInfo, error) {
	data, ci, err := b.p.ZeroCopyReadPacketData()
	switch {
	case err == nil:
		return data, ci, nil
	case err == pcap.NextErrorTimeoutExpired:
		return nil, ci, errTimeout
	case err == io.EOF:
		return nil, ci, ErrInterfaceGone
	}
	msg := b.p.Error()
	if msg != nil && (strings.Contains(msg.Error(), "went down") || strings.Contains(msg.Error(), "disappeared") || strings.Contains(msg.Error(), "No such device")) {
		return nil, ci, ErrInterfaceGone
	}
	if msg != nil {
		return nil, ci, msg
	}
	return nil, ci, err
}

func (b *backend) linkAddr([]byte, *gopacket.CaptureInfo) (linkAddr, bool) { return linkAddr{}, false }

func (b *backend) stats() (Stats, error) {
	s, err := b.p.Stats()
	if err != nil {
		return Stats{}, err
	}
	return Stats{Received: uint64(s.PacketsReceived), Dropped: uint64(s.PacketsDropped)}, nil
}

func (b *backend) close() error {
	if !b.closed {
		b.closed = true
		b.p.Close()
	}
	return nil
}

// libpcap's PCAP_IF_* flags.
const (
	pcapIfLoopback = 0x1
	pcapIfUp       = 0x2
	pcapIfRunning  = 0x4
)

// Interfaces lists the capture devices libpcap finds (tcpdump -D).
func Interfaces() ([]Interface, error) {
	devs, err := pcap.FindAllDevs()
	if err != nil {
		return nil, err
	}
	out := make([]Interface, len(devs))
	for i, d := range devs {
		out[i] = Interface{Index: i + 1, Name: d.Name, Description: d.Description,
			Up: d.Flags&pcapIfUp != 0, Running: d.Flags&pcapIfRunning != 0, Loopback: d.Flags&pcapIfLoopback != 0}
	}
	return out, nil
}

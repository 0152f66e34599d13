//go:build !linux && !libpcap

package live

import (
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/bpf"
)

// backend is a stub: the pure-Go build captures only on Linux.
type backend struct{}

func compileFilter(expr string, lt layers.LinkType, snaplen int) (*bpf.Program, error) {
	return bpf.Compile(expr, lt, snaplen)
}

func openHandle(opts Options) (*Handle, error) {
	return nil, &OpenError{Interface: opts.Interface, Err: ErrNotSupported}
}

func (b *backend) read() ([]byte, gopacket.CaptureInfo, error) {
	return nil, gopacket.CaptureInfo{}, ErrNotSupported
}

func (b *backend) linkAddr([]byte, *gopacket.CaptureInfo) (linkAddr, bool) { return linkAddr{}, false }
func (b *backend) stats() (Stats, error)                                   { return Stats{}, ErrNotSupported }
func (b *backend) close() error                                            { return nil }

// Interfaces lists the capture devices; none in this build.
func Interfaces() ([]Interface, error) { return nil, ErrNotSupported }

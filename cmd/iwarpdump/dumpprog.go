package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gopacket/gopacket/layers"
	xbpf "golang.org/x/net/bpf"

	"github.com/iwarpkit/iwarpkit/bpf"
	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/capture/live"
)

// counter is a flag that counts its occurrences (-d, -dd, -ddd).
type counter int

func (c *counter) String() string   { return strconv.Itoa(int(*c)) }
func (c *counter) Set(string) error { *c++; return nil }
func (c *counter) IsBoolFlag() bool { return true }

// dumpProgram prints the compiled capture filter as tcpdump -d (level 1),
// -dd (2) or -ddd (3 or more) does, and returns the exit status: the
// program for the link type of the first -r file, of the -i interface, or
// Ethernet (tcpdump's default device is one).
func (l *liveFlags) dumpProgram(level int, files, args []string, stdout, stderr io.Writer) int {
	text, err := l.filterText(args)
	if err != nil {
		fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
		return 2
	}
	lt := layers.LinkTypeEthernet
	switch {
	case len(files) > 0:
		src, err := capture.Open(files[0])
		if err != nil {
			fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
			return 2
		}
		var p capture.Packet
		if src.NextInto(&p) == nil {
			lt = src.LinkType(p.Interface)
		} else if t := src.LinkType(0); t != capture.LinkTypeUnknown {
			lt = t
		}
		src.Close()
	case l.iface == "any":
		lt = layers.LinkTypeLinuxSLL
	case l.iface != "":
		iface, err := ifaceName(l.iface, true)
		if err != nil {
			fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
			return 2
		}
		// Linux's ARPHRD type: 65534 (ARPHRD_NONE, a tun device) carries
		// raw IP; Ethernet and loopback are Ethernet for libpcap.
		if b, err := os.ReadFile("/sys/class/net/" + iface + "/type"); err == nil && strings.TrimSpace(string(b)) == "65534" {
			lt = layers.LinkTypeRaw
		}
	}
	var prog *bpf.Program
	if l.bpfRaw {
		prog, err = bpf.ParseRaw(text)
	} else {
		prog, err = live.Compile(text, lt, l.snaplen)
	}
	if err != nil {
		fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
		return 2
	}
	raw, err := xbpf.Assemble(prog.Instructions)
	if err != nil {
		fmt.Fprintf(stderr, "iwarpdump: %v\n", err)
		return 2
	}
	switch level {
	case 1:
		fmt.Fprint(stdout, bpf.FormatImage(raw))
	case 2:
		fmt.Fprint(stdout, bpf.FormatC(raw))
	default:
		fmt.Fprint(stdout, bpf.FormatRaw(raw))
	}
	return 0
}

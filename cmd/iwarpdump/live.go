package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// liveFlags holds the live-capture options. Live capture is not built yet
// (issue 8): -i is accepted and reported as unavailable.
type liveFlags struct {
	iface string
}

func addLiveFlags(fs *flag.FlagSet) *liveFlags {
	l := &liveFlags{}
	fs.StringVar(&l.iface, "i", "", "capture live from `IFACE` (not available yet)")
	return l
}

func (l *liveFlags) active() bool      { return l.iface != "" }
func (l *liveFlags) acceptsArgs() bool { return false }

// openLive opens the live source; nil and an exit code on failure.
func openLive(ctx context.Context, l *liveFlags, args []string, stderr io.Writer) (packetSource, int) {
	fmt.Fprintf(stderr, "iwarpdump: live capture on %q is not available in this build yet\n", l.iface)
	return nil, 2
}

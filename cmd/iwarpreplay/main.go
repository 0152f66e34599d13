// Command iwarpreplay plays the iWARP connections of a capture again over
// real TCP sockets, rebuilding MPA framing (markers, pad, CRC) for the new
// connection, or writes the regenerated traffic to a capture file (see
// package replay). Unlike tcpreplay it speaks TCP as an endpoint, so a live
// stack can be tested against recorded traffic.
//
//	iwarpreplay -r cap.pcap                          # both ends on 127.0.0.1
//	iwarpreplay -r cap.pcap --to-pcap new.pcap       # no sockets
//	iwarpreplay -r cap.pcap --conn 0 --connect 127.0.0.1:7174 --rnic ietf
//	iwarpreplay -r cap.pcap -Y 'mpa.rev == 2' --listen 127.0.0.1:7174
//	iwarpreplay -r cap.pcap --rev 1 --markers i2r --crc on --speed 2x
//	iwarpreplay -r cap.pcap --speed orig --connect 127.0.0.1:7174  # overlapping connections overlap
//
// Exit status: 0 when every connection replayed as recorded, 1 when messages
// differ, a connection failed or the replay was interrupted (SIGINT or
// SIGTERM: the report ends with "interrupted" and covers what was replayed
// until then), 2 for usage errors and unreadable files.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

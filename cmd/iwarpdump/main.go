// Command iwarpdump decodes iWARP traffic (MPA, DDP, RDMAP over TCP) from
// pcap and pcapng files, in the manner of tcpdump: one line per record, a
// field tree with -v, or JSON Lines (schema v1) with -T jsonl.
//
//	iwarpdump -r capture.pcap
//	iwarpdump -r capture.pcap -v
//	iwarpdump -r capture.pcap.gz -T jsonl | jq .
//	tcpdump -w - ... | iwarpdump -r -
//
// Exit status: 0 on success (a damaged file still decodes up to the damage,
// reported on standard error), 2 for usage errors and unreadable files, 3 when
// --strict is given and the file was damaged.
package main

import (
	"context"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

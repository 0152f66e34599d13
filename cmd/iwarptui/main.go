// Command iwarptui browses an iWARP capture in the terminal: the records,
// their fields and octets, the connections, the RDMA message ladder of a
// connection and the findings, with display filters (iwarpdump -Y).
//
//	iwarptui [-t FORMAT] [--mpa-flags rfc6581|draft] [--decode-as SPEC]... FILE
//
// Press ? for the keys.
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

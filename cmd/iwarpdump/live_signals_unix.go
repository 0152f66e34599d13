//go:build unix

package main

import (
	"os"
	"syscall"
)

// stopSignals end a live capture like Ctrl-C (which main already catches);
// statsSignals print the statistics without stopping, as tcpdump does on
// SIGUSR1.
var (
	stopSignals  = []os.Signal{syscall.SIGTERM, syscall.SIGHUP}
	statsSignals = []os.Signal{syscall.SIGUSR1}
)

//go:build unix

package main

import (
	"os"
	"syscall"
)

// stopSignals end a live capture like Ctrl-C (which main already catches);
// statsSignals print the statistics without stopping, as tcpdump does on
// SIGUSR1. SIGPIPE is among the first: when the reader of standard output
// goes away (iwarpdump -i eth0 -w f | head), the capture ends with its
// statistics and a complete -w file, and run reports the broken pipe and
// exits 1, where the signal used to kill it with the -w file's buffered
// packets lost.
var (
	stopSignals  = []os.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE}
	statsSignals = []os.Signal{syscall.SIGUSR1}
)

//go:build !unix

package main

import (
	"os"
	"syscall"
)

// stopSignals end a live capture like Ctrl-C; there is no statistics
// signal on this platform.
var (
	stopSignals  = []os.Signal{syscall.SIGTERM}
	statsSignals []os.Signal
)

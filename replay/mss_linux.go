package replay

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// socketMSS returns the TCP_MAXSEG of c's socket (tcp(7): the MSS of the
// connection once it is established), or 0.
func socketMSS(c conn) int {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	mss := 0
	if err := rc.Control(func(fd uintptr) {
		if v, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG); err == nil {
			mss = v
		}
	}); err != nil {
		return 0
	}
	return mss
}

//go:build !linux

package replay

// socketMSS returns 0: the socket's MSS is read on Linux only.
func socketMSS(conn) int { return 0 }

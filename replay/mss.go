package replay

// sendMSS returns the TCP segment size of c, for resegment: WritePcap's
// (memConn), a TCP socket's as the kernel has it (TCP_MAXSEG, where the
// system gives it: socketMSS), or 0 when not known.
func sendMSS(c conn) int {
	if m, ok := c.(interface{ MSS() int }); ok {
		return m.MSS()
	}
	return socketMSS(c)
}

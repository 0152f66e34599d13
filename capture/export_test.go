package capture

// PcapgoOnly makes s read every pcapng block with pcapgo, as before
// ngReader.readEPB: the reference the in-place read is compared with. It
// does nothing to a pcap Source.
func PcapgoOnly(s *Source) {
	if n, ok := s.rd.(*ngReader); ok {
		n.slow = true
	}
}

// ReadsAhead reports whether s reads its file ahead in another goroutine
// (OpenReadAhead on a gzip file).
func ReadsAhead(s *Source) bool { return s.ahead != nil }

// OpenInputs returns how many of m's inputs are open.
func OpenInputs(m *Merge) int {
	n := 0
	for _, s := range m.srcs {
		if s != nil {
			n++
		}
	}
	return n
}

// InPlace reports whether ch holds a pcapng file's blocks as read, its
// packets' records at its end (chunkng.go), rather than repacked records.
func (ch Chunk) InPlace() bool { return ch.meta != nil }

package capture

// PcapgoOnly makes s read every pcapng block with pcapgo, as before
// ngReader.readEPB: the reference the in-place read is compared with. It
// does nothing to a pcap Source.
func PcapgoOnly(s *Source) {
	if n, ok := s.rd.(*ngReader); ok {
		n.slow = true
	}
}

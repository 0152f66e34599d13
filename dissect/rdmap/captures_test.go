package rdmap

// TCP payloads of real Linux siw frames (tshark -T fields -e tcp.payload),
// one FPDU each, from /work/shared/captures. The values the tests expect
// of them are tshark 4.0's decode, and for the Terminates the reading in
// the captures MANIFEST (siw's little-endian bitfield layout).
const (
	// basic_rping_v2_nocrc.pcap frame 8: Send, QN 0, MSN 1, MO 0, 16
	// octets of payload.
	capSend = "0022 4143 00000000 00000000 00000001 00000000 00005588df645c6056770c0000000040 00000000"
	// basic_rping_v2_nocrc.pcap frame 9: RDMA Read Request, sink STag
	// 0xb069b300 TO 0x559cab83b550, 64 octets, source STag 0x56770c00
	// TO 0x5588df645c60.
	capReadReq = "002e 4141 00000000 00000001 00000001 00000000 b069b300 0000559cab83b550 00000040 56770c00 00005588df645c60 00000000"
	// basic_rping_v2_nocrc.pcap frame 10: RDMA Read Response to it, 64
	// octets.
	capReadResp = "004e c142 b069b300 0000559cab83b550" +
		"72646d612d70696e672d303a204142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172 00 00000000"
	// basic_rping_v2_nocrc.pcap frame 13: RDMA Write, STag 0x4d93c500,
	// TO 0x00005588df645ed0, 64 octets.
	capWrite = "004e c140 4d93c500 00005588df645ed0" +
		"72646d612d70696e672d303a204142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172 00 00000000"
	// crc_v2_iwtest_ops.pcap frame 266: zero-length Send with SE, MSN 4,
	// CRC on.
	capSendSE = "0012 4145 00000000 00000000 00000004 00000000 77150ad9"

	// term_badwrite.pcap frame 11: siw Terminate DDP / Tagged Buffer /
	// Invalid STag, M and D, segment length 64, terminated tagged RDMA
	// Write header STag 0x07bf1600 TO 0x7fe0b8347000.
	capTermBadWrite = "0026 4147 00000000 00000002 00000001 00000000 | 11 00 03 00 | 0040 | c140 07bf1600 00007fe0b8347000 | 00000000"
	// term_sendinv.pcap frame 13: siw Terminate RDMAP / Remote Operation
	// / STag cannot be invalidated, M and D, segment length 40,
	// terminated untagged Send with SE and Invalidate header (MSN 2).
	capTermSendInv = "002a 4147 00000000 00000002 00000001 00000000 | 20 09 03 00 | 0028 | 4146 00000000 00000000 00000002 00000000 | 00000000"
	// term_toolong.pcap frame 16: siw Terminate DDP / Untagged Buffer /
	// Invalid MSN - no buffer available, M and D, segment length 1424,
	// terminated Send segment MSN 1 MO 2848, not last.
	capTermTooLong = "002a 4147 00000000 00000002 00000001 00000000 | 21 02 03 00 | 0590 | 0143 00000000 00000000 00000001 00000b20 | 00000000"
)

package mpa

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// This file checks the decoders against real Linux siw traffic in
// testdata/ (see testdata/README.md). The expected values are tshark's
// decode as listed in shared/captures/MANIFEST.md, not this package's
// output.

// segment is the TCP payload of one captured frame.
type segment struct {
	frame   int // 1-based frame number, as tshark numbers it
	srcPort uint16
	seq     uint32
	payload []byte
}

// readSegments returns the non-empty TCP payloads of a classic pcap file
// with Ethernet framing (what tcpdump -i lo writes), IPv4 or IPv6 without
// extension headers. It is deliberately small: enough for these files.
func readSegments(t testing.TB, name string) []segment {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 24 {
		t.Fatalf("%s: no pcap header", name)
	}
	var bo binary.ByteOrder
	switch binary.LittleEndian.Uint32(data) {
	case 0xa1b2c3d4, 0xa1b23c4d:
		bo = binary.LittleEndian
	case 0xd4c3b2a1, 0x4d3cb2a1:
		bo = binary.BigEndian
	default:
		t.Fatalf("%s: not a pcap file", name)
	}
	if lt := bo.Uint32(data[20:]); lt != 1 {
		t.Fatalf("%s: link type %d, want 1 (Ethernet)", name, lt)
	}
	var segs []segment
	off := 24
	for frame := 1; off+16 <= len(data); frame++ {
		incl := int(bo.Uint32(data[off+8:]))
		off += 16
		if off+incl > len(data) {
			t.Fatalf("%s: frame %d truncated", name, frame)
		}
		pkt := data[off : off+incl]
		off += incl
		if len(pkt) < 14 {
			continue
		}
		etype, l3 := binary.BigEndian.Uint16(pkt[12:]), pkt[14:]
		var tcp []byte
		switch {
		case etype == 0x0800 && len(l3) >= 20 && l3[9] == 6:
			total := int(binary.BigEndian.Uint16(l3[2:]))
			tcp = l3[int(l3[0]&0x0f)*4 : min(total, len(l3))]
		case etype == 0x86dd && len(l3) >= 40 && l3[6] == 6:
			tcp = l3[40 : 40+min(int(binary.BigEndian.Uint16(l3[4:])), len(l3)-40)]
		default:
			continue
		}
		if len(tcp) < 20 || len(tcp) < int(tcp[12]>>4)*4 {
			t.Fatalf("%s: frame %d: bad TCP header", name, frame)
		}
		if payload := tcp[int(tcp[12]>>4)*4:]; len(payload) > 0 {
			segs = append(segs, segment{
				frame:   frame,
				srcPort: binary.BigEndian.Uint16(tcp[0:]),
				seq:     binary.BigEndian.Uint32(tcp[4:]),
				payload: payload,
			})
		}
	}
	return segs
}

// streams concatenates the payloads per direction (by source port), in
// sequence order, dropping repeated octets.
func streams(t *testing.T, segs []segment) map[uint16][]byte {
	t.Helper()
	out := map[uint16][]byte{}
	next := map[uint16]uint32{}
	for _, s := range segs {
		p := s.payload
		if n, ok := next[s.srcPort]; ok && s.seq != n {
			d := n - s.seq
			if int32(d) < 0 || int(d) > len(p) {
				t.Fatalf("frame %d: sequence gap or reordering (seq %d, expected %d)", s.frame, s.seq, n)
			}
			p = p[d:]
		}
		out[s.srcPort] = append(out[s.srcPort], p...)
		next[s.srcPort] = s.seq + uint32(len(s.payload))
	}
	return out
}

// TestCaptureFrames decodes every MPA Request/Reply in the real captures
// and compares it with tshark's decode (MANIFEST.md: frame, key, rev,
// M/C/R, res, pdlen, private data). tshark 4.0 knows only MPA Rev 1, so its
// 5-bit "res" holds the S bit (0x10) and the four reserved bits.
func TestCaptureFrames(t *testing.T) {
	tests := []struct {
		file     string
		frame    int
		kind     Kind
		rev      uint8
		m, c, r  bool
		res      uint8
		pdLen    int
		pd       string
		findings []string
	}{
		{"crc_v2_iwtest_ops_1-20.pcap", 4, KindRequest, 2, false, true, false, 0x10, 26, "000400046977746573742d636c69656e742d7265717565737400", nil},
		{"crc_v2_iwtest_ops_1-20.pcap", 6, KindReply, 2, false, true, false, 0x10, 25, "000400046977746573742d7365727665722d61636365707400", nil},
		{"crc_v2_rping.pcap", 4, KindRequest, 2, false, true, false, 0x10, 4, "00010001", nil},
		{"crc_v2_rping.pcap", 6, KindReply, 2, false, true, false, 0x10, 4, "00010001", nil},
		{"mpareq_markers.pcap", 4, KindRequest, 2, true, false, false, 0x10, 13, "000400040000000068656c6c6f", nil},
		{"mpareq_markers.pcap", 6, KindReply, 2, false, false, true, 0x10, 4, "00000000", nil},
		{"mpareq_rev3.pcap", 4, KindRequest, 3, false, false, false, 0x10, 8, "0004000400000000", []string{CodeRevUnknown, CodeSWithoutRev2}},
		{"nocrc_v1_rping.pcap", 4, KindRequest, 1, false, false, false, 0x00, 0, "", nil},
		{"nocrc_v1_rping.pcap", 6, KindReply, 1, false, false, false, 0x00, 0, "", nil},
		{"p2p_rtr1_rping.pcap", 4, KindRequest, 2, false, false, false, 0x10, 4, "80018001", nil},
		{"p2p_rtr1_rping.pcap", 6, KindReply, 2, false, false, false, 0x10, 4, "80018001", nil},
		{"p2p_rtr2_rping.pcap", 4, KindRequest, 2, false, false, false, 0x10, 4, "80014001", nil},
		{"p2p_rtr2_rping.pcap", 6, KindReply, 2, false, false, false, 0x10, 4, "80014001", nil},
		{"reject_app_v2.pcap", 4, KindRequest, 2, false, false, false, 0x10, 26, "000400046977746573742d636c69656e742d7265717565737400", nil},
		{"reject_app_v2.pcap", 6, KindReply, 2, false, false, true, 0x10, 25, "000400046977746573742d7365727665722d52454a45435400", nil},
		{"gso_v2_nocrc_1-8.pcap", 4, KindRequest, 2, false, false, false, 0x18, 4, "00000000", []string{CodeResNonzero}},
		{"gso_v2_nocrc_1-8.pcap", 6, KindReply, 2, false, false, false, 0x18, 4, "00000000", []string{CodeResNonzero}},
	}
	segsOf := map[string][]segment{}
	for _, tt := range tests {
		if segsOf[tt.file] == nil {
			segsOf[tt.file] = readSegments(t, tt.file)
		}
		var seg *segment
		for i := range segsOf[tt.file] {
			if segsOf[tt.file][i].frame == tt.frame {
				seg = &segsOf[tt.file][i]
			}
		}
		if seg == nil {
			t.Fatalf("%s: frame %d has no TCP payload", tt.file, tt.frame)
		}
		f, n, err := DecodeFrame(seg.payload)
		if err != nil {
			t.Errorf("%s frame %d: %v", tt.file, tt.frame, err)
			continue
		}
		want := Frame{
			Kind: tt.kind, M: tt.m, C: tt.c, R: tt.r,
			S: tt.res&0x10 != 0, Res: tt.res & 0x0F, Rev: tt.rev,
			PDLen: uint16(tt.pdLen), PD: unhex(t, tt.pd),
		}
		if f.Kind != want.Kind || f.M != want.M || f.C != want.C || f.R != want.R || f.S != want.S ||
			f.Res != want.Res || f.Rev != want.Rev || f.PDLen != want.PDLen || !bytes.Equal(f.PD, want.PD) {
			t.Errorf("%s frame %d:\n got %+v\nwant %+v", tt.file, tt.frame, f, want)
		}
		// The frame is the whole segment: the next octet is the first FPDU.
		if n != len(seg.payload) {
			t.Errorf("%s frame %d: n = %d, segment has %d octets", tt.file, tt.frame, n, len(seg.payload))
		}
		// Re-encoding gives the captured octets back.
		if enc := AppendFrame(nil, f); !bytes.Equal(enc, seg.payload) {
			t.Errorf("%s frame %d: re-encoded\n% x\ncaptured\n% x", tt.file, tt.frame, enc, seg.payload)
		}
		var codes []string
		for _, fd := range f.Check(nil) {
			codes = append(codes, fd.Code)
		}
		if join(codes) != join(tt.findings) {
			t.Errorf("%s frame %d: findings %v, want %v", tt.file, tt.frame, codes, tt.findings)
		}
		// Every prefix is truncated, never "not MPA".
		for i := range n {
			if _, _, err := DecodeFrame(seg.payload[:i]); err != dissect.ErrTruncated {
				t.Fatalf("%s frame %d: %d-octet prefix: %v", tt.file, tt.frame, i, err)
			}
		}
	}
}

func join(s []string) string {
	var b []byte
	for _, x := range s {
		b = append(b, x...)
		b = append(b, ' ')
	}
	return string(b)
}

// TestCaptureEnhanced reads the RFC 6581 flags siw sent with
// peer_to_peer=1 (MANIFEST.md: rtr_mode=1 offers and picks the zero-length
// RDMA Write RTR, rtr_mode=2 the zero-length RDMA Read).
func TestCaptureEnhanced(t *testing.T) {
	for _, c := range []struct {
		file string
		rtr  RTRSet
	}{
		{"p2p_rtr1_rping.pcap", RTRWrite},
		{"p2p_rtr2_rping.pcap", RTRRead},
	} {
		for _, s := range readSegments(t, c.file)[:2] {
			f, _, err := DecodeFrame(s.payload)
			if err != nil {
				t.Fatal(err)
			}
			e, ulp, ok := f.Enhanced()
			if !ok || len(ulp) != 0 || e.IRD != 1 || e.ORD != 1 || !e.P2P(FlagsRFC6581) || e.RTR(FlagsRFC6581) != c.rtr {
				t.Errorf("%s frame %d: %+v ulp %q ok %v rtr %v", c.file, s.frame, e, ulp, ok, e.RTR(FlagsRFC6581))
			}
		}
	}
}

// TestCaptureFPDUs walks every FPDU that follows the MPA Request/Reply in
// each direction and checks its CRC. tshark reports every one of them
// "Good CRC32" (35 in crc_v2_rping.pcap, 9 in the first 20 frames of
// crc_v2_iwtest_ops.pcap); siw sends no markers, so the octets after the
// Reply are plain FPDUs.
func TestCaptureFPDUs(t *testing.T) {
	for _, c := range []struct {
		file  string
		crc   bool
		fpdus int
	}{
		{"crc_v2_rping.pcap", true, 35},
		{"crc_v2_iwtest_ops_1-20.pcap", true, 9},
		{"p2p_rtr1_rping.pcap", false, 15},
		{"p2p_rtr2_rping.pcap", false, 16},
	} {
		t.Run(c.file, func(t *testing.T) {
			total := 0
			for port, b := range streams(t, readSegments(t, c.file)) {
				_, n, err := DecodeFrame(b)
				if err != nil {
					t.Fatalf("port %d: no MPA frame first: %v", port, err)
				}
				for b = b[n:]; len(b) > 0; total++ {
					p, n, err := DecodeFPDU(b)
					if err == dissect.ErrTruncated {
						break // the capture ends inside this FPDU
					}
					if err != nil {
						t.Fatal(err)
					}
					if c.crc && !p.CRCOK() {
						t.Errorf("port %d FPDU %d: CRC field %#08x, computed %#08x", port, total, p.CRC, p.ComputedCRC())
					}
					if !c.crc && p.CRC != 0 {
						t.Errorf("port %d FPDU %d: CRC field %#08x with CRCs off", port, total, p.CRC)
					}
					if !p.PadZero() {
						t.Errorf("port %d FPDU %d: non-zero PAD", port, total)
					}
					b = b[n:]
				}
			}
			if total != c.fpdus {
				t.Errorf("%d FPDUs, tshark decodes %d", total, c.fpdus)
			}
		})
	}
}

// TestCaptureCRCByteOrder pins the CRC byte order on one real FPDU: frame 8
// of crc_v2_iwtest_ops.pcap, for which tshark shows "ULPDU length: 34
// bytes, CRC check: 0x3d0bc66d (Good CRC32)", the field's octets read in
// network order. MPA sends the CRC least significant octet first, so the
// CRC value is 0x6dc60b3d.
func TestCaptureCRCByteOrder(t *testing.T) {
	for _, s := range readSegments(t, "crc_v2_iwtest_ops_1-20.pcap") {
		if s.frame != 8 {
			continue
		}
		p, n, err := DecodeFPDU(s.payload)
		if err != nil || n != len(s.payload) || p.ULPDULen != 34 {
			t.Fatalf("frame 8: n %d of %d, ULPDU_Length %d, err %v", n, len(s.payload), p.ULPDULen, err)
		}
		if !bytes.Equal(s.payload[n-4:], []byte{0x3d, 0x0b, 0xc6, 0x6d}) || p.CRC != 0x6dc60b3d || CRC32C(s.payload[:n-4]) != 0x6dc60b3d {
			t.Errorf("frame 8: CRC field %#08x, computed %#08x", p.CRC, CRC32C(s.payload[:n-4]))
		}
		if got := AppendFPDU(nil, p.ULPDU, true); !bytes.Equal(got, s.payload) {
			t.Errorf("frame 8: AppendFPDU does not reproduce the captured FPDU")
		}
		return
	}
	t.Fatal("frame 8 not found")
}

package mpa

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// seedCaptures adds the TCP payloads of the real captures to a corpus.
func seedCaptures(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*.pcap"))
	for _, name := range names {
		for _, s := range readSegments(f, filepath.Base(name)) {
			f.Add(s.payload)
		}
	}
}

func FuzzDecodeFrame(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("MPA ID Re"))
	f.Add(AppendFrame(nil, Frame{Kind: KindRequest, C: true, Rev: 1}))
	f.Add(AppendFrame(nil, Frame{Kind: KindReply, M: true, R: true, S: true, Res: 0x08, Rev: 2, PD: []byte{0x80, 1, 0x40, 1, 'x'}}))
	f.Add(AppendFrame(nil, Frame{Kind: KindRequest, Rev: 3, PD: make([]byte, 600)}))
	seedCaptures(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, n, err := DecodeFrame(b)
		// FrameLen reads the length from the header alone: the same from
		// every cut that keeps the header, and the decoded frame's.
		fl, flOK := FrameLen(b)
		if flOK && (fl < HeaderLen || len(b) < HeaderLen) {
			t.Fatalf("FrameLen %d of %d octets", fl, len(b))
		}
		if flOK {
			if fl2, ok2 := FrameLen(b[:HeaderLen]); !ok2 || fl2 != fl {
				t.Fatalf("FrameLen of the header alone %d %v, of %d octets %d", fl2, ok2, len(b), fl)
			}
		}
		if err == nil && (!flOK || fl != n) {
			t.Fatalf("FrameLen %d %v, DecodeFrame took %d", fl, flOK, n)
		}
		if err != nil {
			if n != 0 || !reflect.DeepEqual(fr, Frame{}) {
				t.Fatalf("error %v with a non-zero result", err)
			}
			switch {
			case err == dissect.ErrTruncated:
				if !IsKeyPrefix(b) {
					t.Fatalf("ErrTruncated but % x is not a key prefix", b)
				}
			case err == dissect.ErrNotMPA:
				if IsKeyPrefix(b) {
					t.Fatalf("ErrNotMPA but % x is a key prefix", b)
				}
			default:
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if n != HeaderLen+int(fr.PDLen) || n > len(b) || len(fr.PD) != int(fr.PDLen) || cap(fr.PD) != len(fr.PD) {
			t.Fatalf("n %d PDLen %d len(b) %d len(PD) %d", n, fr.PDLen, len(b), len(fr.PD))
		}
		// Every octet of the frame is a field: encoding gives them back.
		enc := AppendFrame(nil, fr)
		if !bytes.Equal(enc, b[:n]) {
			t.Fatalf("re-encoded\n% x\ninput\n% x", enc, b[:n])
		}
		fr2, n2, err := DecodeFrame(enc)
		if err != nil || n2 != n || !reflect.DeepEqual(fr2, fr) {
			t.Fatalf("decode(encode) = %+v %d %v, want %+v", fr2, n2, err, fr)
		}
		_ = fr.Check(nil)
		if e, ulp, ok := fr.Enhanced(); ok {
			if len(ulp)+EnhancedLen != len(fr.PD) || !bytes.Equal(AppendEnhanced(nil, e), fr.PD[:EnhancedLen]) {
				t.Fatal("Enhanced split")
			}
		}
	})
}

func FuzzDecodeFPDU(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(AppendFPDU(nil, []byte("hello, world"), true))
	f.Add(AppendFPDU(nil, make([]byte, 1442), false))
	f.Add([]byte{0xff, 0xff, 1, 2, 3})
	seedCaptures(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, n, err := DecodeFPDU(b)
		if err != nil {
			if err != dissect.ErrTruncated || n != 0 || !reflect.DeepEqual(p, FPDU{}) {
				t.Fatalf("error %v, n %d, %+v", err, n, p)
			}
			if len(b) >= LenFieldLen && len(b) >= PlainLen(int(b[0])<<8|int(b[1])) {
				t.Fatal("ErrTruncated for a complete FPDU")
			}
			return
		}
		if n != PlainLen(int(p.ULPDULen)) || n > len(b) || n < MinFPDULen || n%4 != 0 ||
			len(p.ULPDU) != int(p.ULPDULen) || len(p.Pad) != PadLen(len(p.ULPDU)) || len(p.Raw) != n {
			t.Fatalf("inconsistent: n %d len %d %+v", n, len(b), p)
		}
		// decode → encode → decode is stable. The encoder writes zero PAD
		// and a computed CRC, so those are what the second decode sees.
		for _, crc := range []bool{false, true} {
			enc := AppendFPDU(nil, p.ULPDU, crc)
			q, m, err := DecodeFPDU(enc)
			if err != nil || m != n || m != len(enc) || !bytes.Equal(q.ULPDU, p.ULPDU) || !q.PadZero() {
				t.Fatalf("decode(encode): %+v %d %v", q, m, err)
			}
			if crc && !q.CRCOK() || !crc && q.CRC != 0 {
				t.Fatalf("crc %v: field %#x", crc, q.CRC)
			}
			again := AppendFPDU(nil, q.ULPDU, crc)
			if !bytes.Equal(again, enc) {
				t.Fatal("encode not stable")
			}
		}
		if p.CRCOK() != (p.CRC == CRC32C(b[:n-CRCLen])) {
			t.Fatal("CRCOK disagrees with CRC32C")
		}
	})
}

func FuzzDecodeEnhanced(f *testing.F) {
	f.Add([]byte{0x80, 0x01, 0x80, 0x01})
	f.Add([]byte{0x3f, 0xff, 0x3f, 0xff})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 9})
	f.Add([]byte{0x40})
	f.Fuzz(func(t *testing.T, pd []byte) {
		e, err := DecodeEnhanced(pd)
		if err != nil {
			if err != dissect.ErrTruncated || e != (Enhanced{}) || len(pd) >= EnhancedLen {
				t.Fatalf("err %v e %+v len %d", err, e, len(pd))
			}
			return
		}
		if e.IRD > IRDORDNoNegotiation || e.ORD > IRDORDNoNegotiation {
			t.Fatalf("IRD/ORD over 14 bits: %+v", e)
		}
		enc := AppendEnhanced(nil, e)
		if !bytes.Equal(enc, pd[:EnhancedLen]) {
			t.Fatalf("encode % x, input % x", enc, pd[:EnhancedLen])
		}
		if e2, err := DecodeEnhanced(enc); err != nil || e2 != e {
			t.Fatalf("decode(encode) = %+v %v", e2, err)
		}
		for _, m := range []FlagMeaning{FlagsRFC6581, FlagsDraft01} {
			r := e.RTR(m)
			if r&^(RTRSend|RTRWrite|RTRRead) != 0 || len(r.Names()) > 3 || r.String() == "" {
				t.Fatalf("RTR(%v) = %v", m, r)
			}
			_ = e.P2P(m)
		}
	})
}

func FuzzPrivateData(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0x20, 0, 0, 0, 1})
	f.Add([]byte{0x20, 0, 0, 0, 1, 0, 0, 0})
	f.Add([]byte{0xf6, 0xab, 0x0e, 0x18, 1, 0, 3, 3})
	f.Add([]byte{0xf6, 0xab, 0x0e, 0x18, 1, 1, 0, 0xff, 7})
	f.Add([]byte("iwtest-client-request\x00"))
	f.Fuzz(func(t *testing.T, pd []byte) {
		if s, ok := DecodeSMBD(pd); ok {
			enc := AppendSMBD(nil, s)
			if !bytes.Equal(enc, pd[:SMBDLen]) {
				t.Fatalf("SMBD encode % x, input % x", enc, pd[:SMBDLen])
			}
			if s2, ok := DecodeSMBD(enc); !ok || s2 != s {
				t.Fatalf("SMBD decode(encode) = %+v %v, want %+v", s2, ok, s)
			}
			if s.IRD == 0 || s.ORD == 0 || s.IRD > 0xFFFF || s.ORD > 0xFFFF {
				t.Fatalf("implausible SMBD accepted: %+v", s)
			}
		} else if s != (SMBDIRDORD{}) {
			t.Fatalf("not SMBD but %+v", s)
		}
		if r, ok := DecodeRPCRDMA(pd); ok {
			enc := AppendRPCRDMA(nil, r)
			if !bytes.Equal(enc, pd[:RPCRDMALen]) {
				t.Fatalf("RPCRDMA encode % x, input % x", enc, pd[:RPCRDMALen])
			}
			if r2, ok := DecodeRPCRDMA(enc); !ok || r2 != r {
				t.Fatalf("RPCRDMA decode(encode) = %+v %v, want %+v", r2, ok, r)
			}
			if RPCRDMASizeRaw(r.SendSize) != r.RawSend || RPCRDMASizeRaw(r.RecvSize) != r.RawRecv {
				t.Fatalf("size octets do not round-trip: %+v", r)
			}
		} else if r != (RPCRDMA{}) {
			t.Fatalf("not RPC-over-RDMA but %+v", r)
		}
		if m, err := DecodeMarker(pd); err == nil {
			if !bytes.Equal(AppendMarker(nil, m), pd[:MarkerLen]) {
				t.Fatal("marker round trip")
			}
		} else if len(pd) >= MarkerLen {
			t.Fatal("marker error on four octets")
		}
	})
}

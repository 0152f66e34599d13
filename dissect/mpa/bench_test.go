package mpa

import (
	"strconv"
	"testing"
)

var (
	benchFrame = AppendFrame(nil, Frame{Kind: KindRequest, C: true, S: true, Rev: 2,
		PD: []byte("\x00\x04\x00\x04iwtest-client-request\x00")})
	benchFPDU = AppendFPDU(nil, make([]byte, 1442), true)
	sinkInt   int
	sinkU32   uint32
	sinkBool  bool
)

// TestDecodeNoAllocs: the decoders are on the per-packet hot path and must
// not allocate.
func TestDecodeNoAllocs(t *testing.T) {
	pd := []byte{0, 0, 0, 0x20, 0, 0, 0, 1}
	rpc := []byte{0xf6, 0xab, 0x0e, 0x18, 1, 0, 3, 3}
	cases := map[string]func(){
		"DecodeFrame": func() {
			f, n, _ := DecodeFrame(benchFrame)
			sinkInt += n + len(f.PD)
		},
		"DecodeFrame/error": func() {
			_, n, err := DecodeFrame(benchFPDU)
			sinkBool = err != nil
			sinkInt += n
		},
		"DecodeFPDU": func() {
			p, n, _ := DecodeFPDU(benchFPDU)
			sinkInt += n + len(p.ULPDU)
		},
		"FPDU.CRCOK": func() {
			p, _, _ := DecodeFPDU(benchFPDU)
			sinkBool = p.CRCOK()
		},
		"Frame.Enhanced": func() {
			f, _, _ := DecodeFrame(benchFrame)
			e, ulp, _ := f.Enhanced()
			sinkInt += int(e.IRD) + len(ulp)
		},
		"DecodeSMBD": func() {
			s, _ := DecodeSMBD(pd)
			sinkU32 += s.IRD
		},
		"DecodeRPCRDMA": func() {
			r, _ := DecodeRPCRDMA(rpc)
			sinkU32 += r.SendSize
		},
		"DecodeMarker": func() {
			m, _ := DecodeMarker(pd)
			sinkInt += int(m.FPDUPtr)
		},
		"IsKeyPrefix": func() { sinkBool = IsKeyPrefix(benchFrame[:9]) },
		"CRC32C":      func() { sinkU32 = CRC32C(benchFPDU) },
	}
	for name, fn := range cases {
		if a := testing.AllocsPerRun(100, fn); a != 0 {
			t.Errorf("%s: %v allocations per run, want 0", name, a)
		}
	}
}

func BenchmarkDecodeFrame(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchFrame)))
	acc := 0
	for b.Loop() {
		f, n, _ := DecodeFrame(benchFrame)
		acc += n + len(f.PD)
	}
	sinkInt = acc
}

func BenchmarkDecodeFPDU(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchFPDU)))
	acc := 0
	for b.Loop() {
		p, n, _ := DecodeFPDU(benchFPDU)
		acc += n + len(p.ULPDU)
	}
	sinkInt = acc
}

func BenchmarkAppendFPDU(b *testing.B) {
	b.ReportAllocs()
	ulpdu := make([]byte, 1442)
	buf := make([]byte, 0, PlainLen(len(ulpdu)))
	b.SetBytes(int64(cap(buf)))
	for b.Loop() {
		buf = AppendFPDU(buf[:0], ulpdu, true)
	}
}

func BenchmarkCRC32C(b *testing.B) {
	for _, size := range []int{64, 1460, 64 << 10} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i)
		}
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				sinkU32 = CRC32C(data)
			}
		})
	}
}

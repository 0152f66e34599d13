//go:build amd64 && !purego

package crc32c

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestImplementations compares each implementation this CPU can run with
// hash/crc32, at every length up to a little over 2 KiB and every
// alignment, and some long buffers. The one update picks is also covered
// by TestMatchesHashCRC32; this reaches the others (foldCLMUL, hash/crc32
// itself) on a CPU with AVX-512.
func TestImplementations(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	buf := make([]byte, 80<<10)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	saved := impl
	defer func() { impl = saved }()
	for _, tc := range []struct {
		name string
		impl int
		ok   bool
	}{
		{"avx512", implAVX512, best() == implAVX512},
		{"clmul", implCLMUL, best() != implGeneric},
		{"generic", implGeneric, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.ok {
				t.Skip("this CPU cannot run it")
			}
			impl = tc.impl
			for n := 0; n <= 2200+70001; n++ {
				if n > 2200 {
					n += 997
				}
				for off := range 16 {
					if n > 2200 && off != 5 {
						continue
					}
					p := buf[off : off+min(n, len(buf)-16)]
					for _, init := range []uint32{0, 0xffffffff} {
						if got, want := Update(init, p), crc32.Update(init, table, p); got != want {
							t.Fatalf("Update(%#x, %d octets at offset %d) = %#08x, want %#08x", init, len(p), off, got, want)
						}
					}
				}
			}
		})
	}
}

func BenchmarkImplementations(b *testing.B) {
	saved := impl
	defer func() { impl = saved }()
	p := make([]byte, 1461)[1:]
	for _, tc := range []struct {
		name string
		impl int
	}{{"avx512", implAVX512}, {"clmul", implCLMUL}, {"generic", implGeneric}} {
		if tc.impl < best() {
			continue
		}
		for _, n := range []int{1460, 40} { // 40: a Send of 16 octets
			b.Run(fmt.Sprintf("%s/%dB", tc.name, n), func(b *testing.B) {
				impl = tc.impl
				b.SetBytes(int64(n))
				for b.Loop() {
					sink += Checksum(p[:n])
				}
			})
		}
	}
}

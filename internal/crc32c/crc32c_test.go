package crc32c

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// Test vectors of RFC 3720 §B.4 (iSCSI uses the same CRC-32C), and the
// usual check value for "123456789".
func TestVectors(t *testing.T) {
	inc, dec := make([]byte, 32), make([]byte, 32)
	ones := make([]byte, 32)
	for i := range inc {
		inc[i], dec[i], ones[i] = byte(i), byte(31-i), 0xff
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want uint32
	}{
		{"32 zeros", make([]byte, 32), 0x8a9136aa},
		{"32 ones", ones, 0x62a8ab43},
		{"32 incrementing", inc, 0x46dd794e},
		{"32 decrementing", dec, 0x113fdb5c},
		{"123456789", []byte("123456789"), 0xe3069283},
		{"empty", nil, 0},
	} {
		if got := Checksum(tc.in); got != tc.want {
			t.Errorf("%s: Checksum = %#08x, want %#08x", tc.name, got, tc.want)
		}
	}
}

// TestMatchesHashCRC32 compares every length up to a little over 2 KiB,
// at every alignment, and some long buffers, with hash/crc32, from several
// starting values.
func TestMatchesHashCRC32(t *testing.T) {
	if !accelerated() {
		t.Log("this CPU (or build) has no AVX-512 VPCLMULQDQ: only the hash/crc32 path runs")
	}
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 80<<10)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	lens := make([]int, 0, 2300)
	for n := 0; n <= 2200; n++ {
		lens = append(lens, n)
	}
	lens = append(lens, 4031, 4032, 4033, 9000, 65535, 65536, 70001)
	for _, n := range lens {
		for off := range 16 {
			if off > 0 && n > 2200 && off != 7 {
				continue
			}
			p := buf[off : off+n]
			for _, init := range []uint32{0, 0xffffffff, 0x1234abcd} {
				if got, want := Update(init, p), crc32.Update(init, table, p); got != want {
					t.Fatalf("Update(%#x, %d octets at offset %d) = %#08x, want %#08x", init, n, off, got, want)
				}
			}
		}
	}
}

// TestPieces checks that summing a buffer piece by piece, cut anywhere,
// gives the checksum of the whole (as flows does across TCP segments).
func TestPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	p := make([]byte, 3000)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	want := crc32.Checksum(p, table)
	for cut := 0; cut <= len(p); cut += 7 {
		if got := Update(Checksum(p[:cut]), p[cut:]); got != want {
			t.Fatalf("cut at %d: %#08x, want %#08x", cut, got, want)
		}
	}
}

func TestAllocs(t *testing.T) {
	p := make([]byte, 1460)
	if n := testing.AllocsPerRun(100, func() { sink += Checksum(p) }); n != 0 {
		t.Errorf("Checksum allocates %v times per call", n)
	}
}

func TestXPow(t *testing.T) {
	// x^32 mod P is P's low 32 terms: the polynomial itself, reflected.
	if got := xPow(32); got != poly {
		t.Errorf("xPow(32) = %#08x, want %#08x", got, uint32(poly))
	}
	if got := xPow(0); got != 1<<31 {
		t.Errorf("xPow(0) = %#08x, want 0x80000000", got)
	}
}

func FuzzUpdate(f *testing.F) {
	f.Add(uint32(0), []byte("123456789"))
	f.Add(uint32(0xffffffff), make([]byte, 64))
	f.Add(uint32(7), make([]byte, 255))
	f.Add(uint32(9), make([]byte, 256))
	f.Add(uint32(0x80000000), make([]byte, 1460))
	f.Fuzz(func(t *testing.T, init uint32, p []byte) {
		if got, want := Update(init, p), crc32.Update(init, table, p); got != want {
			t.Fatalf("Update(%#x, %d octets) = %#08x, want %#08x", init, len(p), got, want)
		}
	})
}

var sink uint32

func BenchmarkChecksum(b *testing.B) {
	for _, n := range []int{64, 200, 500, 1460, 9000, 65536} {
		p := make([]byte, n+1)[1:] // unaligned, as FPDUs in a capture are
		b.Run(sizeName(n)+"/crc32c", func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				sink += Checksum(p)
			}
		})
		b.Run(sizeName(n)+"/hash-crc32", func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				sink += crc32.Checksum(p, table)
			}
		})
	}
}

func sizeName(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return itoa(n/1024) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

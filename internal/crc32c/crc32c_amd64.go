//go:build amd64 && !purego

package crc32c

import "golang.org/x/sys/cpu"

// foldMin is the shortest buffer foldAVX512 takes.
const foldMin = 64

// hasFold: the CPU (and the OS, which must save the 512-bit registers) has
// what foldAVX512 uses. Tests may clear it to exercise the generic code.
var hasFold = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VPCLMULQDQ &&
	cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSE42

func accelerated() bool { return hasFold }

func update(crc uint32, p []byte) uint32 {
	if !hasFold || len(p) < foldMin {
		return generic(crc, p)
	}
	return ^foldAVX512(^crc, p, &foldKeys)
}

// foldKey holds the two multipliers that move a 128-bit block F bits
// further along the message, modulo P: x^(F+31) for its first (low) 64 bits
// and x^(F-33) for its last (high) 64 bits. A block's first bit is the
// highest-order coefficient; the product of a 64-bit half and a 32-bit
// multiplier lands 33 bits from where PCLMULQDQ puts it in that layout,
// hence the offsets.
type foldKey [2]uint64

func keyFor(f int) foldKey { return foldKey{uint64(xPow(f + 31)), uint64(xPow(f - 33))} }

// foldKeys, in the order foldAVX512 reads them: 256 octets (four 512-bit
// registers), 64 octets, then 48, 32 and 16 octets for the last register's
// 128-bit lanes.
var foldKeys = [5]foldKey{keyFor(256 * 8), keyFor(64 * 8), keyFor(48 * 8), keyFor(32 * 8), keyFor(16 * 8)}

// foldAVX512 returns the (non-inverted) CRC register after p, from the
// register crc; len(p) >= foldMin. It is in crc32c_amd64.s.
//
//go:noescape
func foldAVX512(crc uint32, p []byte, k *[5]foldKey) uint32

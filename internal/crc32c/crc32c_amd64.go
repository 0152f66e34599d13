//go:build amd64 && !purego

package crc32c

import "golang.org/x/sys/cpu"

// foldMin is the shortest buffer the folding functions take.
const foldMin = 64

// Implementations, in the order update prefers them.
const (
	implAVX512  = iota // fold with four 512-bit accumulators
	implCLMUL          // fold with four 128-bit accumulators
	implGeneric        // hash/crc32
)

// impl is the implementation update uses: the best the CPU (and the OS,
// which must save the wider registers) supports. Tests change it to
// exercise each one this CPU can run.
var impl = best()

func best() int {
	switch {
	case !cpu.X86.HasSSE42 || !cpu.X86.HasSSE41 || !cpu.X86.HasPCLMULQDQ:
		return implGeneric
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VPCLMULQDQ:
		return implAVX512
	}
	return implCLMUL
}

func accelerated() bool { return impl != implGeneric }

func update(crc uint32, p []byte) uint32 {
	if impl == implGeneric {
		return generic(crc, p)
	}
	if len(p) < foldMin {
		return ^short(^crc, p)
	}
	return ^fold(^crc, p, &foldKeys, impl == implAVX512)
}

// short returns the (non-inverted) CRC register after p, from the register
// crc, with the CRC32 instruction (SSE4.2, which every implementation but
// implGeneric has): for the buffers shorter than foldMin, the small FPDUs
// of a message-rate benchmark among them, where hash/crc32's checks of
// length and alignment cost as much as the octets. It is in
// crc32c_amd64.s.
//
//go:noescape
func short(crc uint32, p []byte) uint32

// foldKey holds the two multipliers that move a 128-bit block F bits
// further along the message, modulo P: x^(F+31) for its first (low) 64 bits
// and x^(F-33) for its last (high) 64 bits. A block's first bit is the
// highest-order coefficient; the product of a 64-bit half and a 32-bit
// multiplier lands 33 bits from where PCLMULQDQ puts it in that layout,
// hence the offsets.
type foldKey [2]uint64

func keyFor(f int) foldKey { return foldKey{uint64(xPow(f + 31)), uint64(xPow(f - 33))} }

// foldKeys, in the order the folding functions read them: 256 octets, 64
// octets, then 48, 32 and 16 octets.
var foldKeys = [5]foldKey{keyFor(256 * 8), keyFor(64 * 8), keyFor(48 * 8), keyFor(32 * 8), keyFor(16 * 8)}

// fold returns the (non-inverted) CRC register after p, from the register
// crc, len(p) >= foldMin: with AVX-512 registers if avx512, with SSE ones
// if not. It is in crc32c_amd64.s.
//
//go:noescape
func fold(crc uint32, p []byte, k *[5]foldKey, avx512 bool) uint32

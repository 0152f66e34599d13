// Package crc32c computes the CRC-32C (Castagnoli) checksum MPA puts at the
// end of every FPDU (RFC 5044 §4.4) and SCTP in every packet (RFC 9260
// §6.8): the same value as hash/crc32 with the Castagnoli table.
//
// It is written by hand, in assembly on amd64, because hash/crc32 is slow
// on FPDU-sized buffers: its Castagnoli code runs the CRC32 instruction on
// three streams only over fixed 504- and 4032-octet blocks and on one
// stream for the rest, 7-9 GB/s on a 1460-octet FPDU on the machine this
// was measured on (a Xeon with AVX-512), where checksumming was a tenth of
// a one-worker decode. No maintained Go library does better (klauspost/crc32
// keeps hash/crc32's Castagnoli code and leaves its AVX-512 one disabled).
//
// Buffers of 64 octets or more are folded with carry-less multiplication
// (the method of Intel's "Fast CRC Computation for Generic Polynomials Using
// PCLMULQDQ Instruction", in its bit-reflected form), then reduced with the
// CRC32 instruction:
//   - with AVX-512 and VPCLMULQDQ, 256 octets at a time in four 512-bit
//     registers: a 1460-octet buffer in about 34 ns (43 GB/s) instead of
//     157 ns;
//   - with PCLMULQDQ alone (x86-64 CPUs since 2010), 64 octets at a time in
//     four 128-bit registers: about 100 ns (14 GB/s).
//
// Shorter buffers, other architectures and the purego build tag use
// hash/crc32.
package crc32c

import "hash/crc32"

// poly is the Castagnoli polynomial, bit-reflected.
const poly = 0x82F63B78

var table = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC-32C of p.
func Checksum(p []byte) uint32 { return update(0, p) }

// Update returns the CRC-32C of the octets crc covered followed by p, as
// crc32.Update does: Update(Checksum(x), y) == Checksum(x+y) and
// Update(0, x) == Checksum(x).
func Update(crc uint32, p []byte) uint32 { return update(crc, p) }

// generic is the portable implementation.
func generic(crc uint32, p []byte) uint32 { return crc32.Update(crc, table, p) }

// xPow returns x^e mod P for the Castagnoli polynomial P, bit-reflected as
// CRC registers are (bit i is the coefficient of x^(31-i)).
func xPow(e int) uint32 {
	r := uint32(1) << 31 // x^0
	for range e {
		if r&1 != 0 {
			r = r>>1 ^ poly
		} else {
			r >>= 1
		}
	}
	return r
}

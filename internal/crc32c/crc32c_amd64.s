//go:build amd64 && !purego

#include "textflag.h"

// FOLD moves the 128-bit blocks of acc (one per 128-bit lane) on by the
// distance of the keys in k (see foldKey) and XORs src into them:
// acc = clmul(acc.lo, k.lo) ^ clmul(acc.hi, k.hi) ^ src. tmp is clobbered;
// src may be memory.
#define FOLD(k, acc, tmp, src) \
	VPCLMULQDQ $0x00, k, acc, tmp \
	VPCLMULQDQ $0x11, k, acc, acc \
	VPTERNLOGQ $0x96, src, tmp, acc

// FOLDIN is FOLD with dst also the third operand: dst ^= the folded acc.
#define FOLDIN(k, acc, tmp, dst) \
	VPCLMULQDQ $0x00, k, acc, tmp \
	VPCLMULQDQ $0x11, k, acc, acc \
	VPTERNLOGQ $0x96, tmp, acc, dst

// SSEFOLD is FOLD for SSE registers (foldCLMUL): acc = the folded acc ^ src
// (a register).
#define SSEFOLD(k, acc, tmp, src) \
	MOVO      acc, tmp \
	PCLMULQDQ $0x00, k, tmp \
	PCLMULQDQ $0x11, k, acc \
	PXOR      tmp, acc \
	PXOR      src, acc

// func fold(crc uint32, p []byte, k *[5]foldKey, avx512 bool) uint32
//
// With avx512, the message (len(p) >= 64) is folded into four 512-bit
// accumulators 256 octets at a time, the four into one, 64 octets at a
// time after that, its four 128-bit lanes into one, 16 octets at a time
// after that; without, the same with four 128-bit accumulators 64 octets at
// a time (sse64). The CRC32 instruction then reduces the last 128 bits and
// takes the last 0-15 octets. The initial register is XORed into the first
// four octets (a CRC register is the pending remainder of the next 32
// message bits).
TEXT ·fold(SB), NOSPLIT, $0-52
	MOVL  crc+0(FP), AX
	MOVQ  p_base+8(FP), SI
	MOVQ  p_len+16(FP), CX
	MOVQ  k+32(FP), DX
	CMPB  avx512+40(FP), $0
	JEQ   sse
	VMOVQ AX, X4 // VEX: clears the rest of Z4
	CMPQ  CX, $256
	JB    one

	VMOVDQU64       0(SI), Z0
	VMOVDQU64       64(SI), Z1
	VMOVDQU64       128(SI), Z2
	VMOVDQU64       192(SI), Z3
	VPXORQ          Z4, Z0, Z0
	ADDQ            $256, SI
	SUBQ            $256, CX
	VBROADCASTI32X4 0(DX), Z5 // 256 octets on

loop256:
	CMPQ CX, $256
	JB   four
	FOLD(Z5, Z0, Z6, 0(SI))
	FOLD(Z5, Z1, Z7, 64(SI))
	FOLD(Z5, Z2, Z8, 128(SI))
	FOLD(Z5, Z3, Z9, 192(SI))
	ADDQ $256, SI
	SUBQ $256, CX
	JMP  loop256

four:
	// Z0 into Z1, Z1 into Z2, Z2 into Z3: 64 octets on each time.
	VBROADCASTI32X4 16(DX), Z5
	FOLDIN(Z5, Z0, Z6, Z1)
	FOLDIN(Z5, Z1, Z6, Z2)
	FOLDIN(Z5, Z2, Z6, Z3)
	JMP             loop64

one:
	// 64 to 255 octets: one accumulator.
	VMOVDQU64       0(SI), Z3
	VPXORQ          Z4, Z3, Z3
	ADDQ            $64, SI
	SUBQ            $64, CX
	VBROADCASTI32X4 16(DX), Z5

loop64:
	CMPQ CX, $64
	JB   lanes
	FOLD(Z5, Z3, Z6, 0(SI))
	ADDQ $64, SI
	SUBQ $64, CX
	JMP  loop64

lanes:
	// Lane 0 is 48 octets before lane 3, lane 1 32, lane 2 16.
	VEXTRACTI32X4 $0, Z3, X0
	VEXTRACTI32X4 $1, Z3, X1
	VEXTRACTI32X4 $2, Z3, X2
	VEXTRACTI32X4 $3, Z3, X3
	VMOVDQU       32(DX), X5
	FOLDIN(X5, X0, X6, X3)
	VMOVDQU       48(DX), X5
	FOLDIN(X5, X1, X6, X3)
	VMOVDQU       64(DX), X5
	FOLDIN(X5, X2, X6, X3)

loop16:
	CMPQ CX, $16
	JB   reduce
	FOLD(X5, X3, X6, 0(SI))
	ADDQ $16, SI
	SUBQ $16, CX
	JMP  loop16

reduce:
	VZEROUPPER
	JMP reduce128

sse:
	// SSE registers, for CPUs without AVX-512.
	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	MOVQ  AX, X4 // clears the upper 64 bits
	PXOR  X4, X0
	ADDQ  $64, SI
	SUBQ  $64, CX
	MOVOU 16(DX), X5 // 64 octets on

sse64:
	CMPQ  CX, $64
	JB    sse4
	MOVOU 0(SI), X10
	MOVOU 16(SI), X11
	MOVOU 32(SI), X12
	MOVOU 48(SI), X13
	SSEFOLD(X5, X0, X6, X10)
	SSEFOLD(X5, X1, X7, X11)
	SSEFOLD(X5, X2, X8, X12)
	SSEFOLD(X5, X3, X9, X13)
	ADDQ  $64, SI
	SUBQ  $64, CX
	JMP   sse64

sse4:
	// X0 is 48 octets before X3, X1 32, X2 16.
	MOVOU 32(DX), X5
	SSEFOLD(X5, X0, X6, X3)
	MOVO  X0, X3
	MOVOU 48(DX), X5
	SSEFOLD(X5, X1, X6, X3)
	MOVO  X1, X3
	MOVOU 64(DX), X5
	SSEFOLD(X5, X2, X6, X3)
	MOVO  X2, X3

sse16:
	CMPQ  CX, $16
	JB    reduce128
	MOVOU 0(SI), X7
	SSEFOLD(X5, X3, X6, X7)
	ADDQ  $16, SI
	SUBQ  $16, CX
	JMP   sse16

reduce128:
	// The CRC register after the folded 128 bits, from 0, then after the
	// last 0-15 octets.
	MOVQ   X3, R8
	PEXTRQ $1, X3, R9
	XORL   AX, AX
	CRC32Q R8, AX
	CRC32Q R9, AX
	CMPQ   CX, $8
	JB     tail4
	CRC32Q (SI), AX
	ADDQ   $8, SI
	SUBQ   $8, CX
tail4:
	CMPQ   CX, $4
	JB     tail2
	CRC32L (SI), AX
	ADDQ   $4, SI
	SUBQ   $4, CX
tail2:
	CMPQ   CX, $2
	JB     tail1
	CRC32W (SI), AX
	ADDQ   $2, SI
	SUBQ   $2, CX
tail1:
	CMPQ   CX, $1
	JB     done
	CRC32B (SI), AX
done:
	MOVL AX, ret+48(FP)
	RET

// func short(crc uint32, p []byte) uint32
//
// The CRC register after p from the register crc, with the SSE4.2 CRC32
// instruction: 8 octets at a time, then one at a time. For buffers shorter
// than foldMin, where hash/crc32's checks of length and alignment cost as
// much as the octets.
TEXT ·short(SB), NOSPLIT, $0-36
	MOVL crc+0(FP), AX
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX

short8:
	CMPQ   CX, $8
	JB     short1
	CRC32Q (SI), AX
	ADDQ   $8, SI
	SUBQ   $8, CX
	JMP    short8

short1:
	TESTQ  CX, CX
	JZ     shortdone
	CRC32B (SI), AX
	INCQ   SI
	DECQ   CX
	JMP    short1

shortdone:
	MOVL AX, ret+32(FP)
	RET

//go:build amd64 && !purego

#include "textflag.h"

// func foldAVX512(crc uint32, p []byte, k *[5]foldKey) uint32
//
// The message is folded into four 512-bit accumulators 256 octets at a
// time, the four into one, 64 octets at a time after that, its four 128-bit
// lanes into one, 16 octets at a time after that; the CRC32 instruction then
// reduces the last 128 bits, and takes the last 0-15 octets. The initial
// register is XORed into the first four octets (a CRC register is the next
// 32 message bits' pending remainder).
TEXT ·foldAVX512(SB), NOSPLIT, $0-44
	MOVL crc+0(FP), AX
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	MOVQ k+32(FP), DX
	VMOVQ AX, X4              // VEX: clears the rest of Z4
	CMPQ CX, $256
	JB   one

	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VPXORQ    Z4, Z0, Z0
	ADDQ      $256, SI
	SUBQ      $256, CX
	VBROADCASTI32X4 0(DX), Z5 // 256 octets on

loop256:
	CMPQ CX, $256
	JB   four
	VPCLMULQDQ $0x00, Z5, Z0, Z6
	VPCLMULQDQ $0x11, Z5, Z0, Z0
	VPTERNLOGQ $0x96, 0(SI), Z6, Z0
	VPCLMULQDQ $0x00, Z5, Z1, Z7
	VPCLMULQDQ $0x11, Z5, Z1, Z1
	VPTERNLOGQ $0x96, 64(SI), Z7, Z1
	VPCLMULQDQ $0x00, Z5, Z2, Z8
	VPCLMULQDQ $0x11, Z5, Z2, Z2
	VPTERNLOGQ $0x96, 128(SI), Z8, Z2
	VPCLMULQDQ $0x00, Z5, Z3, Z9
	VPCLMULQDQ $0x11, Z5, Z3, Z3
	VPTERNLOGQ $0x96, 192(SI), Z9, Z3
	ADDQ $256, SI
	SUBQ $256, CX
	JMP  loop256

four:
	// Z0 into Z1, Z1 into Z2, Z2 into Z3: 64 octets on each time.
	VBROADCASTI32X4 16(DX), Z5
	VPCLMULQDQ $0x00, Z5, Z0, Z6
	VPCLMULQDQ $0x11, Z5, Z0, Z0
	VPTERNLOGQ $0x96, Z6, Z0, Z1
	VPCLMULQDQ $0x00, Z5, Z1, Z6
	VPCLMULQDQ $0x11, Z5, Z1, Z1
	VPTERNLOGQ $0x96, Z6, Z1, Z2
	VPCLMULQDQ $0x00, Z5, Z2, Z6
	VPCLMULQDQ $0x11, Z5, Z2, Z2
	VPTERNLOGQ $0x96, Z6, Z2, Z3
	JMP loop64

one:
	// 64 to 255 octets: one accumulator.
	VMOVDQU64 0(SI), Z3
	VPXORQ    Z4, Z3, Z3
	ADDQ      $64, SI
	SUBQ      $64, CX
	VBROADCASTI32X4 16(DX), Z5

loop64:
	CMPQ CX, $64
	JB   lanes
	VPCLMULQDQ $0x00, Z5, Z3, Z6
	VPCLMULQDQ $0x11, Z5, Z3, Z3
	VPTERNLOGQ $0x96, 0(SI), Z6, Z3
	ADDQ $64, SI
	SUBQ $64, CX
	JMP  loop64

lanes:
	// Lane 0 is 48 octets before lane 3, lane 1 32, lane 2 16.
	VEXTRACTI32X4 $0, Z3, X0
	VEXTRACTI32X4 $1, Z3, X1
	VEXTRACTI32X4 $2, Z3, X2
	VEXTRACTI32X4 $3, Z3, X3
	VMOVDQU    32(DX), X5
	VPCLMULQDQ $0x00, X5, X0, X6
	VPCLMULQDQ $0x11, X5, X0, X0
	VPTERNLOGQ $0x96, X6, X0, X3
	VMOVDQU    48(DX), X5
	VPCLMULQDQ $0x00, X5, X1, X6
	VPCLMULQDQ $0x11, X5, X1, X1
	VPTERNLOGQ $0x96, X6, X1, X3
	VMOVDQU    64(DX), X5
	VPCLMULQDQ $0x00, X5, X2, X6
	VPCLMULQDQ $0x11, X5, X2, X2
	VPTERNLOGQ $0x96, X6, X2, X3

loop16:
	CMPQ CX, $16
	JB   reduce
	VPCLMULQDQ $0x00, X5, X3, X6
	VPCLMULQDQ $0x11, X5, X3, X3
	VPTERNLOGQ $0x96, 0(SI), X6, X3
	ADDQ $16, SI
	SUBQ $16, CX
	JMP  loop16

reduce:
	// The CRC register after the folded 128 bits, from 0.
	VMOVQ   X3, R8
	VPEXTRQ $1, X3, R9
	VZEROUPPER
	XORL    AX, AX
	CRC32Q  R8, AX
	CRC32Q  R9, AX

	// The last 0-15 octets.
	CMPQ CX, $8
	JB   tail4
	CRC32Q (SI), AX
	ADDQ   $8, SI
	SUBQ   $8, CX
tail4:
	CMPQ CX, $4
	JB   tail2
	CRC32L (SI), AX
	ADDQ   $4, SI
	SUBQ   $4, CX
tail2:
	CMPQ CX, $2
	JB   tail1
	CRC32W (SI), AX
	ADDQ   $2, SI
	SUBQ   $2, CX
tail1:
	CMPQ CX, $1
	JB   done
	CRC32B (SI), AX
done:
	MOVL AX, ret+40(FP)
	RET

// func foldCLMUL(crc uint32, p []byte, k *[5]foldKey) uint32
//
// foldAVX512 with SSE registers, for CPUs without AVX-512: four 128-bit
// accumulators folded 64 octets at a time, then into one, then 16 octets at
// a time, then the same reduction and tail.
TEXT ·foldCLMUL(SB), NOSPLIT, $0-44
	MOVL  crc+0(FP), AX
	MOVQ  p_base+8(FP), SI
	MOVQ  p_len+16(FP), CX
	MOVQ  k+32(FP), DX
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
	CMPQ      CX, $64
	JB        sse4
	MOVO      X0, X6
	MOVO      X1, X7
	MOVO      X2, X8
	MOVO      X3, X9
	PCLMULQDQ $0x00, X5, X6
	PCLMULQDQ $0x11, X5, X0
	PCLMULQDQ $0x00, X5, X7
	PCLMULQDQ $0x11, X5, X1
	PCLMULQDQ $0x00, X5, X8
	PCLMULQDQ $0x11, X5, X2
	PCLMULQDQ $0x00, X5, X9
	PCLMULQDQ $0x11, X5, X3
	MOVOU     0(SI), X10
	MOVOU     16(SI), X11
	MOVOU     32(SI), X12
	MOVOU     48(SI), X13
	PXOR      X6, X0
	PXOR      X7, X1
	PXOR      X8, X2
	PXOR      X9, X3
	PXOR      X10, X0
	PXOR      X11, X1
	PXOR      X12, X2
	PXOR      X13, X3
	ADDQ      $64, SI
	SUBQ      $64, CX
	JMP       sse64

sse4:
	// X0 is 48 octets before X3, X1 32, X2 16.
	MOVOU     32(DX), X5
	MOVO      X0, X6
	PCLMULQDQ $0x00, X5, X6
	PCLMULQDQ $0x11, X5, X0
	PXOR      X6, X3
	PXOR      X0, X3
	MOVOU     48(DX), X5
	MOVO      X1, X6
	PCLMULQDQ $0x00, X5, X6
	PCLMULQDQ $0x11, X5, X1
	PXOR      X6, X3
	PXOR      X1, X3
	MOVOU     64(DX), X5
	MOVO      X2, X6
	PCLMULQDQ $0x00, X5, X6
	PCLMULQDQ $0x11, X5, X2
	PXOR      X6, X3
	PXOR      X2, X3

sse16:
	CMPQ      CX, $16
	JB        ssereduce
	MOVO      X3, X6
	PCLMULQDQ $0x00, X5, X6
	PCLMULQDQ $0x11, X5, X3
	MOVOU     0(SI), X7
	PXOR      X6, X3
	PXOR      X7, X3
	ADDQ      $16, SI
	SUBQ      $16, CX
	JMP       sse16

ssereduce:
	MOVQ   X3, R8
	PEXTRQ $1, X3, R9
	XORL   AX, AX
	CRC32Q R8, AX
	CRC32Q R9, AX
	CMPQ   CX, $8
	JB     ssetail4
	CRC32Q (SI), AX
	ADDQ   $8, SI
	SUBQ   $8, CX
ssetail4:
	CMPQ   CX, $4
	JB     ssetail2
	CRC32L (SI), AX
	ADDQ   $4, SI
	SUBQ   $4, CX
ssetail2:
	CMPQ   CX, $2
	JB     ssetail1
	CRC32W (SI), AX
	ADDQ   $2, SI
	SUBQ   $2, CX
ssetail1:
	CMPQ   CX, $1
	JB     ssedone
	CRC32B (SI), AX
ssedone:
	MOVL AX, ret+40(FP)
	RET

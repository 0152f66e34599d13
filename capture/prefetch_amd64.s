//go:build amd64 && !purego

#include "textflag.h"

// func prefetch(p *byte, n int)
// PREFETCHT0 of every 64-octet line of p[:n] (n > 0); a prefetch never
// faults.
TEXT ·prefetch(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	ADDQ AX, CX
loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, CX
	JB   loop
	RET

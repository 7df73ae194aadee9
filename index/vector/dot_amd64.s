#include "textflag.h"

// func dotInt8AVX2(a, b *int8, n int) int32
// Sign-extends 16 int8s to int16 (VPMOVSXBW), multiplies and adds pairs into
// int32 lanes (VPMADDWD), two accumulators, 32 elements per iteration.
TEXT ·dotInt8AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y5, Y5, Y5
	TESTQ CX, CX
	JZ    done

loop:
	VPMOVSXBW (SI), Y1
	VPMOVSXBW (DI), Y2
	VPMOVSXBW 16(SI), Y3
	VPMOVSXBW 16(DI), Y4
	VPMADDWD  Y1, Y2, Y1
	VPMADDWD  Y3, Y4, Y3
	VPADDD    Y1, Y0, Y0
	VPADDD    Y3, Y5, Y5
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JNZ       loop

done:
	VPADDD       Y5, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	VZEROUPPER
	MOVL         AX, ret+24(FP)
	RET

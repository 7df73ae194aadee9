package vector

import "golang.org/x/sys/cpu"

var useAVX2 = cpu.X86.HasAVX2

// dotInt8AVX2 returns the dot product of n int8s at a and b; n is a multiple of 32.
//
//go:noescape
func dotInt8AVX2(a, b *int8, n int) int32

// dotInt8 returns the dot product of a and b, whose equal length is a multiple of 32.
func dotInt8(a, b []int8) int32 {
	if useAVX2 && len(a) > 0 && len(a) == len(b) && len(a)%32 == 0 {
		return dotInt8AVX2(&a[0], &b[0], len(a))
	}
	return dotInt8Go(a, b)
}

package vector

import "math"

// quantize writes v scaled to int8 into dst (whose tail beyond len(v) is
// zeroed) and returns the scale that maps it back: v[i] ≈ dst[i]*scale.
func quantize(dst []int8, v []float32) float32 {
	var maxAbs float32
	for _, f := range v {
		maxAbs = max(maxAbs, abs32(f))
	}
	clear(dst)
	if maxAbs == 0 {
		return 0
	}
	inv := 127 / maxAbs
	for i, f := range v {
		dst[i] = int8(math.Round(float64(f * inv)))
	}
	return maxAbs / 127
}

func abs32(f float32) float32 {
	return math.Float32frombits(math.Float32bits(f) &^ (1 << 31))
}

// dotInt8Go is the portable int8 dot product; a and b have equal length.
func dotInt8Go(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
		s2 += int32(a[i+2]) * int32(b[i+2])
		s3 += int32(a[i+3]) * int32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

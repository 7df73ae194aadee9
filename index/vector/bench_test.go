package vector

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkIndex_Search measures single-query latency of the exact and the
// quantized scan over clustered 384-dim vectors, reporting p50/p99 in ms and,
// for the quantized scan, recall@10 against the exact scan of the same index.
// The 1M case needs about 2 GB; run it with a fixed count, e.g.
//
//	go test -run '^$' -bench Index_Search -benchtime 200x ./index/vector
func BenchmarkIndex_Search(b *testing.B) {
	const dims, k = 384, 10
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			if testing.Short() && n > 100_000 {
				b.Skip("-short")
			}
			c := newClusters(uint64(n), dims, n/500, 0.75)
			x := NewQuantized(dims, DefaultRescore) // holds both the float32 and the int8 matrix
			x.Reserve(n)
			v := make([]float32, dims)
			for i := range n {
				c.fill(v)
				if err := x.Upsert(uint64(i+1), v); err != nil {
					b.Fatal(err)
				}
			}
			qs := make([][]float32, 256)
			for i := range qs {
				qs[i] = make([]float32, dims)
				c.fill(qs[i])
			}
			for _, mode := range []string{"exact", "quantized"} {
				b.Run(mode, func(b *testing.B) {
					search := x.SearchExact
					if mode == "quantized" {
						search = x.Search
					}
					lat := make([]time.Duration, 0, b.N)
					b.ResetTimer()
					for i := range b.N {
						t0 := time.Now()
						if _, err := search(qs[i%len(qs)], k, nil); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(t0))
					}
					b.StopTimer()
					slices.Sort(lat)
					ms := func(p float64) float64 {
						return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond)
					}
					b.ReportMetric(ms(0.50), "p50-ms")
					b.ReportMetric(ms(0.99), "p99-ms")
					if mode == "quantized" {
						var sum float64
						const nq = 50
						for _, q := range qs[:nq] {
							exact, _ := x.SearchExact(q, k, nil)
							approx, _ := x.Search(q, k, nil)
							sum += recallAt(exact, approx)
						}
						b.ReportMetric(sum/nq, "recall@10")
					}
				})
			}
		})
	}
}

// BenchmarkIndex_Upsert measures appending new vectors.
func BenchmarkIndex_Upsert(b *testing.B) {
	const dims = 384
	for _, quant := range []bool{false, true} {
		b.Run(fmt.Sprintf("quantize=%v", quant), func(b *testing.B) {
			r := rng(1)
			x := NewWithOptions(dims, Options{Quantize: quant})
			v := make([]float32, dims)
			r.fillRandom(v)
			b.ReportAllocs()
			for i := range b.N {
				if err := x.Upsert(uint64(i), v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

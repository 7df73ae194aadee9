package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ctxd/ctxd/internal/testchunk"
	"github.com/ctxd/ctxd/vfs"
)

// BenchmarkEngine_FindSimilar measures FindSimilar of a text's vectors
// (1 and 16 chunks: each is one scan of the vector index) over
// CTXD_BENCH_SIMILAR_ITEMS one-chunk items (default 10,000) of random
// 384-dimensional vectors, the store's model's size.
func BenchmarkEngine_FindSimilar(b *testing.B) {
	const model, dims = "bench-384", 384
	n := 10_000
	if s := os.Getenv("CTXD_BENCH_SIMILAR_ITEMS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("CTXD_BENCH_SIMILAR_ITEMS: %v", err)
		}
	}
	dir := b.TempDir()
	s, err := vfs.Open(filepath.Join(dir, "ctxd.db"), vfs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.SetIndexing(ctx, testchunk.Paragraphs{}, model); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	vec := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	for i := range n {
		_, err := s.Write(ctx, vfs.WriteParams{Ref: vfs.Ref{Drive: "notes", Path: fmt.Sprintf("/n%d.md", i)},
			Content: fmt.Appendf(nil, "note %d", i), IsText: true,
			Embeddings: &vfs.Embeddings{Model: model, Vectors: [][]float32{vec()}}})
		if err != nil {
			b.Fatal(err)
		}
	}
	eng, err := Open(s, Options{Dir: filepath.Join(dir, "index")})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	eng.SetModel(model, dims)
	for deadline := time.Now().Add(5 * time.Minute); eng.State().VectorChunks < int64(n); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("vector leg stuck at %+v", eng.State())
		}
	}
	for _, chunks := range []int{1, 16} {
		targets := make([][]float32, chunks)
		for i := range targets {
			targets[i] = vec()
		}
		b.Run(fmt.Sprintf("items=%d/chunks=%d", n, chunks), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := eng.FindSimilar(ctx, SimilarRequest{Vectors: targets}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package storecopy_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxd/ctxd/internal/testchunk"
	"github.com/ctxd/ctxd/vfs"
	"github.com/ctxd/ctxd/vfs/storecopy"
)

// BenchmarkCopy copies a store of CTXD_BENCH_MIGRATE_ITEMS items (default
// 10,000; three chunks each with a 384-dimensional vector, and a second
// revision of every tenth) from bbolt into a new bbolt file and into
// PostgreSQL, in batches of CTXD_BENCH_MIGRATE_BATCH_KEYS keys (default
// DefaultBatchKeys), then verifies the copy.
// It reports keys/s and MB/s of the copy, the seconds of Verify, and the
// PostgreSQL copy's speed as a fraction of bbolt's in the same run.
func BenchmarkCopy(b *testing.B) {
	n := envCount(b, "CTXD_BENCH_MIGRATE_ITEMS", 10_000)
	batchKeys := envCount(b, "CTXD_BENCH_MIGRATE_BATCH_KEYS", storecopy.DefaultBatchKeys)
	srcPath := benchSource(b, n)
	src := openBolt(b, srcPath)
	rates := map[string]float64{}
	for _, dest := range destinations {
		b.Run(fmt.Sprintf("to=%s/items=%d/batch=%d", dest.name, n, batchKeys), func(b *testing.B) {
			var keys, bytes int64
			var copying, verifying time.Duration
			for b.Loop() {
				b.StopTimer()
				dst := dest.open(b)
				b.StartTimer()
				start := time.Now()
				rep, err := storecopy.Copy(ctx, src, dst, storecopy.Options{BatchKeys: batchKeys})
				if err != nil {
					b.Fatal(err)
				}
				copying += time.Since(start)
				keys, bytes = keys+rep.Copied.Keys+rep.Copied.Buckets, bytes+rep.Copied.Bytes
				b.StopTimer()
				start = time.Now()
				if _, err := storecopy.Verify(ctx, src, dst); err != nil {
					b.Fatal(err)
				}
				verifying += time.Since(start)
				dst.Close()
				b.StartTimer()
			}
			rates[dest.name] = float64(keys) / copying.Seconds()
			b.ReportMetric(rates[dest.name], "keys/s")
			b.ReportMetric(float64(bytes)/1e6/copying.Seconds(), "MB/s")
			b.ReportMetric(verifying.Seconds()/float64(b.N), "verify-s")
			b.ReportMetric(float64(keys)/float64(b.N), "keys")
			b.ReportMetric(0, "ns/op")
		})
	}
	if rates["bolt"] > 0 && rates["postgres"] > 0 {
		fmt.Printf("copy keys/s postgres/bolt=%.3f\n", rates["postgres"]/rates["bolt"])
	}
}

// envCount reads a positive count from the environment variable name.
func envCount(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive count", name, v)
	}
	return n
}

// benchSource writes the benchmark's source store.
func benchSource(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "src.db")
	s, err := vfs.Open(path, vfs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.SetIndexing(ctx, testchunk.Paragraphs{}, testModel); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("store copy bucket key value migrate postgres bbolt replica index vector chunk history revision outbox sequence batch verify agent memory")
	para := func() string {
		var sb strings.Builder
		for range 40 + rng.IntN(40) {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		return sb.String()
	}
	const perBatch = 200
	for start := 0; start < n; start += perBatch {
		var ps []vfs.WriteParams
		for i := start; i < min(n, start+perBatch); i++ {
			ref, _ := vfs.ParseRef(fmt.Sprintf("agent:/bench/%03d/item-%06d.md", i%500, i))
			ps = append(ps, vfs.WriteParams{Ref: ref, IsText: true, Content: []byte(para() + "\n\n" + para() + "\n\n" + para() + "\n")})
			if i%10 == 0 {
				ps = append(ps, vfs.WriteParams{Ref: ref, IsText: true, OnConflict: vfs.ConflictOverwrite, Content: []byte(para() + "\n\n" + para() + "\n")})
			}
		}
		if _, err := s.WriteBatch(ctx, ps); err != nil {
			b.Fatal(err)
		}
		for {
			pending, err := s.PendingEmbeddings(ctx, 1000)
			if err != nil {
				b.Fatal(err)
			}
			if len(pending) == 0 {
				break
			}
			vecs := make([][]float32, len(pending))
			for i := range vecs {
				vecs[i] = make([]float32, 384)
				for j := range vecs[i] {
					vecs[i][j] = rng.Float32() - 0.5
				}
			}
			if err := s.SaveEmbeddings(ctx, testModel, pending, vecs); err != nil {
				b.Fatal(err)
			}
		}
	}
	return path
}

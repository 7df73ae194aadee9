package vfs

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxd/ctxd/internal/pgtest"
)

// openBenchStore opens a store with history on, on backend: "bolt" (a file
// in b's temporary directory) or "postgres" (a private database), closed
// when b ends.
func openBenchStore(b *testing.B, backend string) *Store {
	b.Helper()
	loc := filepath.Join(b.TempDir(), "ctxd.db")
	if backend == "postgres" {
		loc = pgtest.NewDatabase(b)
	}
	s, err := Open(loc, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkBackends_Write16 is durable item write throughput with 16
// concurrent writers, on bbolt and on PostgreSQL in the same run (the
// store alone; the daemon's figures are in daemon's BenchmarkReplicas).
func BenchmarkBackends_Write16(b *testing.B) {
	body := strings.Repeat(strings.Repeat("z", 63)+"\n", 16) // 1 KiB
	for _, backend := range []string{"bolt", "postgres"} {
		b.Run("backend="+backend, func(b *testing.B) {
			s := openBenchStore(b, backend)
			var next atomic.Int64
			var wg sync.WaitGroup
			var failed atomic.Value
			b.ResetTimer()
			start := time.Now()
			for w := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						_, err := s.Write(ctx, WriteParams{Ref: Ref{Drive: "bench", Path: fmt.Sprintf("/w%d/%d.md", w, i)}, Content: []byte(body), IsText: true})
						if err != nil {
							failed.Store(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if err, _ := failed.Load().(error); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "writes/s")
		})
	}
}

package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/benchenv"
)

// BenchmarkReplicas_Lag measures replication lag as a team meets it: two
// replica processes (`ctxd serve --store postgres://...`) on one
// PostgreSQL, a server of the benchmark's own. CTXD_BENCH_WRITERS (default
// 16) writers share CTXD_BENCH_WRITES (default 2000) notes: each writes a
// note through replica A and, once A acknowledged it, searches replica B
// (BM25) for the note's own word. The lag is the time from A's
// acknowledgement to B's answer holding the note; B's search first waits
// for its indexes to apply what the store had committed (index_wait, 1 s),
// and a note it then does not return is a miss. It runs once regardless of
// b.N (-benchtime=1x) and reports lag-p50-ms, lag-p99-ms, lag-max-ms,
// misses, and the writes/s A acknowledged meanwhile. The goal is lag p99 <=
// 1 s with no miss.
func BenchmarkReplicas_Lag(b *testing.B) {
	writers := benchenv.Int(b, "CTXD_BENCH_WRITERS", 16)
	writes := benchenv.Int(b, "CTXD_BENCH_WRITES", 2000)
	_, url := pgStore(b)
	conns := make([]ctxdv1.VfsServiceClient, 2)
	var search ctxdv1.SearchServiceClient
	for i := range 2 {
		dir := shortTempDir(b)
		socket := filepath.Join(dir, "s.sock")
		startProcess(b, filepath.Join(dir, "data"), socket, "--store", url)
		conn := dial(b, "unix://"+socket)
		conns[i], search = ctxdv1.NewVfsServiceClient(conn), ctxdv1.NewSearchServiceClient(conn)
	}
	a := conns[0]

	var lag latencies
	var misses atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	start := time.Now()
	for range writers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < writes; i = int(next.Add(1)) - 1 {
				word := fmt.Sprintf("lagnote%06dx", i)
				ref := fmt.Sprintf("lag:/n%06d.md", i)
				if _, err := a.Write(context.Background(), &ctxdv1.WriteRequest{Ref: ref,
					Body: &ctxdv1.WriteRequest_Content{Content: "a note about " + word + "\n"}}); err != nil {
					errs <- fmt.Errorf("write %s through A: %w", ref, err)
					return
				}
				acked := time.Now()
				resp, err := search.Search(context.Background(), &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Limit: 1,
					Queries: []*ctxdv1.SearchQuery{{Text: word}}})
				if err != nil {
					errs <- fmt.Errorf("search B for %s: %w", word, err)
					return
				}
				lag.add(time.Since(acked))
				if len(resp.Results) == 0 || resp.Results[0].Ref != ref {
					misses.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	slices.Sort(lag.d)
	b.ReportMetric(lag.ms(0.50), "lag-p50-ms")
	b.ReportMetric(lag.ms(0.99), "lag-p99-ms")
	b.ReportMetric(lag.ms(1), "lag-max-ms")
	b.ReportMetric(float64(misses.Load()), "misses")
	b.ReportMetric(float64(writes)/elapsed.Seconds(), "writes/s")
	fmt.Printf("replicas: %d writers, %d notes written through A and searched on B: lag p50 %.1f ms, p99 %.1f ms, max %.1f ms, %d misses; %.0f writes/s\n",
		writers, writes, lag.ms(0.50), lag.ms(0.99), lag.ms(1), misses.Load(), float64(writes)/elapsed.Seconds())
}

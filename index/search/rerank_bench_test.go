package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxd/ctxd/internal/beir"
)

// wikiPassages is the Wikipedia passages corpus beside the repository.
const wikiPassages = "../../../shared/data/wikipedia-passages/corpus.jsonl.gz"

// BenchmarkEngine_Rerank measures what the rerank window costs a search:
// CTXD_BENCH_RERANK_ITEMS Wikipedia passages (default 10,000) as notes, and
// 300 queries of 3 to 8 consecutive words of random passages (fixed seed),
// each searched in BM25 mode with no rerank, with recency only (the window
// is read, nothing is an event), with proximity only and with both, in
// turn, so that the four see the same load. It reports per variant the
// p50, p95 and p99 latency in ms and the p50 against no rerank's, for each
// grouping and for limits 10 and 100. It runs once regardless of b.N
// (-benchtime=1x).
func BenchmarkEngine_Rerank(b *testing.B) {
	n := 10_000
	if s := os.Getenv("CTXD_BENCH_RERANK_ITEMS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("CTXD_BENCH_RERANK_ITEMS: %v", err)
		}
	}
	docs, err := beir.LoadCorpus(wikiPassages, n)
	if err != nil {
		b.Fatalf("%v (the shared data sits beside the repository)", err)
	}
	e := newEnv(b)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(docs); i += 4 {
				e.write(fmt.Sprintf("wiki:/%d.md", i), docs[i].Text)
			}
		})
	}
	wg.Wait()
	e.sync()
	rng := rand.New(rand.NewPCG(1, 2))
	var queries []string
	for len(queries) < 300 {
		words := strings.Fields(docs[rng.IntN(len(docs))].Text)
		k := 3 + rng.IntN(6)
		if len(words) < k {
			continue
		}
		at := rng.IntN(len(words) - k + 1)
		queries = append(queries, strings.Join(words[at:at+k], " "))
	}
	never := func(string, string) bool { return false }
	variants := []struct {
		name string
		prox Toggle
		rec  Recency
	}{
		{"none", ToggleOff, Recency{}},
		{"recency", ToggleOff, Recency{HalfLife: time.Hour, Floor: 0.5, Applies: never}},
		{"proximity", ToggleOn, Recency{}},
		{"both", ToggleOn, Recency{HalfLife: time.Hour, Floor: 0.5, Applies: never}},
	}
	for _, group := range []GroupBy{GroupChunk, GroupItem} {
		for _, limit := range []int{10, 100} {
			b.Run(fmt.Sprintf("items=%d/group=%d/limit=%d", len(docs), group, limit), func(b *testing.B) {
				lat := make([][]float64, len(variants))
				for b.Loop() {
					for _, q := range queries {
						for i, v := range variants {
							req := Request{Queries: []Query{{Text: q}}, Mode: BM25, GroupBy: group, Limit: limit, Proximity: v.prox, Recency: v.rec}
							start := time.Now()
							if _, err := e.eng.Search(context.Background(), req); err != nil {
								b.Fatal(err)
							}
							lat[i] = append(lat[i], float64(time.Since(start).Microseconds())/1000)
						}
					}
				}
				base := percentile(lat[0], 50)
				for i, v := range variants {
					b.ReportMetric(percentile(lat[i], 50), v.name+"-p50-ms")
					b.ReportMetric(percentile(lat[i], 95), v.name+"-p95-ms")
					b.ReportMetric(percentile(lat[i], 99), v.name+"-p99-ms")
					if i > 0 {
						b.ReportMetric(percentile(lat[i], 50)/base, v.name+"/none-p50")
					}
				}
			})
		}
	}
}

// percentile returns the p-th percentile (nearest rank) of xs.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

package embed

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkModel_Embed measures one graph run per iteration for batch sizes
// and input lengths, per model variant (fp32, int8).
func BenchmarkModel_Embed(b *testing.B) {
	for _, variant := range []string{"fp32", "int8"} {
		dir := modelDirs()[variant]
		b.Run(variant, func(b *testing.B) {
			// No token budget: measure the batch sizes as given, even for a
			// graph Open found batch-dependent (int8; it then runs batches of 1).
			m := mustOpenModel(b, dir, Options{MaxBatch: 64, MaxBatchTokens: 64 * 128})
			if m.Options().MaxBatch != 64 {
				b.Logf("%s: batch-dependent graph (probe cosine %.5f): Open chose MaxBatch %d; measuring raw batches anyway", variant, m.probeCosine, m.Options().MaxBatch)
				m.opts.MaxBatch, m.inBuf, m.outBuf = 64, nil, nil
			}
			for _, tokens := range []int{32, 128} {
				for _, batch := range []int{1, 8, 32, 64} {
					texts := make([]string, batch)
					for i := range texts {
						texts[i] = textOfTokens(b, m, tokens, i)
					}
					b.Run(fmt.Sprintf("tokens=%d/batch=%d", tokens, batch), func(b *testing.B) {
						for b.Loop() {
							if _, err := m.Embed(texts, false); err != nil {
								b.Fatal(err)
							}
						}
						b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "chunks/s")
					})
				}
			}
		})
	}
}

// BenchmarkWorker_QueryLatency measures a 10-word query through the Worker
// with default options, idle and during an ingest: another caller keeps
// the worker's backlog full with requests of 256 documents of 16..256
// tokens, as the daemon's indexer sends them. It reports p50/p99 latency;
// the goal during ingest is p99 <= 50 ms on an idle two-core machine (a
// query waits for at most the one document run in flight).
func BenchmarkWorker_QueryLatency(b *testing.B) {
	m := mustOpenModel(b, testModelDir(), Options{})
	w := NewWorker(m)
	b.Cleanup(func() { w.Close() })
	const query = "which embedding model does the daemon use for search"
	docs := make([]string, 256)
	for i := range docs {
		docs[i] = textOfTokens(b, m, 16+(i*37)%(m.Spec().MaxTokens-15), i)
	}
	for _, load := range []string{"idle", "during-ingest"} {
		b.Run(load, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			if load == "during-ingest" {
				wg.Go(func() {
					for ctx.Err() == nil {
						w.Embed(ctx, docs, false)
					}
				})
				for w.Pending() == 0 {
					time.Sleep(time.Millisecond)
				}
			}
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := w.Embed(context.Background(), []string{query}, true); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			cancel()
			wg.Wait()
			slices.Sort(lat)
			ms := func(q float64) float64 {
				return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))]) / 1e6
			}
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
		})
	}
}

// BenchmarkWorker_Ingest measures the Worker with default options on mixed
// lengths (16..256 tokens, as chunkers emit them): what ingest gets, with
// length grouping, the token budget and, for int8, batches of one.
func BenchmarkWorker_Ingest(b *testing.B) {
	for _, variant := range []string{"fp32", "int8"} {
		dir := modelDirs()[variant]
		b.Run(variant, func(b *testing.B) {
			m := mustOpenModel(b, dir, Options{})
			texts := make([]string, 64)
			for i := range texts {
				texts[i] = textOfTokens(b, m, 16+(i*37)%(m.Spec().MaxTokens-15), i)
			}
			w := NewWorker(m)
			b.Cleanup(func() { w.Close() })
			for b.Loop() {
				if _, err := w.Embed(context.Background(), texts, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "chunks/s")
			b.ReportMetric(float64(m.stats.texts)/float64(m.stats.runs), "texts/run")
		})
	}
}

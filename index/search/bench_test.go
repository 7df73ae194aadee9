package search

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkEngine_LongQuery measures a pasted page as a query: a 250 KB
// text over CTXD_BENCH_LONG_QUERY_ITEMS notes (default 2,500; the issue's
// figure is for 25,000). It reports the time and allocations per search and
// the peak growth of the live heap during one.
func BenchmarkEngine_LongQuery(b *testing.B) {
	n := 2500
	if s := os.Getenv("CTXD_BENCH_LONG_QUERY_ITEMS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("CTXD_BENCH_LONG_QUERY_ITEMS: %v", err)
		}
	}
	e := newEnv(b)
	vocab := fillNotes(e, n)
	e.sync()
	rng := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	for sb.Len() < 250_000 {
		if rng.IntN(3) == 0 {
			fmt.Fprintf(&sb, "unseen%dterm ", rng.IntN(50_000))
		} else {
			sb.WriteString(vocab[rng.IntN(len(vocab))] + " ")
		}
	}
	req := Request{Mode: BM25, Queries: []Query{{Text: sb.String()[:250_000]}}}

	b.Run(fmt.Sprintf("items=%d/query=250KB", n), func(b *testing.B) {
		b.ReportAllocs()
		var peak int64
		for b.Loop() {
			p, err := peakHeapGrowth(func() error {
				_, err := e.eng.Search(context.Background(), req)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			peak = max(peak, p)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	})
}

// peakHeapGrowth runs fn and returns how far the heap's object bytes rose
// above their level at the start, sampled every millisecond.
func peakHeapGrowth(fn func() error) (int64, error) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() int64 {
		metrics.Read(sample)
		return int64(sample[0].Value.Uint64())
	}
	base := read()
	var peak atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if v := read() - base; v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	err := fn()
	close(stop)
	<-done
	if v := read() - base; v > peak.Load() {
		peak.Store(v)
	}
	return peak.Load(), err
}

// BenchmarkEngine_Explain measures what Request.Explain costs: the same
// hybrid search of three words, limit 10, over 2,500 notes with vectors,
// proximity and recency on (the daemon's defaults) and the priors on,
// without and with explanations. Compare the two with benchstat over
// -count rounds, which interleave them.
func BenchmarkEngine_Explain(b *testing.B) {
	e := newEnv(b)
	vocab := fillNotes(e, 2500)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 2500 { // a vector for every note (the text is rewritten as it was)
		words := make([]string, 24)
		for j := range words {
			words[j] = vocab[rng.IntN(len(vocab))]
		}
		e.write(fmt.Sprintf("notes:/n%05d.md", i), strings.Join(words, " "), angled(rng.Float64()*math.Pi))
	}
	e.sync()
	q := strings.Join([]string{vocab[1], vocab[2], vocab[3]}, " ")
	req := Request{Mode: Hybrid, Queries: []Query{{Text: q}}, EmbedQuery: embedFixed(angled(0.3)),
		Proximity: ToggleOn, Recency: Recency{HalfLife: time.Hour, Floor: 0.5, Applies: func(string, string) bool { return true }},
		Priors: Priors{Importance: 0.5, Usage: 0.5}}
	for _, explain := range []bool{false, true} {
		req.Explain = explain
		b.Run(fmt.Sprintf("explain=%v", explain), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.eng.Search(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package daemon

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/beir"
)

// The standing-query benchmarks: what 1,000 registered standing queries
// cost a bulk ingest, and how soon a matching write reaches a subscriber.
// Index-only (no model): BM25 subscriptions, as the figures ask.

// benchQueryFiles hold the realistic query texts the standing queries use.
var benchQueryFiles = []string{
	"../../shared/data/cranfield/queries.jsonl",
	"../../shared/data/cacm/queries.jsonl",
	"../../shared/data/vaswani/queries.jsonl",
	docsKnownItemQueries,
}

// benchStandingQueries returns n query texts from the collections: their
// first 8 words (a standing query names a topic, not a paragraph), then,
// to reach n, their next 8.
func benchStandingQueries(b *testing.B, n int) []string {
	b.Helper()
	var out, more []string
	for _, f := range benchQueryFiles {
		qs, err := beir.LoadQueries(f)
		if err != nil {
			b.Fatalf("%v (the shared data sits beside the repo)", err)
		}
		for _, q := range qs {
			words := strings.Fields(q.Text)
			out = append(out, strings.Join(words[:min(8, len(words))], " "))
			if len(words) > 10 {
				more = append(more, strings.Join(words[8:min(16, len(words))], " "))
			}
		}
	}
	out = append(out, more...)
	if len(out) < n {
		b.Fatalf("%d query texts, want %d", len(out), n)
	}
	return out[:n]
}

// benchEnvInt reads an integer setting of a benchmark.
func benchEnvInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		b.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// subscribeAll opens a stream per query over conn and drains each in a
// goroutine; it returns the pushes received so far and a stop function.
func subscribeAll(b *testing.B, conn *grpc.ClientConn, queries []string) (*atomic.Int64, func()) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := ctxdv1.NewSubscriptionServiceClient(conn)
	var pushes atomic.Int64
	var wg sync.WaitGroup
	for _, q := range queries {
		stream, err := c.Subscribe(ctx, &ctxdv1.SubscribeRequest{Query: &ctxdv1.StandingQuery{Queries: []*ctxdv1.SearchQuery{{Text: q}}}})
		if err != nil {
			b.Fatal(err)
		}
		if ev, err := stream.Recv(); err != nil || ev.GetReady() == nil {
			b.Fatalf("subscribe %q: %v %v", q, ev, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ev, err := stream.Recv()
				if err != nil {
					return
				}
				if ev.GetMatch() != nil {
					pushes.Add(1)
				}
			}
		}()
	}
	return &pushes, func() { cancel(); wg.Wait() }
}

// subscriptionBenchConfig is a socket-only daemon without a model whose
// limits admit the benchmark's streams.
func subscriptionBenchConfig(b *testing.B, streams int) Config {
	cfg := testConfig(b)
	cfg.Limits.MaxSubscriptionsPerToken = streams + 10
	cfg.Limits.MaxSubscriptions = streams + 10
	return cfg
}

// BenchmarkSubscriptions_BulkIngest writes a slice of wikipedia-passages
// through WriteBatch (index-only) into a fresh daemon with 0 and with 1,000
// standing queries registered, in interleaved rounds, and reports items/s
// of each (from the first write until the indexes applied the last) and
// their ratio. CTXD_BENCH_SUB_ITEMS (default 20000), CTXD_BENCH_SUB_ROUNDS
// (3), CTXD_BENCH_SUB_QUERIES (1000).
func BenchmarkSubscriptions_BulkIngest(b *testing.B) {
	nItems := benchEnvInt(b, "CTXD_BENCH_SUB_ITEMS", 20_000)
	rounds := benchEnvInt(b, "CTXD_BENCH_SUB_ROUNDS", 3)
	nQueries := benchEnvInt(b, "CTXD_BENCH_SUB_QUERIES", 1000)
	docs, err := beir.LoadCorpus(wikiCorpus, nItems)
	if err != nil {
		b.Fatalf("%v (the shared data sits beside the repo)", err)
	}
	queries := benchStandingQueries(b, nQueries)
	var items []*ctxdv1.WriteRequest
	seen := map[string]bool{}
	for _, d := range docs {
		if seen[d.ID] {
			continue
		}
		seen[d.ID] = true
		items = append(items, &ctxdv1.WriteRequest{Ref: "wiki:/" + d.ID, Body: &ctxdv1.WriteRequest_Content{Content: d.Text}, MimeType: "text/plain", Title: d.Title})
	}
	rates := map[int][]float64{}
	var pushes int64
	for r := range rounds {
		for _, n := range []int{0, nQueries} {
			rate, p := subscriptionIngestRound(b, items, queries[:n])
			rates[n] = append(rates[n], rate)
			if n > 0 {
				pushes += p
			}
			fmt.Printf("round %d: %d standing queries: %.0f items/s (%d pushes)\n", r+1, n, rate, p)
		}
	}
	median := func(xs []float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[len(s)/2]
	}
	base, with := median(rates[0]), median(rates[nQueries])
	b.ReportMetric(base, "items/s-0q")
	b.ReportMetric(with, "items/s-1000q")
	b.ReportMetric(with/base, "ratio")
	fmt.Printf("subscriptions bulk ingest: %d items, %d rounds, median items/s: 0 queries %.0f, %d queries %.0f, ratio %.3f (%.1f%% slower); %d pushes per round\n",
		len(items), rounds, base, nQueries, with, with/base, 100*(1-with/base), pushes/int64(rounds))
}

// subscriptionIngestRound ingests items into a fresh daemon holding
// queries as standing queries and returns items/s and the pushes sent.
func subscriptionIngestRound(b *testing.B, items []*ctxdv1.WriteRequest, queries []string) (float64, int64) {
	b.Helper()
	cfg := subscriptionBenchConfig(b, len(queries))
	d, err := Start(context.Background(), cfg, slogDiscard())
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		d.Stop(ctx)
	}()
	conn := dial(b, "unix://"+cfg.Socket)
	pushes, stop := subscribeAll(b, conn, queries)
	defer stop()
	vc, admin := ctxdv1.NewVfsServiceClient(conn), ctxdv1.NewAdminServiceClient(conn)
	var batches [][]*ctxdv1.WriteRequest
	for rest := items; len(rest) > 0; {
		n := min(wikiBatch, len(rest))
		batches, rest = append(batches, rest[:n]), rest[n:]
	}
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range wikiWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(batches); i = int(next.Add(1)) - 1 {
				if _, err := vc.WriteBatch(context.Background(), &ctxdv1.WriteBatchRequest{Items: batches[i]}); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	waitIndexed(b, admin, time.Hour)
	took := time.Since(start)
	return float64(len(items)) / took.Seconds(), pushes.Load()
}

// BenchmarkSubscriptions_Latency registers 1,000 standing queries, then
// writes CTXD_BENCH_SUB_WRITES (default 300) items one at a time that match
// one more, and reports the time from before each Write to its push
// arriving, p50 and p99 in ms.
func BenchmarkSubscriptions_Latency(b *testing.B) {
	nQueries := benchEnvInt(b, "CTXD_BENCH_SUB_QUERIES", 1000)
	writes := benchEnvInt(b, "CTXD_BENCH_SUB_WRITES", 300)
	cfg := subscriptionBenchConfig(b, nQueries+1)
	mustStart(b, cfg)
	conn := dial(b, "unix://"+cfg.Socket)
	_, stop := subscribeAll(b, conn, benchStandingQueries(b, nQueries))
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	probe, err := ctxdv1.NewSubscriptionServiceClient(conn).Subscribe(ctx, &ctxdv1.SubscribeRequest{Query: &ctxdv1.StandingQuery{
		Queries: []*ctxdv1.SearchQuery{{Text: "heliotrope quasar bulletin"}}}})
	if err != nil {
		b.Fatal(err)
	}
	if ev, err := probe.Recv(); err != nil || ev.GetReady() == nil {
		b.Fatalf("probe: %v %v", ev, err)
	}
	vc := ctxdv1.NewVfsServiceClient(conn)
	lat := make([]time.Duration, 0, writes)
	for i := range writes {
		ref := fmt.Sprintf("notes:/probe/%d.md", i)
		start := time.Now()
		if _, err := vc.Write(context.Background(), &ctxdv1.WriteRequest{Ref: ref,
			Body: &ctxdv1.WriteRequest_Content{Content: fmt.Sprintf("Heliotrope quasar bulletin number %d: the sky as seen tonight.", i)}}); err != nil {
			b.Fatal(err)
		}
		ev, err := probe.Recv()
		if err != nil {
			b.Fatal(err)
		}
		if got := ev.GetMatch().GetResult().GetRef(); got != ref {
			b.Fatalf("push %v, want %s", ev, ref)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	pc := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pc(0.5), "p50-ms")
	b.ReportMetric(pc(0.99), "p99-ms")
	fmt.Printf("subscriptions latency: %d standing queries, %d matching writes, write to push p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
		nQueries, writes, pc(0.5), pc(0.99), float64(lat[len(lat)-1].Microseconds())/1000)
}

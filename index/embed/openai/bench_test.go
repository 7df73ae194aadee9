package openai

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxd/ctxd/index/chunk"
	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/tokenize"
	"github.com/ctxd/ctxd/internal/beir"
	"github.com/ctxd/ctxd/internal/testmodel"
)

// docsCorpus is the real-documents corpus beside the repository (BEIR layout).
const docsCorpus = "../../../../shared/data/docs-corpus/corpus.jsonl.gz"

// Parameters of BenchmarkEmbedProvider_DocsCorpus: the default texts per
// request, and rounds of every figure.
const (
	benchBatch  = DefaultBatchSize
	benchRounds = 3
)

// BenchmarkEmbedProvider_DocsCorpus embeds the docs corpus, chunked as the
// daemon chunks it (the model's tokenizer, 256-token windows), with the
// local model and through the provider with 1, 4 and 16 requests in
// flight, in one run (make bench-embed-compare; CTXD_BENCH_DOCS=N takes the
// first N documents). The endpoint is openaitest's server running the same
// ONNX model on the same cores, so the figures show what the provider path
// (HTTP, JSON, batching across requests) costs or gains, not a GPU server's
// speed; the local model is measured at Background priority (the daemon's
// backlog) and at Prompt (what the test server runs each request at, so
// that figure compares like with like). Every provider vector is checked against the local one (cosine
// >= 0.999). It prints one line per figure:
// "provider local chunks_per_s=…", "provider inflight=N chunks_per_s=…".
func BenchmarkEmbedProvider_DocsCorpus(b *testing.B) {
	limit, _ := strconv.Atoi(os.Getenv("CTXD_BENCH_DOCS"))
	docs, err := beir.LoadCorpus(docsCorpus, limit)
	if err != nil {
		b.Fatalf("%v (the shared data sits beside the repo)", err)
	}
	tok, err := tokenize.Load(testmodel.Dir(b))
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	for _, d := range docs {
		content := []byte(d.Text)
		prefix := chunk.Prefix(d.Title, "", tok, DefaultMaxTokens)
		for _, c := range chunk.SplitWithPrefix(content, "text/markdown", d.ID, prefix, tok, DefaultMaxTokens) {
			texts = append(texts, string(chunk.AppendEmbedText(nil, prefix, c.Heading, content[c.Start:c.End])))
		}
	}
	w := localWorker(b)
	s := startServer(b)
	run := func(embedAll func() ([][]float32, error)) ([][]float32, float64) {
		start := time.Now()
		vecs, err := embedAll()
		if err != nil {
			b.Fatal(err)
		}
		return vecs, float64(len(texts)) / time.Since(start).Seconds()
	}
	// Warm up the model's arenas before anything is timed.
	if _, err := w.EmbedAt(context.Background(), texts[:min(len(texts), 64)], embed.Background); err != nil {
		b.Fatal(err)
	}
	want, _ := run(func() ([][]float32, error) { return w.EmbedAt(context.Background(), texts, embed.Background) })
	inFlight := []int{1, 4, 16}
	clients := make([]*Client, len(inFlight))
	for i, n := range inFlight {
		c, err := New(Config{URL: s.URL(), Model: testModelName, MaxInFlight: n, BatchSize: benchBatch})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Probe(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		clients[i] = c
	}
	// Interleaved rounds: a machine busy for a while slows every figure alike.
	var local, prompt []float64
	remote := make([][]float64, len(inFlight))
	worst := 1.0
	for range benchRounds {
		_, r := run(func() ([][]float32, error) { return w.EmbedAt(context.Background(), texts, embed.Background) })
		local = append(local, r)
		_, r = run(func() ([][]float32, error) { return w.EmbedAt(context.Background(), texts, embed.Prompt) })
		prompt = append(prompt, r)
		for i, c := range clients {
			got, r := run(func() ([][]float32, error) { return c.EmbedAt(context.Background(), texts, embed.Background) })
			remote[i] = append(remote[i], r)
			for k := range texts {
				worst = min(worst, embed.Cosine(got[k], want[k]))
			}
		}
	}
	if worst < 0.999 {
		b.Fatalf("a provider vector's cosine with the local one is %.5f, want >= 0.999", worst)
	}
	med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- embed provider: %d chunks of %d docs-corpus documents, %d texts a request, %d interleaved rounds (medians); the endpoint is a test server running the same ONNX model on these cores, so the figures show the provider path's overhead, not a GPU's speed-up; min cosine with the local vectors %.5f\n",
		len(texts), len(docs), benchBatch, benchRounds, worst)
	fmt.Fprintf(&sb, "provider local chunks_per_s=%.1f (the backlog's priority, as the daemon embeds)\n", med(local))
	fmt.Fprintf(&sb, "provider local_prompt chunks_per_s=%.1f (the priority the test server embeds a request at)\n", med(prompt))
	for i, n := range inFlight {
		fmt.Fprintf(&sb, "provider inflight=%d chunks_per_s=%.1f vs_local=%.0f%%\n", n, med(remote[i]), 100*med(remote[i])/med(local))
	}
	fmt.Print(sb.String())
}

package assemble

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/index/tokenize"
	"github.com/ctxd/ctxd/internal/testchunk"
	"github.com/ctxd/ctxd/internal/testmodel"
	"github.com/ctxd/ctxd/vfs"
)

// benchParagraphs is the paragraphs (chunks) of one bench item.
const benchParagraphs = 100

// BenchmarkBuildContext measures Build with the 10 context files of the
// golden tests (and three more contextual ones) and
// CTXD_BENCH_CONTEXT_CHUNKS chunks in the store (default 100,000: items of
// 100 paragraphs of about 80 words from a Zipf vocabulary, each paragraph
// one chunk with a precomputed random unit vector of the real model's
// dimensions). Query embedding is excluded: the task's vector is computed
// once with the real model and handed to the search through EmbedQuery, as
// the daemon would after embedding it. Tokens are counted with the real
// tokenizer. It reports p50-ms and p99-ms per mode over four tasks in turn
// (hybrid: BM25 + substring + vector legs; bm25: no vector leg).
func BenchmarkBuildContext(b *testing.B) {
	n := 100_000
	if s := os.Getenv("CTXD_BENCH_CONTEXT_CHUNKS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("CTXD_BENCH_CONTEXT_CHUNKS: %v", err)
		}
	}
	ctx := context.Background()
	modelDir := testmodel.Dir(b)
	spec, err := embed.LoadSpec(modelDir)
	if err != nil {
		b.Fatal(err)
	}
	tok, err := tokenize.Load(modelDir)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	store, err := vfs.Open(filepath.Join(dir, "ctxd.db"), vfs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	if _, err := store.SetIndexing(ctx, testchunk.Paragraphs{Name: "bench-paragraphs", Count: tok.Count}, spec.ID); err != nil {
		b.Fatal(err)
	}
	eng, err := search.Open(store, search.Options{Dir: filepath.Join(dir, "index")})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	eng.SetModel(spec.ID, spec.Dimensions)

	start := time.Now()
	if _, _, err := Init(ctx, store, ""); err != nil {
		b.Fatal(err)
	}
	for ref, content := range benchContextFiles() {
		r, _ := vfs.ParseRef(ref)
		if _, err := store.Write(ctx, vfs.WriteParams{Ref: r, Content: []byte(content), IsText: true}); err != nil {
			b.Fatal(err)
		}
	}
	fillChunks(b, store, spec, n)
	waitApplied(b, store, eng, spec.ID)
	b.Logf("%d chunks written and indexed in %s", n, time.Since(start).Round(time.Millisecond))

	tasks := []string{invoicingTask, deploymentTask,
		"Summarise what we know about the payment provider outage and its customers.",
		"Plan the database migration for the reporting service next week."}
	vecs := embedTasks(b, modelDir, tasks)
	bld := NewBuilder(store, eng, Options{Tokenizer: func() *tokenize.Tokenizer { return tok }})
	for _, mode := range []search.Mode{search.Hybrid, search.BM25} {
		b.Run(fmt.Sprintf("mode=%s/chunks=%d", mode, n), func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				task := tasks[i%len(tasks)]
				v := vecs[i%len(tasks)]
				i++
				req := Request{Task: task, Search: search.Request{Mode: mode,
					EmbedQuery: func(context.Context, string) ([]float32, error) { return v, nil }}}
				t0 := time.Now()
				res, err := bld.Build(ctx, req)
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Sections) == 0 || len(res.Warnings) > 0 {
					b.Fatalf("%d sections, warnings %q", len(res.Sections), res.Warnings)
				}
			}
			slices.Sort(lat)
			pct := func(p float64) float64 {
				return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
		})
	}
}

// benchContextFiles are the golden tests' context files plus three more
// contextual ones: with Init's four, 10 context files.
func benchContextFiles() map[string]string {
	files := map[string]string{}
	for ref, c := range contextSet {
		if strings.HasPrefix(ref, "self:/") {
			files[ref] = c
		}
	}
	for _, topic := range []string{"reporting", "payments", "hiring"} {
		files["self:/"+topic+".md"] = fmt.Sprintf("---\nloading: contextual\n---\n# %s\n\nEverything about %s: owners, runbooks, the history of incidents and the decisions taken.\n", topic, topic)
	}
	return files
}

// fillChunks writes n chunks as items of benchParagraphs paragraphs, each
// with a precomputed vector, from 8 writers.
func fillChunks(b *testing.B, store *vfs.Store, spec embed.Spec, n int) {
	vocab := make([]string, 20_000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%sx", strconv.FormatInt(int64(i)*7919%1_000_003, 36))
	}
	topical := []string{"invoice", "refund", "deploy", "release", "production", "payment", "provider", "customer", "migration", "database", "reporting", "outage"}
	items := (n + benchParagraphs - 1) / benchParagraphs
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(vocab)-1))
			for it := w; it < items; it += 8 {
				paras := min(benchParagraphs, n-it*benchParagraphs)
				var sb strings.Builder
				vecs := make([][]float32, paras)
				for p := range paras {
					if p > 0 {
						sb.WriteString("\n\n")
					}
					for k := range 80 {
						if k > 0 {
							sb.WriteByte(' ')
						}
						if rng.IntN(40) == 0 {
							sb.WriteString(topical[rng.IntN(len(topical))])
						} else {
							sb.WriteString(vocab[zipf.Uint64()])
						}
					}
					sb.WriteByte('.')
					vecs[p] = randomUnit(rng, spec.Dimensions)
				}
				ref := vfs.Ref{Drive: "bench", Path: fmt.Sprintf("/docs/%05d.txt", it)}
				_, err := store.Write(context.Background(), vfs.WriteParams{Ref: ref, Content: []byte(sb.String()), IsText: true,
					MimeType: "text/plain", Embeddings: &vfs.Embeddings{Model: spec.ID, Vectors: vecs}})
				if err != nil {
					errs <- fmt.Errorf("write %s: %w", ref, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

func randomUnit(rng *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		x := rng.NormFloat64()
		v[i], norm = float32(x), norm+x*x
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	return v
}

// waitApplied waits until the engine has applied every change and serves model.
func waitApplied(b *testing.B, store *vfs.Store, eng *search.Engine, model string) {
	deadline := time.Now().Add(time.Hour)
	for {
		seq, err := store.OutboxSeq(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if st := eng.State(); st.AppliedSeq >= seq && st.Model == model && !st.Rebuilding {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("engine stuck: %+v", eng.State())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// embedTasks embeds the tasks once with the real model.
func embedTasks(b *testing.B, modelDir string, tasks []string) [][]float32 {
	lib := testmodel.ORTLib(b)
	m, err := embed.Open(modelDir, embed.Options{LibraryPath: lib})
	if err != nil {
		b.Fatal(err)
	}
	w := embed.NewWorker(m)
	defer w.Close()
	vecs, err := w.Embed(context.Background(), tasks, true)
	if err != nil {
		b.Fatal(err)
	}
	return vecs
}

package daemon

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"mime"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/viterin/vek/vek32"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/chunk"
	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/index/tokenize"
	"github.com/ctxd/ctxd/internal/beir"
)

// wikiCorpus is the Wikipedia passages corpus in ../shared/data (BEIR
// layout, 330,126 passages with ids "<pageid>-<k>").
const wikiCorpus = "../../shared/data/wikipedia-passages/corpus.jsonl.gz"

// benchCacheDir keeps what the search benchmark computes once (the sample
// vectors); .cache is git-ignored.
const benchCacheDir = "../.cache/bench"

// Parameters of BenchmarkSearchWikipedia.
const (
	wikiDefaultSizes  = "100000"
	wikiSample        = 4000 // S: real passage vectors the written vectors derive from
	wikiNoise         = 0.5  // noise σ is wikiNoise/sqrt(dims)
	wikiWarmup        = 50
	wikiQueries       = 500
	wikiRecallQueries = 200
	wikiLimit         = 10
	wikiQuerySeed     = 1
)

// wikiConstruction says how the written vectors are made, for the output.
const wikiConstruction = "vectors written precomputed: each chunk gets normalize(sample[h %% %d] + noise), " +
	"sample = the real model's vectors of the first chunks of %d passages spread over the corpus, " +
	"h = the chunk's SHA-256, noise ~ N(0, σ²) per component with σ = %.1f/sqrt(dims) seeded by h; " +
	"this keeps the geometry of real embeddings but is not the passages' own embedding"

// BenchmarkSearchWikipedia measures search on the Wikipedia passages through
// the real daemon process with the real model, once per size in
// CTXD_BENCH_SIZES (comma-separated chunk counts, default 100000; the issue
// asks for 100000, 330000 and 1000000). It runs once regardless of b.N; run
// it with -benchtime=1x (make bench-search).
//
// Each size gets a fresh data dir. Items are passages in corpus order, one
// item per passage at wiki:/<pageid>/<k> titled with the page title, until
// their chunks reach the size. The corpus file holds each of its 165,063
// passages twice (330,126 lines; the second half repeats the first), so the
// bench keeps the first of each id: about 167,000 chunks. Beyond them the
// passages repeat as copies r = 1, 2, … at wiki:/r<r>/<pageid>/<k>. A copy
// has the same text, hence the same chunk hashes and the same vectors (the
// store keys vectors by chunk hash).
//
// Embedding a million passages on two cores would take hours, so every write
// carries its chunks' vectors precomputed (WriteRequest.chunk_embeddings),
// one per chunk the daemon's chunker makes (the bench chunks locally with the
// same tokenizer, window, title prefix and chunk.SplitWithPrefix). The vectors are not the passages'
// own: S = 4000 passages spread over the corpus are embedded once in-process
// with the real model (their first chunk; cached in .cache/bench by model id
// and S), and a chunk with SHA-256 h gets normalize(sample[h % S] + noise),
// noise ~ N(0, σ²) per component, σ = 0.5/sqrt(dims), seeded by h. That keeps
// the geometry of real embeddings (clusters, norms, typical cosines) and is
// deterministic.
//
// It reports, per size:
//   - ingest: WriteBatch calls of 256 items, 4 in flight (runClients; its
//     p50-ms, p99-ms and ops/s metrics are the batches'), from the first
//     write until Status says the indexes applied the outbox and no chunk
//     waits for a vector: writes/s, chunks/s, ingest-s;
//   - memory and disk per chunk: VmRSS and VmHWM of the daemon after the
//     ingest, and the data dir's bytes;
//   - search latency p50/p95/p99 of bm25, vector and hybrid: 500 queries
//     (3–8 consecutive words of random passages, fixed seed) sent one at a
//     time after 50 warm-up queries, with the query embedded by the daemon
//     and (vector, hybrid) with the vector supplied ("noembed");
//   - recall@10 of the vector mode against an exact brute-force top-10 over
//     the vectors written, for 200 queries. Copies make ties (equal vectors
//     at several refs), so a result counts when its exact cosine is at least
//     the exact 10th best;
//   - start-up: SIGTERM, then the time from starting the daemon again on the
//     same data dir until a hybrid Search answers in hybrid mode with results;
//   - serving memory: the restarted daemon answers the bm25, vector and
//     hybrid queries with the vector supplied, then its peak RSS (start-up
//     included), anonymous and file-page RSS, and its RSS at rest, 3 s after
//     the last search; with several sizes, what each added chunk adds to them
//     (issue 31 asks for the growth per chunk at 1M).
//
// Every figure is a b.ReportMetric; a readable table with the goals
// beside the figures (printed, not asserted) goes to stdout, because
// benchmark logs are cut after 10 lines.
func BenchmarkSearchWikipedia(b *testing.B) {
	sizes := wikiSizes(b)
	w := loadWikiBench(b)
	served := map[string][]servingMemory{} // by store, in the order of sizes
	for _, n := range sizes {
		for _, store := range wikiStores(b) {
			b.Run(fmt.Sprintf("chunks=%d/store=%s", n, store), func(b *testing.B) {
				served[store] = append(served[store], w.run(b, n, store))
			})
		}
	}
	for store, ms := range served {
		for i := 1; i < len(ms); i++ {
			fmt.Print(ms[i].growth(ms[i-1], store))
		}
	}
}

// servingMemory is the memory of a daemon restarted on its data dir that
// served the bench's searches: peak RSS (start-up included), RSS at the end
// as anonymous memory and mapped file pages, and the RSS at rest, 3 s after
// the last search.
type servingMemory struct {
	chunks                   int64
	peak, anon, file, atRest int64
}

// growth says what each chunk from prev's size to m's adds while serving.
func (m servingMemory) growth(prev servingMemory, store string) string {
	per := func(a, b int64) float64 { return float64(a-b) / float64(m.chunks-prev.chunks) }
	return fmt.Sprintf("serving memory growth, store=%s, %d -> %d chunks, per added chunk: peak RSS %.0f B, anonymous %.0f B, file pages %.0f B, at rest %.0f B\n",
		store, prev.chunks, m.chunks, per(m.peak, prev.peak), per(m.anon, prev.anon), per(m.file, prev.file), per(m.atRest, prev.atRest))
}

// wikiStores parses CTXD_BENCH_STORES: "bolt" (the default), "postgres"
// (a replica on a PostgreSQL of the benchmark's own; a second replica then
// starts empty against it, measuring catch-up and its own search latency),
// or both, comma-separated, for figures side by side in one run.
func wikiStores(b *testing.B) []string {
	var out []string
	for _, f := range strings.Split(cmp.Or(os.Getenv("CTXD_BENCH_STORES"), "bolt"), ",") {
		switch f = strings.TrimSpace(f); f {
		case "bolt", "postgres":
			out = append(out, f)
		default:
			b.Fatalf("CTXD_BENCH_STORES: %q is not bolt or postgres", f)
		}
	}
	return out
}

// wikiSizes parses CTXD_BENCH_SIZES.
func wikiSizes(b *testing.B) []int {
	s := os.Getenv("CTXD_BENCH_SIZES")
	if s == "" {
		s = wikiDefaultSizes
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("CTXD_BENCH_SIZES=%q: %q is not a positive chunk count", s, f)
		}
		out = append(out, n)
	}
	return out
}

// wikiPassage is one distinct passage of the corpus, chunked as the daemon
// chunks it.
type wikiPassage struct {
	page, part  string // "<pageid>-<k>"
	title, text string
	prefix      string // the title as the store prepends it to every chunk's embedded text
	chunks      []chunk.Chunk
	rows        []int32 // per chunk, its vector's row in wikiBench.vecs
}

// wikiItem is one written item: a passage and its copy number.
type wikiItem struct {
	p    *wikiPassage
	copy int
}

// path is the item's path in the wiki drive.
func (it wikiItem) path() string {
	if it.copy == 0 {
		return "/" + it.p.page + "/" + it.p.part
	}
	return fmt.Sprintf("/r%d/%s/%s", it.copy, it.p.page, it.p.part)
}

func (it wikiItem) ref() string { return "wiki:" + it.path() }

// wikiBench is what every size shares: the passages, their chunks and the
// vectors written for them.
type wikiBench struct {
	spec     embed.Spec
	passages []*wikiPassage // those with at least one chunk, in corpus order
	vecs     []float32      // row-major, spec.Dimensions per row, unit length
	rows     int
	model    *embed.Model // the real model, in-process, for sample and query vectors
}

func (w *wikiBench) vector(row int32) []float32 {
	d := w.spec.Dimensions
	return w.vecs[int(row)*d : (int(row)+1)*d : (int(row)+1)*d]
}

// loadWikiBench reads the corpus, chunks every passage as the daemon would,
// and derives one vector per distinct chunk text from the sample. The
// in-process model it may open closes when b ends.
func loadWikiBench(b *testing.B) *wikiBench {
	b.Helper()
	start := time.Now()
	dir := modelDir(b)
	spec, err := embed.LoadSpec(dir)
	if err != nil {
		b.Fatal(err)
	}
	tok, err := tokenize.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	docs, err := beir.LoadCorpus(wikiCorpus, 0)
	if err != nil {
		b.Fatalf("%v (the shared data sits beside the repo)", err)
	}
	// The file holds every passage twice (the second half repeats the
	// first); a ref names one passage, so the bench keeps the first.
	seen := make(map[string]bool, len(docs))
	all := make([]*wikiPassage, 0, len(docs))
	for _, d := range docs {
		page, part, ok := strings.Cut(d.ID, "-")
		if !ok || page == "" || part == "" {
			b.Fatalf("passage id %q is not <pageid>-<k>", d.ID)
		}
		if seen[d.ID] {
			continue
		}
		seen[d.ID] = true
		all = append(all, &wikiPassage{page: page, part: part, title: d.Title, text: d.Text})
	}
	// Chunk in parallel: the tokenizer is safe for concurrent use, and the
	// path only matters for its extension, which no item has.
	var wg sync.WaitGroup
	next := make(chan int, 1024)
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				p := all[i]
				p.prefix = chunk.Prefix(p.title, "", tok, spec.MaxTokens)
				p.chunks = chunk.SplitWithPrefix([]byte(p.text), "text/plain", "/"+p.page+"/"+p.part, p.prefix, tok, spec.MaxTokens)
			}
		}()
	}
	for i := range all {
		next <- i
	}
	close(next)
	wg.Wait()
	w := &wikiBench{spec: spec}
	b.Cleanup(func() {
		if w.model != nil {
			w.model.Close()
		}
	})
	for _, p := range all {
		if len(p.chunks) > 0 {
			w.passages = append(w.passages, p)
		}
	}
	sample := w.sampleVectors(b)
	// One row per distinct chunk text, as the store keeps one vector per hash.
	d := spec.Dimensions
	sigma := wikiNoise / math.Sqrt(float64(d))
	rowOf := map[[32]byte]int32{}
	var hashes [][32]byte
	for _, p := range w.passages {
		p.rows = make([]int32, len(p.chunks))
		for j, c := range p.chunks {
			h := sha256.Sum256(chunk.AppendEmbedText(nil, p.prefix, c.Heading, []byte(p.text[c.Start:c.End])))
			r, ok := rowOf[h]
			if !ok {
				r = int32(len(hashes))
				rowOf[h] = r
				hashes = append(hashes, h)
			}
			p.rows[j] = r
		}
	}
	w.rows = len(hashes)
	w.vecs = make([]float32, w.rows*d)
	var vg sync.WaitGroup
	per := (w.rows + runtime.NumCPU() - 1) / runtime.NumCPU()
	for lo := 0; lo < w.rows; lo += per {
		vg.Add(1)
		go func(lo, hi int) {
			defer vg.Done()
			for r := lo; r < hi; r++ {
				noisyVector(w.vecs[r*d:(r+1)*d], sample, hashes[r], sigma)
			}
		}(lo, min(lo+per, w.rows))
	}
	vg.Wait()
	var chunks int
	for _, p := range w.passages {
		chunks += len(p.chunks)
	}
	fmt.Printf("corpus: %d lines, %d distinct passage ids, %d with text, %d chunks, %d distinct chunk texts (%s, window %d tokens); prepared in %s\n",
		len(docs), len(all), len(w.passages), chunks, w.rows, spec.ID, spec.MaxTokens, time.Since(start).Round(time.Millisecond))
	return w
}

// openModel opens the real model in-process once.
func (w *wikiBench) openModel(b *testing.B) *embed.Model {
	b.Helper()
	if w.model == nil {
		m, err := embed.Open(modelDir(b), embed.Options{LibraryPath: ortLib(b)})
		if err != nil {
			b.Fatal(err)
		}
		w.model = m
	}
	return w.model
}

// sampleVectors returns the real model's vectors of the first chunks of S
// passages spread evenly over the corpus, from the cache or computed and
// cached.
func (w *wikiBench) sampleVectors(b *testing.B) [][]float32 {
	b.Helper()
	d := w.spec.Dimensions
	name := filepath.Join(benchCacheDir, fmt.Sprintf("wiki-sample-v2-%s-%d.f32", w.spec.ID, wikiSample))
	if raw, err := os.ReadFile(name); err == nil && len(raw) == wikiSample*d*4 {
		out := make([][]float32, wikiSample)
		for i := range out {
			out[i] = make([]float32, d)
			for j := range out[i] {
				out[i][j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[(i*d+j)*4:]))
			}
		}
		return out
	}
	texts := make([]string, wikiSample)
	for i := range texts {
		p := w.passages[i*len(w.passages)/wikiSample]
		c := p.chunks[0]
		texts[i] = string(chunk.AppendEmbedText(nil, p.prefix, c.Heading, []byte(p.text[c.Start:c.End])))
	}
	start := time.Now()
	out, err := w.openModel(b).Embed(texts, false)
	if err != nil {
		b.Fatal(err)
	}
	raw := make([]byte, 0, wikiSample*d*4)
	for _, v := range out {
		if len(v) != d {
			b.Fatalf("sample vector has %d dims, want %d", len(v), d)
		}
		for _, x := range v {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
		}
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := writeFileAtomic(name, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("embedded %d sample passages in %s, cached in %s\n", wikiSample, time.Since(start).Round(time.Millisecond), name)
	return out
}

// noisyVector sets dst to normalize(sample[h % S] + noise), noise ~ N(0, σ²)
// per component from a generator seeded by h.
func noisyVector(dst []float32, sample [][]float32, h [32]byte, sigma float64) {
	base := sample[binary.LittleEndian.Uint64(h[0:8])%uint64(len(sample))]
	rng := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(h[8:16]), binary.LittleEndian.Uint64(h[16:24])))
	var ss float64
	for i := range dst {
		x := float64(base[i]) + sigma*rng.NormFloat64()
		dst[i] = float32(x)
		ss += x * x
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range dst {
		dst[i] *= inv
	}
}

// wikiQuery is one search query: text and its in-process query vector.
type wikiQuery struct {
	text   string
	vector []float32
}

// queries builds warm-up plus measured queries from the items' passages:
// 3–8 consecutive words of a random passage, with a fixed seed.
func (w *wikiBench) queries(b *testing.B, items []wikiItem) []wikiQuery {
	b.Helper()
	rng := rand.New(rand.NewPCG(wikiQuerySeed, 0))
	texts := make([]string, 0, wikiWarmup+wikiQueries)
	for len(texts) < cap(texts) {
		words := strings.Fields(items[rng.IntN(len(items))].p.text)
		if len(words) < 3 {
			continue
		}
		k := min(3+rng.IntN(6), len(words))
		at := rng.IntN(len(words) - k + 1)
		texts = append(texts, strings.Join(words[at:at+k], " "))
	}
	vecs, err := w.openModel(b).Embed(texts, true)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]wikiQuery, len(texts))
	for i := range out {
		out[i] = wikiQuery{text: texts[i], vector: vecs[i]}
	}
	return out
}

// items returns the items of a size: passages in corpus order, repeated as
// copies, until their chunks reach n; and their chunk count.
func (w *wikiBench) items(n int) ([]wikiItem, int) {
	var items []wikiItem
	chunks := 0
	for r := 0; chunks < n; r++ {
		for _, p := range w.passages {
			items = append(items, wikiItem{p: p, copy: r})
			chunks += len(p.chunks)
			if chunks >= n {
				break
			}
		}
	}
	return items, chunks
}

// wikiLatency is one search variant's latency percentiles in ms.
type wikiLatency struct {
	mode    string
	noEmbed bool
	p       [3]float64 // p50, p95, p99
	empty   int        // queries without results
}

func (w *wikiBench) run(b *testing.B, n int, store string) servingMemory {
	progress := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s %s: %s\n", time.Now().Format("15:04:05"), b.Name(), fmt.Sprintf(format, args...))
	}
	items, localChunks := w.items(n)
	copies := items[len(items)-1].copy + 1
	queries := w.queries(b, items)
	construction := fmt.Sprintf(wikiConstruction, wikiSample, wikiSample, wikiNoise)

	tmp := shortTempDir(b)
	dataDir, socket := filepath.Join(tmp, "data"), filepath.Join(tmp, "s.sock")
	args := modelArgs(b, ortLib(b))
	if store == "postgres" {
		_, url := pgStore(b)
		args = append(args, "--store", url)
	}
	p := startProcess(b, dataDir, socket, args...)
	conn := dial(b, "unix://"+socket)
	admin := ctxdv1.NewAdminServiceClient(conn)
	search := ctxdv1.NewSearchServiceClient(conn)
	st := waitModel(b, admin, 2*time.Minute)
	if st.Embedding.ModelId != w.spec.ID || int(st.Embedding.Dimensions) != w.spec.Dimensions {
		b.Fatalf("daemon model %s/%d dims, the bench chunked and embedded for %s/%d", st.Embedding.ModelId, st.Embedding.Dimensions, w.spec.ID, w.spec.Dimensions)
	}
	modelID := st.Embedding.ModelId

	// 1. Index-only ingest: every write carries its vectors.
	progress("writing %d items (%d chunks)", len(items), localChunks)
	written, ingest, chunks := w.ingest(b, conn, items, modelID)
	if chunks != int64(localChunks) {
		b.Errorf("daemon has %d chunks, the bench chunked %d", chunks, localChunks)
	}
	progress("written in %s, indexes applied after %s", written.Round(time.Millisecond), ingest.Round(time.Millisecond))

	// 2. Memory and disk.
	pid := p.cmd.Process.Pid
	rss, peak := procStatusBytes(b, pid, "VmRSS"), procStatusBytes(b, pid, "VmHWM")
	// RssAnon is the heap (vectors, catalog, Bleve's caches, the model);
	// the rest of RSS is the store and index files' pages, which the kernel
	// can drop.
	anon := procStatusBytes(b, pid, "RssAnon")
	disk := dirBytes(b, dataDir)
	du, err := admin.Status(context.Background(), &ctxdv1.StatusRequest{Disk: true})
	if err != nil {
		b.Fatal(err)
	}

	// 3. Search latency, once the lexical index is compacted (as it is from
	// a few seconds after the last write on).
	compacted := waitCompacted(b, admin)
	progress("lexical index compacted %s after the indexes applied everything", compacted.Round(time.Millisecond))
	b.ReportMetric(compacted.Seconds(), "compacted-s")
	progress("ingested in %s; measuring search", ingest.Round(time.Millisecond))
	variants := []struct {
		name    string
		mode    ctxdv1.SearchMode
		noEmbed bool
	}{
		{"bm25", ctxdv1.SearchMode_SEARCH_MODE_BM25, false},
		{"vector", ctxdv1.SearchMode_SEARCH_MODE_VECTOR, false},
		{"vector", ctxdv1.SearchMode_SEARCH_MODE_VECTOR, true},
		{"hybrid", ctxdv1.SearchMode_SEARCH_MODE_HYBRID, false},
		{"hybrid", ctxdv1.SearchMode_SEARCH_MODE_HYBRID, true},
	}
	var lats []wikiLatency
	for _, v := range variants {
		l := searchLatency(b, search, queries, v.name, v.mode, v.noEmbed)
		lats = append(lats, l)
		suffix := ""
		if v.noEmbed {
			suffix = "-noembed"
		}
		for j, name := range []string{"p50", "p95", "p99"} {
			b.ReportMetric(l.p[j], v.name+suffix+"-"+name+"-ms")
		}
	}

	// 3b. On PostgreSQL: a second replica started empty catches up from the
	// store, then serves the same searches from its own indexes.
	var catchup time.Duration
	var lats2 []wikiLatency
	if store == "postgres" {
		progress("starting a second replica, empty")
		tmp2 := shortTempDir(b)
		t0 := time.Now()
		p2 := startProcess(b, filepath.Join(tmp2, "data"), filepath.Join(tmp2, "s.sock"), args...)
		conn2 := dial(b, "unix://"+filepath.Join(tmp2, "s.sock"))
		admin2 := ctxdv1.NewAdminServiceClient(conn2)
		waitModel(b, admin2, 2*time.Minute)
		waitIndexed(b, admin2, 30*time.Minute)
		catchup = time.Since(t0)
		progress("second replica caught up after %s", catchup.Round(time.Millisecond))
		search2 := ctxdv1.NewSearchServiceClient(conn2)
		for _, v := range variants {
			l := searchLatency(b, search2, queries, v.name, v.mode, v.noEmbed)
			lats2 = append(lats2, l)
			suffix := ""
			if v.noEmbed {
				suffix = "-noembed"
			}
			b.ReportMetric(l.p[0], "B-"+v.name+suffix+"-p50-ms")
			b.ReportMetric(l.p[2], "B-"+v.name+suffix+"-p99-ms")
		}
		b.ReportMetric(catchup.Seconds(), "catchup-s")
		p2.stop(b)
	}

	// 4. Recall@10 of the vector mode against exact.
	progress("measuring recall@10")
	recall, unmatched := w.recall(b, search, items, queries[wikiWarmup:wikiWarmup+wikiRecallQueries])

	// 5. Start-up on the same data dir until search is served.
	p.stop(b)
	diskStopped := dirBytes(b, dataDir)
	progress("restarting")
	// A fresh connection per attempt, polled beside startProcess: one
	// connection's reconnect backoff (1 s after the first failed dial) would
	// round the figure up.
	served := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	t0 := time.Now()
	var startup time.Duration
	go func() {
		for {
			err := searchServed(socket, queries[wikiWarmup].text)
			if err == nil {
				startup = time.Since(t0)
			}
			if err == nil || time.Since(t0) > 10*time.Minute {
				served <- err
				return
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	p = startProcess(b, dataDir, socket, args...)
	health := time.Since(t0)
	if err := <-served; err != nil {
		b.Fatalf("no hybrid search served 10 min after the restart: %v", err)
	}
	rssRestarted := procStatusBytes(b, p.cmd.Process.Pid, "VmRSS")

	// 6. Serving memory: the restarted daemon answers the searches with the
	// query vector supplied, as in make bench-ingest-compare.
	progress("measuring serving memory")
	conn = dial(b, "unix://"+socket)
	search = ctxdv1.NewSearchServiceClient(conn)
	for _, v := range variants {
		if v.mode == ctxdv1.SearchMode_SEARCH_MODE_BM25 || v.noEmbed {
			searchLatency(b, search, queries, v.name, v.mode, v.noEmbed)
		}
	}
	pid = p.cmd.Process.Pid
	mem := servingMemory{
		chunks: chunks,
		peak:   procStatusBytes(b, pid, "VmHWM"),
		anon:   procStatusBytes(b, pid, "RssAnon"),
		file:   procStatusBytes(b, pid, "RssFile"),
	}
	// At rest: the store lets go of the pages searches mapped once it has
	// been idle a second (boltstore.DefaultReleaseIdle), within two.
	time.Sleep(3 * time.Second)
	mem.atRest = procStatusBytes(b, pid, "VmRSS")
	p.stop(b)

	fc := float64(chunks)
	b.ReportMetric(fc, "chunks")
	b.ReportMetric(float64(len(items))/ingest.Seconds(), "writes/s")
	b.ReportMetric(fc/ingest.Seconds(), "chunks/s")
	b.ReportMetric(ingest.Seconds(), "ingest-s")
	b.ReportMetric(float64(rss)/fc, "RSS-B/chunk")
	b.ReportMetric(float64(anon)/fc, "anon-RSS-B/chunk")
	b.ReportMetric(float64(peak)/fc, "peak-RSS-B/chunk")
	b.ReportMetric(float64(disk)/fc, "disk-B/chunk")
	b.ReportMetric(recall, "recall@10")
	b.ReportMetric(startup.Seconds(), "startup-s")

	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s: %d items (%d copies of the passages), %d chunks in the daemon\n", b.Name(), len(items), copies, chunks)
	fmt.Fprintf(&sb, "%s\n", construction)
	fmt.Fprintf(&sb, "ingest, index only (WriteBatch of %d items, %d in flight; the p50-ms, p99-ms and ops/s metrics are the batches'): writes done after %.1f s, indexes applied after %.1f s: %.0f writes/s, %.0f chunks/s\n",
		wikiBatch, wikiWriters, written.Seconds(), ingest.Seconds(), float64(len(items))/ingest.Seconds(), fc/ingest.Seconds())
	fmt.Fprintf(&sb, "memory: RSS after ingest %d MiB (%.0f B/chunk; anonymous %d MiB, %.0f B/chunk), peak %d MiB (%.0f B/chunk); after restart and one search %d MiB\n",
		rss>>20, float64(rss)/fc, anon>>20, float64(anon)/fc, peak>>20, float64(peak)/fc, rssRestarted>>20)
	fmt.Fprintf(&sb, "disk: data dir %d MiB (%.0f B/chunk) after ingest, %d MiB after SIGTERM; by component after ingest (ctxd status --disk), B/chunk:\n", disk>>20, float64(disk)/fc, diskStopped>>20)
	for _, c := range du.Disk {
		if per := float64(c.Bytes) / fc; per >= 1 {
			full := ""
			if c.UsedBytes > 0 {
				full = fmt.Sprintf(" (pages %.0f%% full, %d keys)", 100*float64(c.UsedBytes)/float64(c.Bytes), c.Keys)
			}
			fmt.Fprintf(&sb, "  %-24s %6.0f%s\n", c.Name, per, full)
		}
	}
	fmt.Fprintf(&sb, "search latency, %d queries one at a time after %d warm-up, limit %d (ms):\n", wikiQueries, wikiWarmup, wikiLimit)
	fmt.Fprintf(&sb, "  %-7s %-16s %8s %8s %8s %s\n", "mode", "query embedding", "p50", "p95", "p99", "no results")
	for _, l := range lats {
		emb := "by the daemon"
		switch {
		case l.mode == "bm25":
			emb = "none"
		case l.noEmbed:
			emb = "supplied"
		}
		fmt.Fprintf(&sb, "  %-7s %-16s %8.2f %8.2f %8.2f %d\n", l.mode, emb, l.p[0], l.p[1], l.p[2], l.empty)
	}
	if store == "postgres" {
		fmt.Fprintf(&sb, "a second replica started empty caught up (indexes applied the whole outbox, every chunk embedded) after %.1f s; its search latency (ms):\n", catchup.Seconds())
		for _, l := range lats2 {
			fmt.Fprintf(&sb, "  %-7s noembed=%-5v %8.2f %8.2f %8.2f %d\n", l.mode, l.noEmbed, l.p[0], l.p[1], l.p[2], l.empty)
		}
	}
	fmt.Fprintf(&sb, "recall@10 of vector mode vs exact brute force, %d queries: %.4f (%d results matched no written chunk)\n", wikiRecallQueries, recall, unmatched)
	fmt.Fprintf(&sb, "start-up after SIGTERM until a hybrid search is served: %.2f s (startProcess saw health SERVING after %.2f s)\n", startup.Seconds(), health.Seconds())
	fmt.Fprintf(&sb, "serving after the restart (%d queries each of bm25, vector and hybrid, the vector supplied): peak RSS %d MiB (%.0f B/chunk); at the end anonymous %d MiB (%.0f B/chunk), file pages %d MiB; at rest (3 s after the last search) RSS %d MiB\n",
		len(queries), mem.peak>>20, float64(mem.peak)/fc, mem.anon>>20, float64(mem.anon)/fc, mem.file>>20, mem.atRest>>20)
	lat := func(mode string, noEmbed bool) float64 {
		for _, l := range lats {
			if l.mode == mode && l.noEmbed == noEmbed {
				return l.p[0]
			}
		}
		return math.NaN()
	}
	goals := []struct {
		at   int // the size the goal is for; 0: every size
		text string
		ok   bool
		got  string
	}{
		{100000, "hybrid p50 <= 10 ms", lat("hybrid", false) <= 10, fmt.Sprintf("%.2f ms (%.2f ms with the query vector supplied)", lat("hybrid", false), lat("hybrid", true))},
		{100000, "BM25 p50 <= 5 ms", lat("bm25", false) <= 5, fmt.Sprintf("%.2f ms", lat("bm25", false))},
		{1000000, "vector p50 <= 50 ms", lat("vector", false) <= 50, fmt.Sprintf("%.2f ms (%.2f ms with the query vector supplied)", lat("vector", false), lat("vector", true))},
		{1000000, "recall@10 >= 0.98", recall >= 0.98, fmt.Sprintf("%.4f", recall)},
		{0, "ingest >= 5,000 chunks/s", fc/ingest.Seconds() >= 5000, fmt.Sprintf("%.0f chunks/s", fc/ingest.Seconds())},
		{1000000, "start-up <= 5 s", startup <= 5*time.Second, fmt.Sprintf("%.2f s", startup.Seconds())},
	}
	sb.WriteString("goals (latency goals judged with the daemon embedding the query):\n")
	for _, g := range goals {
		mark := "FAIL"
		if g.ok {
			mark = "PASS"
		}
		scope := ""
		if g.at != 0 {
			scope = fmt.Sprintf(" at chunks=%d", g.at)
			if g.at != n {
				mark = "n/a "
			}
		}
		fmt.Fprintf(&sb, "  [%s] %s%s: %s\n", mark, g.text, scope, g.got)
	}
	// Benchmark logs are cut after 10 lines, so the table goes to stdout
	// (make bench-search tees it into bench-results/search.txt).
	fmt.Print(sb.String())
	return mem
}

// searchLatency sends queries one at a time in mode, with the query vector
// supplied when noEmbed, and returns the latency percentiles of all but the
// first wikiWarmup.
func searchLatency(b *testing.B, search ctxdv1.SearchServiceClient, queries []wikiQuery, name string, mode ctxdv1.SearchMode, noEmbed bool) wikiLatency {
	b.Helper()
	l := wikiLatency{mode: name, noEmbed: noEmbed}
	var d []time.Duration
	for i, q := range queries {
		sq := &ctxdv1.SearchQuery{Text: q.text}
		if noEmbed {
			sq.Vector = q.vector
		}
		t0 := time.Now()
		resp, err := search.Search(context.Background(), &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{sq}, Mode: mode, Limit: wikiLimit})
		el := time.Since(t0)
		if err != nil {
			b.Fatalf("%s search %q: %v", name, q.text, err)
		}
		if resp.ModeUsed != mode {
			b.Fatalf("%s search %q: the daemon used %v (%s)", name, q.text, resp.ModeUsed, resp.ModeReason)
		}
		if i < wikiWarmup {
			continue
		}
		d = append(d, el)
		if len(resp.Results) == 0 {
			l.empty++
		}
	}
	slices.Sort(d)
	for j, pc := range []float64{0.50, 0.95, 0.99} {
		l.p[j] = float64(d[int(pc*float64(len(d)-1))].Microseconds()) / 1000
	}
	return l
}

// Bulk ingest through WriteBatch: wikiBatch items per call, wikiWriters
// calls in flight.
const (
	wikiBatch   = 256
	wikiWriters = 4
)

// ingest writes items with their chunk vectors through WriteBatch and waits
// until the indexes have applied them. It returns the time until the last
// write was acknowledged and until the indexes caught up, and the chunks
// the daemon holds. runClients reports the batches' latency and rate
// (p50-ms, p99-ms, ops/s).
func (w *wikiBench) ingest(b *testing.B, conn *grpc.ClientConn, items []wikiItem, modelID string) (written, ingested time.Duration, chunks int64) {
	b.Helper()
	vfsc, admin := ctxdv1.NewVfsServiceClient(conn), ctxdv1.NewAdminServiceClient(conn)
	request := func(it wikiItem) *ctxdv1.WriteRequest {
		embs := make([]*ctxdv1.Embedding, len(it.p.rows))
		for j, r := range it.p.rows {
			embs[j] = &ctxdv1.Embedding{Values: w.vector(r)}
		}
		return &ctxdv1.WriteRequest{
			Ref:             it.ref(),
			Body:            &ctxdv1.WriteRequest_Content{Content: it.p.text},
			MimeType:        "text/plain",
			Title:           it.p.title,
			ChunkEmbeddings: embs,
			EmbeddingModel:  modelID,
		}
	}
	writeBatch := func(batch []wikiItem) (*ctxdv1.WriteBatchResponse, error) {
		req := &ctxdv1.WriteBatchRequest{Items: make([]*ctxdv1.WriteRequest, len(batch))}
		for i, it := range batch {
			req.Items[i] = request(it)
		}
		resp, err := vfsc.WriteBatch(context.Background(), req)
		if err != nil {
			return nil, fmt.Errorf("write %s…%s: %w", batch[0].ref(), batch[len(batch)-1].ref(), err)
		}
		return resp, nil
	}
	start := time.Now()
	first, err := writeBatch(items[:1])
	if err != nil {
		b.Fatal(err)
	}
	if mt, _, err := mime.ParseMediaType(first.Results[0].Item.MimeType); err != nil || mt != "text/plain" {
		b.Fatalf("%s stored as %q; the bench chunks as text/plain", items[0].ref(), first.Results[0].Item.MimeType)
	}
	var batches [][]wikiItem
	for rest := items[1:]; len(rest) > 0; {
		n := min(wikiBatch, len(rest))
		batches, rest = append(batches, rest[:n]), rest[n:]
	}
	// runClients shares b.N calls; this body runs once, so b.N counts the
	// batches while it runs.
	if len(batches) > 0 {
		bn := b.N
		b.N = len(batches)
		runClients(b, wikiWriters, func(i int) error {
			_, err := writeBatch(batches[i])
			return err
		})
		b.N = bn
	}
	written = time.Since(start)
	st, err := admin.Status(context.Background(), &ctxdv1.StatusRequest{})
	if err != nil {
		b.Fatal(err)
	}
	if st.Embedding.PendingChunks != 0 {
		b.Fatalf("after the writes %d chunks wait for the daemon to embed them although every write carried its vectors: the precomputed embeddings were not stored",
			st.Embedding.PendingChunks)
	}
	st = waitIndexed(b, admin, 2*time.Hour)
	return written, time.Since(start), st.Index.ChunkCount
}

// recall measures recall@10 of vector-mode search with the query vector
// supplied against an exact top-10 over the chunks written. The exact 10th
// best cosine is the bar: a result counts when its chunk's exact cosine
// reaches it, so equal vectors (copies) may stand in for each other. It also
// returns how many results matched no written chunk by ref and span.
func (w *wikiBench) recall(b *testing.B, search ctxdv1.SearchServiceClient, items []wikiItem, queries []wikiQuery) (float64, int) {
	b.Helper()
	// Chunks per row for this size, and where each ref's passage is.
	mult := make([]int32, w.rows)
	byRef := make(map[string]*wikiPassage, len(items))
	var used []int32
	for _, it := range items {
		for _, r := range it.p.rows {
			if mult[r] == 0 {
				used = append(used, r)
			}
			mult[r]++
		}
		byRef[it.ref()] = it.p
	}
	const eps = 1e-5
	var sum float64
	unmatched := 0
	for _, q := range queries {
		// The 10 best rows bound the 10 best chunks (every row has >= 1 chunk).
		type scored struct {
			row   int32
			score float32
		}
		var top []scored
		for _, r := range used {
			s := vek32.Dot(q.vector, w.vector(r))
			if len(top) == wikiLimit && s <= top[len(top)-1].score {
				continue
			}
			i, _ := slices.BinarySearchFunc(top, s, func(e scored, s float32) int {
				if e.score > s {
					return -1
				}
				return 1
			})
			top = slices.Insert(top, i, scored{r, s})
			if len(top) > wikiLimit {
				top = top[:wikiLimit]
			}
		}
		var bar float32
		for k, seen := 0, int32(0); k < len(top); k++ {
			seen += mult[top[k].row]
			bar = top[k].score
			if seen >= wikiLimit {
				break
			}
		}
		resp, err := search.Search(context.Background(), &ctxdv1.SearchRequest{
			Queries:          []*ctxdv1.SearchQuery{{Text: q.text, Vector: q.vector}},
			Mode:             ctxdv1.SearchMode_SEARCH_MODE_VECTOR,
			Limit:            wikiLimit,
			MaxChunksPerItem: wikiLimit,
		})
		if err != nil {
			b.Fatalf("vector search %q: %v", q.text, err)
		}
		hits := 0
		for _, res := range resp.Results {
			p := byRef[res.Ref]
			ci := -1
			if p != nil && res.Span != nil {
				ci = slices.IndexFunc(p.chunks, func(c chunk.Chunk) bool {
					return int64(c.Start) == res.Span.Start && int64(c.End) == res.Span.End
				})
			}
			if ci < 0 {
				unmatched++
				continue
			}
			if vek32.Dot(q.vector, w.vector(p.rows[ci])) >= bar-eps {
				hits++
			}
		}
		sum += float64(min(hits, wikiLimit)) / wikiLimit
	}
	return sum / float64(len(queries)), unmatched
}

// waitSearchServed waits up to 10 minutes for a restarted daemon on socket
// to serve query in hybrid mode (searchServed): its vectors loaded.
func waitSearchServed(b *testing.B, socket, query string) {
	b.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for err := searchServed(socket, query); err != nil; err = searchServed(socket, query) {
		if time.Now().After(deadline) {
			b.Fatalf("no hybrid search served 10 min after the restart: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// searchServed runs one hybrid search on a new connection to socket and
// returns nil when the daemon answers it in hybrid mode with results.
func searchServed(socket, query string) error {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := ctxdv1.NewSearchServiceClient(conn).Search(ctx, &ctxdv1.SearchRequest{
		Queries: []*ctxdv1.SearchQuery{{Text: query}}, Mode: ctxdv1.SearchMode_SEARCH_MODE_HYBRID, Limit: wikiLimit,
	})
	switch {
	case err != nil:
		return err
	case resp.ModeUsed != ctxdv1.SearchMode_SEARCH_MODE_HYBRID:
		return fmt.Errorf("mode used %v: %s", resp.ModeUsed, resp.ModeReason)
	case len(resp.Results) == 0:
		return errors.New("no results")
	}
	return nil
}

// waitModel polls Status until the embedding model is loaded, so that the
// daemon chunks on write and knows its model id.
func waitModel(b *testing.B, admin ctxdv1.AdminServiceClient, timeout time.Duration) *ctxdv1.StatusResponse {
	b.Helper()
	return waitStatus(b, admin, timeout, "the embedding model", func(st *ctxdv1.StatusResponse) bool {
		return st.Embedding.Available && st.Embedding.ModelId != ""
	})
}

// waitIndexed polls Status until the indexes applied every outbox change and
// no chunk or item waits for a vector.
func waitIndexed(t testing.TB, admin ctxdv1.AdminServiceClient, timeout time.Duration) *ctxdv1.StatusResponse {
	t.Helper()
	return waitStatus(t, admin, timeout, "the indexes to catch up", func(st *ctxdv1.StatusResponse) bool {
		ix, e := st.Index, st.Embedding
		return ix.AppliedSequence >= ix.OutboxSequence && e.PendingChunks == 0 && e.PendingItems == 0
	})
}

// waitCompacted waits until the daemon has compacted its lexical index as
// far as it will: into one segment, or until it has stayed in the same
// segments, with no merge running, for longer than the engine's idle time
// before a merge (a large index can end in two segments whose smaller is
// too small to be worth a rewrite of the larger, see lexical.Segments.Worth),
// and returns how long it waited.
func waitCompacted(t testing.TB, admin ctxdv1.AdminServiceClient) time.Duration {
	t.Helper()
	start := time.Now()
	settle := search.DefaultCompactIdle + 5*time.Second
	var segments int32
	var since time.Time // when segments last changed or a merge ran
	waitStatus(t, admin, 30*time.Minute, "the lexical index to be compacted", func(st *ctxdv1.StatusResponse) bool {
		ix := st.Index
		if ix.Compacting || ix.LexicalSegments != segments {
			segments, since = ix.LexicalSegments, time.Now()
		}
		return !ix.Compacting && (ix.LexicalSegments == 1 || time.Since(since) > settle)
	})
	return time.Since(start)
}

// procStatusBytes reads a "kB" field of /proc/<pid>/status (VmRSS, VmHWM).
func procStatusBytes(b testing.TB, pid int, field string) int64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// dirBytes is the total size of the regular files under dir.
func dirBytes(b *testing.B, dir string) int64 {
	b.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			var info fs.FileInfo
			if info, err = d.Info(); err == nil {
				total += info.Size()
			}
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while the daemon runs (a merged segment)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return total
}

package daemon

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/beir"
)

// The docs corpus's known-item queries: generated from tldr pages, one
// relevant page each.
const (
	docsKnownItemQueries = "../../shared/data/docs-corpus/tldr-knownitem-queries.jsonl"
	docsKnownItemQrels   = "../../shared/data/docs-corpus/tldr-knownitem-qrels.tsv"
)

// Parameters of BenchmarkIngest_DocsCorpus.
const (
	ingestEdited        = 10 // tldr files edited before the second refresh
	ingestEditLine      = "\n- New example for benchmarking:\n\n`cmd --bench`\n"
	ingestSearchWorkers = 4
	ingestSearchLimit   = 10
	ingestRefreshGoal   = 2 * time.Second // issue 5: a refresh with nothing changed
)

// BenchmarkIngest_DocsCorpus measures `ctxd add` and `ctxd refresh` on the
// docs corpus (20,629 files) unpacked into a directory tree, through the real
// CLI and daemon processes with the default model, then checks known-item
// retrieval over what was added. It runs once regardless of b.N; run it with
// -benchtime=1x (make bench-ingest). CTXD_BENCH_DOCS=N takes the first N
// documents (the corpus starts with the tldr pages, so small runs keep some
// known items).
//
// Steps and metrics:
//  1. Unpack: document "tldr:pages/android/am.md" becomes the file
//     <tree>/tldr/pages/android/am.md with the text as its content (timed in
//     the log only).
//  2. Start the daemon with --allowed-root <tree> and wait for the model, so
//     that the first chunking uses the model's tokenizer.
//  3. `ctxd add <tree> --hidden --json` (one corpus file, "..md", is a
//     dotfile). Add returns once the search indexes applied every write, so
//     its wall time is "until searchable"; "until embedded" runs from the
//     same start until no chunk waits for a vector: files/s, chunks/s-indexed,
//     chunks/s-embedded, s-until-searchable, s-until-embedded, chunks.
//  4. `ctxd refresh --all --json` with nothing changed: s-refresh-unchanged
//     (goal <= 2 s).
//  5. Append an example to 10 tldr files spread evenly over them in id
//     order, then refresh again: s-refresh-10-edited,
//     chunks-reembedded-10-edited and chunks-reused-10-edited from the
//     summary, and s-until-reembedded, from the refresh's start until no
//     chunk waits for a vector. Only the edited files may embed chunks.
//  6. Known-item search, per mode (bm25, vector, hybrid): the 500 queries
//     whose page was added, limit 10 with one chunk per item (10 distinct
//     items), 4 concurrent clients: mrr-<mode> (1/rank of the page, 0 when
//     absent), recall@10-<mode> and <mode>-p50-ms (latency under that
//     concurrency).
//
// A table with every figure goes to stdout, because benchmark logs are cut
// after 10 lines (make bench-ingest tees it into bench-results/ingest.txt).
func BenchmarkIngest_DocsCorpus(b *testing.B) {
	limit, _ := strconv.Atoi(os.Getenv("CTXD_BENCH_DOCS"))
	docs, err := beir.LoadCorpus(docsCorpus, limit)
	if err != nil {
		b.Fatalf("%v (the shared data sits beside the repo)", err)
	}
	progress := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s %s: %s\n", time.Now().Format("15:04:05"), b.Name(), fmt.Sprintf(format, args...))
	}

	// 1. Unpack the corpus into a tree.
	tmp := shortTempDir(b)
	tree, dataDir, socket := filepath.Join(tmp, "tree"), filepath.Join(tmp, "data"), filepath.Join(tmp, "s.sock")
	start := time.Now()
	var corpusBytes int
	present := make(map[string]bool, len(docs))
	for _, d := range docs {
		if present[d.ID] {
			b.Fatalf("document id %s occurs twice", d.ID)
		}
		present[d.ID] = true
		name := docFile(tree, d.ID)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(d.Text), 0o644); err != nil {
			b.Fatal(err)
		}
		corpusBytes += len(d.Text)
	}
	files := int64(len(docs))
	b.Logf("unpacked %d files (%.1f MB) into %s in %s", files, float64(corpusBytes)/1e6, tree, time.Since(start).Round(time.Millisecond))

	// 2. The daemon, with the model loaded before anything is added.
	p := startProcess(b, dataDir, socket, "--model-dir", modelDir(b), "--onnxruntime-lib", ortLib(b), "--allowed-root", tree)
	conn := dial(b, "unix://"+socket)
	admin := ctxdv1.NewAdminServiceClient(conn)
	modelID := waitModel(b, admin, 2*time.Minute).Embedding.ModelId
	b.ResetTimer()

	// 3. Add the tree.
	progress("adding %d files", files)
	start = time.Now()
	add := runIngestCLI(b, socket, newAddResponse, "add", tree, "--hidden")
	searchable := add.elapsed
	if s := add.summary; s.Added != files || s.Failed != 0 {
		b.Fatalf("add summary %v, want %d added and none failed; items not added: %s", s, files, add.describeOthers(ctxdv1.IngestAction_INGEST_ACTION_ADDED))
	}
	chunksIndexed := mustStatus(b, admin).Index.ChunkCount
	progress("searchable after %s (%d chunks); waiting for the embeddings", searchable.Round(time.Millisecond), chunksIndexed)
	st := waitIndexed(b, admin, 3*time.Hour)
	embedded := time.Since(start)
	chunks := st.Index.ChunkCount
	vectors := st.Embedding.EmbeddedChunks
	if chunks != chunksIndexed {
		b.Errorf("%d chunks once embedded, %d when add returned", chunks, chunksIndexed)
	}

	// 4. Refresh with nothing changed.
	progress("embedded after %s; refreshing unchanged", embedded.Round(time.Millisecond))
	unchanged := runIngestCLI(b, socket, newRefreshResponse, "refresh", "--all")
	if s := unchanged.summary; s.Unchanged != files || s.Updated != 0 || s.Failed != 0 {
		b.Errorf("refresh with nothing changed: summary %v, want %d unchanged and none updated or failed; others: %s", s, files, unchanged.describeOthers(ctxdv1.IngestAction_INGEST_ACTION_UNCHANGED))
	}

	// 5. Edit 10 tldr files, refresh, and wait for their new chunks' vectors.
	edited := editTldrFiles(b, tree, docs)
	progress("refreshing after editing %d files", len(edited))
	vectorsBefore := mustStatus(b, admin).Embedding.EmbeddedChunks
	start = time.Now()
	refresh := runIngestCLI(b, socket, newRefreshResponse, "refresh", "--all")
	s := refresh.summary
	if s.Updated != ingestEdited || s.Unchanged != files-ingestEdited || s.Failed != 0 {
		b.Errorf("refresh after editing %d files: summary %v, want %d updated and %d unchanged; others: %s",
			ingestEdited, s, ingestEdited, files-ingestEdited, refresh.describeOthers(ctxdv1.IngestAction_INGEST_ACTION_UNCHANGED))
	}
	for _, it := range refresh.items {
		if it.ChunksQueued > 0 && !edited[it.Ref] {
			b.Errorf("refresh embedded %d chunks of %s, which was not edited", it.ChunksQueued, it.Ref)
		}
	}
	st = waitIndexed(b, admin, 10*time.Minute)
	reembedded := time.Since(start)
	// The store keeps one vector per distinct chunk text, so the vectors
	// can grow by at most the chunks the refresh queued.
	if grown := st.Embedding.EmbeddedChunks - vectorsBefore; grown > s.ChunksQueued {
		b.Errorf("vectors grew by %d after the refresh, which queued only %d chunks", grown, s.ChunksQueued)
	}

	// 6. Known-item search.
	known := knownItems(b, tree, present)
	progress("known-item search: %d queries per mode", len(known))
	search := ctxdv1.NewSearchServiceClient(conn)
	modes := []struct {
		name string
		mode ctxdv1.SearchMode
	}{
		{"bm25", ctxdv1.SearchMode_SEARCH_MODE_BM25},
		{"vector", ctxdv1.SearchMode_SEARCH_MODE_VECTOR},
		{"hybrid", ctxdv1.SearchMode_SEARCH_MODE_HYBRID},
	}
	results := make([]knownItemResult, len(modes))
	if len(known) > 0 {
		for i, m := range modes {
			results[i] = searchKnownItems(b, search, m.mode, known)
		}
	}
	b.StopTimer()
	peak := procStatusBytes(b, p.cmd.Process.Pid, "VmHWM")
	p.stop(b)

	fc := float64(chunks)
	b.ReportMetric(float64(files)/searchable.Seconds(), "files/s")
	b.ReportMetric(fc/searchable.Seconds(), "chunks/s-indexed")
	b.ReportMetric(fc/embedded.Seconds(), "chunks/s-embedded")
	b.ReportMetric(searchable.Seconds(), "s-until-searchable")
	b.ReportMetric(embedded.Seconds(), "s-until-embedded")
	b.ReportMetric(fc, "chunks")
	b.ReportMetric(unchanged.elapsed.Seconds(), "s-refresh-unchanged")
	b.ReportMetric(refresh.elapsed.Seconds(), "s-refresh-10-edited")
	b.ReportMetric(float64(s.ChunksQueued), "chunks-reembedded-10-edited")
	b.ReportMetric(float64(s.ChunksReused), "chunks-reused-10-edited")
	b.ReportMetric(reembedded.Seconds(), "s-until-reembedded")
	b.ReportMetric(float64(peak>>20), "peak-RSS-MiB")
	if len(known) > 0 {
		for i, m := range modes {
			b.ReportMetric(results[i].mrr, "mrr-"+m.name)
			b.ReportMetric(results[i].recall, "recall@10-"+m.name)
			b.ReportMetric(results[i].p50ms, m.name+"-p50-ms")
		}
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s: %d files (%.1f MB), model %s\n", b.Name(), files, float64(corpusBytes)/1e6, modelID)
	fmt.Fprintf(&sb, "add (ctxd add --hidden, the CLI's wall time):\n")
	fmt.Fprintf(&sb, "  until searchable  %8.2f s   %7.1f files/s  %7.1f chunks/s  (%d chunks, %d chunks queued for embedding, %d reused)\n",
		searchable.Seconds(), float64(files)/searchable.Seconds(), float64(chunksIndexed)/searchable.Seconds(), chunksIndexed, add.summary.ChunksQueued, add.summary.ChunksReused)
	fmt.Fprintf(&sb, "  until embedded    %8.2f s   %7.1f chunks/s  (%d distinct vectors)\n", embedded.Seconds(), fc/embedded.Seconds(), vectors)
	fmt.Fprintf(&sb, "refresh --all:\n")
	fmt.Fprintf(&sb, "  nothing changed   %8.2f s   (%d unchanged)\n", unchanged.elapsed.Seconds(), unchanged.summary.Unchanged)
	fmt.Fprintf(&sb, "  %d files edited   %8.2f s   (%d updated, %d chunks re-embedded, %d reused); embedded after %.2f s\n",
		ingestEdited, refresh.elapsed.Seconds(), s.Updated, s.ChunksQueued, s.ChunksReused, reembedded.Seconds())
	fmt.Fprintf(&sb, "known-item search, %d of the 500 tldr queries (those whose page was added), limit %d, 1 chunk per item, %d concurrent clients:\n",
		len(known), ingestSearchLimit, ingestSearchWorkers)
	fmt.Fprintf(&sb, "  %-7s %7s %10s %8s\n", "mode", "MRR", "Recall@10", "p50 ms")
	for i, m := range modes {
		if len(known) == 0 {
			fmt.Fprintf(&sb, "  %-7s %7s %10s %8s\n", m.name, "-", "-", "-")
			continue
		}
		fmt.Fprintf(&sb, "  %-7s %7.4f %10.4f %8.2f\n", m.name, results[i].mrr, results[i].recall, results[i].p50ms)
	}
	mark := "FAIL"
	if unchanged.elapsed <= ingestRefreshGoal {
		mark = "PASS"
	}
	fmt.Fprintf(&sb, "goal: [%s] refresh with nothing changed <= %s: %.2f s\n", mark, ingestRefreshGoal, unchanged.elapsed.Seconds())
	fmt.Fprintf(&sb, "peak daemon RSS %d MiB\n", peak>>20)
	fmt.Print(sb.String())
}

// docFile is where a corpus document goes in the tree: its id with the
// first ":" made a "/".
func docFile(tree, id string) string {
	return filepath.Join(tree, filepath.FromSlash(strings.Replace(id, ":", "/", 1)))
}

// docRef is the disk-drive ref `ctxd add` gives a document's file.
func docRef(tree, id string) string {
	return "disk:" + filepath.ToSlash(docFile(tree, id))
}

// editTldrFiles appends an example to ingestEdited tldr files spread evenly
// over them in id order, and returns their refs.
func editTldrFiles(b *testing.B, tree string, docs []beir.Doc) map[string]bool {
	b.Helper()
	var ids []string
	for _, d := range docs {
		if strings.HasPrefix(d.ID, "tldr:") {
			ids = append(ids, d.ID)
		}
	}
	if len(ids) < ingestEdited {
		b.Fatalf("%d tldr documents, the bench edits %d: raise CTXD_BENCH_DOCS", len(ids), ingestEdited)
	}
	slices.Sort(ids)
	edited := make(map[string]bool, ingestEdited)
	for k := range ingestEdited {
		id := ids[k*len(ids)/ingestEdited]
		f, err := os.OpenFile(docFile(tree, id), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.WriteString(ingestEditLine); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		edited[docRef(tree, id)] = true
	}
	return edited
}

// mustStatus calls Status and fails the benchmark on error.
func mustStatus(b *testing.B, admin ctxdv1.AdminServiceClient) *ctxdv1.StatusResponse {
	b.Helper()
	st, err := admin.Status(context.Background(), &ctxdv1.StatusRequest{})
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// ingestEvent is an AddResponse or a RefreshResponse as `ctxd --json`
// prints them.
type ingestEvent interface {
	proto.Message
	GetItem() *ctxdv1.IngestItemResult
	GetSummary() *ctxdv1.IngestSummary
}

func newAddResponse() *ctxdv1.AddResponse         { return &ctxdv1.AddResponse{} }
func newRefreshResponse() *ctxdv1.RefreshResponse { return &ctxdv1.RefreshResponse{} }

// ingestRun is the outcome of one ctxd add or refresh command.
type ingestRun struct {
	elapsed time.Duration // from starting the CLI until it exited
	summary *ctxdv1.IngestSummary
	items   []*ctxdv1.IngestItemResult // the item lines (unchanged items have none)
}

// describeOthers lists up to 5 items whose action is not want, for errors.
func (r ingestRun) describeOthers(want ctxdv1.IngestAction) string {
	var out []string
	n := 0
	for _, it := range r.items {
		if it.Action == want {
			continue
		}
		if n++; n <= 5 {
			out = append(out, fmt.Sprintf("%s %s %s", it.Action, it.Ref, it.ErrorMessage))
		}
	}
	if n > 5 {
		out = append(out, fmt.Sprintf("and %d more", n-5))
	}
	if n == 0 {
		return "none reported"
	}
	return strings.Join(out, "; ")
}

// runIngestCLI runs `ctxd --socket socket <args> --json` to its end and
// parses its event lines; the last must be the summary. A non-zero exit
// (an item failed) is left for the caller to judge by the summary.
func runIngestCLI[T ingestEvent](b *testing.B, socket string, newEvent func() T, args ...string) ingestRun {
	b.Helper()
	cmd := exec.Command(ctxdBinary(b), append([]string{"--socket", socket}, append(args, "--json")...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	runErr := cmd.Run()
	run := ingestRun{elapsed: time.Since(start)}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		ev := newEvent()
		if err := protojson.Unmarshal(sc.Bytes(), ev); err != nil {
			b.Fatalf("ctxd %s: output line %q: %v", strings.Join(args, " "), sc.Text(), err)
		}
		run.summary = nil // the summary must be the last line
		if it := ev.GetItem(); it != nil {
			run.items = append(run.items, it)
		}
		if s := ev.GetSummary(); s != nil {
			run.summary = s
		}
	}
	if run.summary == nil {
		b.Fatalf("ctxd %s: no summary as the last line (exit: %v)\n%s", strings.Join(args, " "), runErr, stderr.Bytes())
	}
	if runErr != nil && run.summary.Failed == 0 {
		b.Fatalf("ctxd %s: %v although no item failed\n%s", strings.Join(args, " "), runErr, stderr.Bytes())
	}
	return run
}

// knownItem is a known-item query and the ref of its one relevant page.
type knownItem struct {
	query, ref string
}

// knownItems returns the known-item queries whose relevant page is present.
func knownItems(b *testing.B, tree string, present map[string]bool) []knownItem {
	b.Helper()
	queries, err := beir.LoadQueries(docsKnownItemQueries)
	if err != nil {
		b.Fatal(err)
	}
	qrels, err := beir.LoadQrels(docsKnownItemQrels)
	if err != nil {
		b.Fatal(err)
	}
	var out []knownItem
	for _, q := range queries {
		var rel []string
		for id, grade := range qrels[q.ID] {
			if grade > 0 {
				rel = append(rel, id)
			}
		}
		if len(rel) != 1 {
			b.Fatalf("known-item query %s has %d relevant documents, want 1", q.ID, len(rel))
		}
		if present[rel[0]] {
			out = append(out, knownItem{query: q.Text, ref: docRef(tree, rel[0])})
		}
	}
	return out
}

// knownItemResult is one mode's known-item figures.
type knownItemResult struct {
	mrr, recall float64
	p50ms       float64
}

// searchKnownItems runs every query in mode with ingestSearchWorkers
// concurrent clients and scores where the relevant item ranks.
func searchKnownItems(b *testing.B, search ctxdv1.SearchServiceClient, mode ctxdv1.SearchMode, known []knownItem) knownItemResult {
	b.Helper()
	ranks := make([]int, len(known)) // 1-based; 0: not in the results
	lats := make([]time.Duration, len(known))
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var failure error
	for range ingestSearchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				resp, err := search.Search(context.Background(), &ctxdv1.SearchRequest{
					Queries:          []*ctxdv1.SearchQuery{{Text: known[i].query}},
					Mode:             mode,
					Limit:            ingestSearchLimit,
					MaxChunksPerItem: 1,
				})
				lats[i] = time.Since(t0)
				if err == nil && resp.ModeUsed != mode {
					err = fmt.Errorf("the daemon used %v (%s)", resp.ModeUsed, resp.ModeReason)
				}
				if err != nil {
					once.Do(func() { failure = fmt.Errorf("%v search %q: %w", mode, known[i].query, err) })
					continue
				}
				ranks[i] = slices.IndexFunc(resp.Results, func(r *ctxdv1.SearchResult) bool { return r.Ref == known[i].ref }) + 1
			}
		}()
	}
	for i := range known {
		next <- i
	}
	close(next)
	wg.Wait()
	if failure != nil {
		b.Fatal(failure)
	}
	var r knownItemResult
	for _, rank := range ranks {
		if rank > 0 {
			r.mrr += 1 / float64(rank)
			r.recall++
		}
	}
	n := float64(len(known))
	r.mrr, r.recall = r.mrr/n, r.recall/n
	slices.Sort(lats)
	r.p50ms = float64(lats[int(math.Round(0.5*float64(len(lats)-1)))].Microseconds()) / 1000
	return r
}

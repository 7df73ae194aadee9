// Command ctxd-eval measures ctxd's retrieval quality on judged test
// collections in the BEIR layout (see internal/beir), and is what `make eval`
// runs.
//
// A collection is a folder of -data (cranfield, cacm, vaswani, ...) or one
// of the subsets in subsetCollections: "tldr" is the 7,425 tldr pages
// (tldr-pages project, CC BY 4.0) of docs-corpus, markdown command pages
// titled with the command's name, with its 500 synthetic known-item queries:
// each was generated from one page's description of an example, not judged
// by people, and has that page as its only relevant document.
//
// For each collection it starts a real daemon in-process on a fresh temp dir
// (so collections never share an index), writes every document through
// VfsService.Write, waits until chunking, embedding and the search indexes
// have caught up, then sends every query with at least one relevant judgement
// through SearchService.Search once per mode (bm25, vector, hybrid). A
// document with a title is written as markdown, "# Title", a blank line and
// its text, the way a user writes a note (its text alone when that already
// opens with the title's H1, as a tldr page does); one without as plain
// text. The same documents and queries are also scored by a textbook BM25
// written for the eval (reference.go), the baseline ctxd's bm25 mode should
// match. It
// reports nDCG@10 and Recall@100 as trec_eval defines them (see metrics.go),
// the median query latency seen by the client, and per collection whether
// bm25 reaches the reference and hybrid the better of its single legs. Each
// mode is also searched with the proximity rerank on and off and with
// recency off, and the report compares them query by query (signals.go).
// Going through the gRPC API rather than the index packages means the
// numbers describe what a client actually gets.
//
// The exit status is non-zero on any error (a collection that cannot be read,
// a failed call, a mode the server silently replaced, indexing that does not
// finish within -timeout), never because of the quality numbers themselves.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ctxd/ctxd/daemon"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/beir"
)

const (
	// ndcgCutoff and recallCutoff are the reported metrics' depths; the search
	// asks for recallCutoff results so both are computed from one call.
	ndcgCutoff   = 10
	recallCutoff = 100
	// pollInterval is how often indexing progress is checked.
	pollInterval = 200 * time.Millisecond
	// progressInterval is how often a long wait reports progress on stderr.
	progressInterval = 10 * time.Second
)

var modeNames = map[string]ctxdv1.SearchMode{
	"bm25":   ctxdv1.SearchMode_SEARCH_MODE_BM25,
	"vector": ctxdv1.SearchMode_SEARCH_MODE_VECTOR,
	"hybrid": ctxdv1.SearchMode_SEARCH_MODE_HYBRID,
}

var legNames = map[string]ctxdv1.SearchLeg{
	"bm25":      ctxdv1.SearchLeg_SEARCH_LEG_BM25,
	"substring": ctxdv1.SearchLeg_SEARCH_LEG_SUBSTRING,
	"vector":    ctxdv1.SearchLeg_SEARCH_LEG_VECTOR,
}

func main() {
	// Cancelling on a signal lets the deferred Stop and temp-dir removal run.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ctxd-eval:", err)
		os.Exit(1)
	}
}

// options are the parsed flags.
type options struct {
	data        string
	collections []string
	modes       []string
	modelDir    string
	ortLib      string
	out         string
	rrfK        int
	weightsFlag string
	weights     []*ctxdv1.LegWeight
	timeout     time.Duration
	concurrency int
	priors      []float64 // weights at which each prior gets rows of its own
}

func parseFlags(args []string) (options, error) {
	var o options
	var collections, modes, priors string
	fs := flag.NewFlagSet("ctxd-eval", flag.ExitOnError)
	fs.StringVar(&o.data, "data", "", "directory holding one BEIR collection per subdirectory (required)")
	fs.StringVar(&collections, "collections", "cranfield,cacm,vaswani,tldr", "comma-separated collections to evaluate: folders of -data in the BEIR layout, or tldr (the tldr pages of docs-corpus and their known-item queries)")
	fs.StringVar(&modes, "modes", "bm25,vector,hybrid", "comma-separated search modes: bm25, vector, hybrid (bm25 alone needs no model; the reference BM25 is always reported)")
	fs.StringVar(&o.modelDir, "model-dir", "", "embedding model directory (daemon model_dir)")
	fs.StringVar(&o.ortLib, "onnxruntime-lib", "", "path of libonnxruntime.so (daemon onnxruntime_lib)")
	fs.StringVar(&o.out, "out", "", "also write the markdown report to this file")
	fs.IntVar(&o.rrfK, "rrf-k", 0, "reciprocal rank fusion constant; 0 = server default")
	fs.StringVar(&o.weightsFlag, "weights", "", "leg weights, e.g. bm25=1,substring=0.5,vector=1; empty = server defaults")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "longest wait for indexing to finish, per collection")
	fs.IntVar(&o.concurrency, "concurrency", 4, "concurrent write batches while ingesting")
	fs.StringVar(&priors, "priors", "0.3", "comma-separated prior weights in (0, 1]: each adds rows per mode searching with importance_weight, then usage_weight, at that weight (after every other row, so usage is what those searches recorded); empty = none")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.data == "" {
		return o, fmt.Errorf("-data is required")
	}
	if o.rrfK < 0 {
		return o, fmt.Errorf("-rrf-k must be >= 0, got %d", o.rrfK)
	}
	if o.concurrency < 1 {
		return o, fmt.Errorf("-concurrency must be >= 1, got %d", o.concurrency)
	}
	var err error
	if o.collections, err = splitList("-collections", collections, nil); err != nil {
		return o, err
	}
	if o.modes, err = splitList("-modes", modes, func(m string) bool { _, ok := modeNames[m]; return ok }); err != nil {
		return o, err
	}
	if o.weights, err = parseWeights(o.weightsFlag); err != nil {
		return o, err
	}
	if o.priors, err = parsePriors(priors); err != nil {
		return o, err
	}
	return o, nil
}

// parsePriors parses "0.1,0.3"; an empty string means no prior rows.
func parsePriors(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	list, err := splitList("-priors", s, nil)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(list))
	for i, f := range list {
		w, err := strconv.ParseFloat(f, 64)
		if err != nil || !(w > 0 && w <= 1) {
			return nil, fmt.Errorf("-priors: a weight must be a number in (0, 1], got %q", f)
		}
		out[i] = w
	}
	return out, nil
}

// splitList splits a comma-separated flag, rejecting empty lists, duplicates
// and, when valid is set, unknown names.
func splitList(flagName, s string, valid func(string) bool) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
			continue
		case valid != nil && !valid(f):
			return nil, fmt.Errorf("%s: unknown name %q", flagName, f)
		case seen[f]:
			return nil, fmt.Errorf("%s: %q is listed twice", flagName, f)
		}
		seen[f] = true
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty list", flagName)
	}
	return out, nil
}

// parseWeights parses "bm25=1,substring=0.5,vector=1". An empty string means
// no weights, so the server's defaults apply.
func parseWeights(s string) ([]*ctxdv1.LegWeight, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []*ctxdv1.LegWeight
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return nil, fmt.Errorf("-weights: %q is not leg=weight", f)
		}
		leg, known := legNames[name]
		if !known {
			return nil, fmt.Errorf("-weights: unknown leg %q; use bm25, substring or vector", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("-weights: leg %q is listed twice", name)
		}
		seen[name] = true
		w, err := strconv.ParseFloat(value, 64)
		if err != nil || w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("-weights: weight of %s must be a number >= 0, got %q", name, value)
		}
		out = append(out, &ctxdv1.LegWeight{Leg: leg, Weight: w})
	}
	return out, nil
}

// collectionResult is what one collection's evaluation reports.
type collectionResult struct {
	name    string
	docs    int // documents written
	skipped int // documents with neither title nor text, not written
	queries int // queries with at least one relevant judgement
	chunks  int64
	ingest  time.Duration // from the first write until indexing caught up
	modelID string
	modes   []modeResult
}

// modeResult is one mode's scores on one collection.
type modeResult struct {
	mode   string
	ndcg   float64 // mean nDCG@10
	recall float64 // mean Recall@100
	p50ms  float64 // median client-side query latency
	// The row's search, and per judged query (in order) its scores and
	// ranked documents, for the paired comparisons of signals.
	variant        searchVariant
	base           string // mode without the variant's options
	ndcgs, recalls []float64
	ranked         [][]string
}

func run(ctx context.Context, args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	analyzer, err := analyzerEN()
	if err != nil {
		return err
	}
	var results []collectionResult
	for _, name := range o.collections {
		r, err := evalCollection(ctx, o, name, analyzer, log)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		// Print each collection's rows as it finishes, so a failure in a
		// later collection does not hide earlier numbers.
		for _, m := range r.modes {
			progress("%s: %s nDCG@10 %.4f Recall@100 %.4f p50 %s ms", name, m.mode, m.ndcg, m.recall, formatMs(m.p50ms))
		}
		results = append(results, r)
	}
	report := formatReport(o, results)
	fmt.Print(report)
	if o.out == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(o.out, []byte(report), 0o644)
}

// progress reports what a long run is doing on stderr, keeping stdout for
// the report.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ctxd-eval: "+format+"\n", args...)
}

// judgedQuery is a query with its judged documents.
type judgedQuery struct {
	id, text string
	grades   map[string]int
}

// collectionFiles says where a collection's files are and which of its
// documents it keeps.
type collectionFiles struct {
	dir            string // folder under -data
	queries, qrels string // file names in dir; the corpus is corpus.jsonl.gz
	source         string // keep only documents of this source; "" keeps all
}

// subsetCollections are collections made of part of a folder; any other
// name is a folder of its own in the plain BEIR layout.
var subsetCollections = map[string]collectionFiles{
	// The tldr pages of docs-corpus (titled markdown, one command each) and
	// the synthetic known-item queries written from their descriptions.
	"tldr": {dir: "docs-corpus", queries: "tldr-knownitem-queries.jsonl", qrels: "tldr-knownitem-qrels.tsv", source: "tldr"},
}

// filesOf returns where collection name's files are.
func filesOf(name string) collectionFiles {
	if f, ok := subsetCollections[name]; ok {
		return f
	}
	return collectionFiles{dir: name, queries: "queries.jsonl", qrels: "qrels.tsv"}
}

// loadCollection reads collection name under data and keeps the queries
// that have at least one relevant (grade > 0) judgement: the others have no
// defined nDCG or recall, and trec_eval leaves them out too. A relevant
// judgement on a document the source filter dropped is an error: it would
// silently cap the recall.
func loadCollection(data, name string) ([]beir.Doc, []judgedQuery, error) {
	f := filesOf(name)
	dir := filepath.Join(data, f.dir)
	all, err := beir.LoadCorpus(filepath.Join(dir, "corpus.jsonl.gz"), 0)
	if err != nil {
		return nil, nil, err
	}
	docs := all
	dropped := map[string]bool{}
	if f.source != "" {
		docs = nil
		for _, d := range all {
			if d.Source == f.source {
				docs = append(docs, d)
			} else {
				dropped[d.ID] = true
			}
		}
	}
	queries, err := beir.LoadQueries(filepath.Join(dir, f.queries))
	if err != nil {
		return nil, nil, err
	}
	qrels, err := beir.LoadQrels(filepath.Join(dir, f.qrels))
	if err != nil {
		return nil, nil, err
	}
	var judged []judgedQuery
	for _, q := range queries {
		relevant := false
		for id, g := range qrels[q.ID] {
			if g <= 0 {
				continue
			}
			if dropped[id] {
				return nil, nil, fmt.Errorf("%s: query %s judges document %s relevant, which is not of source %q", dir, q.ID, id, f.source)
			}
			relevant = true
		}
		if relevant {
			judged = append(judged, judgedQuery{id: q.ID, text: q.Text, grades: qrels[q.ID]})
		}
	}
	if len(judged) == 0 {
		return nil, nil, fmt.Errorf("%s: no query has a relevant judgement", dir)
	}
	return docs, judged, nil
}

func evalCollection(ctx context.Context, o options, name string, analyzer analysis.Analyzer, log *slog.Logger) (_ collectionResult, err error) {
	res := collectionResult{name: name}
	docs, judged, err := loadCollection(o.data, name)
	if err != nil {
		return res, err
	}
	res.queries = len(judged)
	res.modes = append(res.modes, evalReference(analyzer, docs, judged))

	// A short temp path: unix socket paths are limited to 107 bytes.
	dir, err := os.MkdirTemp("", "ctxd-eval")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	cfg := daemon.DefaultConfig()
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.Socket = filepath.Join(dir, "s.sock")
	cfg.TokenFile = filepath.Join(dir, "token")
	cfg.HTTP = ""
	cfg.ModelDir = o.modelDir
	cfg.OnnxRuntimeLib = o.ortLib
	d, err := daemon.Start(ctx, cfg, log)
	if err != nil {
		return res, fmt.Errorf("start daemon: %w", err)
	}
	defer func() {
		// Not ctx: it may be the cancelled one that got us here.
		stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if stopErr := d.Stop(stopCtx); stopErr != nil && err == nil {
			err = fmt.Errorf("stop daemon: %w", stopErr)
		}
	}()
	// The unix socket needs no token: it is reachable only by its owner.
	conn, err := grpc.NewClient("unix://"+cfg.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return res, err
	}
	defer conn.Close()

	progress("%s: writing %d documents", name, len(docs))
	start := time.Now()
	refToDoc, skipped, err := ingest(ctx, ctxdv1.NewVfsServiceClient(conn), name, docs, o.concurrency)
	if err != nil {
		return res, err
	}
	res.docs, res.skipped = len(refToDoc), skipped
	st, err := waitIndexed(ctx, ctxdv1.NewAdminServiceClient(conn), name, o.timeout, needsVectors(o.modes))
	if err != nil {
		return res, err
	}
	res.ingest = time.Since(start)
	res.chunks = st.GetIndex().GetChunkCount()
	res.modelID = st.GetEmbedding().GetModelId()
	progress("%s: indexed %d documents into %d chunks in %s", name, res.docs, res.chunks, res.ingest.Round(time.Millisecond))

	search := ctxdv1.NewSearchServiceClient(conn)
	for _, v := range variants(o.priors) {
		for _, mode := range o.modes {
			m, err := evalMode(ctx, search, o, mode, v, judged, refToDoc)
			if err != nil {
				return res, err
			}
			res.modes = append(res.modes, m)
		}
	}
	return res, nil
}

// searchVariant is how one row of a mode searches.
type searchVariant struct {
	items      bool    // group_by ITEM
	importance float64 // importance_weight
	usage      float64 // usage_weight
	proximity  ctxdv1.SearchToggle
	recency    ctxdv1.SearchToggle
}

// variants are the rows of each mode: chunk and item grouping with the
// server's defaults; both groupings with the proximity rerank on, then off,
// and with recency off; then each prior at each weight, in chunk grouping.
func variants(priors []float64) []searchVariant {
	vs := []searchVariant{{}, {items: true}}
	for _, v := range []searchVariant{
		{proximity: ctxdv1.SearchToggle_SEARCH_TOGGLE_ON},
		{proximity: ctxdv1.SearchToggle_SEARCH_TOGGLE_OFF},
		{recency: ctxdv1.SearchToggle_SEARCH_TOGGLE_OFF},
	} {
		items := v
		items.items = true
		vs = append(vs, v, items)
	}
	for _, w := range priors {
		vs = append(vs, searchVariant{importance: w}, searchVariant{usage: w})
	}
	return vs
}

// itemsSuffix marks the rows of item grouping (group_by ITEM) in the report.
const itemsSuffix = " (items)"

// grouping names the row's grouping: mode, or mode with itemsSuffix.
func (v searchVariant) grouping(mode string) string {
	if v.items {
		return mode + itemsSuffix
	}
	return mode
}

// label names mode's row of variant v in the report.
func (v searchVariant) label(mode string) string {
	g := v.grouping(mode)
	switch {
	case v.importance > 0:
		return fmt.Sprintf("%s +importance %g", g, v.importance)
	case v.usage > 0:
		return fmt.Sprintf("%s +usage %g", g, v.usage)
	case v.proximity == ctxdv1.SearchToggle_SEARCH_TOGGLE_ON:
		return g + " +proximity"
	case v.proximity == ctxdv1.SearchToggle_SEARCH_TOGGLE_OFF:
		return g + " -proximity"
	case v.recency == ctxdv1.SearchToggle_SEARCH_TOGGLE_OFF:
		return g + " -recency"
	}
	return g
}

// docRef is where a document is written. Path-escaping the id keeps ids
// holding '/' (or anything else a path segment may not) to one segment;
// the ref → id map built from the write responses is what maps results back.
func docRef(collection, id string) string {
	return "eval:/" + collection + "/" + url.PathEscape(id)
}

// ingestBatch is how many documents one WriteBatch carries.
const ingestBatch = 256

// ingest writes every document with non-empty content (see docContent) in
// WriteBatch calls of ingestBatch documents, concurrency at a time. It
// returns the stored ref → document id map and the number of documents
// skipped for empty content.
func ingest(ctx context.Context, c ctxdv1.VfsServiceClient, collection string, docs []beir.Doc, concurrency int) (map[string]string, int, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu       sync.Mutex
		refToDoc = make(map[string]string, len(docs))
		wg       sync.WaitGroup
		jobs     = make(chan []beir.Doc)
	)
	for range concurrency {
		wg.Go(func() {
			for batch := range jobs {
				req := &ctxdv1.WriteBatchRequest{Items: make([]*ctxdv1.WriteRequest, len(batch))}
				for i, doc := range batch {
					content, mime := docContent(doc)
					req.Items[i] = &ctxdv1.WriteRequest{
						Ref:  docRef(collection, doc.ID),
						Body: &ctxdv1.WriteRequest_Content{Content: content},
						// Named, so detection by extension cannot read an id
						// like "x.md" as another type than docContent chose.
						// No Title: as in a user's note, the H1 carries it.
						MimeType:   mime,
						OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE,
					}
				}
				resp, err := c.WriteBatch(ctx, req)
				if err != nil {
					cancel(fmt.Errorf("write documents %q to %q: %w", batch[0].ID, batch[len(batch)-1].ID, err))
					return
				}
				mu.Lock()
				for i, res := range resp.GetResults() {
					// Key by the ref the server stored, not the one sent, so
					// any normalisation on its side cannot break the mapping.
					ref := res.GetItem().GetRef()
					if prev, dup := refToDoc[ref]; dup {
						mu.Unlock()
						cancel(fmt.Errorf("documents %q and %q were both stored at %s", prev, batch[i].ID, ref))
						return
					}
					refToDoc[ref] = batch[i].ID
				}
				mu.Unlock()
			}
		})
	}
	skipped := 0
	var batch []beir.Doc
	send := func() bool {
		select {
		case jobs <- batch:
			batch = nil
			return true
		case <-ctx.Done():
			return false
		}
	}
feed:
	for _, doc := range docs {
		if content, _ := docContent(doc); content == "" {
			skipped++
			continue
		}
		if batch = append(batch, doc); len(batch) == ingestBatch && !send() {
			break feed
		}
	}
	if len(batch) > 0 {
		send()
	}
	close(jobs)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, 0, err
	}
	return refToDoc, skipped, nil
}

// needsVectors reports whether any of modes searches the vector index.
func needsVectors(modes []string) bool {
	return slices.ContainsFunc(modes, func(m string) bool { return m != "bm25" })
}

// waitIndexed polls Status until nothing waits to be chunked, the search
// indexes have applied every store change and, with vectors, the embedding
// model is loaded and nothing waits to be embedded; searching earlier would
// score a partial index. Without vectors no model is needed.
func waitIndexed(ctx context.Context, c ctxdv1.AdminServiceClient, collection string, timeout time.Duration, vectors bool) (*ctxdv1.StatusResponse, error) {
	deadline := time.Now().Add(timeout)
	lastProgress := time.Now()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		st, err := c.Status(ctx, &ctxdv1.StatusRequest{})
		if err != nil {
			return nil, fmt.Errorf("status: %w", err)
		}
		e, ix := st.GetEmbedding(), st.GetIndex()
		embedded := !vectors || (e.GetAvailable() && e.GetPendingChunks() == 0)
		if embedded && e.GetPendingItems() == 0 &&
			ix.GetAvailable() && ix.GetAppliedSequence() >= ix.GetOutboxSequence() {
			return st, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("indexing not finished after -timeout %s: %s", timeout, describeStatus(st))
		}
		if time.Since(lastProgress) >= progressInterval {
			progress("%s: waiting for indexing: %s", collection, describeStatus(st))
			lastProgress = time.Now()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// describeStatus says what indexing is waiting for, including the reasons
// the server gives for anything unavailable.
func describeStatus(st *ctxdv1.StatusResponse) string {
	e, ix := st.GetEmbedding(), st.GetIndex()
	s := fmt.Sprintf("embedding available=%t, %d items to chunk, %d chunks to embed; index available=%t, applied %d of %d",
		e.GetAvailable(), e.GetPendingItems(), e.GetPendingChunks(),
		ix.GetAvailable(), ix.GetAppliedSequence(), ix.GetOutboxSequence())
	if r := e.GetUnavailableReason(); r != "" {
		s += "; embedding unavailable: " + r
	}
	if r := ix.GetUnavailableReason(); r != "" {
		s += "; index unavailable: " + r
	}
	return s
}

// evalMode runs every judged query in one mode, one at a time so the
// latencies are not inflated by each other, and averages the scores. Chunk
// grouping keeps one result per document (max_chunks_per_item 1), so the
// limit counts documents either way; item grouping fuses the legs' item
// ranks instead of their chunk ranks.
func evalMode(ctx context.Context, c ctxdv1.SearchServiceClient, o options, mode string, v searchVariant, judged []judgedQuery, refToDoc map[string]string) (modeResult, error) {
	want, label := modeNames[mode], v.label(mode)
	groupBy := ctxdv1.SearchGroupBy_SEARCH_GROUP_BY_CHUNK
	if v.items {
		groupBy = ctxdv1.SearchGroupBy_SEARCH_GROUP_BY_ITEM
	}
	var ndcgs, recalls, latencies []float64
	var rankings [][]string
	for _, q := range judged {
		req := &ctxdv1.SearchRequest{
			Queries:          []*ctxdv1.SearchQuery{{Text: q.text}},
			Mode:             want,
			Limit:            recallCutoff,
			MaxChunksPerItem: 1,
			GroupBy:          groupBy,
			RrfK:             int32(o.rrfK),
			LegWeights:       o.weights,
			ImportanceWeight: v.importance,
			UsageWeight:      v.usage,
			Proximity:        v.proximity,
			Recency:          v.recency,
		}
		start := time.Now()
		resp, err := c.Search(ctx, req)
		elapsed := time.Since(start)
		if err != nil {
			return modeResult{}, fmt.Errorf("%s search, query %s: %w", label, q.id, err)
		}
		// A silent fallback (vector to bm25 when the model is missing, say)
		// would report one mode's numbers under another's name.
		if resp.GetModeUsed() != want {
			return modeResult{}, fmt.Errorf("%s search, query %s: server used %s instead: %s",
				label, q.id, resp.GetModeUsed(), resp.GetModeReason())
		}
		ranked, err := rankedDocs(resp.GetResults(), refToDoc)
		if err != nil {
			return modeResult{}, fmt.Errorf("%s search, query %s: %w", label, q.id, err)
		}
		ndcgs = append(ndcgs, NDCG(ranked, q.grades, ndcgCutoff))
		recalls = append(recalls, Recall(ranked, q.grades, recallCutoff))
		latencies = append(latencies, float64(elapsed.Microseconds())/1000)
		rankings = append(rankings, ranked)
	}
	return modeResult{
		mode: label, ndcg: Mean(ndcgs), recall: Mean(recalls), p50ms: Median(latencies),
		variant: v, base: mode, ndcgs: ndcgs, recalls: recalls, ranked: rankings,
	}, nil
}

// rankedDocs maps results to distinct document ids, best first. A ref this
// run did not write means the index holds something it should not.
func rankedDocs(results []*ctxdv1.SearchResult, refToDoc map[string]string) ([]string, error) {
	ranked := make([]string, 0, len(results))
	seen := make(map[string]bool, len(results))
	for _, r := range results {
		id, ok := refToDoc[r.GetRef()]
		if !ok {
			return nil, fmt.Errorf("result %s was not written by this run", r.GetRef())
		}
		if !seen[id] {
			seen[id] = true
			ranked = append(ranked, id)
		}
	}
	return ranked, nil
}

// formatReport renders the results as markdown, with the settings needed to
// reproduce them.
func formatReport(o options, results []collectionResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# ctxd retrieval quality\n\n")
	fmt.Fprintf(&b, "Generated %s by `go run ./cmd/ctxd-eval` (ctxd %s).\n\n", time.Now().UTC().Format(time.RFC3339), daemon.Version)
	rrfK, weights := strconv.Itoa(o.rrfK), o.weightsFlag
	if o.rrfK == 0 {
		rrfK += " (server default)"
	}
	if weights == "" {
		weights = "(server defaults)"
	}
	priors := make([]string, len(o.priors))
	for i, w := range o.priors {
		priors[i] = strconv.FormatFloat(w, 'g', -1, 64)
	}
	fmt.Fprintf(&b, "- flags: `-collections %s -modes %s -rrf-k %d -weights '%s' -priors '%s' -concurrency %d`\n",
		strings.Join(o.collections, ","), strings.Join(o.modes, ","), o.rrfK, o.weightsFlag, strings.Join(priors, ","), o.concurrency)
	fmt.Fprintf(&b, "- rrf-k: %s; leg weights: %s\n", rrfK, weights)
	fmt.Fprintf(&b, "- model dir: %s\n", o.modelDir)
	fmt.Fprintf(&b, "- search: limit %d, max_chunks_per_item 1; latency is client-side over the unix socket, one query at a time\n", recallCutoff)
	fmt.Fprintf(&b, "- documents: markdown `# Title`, blank line, text where the document has a title (the text alone when it opens with that H1); plain text otherwise\n")
	fmt.Fprintf(&b, "- signals: a `+proximity` or `-proximity` row searches with proximity ON or OFF, a `-recency` row with recency OFF; the other rows use the server's defaults\n")
	if len(o.priors) > 0 {
		fmt.Fprintf(&b, "- priors: a `+importance w` or `+usage w` row searches with importance_weight or usage_weight w, in chunk grouping, after every other row; no document here has an importance, and usage is what this run's earlier searches recorded (each query already searched in every row before)\n")
	}
	fmt.Fprintf(&b, "- reference: textbook whole-document BM25 in ctxd-eval (k1 %.1f, b %.1f, Lucene idf, Bleve's %q analyzer as ctxd), scored in-process: no latency\n\n",
		referenceK1, referenceB, en.AnalyzerName)

	fmt.Fprintf(&b, "| collection | docs | queries | mode | nDCG@10 | Recall@100 | query p50 ms |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---|---:|---:|---:|\n")
	for _, r := range results {
		for _, m := range r.modes {
			fmt.Fprintf(&b, "| %s | %d | %d | %s | %.4f | %.4f | %s |\n", r.name, r.docs, r.queries, m.mode, m.ndcg, m.recall, formatMs(m.p50ms))
		}
	}

	formatSignals(&b, results)

	fmt.Fprintf(&b, "\n## Ingest\n\n")
	for _, r := range results {
		model := r.modelID
		if model == "" {
			model = "(none)"
		}
		fmt.Fprintf(&b, "- %s: %d documents written (%d with neither title nor text skipped), %d chunks, model %s, %s from first write to fully indexed\n",
			r.name, r.docs, r.skipped, r.chunks, model, r.ingest.Round(time.Millisecond))
	}

	fmt.Fprintf(&b, "\n## Goals (nDCG@10)\n\n")
	fmt.Fprintf(&b, "| collection | bm25 ≥ reference | hybrid ≥ max(bm25, vector) |\n")
	fmt.Fprintf(&b, "|---|---|---|\n")
	for _, r := range results {
		g := checkGoals(r.modes)
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.name, g.bm25, g.hybrid)
	}
	return b.String()
}

// formatMs renders a latency; NaN (the in-process reference) as "–".
func formatMs(ms float64) string {
	if math.IsNaN(ms) {
		return "–"
	}
	return strconv.FormatFloat(ms, 'f', 1, 64)
}

// goals is one collection's verdicts on the quality goals, each "yes" or
// "no" with the figures compared, or why it was not compared.
type goals struct {
	bm25   string // bm25 nDCG@10 ≥ the reference's
	hybrid string // hybrid nDCG@10 ≥ the better of bm25's and vector's
}

// checkGoals compares the nDCG@10 of modes. The verdicts are reported, never
// turned into an exit status: the numbers are for people to judge.
func checkGoals(modes []modeResult) goals {
	ndcg := map[string]float64{}
	for _, m := range modes {
		ndcg[m.mode] = m.ndcg
	}
	verdict := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "no"
	}
	g := goals{bm25: "not compared (needs mode bm25)", hybrid: "not compared (needs modes bm25, vector and hybrid)"}
	bm25, okB := ndcg["bm25"]
	if ref, okR := ndcg[referenceMode]; okB && okR {
		g.bm25 = fmt.Sprintf("%s (%.4f vs %.4f)", verdict(bm25 >= ref), bm25, ref)
	}
	vector, okV := ndcg["vector"]
	if hybrid, okH := ndcg["hybrid"]; okB && okV && okH {
		best, bestMode := bm25, "bm25"
		if vector > bm25 {
			best, bestMode = vector, "vector"
		}
		g.hybrid = fmt.Sprintf("%s (%.4f vs %s %.4f)", verdict(hybrid >= best), hybrid, bestMode, best)
	}
	return g
}

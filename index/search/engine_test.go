package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/vfs"
)

func TestEngine_EditsAndDeletesReachBothLegs(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/a.md", "the quick brown fox\n\njumps over the lazy dog", unit(0, 0), unit(1, 0))
	e.write("notes:/b.md", "an unrelated paragraph about compilers", unit(2, 0))
	e.sync()

	bm := func(q string) []string { return refs(e.search(Request{Mode: BM25, Queries: []Query{{Text: q}}})) }
	vec := func(v []float32) []Response {
		return []Response{e.search(Request{Mode: Vector, Queries: []Query{{Vector: v}}, Limit: 1})}
	}
	if got := bm("fox"); !slices.Equal(got, []string{"notes:/a.md"}) {
		t.Fatalf("bm25 fox = %v", got)
	}
	if r := vec(unit(1, 0))[0].Results; len(r) != 1 || r[0].ChunkID != ChunkID(itemID(t, e, "notes:/a.md"), 1) {
		t.Fatalf("vector top = %+v, want chunk 1 of a.md", r)
	}

	// Edit: one paragraph now, with a new vector. The old words and the old
	// second chunk must be gone from both legs.
	e.write("notes:/a.md", "a slow green turtle", unit(3, 0))
	e.sync()
	if got := bm("fox"); len(got) != 0 {
		t.Fatalf("bm25 fox after edit = %v, want nothing", got)
	}
	if got := bm("turtle"); !slices.Equal(got, []string{"notes:/a.md"}) {
		t.Fatalf("bm25 turtle after edit = %v", got)
	}
	if r := vec(unit(1, 0))[0].Results; len(r) == 1 && strings.HasSuffix(r[0].ChunkID, "#1") {
		t.Fatalf("vector still returns the deleted chunk: %+v", r)
	}

	// Delete.
	if _, err := e.store.Delete(context.Background(), vfs.Ref{Drive: "notes", Path: "/a.md"}, false); err != nil {
		t.Fatal(err)
	}
	e.sync()
	if got := bm("turtle"); len(got) != 0 {
		t.Fatalf("bm25 turtle after delete = %v", got)
	}
	for _, r := range vec(unit(3, 0))[0].Results {
		if r.Path == "/a.md" {
			t.Fatalf("vector returns the deleted item: %+v", r)
		}
	}
	if rep := mustDoctor(t, e.eng); len(rep.Problems) != 0 || rep.StoreChunks != 1 || rep.VectorChunks != 1 {
		t.Fatalf("doctor = %+v", rep)
	}
}

func itemID(t testing.TB, e *env, ref string) string {
	t.Helper()
	r, _ := vfs.ParseRef(ref)
	info, err := e.store.Info(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return info.Item.ID
}

// TestEngine_ScopedQueryFindsLowRankedMatch: 10,000 items match better than
// the target globally; a filtered query still returns it first, in every leg.
func TestEngine_ScopedQueryFindsLowRankedMatch(t *testing.T) {
	e := newEnv(t)
	const n = 10_000
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				// Shorter text and a closer vector: every one of these beats the target.
				e.write(fmt.Sprintf("bulk:/d%03d/n%05d", i%100, i), "kestrel falcon", angled(0.1+float64(i)*1e-5))
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	e.write("scoped:/deep/target.md", "kestrel seen once among many other words about birds of prey and weather", angled(1.2))
	e.sync()

	q := Query{Text: "kestrel", Vector: angled(0)}
	for _, mode := range []Mode{BM25, Vector, Hybrid} {
		all := e.search(Request{Mode: mode, Queries: []Query{q}, Limit: 5})
		if slices.Contains(refs(all), "scoped:/deep/target.md") {
			t.Fatalf("%v: target in the unscoped top 5; the test proves nothing", mode)
		}
		for _, f := range []lexical.Filter{
			{Drives: []string{"scoped"}},
			{PathPrefixes: []string{"scoped:/deep"}},
			{PathPrefixes: []string{"/deep"}},
		} {
			got := refs(e.search(Request{Mode: mode, Queries: []Query{q}, Filter: f, Limit: 5}))
			if !slices.Equal(got, []string{"scoped:/deep/target.md"}) {
				t.Errorf("%v with %+v = %v, want just the target", mode, f, got)
			}
		}
		if got := e.search(Request{Mode: mode, Queries: []Query{q}, Filter: lexical.Filter{PathPrefixes: []string{"scoped:/dee"}}}); len(got.Results) != 0 {
			t.Errorf("%v: prefix /dee matched by characters, not segments: %v", mode, refs(got))
		}
	}
}

func TestEngine_CatchesUpWhenOutboxIsAhead(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/first.md", "alpha paragraph", unit(0, 0))
	e.sync()
	e.close()

	// Written while no engine runs: only the outbox knows.
	e.write("notes:/second.md", "beta paragraph", unit(1, 0))
	e.write("notes:/first.md", "gamma paragraph", unit(2, 0))
	e.open(true)
	e.sync()
	for q, want := range map[string][]string{"alpha": nil, "beta": {"notes:/second.md"}, "gamma": {"notes:/first.md"}} {
		if got := refs(e.search(Request{Mode: BM25, Queries: []Query{{Text: q}}})); !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", q, got, want)
		}
	}
	if r := e.search(Request{Mode: Vector, Queries: []Query{{Vector: unit(1, 0)}}, Limit: 1}); refs(r)[0] != "notes:/second.md" {
		t.Errorf("vector = %v", refs(r))
	}
	if rep := mustDoctor(t, e.eng); len(rep.Problems) != 0 {
		t.Fatalf("doctor: %s", fmtProblems(rep))
	}
}

// TestEngine_CatchUpInChunkBoundedPasses has one catch-up pass meet more
// chunks than it may hand Bleve at once, and an item changed again after
// the cut: every chunk must still be applied once, in its latest state.
func TestEngine_CatchUpInChunkBoundedPasses(t *testing.T) {
	e := newEnv(t)
	e.write("bulk:/seed.md", "seed") // a non-empty index catches up instead of rebuilding
	e.sync()
	e.close()
	paras := func(word string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%s paragraph %d\n\n", word, i)
		}
		return b.String()
	}
	n := applyChunks/2 + 100 // b and c overflow a pass
	e.write("bulk:/a.md", paras("apple", 3))
	e.write("bulk:/b.md", paras("banana", n))
	e.write("bulk:/c.md", paras("cherry", n))
	e.write("bulk:/a.md", paras("apricot", 2)) // changed again after the cut
	e.open(false)
	e.sync()
	if st := e.eng.State(); st.LexicalChunks != int64(1+2+2*n) {
		t.Errorf("lexical chunks = %d, want %d", st.LexicalChunks, 1+2+2*n)
	}
	for q, want := range map[string][]string{"apple": nil, "apricot": {"bulk:/a.md"}, "banana": {"bulk:/b.md"}, "cherry": {"bulk:/c.md"}} {
		if got := refs(e.search(Request{Mode: BM25, Queries: []Query{{Text: q}}, MaxPerItem: 1})); !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", q, got, want)
		}
	}
	if rep := mustDoctor(t, e.eng); len(rep.Problems) != 0 {
		t.Fatalf("doctor: %s", fmtProblems(rep))
	}
}

func TestEngine_SnapshotReloadAndRecovery(t *testing.T) {
	e := newEnv(t)
	for i := range 50 {
		e.write(fmt.Sprintf("notes:/n%02d", i), fmt.Sprintf("note number %d", i), unit(i, 0.01*float32(i)))
	}
	e.sync()
	e.close() // saves the snapshot
	snap := filepath.Join(e.dir, "index", snapshotFile)
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("no snapshot after Close: %v", err)
	}
	e.open(true)
	e.sync()
	if st := e.eng.State(); st.VectorChunks != 50 {
		t.Fatalf("vectors after reload = %d, want 50", st.VectorChunks)
	}
	e.close()

	// A damaged snapshot is rebuilt from the store, not trusted.
	b, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(snap, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e.open(true)
	e.sync()
	if rep := mustDoctor(t, e.eng); len(rep.Problems) != 0 || rep.VectorChunks != 50 {
		t.Fatalf("after damaged snapshot: %+v", rep)
	}

	// A deleted lexical index is rebuilt too.
	e.close()
	if err := os.RemoveAll(filepath.Join(e.dir, "index", lexicalDir)); err != nil {
		t.Fatal(err)
	}
	e.open(true)
	e.sync()
	if rep := mustDoctor(t, e.eng); len(rep.Problems) != 0 || rep.LexicalChunks != 50 {
		t.Fatalf("after deleted lexical index: %+v", rep)
	}
}

func TestEngine_DoctorReportsDriftAndReindexRepairs(t *testing.T) {
	e := newEnv(t)
	a := e.write("notes:/a.md", "one\n\ntwo", unit(0, 0), unit(1, 0))
	e.sync()
	// Damage both indexes behind the engine's back.
	e.eng.mu.Lock()
	if err := e.eng.lex.Apply(nil, []string{ChunkID(a.ID, 1)}, e.eng.lexSeq); err != nil {
		t.Fatal(err)
	}
	en := e.eng.vec.cat.get(a.ID)
	e.eng.vec.idx.Delete(vectorID(en.ord, 0))
	e.eng.mu.Unlock()

	rep := mustDoctor(t, e.eng)
	joined := strings.Join(rep.Problems, "\n")
	if !strings.Contains(joined, ChunkID(a.ID, 1)) || !strings.Contains(joined, ChunkID(a.ID, 0)) {
		t.Fatalf("doctor did not name the damaged chunks: %s", fmtProblems(rep))
	}
	res, err := e.eng.Reindex(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.LexicalChunks != 2 || res.VectorChunks != 2 {
		t.Fatalf("reindex = %+v", res)
	}
	if rep := mustDoctor(t, e.eng); len(rep.Problems) != 0 {
		t.Fatalf("after reindex: %s", fmtProblems(rep))
	}
	if got := refs(e.search(Request{Mode: BM25, Queries: []Query{{Text: "two"}}})); !slices.Equal(got, []string{"notes:/a.md"}) {
		t.Fatalf("search after reindex = %v", got)
	}
}

func TestEngine_NoModelFallsBackToBM25(t *testing.T) {
	e := newEnv(t)
	e.close()
	e.open(false)
	e.write("notes:/a.md", "plain words here")
	e.sync()
	for _, mode := range []Mode{Hybrid, Vector} {
		r := e.search(Request{Mode: mode, Queries: []Query{{Text: "words"}}})
		if r.Mode != BM25 || r.ModeReason == "" {
			t.Fatalf("%v: mode %v reason %q, want BM25 with a reason", mode, r.Mode, r.ModeReason)
		}
		if got := refs(r); !slices.Equal(got, []string{"notes:/a.md"}) {
			t.Fatalf("%v: results %v", mode, got)
		}
	}
	// With a model but no way to embed text, text-only queries fall back too.
	e.close()
	e.open(true)
	e.sync()
	r := e.search(Request{Queries: []Query{{Text: "words"}}})
	if r.Mode != BM25 || !strings.Contains(r.ModeReason, "cannot run") {
		t.Fatalf("no embedder: mode %v reason %q", r.Mode, r.ModeReason)
	}
}

func TestEngine_EmbedFailureFallsBackToBM25(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/a.md", "plain words here", unit(0, 0))
	e.write("notes:/b.md", "other text", unit(1, 0))
	e.sync()
	down := errors.New("embedding endpoint http://127.0.0.1:1/v1 is failing")
	failing := func(context.Context, string) ([]float32, error) { return nil, down }
	for _, mode := range []Mode{Hybrid, Vector} {
		r := e.search(Request{Mode: mode, Queries: []Query{{Text: "words"}, {Text: "other"}}, EmbedQuery: failing})
		if r.Mode != BM25 || !strings.Contains(r.ModeReason, down.Error()) {
			t.Fatalf("%v: mode %v reason %q, want BM25 naming the failure", mode, r.Mode, r.ModeReason)
		}
		if got := refs(r); !slices.Equal(got, []string{"notes:/a.md", "notes:/b.md"}) && !slices.Equal(got, []string{"notes:/b.md", "notes:/a.md"}) {
			t.Fatalf("%v: results %v, want both items by their words", mode, got)
		}
	}
	// The caller's own end is not a fallback: the search fails.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.eng.Search(ctx, Request{Queries: []Query{{Text: "words"}}, EmbedQuery: failing}); err == nil {
		t.Fatal("a cancelled search succeeded")
	}
}

func TestEngine_FusionScoresAndRanks(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/best.md", "zeppelin airship", unit(0, 0))
	e.write("notes:/lexonly.md", "zeppelin zeppelin zeppelin mentioned a lot more than once", unit(5, 0))
	e.write("notes:/veconly.md", "nothing lexical here", unit(0, 0.05))
	e.sync()
	r := e.search(Request{Queries: []Query{{Text: "zeppelin airship", Vector: unit(0, 0)}}})
	if r.Mode != Hybrid {
		t.Fatalf("mode %v (%s)", r.Mode, r.ModeReason)
	}
	if got := refs(r); len(got) != 3 || got[0] != "notes:/best.md" {
		t.Fatalf("order = %v", got)
	}
	top := r.Results[0]
	if top.Score != 1 {
		t.Errorf("a chunk ranked first by every leg scores %v, want 1", top.Score)
	}
	for i, res := range r.Results {
		if res.Score <= 0 || res.Score > 1 || (i > 0 && res.Score > r.Results[i-1].Score) {
			t.Errorf("result %d score %v out of order or range", i, res.Score)
		}
	}
	legs := map[Leg]int{}
	for _, lr := range top.Ranks {
		legs[lr.Leg] = lr.Rank
	}
	if legs[LegBM25] != 1 || legs[LegVector] != 1 {
		t.Errorf("top ranks = %+v", top.Ranks)
	}
	// Turning the vector leg off leaves the lexical ranking.
	r = e.search(Request{Queries: []Query{{Text: "zeppelin", Vector: unit(0, 0)}}, Weights: map[Leg]float64{LegVector: 0}})
	if slices.Contains(refs(r), "notes:/veconly.md") {
		t.Errorf("vector weight 0 still returns vector-only hits: %v", refs(r))
	}
}

func TestEngine_BatchDedupesAcrossQueries(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/both.md", "apples and oranges", unit(0, 0))
	e.write("notes:/apples.md", "apples only", unit(1, 0))
	e.sync()
	r := e.search(Request{Mode: BM25, Queries: []Query{{Text: "apples"}, {Text: "oranges"}}})
	seen := map[string]int{}
	for _, res := range r.Results {
		seen[res.ChunkID]++
		if res.Path == "/both.md" && !slices.Equal(res.QueryIndexes, []int{0, 1}) {
			t.Errorf("both.md query indexes = %v, want [0 1]", res.QueryIndexes)
		}
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("chunk %s returned %d times", id, n)
		}
	}
	if len(r.Results) != 2 || len(r.Queries) != 2 {
		t.Fatalf("results %v, reports %d", refs(r), len(r.Queries))
	}
}

func TestEngine_TokenBudgetSkipsWhatDoesNotFit(t *testing.T) {
	e := newEnv(t)
	// The only one with both query words, so it ranks first despite its length.
	long := "budget zebra " + strings.Repeat("and some filler words to make it longer ", 8)
	e.write("notes:/1-long.md", long, unit(0, 0))
	e.write("notes:/2-short.md", "budget budget note", unit(1, 0))
	e.write("notes:/3-short.md", "budget tiny", unit(2, 0))
	e.sync()
	words := func(s string) int { return len(strings.Fields(s)) }
	full := e.search(Request{Mode: BM25, Queries: []Query{{Text: "budget zebra"}}, CountTokens: words})
	if len(full.Results) != 3 || full.Results[0].Path != "/1-long.md" {
		t.Fatalf("unbudgeted = %v", refs(full))
	}
	budget := full.Results[1].Tokens + full.Results[2].Tokens
	r := e.search(Request{Mode: BM25, Queries: []Query{{Text: "budget zebra"}}, CountTokens: words, TokenBudget: budget})
	if got := refs(r); !slices.Equal(got, []string{"notes:/2-short.md", "notes:/3-short.md"}) {
		t.Fatalf("budget %d: %v, want the two short results after skipping the long one", budget, got)
	}
	if r.TokensUsed != budget {
		t.Fatalf("tokens used %d, want %d", r.TokensUsed, budget)
	}
}

func TestEngine_MaxChunksPerItem(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/many.md", "walrus one\n\nwalrus two\n\nwalrus three\n\nwalrus four", unit(0, 0), unit(0, 0), unit(0, 0), unit(0, 0))
	e.write("notes:/other.md", "walrus other", unit(0, 0))
	e.sync()
	count := func(r Response) map[string]int {
		m := map[string]int{}
		for _, res := range r.Results {
			m[res.Path]++
		}
		return m
	}
	if got := count(e.search(Request{Mode: BM25, Queries: []Query{{Text: "walrus"}}})); got["/many.md"] != DefaultMaxPerItem || got["/other.md"] != 1 {
		t.Fatalf("default cap: %v", got)
	}
	if got := count(e.search(Request{Mode: BM25, Queries: []Query{{Text: "walrus"}}, MaxPerItem: 1})); got["/many.md"] != 1 {
		t.Fatalf("cap 1: %v", got)
	}
}

func TestEngine_RejectsBadQueries(t *testing.T) {
	e := newEnv(t)
	e.sync()
	for name, req := range map[string]Request{
		"no queries":    {},
		"empty query":   {Queries: []Query{{Text: "  "}}},
		"wrong dims":    {Queries: []Query{{Vector: []float32{1, 2}}}},
		"zero vector":   {Mode: Vector, Queries: []Query{{Vector: make([]float32, testDims)}}},
		"limit too big": {Queries: []Query{{Text: "x"}}, Limit: DefaultLimits().MaxLimit + 1},
		"bad prefix":    {Mode: BM25, Queries: []Query{{Text: "x"}}, Filter: lexical.Filter{PathPrefixes: []string{"nodrive"}}},
	} {
		if _, err := e.eng.Search(context.Background(), req); !errors.Is(err, ErrInvalidQuery) {
			t.Errorf("%s: err = %v, want ErrInvalidQuery", name, err)
		}
	}
}

func TestEngine_TypoCorrectionWhenNothingMatches(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/sort.md", "sorting algorithms compared", unit(0, 0))
	e.write("notes:/other.md", "gardening tips", unit(1, 0))
	e.sync()
	r := e.search(Request{Mode: BM25, Queries: []Query{{Text: "sortng algoritms"}}})
	if r.Queries[0].Corrected == "" || !slices.Equal(refs(r), []string{"notes:/sort.md"}) {
		t.Fatalf("corrected %q, results %v", r.Queries[0].Corrected, refs(r))
	}
	// A query that matches as typed is left alone.
	r = e.search(Request{Mode: BM25, Queries: []Query{{Text: "gardening"}}})
	if r.Queries[0].Corrected != "" {
		t.Fatalf("corrected a matching query to %q", r.Queries[0].Corrected)
	}
}

// TestEngine_LargeItemInSteps writes items with more chunks than one pass
// applies, so that the engine reads and indexes them in steps: every chunk
// must reach both legs once, a shorter rewrite must drop the rest, vectors
// saved a few at a time must arrive, and a rebuild must agree.
func TestEngine_LargeItemInSteps(t *testing.T) {
	e := newEnv(t)
	paras := func(word string, n int) (string, [][]float32) {
		var b strings.Builder
		var vecs [][]float32
		for i := range n {
			fmt.Fprintf(&b, "%s%d paragraph\n\n", word, i)
			vecs = append(vecs, unit(i, 0.1))
		}
		return b.String(), vecs
	}
	bm := func(q string) []string {
		return refs(e.search(Request{Mode: BM25, Queries: []Query{{Text: q}}, MaxPerItem: 1}))
	}
	n := 2*applyChunks + 100
	text, vecs := paras("big", n)
	e.write("bulk:/big.md", text, vecs...)
	e.sync()
	if st := e.eng.State(); st.LexicalChunks != int64(n) || st.VectorChunks != int64(n) {
		t.Fatalf("after a %d-chunk item: %d lexical, %d vector chunks", n, st.LexicalChunks, st.VectorChunks)
	}
	for _, q := range []string{"big0", fmt.Sprintf("big%d", applyChunks), fmt.Sprintf("big%d", n-1)} {
		if got := bm(q); !slices.Equal(got, []string{"bulk:/big.md"}) {
			t.Errorf("%s = %v, want the large item", q, got)
		}
	}

	// Shorter, and without vectors: queued, then embedded in small steps.
	m := applyChunks + 50
	text, _ = paras("small", m)
	e.write("bulk:/big.md", text)
	e.sync()
	if st := e.eng.State(); st.LexicalChunks != int64(m) || st.VectorChunks != 0 {
		t.Fatalf("after rewriting with %d chunks: %d lexical, %d vector chunks", m, st.LexicalChunks, st.VectorChunks)
	}
	if got := bm(fmt.Sprintf("big%d", n-1)); len(got) != 0 {
		t.Errorf("a chunk of the old content is still found: %v", got)
	}
	ctx := context.Background()
	embedded := 0
	for embedded < m/2 {
		pending, err := e.store.PendingEmbeddings(ctx, 256)
		if err != nil || len(pending) == 0 {
			t.Fatalf("PendingEmbeddings = %d, %v", len(pending), err)
		}
		vs := make([][]float32, len(pending))
		for i := range vs {
			vs[i] = unit(embedded+i, 0.2)
		}
		if err := e.store.SaveEmbeddings(ctx, testModel, pending, vs); err != nil {
			t.Fatal(err)
		}
		embedded += len(pending)
	}
	e.sync()
	if st := e.eng.State(); st.LexicalChunks != int64(m) || st.VectorChunks != int64(embedded) {
		t.Fatalf("after embedding %d chunks: %d lexical, %d vector chunks", embedded, st.LexicalChunks, st.VectorChunks)
	}
	if rep := mustDoctor(t, e.eng); len(rep.Problems) != 0 {
		t.Fatalf("doctor: %s", fmtProblems(rep))
	}
	res, err := e.eng.Reindex(ctx)
	if err != nil || res.LexicalChunks != int64(m) || res.VectorChunks != int64(embedded) {
		t.Fatalf("Reindex = %+v, %v; want %d lexical and %d vector chunks", res, err, m, embedded)
	}
	if rep := mustDoctor(t, e.eng); len(rep.Problems) != 0 {
		t.Fatalf("doctor after reindex: %s", fmtProblems(rep))
	}
}

// A snippet is cut around the words BM25 matched, found again in the text:
// the stem's other forms, the corrected spelling.
func TestEngine_SnippetAroundWhatBM25Matched(t *testing.T) {
	e := newEnv(t)
	filler := strings.Repeat("plain filler words ", 40)
	e.write("notes:/dog.md", filler+"the dog runs every morning "+filler, unit(0, 0))
	e.sync()
	for _, q := range []string{"running", "runnning"} { // the second is corrected
		r := e.search(Request{Mode: BM25, Queries: []Query{{Text: q}}, SnippetChars: 60})
		if len(r.Results) != 1 {
			t.Fatalf("%q: %d results", q, len(r.Results))
		}
		if s := r.Results[0].Snippet; !strings.Contains(s, "dog runs every") {
			t.Errorf("%q: snippet %q, want it around %q", q, s, "runs")
		}
	}
}

// TestEngine_TimeAndAnyTagFiltersInEveryLeg checks that a time range and
// an any-of-tags filter run inside every leg (so a scoped query finds its
// match however low it ranks), and that the vector leg keeps item times
// across a snapshot reload.
func TestEngine_TimeAndAnyTagFiltersInEveryLeg(t *testing.T) {
	e := newEnv(t)
	write := func(ref, text string, tags []string, vec []float32) vfs.Item {
		r, err := vfs.ParseRef(ref)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.store.Write(context.Background(), vfs.WriteParams{Ref: r, Content: []byte(text), IsText: true, Tags: tags,
			Embeddings: &vfs.Embeddings{Model: testModel, Vectors: [][]float32{vec}}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Item
	}
	// nextMilli waits until the clock has passed t's millisecond, so the
	// next write's time differs from it at the filter's precision.
	nextMilli := func(t0 time.Time) {
		for time.Now().UnixMilli() <= t0.UnixMilli() {
			runtime.Gosched()
		}
	}
	old := write("ev:/a/old.md", "kestrel seen once among many other words about weather", []string{"kind:note"}, angled(1.2))
	nextMilli(old.UpdatedAt)
	for i := range 50 { // closer matches in every leg, newer than old, none of its kind
		write(fmt.Sprintf("ev:/a/n%02d.md", i), "kestrel falcon", []string{"kind:prompt"}, angled(0.1+float64(i)*1e-3))
	}
	mid := write("ev:/a/mid.md", "kestrel", []string{"kind:prompt"}, angled(0.05))
	nextMilli(mid.UpdatedAt)
	fresh := write("ev:/a/fresh.md", "kestrel noted long after the others, among weather words", []string{"kind:decision"}, angled(1.3))
	// An item on a drive whose times the engine does not keep matches no
	// time range, in any leg.
	write("untimed:/a/kestrel.md", "kestrel kestrel", []string{"kind:other"}, angled(0))
	e.sync()

	afterOld := time.UnixMilli(old.UpdatedAt.UnixMilli() + 1) // the next write's millisecond, or later
	q := Query{Text: "kestrel", Vector: angled(0)}
	check := func(label string) {
		t.Helper()
		for _, mode := range []Mode{BM25, Vector, Hybrid} {
			all := refs(e.search(Request{Mode: mode, Queries: []Query{q}, Filter: lexical.Filter{Drives: []string{"ev"}}, Limit: 5}))
			if slices.Contains(all, "ev:/a/old.md") || slices.Contains(all, "ev:/a/fresh.md") {
				t.Fatalf("%s %v: a target in the unscoped top 5 %v; the test proves nothing", label, mode, all)
			}
			for _, tc := range []struct {
				name string
				f    lexical.Filter
				want []string
			}{
				{"up to old", lexical.Filter{Before: afterOld}, []string{"ev:/a/old.md"}},
				{"from fresh", lexical.Filter{After: fresh.UpdatedAt}, []string{"ev:/a/fresh.md"}},
				{"any of two kinds", lexical.Filter{AnyTags: []string{"kind:note", "kind:decision"}}, []string{"ev:/a/fresh.md", "ev:/a/old.md"}},
				{"kinds and time", lexical.Filter{AnyTags: []string{"kind:note", "kind:decision"}, Before: mid.UpdatedAt}, []string{"ev:/a/old.md"}},
			} {
				got := refs(e.search(Request{Mode: mode, Queries: []Query{q}, Filter: tc.f, Limit: 5}))
				slices.Sort(got)
				if !slices.Equal(got, tc.want) {
					t.Errorf("%s %v %s: %v, want %v", label, mode, tc.name, got, tc.want)
				}
			}
			if got := refs(e.search(Request{Mode: mode, Queries: []Query{q}, Filter: lexical.Filter{Drives: []string{"untimed"}}})); len(got) != 1 {
				t.Fatalf("%s %v: the untimed item is not found without a time range: %v", label, mode, got)
			}
			if got := refs(e.search(Request{Mode: mode, Queries: []Query{q}, Filter: lexical.Filter{Drives: []string{"untimed"}, After: time.UnixMilli(1)}})); len(got) != 0 {
				t.Errorf("%s %v: an item on an untimed drive matched a time range: %v", label, mode, got)
			}
		}
	}
	check("live")
	e.close() // saves the vector snapshot
	e.open(true)
	e.sync()
	check("reloaded")
}

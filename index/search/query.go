package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/index/vector"
	"github.com/ctxd/ctxd/vfs"
)

// Mode selects the legs of a search.
type Mode int

// Modes.
const (
	Hybrid Mode = iota // lexical legs and the vector leg, fused
	BM25               // lexical legs only (BM25 and substring)
	Vector             // vector leg only
)

func (m Mode) String() string {
	return [...]string{"hybrid", "bm25", "vector"}[m]
}

// Leg names a candidate generator.
type Leg int

// Legs.
const (
	LegBM25 Leg = iota
	LegSubstring
	LegVector
	numLegs
)

// DefaultWeights are the fusion weights of the legs.
var DefaultWeights = [numLegs]float64{LegBM25: 1, LegSubstring: 1, LegVector: 1}

// GroupBy selects what one result is.
type GroupBy int

// Groupings.
const (
	GroupChunk GroupBy = iota // each result is one chunk
	// GroupItem makes each result one item: the limit counts items, legs
	// rank items by their best chunk and fusion runs over those item ranks
	// (fuseItems); a result is the item's best chunk with its next best in
	// Result.More.
	GroupItem
)

// Defaults of a Request.
const (
	DefaultLimit        = 10
	DefaultMaxPerItem   = 3
	DefaultRRFK         = 60
	DefaultSnippetChars = 300
)

// ErrInvalidQuery marks a request that cannot be answered as given.
var ErrInvalidQuery = errors.New("invalid query")

// ErrMinScore marks a Request.MinScore outside [0, 1]; it is an
// ErrInvalidQuery.
var ErrMinScore = fmt.Errorf("%w: min score must be in [0, 1], the range of scores", ErrInvalidQuery)

// Query is one query of a batch: text, a vector, or both (the vector then
// replaces embedding the text).
type Query struct {
	Text   string
	Vector []float32
}

// Request is a batch of queries with shared options. Zero values mean the
// defaults; the engine's Limits bound every dimension.
type Request struct {
	Queries      []Query
	Mode         Mode
	Filter       lexical.Filter
	Limit        int
	TokenBudget  int // 0: none
	SnippetChars int
	MaxPerItem   int
	RRFK         int
	// Weights overrides per-leg weights; 0 disables a leg.
	Weights map[Leg]float64
	// GroupBy makes results chunks (the default) or items.
	GroupBy GroupBy
	// MinScore drops results whose Score is below it; in [0, 1], 0 keeps all.
	// It applies after Priors, Proximity and Recency.
	MinScore float64
	// Priors scale fused scores by the items' importance and usage; the
	// zero value leaves them as fusion made them.
	Priors Priors
	// Proximity turns the proximity rerank on or off; ToggleDefault leaves
	// it to DefaultProximity. It multiplies the score of a result by
	// 1 - ProximityShare·(1 - closeness), where closeness (in [0, 1]) is how
	// closely the result's chunk holds the query's neighbouring terms (with
	// GroupItem, the best of the chunks shown; with several queries, the
	// best for a query that found it; 1 for a query of one term). It weighs
	// the rerank window; a result past it counts as closeness 0.
	Proximity Toggle
	// Recency ages the results of the items it applies to by their
	// CreatedAt, in the rerank window; the zero value is off.
	//
	// The rerank window is the first 2×Limit results (items with
	// GroupItem) by fused score after Priors, their chunks read once (at
	// most 200 chunks) for both signals and for the presentation; it grows
	// while recency has lowered the Limit-th best score in it below what a
	// result after it could score. MinScore applies after both.
	Recency Recency
	// EmbedQuery embeds query text with the store's model (which reads only
	// what fits its window); nil when no model can run, which makes
	// text-only queries fall back to BM25. When it fails (while the
	// request's context is live) the query runs in BM25 mode too, with the
	// failure in ModeReason.
	EmbedQuery func(ctx context.Context, text string) ([]float32, error)
	// CountTokens counts model tokens of a snippet; nil estimates 4 bytes a token.
	CountTokens func(string) int
	// Within, when not nil, bounds what the search may find, whatever
	// Filter says, to items under these drive-qualified path prefixes
	// ("agent:/" for a drive, "agent:/project-x"): it is intersected with
	// Filter's drives and path prefixes and pushed into every leg like
	// them; an empty intersection (or an empty Within) finds nothing. A
	// bounded search proposes no spelling corrections, which come from the
	// vocabulary of the whole index.
	Within []string
	// Explain gives every result an Explanation; without it none is
	// computed.
	Explain bool
}

// Response holds fused results.
type Response struct {
	Results    []Result
	Mode       Mode   // the mode used
	ModeReason string // why Mode differs from the request's
	Queries    []QueryReport
	TokensUsed int
	// Stale says why the results may miss writes acknowledged before the
	// search started: the indexes had not applied them within the wait
	// (Options.WriteWait); "" when they had.
	Stale string
}

// QueryReport says how one query was understood.
type QueryReport struct {
	Corrected  string // the corrected text used; "" if none
	Reduced    string // the key terms the lexical legs used for a long text; "" if none
	Candidates int    // distinct chunks the legs found
}

// LegRank is where one leg ranked a result.
type LegRank struct {
	Leg   Leg
	Rank  int // 1-based
	Score float64
}

// Result is one chunk.
type Result struct {
	ItemID, ChunkID    string
	Drive, Path, Title string
	Mime, Heading      string
	SourceURL          string // the item's source (vfs.Item.SourceURL)
	Snippet            string
	Start, End         int // byte span in the item's content
	StartLine, EndLine int // 1-based, inclusive lines of the span
	Score              float64
	Ranks              []LegRank
	QueryIndexes       []int
	Tokens             int
	// More holds, with GroupItem, the item's next best chunks, best first
	// (their Score and Ranks are chunk-level); nil otherwise.
	More []Result
	// Explanation says why the result scores what it does; nil unless
	// Request.Explain (and nil in More).
	Explanation *Explanation
}

// candidate is a chunk found by at least one leg for one query.
type candidate struct {
	id      string
	ranks   [numLegs]int // 0: not found by that leg
	scores  [numLegs]float64
	fused   float64
	norm    float64 // what fused was divided by (runQuery's best)
	queries []int
	query   int // the query whose fusion the candidate kept (mergeQuery)
	// trace records, when the request explains its results, what scaled
	// the fused score after fusion; nil otherwise.
	trace *trace
	// question is, when the request explains its results, the question
	// row the vector leg scored the candidate by; nil for a text row.
	question *questionHit
	// chunks holds, when the candidate is an item (GroupItem), its chunk
	// candidates, best first.
	chunks []*candidate
}

// Search runs every query of req and returns fused, de-duplicated results.
// A request over the engine's Limits is refused with a *LimitError. It
// reads its writes: it first waits, bounded, for the indexes its legs use
// to apply every write the store had committed when it started (see
// Options.WriteWait and Response.Stale). Every leg stops soon after ctx
// ends, and Search then returns ctx's error.
func (e *Engine) Search(ctx context.Context, req Request) (out Response, err error) {
	defer e.observeSearch(&req, time.Now(), &out, &err)
	if len(req.Queries) == 0 {
		return Response{}, fmt.Errorf("%w: no queries", ErrInvalidQuery)
	}
	if req.Limit < 0 || req.TokenBudget < 0 || req.SnippetChars < 0 || req.MaxPerItem < 0 || req.RRFK < 0 {
		return Response{}, fmt.Errorf("%w: limit, token budget, snippet length, chunks per item and RRF k must not be negative (0 means the default)", ErrInvalidQuery)
	}
	if !(req.MinScore >= 0 && req.MinScore <= 1) { // NaN too
		return Response{}, fmt.Errorf("%w, not %v", ErrMinScore, req.MinScore)
	}
	if err := req.Priors.validate(); err != nil {
		return Response{}, err
	}
	if err := req.Recency.validate(); err != nil {
		return Response{}, err
	}
	if req.Proximity < ToggleDefault || req.Proximity > ToggleOff {
		return Response{}, fmt.Errorf("%w: unknown proximity toggle %d", ErrInvalidQuery, req.Proximity)
	}
	if req.GroupBy != GroupChunk && req.GroupBy != GroupItem {
		return Response{}, fmt.Errorf("%w: unknown grouping %d", ErrInvalidQuery, req.GroupBy)
	}
	lim := e.opts.Limits
	if err := lim.check(req); err != nil {
		return Response{}, err
	}
	limit := cmp.Or(req.Limit, DefaultLimit)
	if err := req.Filter.Validate(); err != nil {
		return Response{}, fmt.Errorf("%w: %v", ErrInvalidQuery, err)
	}
	scoped := true // false when the filter and Within have nothing in common
	if req.Within != nil {
		req.Filter, scoped = within(req.Filter, req.Within)
	}
	weights := DefaultWeights
	for l, w := range req.Weights {
		if l < 0 || l >= numLegs || w < 0 {
			return Response{}, fmt.Errorf("%w: leg weight %v for leg %d", ErrInvalidQuery, w, l)
		}
		weights[l] = w
	}
	k := float64(cmp.Or(req.RRFK, DefaultRRFK))
	perItem := cmp.Or(req.MaxPerItem, DefaultMaxPerItem)
	// Enough candidates per leg that the per-item cap and the token budget
	// still leave limit results (items, each taking up to perItem chunks).
	wanted := limit
	if req.GroupBy == GroupItem {
		wanted *= perItem
	}
	depth := min(max(1000, limit), max(50, 4*wanted))

	stale, waitErr := e.awaitWrites(ctx, req.Mode != Vector, req.Mode != BM25)
	if waitErr != nil {
		return Response{}, waitErr
	}
	// The engine's lock is held only around index scans, never while a
	// query waits for the embedder: index updates must not queue behind it.
	e.mu.RLock()
	dims, model, reason := e.dims, e.model, ""
	if req.Mode != BM25 {
		reason = e.vectorUnavailable(req)
	}
	e.mu.RUnlock()
	resp := Response{Mode: req.Mode, Queries: make([]QueryReport, len(req.Queries)), Stale: stale}
	if reason != "" {
		resp.Mode, resp.ModeReason = BM25, reason
	}
	merged := map[string]*candidate{}
	pqs := make([]proxQuery, len(req.Queries))    // by query, for the proximity rerank
	bm25Texts := make([]string, len(req.Queries)) // by query, the text BM25 searched
	hl := highlight{terms: map[string]bool{}, words: map[string]bool{}}
	// With GroupItem, the items found.
	mergedItems := map[string]*candidate{}
	for qi, q := range req.Queries {
		if err := ctx.Err(); err != nil {
			return Response{}, err
		}
		if strings.TrimSpace(q.Text) == "" && q.Vector == nil {
			return Response{}, fmt.Errorf("%w: query %d has neither text nor vector", ErrInvalidQuery, qi)
		}
		if q.Vector != nil && model == "" {
			return Response{}, fmt.Errorf("%w: query %d has a vector but no embedding model is loaded", ErrInvalidQuery, qi)
		}
		if q.Vector != nil && len(q.Vector) != dims {
			return Response{}, fmt.Errorf("%w: query %d vector has %d dimensions, the model %q has %d", ErrInvalidQuery, qi, len(q.Vector), model, dims)
		}
		if !scoped {
			continue
		}
		cands, items, rep, err := e.runQuery(ctx, req, q, resp.Mode, weights, k, depth)
		var qe *embedQueryError
		if errors.As(err, &qe) && ctx.Err() == nil {
			// An embedder that fails (a remote endpoint down) must not fail
			// the search: its words still answer it, as without a model.
			resp.Mode, resp.ModeReason = BM25, fmt.Sprintf("the query could not be embedded (%v), so the search ran in BM25 mode", qe.err)
			cands, items, rep, err = e.runQuery(ctx, req, q, resp.Mode, weights, k, depth)
		}
		if err != nil {
			return Response{}, err
		}
		resp.Queries[qi] = rep
		var pq proxQuery
		if proximityOn(req.Proximity, resp.Mode, req.GroupBy) && strings.TrimSpace(q.Text) != "" {
			// The text BM25 searched: corrected, or reduced to its key terms.
			if pq, err = e.proxQueryOf(cmp.Or(rep.Corrected, rep.Reduced, q.Text)); err != nil {
				return Response{}, err
			}
		}
		pqs[qi] = pq
		bm25Texts[qi] = cmp.Or(rep.Corrected, rep.Reduced, q.Text)
		if err := e.addTerms(hl.terms, bm25Texts[qi]); err != nil {
			return Response{}, err
		}
		addWords(hl.words, cmp.Or(rep.Reduced, q.Text), lim.MaxQueryTerms)
		mergeQuery(merged, cands, qi)
		mergeQuery(mergedItems, items, qi)
	}
	// Results are what the priors weigh: items or chunks.
	results, itemOf := merged, chunkItem
	if req.GroupBy == GroupItem {
		results, itemOf = mergedItems, sameID
	}
	if req.Explain {
		addTraces(results)
	}
	if err := e.applyPriors(ctx, req.Priors, results, itemOf); err != nil {
		return Response{}, err
	}
	all := ranked(merged)
	tc, rr := textCache{}, e.newReranker(req, resp.Mode, pqs)
	ex, err := newExplainer(e, req, resp.Mode, weights, k, bm25Texts, tc, rr)
	if err != nil {
		return Response{}, err
	}
	if req.GroupBy == GroupItem {
		items := ranked(mergedItems)
		for _, c := range all {
			if it, _, ok := ParseChunkID(c.id); ok && mergedItems[it] != nil {
				mergedItems[it].chunks = append(mergedItems[it].chunks, c)
			}
		}
		if err := e.rerank(ctx, rr, items, limit, shownChunks(perItem), tc); err != nil {
			return Response{}, err
		}
		resp.Results, resp.TokensUsed, err = e.presentItems(ctx, req, aboveMin(items, req.MinScore), hl, limit, perItem, tc, ex)
		return resp, err
	}
	if err := e.rerank(ctx, rr, all, limit, chunkRef, tc); err != nil {
		return Response{}, err
	}
	resp.Results, resp.TokensUsed, err = e.present(ctx, req, aboveMin(all, req.MinScore), hl, limit, perItem, tc, ex)
	return resp, err
}

// mergeQuery merges the candidates one query found into those of the batch:
// a candidate several queries found keeps its best fusion and lists them all.
func mergeQuery(merged map[string]*candidate, cands []*candidate, qi int) {
	for _, c := range cands {
		m := merged[c.id]
		if m == nil || c.fused > m.fused {
			if m != nil {
				c.queries = m.queries
			}
			m, c.query = c, qi
			merged[c.id] = m
		}
		m.queries = append(m.queries, qi)
	}
}

// ranked returns the merged candidates best first, ties by id.
func ranked(merged map[string]*candidate) []*candidate {
	all := make([]*candidate, 0, len(merged))
	for _, c := range merged {
		slices.Sort(c.queries)
		all = append(all, c)
	}
	slices.SortFunc(all, func(a, b *candidate) int {
		if c := cmp.Compare(b.fused, a.fused); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return all
}

// aboveMin cuts ranked candidates at the first whose score is below floor.
func aboveMin(all []*candidate, floor float64) []*candidate {
	n := 0
	for n < len(all) && all[n].fused >= floor {
		n++
	}
	return all[:n]
}

// vectorUnavailable says why the vector leg cannot serve req, or ""; the
// caller holds e.mu.
func (e *Engine) vectorUnavailable(req Request) string {
	if e.vec == nil {
		return "no embedding model is available, so the search ran in BM25 mode"
	}
	if req.EmbedQuery == nil {
		for _, q := range req.Queries {
			if q.Vector == nil {
				return "the embedding model cannot run, so queries without a vector ran in BM25 mode"
			}
		}
	}
	return ""
}

// runQuery runs the legs of mode for one query concurrently and fuses them.
// With GroupItem it fuses the items the legs found as well (fuseItems).
func (e *Engine) runQuery(ctx context.Context, req Request, q Query, mode Mode, w [numLegs]float64, k float64, depth int) ([]*candidate, []*candidate, QueryReport, error) {
	var rep QueryReport
	var hits [numLegs][]legHit
	var errs [numLegs]error
	lexical := mode != Vector && strings.TrimSpace(q.Text) != ""
	var wg sync.WaitGroup
	if mode != BM25 && w[LegVector] > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer e.observeLeg(LegVector, time.Now())
			hits[LegVector], errs[LegVector] = e.vectorLeg(ctx, req, q, depth)
		}()
	}
	if lexical {
		errs[LegBM25] = func() error {
			// A long text (a pasted page) searches by its key terms: every
			// lexical leg's cost grows with the terms it looks up.
			text := q.Text
			e.mu.RLock()
			reduced, ok, err := e.lex.KeyTerms(ctx, text, e.opts.Limits.MaxQueryTerms)
			e.mu.RUnlock()
			if err != nil {
				return err
			}
			if ok {
				rep.Reduced, text = reduced, reduced
			}
			if hits[LegBM25], hits[LegSubstring], err = e.lexicalLegs(ctx, text, req.Filter, w, depth); err != nil {
				return err
			}
			if len(hits[LegBM25]) > 0 || len(hits[LegSubstring]) > 0 {
				return nil
			}
			if req.Within != nil {
				return nil
			}
			// Nothing matched the words: try them spelled as the index has them.
			e.mu.RLock()
			fixed, ok, err := e.lex.Correct(ctx, text)
			e.mu.RUnlock()
			if err != nil || !ok {
				return err
			}
			rep.Corrected = fixed
			hits[LegBM25], hits[LegSubstring], err = e.lexicalLegs(ctx, fixed, req.Filter, w, depth)
			return err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, nil, rep, cerr
		}
		return nil, nil, rep, err
	}
	byID := map[string]*candidate{}
	var out []*candidate
	var best float64 // the fused score of a chunk ranked first by every leg that found anything
	for leg, hs := range hits {
		if len(hs) == 0 {
			continue
		}
		best += w[leg] / (k + 1)
		for r, h := range hs {
			c := byID[h.id]
			if c == nil {
				c = &candidate{id: h.id}
				byID[h.id] = c
				out = append(out, c)
			}
			c.ranks[leg], c.scores[leg] = r+1, h.score
			c.fused += w[leg] / (k + float64(r+1))
			if h.question != nil {
				c.question = h.question
			}
		}
	}
	for _, c := range out {
		c.fused /= best
		c.norm = best
	}
	rep.Candidates = len(out)
	var items []*candidate
	if req.GroupBy == GroupItem {
		items = fuseItems(hits, w, k, best)
	}
	return out, items, rep, nil
}

// embedQueryError is the vector leg's failure to embed its query: the
// search falls back to BM25 for it.
type embedQueryError struct{ err error }

func (e *embedQueryError) Error() string { return "embed query: " + e.err.Error() }
func (e *embedQueryError) Unwrap() error { return e.err }

// legHit is one hit of one leg.
type legHit struct {
	id    string
	score float64
	// question is, when the request explains its results, the question
	// row that scored a vector hit; nil for a text row.
	question *questionHit
}

// lexicalLegs runs BM25 and substring matching.
func (e *Engine) lexicalLegs(ctx context.Context, text string, f lexical.Filter, w [numLegs]float64, depth int) (bm25, sub []legHit, err error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	convert := func(hs []lexical.Hit) []legHit {
		out := make([]legHit, len(hs))
		for i, h := range hs {
			out[i] = legHit{id: h.ID, score: h.Score}
		}
		return out
	}
	var errB, errS error
	var wg sync.WaitGroup
	if w[LegSubstring] > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer e.observeLeg(LegSubstring, time.Now())
			var hs []lexical.Hit
			hs, errS = e.lex.SearchSubstring(ctx, text, f, depth)
			sub = convert(hs)
		}()
	}
	if w[LegBM25] > 0 {
		start := time.Now()
		var hs []lexical.Hit
		hs, errB = e.lex.SearchBM25(ctx, text, f, depth)
		e.observeLeg(LegBM25, start)
		bm25 = convert(hs)
	}
	wg.Wait()
	if err := errors.Join(errB, errS); err != nil {
		return nil, nil, err
	}
	return bm25, sub, nil
}

// vectorLeg embeds the query if needed and scans the vectors with the
// filter inside the scan. A chunk scores the best of its text vector and its
// question vectors.
func (e *Engine) vectorLeg(ctx context.Context, req Request, q Query, depth int) ([]legHit, error) {
	qv := q.Vector
	if qv == nil {
		var err error
		if qv, err = req.EmbedQuery(ctx, q.Text); err != nil {
			return nil, &embedQueryError{err}
		}
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.vec == nil {
		return nil, nil // the model went away since the request was checked
	}
	var allow vector.Filter
	if m := newMatcher(req.Filter); !m.empty() {
		cat := e.vec.cat
		allow = vector.FilterFunc(func(id uint64) bool {
			en, _ := cat.lookupRow(id)
			return en != nil && m.match(en)
		})
	}
	// A chunk's question rows can take several of the best rows: look
	// deeper by up to as many again so that depth chunks remain.
	hs, err := e.vec.idx.SearchContext(ctx, qv, depth+min(depth, e.vec.qrows), allow)
	if errors.Is(err, vector.ErrInvalid) || errors.Is(err, vector.ErrDims) {
		return nil, fmt.Errorf("%w: query vector: %v", ErrInvalidQuery, err)
	}
	if err != nil {
		return nil, err
	}
	out := make([]legHit, 0, min(len(hs), depth))
	seen := make(map[uint64]bool, len(hs)) // by the chunk's text row
	for _, h := range hs {
		en, i := e.vec.cat.lookupRow(h.ID)
		if en == nil {
			continue
		}
		// Hits come best first: a chunk's first row is its best.
		if row := vectorID(en.ord, i); !seen[row] && len(out) < depth {
			seen[row] = true
			id := ChunkID(en.itemID(), i)
			hit := legHit{id: id, score: float64(h.Score)}
			if req.Explain && isQuestion(h.ID) && questionSlot(h.ID) < len(en.questions[i]) {
				hit.question = &questionHit{chunk: id, hash: en.questions[i][questionSlot(h.ID)]}
			}
			out = append(out, hit)
		}
	}
	return out, nil
}

// present turns ranked candidates into results: at most perItem chunks per
// item, snippets, and the token budget (a result that does not fit is
// skipped and later ones are tried). Candidates whose chunk no longer exists
// (an index running behind the store) are dropped.
// With ex, every result gets its explanation.
func (e *Engine) present(ctx context.Context, req Request, all []*candidate, hl highlight, limit, perItem int, tc textCache, ex *explainer) ([]Result, int, error) {
	count := tokenCounter(req)
	perItemSeen := map[string]int{}
	var out []Result
	used := 0
	for start := 0; start < len(all) && len(out) < limit; {
		// Read the next window of eligible candidates in one transaction.
		var window []*candidate
		var refs []vfs.ChunkRef
		for ; start < len(all) && len(window) < 2*limit; start++ {
			c := all[start]
			item, idx, ok := ParseChunkID(c.id)
			if !ok || perItemSeen[item] >= perItem {
				continue
			}
			window = append(window, c)
			refs = append(refs, vfs.ChunkRef{ItemID: item, Index: idx})
		}
		texts, err := tc.read(ctx, e.store, refs)
		if err != nil {
			return nil, 0, err
		}
		for i, c := range window {
			t := texts[i]
			if !t.Found || perItemSeen[t.Item.ID] >= perItem || len(out) >= limit {
				continue
			}
			snip, err := e.snippetOf(t.Text, hl, req.SnippetChars)
			if err != nil {
				return nil, 0, err
			}
			n := count(snip)
			if req.TokenBudget > 0 && used+n > req.TokenBudget {
				continue
			}
			r := chunkResult(c, t, snip, n)
			if ex != nil {
				if r.Explanation, err = ex.explain(ctx, c, t); err != nil {
					return nil, 0, err
				}
			}
			used += n
			perItemSeen[t.Item.ID]++
			out = append(out, r)
		}
	}
	return out, used, nil
}

// tokenCounter is req's token counter, or an estimate of 4 bytes a token.
func tokenCounter(req Request) func(string) int {
	if req.CountTokens != nil {
		return req.CountTokens
	}
	return func(s string) int { return (len(s) + 3) / 4 }
}

// highlight is what snippets are cut around.
type highlight struct {
	terms map[string]bool // the analysed terms of the texts BM25 searched
	words map[string]bool // the queries' words, for a chunk without those terms
}

// addTerms adds the terms text analyses to for BM25.
func (e *Engine) addTerms(terms map[string]bool, text string) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	e.mu.RLock()
	ts, err := e.lex.Terms(text)
	e.mu.RUnlock()
	if err != nil {
		return err
	}
	maps.Copy(terms, ts)
	return nil
}

// snippetOf cuts the snippet of a chunk from its text: around the words
// BM25 matched, or, in a chunk without them (only the vector or substring
// leg found it), the query's words.
func (e *Engine) snippetOf(text string, hl highlight, chars int) (string, error) {
	e.mu.RLock()
	spans, err := e.lex.MatchSpans(text, hl.terms)
	e.mu.RUnlock()
	if err != nil {
		return "", err
	}
	if len(spans) == 0 {
		spans = findWords(text, hl.words)
	}
	return Snippet(text, spans, chars), nil
}

// chunkResult is the result for chunk candidate c, read as t, with its
// snippet of n tokens.
func chunkResult(c *candidate, t vfs.ChunkText, snip string, n int) Result {
	return Result{
		ItemID: t.Item.ID, ChunkID: c.id, Drive: t.Item.Drive, Path: t.Item.Path,
		Title: t.Item.Title, Mime: t.Item.MimeType, Heading: t.Heading, Snippet: snip, SourceURL: t.Item.SourceURL,
		Start: t.Start, End: t.End, StartLine: t.StartLine, EndLine: t.EndLine,
		Score: c.fused, Ranks: legRanks(c), QueryIndexes: c.queries, Tokens: n,
	}
}

// legRanks lists where the legs that found c ranked it.
func legRanks(c *candidate) []LegRank {
	var out []LegRank
	for leg, rank := range c.ranks {
		if rank > 0 {
			out = append(out, LegRank{Leg: Leg(leg), Rank: rank, Score: c.scores[leg]})
		}
	}
	return out
}

// addWords adds the first max lowercased words of text worth showing in a
// snippet of a chunk only the vector leg found.
func addWords(words map[string]bool, text string, max int) {
	for w := range strings.FieldsFuncSeq(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	}) {
		if max == 0 {
			return
		}
		if utf8.RuneCountInString(w) >= 3 && !words[w] {
			words[w] = true
			max--
		}
	}
}

// findWords returns the byte spans of whole-word, case-insensitive
// occurrences of words in text (ASCII case folding keeps offsets exact).
func findWords(text string, words map[string]bool) [][2]int {
	if len(words) == 0 {
		return nil
	}
	lower := []byte(text)
	for i, b := range lower {
		if 'A' <= b && b <= 'Z' {
			lower[i] = b + 'a' - 'A'
		}
	}
	var out [][2]int
	for w := range words {
		for from := 0; ; {
			i := strings.Index(string(lower[from:]), w)
			if i < 0 {
				break
			}
			s, end := from+i, from+i+len(w)
			if wordStart(text, s) && wordEnd(text, end) {
				out = append(out, [2]int{s, end})
			}
			from = end
		}
	}
	return out
}

func wordStart(s string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return i == 0 || !(unicode.IsLetter(r) || unicode.IsDigit(r))
}

func wordEnd(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return i == len(s) || !(unicode.IsLetter(r) || unicode.IsDigit(r))
}

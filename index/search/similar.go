package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/viterin/vek/vek32"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/index/vector"
	"github.com/ctxd/ctxd/vfs"
)

// DefaultSimilarThreshold is the cosine similarity a chunk pair must reach
// when a SimilarRequest sets none: paraphrases and small edits of a passage
// stay above it with the store's model, related but distinct passages below.
const DefaultSimilarThreshold = 0.9

// MaxSimilarChunks bounds the chunks of a FindSimilar target: each one is a
// scan of the whole vector index.
const MaxSimilarChunks = 256

// similarSlack lets a pair of identical texts reach a threshold of 1: their
// cosine rounds to just under it in float32.
const similarSlack = 1e-6

// Errors of FindSimilar; each is an ErrInvalidQuery except ErrNotEmbedded
// and ErrNoModel, which a later call may not meet.
var (
	ErrThreshold     = fmt.Errorf("%w: similarity threshold must be in [0, 1], 0 meaning the default %v", ErrInvalidQuery, DefaultSimilarThreshold)
	ErrTooManyChunks = fmt.Errorf("%w: the target has more chunks than FindSimilar compares (%d)", ErrInvalidQuery, MaxSimilarChunks)
	ErrNoChunks      = fmt.Errorf("%w: the target has no text chunks to compare", ErrInvalidQuery)
	// ErrNotEmbedded marks a target item whose chunks wait for their vectors.
	ErrNotEmbedded = errors.New("the target's chunks are not all embedded yet")
	// ErrNoModel marks a FindSimilar while the vector leg has no model.
	ErrNoModel = errors.New("no embedding model is loaded")
)

// SimilarRequest asks which stored items hold near-duplicates of a target:
// a stored item (ItemID) or the chunk vectors of a text (Vectors).
type SimilarRequest struct {
	// ItemID names a stored item whose chunks, with their stored vectors,
	// are the target; the item is never a result.
	ItemID string
	// Vectors are the target's chunk vectors when ItemID is empty.
	Vectors [][]float32
	// Threshold is the cosine similarity in [0, 1] a pair must reach; 0
	// means DefaultSimilarThreshold.
	Threshold float64
	// Limit bounds the items returned; 0 means DefaultLimit.
	Limit int
	// Filter and Within bound the items compared, as in a Request.
	Filter lexical.Filter
	Within []string
	// NoWait answers from the vector index as it is, without waiting for
	// it to apply the writes acknowledged before the call (Response.Stale
	// stays ""): for a caller that compares beside a stream of its own
	// writes, such as ingest's de-duplication, which would wait for each.
	NoWait bool
}

// SimilarItem is an item holding a chunk at or above the threshold.
type SimilarItem struct {
	ItemID, Drive, Path, Title string
	// Similarity is the best cosine between one of its chunks and one of the
	// target's; ChunkID names its chunk of that pair and Snippet shows it.
	Similarity float64
	ChunkID    string
	Snippet    string
	// Coverage is the fraction of the target's chunks with a match in this
	// item at or above the threshold.
	Coverage float64
}

// SimilarResponse lists near-duplicates, most similar first.
type SimilarResponse struct {
	Items []SimilarItem
	// TargetChunks is how many chunks of the target were compared.
	TargetChunks int
	// Stale says why the items compared may miss writes acknowledged
	// before the call, as Response.Stale does; "" when they cannot.
	Stale string
}

// FindSimilar returns the items whose chunks are near-duplicates of the
// target's, by the best pair similarity, then coverage, then id. Each
// target chunk is compared with its 4×limit (at least 50) nearest chunks,
// so an item reached only past that depth is missed; vectors not yet
// embedded are not compared. Like Search, it first waits for the vector
// index to apply the writes acknowledged before the call, unless
// req.NoWait.
func (e *Engine) FindSimilar(ctx context.Context, req SimilarRequest) (SimilarResponse, error) {
	if !(req.Threshold >= 0 && req.Threshold <= 1) { // NaN too
		return SimilarResponse{}, fmt.Errorf("%w, not %v", ErrThreshold, req.Threshold)
	}
	if req.Limit < 0 {
		return SimilarResponse{}, fmt.Errorf("%w: limit must not be negative (0 means the default)", ErrInvalidQuery)
	}
	if err := e.opts.Limits.check(Request{Limit: req.Limit, Filter: req.Filter}); err != nil {
		return SimilarResponse{}, err
	}
	if err := req.Filter.Validate(); err != nil {
		return SimilarResponse{}, fmt.Errorf("%w: %v", ErrInvalidQuery, err)
	}
	threshold := cmp.Or(req.Threshold, DefaultSimilarThreshold) - similarSlack
	limit := cmp.Or(req.Limit, DefaultLimit)
	depth := max(50, 4*limit)
	filter, scoped := req.Filter, true
	if req.Within != nil {
		filter, scoped = within(req.Filter, req.Within)
	}
	e.mu.RLock()
	noModel := e.vec == nil
	e.mu.RUnlock()
	if noModel { // before a target item's missing vectors say "not embedded yet"
		return SimilarResponse{}, ErrNoModel
	}
	targets := req.Vectors
	if req.ItemID != "" {
		var err error
		if targets, err = e.itemVectors(ctx, req.ItemID); err != nil {
			return SimilarResponse{}, err
		}
	}
	switch {
	case len(targets) == 0:
		return SimilarResponse{}, ErrNoChunks
	case len(targets) > MaxSimilarChunks:
		return SimilarResponse{}, fmt.Errorf("%w: it has %d", ErrTooManyChunks, len(targets))
	}
	resp := SimilarResponse{TargetChunks: len(targets)}
	if !req.NoWait {
		var err error
		if resp.Stale, err = e.awaitWrites(ctx, false, true); err != nil {
			return SimilarResponse{}, err
		}
	}
	if !scoped {
		return resp, nil
	}
	type found struct {
		best    similarHit
		covered int // target chunks with a match
		last    int // the last target chunk counted in covered
	}
	byItem := map[string]*found{}
	for ti, v := range targets {
		hits, err := e.similarScan(ctx, v, depth, filter, req.ItemID)
		if err != nil {
			return SimilarResponse{}, err
		}
		for _, h := range hits {
			if float64(h.score) < threshold {
				break // best first
			}
			f := byItem[h.item]
			if f == nil {
				f = &found{best: h, last: -1}
				byItem[h.item] = f
			}
			if h.score > f.best.score || h.score == f.best.score && h.chunk < f.best.chunk {
				f.best = h
			}
			if f.last != ti {
				f.covered, f.last = f.covered+1, ti
			}
		}
	}
	ranked := make([]SimilarItem, 0, len(byItem))
	bestChunk := map[string]int{}
	for id, f := range byItem {
		ranked = append(ranked, SimilarItem{
			ItemID: id, Similarity: min(float64(f.best.score), 1),
			Coverage: float64(f.covered) / float64(len(targets)),
		})
		bestChunk[id] = f.best.chunk
	}
	slices.SortFunc(ranked, func(a, b SimilarItem) int {
		return cmp.Or(cmp.Compare(b.Similarity, a.Similarity), cmp.Compare(b.Coverage, a.Coverage), strings.Compare(a.ItemID, b.ItemID))
	})
	// Read the best chunks a window at a time; an item gone meanwhile (the
	// index trails the store) or out of the caller's access is dropped.
	for start := 0; start < len(ranked) && len(resp.Items) < limit; {
		end := min(start+2*limit, len(ranked))
		refs := make([]vfs.ChunkRef, 0, end-start)
		for _, s := range ranked[start:end] {
			refs = append(refs, vfs.ChunkRef{ItemID: s.ItemID, Index: bestChunk[s.ItemID]})
		}
		texts, err := e.store.ReadChunks(ctx, refs)
		if err != nil {
			return SimilarResponse{}, err
		}
		for i, t := range texts {
			if !t.Found || len(resp.Items) >= limit {
				continue
			}
			s := ranked[start+i]
			s.Drive, s.Path, s.Title = t.Item.Drive, t.Item.Path, t.Item.Title
			s.ChunkID = ChunkID(s.ItemID, refs[i].Index)
			s.Snippet = Snippet(t.Text, nil, DefaultSnippetChars)
			resp.Items = append(resp.Items, s)
		}
		start = end
	}
	return resp, nil
}

// similarHit is one chunk a target chunk's scan found.
type similarHit struct {
	item  string
	chunk int
	score float32
}

// similarScan finds the depth chunks nearest v among the items filter
// allows, other than exclude.
func (e *Engine) similarScan(ctx context.Context, v []float32, depth int, filter lexical.Filter, exclude string) ([]similarHit, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.vec == nil {
		return nil, ErrNoModel
	}
	cat := e.vec.cat
	m := newMatcher(filter)
	all := m.empty()
	skip := cat.get(exclude) // nil: every item may be found
	allow := vector.FilterFunc(func(id uint64) bool {
		en, _ := cat.lookup(id)
		return en != nil && en != skip && (all || m.match(en))
	})
	hs, err := e.vec.idx.SearchContext(ctx, v, depth, allow)
	if errors.Is(err, vector.ErrInvalid) || errors.Is(err, vector.ErrDims) {
		return nil, fmt.Errorf("%w: target vector: %v", ErrInvalidQuery, err)
	}
	if err != nil {
		return nil, err
	}
	out := make([]similarHit, 0, len(hs))
	for _, h := range hs {
		if en, i := cat.lookup(h.ID); en != nil {
			out = append(out, similarHit{item: en.itemID(), chunk: i, score: h.Score})
		}
	}
	return out, nil
}

// itemVectors reads the stored vectors of item id's chunks, refusing more
// than MaxSimilarChunks before reading them.
func (e *Engine) itemVectors(ctx context.Context, id string) ([][]float32, error) {
	spans, err := e.store.Chunks(ctx, vfs.Ref{ID: id})
	if err != nil {
		return nil, err
	}
	if len(spans) > MaxSimilarChunks {
		return nil, fmt.Errorf("%w: it has %d", ErrTooManyChunks, len(spans))
	}
	if len(spans) == 0 {
		// Content without chunks waits for a chunker (the model is loading).
		info, err := e.store.Info(ctx, vfs.Ref{ID: id})
		if err != nil {
			return nil, err
		}
		if it := info.Item; it.Size > it.FrontmatterLen {
			return nil, fmt.Errorf("%w: its text waits to be chunked", ErrNotEmbedded)
		}
		return nil, ErrNoChunks
	}
	refs := make([]vfs.ChunkRef, len(spans))
	for i := range spans {
		refs[i] = vfs.ChunkRef{ItemID: id, Index: i}
	}
	vecs, err := e.store.ChunkVectors(ctx, refs)
	if err != nil {
		return nil, err
	}
	missing := 0
	for _, v := range vecs {
		if v == nil {
			missing++
		}
	}
	if missing > 0 {
		return nil, fmt.Errorf("%w: %d of its %d chunks have no vector", ErrNotEmbedded, missing, len(vecs))
	}
	return vecs, nil
}

// Covers reports whether every target vector has a match among candidate's
// at or above threshold cosine similarity: coverage 1 in FindSimilar's terms,
// for vectors not in the index yet (sources of one ingest, say).
func Covers(targets, candidate [][]float32, threshold float64) bool {
	for _, t := range targets {
		if !slices.ContainsFunc(candidate, func(c []float32) bool {
			return len(c) == len(t) && float64(vek32.CosineSimilarity(t, c)) >= threshold
		}) {
			return false
		}
	}
	return len(targets) > 0
}

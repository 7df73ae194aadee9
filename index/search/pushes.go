package search

import (
	"context"
	"time"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/vfs"
)

// This file is what standing queries (index/standing) use of the engine:
// when changes are searchable, the outbox kept for them, and results built
// as Search builds them.

// Applied returns the outbox sequence through which both indexes have
// applied every change (a change at or below it is searchable), and a
// channel closed when that may have changed.
func (e *Engine) Applied() (uint64, <-chan struct{}) { return e.seenChanged(true, true) }

// ChunkHit is a chunk a caller scored itself (a standing query's match), to
// be presented as a Result.
type ChunkHit struct {
	ChunkID      string
	Score        float64
	Ranks        []LegRank
	QueryIndexes []int
	// Queries are the texts whose terms the snippet is cut around.
	Queries []string
	// SnippetChars is the snippet length; 0 means DefaultSnippetChars.
	SnippetChars int
}

// Present reads the chunks of hits in one transaction and returns their
// results, as Search would show them (snippet around the queries' terms,
// heading, span, lines). found[i] is false where the chunk no longer exists
// or lies outside ctx's access.
func (e *Engine) Present(ctx context.Context, hits []ChunkHit) (out []Result, found []bool, err error) {
	refs := make([]vfs.ChunkRef, len(hits))
	for i, h := range hits {
		item, idx, _ := ParseChunkID(h.ChunkID)
		refs[i] = vfs.ChunkRef{ItemID: item, Index: idx}
	}
	texts, err := e.store.ReadChunks(ctx, refs)
	if err != nil {
		return nil, nil, err
	}
	out, found = make([]Result, len(hits)), make([]bool, len(hits))
	for i, h := range hits {
		t := texts[i]
		if !t.Found {
			continue
		}
		hl := highlight{terms: map[string]bool{}, words: map[string]bool{}}
		for _, q := range h.Queries {
			if err := e.addTerms(hl.terms, q); err != nil {
				return nil, nil, err
			}
			addWords(hl.words, q, e.opts.Limits.MaxQueryTerms)
		}
		chars := h.SnippetChars
		if chars == 0 {
			chars = DefaultSnippetChars
		}
		snip, err := e.snippetOf(t.Text, hl, chars)
		if err != nil {
			return nil, nil, err
		}
		c := &candidate{id: h.ChunkID, fused: h.Score, queries: h.QueryIndexes}
		r := chunkResult(c, t, snip, (len(snip)+3)/4)
		r.Ranks = h.Ranks
		out[i], found[i] = r, true
	}
	return out, found, nil
}

// FilterMatch reports whether an item with these fields passes a filter,
// exactly as the indexes apply it.
type FilterMatch func(drive, path, mime string, tags []string, t time.Time) bool

// NewFilterMatch compiles f; f must be valid (lexical.Filter.Validate).
func NewFilterMatch(f lexical.Filter) FilterMatch {
	m := newMatcher(f)
	if m.empty() {
		return func(string, string, string, []string, time.Time) bool { return true }
	}
	return func(drive, path, mime string, tags []string, t time.Time) bool {
		en := &entry{drive: drive, path: path, mime: mime, tags: tags}
		if !t.IsZero() {
			en.time = lexical.TimeKey(t)
		}
		return m.match(en)
	}
}

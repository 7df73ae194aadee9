package search

import (
	"context"

	"github.com/ctxd/ctxd/vfs"
)

// fuseItems fuses the items the legs found for one query (GroupItem). Each
// leg ranks an item by its best chunk there, which is its first hit since a
// leg's hits are best first; weighted reciprocal rank fusion then runs over
// those item ranks with the k and weights of chunk fusion, normalised by
// norm (what an item first in every leg that found anything gets). So an
// item that BM25 finds through one chunk and the vector leg through another
// is credited by both, where its chunks alone would each have one leg.
func fuseItems(hits [numLegs][]legHit, w [numLegs]float64, k, norm float64) []*candidate {
	byID := map[string]*candidate{}
	var out []*candidate
	for leg, hs := range hits {
		rank := 0
		for _, h := range hs {
			id, _, ok := ParseChunkID(h.id)
			if !ok {
				continue
			}
			it := byID[id]
			if it == nil {
				it = &candidate{id: id}
				byID[id] = it
				out = append(out, it)
			}
			if it.ranks[leg] > 0 {
				continue // a lesser chunk of an item this leg already ranked
			}
			rank++
			it.ranks[leg], it.scores[leg] = rank, h.score
			it.fused += w[leg] / (k + float64(rank))
			if h.question != nil {
				it.question = h.question
			}
		}
	}
	for _, it := range out {
		it.fused /= norm
		it.norm = norm
	}
	return out
}

// presentItems turns ranked item candidates into results, one an item: its
// best chunk that exists and whose snippet fits the token budget, with up
// to perItem-1 of its next best in More (each also within the budget). An
// item none of whose chunks can be shown is skipped. With ex, every result
// gets the item's explanation, its terms matched in the chunk shown.
func (e *Engine) presentItems(ctx context.Context, req Request, items []*candidate, hl highlight, limit, perItem int, tc textCache, ex *explainer) ([]Result, int, error) {
	count := tokenCounter(req)
	var out []Result
	used := 0
	for start := 0; start < len(items) && len(out) < limit; {
		// Read the chunks of the next window of items in one transaction.
		window := items[start:min(len(items), start+2*limit)]
		start += len(window)
		var refs []vfs.ChunkRef
		for _, it := range window {
			refs = append(refs, shownChunks(perItem)(it)...)
		}
		texts, err := tc.read(ctx, e.store, refs)
		if err != nil {
			return nil, 0, err
		}
		for _, it := range window {
			shown := texts[:min(perItem, len(it.chunks))]
			texts = texts[len(shown):]
			if len(out) >= limit {
				continue
			}
			var r *Result
			for i, t := range shown {
				if !t.Found {
					continue
				}
				c := it.chunks[i]
				snip, err := e.snippetOf(t.Text, hl, req.SnippetChars)
				if err != nil {
					return nil, 0, err
				}
				n := count(snip)
				if req.TokenBudget > 0 && used+n > req.TokenBudget {
					continue
				}
				used += n
				h := chunkResult(c, t, snip, n)
				if r == nil {
					// The item's own score, ranks and queries.
					h.Score, h.Ranks, h.QueryIndexes = it.fused, legRanks(it), it.queries
					if ex != nil {
						if h.Explanation, err = ex.explain(ctx, it, t); err != nil {
							return nil, 0, err
						}
					}
					r = &h
					continue
				}
				h.QueryIndexes = nil
				r.More = append(r.More, h)
			}
			if r != nil {
				out = append(out, *r)
			}
		}
	}
	return out, used, nil
}

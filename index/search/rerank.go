package search

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ctxd/ctxd/vfs"
)

// maxRerankChunks bounds the chunks the rerank reads for one request, and
// with proximityChunkBytes the text it scans (3.2 MiB at most).
const maxRerankChunks = 200

// reranker holds the signals judged on the candidates' chunks: proximity
// (qs is nil when it is off) and recency.
type reranker struct {
	e       *Engine
	qs      []proxQuery     // by query index; a query of fewer than two terms weighs nothing
	terms   map[string]bool // the terms of all of qs: a chunk is scanned once for every query
	recency Recency
}

// newReranker is the reranker of req, searched in mode, with qs its queries
// for the proximity rerank (the zero proxQuery where it is off).
func (e *Engine) newReranker(req Request, mode Mode, qs []proxQuery) reranker {
	rr := reranker{e: e, recency: req.Recency}
	if rr.recency.Now.IsZero() {
		rr.recency.Now = time.Now()
	}
	if proximityOn(req.Proximity, mode, req.GroupBy) && slices.ContainsFunc(qs, proxQuery.multi) {
		rr.qs, rr.terms = qs, map[string]bool{}
		for _, q := range qs {
			maps.Copy(rr.terms, q.terms)
		}
	}
	return rr
}

// proximityOn resolves a request's proximity toggle for the mode the
// search ran in: Vector mode has no query terms to weigh.
func proximityOn(t Toggle, mode Mode, group GroupBy) bool {
	switch {
	case mode == Vector || t == ToggleOff:
		return false
	case t == ToggleOn:
		return true
	}
	return DefaultProximity(mode, group)
}

// chunkRef names the chunk of a chunk candidate.
func chunkRef(c *candidate) []vfs.ChunkRef {
	item, idx, _ := ParseChunkID(c.id)
	return []vfs.ChunkRef{{ItemID: item, Index: idx}}
}

// shownChunks names the chunks of an item candidate presentItems shows:
// its best perItem.
func shownChunks(perItem int) func(*candidate) []vfs.ChunkRef {
	return func(it *candidate) []vfs.ChunkRef {
		var refs []vfs.ChunkRef
		for _, c := range it.chunks[:min(perItem, len(it.chunks))] {
			_, idx, _ := ParseChunkID(c.id)
			refs = append(refs, vfs.ChunkRef{ItemID: it.id, Index: idx})
		}
		return refs
	}
}

// on reports whether any signal can change a score.
func (rr reranker) on() bool { return rr.qs != nil || rr.recency.on() }

// tail is what a candidate past the window is multiplied by: the proximity
// factor of a chunk holding no pair of neighbours (its least), and no
// ageing (the most). So a candidate past the window never passes one in it
// by proximity.
func (rr reranker) tail() float64 {
	if rr.qs != nil {
		return 1 - ProximityShare
	}
	return 1
}

// judge judges candidate c from texts, the chunks chunksOf gave for it:
// for proximity the best closeness of any of them to any query that found
// c; for recency the age of its item.
func (rr reranker) judge(c *candidate, texts []vfs.ChunkText) (judgement, error) {
	j, found := judgement{recency: 1}, false
	for _, t := range texts {
		if !t.Found {
			continue
		}
		if !found {
			found = true
			j.recency, j.aged, j.age = rr.recency.factor(t.Item.Drive, t.Item.Path, t.Item.CreatedAt)
		}
		if rr.qs == nil {
			break
		}
		ps, err := rr.e.chunkPositions(t.Text, rr.terms)
		if err != nil {
			return judgement{}, err
		}
		for _, qi := range c.queries {
			j.closeness = max(j.closeness, closeness(ps, rr.qs[qi]))
		}
	}
	return j, nil
}

// proximity is the proximity factor at closeness p: 1 when the rerank
// does not weigh proximity.
func (rr reranker) proximity(p float64) float64 {
	if rr.qs == nil {
		return 1
	}
	return 1 - ProximityShare*(1-p)
}

// apply multiplies c's score by the factors of judgement j and, when the
// request explains its results, records j.
func (rr reranker) apply(c *candidate, j judgement) {
	c.fused *= j.recency * rr.proximityOf(j)
	if c.trace != nil {
		c.trace.judged, c.trace.judgement = true, j
	}
}

// proximityOf is the proximity factor of judgement j: the tail's past the
// window.
func (rr reranker) proximityOf(j judgement) float64 {
	if j.past {
		return rr.tail()
	}
	return rr.proximity(j.closeness)
}

// rerank applies rr to the window of ranked (best first) and sorts ranked
// again. The window is the first 2×limit candidates, each read as the
// chunks chunksOf names (one transaction, kept in tc so that presenting them
// reads nothing again); it grows by as many again while the limit-th best
// score in it is below what the next candidate could score (its fused score
// times tail: recency lowered scores in the window), and never past
// maxRerankChunks chunks. Candidates past the window are multiplied by tail.
func (e *Engine) rerank(ctx context.Context, rr reranker, ranked []*candidate, limit int, chunksOf func(*candidate) []vfs.ChunkRef, tc textCache) error {
	if !rr.on() || len(ranked) == 0 {
		return nil
	}
	step := 2 * limit
	read, chunks := 0, 0
	changed := rr.tail() != 1 // whether any score changed, so ranked needs sorting again
	for read < len(ranked) && chunks < maxRerankChunks {
		end := read
		var refs []vfs.ChunkRef
		var counts []int // chunks read per candidate of the step
		for ; end < len(ranked) && end-read < step && chunks+len(refs) < maxRerankChunks; end++ {
			cr := chunksOf(ranked[end])
			cr = cr[:min(len(cr), maxRerankChunks-chunks-len(refs))]
			refs = append(refs, cr...)
			counts = append(counts, len(cr))
		}
		texts, err := tc.read(ctx, e.store, refs)
		if err != nil {
			return err
		}
		for i, c := range ranked[read:end] {
			j, err := rr.judge(c, texts[:counts[i]])
			if err != nil {
				return err
			}
			rr.apply(c, j)
			changed = changed || j.recency*rr.proximity(j.closeness) != 1
			texts = texts[counts[i]:]
		}
		read, chunks = end, chunks+len(refs)
		if read < len(ranked) && kthBest(ranked[:read], limit) >= ranked[read].fused*rr.tail() {
			break
		}
	}
	// Past the window only the tail applies: when it changes scores, or
	// when the request explains them (every candidate has a trace then).
	if changed || ranked[0].trace != nil {
		for _, c := range ranked[read:] {
			rr.apply(c, judgement{recency: 1, past: true})
		}
	}
	if !changed {
		return nil
	}
	slices.SortStableFunc(ranked, func(a, b *candidate) int {
		if c := cmp.Compare(b.fused, a.fused); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return nil
}

// kthBest returns the k-th highest score of cands, or -1 when there are
// fewer than k.
func kthBest(cands []*candidate, k int) float64 {
	if len(cands) < k {
		return -1
	}
	s := make([]float64, len(cands))
	for i, c := range cands {
		s[i] = c.fused
	}
	slices.Sort(s)
	return s[len(s)-k]
}

// textCache holds the chunk texts one request has read, so that the rerank
// and the presentation read each chunk once.
type textCache map[vfs.ChunkRef]vfs.ChunkText

// read returns the texts of refs, reading those not yet held in one
// transaction.
func (tc textCache) read(ctx context.Context, s *vfs.Store, refs []vfs.ChunkRef) ([]vfs.ChunkText, error) {
	var missing []vfs.ChunkRef
	for _, r := range refs {
		if _, ok := tc[r]; !ok {
			missing = append(missing, r)
			tc[r] = vfs.ChunkText{} // a placeholder until read: one read per ref
		}
	}
	if len(missing) > 0 {
		ts, err := s.ReadChunks(ctx, missing)
		if err != nil {
			return nil, err
		}
		for i, r := range missing {
			tc[r] = ts[i]
		}
	}
	out := make([]vfs.ChunkText, len(refs))
	for i, r := range refs {
		out[i] = tc[r]
	}
	return out, nil
}

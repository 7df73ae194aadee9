package search

import (
	"context"
	"fmt"
)

// Priors weighs what is known of a result's item besides the query: its
// importance (vfs.Item.Importance, 0 when never set) and its usage (how many
// searches returned it, vfs.Item.RetrievalCount). Each weight is in [0, 1];
// 0 turns that prior off, and both are off by default because neither
// raised nDCG@10 on the eval collections (the closing note of issue 13).
type Priors struct {
	Importance float64
	Usage      float64
}

// usageHalf is the retrieval count at which an item gets half the usage
// prior: the signal saturates, so a few popular items cannot bury the rest.
const usageHalf = 5

// ErrPriorWeight marks a Priors weight outside [0, 1]; it is an
// ErrInvalidQuery.
var ErrPriorWeight = fmt.Errorf("%w: prior weights must be in [0, 1]", ErrInvalidQuery)

func (p Priors) validate() error {
	for _, w := range []float64{p.Importance, p.Usage} {
		if !(w >= 0 && w <= 1) { // NaN too
			return fmt.Errorf("%w, not %v", ErrPriorWeight, w)
		}
	}
	return nil
}

func (p Priors) off() bool { return p.Importance == 0 && p.Usage == 0 }

// boost is the factor an item's fused score is multiplied by:
// (1 + wi·importance + wu·usage) / (1 + wi + wu), where usage is
// count/(count + usageHalf). Dividing by the most the priors can add keeps
// scores in [0, 1], so MinScore keeps its scale.
func (p Priors) boost(importance float64, retrievals int64) float64 {
	usage := float64(retrievals) / float64(retrievals+usageHalf)
	return (1 + p.Importance*importance + p.Usage*usage) / (1 + p.Importance + p.Usage)
}

// applyPriors scales the fused score of every candidate in cands by its
// item's boost; itemOf maps a candidate id to its item id. The caller
// ranks them afterwards. A candidate with a trace (Request.Explain)
// records its boost's inputs.
func (e *Engine) applyPriors(ctx context.Context, p Priors, cands map[string]*candidate, itemOf func(string) string) error {
	if p.off() || len(cands) == 0 {
		return nil
	}
	index := map[string]int{} // item id -> position in ids
	var ids []string
	for id := range cands {
		item := itemOf(id)
		if _, ok := index[item]; !ok {
			index[item] = len(ids)
			ids = append(ids, item)
		}
	}
	items, err := e.store.Items(ctx, ids)
	if err != nil {
		return err
	}
	for id, c := range cands {
		it := items[index[itemOf(id)]]
		b := p.boost(it.Importance, it.RetrievalCount)
		c.fused *= b
		if c.trace != nil {
			c.trace.boosted, c.trace.boost, c.trace.importance, c.trace.retrievals = true, b, it.Importance, it.RetrievalCount
		}
	}
	return nil
}

// chunkItem is the item id of a chunk candidate's id.
func chunkItem(id string) string {
	item, _, _ := ParseChunkID(id)
	return item
}

// sameID is the item id of an item candidate's id.
func sameID(id string) string { return id }

package search

import (
	"maps"
	"slices"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/internal/runes"
)

// Toggle turns an optional ranking signal on or off, or leaves it to its
// default.
type Toggle int

// Toggles.
const (
	ToggleDefault Toggle = iota
	ToggleOn
	ToggleOff
)

// ProximityShare is the part of a result's score the proximity rerank
// weighs: a result whose chunk holds every pair of the query's neighbouring
// terms as the query does keeps its score, one holding none keeps
// 1 - ProximityShare of it. 0.15 is the weight the sequential dependence
// model (Metzler and Croft, 2005) gives its two proximity features against
// 0.85 for the terms alone, a default that held across the TREC collections
// it was set on; it was not fitted to the eval collections.
const ProximityShare = 0.15

// proximityChunkBytes bounds the text of one chunk the proximity rerank
// scans; chunks are bounded in model tokens, a few KiB of text, so it only
// cuts text no model window holds.
const proximityChunkBytes = 16 << 10

// DefaultProximity reports whether the proximity rerank is on when a
// request leaves it to the default (ToggleDefault), by the mode the search
// ran in and its grouping: in Hybrid mode, both groupings. There `make eval`
// showed it raising nDCG@10 on tldr (+0.016, +0.019 with items) and moving
// no other collection beyond noise (a paired comparison over the queries;
// see docs/search.md). In BM25 mode it raised tldr as much but lowered cacm and
// vaswani by 0.002 to 0.003 (within noise), which put vaswani's BM25 below
// the textbook BM25 reference it otherwise beats: BM25 mode stays the plain
// BM25 a caller asks for. Vector mode has no terms to weigh.
func DefaultProximity(mode Mode, group GroupBy) bool {
	return mode == Hybrid
}

// proxQuery is what the proximity rerank knows of one query: its distinct
// analysed terms (BM25's: stemmed, stop words left out) in the order the
// query first holds them, and how many words apart neighbours stand in it.
type proxQuery struct {
	terms map[string]bool
	order []string
	gap   []int // gap[k]: words from order[k] to order[k+1] in the query, >= 1
}

// proxQueryOf analyses text as BM25 did.
func (e *Engine) proxQueryOf(text string) (proxQuery, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	terms, err := e.lex.Terms(text)
	if err != nil {
		return proxQuery{}, err
	}
	ps, err := e.lex.TermPositions(text, terms)
	if err != nil {
		return proxQuery{}, err
	}
	q := proxQuery{terms: terms}
	prev := 0
	add := func(t string, word int) {
		if len(q.order) > 0 {
			q.gap = append(q.gap, max(1, word-prev))
		}
		q.order = append(q.order, t)
	}
	for _, p := range ps {
		if !slices.Contains(q.order, p.Term) {
			add(p.Term, p.Word)
		}
		prev = p.Word
	}
	// A term the word split missed (punctuation inside a token, "3.14")
	// goes last, as the query's next word.
	for _, t := range slices.Sorted(maps.Keys(terms)) {
		if !slices.Contains(q.order, t) {
			add(t, prev+1)
			prev++
		}
	}
	return q, nil
}

// multi reports whether q has two terms or more, the least proximity weighs.
func (q proxQuery) multi() bool { return len(q.order) >= 2 }

// chunkPositions returns where terms occur in the first
// proximityChunkBytes of a chunk's text, for closeness.
func (e *Engine) chunkPositions(text string, terms map[string]bool) ([]lexical.TermPosition, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.lex.TermPositions(runes.Cut(text, proximityChunkBytes), terms)
}

// closeness returns how closely a text holds the neighbouring terms of q,
// in [0, 1], from ps, the positions in it of q's terms (and maybe others',
// which it skips): the mean over the query's pairs of neighbouring terms of
// 1/(1 + d - g)², where g is how many words apart the pair stands in the
// query and d the fewest words apart an occurrence of one stands from one
// of the other in the text, in either order (1 when d <= g, 0 when either
// term is missing). So a chunk holding the query's phrases as written
// scores 1, the same words a word further apart 1/4, scattered ones near 0.
// The kernel 1/distance² is BM25TP's (Rasolofo and Savoy, 2003); pairs of
// neighbours are the sequential dependence model's. A query of one term
// scores 1: it has nothing to scatter.
func closeness(ps []lexical.TermPosition, q proxQuery) float64 {
	n := len(q.order)
	if n < 2 {
		return 1
	}
	idx := make(map[string]int, n)
	for i, t := range q.order {
		idx[t] = i
	}
	last := make([]int, n) // word of the term's last occurrence, -1 before one
	for i := range last {
		last[i] = -1
	}
	dist := make([]int, n-1) // dist[k]: of pair (k, k+1) so far; 0 while unseen
	see := func(k, d int) {
		if dist[k] == 0 || d < dist[k] {
			dist[k] = d
		}
	}
	for _, p := range ps {
		a, ok := idx[p.Term]
		if !ok {
			continue // another query's term
		}
		// The nearest occurrence of a neighbour before this one; the
		// nearest after it sees this one as its last.
		if a > 0 && last[a-1] >= 0 {
			see(a-1, max(1, p.Word-last[a-1]))
		}
		if a+1 < n && last[a+1] >= 0 {
			see(a, max(1, p.Word-last[a+1]))
		}
		last[a] = p.Word
	}
	var sum float64
	for k, d := range dist {
		if d > 0 {
			x := float64(1 + max(0, d-q.gap[k]))
			sum += 1 / (x * x)
		}
	}
	return sum / float64(n-1)
}

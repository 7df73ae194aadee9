package search

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/vfs"
)

// Explanation says why a result scores what it does (Request.Explain), in
// the order the engine computed it: Score = Fused / FusedMax × the product
// of Factors' values, up to float rounding.
type Explanation struct {
	// Legs holds every leg of the mode used whose weight is above 0, in Leg
	// order, those that missed the result included (Rank 0).
	Legs []LegContribution
	// RRFK is the reciprocal rank fusion constant k.
	RRFK float64
	// Fused is the sum of the legs' contributions.
	Fused float64
	// FusedMax is what the divisor of fusion was: what a result ranked
	// first by every leg that found anything for query Query gets. A leg
	// that found nothing for that query is left out of it.
	FusedMax float64
	// Factors are the multipliers applied after fusion, in order: the
	// priors (when on), proximity (when the rerank weighed it), recency
	// (when on).
	Factors []Factor
	// Matched holds the analysed terms (lexical.QueryTerms: as BM25
	// analyses the text it searched) of query Query that the chunk's text
	// or heading holds, in query order; Missing the others.
	Matched, Missing []string
	// Question is, when the vector leg scored the result by a question
	// vector rather than a chunk's text, that question's text ("" when
	// the question has changed since).
	Question string
	// Query is the index of the query whose fusion the result kept (the
	// best of those that found it).
	Query int
}

// LegContribution is one leg's part in a result's fused score.
type LegContribution struct {
	Leg    Leg
	Rank   int // 1-based; 0 when the leg did not find the result
	Score  float64
	Weight float64
	// Contribution is Weight/(RRFK + Rank); 0 when Rank is 0.
	Contribution float64
}

// Factor is one multiplier of a result's score after fusion.
type Factor struct {
	Name   string // "priors", "proximity" or "recency"
	Value  float64
	Detail string // its inputs, in words
}

// Names of Factors.
const (
	FactorPriors    = "priors"
	FactorProximity = "proximity"
	FactorRecency   = "recency"
)

// questionHit is the question row the vector leg scored a chunk by.
type questionHit struct {
	chunk string // the chunk id the question belongs to
	hash  [32]byte
}

// explainer builds the explanations of one request's results; nil when the
// request asked for none.
type explainer struct {
	e       *Engine
	legs    []Leg // the legs of the mode used with a weight above 0
	weights [numLegs]float64
	k       float64
	terms   [][]string         // by query: the analysed terms of the text BM25 searched
	sets    []*lexical.TermSet // by query: terms, compiled
	tc      textCache
	priors  Priors
	rr      reranker
}

// newExplainer returns the explainer of req searched in mode, or nil when
// req does not ask for explanations; texts are the texts BM25 searched, by
// query ("" for a query without text), and rr the reranker that weighed
// them.
func newExplainer(e *Engine, req Request, mode Mode, w [numLegs]float64, k float64, texts []string, tc textCache, rr reranker) (*explainer, error) {
	if !req.Explain {
		return nil, nil
	}
	ex := &explainer{e: e, weights: w, k: k, tc: tc, priors: req.Priors, rr: rr,
		terms: make([][]string, len(texts)), sets: make([]*lexical.TermSet, len(texts))}
	for _, l := range modeLegs(mode) {
		if w[l] > 0 {
			ex.legs = append(ex.legs, l)
		}
	}
	for i, t := range texts {
		ts, err := lexical.QueryTerms(t)
		if err != nil {
			return nil, err
		}
		ex.terms[i], ex.sets[i] = ts, lexical.NewTermSet(setOf(ts))
	}
	return ex, nil
}

// modeLegs lists the legs mode runs.
func modeLegs(mode Mode) []Leg {
	switch mode {
	case BM25:
		return []Leg{LegBM25, LegSubstring}
	case Vector:
		return []Leg{LegVector}
	}
	return []Leg{LegBM25, LegSubstring, LegVector}
}

// explain explains candidate c (a chunk, or an item) shown as chunk t.
func (ex *explainer) explain(ctx context.Context, c *candidate, t vfs.ChunkText) (*Explanation, error) {
	x := &Explanation{RRFK: ex.k, FusedMax: c.norm, Factors: ex.factors(c.trace), Query: c.query}
	for _, l := range ex.legs {
		lc := LegContribution{Leg: l, Rank: c.ranks[l], Score: c.scores[l], Weight: ex.weights[l]}
		if lc.Rank > 0 {
			lc.Contribution = lc.Weight / (ex.k + float64(lc.Rank))
		}
		x.Fused += lc.Contribution
		x.Legs = append(x.Legs, lc)
	}
	if terms := ex.terms[c.query]; len(terms) > 0 {
		found := map[string]bool{}
		for _, s := range []string{t.Heading, t.Text} {
			if err := ex.sets[c.query].Find(s, found); err != nil {
				return nil, err
			}
		}
		for _, term := range terms {
			if found[term] {
				x.Matched = append(x.Matched, term)
			} else {
				x.Missing = append(x.Missing, term)
			}
		}
	}
	if c.question != nil {
		q, err := ex.questionText(ctx, c.question)
		if err != nil {
			return nil, err
		}
		x.Question = q
	}
	return x, nil
}

// questionText finds the text of question q among its chunk's: the
// caller's questions of its item and the generated ones of its text.
func (ex *explainer) questionText(ctx context.Context, q *questionHit) (string, error) {
	item, idx, ok := ParseChunkID(q.chunk)
	if !ok {
		return "", nil
	}
	ts, err := ex.tc.read(ctx, ex.e.store, []vfs.ChunkRef{{ItemID: item, Index: idx}})
	if err != nil || !ts[0].Found {
		return "", err
	}
	t := ts[0]
	asked, err := ex.e.store.Questions(ctx, vfs.Ref{Drive: t.Item.Drive, Path: t.Item.Path})
	if errors.Is(err, vfs.ErrNotFound) { // gone since its chunk was read
		return "", nil
	}
	if err != nil {
		return "", err
	}
	generated, _, err := ex.e.store.GeneratedQuestions(ctx, t.Hash)
	if err != nil {
		return "", err
	}
	all := append(asked, generated...)
	if i := slices.IndexFunc(all, func(s string) bool { return sha256.Sum256([]byte(s)) == q.hash }); i >= 0 {
		return all[i], nil
	}
	return "", nil
}

// setOf is terms as a set.
func setOf(terms []string) map[string]bool {
	m := make(map[string]bool, len(terms))
	for _, t := range terms {
		m[t] = true
	}
	return m
}

// trace is what the signals after fusion found of one candidate, kept for
// its explanation (Request.Explain).
type trace struct {
	boosted    bool // the priors weighed it
	boost      float64
	importance float64
	retrievals int64
	judged     bool // the rerank weighed it, in or past its window
	judgement
}

// addTraces gives every candidate of cands a trace, in one allocation.
func addTraces(cands map[string]*candidate) {
	ts := make([]trace, len(cands))
	i := 0
	for _, c := range cands {
		c.trace = &ts[i]
		i++
	}
}

// factors lists the factors trace tr records, in the order they applied.
func (ex *explainer) factors(tr *trace) []Factor {
	var out []Factor
	if tr.boosted {
		out = append(out, Factor{Name: FactorPriors, Value: tr.boost, Detail: fmt.Sprintf(
			"importance %.3g (weight %.3g), %d retrievals (weight %.3g)", tr.importance, ex.priors.Importance, tr.retrievals, ex.priors.Usage)})
	}
	if !tr.judged {
		return out
	}
	j, rr := tr.judgement, ex.rr
	if rr.qs != nil {
		d := fmt.Sprintf("closeness %.3g", j.closeness)
		if j.past {
			d = "past the rerank window: closeness counted as 0"
		}
		out = append(out, Factor{Name: FactorProximity, Value: rr.proximityOf(j), Detail: d})
	}
	if rr.recency.on() {
		f := Factor{Name: FactorRecency, Value: j.recency}
		switch {
		case j.past:
			f.Detail = "past the rerank window: not aged"
		case !j.aged:
			f.Detail = "not aged: recency does not apply to this item"
		default:
			r := rr.recency
			f.Detail = fmt.Sprintf("age %s (half-life %s, floor %.3g)", inWords(j.age), inWords(r.HalfLife), r.Floor)
		}
		out = append(out, f)
	}
	return out
}

// judgement is what the rerank found of one candidate.
type judgement struct {
	recency   float64       // the recency factor
	aged      bool          // recency applies to the candidate's item
	age       time.Duration // its age, when aged
	closeness float64       // the best closeness of its chunks, when proximity weighs
	past      bool          // past the rerank window: not judged
}

// inWords is a duration in the unit that suits it: "9.2 d", "5 h",
// "40 s".
func inWords(d time.Duration) string {
	switch {
	case d >= 24*time.Hour:
		return fmt.Sprintf("%.3g d", d.Hours()/24)
	case d >= time.Hour:
		return fmt.Sprintf("%.3g h", d.Hours())
	case d >= time.Minute:
		return fmt.Sprintf("%.3g min", d.Minutes())
	}
	return fmt.Sprintf("%.3g s", d.Seconds())
}

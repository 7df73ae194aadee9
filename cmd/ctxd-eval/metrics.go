package main

import (
	"math"
	"slices"
)

// The metrics follow trec_eval (and pytrec_eval) so the numbers compare with
// published ones: ndcg_cut_k with linear gain and recall at a cutoff. They are
// written here rather than taken from a library because they are a few lines,
// and no Go library implements trec_eval's exact definitions.

// NDCG returns nDCG@k of ranked, a best-first list of distinct document ids,
// against grades, the judged documents of one query. The gain of a document
// is its grade (linear, as trec_eval's ndcg_cut), discounted by
// 1/log2(rank+1) with 1-based ranks. The ideal DCG ranks every document with
// grade > 0 by grade, so relevant documents missing from the corpus or the
// results still count against the score. A query without relevant documents
// scores 0.
func NDCG(ranked []string, grades map[string]int, k int) float64 {
	var dcg float64
	for i, id := range ranked[:min(k, len(ranked))] {
		if g := grades[id]; g > 0 {
			dcg += float64(g) / math.Log2(float64(i+2))
		}
	}
	var ideal []int
	for _, g := range grades {
		if g > 0 {
			ideal = append(ideal, g)
		}
	}
	slices.SortFunc(ideal, func(a, b int) int { return b - a })
	var idcg float64
	for i, g := range ideal[:min(k, len(ideal))] {
		idcg += float64(g) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// Recall returns the share of the documents with grade > 0 that appear in
// the first k entries of ranked (distinct ids, best first). A query without
// relevant documents scores 0.
func Recall(ranked []string, grades map[string]int, k int) float64 {
	var relevant, found int
	for _, g := range grades {
		if g > 0 {
			relevant++
		}
	}
	for _, id := range ranked[:min(k, len(ranked))] {
		if grades[id] > 0 {
			found++
		}
	}
	if relevant == 0 {
		return 0
	}
	return float64(found) / float64(relevant)
}

// Mean returns the arithmetic mean of xs, or 0 for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// Median returns the middle value of xs (the mean of the two middle values
// for an even count), or 0 for none. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return (s[mid-1] + s[mid]) / 2
}

// Paired is the paired comparison of two rows' per-query scores (after
// minus before, query by query): the mean difference and the half-width of
// its 95% confidence interval, mean ± 1.96·sd/√n (the normal approximation,
// sound for the 50 or more queries of every collection here), and how many
// queries rose and fell. The difference is beyond noise when the interval
// excludes 0: the queries disagree less than they would by chance.
type Paired struct {
	Mean, Half   float64
	Wins, Losses int
}

// PairedDiff compares after with before, which hold one score per query in
// the same order.
func PairedDiff(before, after []float64) Paired {
	n := min(len(before), len(after))
	if n == 0 {
		return Paired{}
	}
	d := make([]float64, n)
	var p Paired
	for i := range d {
		d[i] = after[i] - before[i]
		switch {
		case d[i] > 0:
			p.Wins++
		case d[i] < 0:
			p.Losses++
		}
	}
	p.Mean = Mean(d)
	if n > 1 {
		var ss float64
		for _, x := range d {
			ss += (x - p.Mean) * (x - p.Mean)
		}
		p.Half = 1.96 * math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
	}
	return p
}

// Beyond reports whether the difference is beyond noise.
func (p Paired) Beyond() bool { return p.Mean-p.Half > 0 || p.Mean+p.Half < 0 }

package assemble

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/ctxd/ctxd/index/lexical"
)

// BM25 parameters, the same as Bleve's.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// analyzer is the English analyzer of the lexical index's text field
// (index/lexical): possessives, lower case, stop words, Porter stemming.
var analyzer = sync.OnceValues(func() (analysis.Analyzer, error) {
	a, err := registry.NewCache().AnalyzerNamed(en.AnalyzerName)
	if err != nil {
		return nil, fmt.Errorf("analyzer %s: %w", en.AnalyzerName, err)
	}
	return a, nil
})

// queryTerm is one distinct analysed term of the task.
type queryTerm struct {
	term    string
	surface string // the task's word that first produced it
}

// doc is one contextual file as BM25 sees it: the frequency of each term of
// its title, description and body, and its length in terms.
type doc struct {
	tf     map[string]int
	length int
}

// match is how one file matched the task.
type match struct {
	score  float64  // BM25
	weight float64  // the IDF of the task's terms it holds, summed
	terms  []string // surface words of the task, in the task's order
}

// Relevance thresholds: a contextual file is relevant when the IDF weight
// of the task's terms it holds reaches RelevantShare of the weight of all
// the task's terms the store holds, or RelevantWeight, whichever is lower
// (see the package doc).
const (
	// RelevantShare is the share of the task's weight that makes a match:
	// one of four equally informative words.
	RelevantShare = 0.25
	// RelevantWeight is a weight that makes a match whatever the task's:
	// about ln 100, the IDF of a word that one chunk in a hundred holds.
	RelevantWeight = 4.6
)

// relevant reports whether m is a substantive match for a task of weight
// total.
func (m match) relevant(total float64) bool {
	return m.weight > 0 && m.weight >= min(RelevantShare*total, RelevantWeight)
}

// miss says why m is not a substantive match for a task of weight total
// (an Omission's reason), or "" when it is one; parts names what of the
// document was matched.
func (m match) miss(total float64, parts string) string {
	switch {
	case m.weight == 0:
		return ReasonNoMatch + ": no word of the task (stemmed, stop words left out) occurs in its " + parts
	case !m.relevant(total):
		quoted := make([]string, len(m.terms))
		for j, t := range m.terms {
			quoted[j] = strconv.Quote(t)
		}
		return fmt.Sprintf("%s: it shares only %s with the task, %.0f%% of the weight of the task's words (%.2f of %.2f), where %.0f%% or a weight of %.1f is needed; BM25 score %.3f",
			ReasonNoMatch, strings.Join(quoted, ", "), 100*m.weight/total, m.weight, total, 100*RelevantShare, RelevantWeight, m.score)
	}
	return ""
}

// analyze returns the distinct terms of text in order of first occurrence.
func analyzeTerms(a analysis.Analyzer, text string) []queryTerm {
	var out []queryTerm
	seen := map[string]bool{}
	for _, t := range a.Analyze([]byte(text)) {
		term := string(t.Term)
		if seen[term] {
			continue
		}
		seen[term] = true
		out = append(out, queryTerm{term: term, surface: text[t.Start:t.End]})
	}
	return out
}

// newDoc counts the analysed terms of the parts of one file.
func newDoc(a analysis.Analyzer, parts ...string) doc {
	d := doc{tf: map[string]int{}}
	for _, p := range parts {
		for _, t := range a.Analyze([]byte(p)) {
			d.tf[string(t.Term)]++
			d.length++
		}
	}
	return d
}

// rank scores every doc against the task's terms with Okapi BM25 and
// returns one match per doc and the task's total weight: the summed IDF of
// its terms that any document holds. IDF is Lucene's (always positive);
// with st it is computed over the store's chunks (st.DF[i] is the
// document frequency of q[i]), else over docs themselves. A term only docs
// hold (a file the index has not applied yet) counts as held by as many
// documents as docs hold it. A term nothing holds weighs nothing, unless
// unseen is set: then it adds the IDF of a term one document holds to the
// total (a prompt's words the memory lacks say it is about something else).
// Length is normalized over docs, the files being ranked. A doc no term
// occurs in scores 0. Each term counts once however often the task repeats
// it.
func rank(ctx context.Context, q []queryTerm, docs []doc, st *lexical.TermStats, unseen bool) ([]match, float64, error) {
	out := make([]match, len(docs))
	if len(docs) == 0 || len(q) == 0 {
		return out, 0, nil
	}
	length := 0
	for _, d := range docs {
		length += d.length
	}
	avg := max(float64(length)/float64(len(docs)), 1)
	n := float64(len(docs))
	if st != nil {
		n = float64(st.Docs)
	}
	total := 0.0
	for i, qt := range q {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		df := 0.0
		for _, d := range docs {
			if d.tf[qt.term] > 0 {
				df++
			}
		}
		if st != nil {
			df = max(df, float64(st.DF[i]))
		}
		if df == 0 {
			if unseen {
				total += math.Log(1 + (max(n, 1)-0.5)/1.5)
			}
			continue
		}
		idf := math.Log(1 + (max(n, df)-df+0.5)/(df+0.5))
		total += idf
		for j, d := range docs {
			tf := float64(d.tf[qt.term])
			if tf == 0 {
				continue
			}
			norm := bm25K1 * (1 - bm25B + bm25B*float64(d.length)/avg)
			out[j].score += idf * tf * (bm25K1 + 1) / (tf + norm)
			out[j].weight += idf
			out[j].terms = append(out[j].terms, qt.surface)
		}
	}
	return out, total, nil
}

// byScore orders indexes of matches best first, then by key.
func byScore(ms []match, key func(int) string) []int {
	idx := make([]int, len(ms))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(ms[b].score, ms[a].score), cmp.Compare(key(a), key(b)))
	})
	return idx
}

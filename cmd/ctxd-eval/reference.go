package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/ctxd/ctxd/internal/beir"
)

// referenceMode names the reference BM25's row in the report.
const referenceMode = "reference"

// Anserini's BM25 parameters (its defaults for the BEIR and TREC baselines).
const (
	referenceK1 = 0.9
	referenceB  = 0.4
)

// analyzerEN returns the analyzer index/lexical maps to its text, heading
// and title fields (Bleve's "en": possessives, lower case, English stop
// words, Porter stemmer), so the reference sees the terms ctxd indexes.
func analyzerEN() (analysis.Analyzer, error) {
	a, err := registry.NewCache().AnalyzerNamed(en.AnalyzerName)
	if err != nil {
		return nil, fmt.Errorf("analyzer %s: %w", en.AnalyzerName, err)
	}
	return a, nil
}

// docContent is what a document is written as, the way a user would write
// it: markdown with the title as an H1, a blank line, then the text, when
// the document has a title; its text as plain text otherwise. A text that
// already opens with the title's H1 (a markdown page such as tldr's) is
// written as it is: a second copy of the title would count its terms twice.
// An empty content means the document is not written.
func docContent(d beir.Doc) (content, mime string) {
	// An H1 is one line: collapse any whitespace run in the title.
	if title := strings.Join(strings.Fields(d.Title), " "); title != "" {
		if opensWithH1(d.Text, title) {
			return d.Text, "text/markdown; charset=utf-8"
		}
		return "# " + title + "\n\n" + d.Text, "text/markdown; charset=utf-8"
	}
	if strings.TrimSpace(d.Text) == "" {
		return "", ""
	}
	return d.Text, "text/plain; charset=utf-8"
}

// opensWithH1 reports whether text's first non-blank line is an ATX H1
// ("# ", optionally closed by "#"s) whose heading, whitespace collapsed, is
// title.
func opensWithH1(text, title string) bool {
	line, _, _ := strings.Cut(strings.TrimLeft(text, " \t\r\n"), "\n")
	rest, ok := strings.CutPrefix(line, "#")
	if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
		return false
	}
	rest = strings.TrimSpace(rest)
	// A closing sequence needs a space before it: "# C#" is titled "C#".
	if t := strings.TrimRight(rest, "#"); t != rest && (t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t")) {
		rest = t
	}
	return strings.Join(strings.Fields(rest), " ") == title
}

// posting is one document holding a term, and how often.
type posting struct {
	doc int // index into reference.ids
	tf  int
}

// reference is a textbook whole-document BM25 (Robertson's Okapi BM25 with
// Lucene's idf and Anserini's k1 and b), written for the eval and
// independent of Bleve's scoring, so ctxd's bm25 mode has a baseline that
// every user assumes it at least matches. For a query with distinct terms t
// occurring qtf(t) times in it, document d of length |d| (its analysed
// terms, stop words excluded) scores
//
//	sum_t qtf(t) * idf(t) * tf(t,d)*(k1+1) / (tf(t,d) + k1*(1 - b + b*|d|/avgdl))
//	idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//
// over the N documents, avgdl their mean length. Weighting a term by its
// count in the query is what Anserini's bag-of-words query does. Unlike
// Lucene, lengths are exact rather than quantised to one byte, and the
// (k1+1) factor Lucene 8 dropped is kept; neither changes much (the factor
// changes no ranking).
type reference struct {
	analyzer analysis.Analyzer
	ids      []string
	docLen   []int
	avgdl    float64
	postings map[string][]posting
}

// newReference indexes the documents, ids[i] holding contents[i].
func newReference(a analysis.Analyzer, ids, contents []string) *reference {
	r := &reference{analyzer: a, ids: ids, docLen: make([]int, len(ids)), postings: map[string][]posting{}}
	var total int
	for i, c := range contents {
		tf := map[string]int{}
		for _, t := range a.Analyze([]byte(c)) {
			tf[string(t.Term)]++
			r.docLen[i]++
		}
		total += r.docLen[i]
		for term, n := range tf {
			r.postings[term] = append(r.postings[term], posting{doc: i, tf: n})
		}
	}
	if len(ids) > 0 {
		r.avgdl = float64(total) / float64(len(ids))
	}
	return r
}

// scoredDoc is one document's reference score for a query.
type scoredDoc struct {
	id    string
	score float64
}

// search returns the documents holding any query term, best first, ties
// broken by id as Anserini does, at most k of them.
func (r *reference) search(q string, k int) []scoredDoc {
	qtf := map[string]int{}
	for _, t := range r.analyzer.Analyze([]byte(q)) {
		qtf[string(t.Term)]++
	}
	n := float64(len(r.ids))
	scores := map[int]float64{}
	for term, count := range qtf {
		ps := r.postings[term]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := referenceK1 * (1 - referenceB + referenceB*float64(r.docLen[p.doc])/r.avgdl)
			scores[p.doc] += float64(count) * idf * tf * (referenceK1 + 1) / (tf + norm)
		}
	}
	out := make([]scoredDoc, 0, len(scores))
	for doc, s := range scores {
		out = append(out, scoredDoc{id: r.ids[doc], score: s})
	}
	slices.SortFunc(out, func(a, b scoredDoc) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return out[:min(k, len(out))]
}

// evalReference scores every judged query with the reference BM25 over the
// documents ingest writes, the same way evalMode scores a search mode.
func evalReference(a analysis.Analyzer, docs []beir.Doc, judged []judgedQuery) modeResult {
	var ids, contents []string
	for _, d := range docs {
		if c, _ := docContent(d); c != "" {
			ids, contents = append(ids, d.ID), append(contents, c)
		}
	}
	r := newReference(a, ids, contents)
	var ndcgs, recalls []float64
	for _, q := range judged {
		hits := r.search(q.text, recallCutoff)
		ranked := make([]string, len(hits))
		for i, h := range hits {
			ranked[i] = h.id
		}
		ndcgs = append(ndcgs, NDCG(ranked, q.grades, ndcgCutoff))
		recalls = append(recalls, Recall(ranked, q.grades, recallCutoff))
	}
	return modeResult{mode: referenceMode, ndcg: Mean(ndcgs), recall: Mean(recalls), p50ms: math.NaN()}
}

package lexical

import (
	"fmt"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
)

// The index keeps no term vectors (they cost a quarter of its size and
// every BM25 candidate's positions at query time): a result's match spans
// are found by analysing its text again, which for the few results shown
// costs microseconds.

// Terms returns the distinct terms q analyses to under SearchBM25's
// English analysis, for MatchSpans.
func (x *Index) Terms(q string) (map[string]bool, error) {
	an, err := x.english()
	if err != nil {
		return nil, fmt.Errorf("terms: %w", err)
	}
	out := map[string]bool{}
	for _, t := range an.Analyze([]byte(q)) {
		out[string(t.Term)] = true
	}
	return out, nil
}

// MatchSpans returns, in order, the byte spans [start, end) of the words of
// text that analyse to one of terms (from Terms): where SearchBM25 matched.
// Words are runs of letters, digits and '_' here, which differs from the
// index's tokenizer only around punctuation inside tokens ("3.14").
func (x *Index) MatchSpans(text string, terms map[string]bool) ([][2]int, error) {
	ps, err := x.TermPositions(text, terms)
	if err != nil {
		return nil, fmt.Errorf("match spans: %w", err)
	}
	var out [][2]int
	for _, p := range ps {
		out = append(out, [2]int{p.Start, p.End})
	}
	return out, nil
}

// TermPosition is one occurrence of a term in a text (TermPositions).
type TermPosition struct {
	Term string
	// Word is the ordinal of the word the term occurs in, counting every
	// word of the text from 0, stop words too: the distance between two
	// positions is how many words apart they stand.
	Word       int
	Start, End int // the byte span [Start, End) in the text
}

// TermPositions returns, in order, the occurrences in text of the words
// that analyse to one of terms (from Terms): where SearchBM25 matched, with
// the same stemming, and how many words into text each stands. Words are as
// in MatchSpans. The cost grows with text's length: callers bound it.
func (x *Index) TermPositions(text string, terms map[string]bool) ([]TermPosition, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	var out []TermPosition
	err := NewTermSet(terms).Positions(text, func(p TermPosition) { out = append(out, p) })
	if err != nil {
		return nil, fmt.Errorf("term positions: %w", err)
	}
	return out, nil
}

// matchPrefixRunes is how many leading runes MatchSpans compares.
const matchPrefixRunes = 3

// runePrefix returns the first n runes of s.
func runePrefix(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// english returns the index's English analyzer, SearchBM25's.
func (x *Index) english() (analysis.Analyzer, error) {
	bi, done, err := x.get()
	if err != nil {
		return nil, err
	}
	defer done()
	an := bi.Mapping().AnalyzerNamed(en.AnalyzerName)
	if an == nil {
		return nil, fmt.Errorf("analyzer %s missing from mapping", en.AnalyzerName)
	}
	return an, nil
}

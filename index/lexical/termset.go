package lexical

import (
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
)

// english is the English analyzer of the index mapping (buildMapping), the
// one SearchBM25 analyses queries with, for callers without an open Index.
var english = sync.OnceValues(func() (analysis.Analyzer, error) {
	m, err := buildMapping()
	if err != nil {
		return nil, err
	}
	an := m.AnalyzerNamed(en.AnalyzerName)
	if an == nil {
		return nil, fmt.Errorf("analyzer %s missing from mapping", en.AnalyzerName)
	}
	return an, nil
})

// QueryTerms returns the distinct terms q analyses to, in their order of
// first occurrence, exactly as SearchBM25 analyses a query: lower case,
// English stop words dropped, Porter stemmed.
func QueryTerms(q string) ([]string, error) {
	an, err := english()
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range an.Analyze([]byte(q)) {
		if s := string(t.Term); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out, nil
}

// TermSet is a set of analysed terms (QueryTerms) compiled for finding
// which of them a text holds. Only the words of a text that begin like a
// term of the set are analysed: the Porter stemmer rewrites endings, so a
// word and its stem share their first runes (up to the stem's length:
// "ties" is "ti"). A TermSet is immutable and safe for concurrent use.
type TermSet struct {
	terms    map[string]bool
	prefixes map[string]bool
	lens     []int // the prefix lengths in runes that occur
}

// NewTermSet compiles terms.
func NewTermSet(terms map[string]bool) *TermSet {
	s := &TermSet{terms: terms, prefixes: map[string]bool{}}
	for t := range terms {
		p := runePrefix(t, matchPrefixRunes)
		s.prefixes[p] = true
		if n := utf8.RuneCountInString(p); !slices.Contains(s.lens, n) {
			s.lens = append(s.lens, n)
		}
	}
	return s
}

// Len is the number of terms in the set.
func (s *TermSet) Len() int { return len(s.terms) }

// Positions calls fn, in order, with each occurrence in text of a word
// that analyses to a term of the set, with the ordinal of its word (every
// word counts, stop words too). Words are runs of letters, digits and '_',
// which differs from the index's tokenizer only around punctuation inside
// tokens ("3.14"). The cost grows with text's length: callers bound it.
func (s *TermSet) Positions(text string, fn func(TermPosition)) error {
	if len(s.terms) == 0 {
		return nil
	}
	an, err := english()
	if err != nil {
		return err
	}
	word := 0
	var lower []byte
	for start, end := nextWord(text, 0); start < len(text); start, end = nextWord(text, end) {
		w := text[start:end]
		for _, n := range s.lens {
			p := runePrefix(w, n)
			lower = appendLower(lower[:0], []byte(p))
			if !s.prefixes[string(lower)] {
				continue
			}
			for _, t := range an.Analyze([]byte(w)) {
				if s.terms[string(t.Term)] {
					fn(TermPosition{Term: string(t.Term), Word: word, Start: start + t.Start, End: start + t.End})
				}
			}
			break
		}
		word++
	}
	return nil
}

// nextWord returns the bounds of the first word of text at or after from,
// or len(text) for both when there is none.
func nextWord(text string, from int) (start, end int) {
	start = from
	for start < len(text) {
		r, sz := utf8.DecodeRuneInString(text[start:])
		if isWordRune(r) {
			break
		}
		start += sz
	}
	end = start
	for end < len(text) {
		r, sz := utf8.DecodeRuneInString(text[end:])
		if !isWordRune(r) {
			break
		}
		end += sz
	}
	return start, end
}

// Find adds to found the terms of the set that text holds.
func (s *TermSet) Find(text string, found map[string]bool) error {
	return s.Positions(text, func(p TermPosition) { found[p.Term] = true })
}

// maxFinderWords bounds the words a Finder remembers.
const maxFinderWords = 1 << 16

// Finder finds the terms of a TermSet in texts, remembering which of them
// each word analyses to: the words of a corpus repeat, and analysing one
// costs far more than looking it up. It is not safe for concurrent use.
type Finder struct {
	set   *TermSet
	words map[string][]string // lower-cased word -> the set's terms it holds
	lower []byte
}

// Finder returns a Finder of s's terms.
func (s *TermSet) Finder() *Finder { return &Finder{set: s, words: map[string][]string{}} }

// Find adds to found the terms of the set that text holds, as Positions
// finds them.
func (f *Finder) Find(text string, found map[string]bool) error {
	s := f.set
	if len(s.terms) == 0 {
		return nil
	}
	for start, end := nextWord(text, 0); start < len(text); start, end = nextWord(text, end) {
		w := text[start:end]
		f.lower = appendLower(f.lower[:0], []byte(w))
		// One lookup for a word seen before, the most common case; a new
		// word is analysed only when it begins like some term.
		terms, ok := f.words[string(f.lower)]
		if !ok {
			terms = []string{} // remembered even when empty
			if slices.ContainsFunc(s.lens, func(n int) bool { return s.prefixes[string(runePrefixBytes(f.lower, n))] }) {
				an, err := english()
				if err != nil {
					return err
				}
				for _, t := range an.Analyze([]byte(w)) {
					if s.terms[string(t.Term)] {
						terms = append(terms, string(t.Term))
					}
				}
			}
			if len(f.words) >= maxFinderWords {
				clear(f.words)
			}
			f.words[string(f.lower)] = terms
		}
		for _, t := range terms {
			found[t] = true
		}
	}
	return nil
}

// runePrefixBytes returns the first n runes of b.
func runePrefixBytes(b []byte, n int) []byte {
	for i := 0; i < len(b); n-- {
		if n == 0 {
			return b[:i]
		}
		_, sz := utf8.DecodeRune(b[i:])
		i += sz
	}
	return b
}

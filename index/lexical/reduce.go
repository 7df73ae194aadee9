package lexical

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	index "github.com/blevesearch/bleve_index_api"
)

// KeyTerms reduces a long query to the words worth searching for. A query
// is long when it holds more than max terms (after the English analysis of
// the text field: lower-cased, stemmed, stop words dropped; repeats count)
// or more than 16 bytes per term allowed. Of a long query KeyTerms returns
// its distinct terms, and when there are more than max of them the max that
// the fewest indexed chunks hold in their text (the highest IDF), terms the
// index lacks last and ties broken by how often q repeats them, then by
// position. Each term appears as the word of q that first produced it, in
// q's order, as often as q holds the term up to maxTermRepeats, joined by
// spaces: BM25 weights a term by its count in the query, and dropping the
// repeats of a long question cost cacm 1 point of nDCG@10 against the
// reference BM25. Words over maxTermBytes (hashes, encoded blobs) are left
// out. A short query comes back as it is, with ok=false. A pasted page thus
// searches by its distinctive words, and a query of any length costs at
// most max term lookups in every leg (repeats cost none: both legs look up
// a term once).
//
// The cost is one analysis of q and one dictionary lookup per distinct
// term; KeyTerms stops with ctx's error once ctx ends.
func (x *Index) KeyTerms(ctx context.Context, q string, max int) (words string, ok bool, err error) {
	bi, done, err := x.get()
	if err != nil {
		return "", false, err
	}
	defer done()
	an := bi.Mapping().AnalyzerNamed(en.AnalyzerName)
	if an == nil {
		return "", false, fmt.Errorf("key terms: analyzer %s missing", en.AnalyzerName)
	}
	var terms []*term
	byText := map[string]*term{}
	tokens := 0
	// A megabyte takes Bleve's analyser about 100 ms: analyse pieces, cut
	// at whitespace, and check ctx between them.
	for start := 0; start < len(q); {
		if err := ctx.Err(); err != nil {
			return "", false, err
		}
		end := pieceEnd(q, start)
		for _, t := range an.Analyze([]byte(q[start:end])) {
			tokens++
			if t.End-t.Start > maxTermBytes {
				continue
			}
			if tm := byText[string(t.Term)]; tm != nil {
				tm.repeat++
				continue
			}
			tm := &term{text: string(t.Term), first: tokens, surface: q[start+t.Start : start+t.End]}
			byText[tm.text] = tm
			terms = append(terms, tm)
		}
		start = end
	}
	if tokens <= max && len(q) <= 16*max {
		return q, false, nil
	}
	if len(terms) <= max {
		return joinSurfaces(terms), true, nil
	}
	adv, err := bi.Advanced()
	if err != nil {
		return "", false, fmt.Errorf("key terms: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return "", false, fmt.Errorf("key terms: open reader: %w", err)
	}
	defer r.Close()
	for i, tm := range terms {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return "", false, err
			}
		}
		if tm.df, err = docFreq(ctx, r, fieldText, tm.text); err != nil {
			return "", false, fmt.Errorf("key terms: %w", err)
		}
	}
	slices.SortFunc(terms, func(a, b *term) int {
		if (a.df == 0) != (b.df == 0) {
			if a.df == 0 {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.df, b.df), cmp.Compare(b.repeat, a.repeat), cmp.Compare(a.first, b.first))
	})
	terms = terms[:max]
	slices.SortFunc(terms, func(a, b *term) int { return cmp.Compare(a.first, b.first) })
	return joinSurfaces(terms), true, nil
}

// analyzePiece is about how many bytes of a query KeyTerms analyses at once.
const analyzePiece = 64 << 10

// pieceEnd returns where the piece of q that starts at start ends: after
// the last whitespace within analyzePiece bytes, else at a rune boundary.
func pieceEnd(q string, start int) int {
	end := start + analyzePiece
	if end >= len(q) {
		return len(q)
	}
	if i := strings.LastIndexAny(q[start:end], " \t\n\r"); i > 0 {
		return start + i + 1
	}
	for end > start+1 && !utf8.RuneStart(q[end]) {
		end--
	}
	return end
}

// maxTermRepeats bounds how often a reduced query repeats a term. Twice
// keeps the weight of a question's subject (cacm nDCG@10 0.4686, against
// 0.4649 with 4 and 0.4498 with 1) without letting the filler words a
// pasted page repeats outweigh its distinctive ones.
const maxTermRepeats = 2

// maxTermBytes bounds a word KeyTerms keeps: longer ones are ids, hashes or
// encoded data, and each would cost the substring leg up to MaxSubstringWords terms.
const maxTermBytes = 64

// term is one distinct analysed term of a query.
type term struct {
	text          string
	first, repeat int    // index of its first token; further occurrences
	surface       string // the word of the query that first produced it
	df            uint64
}

// joinSurfaces joins the surface words of terms with spaces, each as often
// as the query holds it, up to maxTermRepeats.
func joinSurfaces(terms []*term) string {
	var out []string
	for _, tm := range terms {
		for range min(1+tm.repeat, maxTermRepeats) {
			out = append(out, tm.surface)
		}
	}
	return strings.Join(out, " ")
}

// docFreq returns the number of documents with term in field (live ones,
// as the reader sees them).
func docFreq(ctx context.Context, r index.IndexReader, field, term string) (uint64, error) {
	tfr, err := r.TermFieldReader(ctx, []byte(term), field, false, false, false)
	if err != nil {
		return 0, fmt.Errorf("term %s:%q: %w", field, term, err)
	}
	n := tfr.Count()
	if err := tfr.Close(); err != nil {
		return 0, fmt.Errorf("term %s:%q: %w", field, term, err)
	}
	return n, nil
}

package lexical

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
)

// BM25 parameters of SearchBM25: Anserini's defaults, the textbook
// baseline the eval compares against.
const (
	BM25K1 = 0.9
	BM25B  = 0.4
)

// bm25fQuery scores documents by BM25F (Robertson and Zaragoza) over the
// text, heading and title fields: for each query term, each field's
// frequency is normalised by the field's length against that field's mean
// length and weighted by its boost, and the sum goes through one
// saturation:
//
//	tf~(t, d) = Σ_f boost_f · freq(t, f, d) / (1 − b + b · len(f, d) / avglen(f))
//	score(d)  = Σ_t qtf(t) · idf(t) · tf~ · (k1 + 1) / (tf~ + k1)
//	idf(t)    = ln(1 + (N − df + 0.5) / (df + 0.5))
//
// with df the most documents holding t in any one field (a lower bound of
// the documents holding it anywhere). With one field it is textbook BM25.
// Unlike Bleve's own scoring there is no coordination factor, no query
// norm, no squared idf and no square root on the frequency, and avglen is
// the mean token count (from fieldLengths), not a segment-dependent
// estimate. A title repeated on every chunk of an item, and also in its
// text, raises a term's frequency before saturation instead of adding a
// second saturated score, and is normalised against other titles rather
// than inflating the text's length.
type bm25fQuery struct {
	terms []string // analysed query terms, repeated as often as in the query
	x     *Index   // caches the mean lengths
	gen   uint64   // x.gen when the search began
}

// meanLengthsAt is the mean field lengths as of Index.gen gen.
type meanLengthsAt struct {
	gen uint64
	avg map[string]float64
}

// bm25fFields are the fields SearchBM25 scores and their boosts.
var bm25fFields = [...]struct {
	name  string
	boost float64
}{{fieldText, TextBoost}, {fieldHeading, HeadingBoost}, {fieldTitle, TitleBoost}}

func (q *bm25fQuery) Searcher(ctx context.Context, r index.IndexReader, _ mapping.IndexMapping, opts search.SearcherOptions) (search.Searcher, error) {
	n, err := r.DocCount()
	if err != nil {
		return nil, err
	}
	var avg map[string]float64
	if c := q.x.means.Load(); c != nil && c.gen == q.gen {
		avg = c.avg
	} else {
		if avg, err = meanLengths(ctx, r, n); err != nil {
			return nil, err
		}
		// r may already hold a later Apply, whose generation bump then
		// makes the next search recompute.
		q.x.means.Store(&meanLengthsAt{gen: q.gen, avg: avg})
	}
	s := &bm25fSearcher{vectors: opts.IncludeTermVectors}
	for i, f := range bm25fFields {
		s.norm[i] = fieldNorm{boost: f.boost, avg: avg[f.name]}
		if s.norm[i].avg == 0 { // no document holds the field: it matches nothing
			s.norm[i].avg = 1
		}
	}
	qtf := map[string]float64{}
	var order []string
	for _, t := range q.terms {
		if qtf[t] == 0 {
			order = append(order, t)
		}
		qtf[t]++
	}
	for ti, t := range order {
		var df uint64
		for fi, f := range bm25fFields {
			tfr, err := r.TermFieldReader(ctx, []byte(t), f.name, true, true, opts.IncludeTermVectors)
			if err != nil {
				_ = s.Close()
				return nil, err
			}
			df = max(df, tfr.Count())
			s.posts = append(s.posts, &posting{tfr: tfr, term: ti, field: fi})
		}
		idf := math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
		s.terms = append(s.terms, bm25fTerm{text: t, weight: qtf[t] * idf})
	}
	s.tf = make([]float64, len(s.terms))
	for _, p := range s.posts {
		if p.cur, err = p.tfr.Next(nil); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

// posting is one (term, field) postings list being walked.
type posting struct {
	tfr         index.TermFieldReader
	cur         *index.TermFieldDoc // nil once exhausted
	term, field int
}

type bm25fTerm struct {
	text   string
	weight float64 // query frequency × idf
}

type fieldNorm struct{ boost, avg float64 }

// bm25fSearcher walks the postings of every (term, field) in document
// order and scores each document holding any of them.
type bm25fSearcher struct {
	posts   []*posting
	terms   []bm25fTerm
	norm    [len(bm25fFields)]fieldNorm
	tf      []float64 // scratch: tf~ per term of the current document
	vectors bool
}

func (s *bm25fSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	var id index.IndexInternalID
	for _, p := range s.posts {
		if p.cur != nil && (id == nil || p.cur.ID.Compare(id) < 0) {
			id = p.cur.ID
		}
	}
	if id == nil {
		return nil, nil
	}
	dm := ctx.DocumentMatchPool.Get()
	dm.IndexInternalID = append(dm.IndexInternalID[:0], id...)
	clear(s.tf)
	for _, p := range s.posts {
		if p.cur == nil || !p.cur.ID.Equals(dm.IndexInternalID) {
			continue
		}
		f := s.norm[p.field]
		length := 1.0
		if p.cur.Norm > 0 { // Bleve's norm is 1/sqrt(token count)
			length = 1 / (p.cur.Norm * p.cur.Norm)
		}
		s.tf[p.term] += f.boost * float64(p.cur.Freq) / (1 - BM25B + BM25B*length/f.avg)
		if s.vectors {
			for _, v := range p.cur.Vectors {
				dm.FieldTermLocations = append(dm.FieldTermLocations, search.FieldTermLocation{
					Field: v.Field, Term: s.terms[p.term].text,
					Location: search.Location{Pos: v.Pos, Start: v.Start, End: v.End},
				})
			}
		}
		var err error
		if p.cur, err = p.tfr.Next(p.cur.Reset()); err != nil {
			return nil, err
		}
	}
	for i, tf := range s.tf {
		if tf > 0 {
			dm.Score += s.terms[i].weight * tf * (BM25K1 + 1) / (tf + BM25K1)
		}
	}
	return dm, nil
}

func (s *bm25fSearcher) Advance(ctx *search.SearchContext, id index.IndexInternalID) (*search.DocumentMatch, error) {
	for _, p := range s.posts {
		if p.cur != nil && p.cur.ID.Compare(id) < 0 {
			var err error
			if p.cur, err = p.tfr.Advance(id, p.cur.Reset()); err != nil {
				return nil, err
			}
		}
	}
	return s.Next(ctx)
}

func (s *bm25fSearcher) Close() error {
	var first error
	for _, p := range s.posts {
		if err := p.tfr.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Weight and SetQueryNorm serve Bleve's query normalisation, which BM25F
// does not have.
func (s *bm25fSearcher) Weight() float64            { return 1 }
func (s *bm25fSearcher) SetQueryNorm(float64)       {}
func (s *bm25fSearcher) Min() int                   { return 0 }
func (s *bm25fSearcher) DocumentMatchPoolSize() int { return 1 }

func (s *bm25fSearcher) Size() int {
	n := 0
	for _, p := range s.posts {
		n += p.tfr.Size()
	}
	return n
}

func (s *bm25fSearcher) Count() uint64 {
	var n uint64
	for _, p := range s.posts {
		n += p.tfr.Count()
	}
	return n
}

// lengthTerms returns the fieldLengths terms of d: the token count of each
// scored field under an, as "field:count".
func lengthTerms(an analysis.Analyzer, d *bleveDoc) []string {
	return []string{
		fieldText + ":" + strconv.Itoa(len(an.Analyze([]byte(d.Text)))),
		fieldHeading + ":" + strconv.Itoa(len(an.Analyze([]byte(d.Heading)))),
		fieldTitle + ":" + strconv.Itoa(len(an.Analyze([]byte(d.Title)))),
	}
}

// meanLengths returns the mean token count of each scored field over the
// n live documents, from the fieldLengths terms every document carries
// ("text:42"). Each term's document count comes from its postings, which
// skip deleted documents: the dictionary's own counts fall far short in an
// index of several segments.
func meanLengths(ctx context.Context, r index.IndexReader, n uint64) (map[string]float64, error) {
	out := map[string]float64{}
	if n == 0 {
		return out, nil
	}
	d, err := r.FieldDict(fieldLengths)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	for {
		e, err := d.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
		f, l, ok := strings.Cut(e.Term, ":")
		v, err := strconv.Atoi(l)
		if !ok || err != nil {
			return nil, fmt.Errorf("bm25: bad length term %q", e.Term)
		}
		tfr, err := r.TermFieldReader(ctx, []byte(e.Term), fieldLengths, false, false, false)
		if err != nil {
			return nil, err
		}
		out[f] += float64(v) * float64(tfr.Count())
		if err := tfr.Close(); err != nil {
			return nil, err
		}
	}
	for f := range out {
		out[f] /= float64(n)
	}
	return out, nil
}

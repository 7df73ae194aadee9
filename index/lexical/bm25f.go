package lexical

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/document"
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
// the mean token count (the lengthSums Apply keeps, over the snapshot's
// live documents), not a segment-dependent estimate. A title repeated on
// every chunk of an item, and also in its text, raises a term's frequency
// before saturation instead of adding a second saturated score, and is
// normalised against other titles rather than inflating the text's length.
type bm25fQuery struct {
	terms []string // analysed query terms, repeated as often as in the query
	// topK, when set, is how many hits the search keeps and says that the
	// query is all Bleve scores (no filter joins it), so the searcher may
	// skip what cannot reach them (see bm25fSearcher.prune).
	topK int
}

// bm25fFields are the fields SearchBM25 scores and their boosts.
// bm25fField is a scored field and its weight.
type bm25fField struct {
	name  string
	boost float64
}

var bm25fFields = [...]bm25fField{{fieldText, TextBoost}, {fieldHeading, HeadingBoost}, {fieldTitle, TitleBoost}}

func (q *bm25fQuery) Searcher(ctx context.Context, r index.IndexReader, _ mapping.IndexMapping, opts search.SearcherOptions) (search.Searcher, error) {
	n, err := r.DocCount()
	if err != nil {
		return nil, err
	}
	// The sums were written by the same batch as the documents r sees.
	raw, err := r.GetInternal(keyFieldLengths)
	if err != nil {
		return nil, err
	}
	sums, err := decodeLengthSums(raw)
	if err != nil {
		return nil, err
	}
	s := &bm25fSearcher{topK: q.topK}
	for i, f := range bm25fFields {
		s.norm[i] = fieldNorm{boost: f.boost, avg: 1}
		if sums[i] > 0 { // else no document holds the field: it matches nothing
			s.norm[i].avg = float64(sums[i]) / float64(n)
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
			tfr, err := r.TermFieldReader(ctx, []byte(t), f.name, true, true, false)
			if err != nil {
				_ = s.Close()
				return nil, err
			}
			df = max(df, tfr.Count())
			s.posts = append(s.posts, &posting{tfr: tfr, term: ti, field: fi})
		}
		idf := math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
		s.weights = append(s.weights, qtf[t]*idf)
	}
	s.tf = make([]float64, len(s.weights))
	for _, p := range s.posts {
		if p.cur, err = p.tfr.Next(nil); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	s.byBound = make([]int, len(s.weights))
	for i := range s.byBound {
		s.byBound[i] = i
	}
	slices.SortStableFunc(s.byBound, func(a, b int) int { return cmp.Compare(s.bound(a), s.bound(b)) })
	s.essential = make([]bool, len(s.weights))
	for i := range s.essential {
		s.essential[i] = true
	}
	return s, nil
}

// posting is one (term, field) postings list being walked.
type posting struct {
	tfr         index.TermFieldReader
	cur         *index.TermFieldDoc // nil once exhausted
	term, field int
}

type fieldNorm struct{ boost, avg float64 }

// bm25fSearcher walks the postings of every (term, field) in document
// order and scores each document holding any of them.
//
// With topK set it prunes as MaxScore does (Turtle and Flood): once topK
// documents were returned, the lowest of their scores is a floor the
// collector's k-th best can only rise above; the terms whose score bounds
// (idf × (k1 + 1), BM25's saturation) together stay under it are not
// essential, as a document holding only those cannot reach the top k. Only
// the postings of essential terms are walked; the others are advanced to
// each candidate to score it in full, and a candidate scoring under the
// floor is not returned. Every document that can enter the top k, ties
// included, is still returned, so the hits are those without pruning; a
// disjunction of common words ("born in march") no longer scores every
// document holding one of them.
type bm25fSearcher struct {
	posts   []*posting
	weights []float64 // per term: query frequency × idf
	norm    [len(bm25fFields)]fieldNorm
	tf      []float64 // scratch: tf~ per term of the current document

	topK      int
	top       []float64 // min-heap of the best topK scores returned
	byBound   []int     // terms by ascending score bound
	essential []bool    // per term: its postings are walked
	id        index.IndexInternalID
	scored    int // candidates scored, which pruning keeps low
}

// bound is the most term i can add to a score, with room for rounding.
func (s *bm25fSearcher) bound(i int) float64 {
	return s.weights[i] * (BM25K1 + 1) * (1 + 1e-9)
}

// floor is the score a document must reach to be returned: the lowest of
// the best topK returned so far, or none (-1) before topK were.
func (s *bm25fSearcher) floor() float64 {
	if s.topK == 0 || len(s.top) < s.topK {
		return -1
	}
	return s.top[0]
}

// prune records a returned score and marks the terms that are no longer
// essential: the most, lowest bounds first, whose bounds sum under the floor.
func (s *bm25fSearcher) prune(score float64) {
	if s.topK == 0 {
		return
	}
	switch {
	case len(s.top) < s.topK:
		s.top = append(s.top, score)
		for i := len(s.top) - 1; i > 0 && s.top[(i-1)/2] > s.top[i]; i = (i - 1) / 2 {
			s.top[i], s.top[(i-1)/2] = s.top[(i-1)/2], s.top[i]
		}
	case score > s.top[0]:
		s.top[0] = score
		for i := 0; ; {
			c := 2*i + 1
			if c+1 < len(s.top) && s.top[c+1] < s.top[c] {
				c++
			}
			if c >= len(s.top) || s.top[i] <= s.top[c] {
				break
			}
			s.top[i], s.top[c] = s.top[c], s.top[i]
			i = c
		}
	default:
		return
	}
	floor, sum := s.floor(), 0.0
	for _, t := range s.byBound {
		sum += s.bound(t)
		s.essential[t] = sum >= floor
	}
}

func (s *bm25fSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	for {
		score, ok, err := s.nextCandidate()
		if err != nil || !ok {
			return nil, err
		}
		if score < s.floor() {
			continue // cannot reach the top k
		}
		s.prune(score)
		dm := ctx.DocumentMatchPool.Get()
		dm.IndexInternalID = append(dm.IndexInternalID[:0], s.id...)
		dm.Score = score
		return dm, nil
	}
}

// nextCandidate scores the next document an essential term's postings
// hold, leaving its id in s.id; ok is false when there is none.
func (s *bm25fSearcher) nextCandidate() (score float64, ok bool, err error) {
	var id index.IndexInternalID
	for _, p := range s.posts {
		if p.cur != nil && s.essential[p.term] && (id == nil || p.cur.ID.Compare(id) < 0) {
			id = p.cur.ID
		}
	}
	if id == nil {
		return 0, false, nil
	}
	s.id = append(s.id[:0], id...)
	s.scored++
	clear(s.tf)
	for _, p := range s.posts {
		if p.cur != nil && !s.essential[p.term] && p.cur.ID.Compare(s.id) < 0 {
			if p.cur, err = p.tfr.Advance(s.id, p.cur.Reset()); err != nil {
				return 0, false, err
			}
		}
		if p.cur == nil || !p.cur.ID.Equals(s.id) {
			continue
		}
		f := s.norm[p.field]
		length := 1.0
		if p.cur.Norm > 0 { // Bleve's norm is 1/sqrt(token count)
			length = 1 / (p.cur.Norm * p.cur.Norm)
		}
		s.tf[p.term] += f.boost * float64(p.cur.Freq) / (1 - BM25B + BM25B*length/f.avg)
		if p.cur, err = p.tfr.Next(p.cur.Reset()); err != nil {
			return 0, false, err
		}
	}
	for i, tf := range s.tf {
		if tf > 0 {
			score += s.weights[i] * tf * (BM25K1 + 1) / (tf + BM25K1)
		}
	}
	return score, true, nil
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

// keyFieldLengths is the internal key of the lengthSums of the live
// documents, written by every Apply in its batch.
var keyFieldLengths = []byte("ctxd/field_lengths")

// lengthSums holds one token count per field of bm25fFields, in its order:
// a document's lengths, or their sum over documents.
type lengthSums [len(bm25fFields)]uint64

// analyzeDoc builds the Bleve document of d, with the fields, values,
// array positions and options the index mapping (buildMapping) gives them,
// and returns it with the token counts of its scored fields under an, which
// d's lengths field stores. It builds the fields itself rather than through
// the mapping's reflective MapDocument (about a tenth of Apply's own work),
// and hands Bleve the streams analysed here for the counts, so the scored
// fields are analysed once; kw is the keyword analyzer. Each token of the
// text and heading is handed to word as written and as its term (both alias
// the document's text or token stream), for the substring leg's vocabulary.
func analyzeDoc(an, kw analysis.Analyzer, id string, d *bleveDoc, word func(written, term []byte)) (*document.Document, lengthSums) {
	doc := document.NewDocument(id)
	var l lengthSums
	for i, v := range [...]string{d.Text, d.Heading, d.Title} { // bm25fFields' order
		in := []byte(v)
		ts := an.Analyze(in)
		l[i] = uint64(len(ts))
		if bm25fFields[i].name != fieldTitle {
			for _, t := range ts {
				word(in[t.Start:t.End], t.Term)
			}
		}
		doc.AddField(document.NewTextFieldCustom(bm25fFields[i].name, []uint64{}, in, index.IndexField, analyzed(ts)))
	}
	d.Lengths = l.String()
	keyword := func(name, v string, pos []uint64, opts index.FieldIndexingOptions) {
		doc.AddField(document.NewTextFieldCustom(name, pos, []byte(v), opts, kw))
	}
	keyword(fieldDrive, d.Drive, []uint64{}, index.IndexField)
	for i, v := range d.Dirs {
		keyword(fieldDirs, v, []uint64{uint64(i)}, index.IndexField)
	}
	keyword(fieldMime, d.Mime, []uint64{}, index.IndexField)
	for i, v := range d.Tags {
		keyword(fieldTags, v, []uint64{uint64(i)}, index.IndexField)
	}
	if d.Time != nil {
		doc.AddField(document.NewNumericFieldWithIndexingOptions(fieldTime, []uint64{}, *d.Time, index.IndexField))
	}
	keyword(fieldLengths, d.Lengths, []uint64{}, index.StoreField)
	if stop := stopWordStream(d.Text, d.Heading); len(stop) > 0 {
		doc.AddField(document.NewTextFieldCustom(fieldStopWords, nil, nil, index.IndexField, analyzed(stop)))
	}
	doc.SetIndexed()
	return doc, l
}

// stopWordStream returns the English stop words of 3 or more runes in
// texts, each once, for the stop_words field: the substring leg matches a
// stop word only as itself ("the" is in thousands of words), and the
// stemmed fields drop them. Words are split as wordsAnalyzer splits them.
func stopWordStream(texts ...string) analysis.TokenStream {
	var (
		toks []analysis.Token
		out  analysis.TokenStream
		buf  [maxStopWordBytes + utf8.UTFMax]byte
	)
	for _, t := range texts {
		start, low := -1, buf[:0] // low: the word lowercased, while it may be a stop word
		for i := 0; i <= len(t); {
			r, sz := ' ', 1
			if i < len(t) {
				if r = rune(t[i]); r >= utf8.RuneSelf {
					r, sz = utf8.DecodeRuneInString(t[i:])
				}
			}
			if isWordRune(r) {
				if start < 0 {
					start, low = i, buf[:0]
				}
				if low != nil {
					if low = utf8.AppendRune(low, unicode.ToLower(r)); len(low) > maxStopWordBytes {
						low = nil
					}
				}
				i += sz
				continue
			}
			if start >= 0 && utf8.RuneCount(low) >= minSubstringRunes {
				if term, ok := englishStopWords[string(low)]; ok && !slices.ContainsFunc(out, func(o *analysis.Token) bool { return bytes.Equal(o.Term, term) }) {
					if len(toks) == cap(toks) {
						toks = make([]analysis.Token, 0, max(32, 2*cap(toks)))
					}
					toks = append(toks, analysis.Token{Term: term, Start: start, End: i, Position: len(out) + 1, Type: analysis.AlphaNumeric})
					out = append(out, &toks[len(toks)-1])
				}
			}
			start = -1
			i += sz
		}
	}
	return out
}

// englishStopWords holds the stop list of the "en" analyzer, each word as
// the term the stop_words field holds (shared by every document's stream).
var englishStopWords = func() map[string][]byte {
	m, err := en.TokenMapConstructor(nil, nil)
	if err != nil {
		panic(err)
	}
	terms := make(map[string][]byte, len(m))
	for w := range m {
		if len(w) > maxStopWordBytes {
			panic(fmt.Sprintf("stop word %q is longer than maxStopWordBytes", w))
		}
		terms[w] = []byte(w)
	}
	return terms
}()

// maxStopWordBytes bounds the words stopWordStream looks up: the longest
// English stop words ("themselves") have 10.
const maxStopWordBytes = 16

// analyzed is a field's token stream, analysed ahead, as its analyzer.
type analyzed analysis.TokenStream

func (a analyzed) Analyze([]byte) analysis.TokenStream { return analysis.TokenStream(a) }

func (s *lengthSums) add(l lengthSums) {
	for i := range s {
		s[i] += l[i]
	}
}

func (s *lengthSums) sub(l lengthSums) {
	for i := range s {
		s[i] -= l[i]
	}
}

// String is the stored form of a document's lengths ("42 3 5").
func (s lengthSums) String() string {
	return fmt.Sprintf("%d %d %d", s[0], s[1], s[2])
}

// parseDocLengths parses a document's stored lengths (String's form).
func parseDocLengths(v string) (lengthSums, error) {
	var s lengthSums
	if n, err := fmt.Sscanf(v, "%d %d %d", &s[0], &s[1], &s[2]); err != nil || n != len(s) {
		return s, fmt.Errorf("bm25: bad stored lengths %q", v)
	}
	return s, nil
}

func (s lengthSums) encode() []byte {
	b := make([]byte, 0, 8*len(s))
	for _, v := range s {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

// decodeLengthSums decodes encode's form; no value (an empty index) is
// all zeros.
func decodeLengthSums(b []byte) (lengthSums, error) {
	var s lengthSums
	if len(b) == 0 {
		return s, nil
	}
	if len(b) != 8*len(s) {
		return s, fmt.Errorf("bm25: bad field length sums (%d bytes)", len(b))
	}
	for i := range s {
		s[i] = binary.BigEndian.Uint64(b[8*i:])
	}
	return s, nil
}

// storedLengths returns the lengths stored with document id in r, and
// whether r holds it.
func storedLengths(r index.IndexReader, id string) (lengthSums, bool, error) {
	d, err := r.Document(id)
	if err != nil || d == nil {
		return lengthSums{}, false, err
	}
	var v string
	d.VisitFields(func(f index.Field) {
		if f.Name() == fieldLengths {
			v = string(f.Value())
		}
	})
	l, err := parseDocLengths(v)
	return l, err == nil, err
}

package lexical

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
)

// TestAnalyzeDoc_AsTheMappingMapsIt checks that analyzeDoc builds each
// document as the index mapping's MapDocument would, field by field (name,
// array positions, value, options and what indexing analyses), plus the
// stop_words field the mapping never fills.
func TestAnalyzeDoc_AsTheMappingMapsIt(t *testing.T) {
	im, err := buildMapping()
	if err != nil {
		t.Fatal(err)
	}
	an, kw := im.AnalyzerNamed(en.AnalyzerName), im.AnalyzerNamed(keyword.Name)
	when := float64(TimeKey(time.Date(2026, 11, 27, 10, 15, 0, 0, time.UTC)))
	for _, d := range []bleveDoc{
		{Text: "The quick brown foxes jumped over the lazy dogs.", Heading: "Animals > Foxes", Title: "Fox facts\nAll about foxes", Drive: "notes", Dirs: pathTerms("notes", "/zoo/fox.md"), Mime: "text/markdown", Tags: []string{"animals", "fox"}, Time: &when},
		{Text: "naïve café, 東京 and Ünïcödé words; useEffect() logo.png", Drive: "d", Dirs: pathTerms("d", "/a.txt"), Mime: "text/plain"},
		{}, // every field empty
	} {
		got, l := analyzeDoc(an, kw, "id#0", &d, func(written, term []byte) {})
		if d.Lengths != l.String() {
			t.Errorf("%q: lengths field %q, counts %v", d.Text, d.Lengths, l)
		}
		want := document.NewDocument("id#0")
		if err := im.MapDocument(want, d); err != nil {
			t.Fatal(err)
		}
		if stop := stopWordStream(d.Text, d.Heading); len(stop) > 0 {
			want.AddField(document.NewTextFieldCustom(fieldStopWords, nil, nil, index.IndexField, analyzed(stop)))
		}
		if len(got.Fields) != len(want.Fields) {
			t.Fatalf("%q: %d fields, the mapping makes %d", d.Text, len(got.Fields), len(want.Fields))
		}
		for i, g := range got.Fields {
			w := want.Fields[i]
			g.Analyze()
			w.Analyze()
			if g.Name() != w.Name() || !reflect.DeepEqual(g.ArrayPositions(), w.ArrayPositions()) || string(g.Value()) != string(w.Value()) ||
				g.Options() != w.Options() || g.AnalyzedLength() != w.AnalyzedLength() || !reflect.DeepEqual(g.AnalyzedTokenFrequencies(), w.AnalyzedTokenFrequencies()) {
				t.Errorf("%q field %d: got %s %v %q %v len %d %v, the mapping makes %s %v %q %v len %d %v", d.Text, i,
					g.Name(), g.ArrayPositions(), g.Value(), g.Options(), g.AnalyzedLength(), g.AnalyzedTokenFrequencies(),
					w.Name(), w.ArrayPositions(), w.Value(), w.Options(), w.AnalyzedLength(), w.AnalyzedTokenFrequencies())
			}
		}
		if got.Indexed() != want.Indexed() {
			t.Errorf("%q: Indexed %v, the mapping's %v", d.Text, got.Indexed(), want.Indexed())
		}
	}
}

// TestSearchBM25_PruningKeepsTheHits: without a filter the BM25 searcher
// skips documents that cannot reach the top k (MaxScore); its hits, scores
// and ties included, are those of the same search unpruned, which a filter
// every document passes gives, but for which of the documents tied at the
// cut fill the last places (sameHits): that follows their order in the
// index, which Bleve's merging of segments in the background can change
// between the two searches.
func TestSearchBM25_PruningKeepsTheHits(t *testing.T) {
	ps := loadPassages(t, 4000)
	x := mustOpen(t, filepath.Join(t.TempDir(), "idx"))
	for start := 0; start < len(ps); start += 500 { // several segments
		docs := make([]Doc, 0, 500)
		for i := start; i < start+500; i++ {
			docs = append(docs, passageDoc(ps[i], i, ""))
		}
		mustApply(t, x, docs, nil, uint64(start+1))
	}
	words, _, phrases := benchQueries(ps, 200)
	everything := Filter{Drives: []string{"wiki"}}
	compared := 0
	for _, q := range append(words, phrases...) {
		for _, k := range []int{1, 10, 100} {
			pruned, whole := mustBM25(t, x, q, Filter{}, k), mustBM25(t, x, q, everything, k)
			if !sameHits(pruned, whole) {
				t.Fatalf("SearchBM25(%q, k=%d) pruned:\n%v\nunpruned:\n%v", q, k, pruned, whole)
			}
			compared += len(whole)
		}
	}
	if compared == 0 {
		t.Fatal("no query found anything")
	}
}

// TestBM25FSearcher_Prunes: once k documents are returned, a word every
// document holds is only advanced to the documents a rarer one holds.
func TestBM25FSearcher_Prunes(t *testing.T) {
	x := mustOpen(t, filepath.Join(t.TempDir(), "idx"))
	var docs []Doc
	for i := range 400 {
		text := fmt.Sprintf("common filler words number %d", i)
		if i%2 == 0 {
			text += " rare"
		}
		docs = append(docs, Doc{ID: fmt.Sprintf("d%03d", i), Text: text, Drive: "d", Path: fmt.Sprintf("/%d", i), Mime: "text/plain"})
	}
	mustApply(t, x, docs, nil, 1)
	bi, done, err := x.get()
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	adv, err := bi.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	count := func(topK int) (returned, scored int) {
		s, err := (&bm25fQuery{terms: []string{"common", "rare"}, topK: topK}).Searcher(context.Background(), r, nil, search.SearcherOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(16, 0)}
		for {
			dm, err := s.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if dm == nil {
				return returned, s.(*bm25fSearcher).scored
			}
			returned++
			ctx.DocumentMatchPool.Put(dm)
		}
	}
	if returned, scored := count(0); returned != 400 || scored != 400 {
		t.Errorf("unpruned: %d returned, %d scored; want all 400", returned, scored)
	}
	// Once 5 documents holding "rare" are in the top 5 (Bleve numbers a
	// batch's documents in no set order, so after about the first 10),
	// only the 200 holding it are candidates: "common" alone scores less
	// than any of them.
	if returned, scored := count(5); scored > 260 || returned < 5 || returned > scored {
		t.Errorf("top 5: %d returned, %d scored; want 5 to 260 scored", returned, scored)
	}
}

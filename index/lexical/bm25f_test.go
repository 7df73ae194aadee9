package lexical

import (
	"reflect"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/document"
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

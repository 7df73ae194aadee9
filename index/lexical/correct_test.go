package lexical

import (
	"context"
	"errors"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis/lang/en"
)

func TestIndex_Correct(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "a", Text: "Sorting algorithms compared: quicksort and mergesort."},
		{ID: "b", Text: "Graph algorithms for shortest paths.", Heading: "Hooks"},
		{ID: "c", Text: "Dense retrieval with embeddings improves recall."},
		{ID: "d", Text: "Sparse retrieval still matters for rare terms."},
		{ID: "e", Text: "The retrieved passages are reranked.", Title: "Zebra"},
		{ID: "f", Text: "A planet orbits; the planes fly."},
		{ID: "g", Text: "cart cart"}, {ID: "h", Text: "cart"}, {ID: "i", Text: "card"},
		{ID: "j", Text: "cash"}, {ID: "k", Text: "cast"},
		{ID: "l", Text: "zeppelin"},
		{ID: "m", Text: "Happiness stopped him making mistakes."},
	}, nil, 1)
	mustApply(t, x, nil, []string{"l"}, 2)

	tests := []struct {
		name, q, want string
		ok            bool
	}{
		{"distance 1, surface form not stem", "algoritm", "algorithms", true},
		{"distance 2 on a long word", "algortm", "algorithms", true},
		{"stem differs from every surface", "retrievl", "retrieval", true},
		{"surface closest to the typed word", "retreival", "retrieval", true},
		{"surface with y turned to i", "hapiness", "happiness", true},
		{"surface with a doubled consonant", "stoped", "stopped", true},
		{"surface with a final e dropped", "makng", "making", true},
		{"known words kept, punctuation and order preserved", "Dense  retrievl, (algoritm)!", "Dense  retrieval, (algorithms)!", true},
		{"stop word kept", "the algoritm", "the algorithms", true},
		{"capitalised", "Algoritm", "Algorithms", true},
		{"upper case", "RETRIEVL", "RETRIEVAL", true},
		{"higher document frequency wins", "carx", "cart", true},
		{"equal frequency: lexical order", "casx", "cash", true},
		{"equal frequency: smaller distance", "planxt", "planet", true},
		{"known word unchanged", "graph algorithms", "graph algorithms", false},
		{"known through stemming", "retrieving algorithm", "retrieving algorithm", false},
		{"known in heading or title only", "hooks zebra", "hooks zebra", false},
		{"nothing close", "xylophone", "xylophone", false},
		{"term only in deleted documents", "zepelin", "zepelin", false},
		{"short words not replaced", "ab", "ab", false},
		{"words with digits not replaced", "algoritm2", "algoritm2", false},
		{"only stop words", "the and of", "the and of", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := x.Correct(context.Background(), tt.q)
			if err != nil {
				t.Fatalf("Correct(%q): %v", tt.q, err)
			}
			if got != tt.want || ok != tt.ok {
				t.Fatalf("Correct(%q) = %q, %v; want %q, %v", tt.q, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestIndex_Correct_StemsToIndexedTerm checks the contract independent of
// which surface form is chosen.
func TestIndex_Correct_StemsToIndexedTerm(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "a", Text: "An algorithm sorts."},
		{ID: "b", Text: "Algorithms sort."},
		{ID: "c", Text: "algorithmic thinking"},
	}, nil, 1)
	got, ok, err := x.Correct(context.Background(), "algoritm")
	if err != nil || !ok {
		t.Fatalf("Correct = %q, %v, %v; want a correction", got, ok, err)
	}
	an := x.idx.Mapping().AnalyzerNamed(en.AnalyzerName)
	if ts := an.Analyze([]byte(got)); len(ts) != 1 || string(ts[0].Term) != "algorithm" {
		t.Fatalf("Correct = %q, which does not analyse to \"algorithm\"", got)
	}
}

func TestIndex_Correct_QuickBrownFox(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "a", Text: "quick brown"},
		{ID: "b", Text: "a quick reply"},
	}, nil, 1)
	tests := []struct {
		q, want string
		ok      bool
	}{
		// "teh" and "fox" have no indexed term within one edit.
		{"teh quick brwn fox", "teh quick brown fox", true},
		{"quick brown", "quick brown", false},
		// "bxwn" is two edits from "brown": too many for 4 runes.
		{"bxwn", "bxwn", false},
		// A transposition is one edit, as in Bleve's fuzzy queries.
		{"qucik", "quick", true},
	}
	for _, tt := range tests {
		got, ok, err := x.Correct(context.Background(), tt.q)
		if err != nil {
			t.Fatalf("Correct(%q): %v", tt.q, err)
		}
		if got != tt.want || ok != tt.ok {
			t.Errorf("Correct(%q) = %q, %v; want %q, %v", tt.q, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIndex_Correct_Closed(t *testing.T) {
	x, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := x.Correct(context.Background(), "algoritm"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Correct after Close: err = %v, want ErrClosed", err)
	}
}

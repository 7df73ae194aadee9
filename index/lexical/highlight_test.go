package lexical

import (
	"slices"
	"testing"
)

func TestIndex_MatchSpans(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	tests := []struct {
		query, text string
		want        [][2]int
	}{
		{"zebra crossing", "zebra crossing rules", [][2]int{{0, 5}, {6, 14}}},
		// Where BM25 matched: "running" and "runs" share the stem "run".
		{"running", "The dog runs every morning.", [][2]int{{8, 12}}},
		{"Zebra", "ZEBRA and zebras", [][2]int{{0, 5}, {10, 16}}},
		{"the of", "the end of it", nil},             // stop words match nothing
		{"ties", "Thin ties bind", [][2]int{{5, 9}}}, // the stem "ti" is shorter than the compared prefix
		{"dog", "the dog's bone", [][2]int{{4, 7}}},
		{"über", "Über alles, ÜBER", [][2]int{{0, 5}, {13, 18}}},
		{"", "anything", nil},
	}
	for _, tc := range tests {
		terms, err := x.Terms(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.MatchSpans(tc.text, terms)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("MatchSpans(%q, Terms(%q)) = %v, want %v", tc.text, tc.query, got, tc.want)
		}
	}
}

func TestIndex_TermPositions(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	tests := []struct {
		query, text string
		want        []TermPosition
	}{
		// Every word counts, stop words too: "of" stands between.
		{"flow air", "Flow of air", []TermPosition{{"flow", 0, 0, 4}, {"air", 2, 8, 11}}},
		// Stemmed as BM25 stems: "runs" is the term "run" the query's "running" gives.
		{"running dogs", "The dog runs; dogs ran.", []TermPosition{{"dog", 1, 4, 7}, {"run", 2, 8, 12}, {"dog", 3, 14, 18}}},
		{"ties", "Thin ties bind", []TermPosition{{"ti", 1, 5, 9}}},
		{"the of", "the end of it", nil},
		{"über", "x Über", []TermPosition{{"über", 1, 2, 7}}},
	}
	for _, tc := range tests {
		terms, err := x.Terms(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.TermPositions(tc.text, terms)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("TermPositions(%q, Terms(%q)) = %v, want %v", tc.text, tc.query, got, tc.want)
		}
	}
}

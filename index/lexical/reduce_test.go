package lexical

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestIndex_KeyTerms(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	// "common" is in every doc, "rare" in one, "medium" in three.
	var docs []Doc
	for i := range 10 {
		text := "common words here"
		if i < 3 {
			text += " medium"
		}
		if i == 0 {
			text += " rare"
		}
		docs = append(docs, Doc{ID: fmt.Sprint(i), Text: text})
	}
	mustApply(t, x, docs, nil, 1)
	ctx := context.Background()

	for _, tt := range []struct {
		name, q string
		max     int
		want    string
		ok      bool
	}{
		{"short", "Common medium rare", 3, "Common medium rare", false},
		// Terms the index lacks go first, then the most common ones; order
		// and surface forms stay.
		{"unknown dropped", "Rare commonly mediums unheardof", 3, "Rare commonly mediums", true},
		{"rarest kept", "Rare commonly mediums unheardof", 2, "Rare mediums", true},
		{"index-known first", "zzz1 yyy2 xxx3 common", 3, "zzz1 yyy2 common", true},
		// Repeats make a query long even with few distinct terms; they
		// stay, up to maxTermRepeats, so BM25 still weights by them.
		{"repeats", strings.Repeat("medium rare ", 10), 3, "medium medium rare rare", true},
		{"kept terms keep their repeats", "Rare common rare medium", 2, "Rare Rare medium", true},
		// Long text of stop words only leaves nothing to search.
		{"stop words", strings.Repeat("the and of ", 100), 3, "", true},
		// Words over maxTermBytes are dropped.
		{"long word", "rare " + strings.Repeat("ab", maxTermBytes) + " medium common x1 x2", 3, "rare medium common", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := x.KeyTerms(ctx, tt.q, tt.max)
			if err != nil || got != tt.want || ok != tt.ok {
				t.Fatalf("KeyTerms(%.40q, %d) = %q, %v, %v; want %q, %v", tt.q, tt.max, got, ok, err, tt.want, tt.ok)
			}
		})
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := x.KeyTerms(canceled, strings.Repeat("w ", 10)+"a b c d e f", 3); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: err = %v", err)
	}
}

func TestPieceEnd(t *testing.T) {
	words := strings.Repeat("abc ", analyzePiece/4+10)
	if end := pieceEnd(words, 0); end != analyzePiece || words[end-1] != ' ' {
		t.Errorf("words: piece ends at %d (after %q), want %d after a space", end, words[end-1], analyzePiece)
	}
	// No whitespace: cut at a rune boundary, never inside "é".
	runes := "x" + strings.Repeat("é", analyzePiece)
	if end := pieceEnd(runes, 0); end != analyzePiece-1 {
		t.Errorf("runes: piece ends at %d, want %d", end, analyzePiece-1)
	}
	if end := pieceEnd("short", 0); end != 5 {
		t.Errorf("short: %d", end)
	}
}

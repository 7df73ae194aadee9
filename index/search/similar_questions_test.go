package search

import (
	"slices"
	"testing"
)

// TestEngine_FindSimilarIgnoresQuestionRows: FindSimilar compares chunk
// texts only; a question vector equal to the target's is no duplicate.
// (It needs question vectors, so it lives beside their tests' helpers.)
func TestEngine_FindSimilarIgnoresQuestionRows(t *testing.T) {
	e := newEnv(t)
	e.writeQ("notes:/text.md", "a passage", angled(0))
	e.writeQ("notes:/asks.md", "another passage", angled(1.5), "What does the passage say?")
	e.embedQuestions(map[string][]float32{"What does the passage say?": angled(0)})
	e.sync()
	r := e.similar(SimilarRequest{Vectors: [][]float32{angled(0)}})
	if got := similarRefs(r); !slices.Equal(got, []string{"notes:/text.md"}) {
		t.Fatalf("similar to the passage: %v, want only the item whose text matches", got)
	}
}

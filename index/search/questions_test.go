package search

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/vfs"
)

// writeQ stores text with one precomputed vector and caller questions.
func (e *env) writeQ(ref, text string, vec []float32, questions ...string) vfs.Item {
	e.t.Helper()
	r, err := vfs.ParseRef(ref)
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := e.store.Write(context.Background(), vfs.WriteParams{Ref: r, Content: []byte(text), IsText: true,
		OnConflict: vfs.ConflictOverwrite, Questions: questions,
		Embeddings: &vfs.Embeddings{Model: testModel, Vectors: [][]float32{vec}}})
	if err != nil {
		e.t.Fatalf("write %s: %v", ref, err)
	}
	return res.Item
}

// embedQuestions gives every queued question the vector vecs names by text.
func (e *env) embedQuestions(vecs map[string][]float32) {
	e.t.Helper()
	ctx := context.Background()
	pending, err := e.store.PendingQuestions(ctx, 100)
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([][]float32, len(pending))
	for i, p := range pending {
		if !p.Have {
			if out[i] = vecs[p.Text]; out[i] == nil {
				e.t.Fatalf("no test vector for question %q", p.Text)
			}
		}
	}
	if err := e.store.SaveQuestionVectors(ctx, testModel, pending, out); err != nil {
		e.t.Fatal(err)
	}
}

// TestEngine_QuestionVectorsScoreTheirChunk: the vector leg scores a chunk
// by the best of its text vector and its question vectors, each chunk once,
// with filters applied to question rows too; the rows survive a snapshot
// reload and a rebuild from the store, and go with the question.
func TestEngine_QuestionVectorsScoreTheirChunk(t *testing.T) {
	e := newEnv(t)
	query := angled(0)
	e.writeQ("notes:/a.md", "lunch and learn talks", angled(0.5)) // cosine 0.88 to the query
	e.writeQ("other:/b.md", "the kitchen opens at noon", angled(1.2), "When is lunch served?", "Where is the kitchen?")
	e.embedQuestions(map[string][]float32{"When is lunch served?": angled(0.1), "Where is the kitchen?": angled(0.2)})
	e.sync()
	vec := func(f lexical.Filter) Response {
		return e.search(Request{Mode: Vector, Queries: []Query{{Vector: query}}, Limit: 5, Filter: f})
	}
	check := func(when string) {
		t.Helper()
		resp := vec(lexical.Filter{})
		if got := refs(resp); len(got) != 2 || got[0] != "other:/b.md" {
			t.Fatalf("%s: ranking %v, want /b.md first (its question) and each chunk once", when, got)
		}
		if a, b := resp.Results[0].Score, resp.Results[1].Score; a <= b {
			t.Fatalf("%s: /b.md scores %v, not above /a.md's %v", when, a, b)
		}
		if got := refs(vec(lexical.Filter{Drives: []string{"other"}})); len(got) != 1 {
			t.Fatalf("%s: drive filter kept %v, want /b.md alone", when, got)
		}
		if got := refs(vec(lexical.Filter{Drives: []string{"notes"}})); len(got) != 1 || got[0] != "notes:/a.md" {
			t.Fatalf("%s: drive filter kept %v, want notes:/a.md alone (no question row of /b.md)", when, got)
		}
		if st := e.eng.State(); st.VectorChunks != 2 {
			t.Fatalf("%s: state counts %d vector chunks, want 2 (question rows are not chunks)", when, st.VectorChunks)
		}
		if rep := mustDoctor(t, e.eng); len(rep.Problems) != 0 {
			t.Fatalf("%s: doctor: %s", when, fmtProblems(rep))
		}
	}
	check("applied")

	e.close() // saves the snapshot
	e.open(true)
	e.sync()
	check("snapshot reloaded")

	e.close()
	if err := os.Remove(filepath.Join(e.dir, "index", snapshotFile)); err != nil {
		t.Fatal(err)
	}
	e.open(true)
	e.sync()
	check("rebuilt from the store")

	e.writeQ("other:/b.md", "the kitchen opens at noon", angled(1.2))
	e.sync()
	if got := refs(vec(lexical.Filter{})); len(got) != 2 || got[0] != "notes:/a.md" {
		t.Fatalf("after the questions were removed: %v, want notes:/a.md first", got)
	}
	if rep := mustDoctor(t, e.eng); len(rep.Problems) != 0 {
		t.Fatalf("after removal: doctor: %s", fmtProblems(rep))
	}
	e.eng.mu.RLock()
	rows, qrows := e.eng.vec.idx.Len(), e.eng.vec.qrows
	e.eng.mu.RUnlock()
	if rows != 2 || qrows != 0 {
		t.Fatalf("vector index holds %d rows (%d question rows), want the 2 chunk rows", rows, qrows)
	}
}

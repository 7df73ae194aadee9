package indexer

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/internal/testmodel"
	"github.com/ctxd/ctxd/vfs"
)

// TestIndexer_QuestionVectorChangesRanking is the hand-built case,
// with the real model: a query whose words are closest to chunk A ranks A
// first; once chunk B carries a question phrased like the query (B answers
// it), the vector leg scores B by that question and ranks B first. The
// question is embedded by the indexer's question pass, at query side.
func TestIndexer_QuestionVectorChangesRanking(t *testing.T) {
	s, c, spec := mustModelChunker(t)
	ctx := context.Background()
	m, err := embed.Open(testmodel.Dir(t), embed.Options{LibraryPath: testmodel.ORTLib(t)})
	if err != nil {
		t.Fatal(err)
	}
	w := embed.NewWorker(m)
	t.Cleanup(func() { w.Close() })
	eng, err := search.Open(s, search.Options{Dir: filepath.Join(t.TempDir(), "index")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	eng.SetModel(spec.ID, spec.Dimensions)
	ix := &Indexer{store: s, engine: eng, log: slog.New(slog.DiscardHandler), chunker: c, worker: w}

	const (
		a     = "Lunch and learn talks are held in the large meeting room on the first Friday of every month."
		b     = "The kitchen on the third floor opens at half past eleven and closes at two, Monday to Friday."
		query = "When is lunch served?"
	)
	write := func(path, text string, questions ...string) {
		t.Helper()
		if _, err := s.Write(ctx, vfs.WriteParams{Ref: vfs.Ref{Drive: "notes", Path: path}, Content: []byte(text), IsText: true,
			OnConflict: vfs.ConflictOverwrite, Questions: questions}); err != nil {
			t.Fatal(err)
		}
	}
	drain := func() {
		t.Helper()
		for {
			busy, err := ix.pass(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !busy {
				break
			}
		}
		waitApplied(t, s, eng)
	}
	top := func() string {
		t.Helper()
		resp, err := eng.Search(ctx, search.Request{Mode: search.Vector, Queries: []search.Query{{Text: query}}, Limit: 2,
			EmbedQuery: func(ctx context.Context, text string) ([]float32, error) {
				v, err := w.Embed(ctx, []string{text}, true)
				if err != nil {
					return nil, err
				}
				return v[0], nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) != 2 {
			t.Fatalf("%d results, want both chunks", len(resp.Results))
		}
		return resp.Results[0].Path
	}
	write("/a.md", a)
	write("/b.md", b)
	drain()
	if got := top(); got != "/a.md" {
		t.Fatalf("without questions %q ranks %s first; the case needs the lunch talks (/a.md) first", query, got)
	}
	write("/b.md", b, "What time does the kitchen serve lunch?")
	drain()
	if _, _, pending, err := s.QuestionStats(ctx); err != nil || pending != 0 {
		t.Fatalf("the question pass left %d questions pending (%v)", pending, err)
	}
	if got := top(); got != "/b.md" {
		t.Fatalf("with the question on /b.md, %q still ranks %s first", query, got)
	}
	// A write without the question takes it away again.
	write("/b.md", b)
	drain()
	if got := top(); got != "/a.md" {
		t.Fatalf("after the question was removed, %q ranks %s first", query, got)
	}
}

// waitApplied waits until the engine has applied every outbox entry.
func waitApplied(t *testing.T, s *vfs.Store, eng *search.Engine) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		seq, err := s.OutboxSeq(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st := eng.State(); st.AppliedSeq >= seq && !st.Rebuilding && st.Model != "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("engine stuck behind seq %d (%+v)", seq, eng.State())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

package standing

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/internal/testchunk"
	"github.com/ctxd/ctxd/internal/testmodel"
	"github.com/ctxd/ctxd/vfs"
)

// env is a real store, search engine and hub; model embeds with the real
// test model.
type env struct {
	t     testing.TB
	store *vfs.Store
	eng   *search.Engine
	hub   *Hub
	model *embed.Model
	spec  embed.Spec
}

var (
	modelOnce sync.Once
	model     *embed.Model
	modelErr  error
)

func newEnv(t testing.TB, opts Options) *env { t.Helper(); return newEnvWith(t, opts, true) }

// newEnvWith is newEnv, with the engine's vector leg only when vectors is
// set (without it the engine trims its outbox as soon as it is idle).
func newEnvWith(t testing.TB, opts Options, vectors bool) *env {
	t.Helper()
	modelOnce.Do(func() {
		model, modelErr = embed.Open(testmodel.Dir(t), embed.Options{LibraryPath: testmodel.ORTLib(t)})
	})
	if modelErr != nil {
		t.Fatal(modelErr)
	}
	if opts.Embed == nil {
		opts.Embed = func(_ context.Context, text string) ([]float32, error) {
			v, err := model.Embed([]string{text}, true)
			if err != nil {
				return nil, err
			}
			return v[0], nil
		}
	}
	dir := t.TempDir()
	s, err := vfs.Open(filepath.Join(dir, "ctxd.db"), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := model.Spec()
	if _, err := s.SetIndexing(context.Background(), testchunk.Paragraphs{}, spec.ID); err != nil {
		t.Fatal(err)
	}
	hub := New(s, opts)
	eng, err := search.Open(s, search.Options{Dir: filepath.Join(dir, "index"), Hold: hub.Hold})
	if err != nil {
		t.Fatal(err)
	}
	if vectors {
		eng.SetModel(spec.ID, spec.Dimensions)
	}
	e := &env{t: t, store: s, eng: eng, model: model, spec: spec}
	if err := hub.Start(context.Background(), eng); err != nil {
		t.Fatal(err)
	}
	e.hub = hub
	t.Cleanup(func() {
		e.hub.Close()
		eng.Close()
		s.Close()
	})
	return e
}

// write stores text (paragraphs are chunks) at drive:path, embedded.
func (e *env) write(drive, path, text string) vfs.Item {
	e.t.Helper()
	chunks := testchunk.Paragraphs{}.Chunk([]byte(text), vfs.ChunkDoc{})
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = text[c.Start:c.End]
	}
	vecs, err := e.model.Embed(texts, false)
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := e.store.Write(context.Background(), vfs.WriteParams{Ref: vfs.Ref{Drive: drive, Path: path}, Content: []byte(text),
		IsText: true, OnConflict: vfs.ConflictOverwrite, Embeddings: &vfs.Embeddings{Model: e.spec.ID, Vectors: vecs}})
	if err != nil {
		e.t.Fatalf("write %s:%s: %v", drive, path, err)
	}
	return res.Item
}

func (e *env) subscribe(q Query, o SubscribeOptions) *Sub {
	e.t.Helper()
	s, err := e.hub.Subscribe(context.Background(), q, o)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(s.Close)
	return s
}

// next waits for the next event of s.
func next(t testing.TB, s *Sub) Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ev, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("next event: %v", err)
	}
	return ev
}

// nextMatch waits for the next event and requires it to be a match of path.
func nextMatch(t testing.TB, s *Sub, path string) *Match {
	t.Helper()
	ev := next(t, s)
	if ev.Match == nil {
		t.Fatalf("want a match of %s, got %+v", path, ev.Gap)
	}
	if ev.Match.Result.Path != path {
		t.Fatalf("want a match of %s, got %s (%q)", path, ev.Match.Result.Path, ev.Match.Result.Snippet)
	}
	return ev.Match
}

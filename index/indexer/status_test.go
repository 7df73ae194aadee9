package indexer

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/internal/testmodel"
	"github.com/ctxd/ctxd/vfs"
)

// newIndexer returns an Indexer over a new store and engine for the model
// in modelDir, not yet running.
func newIndexer(t *testing.T, modelDir, lib string) *Indexer {
	t.Helper()
	dir := t.TempDir()
	s, err := vfs.Open(filepath.Join(dir, "ctxd.db"), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := search.Open(s, search.Options{Dir: filepath.Join(dir, "index")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.Close()
		s.Close()
	})
	return New(s, eng, slog.New(slog.DiscardHandler), modelDir, lib)
}

// run starts ix and stops it at cleanup.
func run(t *testing.T, ix *Indexer) {
	ctx, cancel := context.WithCancel(context.Background())
	go ix.Run(ctx)
	t.Cleanup(func() {
		cancel()
		ix.Wait()
	})
}

// TestIndexer_StatusWhileLoading: from the moment it exists until the model
// runs, the indexer says it is loading and what; it never reports
// "unavailable" without a reason (ctxd status printed "unavailable: " right
// after start).
func TestIndexer_StatusWhileLoading(t *testing.T) {
	dir := testmodel.Dir(t)
	ix := newIndexer(t, dir, testmodel.ORTLib(t))
	if st := ix.Status(); st.Available || !st.Loading || st.Reason != "loading the embedding model in "+dir {
		t.Fatalf("before Run: %+v, want loading the model in %s", st, dir)
	}
	run(t, ix)
	deadline := time.Now().Add(time.Minute)
	for {
		st := ix.Status()
		if st.Available {
			if st.Loading || st.Reason != "" || st.Spec.ID == "" {
				t.Fatalf("available: %+v, want no loading, no reason and the spec", st)
			}
			return
		}
		if !st.Loading || !strings.HasPrefix(st.Reason, "loading the embedding model ") {
			t.Fatalf("while loading: %+v", st)
		}
		if st.Spec.ID != "" && !strings.Contains(st.Reason, st.Spec.ID+" from "+dir) {
			t.Fatalf("spec read, reason %q does not name model %s", st.Reason, st.Spec.ID)
		}
		if time.Now().After(deadline) {
			t.Fatalf("model not available after a minute: %+v", st)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestIndexer_StatusWithoutModel: without a model dir the indexer is not
// loading and says why; with a missing one it loads, then says why not.
func TestIndexer_StatusWithoutModel(t *testing.T) {
	if st := newIndexer(t, "", "").Status(); st.Available || st.Loading || st.Reason != noModelReason {
		t.Errorf("no model dir: %+v", st)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	ix := newIndexer(t, missing, testmodel.ORTLib(t))
	if st := ix.Status(); !st.Loading || !strings.Contains(st.Reason, missing) {
		t.Errorf("missing model before Run: %+v, want loading it", st)
	}
	run(t, ix)
	deadline := time.Now().Add(time.Minute)
	for st := ix.Status(); st.Loading; st = ix.Status() {
		if time.Now().After(deadline) {
			t.Fatalf("still loading after a minute: %+v", st)
		}
		time.Sleep(time.Millisecond)
	}
	if st := ix.Status(); st.Available || !strings.HasPrefix(st.Reason, "no model at "+missing) {
		t.Errorf("missing model after the load: %+v", st)
	}
}

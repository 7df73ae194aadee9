package search

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// reopen replaces the engine with one opened with opts (Dir set here).
func (e *env) reopen(opts Options) {
	e.t.Helper()
	e.close()
	opts.Dir = filepath.Join(e.dir, "index")
	eng, err := Open(e.store, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	eng.SetModel(testModel, testDims)
	e.eng, e.withModel = eng, true
	e.sync()
}

// holder parks the engine's applier at the start of its next pass.
type holder struct {
	mu      sync.Mutex
	blocked chan struct{}
}

// holdable returns Options with the wait given whose applier h can hold.
func holdable(wait time.Duration) (Options, *holder) {
	h := &holder{blocked: make(chan struct{}, 1)}
	return Options{WriteWait: wait, beforeApply: func() {
		if !h.mu.TryLock() {
			select {
			case h.blocked <- struct{}{}:
			default:
			}
			h.mu.Lock()
		}
		h.mu.Unlock()
	}}, h
}

// hold returns once e's applier is parked, with no pass in flight and no
// search's request to hurry pending.
func (h *holder) hold(e *Engine) {
	h.mu.Lock()
	select {
	case e.hurry <- struct{}{}: // start a pass, which parks
	default:
	}
	<-h.blocked
	select {
	case <-e.hurry:
	default:
	}
}

func (h *holder) release() { h.mu.Unlock() }

// TestEngine_ReadsItsWrites makes write-then-search pairs with no pause,
// in bm25 mode by a word only the new note holds and in vector mode by the
// note's own precomputed vector: each search finds the note just written
// and says it is not stale. The applier batches writes after a delay, so
// without the wait almost every search missed its note. (The daemon's
// tests make 1,000 pairs over gRPC and HTTP.) The wait is long here so
// that a slow machine cannot make a search stale: the bound is tested
// below.
func TestEngine_ReadsItsWrites(t *testing.T) {
	e := newEnv(t)
	e.reopen(Options{WriteWait: time.Minute})
	ctx := context.Background()
	for i := range 200 {
		word := fmt.Sprintf("ryw%04dmark", i)
		v := angled(float64(i) * 0.005) // distinct, each closest to itself
		ref := fmt.Sprintf("notes:/ryw/%04d.md", i)
		e.write(ref, "A note that holds "+word+" once.", v)
		mode, q := BM25, Query{Text: word}
		if i%2 == 1 {
			mode, q = Vector, Query{Vector: v}
		}
		resp, err := e.eng.Search(ctx, Request{Mode: mode, Queries: []Query{q}, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := refs(resp); !slices.Equal(got, []string{ref}) || resp.Stale != "" {
			t.Fatalf("pair %d (%s): search right after the write found %v (stale %q), want %s", i, mode, got, resp.Stale, ref)
		}
	}
}

// TestEngine_AwaitWritesBounded holds the applier so that the index cannot
// catch up: a search answers after its wait without the new note and says
// how far the index trails; once the applier has gone on, a search finds
// the note and is not stale.
func TestEngine_AwaitWritesBounded(t *testing.T) {
	e := newEnv(t)
	opts, hold := holdable(20 * time.Millisecond)
	e.reopen(opts)
	e.write("notes:/old.md", "an older note about lighthouses")
	e.sync()

	hold.hold(e.eng)
	e.write("notes:/new.md", "a new note about lighthouses and keepers")
	resp := e.search(Request{Mode: BM25, Queries: []Query{{Text: "keepers"}}})
	if len(resp.Results) != 0 || !strings.Contains(resp.Stale, "trails the store by 1 changes after waiting 20ms") {
		t.Fatalf("held applier: results %v, stale %q; want none and the lag said", refs(resp), resp.Stale)
	}
	hold.release()
	e.sync()
	resp = e.search(Request{Mode: BM25, Queries: []Query{{Text: "keepers"}}})
	if got := refs(resp); !slices.Equal(got, []string{"notes:/new.md"}) || resp.Stale != "" {
		t.Fatalf("released: results %v, stale %q", got, resp.Stale)
	}
}

// TestEngine_AwaitWritesHonoursContext: a search waiting for a held
// applier with a long wait stops when its caller cancels, and with a
// deadline it answers stale within the deadline instead of failing.
func TestEngine_AwaitWritesHonoursContext(t *testing.T) {
	e := newEnv(t)
	opts, hold := holdable(time.Hour)
	e.reopen(opts)
	hold.hold(e.eng)
	defer hold.release()
	e.write("notes:/a.md", "a note about tides")
	req := Request{Mode: BM25, Queries: []Query{{Text: "tides"}}}

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := e.eng.Search(ctx, req)
		errc <- err
	}()
	// The waiting search has asked the held applier to hurry.
	for len(e.eng.hurry) == 0 {
		select {
		case err := <-errc:
			t.Fatalf("search returned %v before it was cancelled", err)
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled search: %v, want context.Canceled", err)
	}

	dctx, dcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer dcancel()
	resp, err := e.eng.Search(dctx, req)
	if err != nil || len(resp.Results) != 0 || !strings.Contains(resp.Stale, "trails the store by 1 changes") {
		t.Fatalf("search with a deadline: %v, results %v, stale %q; want a stale answer", err, refs(resp), resp.Stale)
	}
}

// TestEngine_FindSimilarReadsItsWrites: FindSimilar waits for the vector
// index like Search, reports staleness when the applier is held (bounded
// here by the call's deadline), and with NoWait answers from the index as
// it is without a report.
func TestEngine_FindSimilarReadsItsWrites(t *testing.T) {
	e := newEnv(t)
	opts, hold := holdable(time.Minute)
	e.reopen(opts)
	// Only the searches that meet the held applier have a deadline.
	similar := func(noWait bool, timeout time.Duration) SimilarResponse {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		resp, err := e.eng.FindSimilar(ctx, SimilarRequest{Vectors: [][]float32{unit(5, 0)}, NoWait: noWait})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	e.write("notes:/a.md", "a note", unit(5, 0))
	if resp := similar(false, time.Minute); len(resp.Items) != 1 || resp.Items[0].Path != "/a.md" || resp.Stale != "" {
		t.Fatalf("right after the write: %+v", resp)
	}
	hold.hold(e.eng)
	defer hold.release()
	e.write("notes:/b.md", "another note", unit(5, 0))
	if resp := similar(false, 400*time.Millisecond); len(resp.Items) != 1 || !strings.Contains(resp.Stale, "trails the store by 1 changes") {
		t.Fatalf("held applier: %+v, want a.md only and the lag said", resp)
	}
	if resp := similar(true, time.Minute); len(resp.Items) != 1 || resp.Stale != "" {
		t.Fatalf("held applier, NoWait: %+v, want a.md only and no report", resp)
	}
}

package vfs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// cancelAtCtx cancels itself when it is polled for the n-th time, so a walk
// is cancelled after it started (the store's first poll is before the
// transaction opens).
type cancelAtCtx struct {
	context.Context
	cancel context.CancelFunc
	n      int64
	polls  atomic.Int64
}

func newCancelAtCtx(n int64) *cancelAtCtx {
	ctx, cancel := context.WithCancel(context.Background())
	return &cancelAtCtx{Context: ctx, cancel: cancel, n: n}
}

func (c *cancelAtCtx) Err() error {
	if c.polls.Add(1) == c.n {
		c.cancel()
	}
	return c.Context.Err()
}

func TestStore_WalksStopWhenCanceled(t *testing.T) {
	s := mustOpenStore(t)
	const n = 3 * checkEvery
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				if _, err := s.Write(ctx, WriteParams{Ref: Ref{Drive: "agent", Path: fmt.Sprintf("/d%d/f%05d.md", i%10, i)}, Content: []byte("x"), IsText: true}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	dir := Ref{Drive: "agent", Path: "/"}

	// Uncanceled, both walks finish.
	if _, err := s.Tree(ctx, dir, 0, 0); err != nil {
		t.Fatal(err)
	}
	if es, _, err := s.List(ctx, dir, true, n, ""); err != nil || len(es) != n {
		t.Fatalf("List: %d entries, %v", len(es), err)
	}

	c := newCancelAtCtx(2)
	if _, err := s.Tree(c, dir, 0, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Tree canceled during its walk: err = %v, want context.Canceled", err)
	}
	c = newCancelAtCtx(2)
	if _, _, err := s.List(c, dir, true, n, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("List canceled during its walk: err = %v, want context.Canceled", err)
	}
}

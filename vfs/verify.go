package vfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/ctxd/ctxd/vfs/backend"
)

// pinKey marks a context that carries a pinned read transaction.
type pinKey struct{}

// pinned is a read transaction Pin holds open for one store.
type pinned struct {
	s *Store
	t *txn
}

// Pin starts a read transaction and returns a context under which every
// read of s uses it: reads made with that context (Changes, IndexDocs,
// ScanIndexDocs, OutboxSeq, …) see the store as of one moment, whatever
// commits meanwhile. Writes go on as usual. release ends the transaction.
// The context is for one goroutine at a time, and that goroutine must not
// write to s (nor Verify it): a write that grows the file waits until every
// read transaction has ended.
func (s *Store) Pin(ctx context.Context) (_ context.Context, release func(), _ error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	tx, err := s.db.Begin(ctx, false)
	if err != nil {
		return nil, nil, fmt.Errorf("pin: %w", err)
	}
	return context.WithValue(ctx, pinKey{}, &pinned{s: s, t: s.newTxn(tx)}), func() { tx.Rollback() }, nil
}

// pinnedTxn returns the transaction ctx pins for s, or nil.
func (s *Store) pinnedTxn(ctx context.Context) *txn {
	if p, ok := ctx.Value(pinKey{}).(*pinned); ok && p.s == s {
		return p.t
	}
	return nil
}

// Verify checks the backend's own structures (bbolt's pages, PostgreSQL's
// schema and bucket catalog: backend.DB.Check), that the derived counters
// agree with what they count, and history against the items (see
// verifyHistory). It reads the whole store and decompresses all history; it
// is for `ctxd doctor` and tests, not for hot paths.
//
// The counters are compared in one read transaction. Verify refuses a
// context from Pin: bbolt's page check waits for the writer lock, which a
// write that grows the file holds while it waits for the pinned read.
func (s *Store) Verify(ctx context.Context) error {
	if s.pinnedTxn(ctx) != nil {
		return errors.New("verify: called under a pinned read")
	}
	pages := s.db.Check(ctx)
	derived := s.view(ctx, func(t *txn) error { return errors.Join(t.verifyDerived(ctx), t.verifyHistory(ctx)) })
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(pages, derived)
}

// verifyDerived compares the counters with what they count, the embedding
// queue with its hash index, and requires every chunk record to belong to
// an item.
func (t *txn) verifyDerived(ctx context.Context) error {
	var errs []error
	count := func(b backend.Bucket) (int64, error) {
		var n int64
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if n++; n%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return n, err
				}
			}
		}
		return n, nil
	}
	for _, c := range []struct {
		counter string
		b       backend.Bucket
	}{
		{counterChunks, t.chunks},
		{counterEmbedQ, t.embedq},
		{counterChunkQ, t.chunkq},
		{counterQEmbedQ, t.qembedq},
	} {
		actual, err := count(c.b)
		if err != nil {
			return err
		}
		if got := t.counter(c.counter); got != actual {
			errs = append(errs, fmt.Errorf("counter %q says %d but there are %d", c.counter, got, actual))
		}
	}
	if err := t.verifyEmbedWait(); err != nil {
		errs = append(errs, err)
	}
	if n, err := count(t.chunkhash); err != nil {
		return err
	} else if want := t.counter(counterChunks); n != want {
		errs = append(errs, fmt.Errorf("chunk hash index holds %d entries for %d chunks", n, want))
	}
	c := t.chunks.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Seek(afterID(k[:16])) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if t.items.Get(k[:16]) == nil {
			errs = append(errs, fmt.Errorf("chunks of missing item %x", bytes.Clone(k[:16])))
		}
	}
	return errors.Join(errs...)
}

package vfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// Verify checks the store file's structure (bbolt's page-level check) and
// that the derived counters agree with what they count. It reads the whole
// file; it is for `ctxd doctor`, not for hot paths.
func (s *Store) Verify(ctx context.Context) error {
	return s.view(ctx, func(t *txn) error {
		var errs []error
		for err := range t.tx.Check() {
			errs = append(errs, err)
		}
		count := func(b interface {
			ForEach(func(k, v []byte) error) error
		}) int64 {
			var n int64
			b.ForEach(func(_, _ []byte) error { n++; return nil })
			return n
		}
		for _, c := range []struct {
			counter string
			actual  int64
		}{
			{counterChunks, count(t.chunks)},
			{counterEmbedQ, count(t.embedq)},
			{counterChunkQ, count(t.chunkq)},
		} {
			if got := t.counter(c.counter); got != c.actual {
				errs = append(errs, fmt.Errorf("counter %q says %d but there are %d", c.counter, got, c.actual))
			}
		}
		// Every chunk record belongs to an item.
		var last []byte
		t.chunks.ForEach(func(k, _ []byte) error {
			if !bytes.Equal(k[:16], last) {
				last = bytes.Clone(k[:16])
				if t.items.Get(last) == nil {
					errs = append(errs, fmt.Errorf("chunks of missing item %x", last))
				}
			}
			return nil
		})
		return errors.Join(errs...)
	})
}

package vfs

import (
	"context"
	"fmt"

	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/ctxd/ctxd/vfs/boltstore"
)

// BucketUsage is what one top-level bucket of the store file takes.
type BucketUsage struct {
	Name string
	// Bytes is the pages allocated to the bucket, its nested buckets'
	// included; Used is the bytes of those pages holding data, so
	// Used/Bytes is how full its pages are.
	Bytes, Used int64
	Keys        int64 // key/value pairs, nested buckets' included
}

// StoreUsage breaks the store file down by what its pages hold.
type StoreUsage struct {
	Buckets []BucketUsage // in name order
	// Free is the free pages (reused by later writes), Meta the meta and
	// freelist pages; with the buckets they make FileSize (while no write
	// commits meanwhile).
	Free, Meta int64
	// FileSize is the file's used size (its high-water mark of pages);
	// the file on disk may be longer, grown ahead of use.
	FileSize int64
}

// DiskUsage reports what the store file's pages hold. It reads every page
// in use once, about the cost of reading the whole file, and stops between
// buckets once ctx ends. On bbolt it lets go of the pages the walk maps as
// it goes (boltstore.DB.ReleasingWhile): the daemon measures the store at
// start and every few minutes, and would otherwise take the whole file into
// its resident set (250 MB at 100k chunks).
func (s *Store) DiskUsage(ctx context.Context) (u StoreUsage, err error) {
	if bolt, ok := s.db.(*boltstore.DB); ok {
		err = bolt.ReleasingWhile(func() error {
			u, err = s.diskUsage(ctx)
			return err
		})
		return u, err
	}
	return s.diskUsage(ctx)
}

func (s *Store) diskUsage(ctx context.Context) (u StoreUsage, err error) {
	err = s.view(ctx, func(t *txn) error {
		u = StoreUsage{FileSize: t.tx.Size()}
		var inBuckets int64
		err := t.tx.ForEach(func(name []byte, b backend.Bucket) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			st := b.Stats()
			bu := BucketUsage{Name: string(name), Bytes: st.Bytes, Used: st.Used, Keys: st.Keys}
			u.Buckets = append(u.Buckets, bu)
			inBuckets += bu.Bytes
			return nil
		})
		if err != nil {
			return fmt.Errorf("disk usage: %w", err)
		}
		bu, err := s.db.Usage(ctx)
		if err != nil {
			return fmt.Errorf("disk usage: %w", err)
		}
		u.Free = bu.Free
		u.Meta = max(u.FileSize-inBuckets-u.Free, 0)
		return nil
	})
	return u, err
}

package boltstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ctxd/ctxd/vfs/backend"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// FileName is the bbolt store's file name in a data directory.
const FileName = "ctxd.db"

// Options configures Open.
type Options struct {
	OpenTimeout time.Duration // how long to wait for another process's lock; 0 means 1s
	// ReadOnly opens the file for reading only (a shared lock): writes
	// fail, and Close writes nothing.
	ReadOnly bool
	// ReleaseIdle is how long the store goes without an access before the
	// file pages accesses mapped are let go of (see releaser); 0 means
	// DefaultReleaseIdle, a negative value never. Only Linux releases them.
	ReleaseIdle time.Duration
}

// DB is a store in one bbolt file.
type DB struct {
	db       *bolt.DB
	releaser releaser
}

var _ backend.DB = (*DB)(nil)

// Open opens or creates the bbolt file at path. A second opener of the same
// file fails with backend.ErrLocked after opts.OpenTimeout.
func Open(path string, opts Options) (*DB, error) {
	if opts.OpenTimeout == 0 {
		opts.OpenTimeout = time.Second
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout: opts.OpenTimeout,
		// The freelist is rebuilt on open instead of written on every commit.
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
		// Growing the map inside a write copies every value that write
		// holds to the heap (a 60 MB item, once per doubling); address
		// space is cheap, and bbolt grows by 1 GB steps beyond this.
		InitialMmapSize: 1 << 30,
		ReadOnly:        opts.ReadOnly,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("%w (gave up after %s); stop the other ctxd or use another data dir", backend.ErrLocked, opts.OpenTimeout)
	}
	if err != nil {
		return nil, err
	}
	db.MaxBatchDelay = backend.BatchDelay
	d := &DB{db: db}
	d.releaser = releaser{
		idle:    cmp.Or(opts.ReleaseIdle, DefaultReleaseIdle),
		release: d.ReleasePages,
		open:    func() int { return db.Stats().OpenTxN },
	}
	if !releaseSupported {
		d.releaser.idle = 0
	}
	return d, nil
}

// Close writes the freelist and closes the file.
func (d *DB) Close() error {
	d.releaser.stop()
	// Commits skip writing the freelist (NoFreelistSync), so an open must
	// rebuild it by reading every page: seconds for a store of gigabytes.
	// Writing it once here lets the next open after a clean stop skip that.
	if d.db.IsReadOnly() {
		return d.db.Close()
	}
	d.db.NoFreelistSync = false
	err := d.db.Update(func(*bolt.Tx) error { return nil })
	return errors.Join(err, d.db.Close())
}

// View implements backend.DB.
func (d *DB) View(ctx context.Context, fn func(backend.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.releaser.touched()
	return d.db.View(func(t *bolt.Tx) error { return fn((*tx)(t)) })
}

// Update implements backend.DB.
func (d *DB) Update(ctx context.Context, fn func(backend.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.releaser.touched()
	return d.db.Update(func(t *bolt.Tx) error { return runUnlessDone(ctx, fn, t) })
}

// runUnlessDone runs fn and fails its transaction when ctx ended meanwhile,
// so a caller that left commits nothing.
func runUnlessDone(ctx context.Context, fn func(backend.Tx) error, t *bolt.Tx) error {
	if err := fn((*tx)(t)); err != nil {
		return err
	}
	return ctx.Err()
}

// Batch implements backend.DB with bbolt's Batch.
func (d *DB) Batch(ctx context.Context, fn func(backend.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.releaser.touched()
	return d.db.Batch(func(t *bolt.Tx) error { return runUnlessDone(ctx, fn, t) })
}

// Begin implements backend.DB. bbolt read transactions may be shared by
// goroutines that only read.
func (d *DB) Begin(ctx context.Context, writable bool) (backend.Tx, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.releaser.touched()
	t, err := d.db.Begin(writable)
	if err != nil {
		return nil, err
	}
	return (*tx)(t), nil
}

// Usage implements backend.DB. The freelist is the file's as of the last
// commit: with writes going on, Free is close, not exact.
func (d *DB) Usage(ctx context.Context) (backend.Usage, error) {
	var u backend.Usage
	err := d.View(ctx, func(t backend.Tx) error {
		u.Size = t.Size()
		return nil
	})
	u.Free = int64(d.db.Stats().FreeAlloc)
	return u, err
}

// Check runs bbolt's page check. It runs in a write transaction that is
// rolled back: Tx.Check compares the pages a transaction reaches with the
// file's free list, which only a write transaction holds still (in a read
// transaction, commits meanwhile change the free list under it, which
// reports pages that are fine and races on bbolt's maps). Writes wait while
// pages are checked; once started it cannot be interrupted.
func (d *DB) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t, err := d.db.Begin(true)
	if err != nil {
		return fmt.Errorf("check pages: %w", err)
	}
	defer t.Rollback()
	var errs []error
	for err := range t.Check(bolt.WithKVStringer(bolt.HexKVStringer())) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Path returns the file's path.
func (d *DB) Path() string { return d.db.Path() }

type (
	tx     bolt.Tx
	bucket bolt.Bucket
)

func wrapBucket(b *bolt.Bucket) backend.Bucket {
	if b == nil {
		return nil // not a non-nil interface holding a nil pointer
	}
	return (*bucket)(b)
}

// translate gives bbolt's errors the contract's identity.
func translate(err error) error {
	for _, m := range [...]struct{ bolt, contract error }{
		{berrors.ErrBucketExists, backend.ErrBucketExists},
		{berrors.ErrBucketNotFound, backend.ErrBucketNotFound},
		{berrors.ErrIncompatibleValue, backend.ErrIncompatible},
		{berrors.ErrTxClosed, backend.ErrTxClosed},
		{berrors.ErrTxNotWritable, backend.ErrTxNotWritable},
		{berrors.ErrKeyRequired, backend.ErrKeyRequired},
		{berrors.ErrKeyTooLarge, backend.ErrKeyTooLarge},
		{berrors.ErrValueTooLarge, backend.ErrValueTooLarge},
	} {
		if errors.Is(err, m.bolt) {
			return m.contract
		}
	}
	return err
}

func (t *tx) Bucket(name []byte) backend.Bucket { return wrapBucket((*bolt.Tx)(t).Bucket(name)) }

func (t *tx) CreateBucketIfNotExists(name []byte) (backend.Bucket, error) {
	b, err := (*bolt.Tx)(t).CreateBucketIfNotExists(name)
	return wrapBucket(b), translate(err)
}

func (t *tx) DeleteBucket(name []byte) error { return translate((*bolt.Tx)(t).DeleteBucket(name)) }

func (t *tx) ForEach(fn func(name []byte, b backend.Bucket) error) error {
	return (*bolt.Tx)(t).ForEach(func(name []byte, b *bolt.Bucket) error { return fn(name, (*bucket)(b)) })
}

func (t *tx) Size() int64     { return (*bolt.Tx)(t).Size() }
func (t *tx) Writable() bool  { return (*bolt.Tx)(t).Writable() }
func (t *tx) Commit() error   { return translate((*bolt.Tx)(t).Commit()) }
func (t *tx) Rollback() error { return translate((*bolt.Tx)(t).Rollback()) }

func (b *bucket) Get(key []byte) []byte { return (*bolt.Bucket)(b).Get(key) }
func (b *bucket) Put(key, value []byte) error {
	return translate((*bolt.Bucket)(b).Put(key, value))
}
func (b *bucket) Delete(key []byte) error { return translate((*bolt.Bucket)(b).Delete(key)) }
func (b *bucket) Cursor() backend.Cursor  { return &cursor{c: (*bolt.Bucket)(b).Cursor()} }
func (b *bucket) ForEach(fn func(k, v []byte) error) error {
	return (*bolt.Bucket)(b).ForEach(fn)
}
func (b *bucket) Bucket(name []byte) backend.Bucket {
	return wrapBucket((*bolt.Bucket)(b).Bucket(name))
}
func (b *bucket) CreateBucket(name []byte) (backend.Bucket, error) {
	nb, err := (*bolt.Bucket)(b).CreateBucket(name)
	return wrapBucket(nb), translate(err)
}
func (b *bucket) CreateBucketIfNotExists(name []byte) (backend.Bucket, error) {
	nb, err := (*bolt.Bucket)(b).CreateBucketIfNotExists(name)
	return wrapBucket(nb), translate(err)
}
func (b *bucket) DeleteBucket(name []byte) error {
	return translate((*bolt.Bucket)(b).DeleteBucket(name))
}
func (b *bucket) ForEachBucket(fn func(name []byte) error) error {
	return (*bolt.Bucket)(b).ForEachBucket(fn)
}
func (b *bucket) Sequence() uint64 { return (*bolt.Bucket)(b).Sequence() }
func (b *bucket) NextSequence() (uint64, error) {
	v, err := (*bolt.Bucket)(b).NextSequence()
	return v, translate(err)
}
func (b *bucket) SetSequence(v uint64) error { return translate((*bolt.Bucket)(b).SetSequence(v)) }
func (b *bucket) Stats() backend.BucketStats {
	st := (*bolt.Bucket)(b).Stats()
	return backend.BucketStats{
		Keys:  int64(st.KeyN),
		Bytes: int64(st.BranchAlloc + st.LeafAlloc),
		Used:  int64(st.BranchInuse + st.LeafInuse),
	}
}
func (b *bucket) SetFillPercent(f float64) { (*bolt.Bucket)(b).FillPercent = f }

// cursor is bbolt's cursor with two of its bugs worked around, both about
// pages changed in the same transaction: Next after Delete skips a key once
// the page was modified (etcd-io/bbolt#146), and Prev (and Last) stop at a
// leaf emptied by deletes, which is rebalanced only at commit.
type cursor struct {
	c       *bolt.Cursor
	key     []byte // where the cursor is; nil past either end
	deleted bool   // Delete removed key: the next move starts from where it was
	pastEnd bool   // a Seek went past the last key: Prev returns the last one
}

func (c *cursor) at(k, v []byte) ([]byte, []byte) {
	c.key, c.deleted, c.pastEnd = k, false, false
	return k, v
}

func (c *cursor) First() ([]byte, []byte) { return c.at(c.c.First()) }

func (c *cursor) Seek(seek []byte) ([]byte, []byte) {
	k, v := c.at(c.c.Seek(seek))
	c.pastEnd = k == nil
	return k, v
}

func (c *cursor) Last() ([]byte, []byte) {
	k, v := c.c.Last()
	if k == nil {
		if first, _ := c.c.First(); first != nil {
			k, v = c.lastBefore(nil)
		}
	}
	return c.at(k, v)
}

func (c *cursor) Next() ([]byte, []byte) {
	if c.deleted {
		return c.at(c.c.Seek(c.key)) // the first key after the deleted one
	}
	if c.key == nil {
		return nil, nil
	}
	return c.at(c.c.Next())
}

func (c *cursor) Prev() ([]byte, []byte) {
	from := c.key
	if c.pastEnd {
		return c.Last()
	}
	if c.deleted {
		k, _ := c.c.Seek(c.key)
		if k == nil {
			return c.Last()
		}
		from = k
	}
	if from == nil {
		return nil, nil
	}
	k, v := c.c.Prev()
	if k == nil {
		k, v = c.lastBefore(from)
	}
	return c.at(k, v)
}

// lastBefore finds the last key below limit (nil: the last key) by walking
// from the first, for when bbolt's backward moves stop early; it costs one
// First where there is truly nothing before.
func (c *cursor) lastBefore(limit []byte) ([]byte, []byte) {
	var lk, lv []byte
	for k, v := c.c.First(); k != nil && (limit == nil || bytes.Compare(k, limit) < 0); k, v = c.c.Next() {
		lk, lv = k, v
	}
	if lk != nil {
		c.c.Seek(lk)
	}
	return lk, lv
}

func (c *cursor) Delete() error {
	if err := c.c.Delete(); err != nil {
		return translate(err)
	}
	c.key, c.deleted = bytes.Clone(c.key), true
	return nil
}

// WriteSnapshot runs fn in a read transaction and then writes the whole
// file as that transaction sees it to w (bbolt's Tx.WriteTo): a consistent
// copy taken while writers go on. It returns the bytes written. A long
// copy keeps the pages it reads from reuse, so the file may grow while it
// runs. A failing w stops it (wrap w to stop when a context ends).
func (d *DB) WriteSnapshot(ctx context.Context, w io.Writer, fn func(backend.Tx) error) (n int64, err error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	err = d.db.View(func(t *bolt.Tx) error {
		if err := fn((*tx)(t)); err != nil {
			return err
		}
		n, err = t.WriteTo(w)
		return err
	})
	return n, err
}

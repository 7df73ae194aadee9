// Package backend is the storage contract under ctxd's item store: an
// ordered, transactional key-value space of named, nestable buckets, the
// shape bbolt has. Package vfs keeps every rule of the store (refs, the
// guard, frontmatter, history, queues, the outbox, errors and hints) above
// this contract, once; a backend only stores bytes in key order and keeps
// transactions isolated and durable. vfs/boltstore (a bbolt file, the
// default) and vfs/pgstore (PostgreSQL, shared by replicas) implement it,
// and backendtest is the conformance suite both pass.
//
// The contract is deliberately this narrow: with the rules written once
// above it, a store on PostgreSQL cannot drift from one on bbolt in
// semantics, errors or history, and a bbolt store copies to PostgreSQL key
// for key (ctxd migrate).
package backend

import (
	"context"
	"errors"
	"time"
)

// DB is one store's key-value space.
type DB interface {
	// View runs fn in a read-only transaction that sees one consistent
	// snapshot.
	View(ctx context.Context, fn func(Tx) error) error
	// Update runs fn in a write transaction and commits it if fn returns
	// nil; if ctx ends before the commit, it returns ctx.Err() and commits
	// nothing. Write transactions are serialized: each sees every
	// commit made before it and no other write while it runs. A backend
	// may run fn again after a transient conflict it retries (PostgreSQL's
	// serialization failures and deadlocks), so fn must reset its outputs
	// first, as for Batch.
	Update(ctx context.Context, fn func(Tx) error) error
	// Batch is Update that may share one commit with concurrent callers.
	// fn may run more than once (a failing member makes the others run
	// again), so it must reset its outputs first.
	Batch(ctx context.Context, fn func(Tx) error) error
	// Begin starts a transaction the caller ends with Rollback (or Commit,
	// if writable). A read transaction pins its snapshot for as long as it
	// is open, and may be used by several goroutines at once.
	Begin(ctx context.Context, writable bool) (Tx, error)
	// Usage reports what the store occupies beyond its buckets.
	Usage(ctx context.Context) (Usage, error)
	// Check verifies the backend's own structures (bbolt's pages, the
	// PostgreSQL schema and bucket catalog), every problem found joined.
	Check(ctx context.Context) error
	// Close releases the store; transactions still open fail.
	Close() error
}

// Usage is a store's size as its backend counts it.
type Usage struct {
	Size int64 // the file's used size; the database tables' on-disk size
	Free int64 // pages free for reuse (bbolt); 0 where not known
}

// Tx is a transaction. Bytes returned by a Tx, its buckets and cursors are
// valid only until the transaction ends and must not be modified.
//
// Get and the cursor moves return no error, as bbolt's do: a backend whose
// reads can fail (a lost connection) makes them return nil and makes every
// later call and the end of the transaction (View, Update, Commit) return
// the first such error, so a caller that saw a wrong "not found" cannot
// commit what it concluded from it.
type Tx interface {
	Bucket(name []byte) Bucket // nil if absent
	CreateBucketIfNotExists(name []byte) (Bucket, error)
	DeleteBucket(name []byte) error
	// ForEach calls fn for every top-level bucket in name order.
	ForEach(fn func(name []byte, b Bucket) error) error
	// Size is the store's used size in bytes as of this transaction.
	Size() int64
	Writable() bool
	Commit() error
	Rollback() error
}

// Bucket is a sorted key-value collection that may hold nested buckets. A
// nested bucket's name is a key whose value reads as nil.
type Bucket interface {
	Get(key []byte) []byte
	Put(key, value []byte) error
	Delete(key []byte) error
	Cursor() Cursor
	// ForEach calls fn for every key in order (nested buckets with a nil
	// value). fn must not change the bucket.
	ForEach(fn func(k, v []byte) error) error

	Bucket(name []byte) Bucket
	CreateBucket(name []byte) (Bucket, error)
	CreateBucketIfNotExists(name []byte) (Bucket, error)
	DeleteBucket(name []byte) error
	ForEachBucket(fn func(name []byte) error) error

	Sequence() uint64
	NextSequence() (uint64, error)
	SetSequence(v uint64) error

	// Stats counts the bucket's keys and bytes, nested buckets' included.
	Stats() BucketStats
	// SetFillPercent is a layout hint for keys appended in order (bbolt's
	// page fill); backends without pages ignore it.
	SetFillPercent(f float64)
}

// BucketStats is what one bucket holds.
type BucketStats struct {
	Keys int64
	// Bytes is the space allocated to the bucket and Used the part of it
	// holding data (bbolt's pages); a backend that cannot tell reports
	// the bytes of keys and values in both.
	Bytes, Used int64
}

// Cursor walks a bucket's keys in byte order. A move returns a nil key past
// either end. Delete removes the current key, and Next then returns the
// key after it; other changes to the bucket during a walk leave the
// cursor's position undefined.
type Cursor interface {
	First() (key, value []byte)
	Last() (key, value []byte)
	Next() (key, value []byte)
	Prev() (key, value []byte)
	Seek(seek []byte) (key, value []byte)
	Delete() error
}

// Errors every backend returns for the same conditions.
var (
	ErrBucketExists   = errors.New("bucket already exists")
	ErrBucketNotFound = errors.New("bucket not found")
	ErrIncompatible   = errors.New("incompatible value: a key and a nested bucket share the name")
	ErrTxClosed       = errors.New("transaction closed")
	ErrTxNotWritable  = errors.New("transaction not writable")
	ErrKeyRequired    = errors.New("key required")
	ErrKeyTooLarge    = errors.New("key too large")
	ErrValueTooLarge  = errors.New("value too large")
	ErrLocked         = errors.New("store is locked by another process")
	ErrSchemaTooNew   = errors.New("store schema is newer than this ctxd")
)

// MaxKeySize is the longest key every backend accepts (bbolt's limit).
const MaxKeySize = 32768

// Unavailable wraps an error of a backend that cannot reach its server
// (PostgreSQL stopped, the network gone): the operation may succeed if
// retried later. The daemon answers it with UNAVAILABLE.
type Unavailable struct {
	Err  error
	Hint string // what the operator can do
}

func (e *Unavailable) Error() string {
	if e.Hint == "" {
		return "store unavailable: " + e.Err.Error()
	}
	return "store unavailable: " + e.Err.Error() + "; " + e.Hint
}

func (e *Unavailable) Unwrap() error { return e.Err }

// IsUnavailable reports whether err says the store's server is out of reach.
func IsUnavailable(err error) bool {
	var u *Unavailable
	return errors.As(err, &u)
}

// Notifier is implemented by backends shared by several processes: Changed
// delivers a value after a commit by any of them (coalesced; a receiver
// must re-read), so replicas wake to each other's writes.
type Notifier interface {
	Changed() <-chan struct{}
}

// Prefetcher is implemented by the buckets of a backend whose reads are
// round trips (pgstore): Prefetch reads keys at once, so that the
// transaction's later Gets of them cost none. It is a hint with no effect
// on what Get returns; a failed read fails the transaction as Get's do.
type Prefetcher interface {
	Prefetch(keys [][]byte)
}

// Prefetch calls b's Prefetch when it has one.
func Prefetch(b Bucket, keys [][]byte) {
	if p, ok := b.(Prefetcher); ok && len(keys) > 0 {
		p.Prefetch(keys)
	}
}

// VectorMirror is implemented by the transactions of a backend that also
// keeps embeddings in a typed column for use outside ctxd (pgstore's
// ctxd_vectors, a pgvector halfvec column). The store calls it beside
// storing a chunk's vector; ctxd never reads the mirror back.
type VectorMirror interface {
	MirrorVector(model string, chunkHash []byte, vec []float32) error
}

// BatchDelay bounds how long a Batch call waits for others to share its
// commit. bbolt's 10ms default caps 16 synchronous writers at ~1,600
// writes/s; 1ms keeps batching while a lone writer barely notices.
const BatchDelay = time.Millisecond

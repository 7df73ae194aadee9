// Package storecopy moves an item store from one backend to another (a
// bbolt file to PostgreSQL, or any backend.DB to any other): `ctxd
// migrate`. Every rule of the store sits above the vfs/backend contract, so
// a store is moved by copying its key-value space exactly: every bucket,
// nested bucket, key, value and bucket sequence. Nothing here knows what
// the buckets mean.
//
// Copy walks the source depth first in key order (top-level buckets by
// name, then each bucket's keys, a nested bucket's contents right after
// its name) and writes what it read into the destination in transactions of
// at most Options.BatchKeys keys and Options.BatchBytes bytes (a larger
// value goes alone). Each batch reads the source in one read transaction
// and then writes in one destination transaction, which also records the
// path of the last key it copied in the destination's top-level bucket
// ProgressBucket. A copy killed at any moment leaves the destination at a
// batch boundary with the marker naming it, and the next Copy continues
// right after that key: no key is copied twice or skipped. The last batch
// deletes the marker in its own transaction. While the marker exists the
// destination is not a store: vfs refuses to open it.
//
// Copy refuses a destination that holds buckets and no marker
// (ErrUsedDestination): migrating into a used store would mix two stores.
// It also refuses to resume a copy recorded from another source, and a
// source that is itself an unfinished destination.
//
// # Caveats
//
// The source must not change during a copy: stop the daemon that serves it
// (a running daemon holds a bbolt file's lock anyway, and opening it fails
// with backend.ErrLocked; PostgreSQL has no such lock, so stop every
// replica). Batches read separate snapshots, so writes made meanwhile may
// be copied in part; Verify, which compares the two key spaces bucket by
// bucket (key counts, sequences and a SHA-256 of every key and value),
// finds any such difference and names the bucket.
package storecopy

// Package watcher keeps directory trees on the daemon's host in step with
// their items for as long as a watch exists, across restarts.
//
// A watch is a record in the store (vfs records of kind "watch"): the tree's
// path, the drive its items go to, excludes, tags, debounce, and the replica
// that added it. Manager loads the records of its replica at start and runs
// each watch in a goroutine of its own; the watches of other replicas
// sharing a PostgreSQL store are listed, not run (their trees are on another
// host).
//
// A run first sets up kernel file events for the tree (ingest.WatchTree),
// then reconciles the tree with its items, then applies the debounced
// batches of events. Reconciling walks the tree with stat only and lists the
// items below its root: a file whose size and mtime match what its item
// recorded is not read; a changed one is refreshed by ingest's rules (read,
// hash, rewrite only if the hash differs); a new one is added; an item whose
// file vanished is reported missing and kept (deleted with DeleteMissing).
// Events queue while a reconcile runs, so nothing that changes during it is
// lost.
//
// Moves: a vanished file and a new one are the same file when their inodes
// match (events carry the inode the tree last saw) or, across a restart,
// when size and mtime match and the new file hashes to the vanished item's
// content hash. The item is then moved (vfs.Store.Move keeps its id and
// history) and pointed at its new path, not deleted and added.
//
// Bounds: a tree that needs more directory watches than Config.MaxDirs or
// the kernel allows falls back to scanning: a reconcile every
// Config.ScanInterval, with the reason in its Status (ModeScanning), never
// silently. A watch whose tree cannot be walked (its root gone or
// unreadable) is ModeFailed and retried every ScanInterval; its items are
// left alone, since an unmounted disk is not a deleted tree.
//
// The package drives ingest and knows nothing of gRPC; the daemon converts.
package watcher

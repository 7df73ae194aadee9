// Package pgstore is the PostgreSQL backend of ctxd's item store: the
// vfs/backend contract (an ordered, transactional key-value space of
// nestable buckets) on tables any number of ctxd processes share, so that
// replicas on several machines serve one store. Package vfs keeps every
// rule of the store above the contract; pgstore only stores bytes in key
// order, isolates transactions and keeps them durable.
//
// # Schema
//
// Open creates and migrates its tables in the database's current schema
// (the first schema of the search_path that exists), all prefixed ctxd_:
//
//	ctxd_migrations  version, applied_at: one row per migration applied
//	ctxd_buckets     id, parent (0: top level), name, seq: the bucket tree
//	                 and each bucket's sequence (a uint64 in a bigint's bits)
//	ctxd_kv          bucket, key, value: one row per key; a NULL value marks
//	                 the key as the name of a nested bucket, so cursors meet
//	                 nested buckets as keys with nil values, as in bbolt
//	ctxd_vectors     model, chunk_hash, embedding (halfvec): embeddings in
//	                 a pgvector column, for use from SQL
//
// Keys are bytea and compare bytewise, so a prefix scan is a range scan
// and '%', '_', '*' and '\' are plain bytes: no query uses LIKE. A B-tree
// entry holds at most about 2.7 kB, less than the longest key (32 kB), so
// ctxd_kv's primary key is (bucket, head, tail): head is the key's first
// 1,024 bytes, tail the SHA-256 of a longer key (empty otherwise), both
// generated columns. Queries order by (head, key), which is key order, and
// PostgreSQL walks the index in head order and sorts only keys sharing a
// 1,024-byte head (an incremental sort).
//
// Migrations are SQL files embedded in the binary (migrations/NNNN_*.sql),
// each applied in its own transaction under an advisory lock, so replicas
// starting together apply it once. DDL is transactional in PostgreSQL: a
// migration cut short (a kill, a lost connection) leaves the schema at the
// version before it. A database whose schema is newer than the binary is
// refused with backend.ErrSchemaTooNew. An up-to-date schema costs Open one
// query and no right to create anything, so ctxd may run as a role that
// can only read and write the tables; Open checks those grants and names
// the missing ones.
//
// # Transactions
//
// A write transaction begins with pg_advisory_xact_lock on a key derived
// from the schema, taken before anything else and held until it commits or
// rolls back, so write transactions of every process run one at a time:
// READ COMMITTED then behaves as serializable, each writer seeing every
// commit before it. This is also what makes an outbox safe to follow from
// other replicas. Write transactions commit in the order they took the
// lock, and a writer reads a bucket's sequence only after the previous
// writer's commit is visible (PostgreSQL releases a transaction's locks
// after making its commit visible), so sequence values are handed out in
// commit order. A reader's snapshot therefore holds every value up to the
// highest it sees, with no gap a later commit could fill: a replica that
// resumes an outbox after the last sequence it applied can never skip a
// change committed out of order, which PostgreSQL sequences (nextval) would
// allow. The price is one writer at a time across all replicas; Batch
// (below) and the buffering make each turn count.
//
// A read transaction is BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY:
// one snapshot for all its reads. One from Begin is pinned to its
// connection and may be used by several goroutines at once (its queries
// take turns). An open snapshot holds back VACUUM's cleanup, as any long
// PostgreSQL transaction does.
//
// Round trips dominate the cost, so a transaction loads the whole bucket
// catalog in the round trip of its BEGIN (Bucket and ForEachBucket never
// ask the server) and buffers its Puts and Deletes: Get reads them back
// first, then what the transaction read before (valid because no one else
// writes while it holds the lock, or because it reads one snapshot), and
// only then the server. The buffered writes go out in bulk (unnest arrays
// in a pipelined batch) with the COMMIT and the change notice, in one
// round trip. A cursor reads pages of 16 keys, then 4 times more each time
// up to 1,024, each cut at 4 MB of keys and values (never before its first
// key); in a write transaction the buffered puts of the bucket are laid
// over each page, while buffered deletes of the bucket are sent before the
// page is read. A transaction also remembers where each bucket it read
// ends (tail.go): item ids are UUIDv7, so the lookups a new item makes
// past the end of the id-keyed buckets are answered without a round trip,
// for every item of a Batch after the first. Creating or deleting a
// bucket, Stats and Size are round trips of their own.
//
// Batch gathers concurrent calls into one transaction, as bbolt's DB.Batch
// does (at most backend.BatchDelay of waiting, at most 1,000 calls); when a
// member's fn fails, the transaction rolls back, that member runs alone to
// get its own error and the others run again together. A serialization
// failure or deadlock (which only sessions outside ctxd, taking row locks,
// can cause) makes Update and Batch run the transaction again, at most 5
// times, unseen by the caller.
//
// Every write transaction that changed something sends pg_notify on the
// channel ctxd_changed inside itself, delivered when it commits; Changed
// (backend.Notifier) feeds a channel from a dedicated LISTEN connection,
// which reconnects with backoff when the server goes away and then sends a
// value, as changes may have been missed meanwhile.
//
// # Errors
//
// A read that fails inside a transaction (the server gone) makes Get and
// the cursor moves return nil, and every later call and the end of the
// transaction return that first error, so nothing concluded from a wrong
// nil commits. A lost server (refused, reset, shutting down: SQLSTATE
// class 08, 57P01-57P03, 53300) becomes *backend.Unavailable naming the
// server; pooled connections are then dropped, and calls succeed again
// once it is back, without reopening. A connection lost during a COMMIT
// leaves its outcome unknown, as for any client of a database: the write
// may have committed. Errors at Open are one line naming
// what to run: createdb for a missing database, CREATE ROLE for a missing
// role, the GRANT a role lacks, CREATE EXTENSION vector as a superuser.
// A cancelled context ends its transaction with ctx.Err().
//
// # Limits and caveats
//
// Keys are 1 to backend.MaxKeySize bytes, values at most MaxValueSize (a
// value travels in one protocol message, which PostgreSQL caps at 1 GB).
// A transaction keeps what it read and wrote in memory until it ends.
// Sessions that write ctxd's tables without taking the write lock (manual
// SQL) break the isolation the store relies on. Behind PgBouncer in
// transaction pooling, statements must not be prepared per connection
// (default_query_exec_mode=exec in the store URL, or PgBouncer 1.21's
// prepared statement support), and change notices need a session of their
// own that such a pool does not keep: point the URL at PostgreSQL or at a
// session pool.
package pgstore

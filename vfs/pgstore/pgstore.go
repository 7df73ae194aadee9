package pgstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ctxd/ctxd/vfs/backend"
)

// Options tunes a DB. The zero value is the default.
type Options struct {
	// MaxConns bounds the connections the DB opens (pinned read
	// transactions and concurrent Views each hold one); 0 keeps the DSN's
	// pool_max_conns, or DefaultMaxConns.
	MaxConns int32
}

// DefaultOpenTimeout is the bound callers give Open when they have none of
// their own: connecting to PostgreSQL and migrating the schema.
const DefaultOpenTimeout = 30 * time.Second

// DefaultMaxConns is the connection pool's size when neither Options nor
// the DSN set one.
const DefaultMaxConns = 16

// tables are ctxd's tables, for Usage and the grant check.
var tables = []string{"ctxd_buckets", "ctxd_kv", "ctxd_vectors", "ctxd_migrations"}

// DB is a backend.DB on a PostgreSQL database, shareable by any number of
// processes.
type DB struct {
	pool      *pgxpool.Pool
	srv       server
	writeLock int64 // advisory lock key every write transaction takes

	closing  context.Context // done once Close starts
	close    context.CancelFunc
	mu       sync.Mutex
	closed   bool
	txs      map[*tx]struct{}
	batchMu  sync.Mutex
	batch    *batch
	listen   sync.Once
	listener *listener
}

var (
	_ backend.DB       = (*DB)(nil)
	_ backend.Notifier = (*DB)(nil)
)

// Open connects to the PostgreSQL database named by dsn (a postgres:// URL
// or key=value string, as libpq takes), creates or migrates ctxd's tables
// in its current schema, and checks the role may use them. Every failure
// is one line saying what to do.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgstore: invalid store URL: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	} else if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	cc := cfg.ConnConfig
	srv := server{addr: address(cc.Host, cc.Port), dbname: cc.Database, user: cc.User}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, srv.startupError(ctx, err)
	}
	db := &DB{pool: pool, srv: srv, txs: map[*tx]struct{}{}}
	if err := db.setUp(ctx); err != nil {
		pool.Close()
		return nil, db.srv.startupError(ctx, err)
	}
	db.closing, db.close = context.WithCancel(context.Background())
	return db, nil
}

// setUp names the schema, migrates it and checks the role's grants.
func (db *DB) setUp(ctx context.Context) error {
	var schema *string
	if err := db.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return err
	}
	if schema == nil {
		return clean(nil, "%s: no schema of the search_path exists, so ctxd has nowhere to keep its tables: create one (`CREATE SCHEMA ctxd;`) and name it in the search_path",
			db.srv)
	}
	db.srv.schema = *schema
	db.writeLock = lockKey("write", *schema)
	if err := migrate(ctx, db.pool, lockKey("migrate", *schema)); err != nil {
		return err
	}
	return db.checkGrants(ctx)
}

// lockKey is the advisory lock key of purpose in schema, so stores in
// different schemas of one database do not wait for each other.
func lockKey(purpose, schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("ctxd " + purpose + "\x00" + schema))
	return int64(h.Sum64())
}

// checkGrants fails, naming the grant, when the role may not read and
// write every ctxd table: better at start than at the first write.
func (db *DB) checkGrants(ctx context.Context) error {
	rows, err := db.pool.Query(ctx, `
		SELECT t || ': ' || string_agg(p, ', ' ORDER BY p)
		FROM unnest($1::text[]) t, unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE']) p
		WHERE (t <> 'ctxd_migrations' OR p = 'SELECT') AND NOT has_table_privilege(t, p)
		GROUP BY t ORDER BY t`, tables)
	if err != nil {
		return err
	}
	var missing []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return err
		}
		missing = append(missing, m)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(missing) > 0 {
		return clean(nil, "role %q lacks privileges on ctxd's tables in %s (%s): run `%s` as the tables' owner",
			db.srv.user, db.srv, strings.Join(missing, "; "), grantHint(db.srv.schema, db.srv.user))
	}
	return nil
}

// View runs fn in a read transaction on one snapshot.
func (db *DB) View(ctx context.Context, fn func(backend.Tx) error) error {
	return db.run(ctx, false, fn)
}

// maxAttempts bounds how often a write transaction is run again after a
// serialization failure or a deadlock.
const maxAttempts = 5

// Update runs fn in a write transaction and commits it if fn returns nil.
// A serialization failure or deadlock runs fn again (at most maxAttempts
// times in all), unseen by the caller.
func (db *DB) Update(ctx context.Context, fn func(backend.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := db.run(ctx, true, fn)
		if !retryable(err) || attempt == maxAttempts {
			return err
		}
	}
}

// run runs fn in a transaction it ends: the transaction's own failure
// first, then fn's error, then (writable) the commit's.
func (db *DB) run(ctx context.Context, writable bool, fn func(backend.Tx) error) error {
	t, err := db.begin(ctx, writable)
	if err != nil {
		return err
	}
	t.managed = true
	defer t.end()
	ferr := fn(t)
	if err := t.failure(); err != nil {
		return err
	}
	if ferr != nil || !writable {
		return ferr
	}
	return t.commit()
}

// Begin starts a transaction the caller ends. A write transaction holds
// the store's write lock until then.
func (db *DB) Begin(ctx context.Context, writable bool) (backend.Tx, error) {
	t, err := db.begin(ctx, writable)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Usage reports the on-disk size of ctxd's tables, indexes and TOAST.
func (db *DB) Usage(ctx context.Context) (backend.Usage, error) {
	if err := db.checkOpen(); err != nil {
		return backend.Usage{}, err
	}
	var size int64
	if err := db.pool.QueryRow(ctx, sizeSQL, tables).Scan(&size); err != nil {
		return backend.Usage{}, db.srv.classify(ctx, err)
	}
	return backend.Usage{Size: size}, nil
}

const sizeSQL = `SELECT coalesce(sum(pg_total_relation_size(to_regclass(t))), 0)::bigint FROM unnest($1::text[]) t`

// Check verifies the schema version and the bucket catalog against the
// key-value rows on one snapshot, every problem found joined.
func (db *DB) Check(ctx context.Context) error {
	return db.View(ctx, func(btx backend.Tx) error {
		t := btx.(*tx)
		t.mu.Lock()
		defer t.mu.Unlock()
		conn := t.conn
		var problems []error
		v, err := schemaVersion(ctx, conn)
		if err != nil {
			return db.srv.classify(ctx, err)
		}
		if v != latestVersion() {
			problems = append(problems, fmt.Errorf("schema version %d, expected %d", v, latestVersion()))
		}
		for _, c := range checks {
			rows, err := conn.Query(ctx, c.sql)
			if err != nil {
				return db.srv.classify(ctx, err)
			}
			for rows.Next() {
				var id int64
				var name []byte
				if err := rows.Scan(&id, &name); err != nil {
					return db.srv.classify(ctx, err)
				}
				problems = append(problems, fmt.Errorf(c.format, id, name))
			}
			if err := rows.Err(); err != nil {
				return db.srv.classify(ctx, err)
			}
		}
		return errors.Join(problems...)
	})
}

// checks are Check's queries, each listing at most 100 (id, name) pairs.
var checks = []struct{ sql, format string }{
	{`SELECT k.bucket, k.key FROM ctxd_kv k
		WHERE NOT EXISTS (SELECT 1 FROM ctxd_buckets b WHERE b.id = k.bucket) LIMIT 100`,
		"key in bucket %d, which is not in the catalog: %q"},
	{`SELECT k.bucket, k.key FROM ctxd_kv k
		WHERE k.value IS NULL AND NOT EXISTS (
			SELECT 1 FROM ctxd_buckets b WHERE b.parent = k.bucket AND b.name = k.key) LIMIT 100`,
		"nested bucket marker in bucket %d without a catalog row: %q"},
	{`SELECT b.id, b.name FROM ctxd_buckets b
		WHERE b.parent <> 0 AND NOT EXISTS (
			SELECT 1 FROM ctxd_kv k WHERE k.bucket = b.parent AND k.head = substring(b.name FROM 1 FOR 1024)
				AND k.key = b.name AND k.value IS NULL) LIMIT 100`,
		"catalog bucket %d has no marker in its parent: %q"},
	{`SELECT b.id, b.name FROM ctxd_buckets b
		WHERE b.parent <> 0 AND NOT EXISTS (SELECT 1 FROM ctxd_buckets p WHERE p.id = b.parent) LIMIT 100`,
		"catalog bucket %d has no parent: %q"},
}

// Close ends open transactions (their later calls return ErrClosed), stops
// the change listener and closes the connections.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	open := make([]*tx, 0, len(db.txs))
	for t := range db.txs {
		open = append(open, t)
	}
	db.mu.Unlock()
	db.close()
	for _, t := range open {
		t.mu.Lock()
		t.fail(ErrClosed)
		t.close()
		t.mu.Unlock()
	}
	db.mu.Lock()
	l := db.listener
	db.mu.Unlock()
	if l != nil {
		l.stop()
	}
	db.pool.Close()
	return nil
}

func (db *DB) checkOpen() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return ErrClosed
	}
	return nil
}

// Changed delivers a value after any process commits a write to this
// store, and once after the change listener reconnects (changes may have
// been missed meanwhile). Values are coalesced: a receiver re-reads.
func (db *DB) Changed() <-chan struct{} {
	db.listen.Do(func() {
		// After Close the listener finds its context done and stops.
		l := startListener(db.closing, db.pool.Config().ConnConfig.Copy())
		db.mu.Lock()
		db.listener = l
		db.mu.Unlock()
	})
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.listener.changed
}

// releaseTimeout bounds the ROLLBACK that returns a connection to the pool
// after its transaction's context is gone.
const releaseTimeout = 5 * time.Second

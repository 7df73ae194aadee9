package pgstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ctxd/ctxd/internal/pgtest"
	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/ctxd/ctxd/vfs/backendtest"
)

func TestMain(m *testing.M) { pgtest.Run(m) }

// waitTimeout bounds how long a test waits for a condition (a
// notification, a lock wait) before it fails.
const waitTimeout = 30 * time.Second

// open opens a store on a fresh database of the shared test server.
func open(t testing.TB) *DB {
	t.Helper()
	return openDSN(t, pgtest.NewDatabase(t))
}

// openDSN opens a store on dsn, and checks and closes it at cleanup.
func openDSN(t testing.TB, dsn string) *DB {
	t.Helper()
	db, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Check(context.Background()); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("Check at cleanup: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// exec runs statements on dsn's database on a connection of their own.
func exec(t testing.TB, dsn string, sqls ...string) {
	t.Helper()
	conn := connect(t, dsn)
	for _, sql := range sqls {
		if _, err := conn.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
}

func connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// withParams returns dsn with its query parameters (user, search_path,
// ...) set, and its database replaced when db is not empty.
func withParams(t testing.TB, dsn, db string, params ...string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if db != "" {
		u.Path = "/" + db
	}
	q := u.Query()
	for i := 0; i+1 < len(params); i += 2 {
		q.Set(params[i], params[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func dbName(t testing.TB, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

func TestBackend(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.DB { return open(t) })
}

// TestChanged_WakesOtherHandle checks that a commit through one DB wakes
// another on the same database (another replica's, in production).
func TestChanged_WakesOtherHandle(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	a, b := openDSN(t, dsn), openDSN(t, dsn)
	changed := b.Changed()
	drain(changed)
	if err := a.Update(t.Context(), func(tx backend.Tx) error {
		bk, err := tx.CreateBucketIfNotExists([]byte("b"))
		if err != nil {
			return err
		}
		return bk.Put([]byte("k"), []byte("v"))
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(waitTimeout):
		t.Fatal("no change notice after another handle's commit")
	}
}

func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// TestSequences_CommitOrder checks what replicas reading an outbox rely
// on: a bucket's sequence values become visible in order, so a reader that
// sees value n has seen every value below it, however commits interleave.
func TestSequences_CommitOrder(t *testing.T) {
	db := open(t)
	const writers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers*each+1)
	var done atomic.Bool
	for range writers {
		wg.Go(func() {
			for range each {
				errs <- db.Batch(context.Background(), func(tx backend.Tx) error {
					b, err := tx.CreateBucketIfNotExists([]byte("log"))
					if err != nil {
						return err
					}
					n, err := b.NextSequence()
					if err != nil {
						return err
					}
					return b.Put(binary.BigEndian.AppendUint64(nil, n), []byte("change"))
				})
			}
		})
	}
	reads := 0
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for !done.Load() {
			reads++
			err := db.View(context.Background(), func(tx backend.Tx) error {
				b := tx.Bucket([]byte("log"))
				if b == nil {
					return nil
				}
				want := uint64(1)
				c := b.Cursor()
				for k, _ := c.First(); k != nil; k, _ = c.Next() {
					if got := binary.BigEndian.Uint64(k); got != want {
						return fmt.Errorf("a snapshot holds change %d but not %d", got, want)
					}
					want++
				}
				if seq := b.Sequence(); seq != want-1 {
					return fmt.Errorf("snapshot's sequence is %d with changes up to %d", seq, want-1)
				}
				return nil
			})
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	done.Store(true)
	<-readerDone
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.View(t.Context(), func(tx backend.Tx) error {
		if s := tx.Bucket([]byte("log")).Sequence(); s != writers*each {
			t.Errorf("sequence %d, want %d", s, writers*each)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d snapshots read while writing", reads)
}

// TestUpdate_RetriesDeadlock makes the server abort an Update's commit as
// a deadlock victim (another session holds a row it updates and then asks
// for the write lock): Update runs fn again and succeeds, unseen by the
// caller.
func TestUpdate_RetriesDeadlock(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	db := openDSN(t, dsn)
	if err := db.Update(t.Context(), func(tx backend.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte("b"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	other := connect(t, dsn)
	ctx := t.Context()
	otherTx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer otherTx.Rollback(context.Background())
	// This session never looks for deadlocks first: the Update's does
	// (after the default second), and so it is the one aborted.
	if _, err := otherTx.Exec(ctx, `SET LOCAL deadlock_timeout = '10min'`); err != nil {
		t.Fatal(err)
	}
	if _, err := otherTx.Exec(ctx, `SELECT * FROM ctxd_buckets WHERE name = 'b' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	updated := make(chan error, 1)
	go func() {
		updated <- db.Update(context.Background(), func(tx backend.Tx) error {
			runs.Add(1)
			_, err := tx.Bucket([]byte("b")).NextSequence()
			return err // the commit then waits for the row
		})
	}()
	// Once the Update waits for the row, ask for the write lock it holds.
	watch := connect(t, dsn)
	waitFor(t, "the Update to wait for the locked row", func() bool {
		var n int
		err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'`).Scan(&n)
		return err == nil && n > 0
	})
	if _, err := otherTx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, db.writeLock); err != nil {
		t.Fatalf("the other session lost the deadlock: %v", err)
	}
	if err := otherTx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-updated; err != nil {
		t.Fatalf("Update: %v", err)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("fn ran %d times, want 2 (one deadlock, one retry)", n)
	}
	if err := db.View(t.Context(), func(tx backend.Tx) error {
		if s := tx.Bucket([]byte("b")).Sequence(); s != 1 {
			t.Errorf("sequence %d after the retried Update, want 1", s)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing the test after waitTimeout.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCheck_FindsDamage damages the catalog and rows behind the store's
// back and expects Check to name each problem.
func TestCheck_FindsDamage(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	db, err := Open(t.Context(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(t.Context(), func(tx backend.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("top"))
		if err != nil {
			return err
		}
		for _, name := range []string{"n1", "n2"} {
			if _, err := b.CreateBucket([]byte(name)); err != nil {
				return err
			}
		}
		return b.Put([]byte("k"), []byte("v"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Check(t.Context()); err != nil {
		t.Fatalf("Check before the damage: %v", err)
	}
	exec(t, dsn,
		`INSERT INTO ctxd_kv (bucket, key, value) VALUES (987654, 'orphan', 'v')`,
		`DELETE FROM ctxd_kv WHERE key = 'n1'`,
		`INSERT INTO ctxd_kv (bucket, key, value) SELECT id, 'ghost', NULL FROM ctxd_buckets WHERE name = 'top'`,
		`INSERT INTO ctxd_buckets (parent, name) VALUES (876543, 'lost')`,
		`UPDATE ctxd_migrations SET version = 7`)
	err = db.Check(t.Context())
	for _, want := range []string{
		`key in bucket 987654, which is not in the catalog: "orphan"`,
		`catalog bucket`, `has no marker in its parent: "n1"`,
		`without a catalog row: "ghost"`,
		`has no parent: "lost"`,
		`schema version 7, expected 1`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check = %v; want it to say %q", err, want)
		}
	}
}

// TestClose_EndsOpenTransactions closes a store while transactions are
// open and a writer waits for the write lock: Close returns, and each of
// them fails with ErrClosed.
func TestClose_EndsOpenTransactions(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	db, err := Open(t.Context(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wtx, err := db.Begin(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := wtx.CreateBucketIfNotExists([]byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	rtx, err := db.Begin(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() {
		waiting <- db.Update(context.Background(), func(backend.Tx) error { return nil })
	}()
	waitForLockWait(t, dsn)
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-waiting; !errors.Is(err, ErrClosed) {
		t.Errorf("Update waiting for the lock: %v, want ErrClosed", err)
	}
	if err := b.Put([]byte("k"), []byte("v")); !errors.Is(err, backend.ErrTxClosed) {
		t.Errorf("Put after Close: %v, want ErrTxClosed", err)
	}
	if err := wtx.Commit(); !errors.Is(err, ErrClosed) {
		t.Errorf("Commit after Close: %v, want ErrClosed", err)
	}
	if rtx.Bucket([]byte("b")) != nil {
		t.Error("a closed read transaction still opens buckets")
	}
	if err := db.View(t.Context(), func(backend.Tx) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("View after Close: %v, want ErrClosed", err)
	}
	if err := db.Batch(t.Context(), func(backend.Tx) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Batch after Close: %v, want ErrClosed", err)
	}
}

// waitForLockWait waits until a session of dsn's database waits for the
// write lock.
func waitForLockWait(t testing.TB, dsn string) {
	t.Helper()
	watch := connect(t, dsn)
	waitFor(t, "a transaction to wait for the write lock", func() bool {
		var n int
		err := watch.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks
			WHERE NOT granted AND locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n)
		return err == nil && n > 0
	})
}

// TestBatch_CallerLeaves checks that a Batch caller whose context ends
// while the write lock is held elsewhere returns ctx.Err(), and that its
// fn does not commit.
func TestBatch_CallerLeaves(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	db := openDSN(t, dsn)
	wtx, err := db.Begin(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	left := make(chan error, 1)
	go func() {
		left <- db.Batch(ctx, func(tx backend.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			return b.Put([]byte("left"), []byte("v"))
		})
	}()
	waitForLockWait(t, dsn)
	cancel()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Errorf("Batch whose caller left: %v", err)
	}
	if err := wtx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := db.View(t.Context(), func(tx backend.Tx) error {
		if b := tx.Bucket([]byte("b")); b != nil && b.Get([]byte("left")) != nil {
			t.Error("the departed caller's write committed")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestBucketNames_AnyLength stores bucket names longer than a B-tree entry
// holds, nested and at the top level.
func TestBucketNames_AnyLength(t *testing.T) {
	db := open(t)
	long := bytes.Repeat([]byte{'n'}, backend.MaxKeySize)
	if err := db.Update(t.Context(), func(tx backend.Tx) error {
		b, err := tx.CreateBucketIfNotExists(long)
		if err != nil {
			return err
		}
		_, err = b.CreateBucket(long)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.View(t.Context(), func(tx backend.Tx) error {
		if b := tx.Bucket(long); b == nil || b.Bucket(long) == nil {
			t.Error("long bucket names not found")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

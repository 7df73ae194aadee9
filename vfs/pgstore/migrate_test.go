package pgstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ctxd/ctxd/internal/pgtest"
	"github.com/ctxd/ctxd/vfs/backend"
)

// versions lists the rows of ctxd_migrations; nil when the table is absent.
func versions(t *testing.T, dsn string) []int {
	t.Helper()
	conn := connect(t, dsn)
	var vs []int
	var exists bool
	if err := conn.QueryRow(t.Context(), `SELECT to_regclass('ctxd_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if !exists {
		return nil
	}
	rows, err := conn.Query(t.Context(), `SELECT version FROM ctxd_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	vs, err = pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func tableExists(t *testing.T, dsn, table string) bool {
	t.Helper()
	var exists bool
	if err := connect(t, dsn).QueryRow(t.Context(), `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	return exists
}

func TestOpen_MigratesFreshDatabase(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	db := openDSN(t, dsn)
	if got := versions(t, dsn); len(got) != latestVersion() || got[len(got)-1] != latestVersion() {
		t.Fatalf("versions after Open = %v, want 1..%d", got, latestVersion())
	}
	for _, table := range tables {
		if !tableExists(t, dsn, table) {
			t.Errorf("table %s missing", table)
		}
	}
	// The vector mirror takes halfvec embeddings.
	exec(t, dsn, `INSERT INTO ctxd_vectors (model, chunk_hash, embedding) VALUES ('m', '\x01', '[1,2,3]')`)
	if err := db.Update(t.Context(), func(tx backend.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte("b"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// Opening again changes nothing and keeps the data.
	again := openDSN(t, dsn)
	if got := versions(t, dsn); len(got) != latestVersion() {
		t.Errorf("versions after a second Open = %v", got)
	}
	if err := again.View(t.Context(), func(tx backend.Tx) error {
		if tx.Bucket([]byte("b")) == nil {
			t.Error("bucket lost by a second Open")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestOpen_ConcurrentMigrations opens one fresh database from several
// goroutines at once (replicas starting together): each migration is
// applied once and every Open succeeds.
func TestOpen_ConcurrentMigrations(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			db, err := Open(context.Background(), dsn, Options{})
			if err == nil {
				err = db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open #%d: %v", i, err)
		}
	}
	if got := versions(t, dsn); len(got) != latestVersion() {
		t.Errorf("versions = %v, want each of 1..%d once", got, latestVersion())
	}
}

func TestOpen_RefusesNewerSchema(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	db, err := Open(t.Context(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	exec(t, dsn, `INSERT INTO ctxd_migrations (version) VALUES (99)`)
	_, err = Open(t.Context(), dsn, Options{})
	if !errors.Is(err, backend.ErrSchemaTooNew) {
		t.Fatalf("Open of a newer schema: %v, want ErrSchemaTooNew", err)
	}
	for _, want := range []string{"version 99", "up to 1", "upgrade ctxd"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestOpen_InterruptedMigration kills the connection of a migration just
// before its commit: the schema stays at the previous version, untouched,
// and the next Open completes the migration.
func TestOpen_InterruptedMigration(t *testing.T) {
	saved := migrations
	t.Cleanup(func() { migrations, beforeMigrationCommit = saved, nil })
	// A second step, of this test only, to interrupt between two versions.
	migrations = append(saved[:len(saved):len(saved)], migration{
		version: len(saved) + 1,
		sql:     `CREATE TABLE ctxd_test_step (x int); ALTER TABLE ctxd_kv ADD COLUMN test_step int`,
	})
	dsn := pgtest.NewDatabase(t)
	killer := connect(t, dsn)
	killAt := 0
	beforeMigrationCommit = func(ctx context.Context, conn *pgx.Conn, version int) {
		if version != killAt {
			return
		}
		var killed bool
		err := killer.QueryRow(ctx, `SELECT pg_terminate_backend($1, 10000)`, conn.PgConn().PID()).Scan(&killed)
		if err != nil || !killed {
			t.Errorf("pg_terminate_backend: %v, %v", killed, err)
		}
	}

	for _, step := range []struct {
		kill    int
		before  []int
		present []string
		absent  []string
	}{
		{kill: 1, before: nil, absent: []string{"ctxd_migrations", "ctxd_kv", "ctxd_test_step"}},
		{kill: 2, before: []int{1}, present: []string{"ctxd_kv"}, absent: []string{"ctxd_test_step"}},
	} {
		killAt = step.kill
		_, err := Open(t.Context(), dsn, Options{})
		if err == nil {
			t.Fatalf("Open survived the kill of migration %d", step.kill)
		}
		if !backend.IsUnavailable(err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open whose migration was killed: %q, want one line saying the server went away", err)
		}
		if got := versions(t, dsn); !equalInts(got, step.before) {
			t.Errorf("after killing migration %d: versions %v, want %v", step.kill, got, step.before)
		}
		for _, table := range step.absent {
			if tableExists(t, dsn, table) {
				t.Errorf("after killing migration %d: table %s exists", step.kill, table)
			}
		}
		for _, table := range step.present {
			if !tableExists(t, dsn, table) {
				t.Errorf("after killing migration %d: table %s missing", step.kill, table)
			}
		}
		if step.kill == 2 {
			var n int
			if err := connect(t, dsn).QueryRow(t.Context(), `SELECT count(*) FROM information_schema.columns
				WHERE table_name = 'ctxd_kv' AND column_name = 'test_step'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("half of the killed migration stayed: column count %d, %v", n, err)
			}
		}
		// With the kill off, the next Open finishes the job.
		killAt = 0
		db, err := Open(t.Context(), dsn, Options{})
		if err != nil {
			t.Fatalf("Open after the interrupted migration %d: %v", step.kill, err)
		}
		if got := versions(t, dsn); len(got) != len(migrations) {
			t.Errorf("versions after the retried Open: %v", got)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if step.kill == 1 {
			// Back to version 1 for the next step.
			exec(t, dsn, `DROP TABLE ctxd_test_step`, `ALTER TABLE ctxd_kv DROP COLUMN test_step`,
				`DELETE FROM ctxd_migrations WHERE version = 2`)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ctxd/ctxd/vfs/backend"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one step of the schema: migrations/NNNN_name.sql takes the
// schema from version NNNN-1 to NNNN.
type migration struct {
	version int
	sql     string
}

// migrations is every step this binary knows, in order.
var migrations = loadMigrations()

func loadMigrations() []migration {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		panic(err)
	}
	var ms []migration
	for _, name := range names {
		num, _, _ := strings.Cut(path.Base(name), "_")
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			panic("pgstore: migration file without a version: " + name)
		}
		sql, err := migrationFiles.ReadFile(name)
		if err != nil {
			panic(err)
		}
		ms = append(ms, migration{version: v, sql: string(sql)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			panic(fmt.Sprintf("pgstore: migrations must be numbered 1, 2, ...: found %d at position %d", m.version, i+1))
		}
	}
	return ms
}

// latestVersion is the schema version this binary writes.
func latestVersion() int { return migrations[len(migrations)-1].version }

// beforeMigrationCommit, when set (by tests), runs inside each migration's
// transaction just before its commit.
var beforeMigrationCommit func(ctx context.Context, conn *pgx.Conn, version int)

// schemaVersion reads the version of the store's schema: 0 for a database
// ctxd never touched.
func schemaVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('ctxd_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, nil
	}
	var v int
	err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM ctxd_migrations`).Scan(&v)
	return v, err
}

func tooNew(v int) error {
	return fmt.Errorf("%w: the database is at schema version %d and this ctxd knows versions up to %d; upgrade ctxd",
		backend.ErrSchemaTooNew, v, latestVersion())
}

// migrate brings the schema to latestVersion. A current schema costs one
// query and no lock, and needs no right to create anything. Otherwise each
// missing step runs in its own transaction under an advisory lock, so
// replicas starting together apply it once; DDL being transactional, a
// step cut short (a kill, a lost connection) leaves the previous version.
func migrate(ctx context.Context, pool *pgxpool.Pool, lockKey int64) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	v, err := schemaVersion(ctx, conn)
	if err != nil {
		return err
	}
	if v > latestVersion() {
		return tooNew(v)
	}
	for _, m := range migrations[v:] {
		if err := applyMigration(ctx, conn.Conn(), lockKey, m); err != nil {
			return err
		}
	}
	return nil
}

func applyMigration(ctx context.Context, conn *pgx.Conn, lockKey int64, m migration) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS ctxd_migrations (
		version    integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	v, err := schemaVersion(ctx, tx)
	switch {
	case err != nil:
		return err
	case v > latestVersion():
		return tooNew(v)
	case v >= m.version: // another process applied it meanwhile
		return tx.Commit(ctx)
	case v != m.version-1:
		return fmt.Errorf("pgstore: schema at version %d cannot take migration %d", v, m.version)
	}
	if _, err := tx.Exec(ctx, m.sql); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO ctxd_migrations (version) VALUES ($1)`, m.version); err != nil {
		return err
	}
	if beforeMigrationCommit != nil {
		beforeMigrationCommit(ctx, conn, m.version)
	}
	if err := tx.Commit(ctx); err != nil {
		if errors.Is(err, pgx.ErrTxCommitRollback) {
			return fmt.Errorf("pgstore: migration %d rolled back", m.version)
		}
		return err
	}
	return nil
}

package pgtest_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ctxd/ctxd/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Run(m) }

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestNewDatabase_Isolated(t *testing.T) {
	t.Parallel()
	dsnA, dsnB := pgtest.NewDatabase(t), pgtest.NewDatabase(t)
	if dsnA == dsnB {
		t.Fatalf("two databases share the DSN %s", dsnA)
	}
	a, b := connect(t, dsnA), connect(t, dsnB)
	if _, err := a.Exec(t.Context(), "CREATE TABLE items (ref text PRIMARY KEY); INSERT INTO items VALUES ('work:/a.md')"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := a.QueryRow(t.Context(), "SELECT count(*) FROM items").Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows in the database written = %d, %v; want 1", n, err)
	}
	_, err := b.Exec(t.Context(), "SELECT * FROM items")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42P01" { // undefined_table
		t.Fatalf("the other database: %v; want undefined_table", err)
	}
}

func TestNewDatabase_Extensions(t *testing.T) {
	t.Parallel()
	conn := connect(t, pgtest.NewDatabase(t))
	var v string
	var dist float64
	if err := conn.QueryRow(t.Context(), "SELECT '[1,2,3]'::vector::text, '[1,2,3]'::vector <-> '[1,2,5]'::vector").Scan(&v, &dist); err != nil {
		t.Fatal(err)
	}
	if v != "[1,2,3]" || dist != 2 {
		t.Fatalf("vector: %s, distance %v; want [1,2,3], 2", v, dist)
	}
	// The wheel ships these too; the PostgreSQL backend relies on them.
	for _, ext := range []string{"pg_trgm", "btree_gist"} {
		if _, err := conn.Exec(t.Context(), "CREATE EXTENSION "+ext); err != nil {
			t.Errorf("CREATE EXTENSION %s: %v", ext, err)
		}
	}
}

func TestNewDatabase_DroppedAtCleanup(t *testing.T) {
	t.Parallel()
	var name string
	t.Run("uses", func(st *testing.T) {
		// Closed by the parent test, after the database is dropped: an open
		// connection must not keep it from being dropped.
		conn := connect(t, pgtest.NewDatabase(st))
		if err := conn.QueryRow(st.Context(), "SELECT current_database()").Scan(&name); err != nil {
			st.Fatal(err)
		}
	})
	conn := connect(t, pgtest.NewDatabase(t))
	var exists bool
	if err := conn.QueryRow(t.Context(), "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if name == "" || exists {
		t.Fatalf("database %q still exists after its test ended", name)
	}
}

func TestServer_Settings(t *testing.T) {
	t.Parallel()
	conn := connect(t, pgtest.NewDatabase(t))
	for setting, want := range map[string]string{"fsync": "on", "listen_addresses": "", "server_version_num": "180003"} {
		var got string
		if err := conn.QueryRow(t.Context(), "SELECT current_setting($1)", setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %q; want %q", setting, got, want)
		}
	}
	var dataDir string
	if err := conn.QueryRow(t.Context(), "SELECT current_setting('data_directory')").Scan(&dataDir); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	uid := info.Sys().(*syscall.Stat_t).Uid
	if os.Geteuid() == 0 && uid == 0 {
		t.Errorf("running as root, the data directory %s is owned by root; want nobody", dataDir)
	}
}

func TestServer_StopStart(t *testing.T) {
	t.Parallel()
	srv := pgtest.StartServer(t)
	dsn := srv.NewDatabase(t)
	conn := connect(t, dsn)
	if _, err := conn.Exec(t.Context(), "CREATE TABLE kept (v vector(3)); INSERT INTO kept VALUES ('[1,2,3]')"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := conn.Ping(t.Context()); err == nil {
		t.Fatal("the connection still works after Stop")
	}
	if _, err := pgx.Connect(t.Context(), dsn); err == nil {
		t.Fatal("a new connection succeeded after Stop")
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := connect(t, dsn).QueryRow(t.Context(), "SELECT v::text FROM kept").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != "[1,2,3]" {
		t.Fatalf("after Stop and Start: %s; want [1,2,3]", v)
	}
	if err := srv.Start(); err == nil || !strings.Contains(err.Error(), "running") {
		t.Fatalf("Start of a running server: %v; want an error", err)
	}
}

func TestStartServer_Independent(t *testing.T) {
	t.Parallel()
	own := pgtest.StartServer(t)
	dsnOwn, dsnShared := own.NewDatabase(t), pgtest.NewDatabase(t)
	host := func(dsn string) string {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Host
	}
	if host(dsnOwn) == host(dsnShared) {
		t.Fatalf("StartServer shares the socket directory %s with the shared server", host(dsnOwn))
	}
	if err := own.Stop(); err != nil {
		t.Fatal(err)
	}
	// The shared server runs on.
	connect(t, dsnShared)
}

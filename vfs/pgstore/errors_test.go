package pgstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxd/ctxd/internal/pgtest"
	"github.com/ctxd/ctxd/vfs/backend"
)

var roleSeq atomic.Int64

// newRole creates a login role without privileges and returns its name.
func newRole(t *testing.T, dsn string) string {
	t.Helper()
	name := fmt.Sprintf("ctxd_role_%d_%d", time.Now().UnixNano()%1e6, roleSeq.Add(1))
	exec(t, dsn, "CREATE ROLE "+name+" LOGIN")
	return name
}

// wantOneLine fails unless err is one line that says every one of want
// and none of the driver's own wording.
func wantOneLine(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one saying %q", want)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || strings.Contains(msg, "failed to connect to") || strings.Contains(msg, "SQLSTATE") {
		t.Errorf("error is not one clean line: %q", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
}

// hinted extracts the SQL statement between backquotes that an error
// tells the operator to run.
func hinted(t *testing.T, err error) string {
	t.Helper()
	m := regexp.MustCompile("`((?:GRANT|CREATE) [^`]*)`").FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("error %q names no statement to run", err)
	}
	return m[1]
}

func TestOpen_Errors(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx := t.Context()

	t.Run("MissingDatabase", func(t *testing.T) {
		_, err := Open(ctx, withParams(t, dsn, "no_such_db"), Options{})
		wantOneLine(t, err, `database "no_such_db" does not exist`, "createdb no_such_db", "CREATE DATABASE no_such_db;")
		if backend.IsUnavailable(err) {
			t.Error("a missing database reported as the server being unavailable")
		}
	})
	t.Run("MissingRole", func(t *testing.T) {
		_, err := Open(ctx, withParams(t, dsn, "", "user", "nobody_here"), Options{})
		wantOneLine(t, err, `role "nobody_here" does not exist`, "CREATE ROLE nobody_here LOGIN")
	})
	t.Run("ServerDown", func(t *testing.T) {
		_, err := Open(ctx, "postgres:///x?host=/nonexistent/socket/dir&user=u&sslmode=disable", Options{})
		if !backend.IsUnavailable(err) {
			t.Fatalf("Open with no server: %v, want Unavailable", err)
		}
		wantOneLine(t, err, "cannot reach PostgreSQL at /nonexistent/socket/dir:5432", "no such file or directory", "reconnects")
	})
	t.Run("InvalidURL", func(t *testing.T) {
		_, err := Open(ctx, "postgres://a b@/", Options{})
		if err == nil || !strings.Contains(err.Error(), "invalid store URL") {
			t.Errorf("Open of a bad URL: %v", err)
		}
	})
	t.Run("NoSchema", func(t *testing.T) {
		_, err := Open(ctx, withParams(t, dsn, "", "search_path", "no_such_schema"), Options{})
		wantOneLine(t, err, "no schema of the search_path exists", "CREATE SCHEMA")
	})
	t.Run("NoCreateOnSchema", func(t *testing.T) {
		// The database has the extension; the role may not create tables.
		role := newRole(t, dsn)
		_, err := Open(ctx, withParams(t, dsn, "", "user", role), Options{})
		grant := hinted(t, err)
		wantOneLine(t, err, fmt.Sprintf("role %q may not create ctxd's tables in schema \"public\"", role),
			"GRANT CREATE ON SCHEMA public TO "+role+";")
		// What the error says to run is enough.
		exec(t, dsn, grant)
		openDSN(t, withParams(t, dsn, "", "user", role))
	})
	t.Run("NoExtensionRights", func(t *testing.T) {
		// A database without the vector extension, and a role that may
		// create tables but not the extension.
		bare := freshDatabase(t, dsn)
		role := newRole(t, dsn)
		exec(t, bare, "GRANT CREATE ON SCHEMA public TO "+role)
		_, err := Open(ctx, withParams(t, bare, "", "user", role), Options{})
		wantOneLine(t, err, fmt.Sprintf("role %q may not create the vector extension", role),
			"CREATE EXTENSION vector;", "as a superuser", "pgvector must be installed")
		exec(t, bare, hinted(t, err))
		openDSN(t, withParams(t, bare, "", "user", role))
	})
	t.Run("ExtensionNotInstalled", func(t *testing.T) {
		// pgvector is installed here, so ask for an extension that is not:
		// the server's error goes through the same translation.
		conn := connect(t, dsn)
		_, err := conn.Exec(ctx, `CREATE EXTENSION no_such_extension`)
		srv := server{addr: "host:5432", dbname: "db", user: "u", schema: "public"}
		wantOneLine(t, srv.startupError(ctx, err), "has no pgvector extension", "install pgvector on the server",
			"CREATE EXTENSION vector;")
	})
	t.Run("NoTableGrants", func(t *testing.T) {
		// Tables made by their owner; a role that may only connect.
		openDSN(t, dsn)
		role := newRole(t, dsn)
		_, err := Open(ctx, withParams(t, dsn, "", "user", role), Options{})
		wantOneLine(t, err, fmt.Sprintf("role %q lacks", role), "permission denied for table ctxd_migrations",
			"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "+role+";")
		// With the version table readable, the check names each missing grant.
		exec(t, dsn, "GRANT SELECT ON ctxd_migrations TO "+role, "GRANT SELECT, INSERT ON ctxd_kv TO "+role)
		_, err = Open(ctx, withParams(t, dsn, "", "user", role), Options{})
		wantOneLine(t, err, "ctxd_buckets: DELETE, INSERT, SELECT, UPDATE", "ctxd_kv: DELETE, UPDATE",
			"ctxd_vectors: DELETE, INSERT, SELECT, UPDATE")
		exec(t, dsn, hinted(t, err))
		db := openDSN(t, withParams(t, dsn, "", "user", role))
		if err := db.Update(ctx, func(tx backend.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("granted"))
			if err != nil {
				return err
			}
			return b.Put([]byte("k"), []byte("v"))
		}); err != nil {
			t.Errorf("Update with the hinted grants: %v", err)
		}
	})
}

// freshDatabase creates a database without the vector extension on dsn's
// server and returns its DSN.
func freshDatabase(t *testing.T, dsn string) string {
	t.Helper()
	name := fmt.Sprintf("bare_%d_%d", time.Now().UnixNano()%1e6, roleSeq.Add(1))
	admin := withParams(t, dsn, "postgres")
	exec(t, admin, "CREATE DATABASE "+name)
	t.Cleanup(func() { exec(t, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	return withParams(t, dsn, name)
}

// TestUnavailable_ServerStopped stops the server under an open store:
// calls fail with backend.Unavailable naming the server, a transaction
// cut off mid-way fails whole, and once the server is back the same DB
// works again, change notices included.
func TestUnavailable_ServerStopped(t *testing.T) {
	srv := pgtest.StartServer(t)
	dsn := srv.NewDatabase(t)
	db := openDSN(t, dsn)
	put := func(ctx context.Context, key string) error {
		return db.Update(ctx, func(tx backend.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			return b.Put([]byte(key), []byte("v"))
		})
	}
	if err := put(t.Context(), "before"); err != nil {
		t.Fatal(err)
	}
	changed := db.Changed()

	// The server goes away in the middle of a read transaction.
	err := db.View(t.Context(), func(tx backend.Tx) error {
		if v := tx.Bucket([]byte("b")).Get([]byte("before")); string(v) != "v" {
			t.Errorf("Get before the stop = %q", v)
		}
		if err := srv.Stop(); err != nil {
			t.Fatal(err)
		}
		if v := tx.Bucket([]byte("b")).Get([]byte("not read yet")); v != nil {
			t.Errorf("Get with the server stopped = %q, want nil", v)
		}
		return errors.New("fn's own conclusion from the nil")
	})
	if !backend.IsUnavailable(err) {
		t.Fatalf("View cut off by the stop: %v, want Unavailable (the transaction's error, not fn's)", err)
	}
	wantOneLine(t, err, "store unavailable", "cannot reach PostgreSQL at", "check that the server is running")

	drain(changed)
	for name, call := range map[string]func() error{
		"View":   func() error { return db.View(t.Context(), func(backend.Tx) error { return nil }) },
		"Update": func() error { return put(t.Context(), "during") },
		"Batch":  func() error { return db.Batch(t.Context(), func(backend.Tx) error { return nil }) },
		"Usage":  func() error { _, err := db.Usage(t.Context()); return err },
	} {
		if err := call(); !backend.IsUnavailable(err) {
			t.Errorf("%s with the server stopped: %v, want Unavailable", name, err)
		} else {
			wantOneLine(t, err, "cannot reach PostgreSQL at")
		}
	}

	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := put(t.Context(), "after"); err != nil {
		t.Fatalf("Update after the server came back: %v", err)
	}
	if err := db.View(t.Context(), func(tx backend.Tx) error {
		b := tx.Bucket([]byte("b"))
		if string(b.Get([]byte("before"))) != "v" || string(b.Get([]byte("after"))) != "v" || b.Get([]byte("during")) != nil {
			t.Error("data after the restart is not what was committed")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The listener is back: a notice arrives (its reconnection's, which
	// says changes may have been missed, or the commit's).
	select {
	case <-changed:
	case <-time.After(waitTimeout):
		t.Fatal("no change notice after the listener's reconnection")
	}
}

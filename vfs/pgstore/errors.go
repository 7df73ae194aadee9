package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ctxd/ctxd/vfs/backend"
)

// ErrClosed is returned by a DB's methods after Close, and by a
// transaction's when Close ended it; it wraps backend.ErrTxClosed.
var ErrClosed = fmt.Errorf("store closed: %w", backend.ErrTxClosed)

// server names the database a DB talks to, for messages.
type server struct {
	addr   string // host:port, or the unix socket directory:port
	dbname string
	user   string
	schema string // set once connected
}

func (s server) String() string {
	return fmt.Sprintf("PostgreSQL at %s (database %q)", s.addr, s.dbname)
}

// cleanError is an error whose text is one line written for the operator,
// keeping the driver's error underneath for errors.Is and errors.As.
type cleanError struct {
	msg string
	err error
}

func (e *cleanError) Error() string { return e.msg }
func (e *cleanError) Unwrap() error { return e.err }

func clean(err error, format string, args ...any) error {
	return &cleanError{msg: "pgstore: " + fmt.Sprintf(format, args...), err: err}
}

// sqlState returns the SQLSTATE of a server error, "" for other errors.
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// retryable reports a transient conflict a write transaction may simply run
// again: a serialization failure or a deadlock.
func retryable(err error) bool {
	switch sqlState(err) {
	case "40001", "40P01":
		return true
	}
	return false
}

// connectionLost reports an error that says the server is out of reach:
// it is down, restarting, refusing connections, or the connection broke.
func connectionLost(err error) bool {
	if err == nil {
		return false
	}
	if code := sqlState(err); code != "" {
		switch {
		case strings.HasPrefix(code, "08"), // connection exception
			code == "57P01", // admin_shutdown
			code == "57P02", // crash_shutdown
			code == "57P03", // cannot_connect_now
			code == "53300": // too_many_connections
			return true
		}
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

// unavailable wraps a lost connection as backend.Unavailable: one line
// naming the server and the cause, with the operator's hint.
func (s server) unavailable(err error) error {
	return &backend.Unavailable{
		Err:  &cleanError{msg: fmt.Sprintf("cannot reach %s: %s", s, cause(err)), err: err},
		Hint: "check that the server is running and reachable; ctxd reconnects by itself once it is",
	}
}

// cause is the innermost text of a connection error: "connection refused",
// "the server is shutting down", not the driver's whole chain.
func cause(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the server closed the connection"
	case errors.Is(err, pgconn.ErrConnClosed), errors.Is(err, net.ErrClosed):
		return "the connection was closed"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	return err.Error()
}

// classify turns an error of a running store into what callers see: the
// caller's own cancellation as ctx.Err(), a lost server as
// backend.Unavailable, a missing grant as a line naming it; anything else
// keeps the server's text.
func (s server) classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	var cleaned *cleanError
	var un *backend.Unavailable
	if errors.As(err, &cleaned) || errors.As(err, &un) {
		return err
	}
	if connectionLost(err) {
		return s.unavailable(err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if pe.Code == "42501" {
			return s.grantError(err, pe)
		}
		return clean(err, "%s: %s (SQLSTATE %s)", s, pe.Message, pe.Code)
	}
	return fmt.Errorf("pgstore: %w", err)
}

// startupError turns an error of Open into one line saying what to do.
func (s server) startupError(ctx context.Context, err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || ctx.Err() != nil || connectionLost(err) {
		return s.classify(ctx, err)
	}
	switch {
	case pe.Code == "3D000":
		return clean(err, "database %q does not exist on PostgreSQL at %s: create it with `createdb %s` or `CREATE DATABASE %s;`",
			s.dbname, s.addr, s.dbname, quoteIdent(s.dbname))
	case pe.Code == "28P01":
		return clean(err, "%s refused the password of role %q: check the password in the store URL (or ~/.pgpass)", s, s.user)
	case pe.Code == "28000" && strings.Contains(pe.Message, "does not exist"):
		return clean(err, "role %q does not exist on PostgreSQL at %s: create it with `CREATE ROLE %s LOGIN PASSWORD '...';`",
			s.user, s.addr, quoteIdent(s.user))
	case pe.Code == "28000":
		return clean(err, "%s does not let role %q connect (%s): allow it in pg_hba.conf", s, s.user, pe.Message)
	case pe.Code == "0A000" && strings.Contains(pe.Message, "extension"):
		return clean(err, "%s has no pgvector extension: install pgvector on the server (https://github.com/pgvector/pgvector), then run `CREATE EXTENSION vector;` as a superuser in database %q",
			s, s.dbname)
	case pe.Code == "42501" && strings.Contains(pe.Message, "extension"):
		return clean(err, "role %q may not create the vector extension in %s: run `CREATE EXTENSION vector;` as a superuser in that database (pgvector must be installed on the server)",
			s.user, s)
	case pe.Code == "42501" && strings.Contains(pe.Message, "schema"):
		return clean(err, "role %q may not create ctxd's tables in schema %q of %s: run `GRANT CREATE ON SCHEMA %s TO %s;` as the schema's owner, or let the owner run ctxd once to create them",
			s.user, s.schema, s, quoteIdent(s.schema), quoteIdent(s.user))
	}
	return s.classify(ctx, err)
}

// grantError names the grant a role lacks on ctxd's tables.
func (s server) grantError(err error, pe *pgconn.PgError) error {
	return clean(err, "role %q lacks a privilege in %s (%s): run `%s` as the tables' owner",
		s.user, s, pe.Message, grantHint(s.schema, s.user))
}

func grantHint(schema, user string) string {
	return fmt.Sprintf("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %s TO %s;", quoteIdent(schema), quoteIdent(user))
}

// quoteIdent quotes a name for SQL only where it needs it, so a hint reads
// like what an operator would type.
func quoteIdent(name string) string {
	plain := name != ""
	for i, r := range name {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// address renders a connection's target for messages.
func address(host string, port uint16) string {
	return host + ":" + strconv.Itoa(int(port))
}

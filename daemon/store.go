package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ctxd/ctxd/vfs"
	vfsbackend "github.com/ctxd/ctxd/vfs/backend"
	"github.com/ctxd/ctxd/vfs/boltstore"
)

// This file is the store the daemon serves, as the daemon names it: the
// bbolt file in the data directory, or a PostgreSQL database that replicas
// share; how logs, status and errors name it (never with its password);
// and this replica's id.

// replicaIDFile (in the data directory) holds this replica's id on a shared
// store: a UUID made on first start.
const replicaIDFile = "replica-id"

// localReplica is the replica id of a store no other daemon shares (vfs's
// default).
const localReplica = "local"

// redacted replaces a password wherever the daemon shows a store URL.
const redacted = "xxxxx"

// storeInfo is how the daemon names its store.
type storeInfo struct {
	// location is the bbolt file's path, or the URL with its password
	// replaced by redacted.
	location string
	// shared is set for a PostgreSQL store, which replicas may share.
	shared bool
	// endpoint is a PostgreSQL store's host:port/database, for hints.
	endpoint string
	// secret is the password (from the URL or the environment), scrubbed
	// from every text the daemon shows or logs.
	secret string
}

// validateStore checks the store setting: empty or a PostgreSQL URL that
// parses. The setting itself is never echoed: it may hold a password.
func validateStore(s string) error {
	if s == "" {
		return nil
	}
	if !vfs.IsPostgresURL(s) {
		return errors.New(`config: store must be empty (the bbolt file ctxd.db in data_dir) or a postgres:// or postgresql:// URL, ` +
			`for example "postgres://ctxd@db.example:5432/ctxd"; keyword=value connection strings are not accepted`)
	}
	if _, err := pgconn.ParseConfig(s); err != nil {
		return fmt.Errorf("config: store %s: %s", RedactStoreURL(s), scrubText(err.Error(), passwordOf(s)))
	}
	return nil
}

// newStoreInfo describes the store cfg names (validated).
func newStoreInfo(cfg Config) *storeInfo {
	if cfg.Store == "" {
		return &storeInfo{location: filepath.Join(cfg.DataDir, boltstore.FileName)}
	}
	si := &storeInfo{location: RedactStoreURL(cfg.Store), shared: true, endpoint: "(unparsable URL)", secret: passwordOf(cfg.Store)}
	if pc, err := pgconn.ParseConfig(cfg.Store); err == nil {
		si.endpoint = net.JoinHostPort(pc.Host, strconv.Itoa(int(pc.Port))) + "/" + pc.Database
		if pc.Password != "" { // PGPASSWORD or a passfile may supply it
			si.secret = pc.Password
		}
	}
	return si
}

// passwordOf returns the password a PostgreSQL URL carries, in its user
// info or its password parameter.
func passwordOf(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	if p, ok := u.User.Password(); ok {
		return p
	}
	return u.Query().Get("password")
}

// RedactStoreURL returns a store URL with its password, in the user info
// or the password parameter, shown as xxxxx: how ctxd names a PostgreSQL
// store wherever it shows one.
func RedactStoreURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", redacted)
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// scrub replaces the store's password in text.
func (si *storeInfo) scrub(text string) string { return scrubText(text, si.secret) }

// scrubText replaces secret, as written and as URL-escaped, in text.
func scrubText(text, secret string) string {
	if secret == "" {
		return text
	}
	userinfo := strings.TrimPrefix(url.UserPassword("", secret).String(), ":")
	for _, s := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), userinfo} {
		text = strings.ReplaceAll(text, s, redacted)
	}
	return text
}

// unreachable returns the store's report that its server is out of reach,
// if err carries one. (The daemon's own type named backend hides the
// package's name here.)
func unreachable(err error) (*vfsbackend.Unavailable, bool) {
	var u *vfsbackend.Unavailable
	return u, errors.As(err, &u)
}

// unavailableHint is the hint of an UNAVAILABLE answer when the store does
// not answer.
func (si *storeInfo) unavailableHint() string {
	where := "the store"
	if si.shared {
		where = "the store's PostgreSQL at " + si.endpoint
	}
	return where + " is unreachable; the daemon retries by itself and serves again once it answers " +
		"(health reports NOT_SERVING meanwhile); check the server, then retry the call."
}

// openStore opens the store cfg names. On a shared store this replica
// reports under the id kept in the data directory and its host name.
// onWrite is told of every committed write (vfs.Options.OnWrite).
func openStore(cfg Config, si *storeInfo, onWrite func(items int)) (*vfs.Store, string, error) {
	opts := vfs.Options{
		OnWrite:         onWrite,
		MaxContentBytes: cfg.MaxContentBytes,
		ContextRoots:    cfg.ContextRoots,
		History:         vfs.Retention{Keep: cfg.HistoryKeep, MinAge: cfg.HistoryMinAge.Duration},
		HistoryOff:      !cfg.History,
		ReplicaID:       localReplica,
	}
	location := si.location
	if si.shared {
		id, err := loadReplicaID(cfg.DataDir)
		if err != nil {
			return nil, "", err
		}
		host, err := os.Hostname()
		if err != nil {
			return nil, "", fmt.Errorf("host name for the replica record: %w", err)
		}
		opts.ReplicaID, opts.ReplicaHost, location = id, host, cfg.Store
	}
	s, err := vfs.Open(location, opts)
	if err != nil && si.shared {
		// The text only: the error's chain may hold the URL.
		return nil, "", fmt.Errorf("store %s: %s", si.location, si.scrub(err.Error()))
	}
	if err != nil {
		return nil, "", fmt.Errorf("open store: %w", err)
	}
	return s, opts.ReplicaID, nil
}

// loadReplicaID returns the replica id kept in dataDir, making one on the
// first start.
func loadReplicaID(dataDir string) (string, error) {
	name := filepath.Join(dataDir, replicaIDFile)
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		id := uuid.NewString()
		if err := writeFileAtomic(name, []byte(id+"\n"), 0o600); err != nil {
			return "", fmt.Errorf("write %s: %w", name, err)
		}
		return id, nil
	}
	if err != nil {
		return "", fmt.Errorf("read replica id: %w", err)
	}
	id := strings.TrimSpace(string(b))
	if _, err := uuid.Parse(id); err != nil {
		return "", fmt.Errorf("%s does not hold a replica id (a UUID): remove it and ctxd makes a new one "+
			"(the old id then shows in `ctxd status` until it counts as gone)", name)
	}
	return id, nil
}

// scrubHandler passes records on with the store's password replaced in the
// message and every attribute, whatever code logged them (a driver error
// quoting its connection string included).
type scrubHandler struct {
	next slog.Handler
	si   *storeInfo
}

// scrubbingLogger returns log, scrubbing the store's password when it has one.
func scrubbingLogger(log *slog.Logger, si *storeInfo) *slog.Logger {
	if si.secret == "" {
		return log
	}
	return slog.New(scrubHandler{next: log.Handler(), si: si})
}

func (h scrubHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.si.scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = h.attr(a)
	}
	return scrubHandler{next: h.next.WithAttrs(out), si: h.si}
}

func (h scrubHandler) WithGroup(name string) slog.Handler {
	return scrubHandler{next: h.next.WithGroup(name), si: h.si}
}

// attr scrubs one attribute: strings and groups in place, any other value
// by its text when that holds the password.
func (h scrubHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.si.scrub(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, ga := range g {
			out[i] = h.attr(ga)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		text := fmt.Sprint(v.Any())
		if s := h.si.scrub(text); s != text {
			return slog.String(a.Key, s)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

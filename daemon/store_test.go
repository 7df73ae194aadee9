package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	vfsbackend "github.com/ctxd/ctxd/vfs/backend"
	"github.com/ctxd/ctxd/vfs/boltstore"
)

// testSecret is a password as written in a URL (percent-encoded: the
// password is "s3cr%t/pw"); no text the daemon shows may hold "s3cr".
const testSecret = "s3cr%25t%2Fpw"

func TestValidateStore(t *testing.T) {
	for _, ok := range []string{"", "postgres://ctxd@db.example:5432/ctxd", "postgresql:///ctxd?host=/run/postgresql",
		"postgres://u:" + testSecret + "@h/db?sslmode=disable"} {
		if err := validateStore(ok); err != nil {
			t.Errorf("validateStore(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"mysql://u:" + testSecret + "@h/db", "host=h password=" + testSecret, "/var/lib/ctxd/ctxd.db",
		"postgres://u:" + testSecret + "@h:notaport/db"} {
		err := validateStore(bad)
		if err == nil || !strings.Contains(err.Error(), "config: store") {
			t.Errorf("validateStore(%q) = %v, want an error naming the store setting", bad, err)
			continue
		}
		if strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), "s3cr") {
			t.Errorf("validateStore error shows the password: %v", err)
		}
	}
}

func TestStoreInfo_RedactsPassword(t *testing.T) {
	tests := []struct {
		store, location, endpoint string
	}{
		{"postgres://ctxd:" + testSecret + "@db.example:5433/mem?sslmode=disable",
			"postgres://ctxd:xxxxx@db.example:5433/mem?sslmode=disable", "db.example:5433/mem"},
		{"postgresql://ctxd@db.example/mem?password=" + testSecret + "&sslmode=disable",
			"postgresql://ctxd@db.example/mem?password=xxxxx&sslmode=disable", "db.example:5432/mem"},
		{"postgres:///mem?host=/tmp/pg&user=postgres", "postgres:///mem?host=/tmp/pg&user=postgres", "/tmp/pg:5432/mem"},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		cfg.Store = tt.store
		si := newStoreInfo(cfg)
		if !si.shared || si.location != tt.location || si.endpoint != tt.endpoint {
			t.Errorf("newStoreInfo(%q) = %+v, want location %q, endpoint %q", tt.store, si, tt.location, tt.endpoint)
		}
		if strings.Contains(tt.store, testSecret) {
			if got := si.scrub("dial " + tt.store + ": refused"); strings.Contains(got, "s3cr") {
				t.Errorf("scrub left the password: %q", got)
			}
		}
	}
	cfg := DefaultConfig()
	if si := newStoreInfo(cfg); si.shared || si.location != filepath.Join(cfg.DataDir, boltstore.FileName) {
		t.Errorf("default store = %+v, want the bbolt file in the data dir", si)
	}
}

func TestScrubbingLogger_HidesPasswordEverywhere(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Store = "postgres://ctxd:" + testSecret + "@db.example/mem"
	si := newStoreInfo(cfg)
	var buf bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&buf, nil), slog.NewJSONHandler(&buf, nil)} {
		log := scrubbingLogger(slog.New(h), si).With("store", cfg.Store).WithGroup("g")
		log.Error("connect s3cr%t/pw", "err", fmt.Errorf("dial %s: %w", cfg.Store, errors.ErrUnsupported),
			"url", cfg.Store, slog.Group("nested", "dsn", cfg.Store), "n", 3)
	}
	out := buf.String()
	if strings.Contains(out, "s3cr") {
		t.Fatalf("log output holds the password:\n%s", out)
	}
	if strings.Count(out, "xxxxx") < 10 || !strings.Contains(out, "n=3") {
		t.Errorf("log output lost its attributes:\n%s", out)
	}
	if l := slogDiscard(); scrubbingLogger(l, &storeInfo{}) != l {
		t.Error("a store without a password got a scrubbing logger")
	}
}

func TestToStatus_UnavailableStore(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Store = "postgres://ctxd:" + testSecret + "@db.example:5433/mem"
	si := newStoreInfo(cfg)
	cause := &vfsbackend.Unavailable{Err: fmt.Errorf("cannot reach %s: connection refused", cfg.Store), Hint: "check the server"}
	st := status.Convert(toStatus(slogDiscard(), si, "/ctxd.v1.VfsService/Write", fmt.Errorf("write agent:/a: %w", cause)))
	if st.Code() != codes.Unavailable || strings.Contains(st.Message(), "s3cr") || !strings.Contains(st.Message(), "connection refused") {
		t.Fatalf("status = %v %q, want UNAVAILABLE naming the cause without the password", st.Code(), st.Message())
	}
	_, d := errorDetail(t, st.Err())
	if d.Type != ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE || !strings.Contains(d.NextActionHint, "PostgreSQL at db.example:5433/mem is unreachable") ||
		!strings.Contains(d.NextActionHint, "retries by itself") {
		t.Errorf("detail = %v, want UNAVAILABLE with a hint naming the server", d)
	}
}

func TestLoadReplicaID(t *testing.T) {
	dir := t.TempDir()
	id, err := loadReplicaID(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uuid.Parse(id); err != nil {
		t.Fatalf("replica id %q is not a UUID", id)
	}
	if again, err := loadReplicaID(dir); err != nil || again != id {
		t.Errorf("second load = %q, %v; want %q", again, err, id)
	}
	if fi, err := os.Stat(filepath.Join(dir, replicaIDFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("replica-id file: %v, %v", fi, err)
	}
	if err := os.WriteFile(filepath.Join(dir, replicaIDFile), []byte("not-a-uuid\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadReplicaID(dir); err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("malformed replica-id: %v, want an error saying what to do", err)
	}
}

// TestStatus_BboltStore: a daemon on its bbolt file names it, reachable and
// not shared, with itself as the one replica, caught up.
func TestStatus_BboltStore(t *testing.T) {
	d := mustStart(t, testConfig(t))
	c := d.vfsClient(t)
	for i := range 3 {
		writeText(t, c, fmt.Sprintf("agent:/n%d.md", i), "note")
	}
	admin := ctxdv1.NewAdminServiceClient(dial(t, "unix://"+d.cfg.Socket))
	st := waitStatus(t, admin, 30*time.Second, "the index to apply the writes", func(st *ctxdv1.StatusResponse) bool {
		return st.Index.AppliedSequence >= st.Index.OutboxSequence
	})
	if st.Index.LexicalSegments < 1 {
		t.Errorf("index status = %v, want the lexical index's segments counted", st.Index)
	}
	s := st.Store
	if s.Location != filepath.Join(d.cfg.DataDir, boltstore.FileName) || s.Shared || !s.Reachable || s.ReplicaId != localReplica ||
		s.OutboxSequence != st.Index.OutboxSequence || s.OutboxSequence < 3 {
		t.Fatalf("store status = %v", s)
	}
	if len(s.Replicas) != 1 || !s.Replicas[0].Self || s.Replicas[0].Id != localReplica ||
		s.Replicas[0].AppliedSequence != st.Index.AppliedSequence || s.Replicas[0].LagChanges != 0 {
		t.Errorf("replicas = %v", s.Replicas)
	}
	if _, err := os.Stat(filepath.Join(d.cfg.DataDir, replicaIDFile)); !os.IsNotExist(err) {
		t.Errorf("a bbolt daemon wrote a replica-id file: %v", err)
	}
}

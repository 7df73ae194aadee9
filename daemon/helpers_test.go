package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// testDaemon is a real daemon on a real unix socket (plus loopback TCP and
// HTTP when asked), with its data in a temp dir.
type testDaemon struct {
	*Daemon
	cfg   Config
	token string
}

// shortTempDir returns a temp dir whose path is short enough for a unix
// socket (t.TempDir paths embed the test name and can exceed 107 bytes).
func shortTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctxd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// testConfig returns a config rooted in fresh temp dirs, with TCP, HTTP and
// embeddings off.
func testConfig(t testing.TB) Config {
	cfg := DefaultConfig()
	dir := shortTempDir(t)
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.Socket = filepath.Join(dir, "s.sock")
	cfg.TokenFile = filepath.Join(dir, "token")
	cfg.HTTP = ""
	cfg.ModelDir = "" // tests that embed opt in with withModel
	return cfg
}

// mustStart starts a daemon with cfg and stops it at cleanup.
func mustStart(t testing.TB, cfg Config) *testDaemon {
	t.Helper()
	d, err := Start(context.Background(), cfg, slogDiscard())
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	td := &testDaemon{Daemon: d, cfg: cfg}
	if cfg.GRPCTCP != "" || cfg.HTTP != "" {
		b, err := os.ReadFile(cfg.TokenFile)
		if err != nil {
			t.Fatal(err)
		}
		td.token = strings.TrimSpace(string(b))
	}
	return td
}

// dial opens a client connection to target and closes it at cleanup.
func dial(t testing.TB, target string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(target,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30), grpc.MaxCallSendMsgSize(1<<30)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// vfsClient returns a VFS client over the daemon's unix socket.
func (d *testDaemon) vfsClient(t testing.TB) ctxdv1.VfsServiceClient {
	return ctxdv1.NewVfsServiceClient(dial(t, "unix://"+d.cfg.Socket))
}

// errorDetail returns the code and ErrorDetail of a status error, failing
// the test if the detail is missing.
func errorDetail(t testing.TB, err error) (codes.Code, *ctxdv1.ErrorDetail) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || err == nil {
		t.Fatalf("want a status error, got %v", err)
	}
	for _, d := range st.Details() {
		if ed, ok := d.(*ctxdv1.ErrorDetail); ok {
			return st.Code(), ed
		}
	}
	t.Fatalf("status %v has no ErrorDetail", st)
	return 0, nil
}

// writeText writes a text item and fails the test on error.
func writeText(t testing.TB, c ctxdv1.VfsServiceClient, ref, content string) *ctxdv1.WriteResponse {
	t.Helper()
	resp, err := c.Write(context.Background(), &ctxdv1.WriteRequest{
		Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: content},
		OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE,
	})
	if err != nil {
		t.Fatalf("Write %s: %v", ref, err)
	}
	return resp
}

func slogDiscard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func sha256Sum(s string) [sha256.Size]byte { return sha256.Sum256([]byte(s)) }

// waitStatus polls Status every 50 ms until done accepts it, and returns it;
// it fails the test after timeout, naming what it waited for.
func waitStatus(t testing.TB, admin ctxdv1.AdminServiceClient, timeout time.Duration, what string, done func(*ctxdv1.StatusResponse) bool) *ctxdv1.StatusResponse {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st, err := admin.Status(context.Background(), &ctxdv1.StatusRequest{})
		if err == nil && done(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s: status %v, error %v", timeout, what, st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// contextClient returns a ContextService client over the daemon's unix socket.
func (d *testDaemon) contextClient(t testing.TB) ctxdv1.ContextServiceClient {
	return ctxdv1.NewContextServiceClient(dial(t, "unix://"+d.cfg.Socket))
}

// Secrets of the tokens startTokenDaemon configures besides the owner's.
const (
	botSecret = "bot-token" // "bot": read and write, agent = true
	ciSecret  = "ci-token"  // "ci": read and write, not an agent
)

// tokenDaemon is a daemon serving gRPC on loopback TCP (tcp) and HTTP (base)
// as well as the socket, with the tokens of botSecret and ciSecret.
type tokenDaemon struct {
	*testDaemon
	tcp  *grpc.ClientConn
	base string
}

func startTokenDaemon(t testing.TB) *tokenDaemon {
	t.Helper()
	cfg := testConfig(t)
	cfg.GRPCTCP, cfg.HTTP = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Tokens = []TokenConfig{
		{Name: "bot", SHA256: sha256Hex(botSecret), Scopes: []string{"read", "write"}, Agent: true},
		{Name: "ci", SHA256: sha256Hex(ciSecret), Scopes: []string{"read", "write"}},
	}
	d := mustStart(t, cfg)
	return &tokenDaemon{testDaemon: d, tcp: dial(t, "passthrough:///"+d.GRPCAddr().String()), base: "http://" + d.HTTPAddr().String()}
}

// bearer returns a context that sends secret as the bearer token.
func bearer(secret string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+secret)
}

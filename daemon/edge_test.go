package daemon

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// TestScopes_Ingest: reading host files and fetching URLs needs the ingest
// scope besides write. A token without it is refused Add and Refresh with a
// hint naming exactly the scopes it lacks; a write+ingest token may add.
func TestScopes_Ingest(t *testing.T) {
	cfg := testConfig(t)
	cfg.GRPCTCP = "127.0.0.1:0"
	src := shortTempDir(t)
	cfg.AllowedRoots = []string{src}
	if err := os.WriteFile(filepath.Join(src, "a.md"), []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Tokens = []TokenConfig{
		{Name: "writer", SHA256: sha256Hex("writer-token"), Scopes: []string{"read", "write"}},
		{Name: "ingester", SHA256: sha256Hex("ingester-token"), Scopes: []string{"read", "write", "ingest"}},
		{Name: "ingest-only", SHA256: sha256Hex("ingest-only-token"), Scopes: []string{"read", "ingest"}},
	}
	d := mustStart(t, cfg)
	ic := ctxdv1.NewIngestServiceClient(dial(t, "passthrough:///"+d.GRPCAddr().String()))
	add := func(secret string) error {
		s, err := ic.Add(bearer(secret), &ctxdv1.AddRequest{Sources: []string{src}})
		if err != nil {
			return err
		}
		for {
			if _, err := s.Recv(); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
		}
	}
	refresh := func(secret string) error {
		s, err := ic.Refresh(bearer(secret), &ctxdv1.RefreshRequest{All: true})
		if err != nil {
			return err
		}
		for {
			if _, err := s.Recv(); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
		}
	}
	for _, tt := range []struct {
		name, secret string
		call         func(string) error
		missing      string // the scopes the hint must name, quoted
		held         string // a scope the token holds, which the hint must not name
	}{
		{"write token adds", "writer-token", add, `"ingest"`, `"write"`},
		{"write token refreshes", "writer-token", refresh, `"ingest"`, `"write"`},
		{"ingest token adds", "ingest-only-token", add, `"write"`, `"ingest"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, detail := errorDetail(t, tt.call(tt.secret))
			if code != codes.PermissionDenied || detail.Type != ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED {
				t.Fatalf("%v %v, want PERMISSION_DENIED", code, detail)
			}
			if !strings.Contains(detail.NextActionHint, tt.missing) || strings.Contains(detail.NextActionHint, tt.held) {
				t.Errorf("hint %q: want it to name %s and not %s", detail.NextActionHint, tt.missing, tt.held)
			}
		})
	}
	if err := add("ingester-token"); err != nil {
		t.Fatalf("write+ingest token adding: %v", err)
	}
	if _, err := d.vfsClient(t).Read(context.Background(), &ctxdv1.ReadRequest{Ref: "disk:" + filepath.Join(src, "a.md")}); err != nil {
		t.Errorf("the added file is not readable: %v", err)
	}
	if err := refresh("ingester-token"); err != nil {
		t.Errorf("write+ingest token refreshing: %v", err)
	}
	if err := add(d.token); err != nil {
		t.Errorf("owner token adding: %v", err)
	}
}

// edgeRequest sends a request to the daemon's HTTP listener with the given
// Host and Origin (when not empty) and the owner token, and returns the
// response with its body read.
func edgeRequest(t *testing.T, d *testDaemon, method, path, host, origin string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+d.HTTPAddr().String()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for name := range resp.Header {
		if strings.HasPrefix(strings.ToLower(name), "access-control-") {
			t.Errorf("%s %s (Host %q, Origin %q): CORS header %s: %v", method, path, host, origin, name, resp.Header.Values(name))
		}
	}
	return resp, body
}

// TestHTTP_HostOrigin: the HTTP listener answers only requests addressed to
// a loopback name (DNS rebinding sends the attacker's name as Host) and
// without a foreign Origin (a cross-site request from a browser), on every
// route, before any token check, and never sends CORS headers.
func TestHTTP_HostOrigin(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	port := d.HTTPAddr().(*net.TCPAddr).Port
	p := ":" + strconv.Itoa(port)

	for _, host := range []string{"localhost" + p, "LocalHost" + p, "localhost", "127.0.0.1" + p, "127.8.9.10" + p, "[::1]" + p, "[::1]"} {
		if resp, body := edgeRequest(t, d, "GET", "/v1/drives", host, ""); resp.StatusCode != http.StatusOK {
			t.Errorf("Host %q: %d %s, want 200", host, resp.StatusCode, body)
		}
	}
	for _, host := range []string{"evil.example", "evil.example" + p, "localhost.evil.example" + p, "127.0.0.1.evil.example", "evil.localhost" + p, "10.0.0.1" + p, "[::2]" + p} {
		for _, path := range []string{"/v1/drives", "/openapi.json", "/mcp", "/nowhere"} {
			resp, body := edgeRequest(t, d, "GET", path, host, "")
			if resp.StatusCode != http.StatusMisdirectedRequest {
				t.Errorf("Host %q %s: %d %s, want 421", host, path, resp.StatusCode, body)
				continue
			}
			e := decodeHTTPError(t, body, ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED)
			if !strings.Contains(e.Message, "Host") || !strings.Contains(e.Details[0].Hint, "allowed_hosts") {
				t.Errorf("Host %q: message %q hint %q: want them to name the Host header and allowed_hosts", host, e.Message, e.Details[0].Hint)
			}
		}
	}
	// A rebinding page has no token: it is refused for its Host, not for
	// the token, so it learns nothing about the daemon's auth.
	req, _ := http.NewRequest("GET", "http://"+d.HTTPAddr().String()+"/v1/drives", nil)
	req.Host = "evil.example" + p
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest || resp.Header.Get("WWW-Authenticate") != "" {
		t.Errorf("tokenless foreign Host: %d %v, want 421 before the token check", resp.StatusCode, resp.Header)
	}

	for _, origin := range []string{"http://localhost" + p, "http://127.0.0.1" + p, "http://[::1]" + p, "https://localhost", "http://localhost:3000"} {
		if resp, body := edgeRequest(t, d, "GET", "/v1/drives", "", origin); resp.StatusCode != http.StatusOK {
			t.Errorf("Origin %q: %d %s, want 200", origin, resp.StatusCode, body)
		}
	}
	for _, origin := range []string{"http://evil.example", "http://evil.example" + p, "null", "http://localhost.evil.example", "file://", "ftp://localhost", "http://localhost/path", "localhost"} {
		for _, method := range []string{"GET", "POST", "OPTIONS"} {
			resp, body := edgeRequest(t, d, method, "/v1/drives", "", origin, "Access-Control-Request-Method", "POST")
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s with Origin %q: %d %s, want 403", method, origin, resp.StatusCode, body)
				continue
			}
			e := decodeHTTPError(t, body, ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED)
			if !strings.Contains(e.Message, "Origin") || !strings.Contains(e.Details[0].Hint, "allowed_origins") {
				t.Errorf("Origin %q: message %q hint %q: want them to name the Origin header and allowed_origins", origin, e.Message, e.Details[0].Hint)
			}
		}
	}
	// A preflight from a loopback page gets no CORS grant either
	// (edgeRequest fails on any Access-Control-* header).
	edgeRequest(t, d, "OPTIONS", "/v1/write", "", "http://localhost"+p, "Access-Control-Request-Method", "POST")
}

// TestHTTP_AllowedHostsOrigins: allowed_hosts and allowed_origins extend
// the loopback defaults for a reverse proxy, and nothing more.
func TestHTTP_AllowedHostsOrigins(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	cfg.AllowedHosts = []string{"ctxd.example.com", "Proxy.Example.com:8443"}
	cfg.AllowedOrigins = []string{"https://app.example.com"}
	d := mustStart(t, cfg)
	for _, host := range []string{"ctxd.example.com", "ctxd.example.com:443", "CTXD.example.com", "proxy.example.com:8443", "localhost"} {
		if resp, body := edgeRequest(t, d, "GET", "/v1/drives", host, ""); resp.StatusCode != http.StatusOK {
			t.Errorf("allowed Host %q: %d %s", host, resp.StatusCode, body)
		}
	}
	for _, host := range []string{"proxy.example.com", "proxy.example.com:443", "evil.ctxd.example.com", "example.com"} {
		if resp, body := edgeRequest(t, d, "GET", "/v1/drives", host, ""); resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("Host %q: %d %s, want 421", host, resp.StatusCode, body)
		}
	}
	if resp, body := edgeRequest(t, d, "POST", "/v1/write", "ctxd.example.com", "https://app.example.com"); resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusMisdirectedRequest {
		t.Errorf("allowed origin: %d %s", resp.StatusCode, body)
	}
	for _, origin := range []string{"http://app.example.com", "https://app.example.com:8443", "https://ctxd.example.com"} {
		if resp, body := edgeRequest(t, d, "GET", "/v1/drives", "ctxd.example.com", origin); resp.StatusCode != http.StatusForbidden {
			t.Errorf("Origin %q: %d %s, want 403", origin, resp.StatusCode, body)
		}
	}
}

// TestSocketAuth: with socket_auth the unix socket needs a token like TCP,
// with the same scopes; health checks stay open. Off by default.
func TestSocketAuth(t *testing.T) {
	cfg := testConfig(t)
	cfg.SocketAuth = true
	cfg.Tokens = []TokenConfig{
		{Name: "reader", SHA256: sha256Hex("reader-token"), Scopes: []string{"read"}},
		{Name: "ci", SHA256: sha256Hex(ciSecret), Scopes: []string{"read", "write"}},
	}
	mustStart(t, cfg)
	b, err := os.ReadFile(cfg.TokenFile)
	if err != nil {
		t.Fatalf("socket_auth wrote no token file: %v", err)
	}
	owner := strings.TrimSpace(string(b))
	conn := dial(t, "unix://"+cfg.Socket)
	vc := ctxdv1.NewVfsServiceClient(conn)
	write := func(ctx context.Context) error {
		_, err := vc.Write(ctx, &ctxdv1.WriteRequest{Ref: "/a.md", Body: &ctxdv1.WriteRequest_Content{Content: "a\n"}, OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE})
		return err
	}

	for name, ctx := range map[string]context.Context{"no token": context.Background(), "wrong token": bearer("nope")} {
		code, detail := errorDetail(t, write(ctx))
		if code != codes.Unauthenticated {
			t.Fatalf("%s: %v, want UNAUTHENTICATED", name, code)
		}
		for _, want := range []string{"--token", "CTXD_TOKEN", "socket_auth"} {
			if !strings.Contains(detail.NextActionHint, want) {
				t.Errorf("%s: hint %q does not name %s", name, detail.NextActionHint, want)
			}
		}
	}
	if err := write(bearer(owner)); err != nil {
		t.Fatalf("owner token over the socket: %v", err)
	}
	if code, _ := errorDetail(t, write(bearer("reader-token"))); code != codes.PermissionDenied {
		t.Errorf("read token writing over the socket: %v, want PERMISSION_DENIED", code)
	}
	if _, err := vc.Read(bearer("reader-token"), &ctxdv1.ReadRequest{Ref: "/a.md"}); err != nil {
		t.Errorf("read token reading over the socket: %v", err)
	}
	// The token's name, not the owner, is the actor of its changes.
	if err := write(bearer(ciSecret)); err != nil {
		t.Fatalf("write token over the socket: %v", err)
	}
	hist, err := vc.History(bearer(owner), &ctxdv1.HistoryRequest{Ref: "/a.md"})
	if err != nil || len(hist.Revisions) < 2 || hist.Revisions[0].Actor != "ci" || hist.Revisions[1].Actor != "owner" {
		t.Errorf("history over the socket: %v %v, want ci's revision on the owner's", hist, err)
	}
	if resp, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("tokenless health check over the socket: %v %v", resp, err)
	}
	if _, err := reflectionClientInfo(conn); status.Code(err) != codes.Unauthenticated {
		t.Errorf("tokenless reflection over the socket: %v, want UNAUTHENTICATED", err)
	}

	// Off (the default), the socket is the owner's without a token.
	plain := mustStart(t, testConfig(t))
	if err := func() error {
		_, err := plain.vfsClient(t).Write(context.Background(), &ctxdv1.WriteRequest{Ref: "/a.md", Body: &ctxdv1.WriteRequest_Content{Content: "a\n"}})
		return err
	}(); err != nil {
		t.Errorf("default socket without a token: %v", err)
	}
}

// reflectionClientInfo lists the services over conn's reflection service.
func reflectionClientInfo(conn *grpc.ClientConn) (*reflectionpb.ServerReflectionResponse, error) {
	s, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(context.Background())
	if err != nil {
		return nil, err
	}
	// Send returns io.EOF when the server has already ended the stream (a
	// refused token can win that race); Recv then returns its status.
	if err := s.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return s.Recv()
}

func TestConfig_Edge(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mutate func(*Config)
		want   string // in the error
	}{
		{"host with scheme", func(c *Config) { c.AllowedHosts = []string{"https://ctxd.example.com"} }, `allowed_hosts: "https://ctxd.example.com"`},
		{"host with path", func(c *Config) { c.AllowedHosts = []string{"ctxd.example.com/api"} }, "allowed_hosts"},
		{"host with bad port", func(c *Config) { c.AllowedHosts = []string{"ctxd.example.com:https"} }, "allowed_hosts"},
		{"host with port 0", func(c *Config) { c.AllowedHosts = []string{"ctxd.example.com:0"} }, "allowed_hosts"},
		{"empty host", func(c *Config) { c.AllowedHosts = []string{""} }, "allowed_hosts"},
		{"bare ipv6 host", func(c *Config) { c.AllowedHosts = []string{"fe80::1"} }, "allowed_hosts"},
		{"origin without scheme", func(c *Config) { c.AllowedOrigins = []string{"app.example.com"} }, `allowed_origins: "app.example.com"`},
		{"origin with path", func(c *Config) { c.AllowedOrigins = []string{"https://app.example.com/"} }, "allowed_origins"},
		{"origin ftp", func(c *Config) { c.AllowedOrigins = []string{"ftp://app.example.com"} }, "allowed_origins"},
		{"origin null", func(c *Config) { c.AllowedOrigins = []string{"null"} }, "allowed_origins"},
		{"origin wildcard", func(c *Config) { c.AllowedOrigins = []string{"*"} }, "allowed_origins"},
		{"socket_auth without token file", func(c *Config) { c.SocketAuth, c.HTTP, c.TokenFile = true, "", "" }, "socket_auth"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.mutate(&cfg)
			if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want an error with %q", err, tt.want)
			}
		})
	}
	cfg := DefaultConfig()
	cfg.AllowedHosts = []string{"ctxd.example.com", "ctxd.example.com:8443", "10.0.0.5", "[fe80::1]:7077", "my_host"}
	cfg.AllowedOrigins = []string{"https://app.example.com", "http://10.0.0.5:8080", "http://[fe80::1]:7077"}
	if err := cfg.Validate(); err != nil {
		t.Errorf("valid entries refused: %v", err)
	}

	env := map[string]string{"CTXD_SOCKET_AUTH": "true", "CTXD_ALLOWED_HOSTS": "a.example:8443,b.example", "CTXD_ALLOWED_ORIGINS": "https://a.example,http://b.example:1"}
	cfg = DefaultConfig()
	if cfg.SocketAuth || len(cfg.AllowedHosts) != 0 || len(cfg.AllowedOrigins) != 0 {
		t.Errorf("defaults: socket_auth %v, allowed_hosts %v, allowed_origins %v", cfg.SocketAuth, cfg.AllowedHosts, cfg.AllowedOrigins)
	}
	if err := cfg.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if !cfg.SocketAuth || strings.Join(cfg.AllowedHosts, " ") != "a.example:8443 b.example" || strings.Join(cfg.AllowedOrigins, " ") != "https://a.example http://b.example:1" {
		t.Errorf("env not applied: socket_auth %v, allowed_hosts %v, allowed_origins %v", cfg.SocketAuth, cfg.AllowedHosts, cfg.AllowedOrigins)
	}
	if err := cfg.LoadConfig(strings.NewReader("socket_auth = false\nallowed_hosts = [\"c.example\"]\nallowed_origins = [\"https://c.example\"]\n")); err != nil {
		t.Fatal(err)
	}
	if cfg.SocketAuth || strings.Join(cfg.AllowedHosts, " ") != "c.example" || strings.Join(cfg.AllowedOrigins, " ") != "https://c.example" {
		t.Errorf("TOML not applied: socket_auth %v, allowed_hosts %v, allowed_origins %v", cfg.SocketAuth, cfg.AllowedHosts, cfg.AllowedOrigins)
	}
}

// FuzzEdgePolicy_HostAllowed: with no allowed_hosts, every Host the guard
// admits is a URL host naming localhost or a loopback IP.
func FuzzEdgePolicy_HostAllowed(f *testing.F) {
	for _, s := range []string{"localhost:7077", "[::1]", "127.0.0.1", "evil.example", "[::ffff:127.0.0.1]:1", "localhost:0", "127.0.0.1:65536", "[::1]x", "127.0.0.1.nip.io"} {
		f.Add(s)
	}
	p := newEdgePolicy(nil, nil)
	f.Fuzz(func(t *testing.T, host string) {
		if !p.hostAllowed(host) {
			return
		}
		u, err := url.Parse("http://" + host + "/")
		if err != nil {
			t.Fatalf("admitted %q, which is not a URL host: %v", host, err)
		}
		name := u.Hostname()
		if ip := net.ParseIP(name); !strings.EqualFold(name, "localhost") && (ip == nil || !ip.IsLoopback()) {
			t.Fatalf("admitted %q: host %q is not loopback", host, name)
		}
	})
}

package daemon

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxd/ctxd/daemon/mcpserver"
	"github.com/ctxd/ctxd/daemon/toolset"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// mcpSessionTimeout ends an MCP session over HTTP that has had no request
// for this long, so abandoned sessions do not pile up; the client's next
// request gets 404 and it starts a new session.
const mcpSessionTimeout = 30 * time.Minute

// maxMCPSessions bounds the MCP sessions open over HTTP at once; a request
// that would open one more is refused with 503 until one ends (DELETE, or
// mcpSessionTimeout idle).
const maxMCPSessions = 64

// mcpAgent is the agent name that calls made through /mcp carry (ctxd-agent).
const mcpAgent = "mcp"

// mcpProfileParam is the query parameter of /mcp that picks the tool profile
// (toolset.Profiles; empty is core), as `ctxd mcp --tools` does.
const mcpProfileParam = "tools"

// mcpHandler serves MCP over streamable HTTP (package mcpserver) at /mcp,
// behind the bearer token and the gateway's body cap. A session lists the
// tools of the profile its URL names (?tools=core|read|all) that its token's
// scopes allow, and is bound to that token: the SDK refuses the session's
// requests made with another one. Each call runs as the agent "mcp" with the
// Authorization header of its own HTTP request, through the same
// interceptors as any gRPC call.
func (d *Daemon) mcpHandler() http.Handler {
	limit := maxRequestBytes(d.cfg.MaxContentBytes)
	backend := func(extra *mcp.RequestExtra) toolset.Backend {
		var authorization string
		if extra != nil {
			authorization = extra.Header.Get("Authorization")
		}
		return d.toolBackend(authorization, mcpAgent)
	}
	servers := &mcpServers{byKey: map[mcpServerKey]*mcp.Server{}}
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		g, err := d.auth.authenticate(r.Header.Get("Authorization"))
		if err != nil {
			return nil // requireToken has refused it already
		}
		profile := r.URL.Query().Get(mcpProfileParam)
		tools, err := toolset.Profile(profile)
		if err != nil {
			return nil // checkProfile has refused it already
		}
		return servers.of(mcpServerKey{g.name, cmp.Or(profile, toolset.ProfileCore)}, func() *mcp.Server {
			return mcpserver.New(mcpserver.Options{
				Tools: toolset.Allowed(tools, g.scopes.names()), Backend: backend, Version: Version, Logger: d.log,
			})
		})
	}, &mcp.StreamableHTTPOptions{
		SessionTimeout:      mcpSessionTimeout,
		MaxRequestBodyBytes: limit,
		// The edge guard checks Host and Origin for the whole listener,
		// allowed_hosts included; the SDK's own loopback-only Host check
		// would refuse a reverse proxy's name that allowed_hosts admits.
		DisableLocalhostProtection: true,
		Logger:                     d.log,
	})
	// TokenInfo.UserID is what the SDK binds a session to.
	bind := auth.RequireBearerToken(func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		g, err := d.auth.authenticate("Bearer " + token)
		if err != nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: g.name, Scopes: g.scopes.names()}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return requireToken(d.auth, checkProfile(limitBody(limit, d.cfg.MaxContentBytes, bind(servers.limitSessions(h)))))
}

// checkProfile refuses a request to /mcp whose ?tools= names no profile,
// with 400 and the names.
func checkProfile(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Query().Get(mcpProfileParam)
		if _, err := toolset.Profile(p); err != nil {
			writeStatus(w, http.StatusBadRequest, apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT,
				fmt.Sprintf("unknown tool profile %q in ?%s=", p, mcpProfileParam),
				fmt.Sprintf("Use /mcp?%s= with one of %s, or leave it out for core.", mcpProfileParam, strings.Join(toolset.Profiles, ", "))))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// mcpServerKey names one MCP server: a token (names are unique) and a
// tool profile.
type mcpServerKey struct{ token, profile string }

// mcpServers holds one MCP server per token and profile, whose sessions are
// that token's, so the sessions open can be counted.
type mcpServers struct {
	mu    sync.Mutex
	byKey map[mcpServerKey]*mcp.Server
}

// of returns key's server, built by build on first use.
func (m *mcpServers) of(key mcpServerKey, build func() *mcp.Server) *mcp.Server {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.byKey[key]
	if !ok {
		s = build()
		m.byKey[key] = s
	}
	return s
}

// sessions counts the sessions open on every server.
func (m *mcpServers) sessions() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, s := range m.byKey {
		for range s.Sessions() {
			n++
		}
	}
	return n
}

// limitSessions refuses a request that would open a session (one without
// Mcp-Session-Id) once maxMCPSessions are open.
func (m *mcpServers) limitSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && m.sessions() >= maxMCPSessions {
			w.Header().Set("Retry-After", "60")
			writeStatus(w, http.StatusServiceUnavailable, apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE,
				fmt.Sprintf("%d MCP sessions are open, the most the daemon keeps", maxMCPSessions),
				fmt.Sprintf("End sessions you no longer use (an HTTP DELETE of /mcp with their Mcp-Session-Id) or retry later; idle sessions close after %s.", mcpSessionTimeout)))
			return
		}
		next.ServeHTTP(w, r)
	})
}

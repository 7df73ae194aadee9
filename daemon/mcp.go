package daemon

import (
	"context"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxd/ctxd/mcpserver"
	"github.com/ctxd/ctxd/toolset"
)

// mcpSessionTimeout ends an MCP session over HTTP that has had no request
// for this long, so abandoned sessions do not pile up; the client's next
// request gets 404 and it starts a new session.
const mcpSessionTimeout = 30 * time.Minute

// mcpAgent is the agent name that calls made through /mcp carry (ctxd-agent).
const mcpAgent = "mcp"

// mcpHandler serves MCP over streamable HTTP (package mcpserver) at /mcp,
// behind the bearer token and the gateway's body cap. A session lists the
// tools its token's scopes allow and is bound to that token: the SDK refuses
// the session's requests made with another one. Each call runs as the agent
// "mcp" with the Authorization header of its own HTTP request, through the
// same interceptors as any gRPC call.
func (d *Daemon) mcpHandler() http.Handler {
	limit := maxRequestBytes(d.cfg.MaxContentBytes)
	backend := func(extra *mcp.RequestExtra) toolset.Backend {
		var authorization string
		if extra != nil {
			authorization = extra.Header.Get("Authorization")
		}
		return d.toolBackend(authorization, mcpAgent)
	}
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		g, err := d.auth.authenticate(r.Header.Get("Authorization"))
		if err != nil {
			return nil // requireToken has refused it already
		}
		return mcpserver.New(mcpserver.Options{
			Tools: toolset.Allowed(g.scopes.names()), Backend: backend, Version: Version, Logger: d.log,
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
	return requireToken(d.auth, limitBody(limit, d.cfg.MaxContentBytes, bind(h)))
}

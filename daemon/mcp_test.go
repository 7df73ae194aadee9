package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxd/ctxd/daemon/toolset"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// bearerTransport sends a bearer token with every request.
type bearerTransport struct{ secret string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.secret)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpConnect opens an MCP session on the daemon's /mcp with a token; query
// is the URL's query ("" or "?tools=all").
func mcpConnect(t *testing.T, base, query, secret string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "ctxd-test", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: base + "/mcp" + query, HTTPClient: &http.Client{Transport: bearerTransport{secret}},
	}, nil)
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// mcpCall calls a tool and decodes its JSON text.
func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out, res.IsError
}

// TestMCP_HTTP: /mcp needs a token (401 without one), lists the tools of
// the profile its URL names (core by default, ?tools=all, 400 for an unknown
// one) that its token's scopes allow, runs any tool by name (update_beliefs
// and context_history are not in core), runs calls as the agent "mcp" under
// the token's name (soul.md is read_only even to a non-agent token), and
// binds a session to the token that opened it.
func TestMCP_HTTP(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	cfg.Tokens = []TokenConfig{
		{Name: "ci", SHA256: sha256Hex(ciSecret), Scopes: []string{"read", "write"}},
		{Name: "reader", SHA256: sha256Hex("reader-token"), Scopes: []string{"read"}},
	}
	d := mustStart(t, cfg)
	base := "http://" + d.HTTPAddr().String()
	if _, err := d.contextClient(t).Init(context.Background(), &ctxdv1.InitRequest{}); err != nil {
		t.Fatal(err)
	}

	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %s, WWW-Authenticate %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}

	toolNames := func(cs *mcp.ClientSession) []string {
		var names []string
		for tool, err := range cs.Tools(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		return names
	}
	want := func(profile string, scopes ...string) []string {
		tools, err := toolset.Profile(profile)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range toolset.Allowed(tools, scopes) {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		return names
	}
	ci := mcpConnect(t, base, "", ciSecret)
	reader := mcpConnect(t, base, "", "reader-token")
	if got := toolNames(ci); !slices.Equal(got, want("core", "read", "write")) || !slices.Contains(got, "remember") || slices.Contains(got, "context_delete") {
		t.Errorf("read+write token's core tools: %v", got)
	}
	if got := toolNames(reader); !slices.Equal(got, want("core", "read")) || slices.Contains(got, "context_write") || !slices.Contains(got, "context_read") {
		t.Errorf("read token's core tools: %v", got)
	}
	if got := toolNames(mcpConnect(t, base, "?tools=all", ciSecret)); !slices.Equal(got, want("all", "read", "write")) || slices.Contains(got, "context_add") || !slices.Contains(got, "context_delete") {
		t.Errorf("read+write token's tools of all: %v", got)
	}
	if got := toolNames(mcpConnect(t, base, "?tools=read", ciSecret)); !slices.Equal(got, want("read", "read")) || !slices.Contains(got, "context_history") {
		t.Errorf("read+write token's tools of read: %v", got)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp?tools=most", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`))
	req.Header.Set("Authorization", "Bearer "+ciSecret)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "core, read, all") {
			t.Errorf("unknown profile: %s %s", resp.Status, body)
		}
	}

	if out, isErr := mcpCall(t, ci, "context_write", map[string]any{"path": "/n.md", "content": "note\n"}); isErr {
		t.Fatalf("write: %v", out)
	}
	out, _ := mcpCall(t, ci, "context_history", map[string]any{"path": "/n.md"})
	if b, _ := json.Marshal(out); !strings.Contains(string(b), `"actor":"ci"`) {
		t.Errorf("history names no ci: %s", b)
	}
	out, isErr := mcpCall(t, ci, "context_write", map[string]any{"drive": "self", "path": "/soul.md", "content": "mine\n", "on_conflict": "overwrite"})
	if !isErr || out["error_type"] != "read_only" {
		t.Errorf("soul.md through /mcp: %v", out)
	}
	if out, isErr := mcpCall(t, ci, "update_beliefs", map[string]any{"body": "- learned\n"}); isErr {
		t.Errorf("update_beliefs: %v", out)
	}
	if out, isErr := mcpCall(t, reader, "context_read", map[string]any{"path": "/n.md"}); isErr || out["content"] != "note\n" {
		t.Errorf("reader reading: %v", out)
	}

	// ci's session answers ci's token, and refuses another one.
	onCISession := func(secret string) int {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"context_read","arguments":{"path":"/n.md"}}}`))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", ci.ID())
		req.Header.Set("Mcp-Protocol-Version", ci.InitializeResult().ProtocolVersion)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := onCISession(ciSecret); code != http.StatusOK {
		t.Errorf("ci's token on ci's session: %d", code)
	}
	if code := onCISession("reader-token"); code != http.StatusForbidden {
		t.Errorf("another token on ci's session: %d", code)
	}

	// The listener's Host guard covers /mcp.
	req, _ = http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{}`))
	req.Host = "attacker.example"
	req.Header.Set("Authorization", "Bearer "+ciSecret)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 400 || resp.StatusCode == http.StatusNotFound {
		t.Errorf("foreign Host on /mcp: %s", resp.Status)
	}
}

// TestMCP_HTTPSessionLimit: at most maxMCPSessions are open at once; one
// more is refused with 503, and ending a session makes room. (The SDK may
// hold a session of its own for a moment, so the refusal can come a session
// early; never late.)
func TestMCP_HTTPSessionLimit(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	cfg.Tokens = []TokenConfig{{Name: "ci", SHA256: sha256Hex(ciSecret), Scopes: []string{"read"}}}
	d := mustStart(t, cfg)
	base := "http://" + d.HTTPAddr().String()
	c := mcp.NewClient(&mcp.Implementation{Name: "ctxd-test", Version: "0"}, nil)
	connect := func() (*mcp.ClientSession, error) {
		return c.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{ciSecret}},
		}, nil)
	}
	// Open sessions until one is refused: that must happen, and not after
	// more than maxMCPSessions are open.
	var sessions []*mcp.ClientSession
	t.Cleanup(func() {
		for _, cs := range sessions {
			cs.Close()
		}
	})
	for {
		cs, err := connect()
		if err != nil {
			if !strings.Contains(err.Error(), "Service Unavailable") {
				t.Fatalf("session %d: %v, want 503", len(sessions)+1, err)
			}
			break
		}
		sessions = append(sessions, cs)
		if len(sessions) > maxMCPSessions {
			t.Fatalf("%d sessions open, more than maxMCPSessions (%d)", len(sessions), maxMCPSessions)
		}
	}
	if len(sessions) == 0 {
		t.Fatal("the first session was refused")
	}
	t.Logf("refused after %d sessions", len(sessions))
	if _, err := sessions[0].ListTools(context.Background(), nil); err != nil {
		t.Errorf("an open session stopped working: %v", err)
	}
	if err := sessions[0].Close(); err != nil {
		t.Fatal(err)
	}
	// The daemon ends the session as the DELETE arrives, which may be just
	// after Close returns.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		cs, err := connect()
		if err == nil {
			cs.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no room after a session ended: %v", err)
		}
	}
}

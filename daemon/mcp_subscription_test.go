package daemon

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// Over MCP with the SDK's client: context_watch_query creates a durable
// subscription for a drive-limited token; a host subscribed to its
// resource is notified when a match arrives, and reading the resource
// shows it; an item outside the token's drive never shows; another token
// can neither read nor subscribe to it.
func TestMCP_WatchQueryResource(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	cfg.Tokens = []TokenConfig{
		{Name: "drive", SHA256: sha256Hex("drive-token"), Scopes: []string{"read"}, Drives: []string{"agent"}},
		{Name: "other", SHA256: sha256Hex("other-token"), Scopes: []string{"read"}},
	}
	d := mustStart(t, cfg)
	base := "http://" + d.HTTPAddr().String()
	vc := ctxdv1.NewVfsServiceClient(dial(t, "unix://"+cfg.Socket))

	updated := make(chan string, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "ctxd-test", Version: "0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: base + "/mcp?tools=all", HTTPClient: &http.Client{Transport: bearerTransport{"drive-token"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.InitializeResult().Capabilities.Resources == nil || !cs.InitializeResult().Capabilities.Resources.Subscribe {
		t.Fatalf("the server does not offer resource subscriptions: %+v", cs.InitializeResult().Capabilities.Resources)
	}
	out, isErr := mcpCall(t, cs, "context_watch_query", map[string]any{"name": "merger", "queries": []string{"quokka merger"}})
	uri, _ := out["resource_uri"].(string)
	if isErr || uri != "ctxd-subscription://merger" {
		t.Fatalf("context_watch_query: %v", out)
	}
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	writeText(t, vc, "vault:/q.md", "The quokka merger, in the vault.")
	writeText(t, vc, "agent:/q.md", "The quokka merger plan.")
	select {
	case got := <-updated:
		if got != uri {
			t.Fatalf("updated %s, want %s", got, uri)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/resources/updated within 30 s")
	}
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Contents[0].Text
	if !strings.Contains(text, "agent:/q.md") || strings.Contains(text, "vault:") {
		t.Fatalf("resource %s: %s", uri, text)
	}
	read, isErr := mcpCall(t, cs, "context_read_subscription", map[string]any{"name": "merger"})
	if ms, _ := read["matches"].([]any); isErr || len(ms) != 1 {
		t.Fatalf("context_read_subscription: %v", read)
	}

	other := mcpConnect(t, base, "?tools=all", "other-token")
	if _, err := other.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil {
		t.Fatal("another token read the subscription's resource")
	}
	if err := other.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err == nil {
		t.Fatal("another token subscribed to the subscription's resource")
	}
	if out, isErr := mcpCall(t, other, "context_read_subscription", map[string]any{"name": "merger"}); !isErr || out["error_type"] != "not_found" {
		t.Fatalf("another token's context_read_subscription: %v", out)
	}
}

package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ctxd/ctxd/daemon/toolset"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// Secrets of the tokens startToolDaemon configures besides the owner's.
const (
	readerSecret = "reader-token" // "reader": read
	writerSecret = "writer-token" // "writer": read and write, no ingest
)

// startToolDaemon starts a daemon serving gRPC on loopback TCP too, with
// the reader and writer tokens; edit may change the config first.
func startToolDaemon(t *testing.T, edit func(*Config)) (*testDaemon, ctxdv1.ToolServiceClient, ctxdv1.ToolServiceClient) {
	t.Helper()
	cfg := testConfig(t)
	cfg.GRPCTCP = "127.0.0.1:0"
	cfg.Tokens = []TokenConfig{
		{Name: "reader", SHA256: sha256Hex(readerSecret), Scopes: []string{"read"}},
		{Name: "writer", SHA256: sha256Hex(writerSecret), Scopes: []string{"read", "write"}},
	}
	if edit != nil {
		edit(&cfg)
	}
	d := mustStart(t, cfg)
	return d, ctxdv1.NewToolServiceClient(dial(t, "unix://"+cfg.Socket)),
		ctxdv1.NewToolServiceClient(dial(t, "passthrough:///"+d.GRPCAddr().String()))
}

// callTool calls a tool with JSON arguments and decodes its JSON result.
func callTool(t *testing.T, ctx context.Context, c ctxdv1.ToolServiceClient, name, args string) (bool, map[string]any) {
	t.Helper()
	resp, err := c.CallTool(ctx, &ctxdv1.CallToolRequest{Name: name, Args: &ctxdv1.CallToolRequest_ArgumentsJson{ArgumentsJson: args}})
	if err != nil {
		t.Fatalf("CallTool %s %s: %v", name, args, err)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(resp.Content), &out); err != nil {
		t.Fatalf("CallTool %s: content is not a JSON object: %v\n%s", name, err, resp.Content)
	}
	return resp.IsError, out
}

// wantToolError asserts a tool result is an error of errType in the seed's
// shape, with a message and a hint, and returns it.
func wantToolError(t *testing.T, ctx context.Context, c ctxdv1.ToolServiceClient, name, args, errType string) map[string]any {
	t.Helper()
	isErr, out := callTool(t, ctx, c, name, args)
	if !isErr || out["is_error"] != true || out["error_type"] != errType || out["message"] == "" || out["next_action_hint"] == "" {
		t.Fatalf("%s %s: want an is_error result of type %s with message and hint, got is_error=%v %v", name, args, errType, isErr, out)
	}
	return out
}

// listedNames returns the tool names of ListTools in format and profile,
// checking the fields each format puts the name and the schema in.
func listedNames(t *testing.T, ctx context.Context, c ctxdv1.ToolServiceClient, format, profile string) []string {
	t.Helper()
	resp, err := c.ListTools(ctx, &ctxdv1.ListToolsRequest{Format: format, Profile: profile})
	if err != nil {
		t.Fatalf("ListTools %q: %v", format, err)
	}
	var tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Type        string          `json:"type"`
		Function    struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
		AnthropicSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal([]byte(resp.ToolsJson), &tools); err != nil {
		t.Fatalf("ListTools %q: %v\n%s", format, err, resp.ToolsJson)
	}
	var names []string
	for _, tool := range tools {
		name, schema := tool.Name, tool.InputSchema
		switch format {
		case "openai":
			if tool.Type != "function" {
				t.Errorf("openai tool %+v: type is not function", tool)
			}
			name, schema = tool.Function.Name, tool.Function.Parameters
		case "anthropic":
			schema = tool.AnthropicSchema
		}
		if !strings.Contains(string(schema), `"type":"object"`) && !strings.Contains(string(schema), `"type": "object"`) {
			t.Errorf("%s tool %s: input schema %s is not an object schema", format, name, schema)
		}
		names = append(names, name)
	}
	return names
}

func toolNames(tools []toolset.Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return names
}

func TestToolService_ListTools(t *testing.T) {
	d, owner, tcp := startToolDaemon(t, nil)
	ctx := context.Background()

	all := toolNames(toolset.Tools())
	core, _ := toolset.Profile(toolset.ProfileCore)
	read, _ := toolset.Profile(toolset.ProfileRead)
	for _, format := range []string{"", "mcp", "openai", "anthropic"} {
		if got := listedNames(t, ctx, owner, format, ""); !slices.Equal(got, toolNames(core)) {
			t.Errorf("owner, format %q: tools %v, want the core tools %v", format, got, toolNames(core))
		}
		if got := listedNames(t, ctx, owner, format, "core"); !slices.Equal(got, toolNames(core)) {
			t.Errorf("owner, format %q, core: tools %v, want %v", format, got, toolNames(core))
		}
		if got := listedNames(t, ctx, owner, format, "read"); !slices.Equal(got, toolNames(read)) {
			t.Errorf("owner, format %q, read: tools %v, want %v", format, got, toolNames(read))
		}
		if got := listedNames(t, ctx, owner, format, "all"); !slices.Equal(got, all) {
			t.Errorf("owner, format %q, all: tools %v, want every tool %v", format, got, all)
		}
	}

	// A token sees the tools of the profile its scopes allow, whatever the format.
	for _, tt := range []struct {
		secret    string
		with, not []string
	}{
		{readerSecret, []string{"context_read", "context_search", "context_tree"}, []string{"context_write", "context_edit", "context_add"}},
		{writerSecret, []string{"context_read", "context_write", "context_edit"}, []string{"context_add"}},
		{d.token, all, nil},
	} {
		for _, format := range []string{"mcp", "openai"} {
			got := listedNames(t, metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tt.secret), tcp, format, "all")
			for _, n := range tt.with {
				if !slices.Contains(got, n) {
					t.Errorf("token %s, %s: %s missing from %v", tt.secret, format, n, got)
				}
			}
			for _, n := range tt.not {
				if slices.Contains(got, n) {
					t.Errorf("token %s, %s: %s listed, though the token may not use it", tt.secret, format, n)
				}
			}
		}
	}

	_, err := owner.ListTools(ctx, &ctxdv1.ListToolsRequest{Format: "yaml"})
	code, detail := errorDetail(t, err)
	if code != codes.InvalidArgument || detail.Type != ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT ||
		!strings.Contains(detail.NextActionHint, "openai") || !strings.Contains(detail.NextActionHint, "anthropic") {
		t.Errorf("unknown format: %v %v", code, detail)
	}
	_, err = owner.ListTools(ctx, &ctxdv1.ListToolsRequest{Profile: "most"})
	code, detail = errorDetail(t, err)
	if code != codes.InvalidArgument || detail.Type != ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT ||
		!strings.Contains(detail.NextActionHint, "core, read, all") {
		t.Errorf("unknown profile: %v %v", code, detail)
	}
}

func TestToolService_CallTool(t *testing.T) {
	d, owner, tcp := startToolDaemon(t, nil)
	ctx := context.Background()

	isErr, w := callTool(t, ctx, owner, "context_write", `{"path":"/tools/a.md","content":"alpha\nbeta\n"}`)
	if isErr || w["ref"] != "agent:/tools/a.md" || !strings.Contains(w["tree"].(string), "a.md") {
		t.Fatalf("context_write: is_error=%v %v", isErr, w)
	}
	// Arguments as a Struct, as the HTTP gateway passes them.
	args, err := structpb.NewStruct(map[string]any{"path": "agent:/tools/a.md", "offset": 1})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := owner.CallTool(ctx, &ctxdv1.CallToolRequest{Name: "context_read", Args: &ctxdv1.CallToolRequest_Arguments{Arguments: args}})
	if err != nil || resp.IsError {
		t.Fatalf("context_read: %v %v", resp, err)
	}
	var r struct {
		Content   string `json:"content"`
		StartLine int    `json:"start_line"`
	}
	if err := json.Unmarshal([]byte(resp.Content), &r); err != nil || r.Content != "beta\n" || r.StartLine != 2 {
		t.Errorf("context_read = %s (%v), want line 2 \"beta\\n\"", resp.Content, err)
	}

	// Failures are results in the seed's shape, hints included.
	nf := wantToolError(t, ctx, owner, "context_read", `{"path":"/tools/b.md"}`, "not_found")
	if !strings.Contains(nf["next_action_hint"].(string), "agent:/tools/a.md") {
		t.Errorf("not_found hint names no nearby item: %v", nf)
	}
	unknown := wantToolError(t, ctx, owner, "context_nope", `{}`, "invalid_argument")
	if !strings.Contains(unknown["message"].(string), "context_nope") || !strings.Contains(unknown["next_action_hint"].(string), "context_read") {
		t.Errorf("unknown tool: %v", unknown)
	}
	wantToolError(t, ctx, owner, "context_read", `{"path":`, "invalid_argument")
	wantToolError(t, ctx, owner, "context_read", `["agent:/tools/a.md"]`, "invalid_argument")

	// A request-level mistake is an error status.
	for _, name := range []string{"", strings.Repeat("x", maxToolNameLen+1)} {
		_, err := owner.CallTool(ctx, &ctxdv1.CallToolRequest{Name: name})
		if code, detail := errorDetail(t, err); code != codes.InvalidArgument || detail.NextActionHint == "" {
			t.Errorf("name of %d characters: %v %v", len(name), code, detail)
		}
	}

	// Tools run as an agent: "tools", or the name the caller gives.
	agentCtx := metadata.AppendToOutgoingContext(ctx, AgentMetadata, "researcher")
	if isErr, out := callTool(t, agentCtx, owner, "context_write", `{"path":"/tools/a.md","content":"gamma\n","on_conflict":"overwrite"}`); isErr {
		t.Fatalf("overwrite: %v", out)
	}
	hist, err := d.vfsClient(t).History(ctx, &ctxdv1.HistoryRequest{Ref: "agent:/tools/a.md"})
	if err != nil {
		t.Fatal(err)
	}
	var actors []string
	for _, rev := range hist.Revisions {
		actors = append(actors, rev.Actor)
	}
	if !slices.Equal(actors, []string{"researcher", defaultToolAgent}) {
		t.Errorf("history actors (newest first) = %v, want [researcher %s]", actors, defaultToolAgent)
	}

	// A token's tool calls carry that token: its scopes decide.
	reader := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+readerSecret)
	if isErr, out := callTool(t, reader, tcp, "context_read", `{"path":"agent:/tools/a.md"}`); isErr || out["content"] != "gamma\n" {
		t.Errorf("reader context_read: is_error=%v %v", isErr, out)
	}
	wantToolError(t, reader, tcp, "context_write", `{"path":"/tools/c.md","content":"x"}`, "permission_denied")
	if _, err := d.vfsClient(t).Info(ctx, &ctxdv1.InfoRequest{Ref: "agent:/tools/c.md"}); status.Code(err) != codes.NotFound {
		t.Errorf("the refused write happened: Info = %v", err)
	}
	_, err = tcp.CallTool(ctx, &ctxdv1.CallToolRequest{Name: "context_read"})
	if code, _ := errorDetail(t, err); code != codes.Unauthenticated {
		t.Errorf("CallTool over TCP without a token: %v", err)
	}
}

// A daemon on the socket alone still runs tools over its internal connection, with an
// owner token it keeps in memory: no token file appears.
func TestToolService_SocketOnly(t *testing.T) {
	cfg := testConfig(t)
	d := mustStart(t, cfg)
	owner := ctxdv1.NewToolServiceClient(dial(t, "unix://"+cfg.Socket))
	ctx := context.Background()
	if isErr, out := callTool(t, ctx, owner, "context_write", `{"path":"/solo/a.md","content":"alone\n"}`); isErr {
		t.Fatalf("context_write: %v", out)
	}
	if got := readContent(t, ctx, d.vfsClient(t), "agent:/solo/a.md"); got != "alone\n" {
		t.Errorf("content = %q", got)
	}
	if _, err := os.Stat(cfg.TokenFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("token file %s: %v, want none written", cfg.TokenFile, err)
	}
}

// An agent may not change what frontmatter protects from agents, and a
// tool call is always an agent's, the owner's included.
func TestToolService_CallToolAgentGuards(t *testing.T) {
	d, owner, _ := startToolDaemon(t, nil)
	ctx := context.Background()
	if _, err := d.contextClient(t).Init(ctx, &ctxdv1.InitRequest{}); err != nil {
		t.Fatal(err)
	}
	soul := readContent(t, ctx, d.vfsClient(t), "self:/soul.md")

	out := wantToolError(t, ctx, owner, "context_write", `{"path":"self:/soul.md","content":"obey\n","on_conflict":"overwrite"}`, "read_only")
	if !strings.Contains(out["message"].(string)+out["next_action_hint"].(string), "soul.md") {
		t.Errorf("read_only names no file: %v", out)
	}
	wantToolError(t, ctx, owner, "context_edit", `{"path":"self:/soul.md","patches":[{"start_line":1,"end_line":0,"content":"obey"}]}`, "read_only")
	if got := readContent(t, ctx, d.vfsClient(t), "self:/soul.md"); got != soul {
		t.Errorf("soul.md changed through a tool:\n%s", got)
	}
	if isErr, out := callTool(t, ctx, owner, "update_beliefs", `{"body":"- tests run against the real daemon\n"}`); isErr {
		t.Fatalf("update_beliefs: %v", out)
	}
	if got := readContent(t, ctx, d.vfsClient(t), "self:/beliefs.md"); !strings.HasSuffix(got, "\n---\n- tests run against the real daemon\n") {
		t.Errorf("beliefs.md after update_beliefs:\n%s", got)
	}
}

// The caller's deadline bounds the tool's own calls: a fetch that never
// answers is abandoned when CallTool's deadline passes.
func TestToolService_CallToolDeadline(t *testing.T) {
	fetching, abandoned := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(fetching)
		<-r.Context().Done()
		close(abandoned)
	}))
	defer srv.Close()
	_, owner, _ := startToolDaemon(t, func(c *Config) { c.AllowPrivateNetwork = true })

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	args, _ := json.Marshal(map[string]any{"sources": []string{srv.URL + "/slow"}})
	resp, err := owner.CallTool(ctx, &ctxdv1.CallToolRequest{Name: "context_add", Args: &ctxdv1.CallToolRequest_ArgumentsJson{ArgumentsJson: string(args)}})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("CallTool past its deadline: %v %v", resp, err)
	}
	for what, ch := range map[string]chan struct{}{"started": fetching, "abandoned": abandoned} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("the tool's fetch was never %s", what)
		}
	}
}

// The JSON/HTTP routes: GET /v1/tools and POST /v1/tools/call.
func TestToolService_HTTP(t *testing.T) {
	d, _, _ := startToolDaemon(t, func(c *Config) { c.HTTP = "127.0.0.1:0" })
	base := "http://" + d.HTTPAddr().String()

	code, body := httpCall(t, "GET", base+"/v1/tools?format=anthropic", "", readerSecret)
	var list struct {
		ToolsJSON string `json:"tools_json"`
	}
	if err := json.Unmarshal(body, &list); code != http.StatusOK || err != nil || !strings.Contains(list.ToolsJSON, `"input_schema"`) ||
		strings.Contains(list.ToolsJSON, `"context_history"`) {
		t.Fatalf("GET /v1/tools: %d %s", code, body)
	}
	code, body = httpCall(t, "GET", base+"/v1/tools?format=anthropic&profile=read", "", readerSecret)
	if err := json.Unmarshal(body, &list); code != http.StatusOK || err != nil || !strings.Contains(list.ToolsJSON, `"context_history"`) {
		t.Fatalf("GET /v1/tools?profile=read: %d %s", code, body)
	}
	code, body = httpCall(t, "POST", base+"/v1/tools/call",
		`{"name":"context_write","arguments":{"path":"/http/a.md","content":"over http\n"}}`, writerSecret)
	var res struct {
		Content string `json:"content"`
		IsError bool   `json:"is_error"`
	}
	if err := json.Unmarshal(body, &res); code != http.StatusOK || err != nil || res.IsError || !strings.Contains(res.Content, `"agent:/http/a.md"`) {
		t.Fatalf("POST /v1/tools/call: %d %s", code, body)
	}
	code, body = httpCall(t, "POST", base+"/v1/tools/call", `{"name":"context_read","arguments_json":"{\"path\":\"/http/nope.md\"}"}`, readerSecret)
	if err := json.Unmarshal(body, &res); code != http.StatusOK || err != nil || !res.IsError || !strings.Contains(res.Content, `"error_type":"not_found"`) {
		t.Fatalf("POST /v1/tools/call of a missing item: %d %s", code, body)
	}
}

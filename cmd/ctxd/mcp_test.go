package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxd/ctxd/daemon"
	"github.com/ctxd/ctxd/daemon/toolset"
)

// mcpSession is `ctxd mcp` run in-process on pipes, with the Go SDK's
// client connected to them.
type mcpSession struct {
	*mcp.ClientSession
	stderr *bytes.Buffer // read only after done
	done   chan int      // the command's exit code
}

// startMCP runs `ctxd --socket socket mcp args...` and connects a client.
func startMCP(t *testing.T, socket string, args ...string) *mcpSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &mcpSession{stderr: &bytes.Buffer{}, done: make(chan int, 1)}
	go func() {
		code := runWith(context.Background(), append([]string{"--socket", socket, "mcp"}, args...), inR, outW, s.stderr)
		outW.Close()
		s.done <- code
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "ctxd-test", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect to ctxd mcp: %v", err)
	}
	s.ClientSession = cs
	t.Cleanup(func() {
		cs.Close()
		select {
		case code := <-s.done:
			if code != 0 {
				t.Errorf("ctxd mcp exited %d: %s", code, s.stderr)
			}
		case <-time.After(10 * time.Second):
			t.Error("ctxd mcp did not exit after stdin closed")
		}
	})
	return s
}

// toolText calls a tool and returns its text and isError; the structured
// content must be that text's JSON object.
func toolText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content %T", name, res.Content[0])
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text.Text), &out); err != nil {
		t.Fatalf("%s: text is not a JSON object: %q", name, text.Text)
	}
	if res.StructuredContent != nil {
		t.Errorf("%s: structured content beside the text doubles the result: %v", name, res.StructuredContent)
	}
	return out, res.IsError
}

// wantToolError checks a failed call's seed-shaped error.
func wantToolError(t *testing.T, out map[string]any, isError bool, errorType, hintHas string) {
	t.Helper()
	if !isError || out["is_error"] != true || out["error_type"] != errorType || out["message"] == "" ||
		!strings.Contains(out["next_action_hint"].(string), hintHas) {
		t.Errorf("got isError %v %v; want error_type %s with a hint naming %q", isError, out, errorType, hintHas)
	}
}

// TestMCP_Stdio drives `ctxd mcp` with the Go SDK client through the
// issue's scenario: the core tools listed, write, read, search, edit, a
// not-found with a hint naming the nearby item, update_beliefs allowed
// (called by name, though core does not list it) and soul.md refused as
// read_only (the session is an agent), resources and the prompt.
func TestMCP_Stdio(t *testing.T) {
	socket := startDaemon(t)
	if code, _, errOut := ctxd(t, socket, "", "init"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	cs := startMCP(t, socket, "--agent-name", "test-agent")
	ctx := context.Background()

	init := cs.InitializeResult()
	if init.ServerInfo.Name != "ctxd" || init.ServerInfo.Version != daemon.Version {
		t.Errorf("server info %+v", init.ServerInfo)
	}
	listed := listedTools(t, cs.ClientSession)
	for _, tool := range listed {
		if tool.Name == "context_read" && (tool.Annotations == nil || !tool.Annotations.ReadOnlyHint || tool.InputSchema == nil) {
			t.Errorf("context_read annotations %+v schema %v", tool.Annotations, tool.InputSchema)
		}
	}
	// The owner's socket holds every scope.
	if got, want := toolNames(listed), profileNames(t, "core"); !slices.Equal(got, want) {
		t.Errorf("tools %v, want the core tools %v", got, want)
	}

	out, isErr := toolText(t, cs.ClientSession, "context_write", map[string]any{"path": "/notes/plan.md", "content": "# Plan\n\nShip the zebrafish importer.\nThen rest.\n"})
	if isErr || out["ref"] != "agent:/notes/plan.md" || !strings.Contains(out["tree"].(string), "plan.md") {
		t.Fatalf("write: %v", out)
	}
	out, isErr = toolText(t, cs.ClientSession, "context_read", map[string]any{"path": "agent:/notes/plan.md", "offset": 2, "limit": 1})
	if isErr || out["content"] != "Ship the zebrafish importer.\n" || out["start_line"] != 3.0 {
		t.Errorf("read: %v", out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, isErr = toolText(t, cs.ClientSession, "context_search", map[string]any{"queries": []string{"zebrafish"}, "mode": "bm25"})
		results, _ := out["results"].([]any)
		if !isErr && len(results) > 0 {
			if first := results[0].(map[string]any); first["ref"] != "agent:/notes/plan.md" {
				t.Errorf("search: %v", out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("search never found the item: %v", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	out, isErr = toolText(t, cs.ClientSession, "context_edit", map[string]any{"path": "/notes/plan.md",
		"patches": []map[string]any{{"start_line": 4, "end_line": 4, "content": "Then write the docs."}}})
	if isErr {
		t.Fatalf("edit: %v", out)
	}
	out, _ = toolText(t, cs.ClientSession, "context_read", map[string]any{"path": "/notes/plan.md"})
	if out["content"] != "# Plan\n\nShip the zebrafish importer.\nThen write the docs.\n" {
		t.Errorf("after edit: %v", out)
	}
	out, isErr = toolText(t, cs.ClientSession, "context_read", map[string]any{"path": "/notes/plans.md"})
	wantToolError(t, out, isErr, "not_found", "agent:/notes/plan.md")

	out, isErr = toolText(t, cs.ClientSession, "update_beliefs", map[string]any{"body": "# Beliefs\n\n- Zebrafish come first.\n"})
	if isErr {
		t.Errorf("update_beliefs: %v", out)
	}
	soul, _ := toolText(t, cs.ClientSession, "context_read", map[string]any{"drive": "self", "path": "/soul.md"})
	out, isErr = toolText(t, cs.ClientSession, "context_edit", map[string]any{"drive": "self", "path": "/soul.md",
		"patches": []map[string]any{{"start_line": 1, "end_line": 1, "content": "I obey no one."}}})
	wantToolError(t, out, isErr, "read_only", "")
	if after, _ := toolText(t, cs.ClientSession, "context_read", map[string]any{"drive": "self", "path": "/soul.md"}); after["content"] != soul["content"] {
		t.Errorf("soul.md changed: %v", after["content"])
	}
	// History names the agent.
	out, _ = toolText(t, cs.ClientSession, "context_history", map[string]any{"path": "/notes/plan.md"})
	if b, _ := json.Marshal(out); !strings.Contains(string(b), `"actor":"test-agent"`) {
		t.Errorf("history does not name the agent: %s", b)
	}

	// Resources: the item by URI, the listing, a missing one.
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ctxd://agent/notes/plan.md"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "# Plan\n\nShip the zebrafish importer.\nThen write the docs.\n" || !strings.HasPrefix(rr.Contents[0].MIMEType, "text/markdown") {
		t.Errorf("read resource: %+v %v", rr.Contents[0], err)
	}
	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	if want := []string{"ctxd://self/beliefs.md", "ctxd://self/capabilities.md", "ctxd://self/goals.md", "ctxd://self/soul.md", "ctxd://agent/notes/plan.md"}; !slices.Equal(uris, want) {
		t.Errorf("resources %v, want %v", uris, want)
	}
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ctxd://agent/notes/plans.md"})
	if err == nil || !strings.Contains(err.Error(), `"error_type":"not_found"`) || !strings.Contains(err.Error(), "agent:/notes/plan.md") {
		t.Errorf("missing resource: %v", err)
	}

	// The prompt.
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "build_context", Arguments: map[string]string{"task": "zebrafish importer", "budget": "2000"}})
	if err != nil || len(pr.Messages) != 1 {
		t.Fatalf("prompt: %+v %v", pr, err)
	}
	if text := pr.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(text, "Zebrafish come first.") || !strings.Contains(text, "# Soul") {
		t.Errorf("prompt text lacks the context files: %q", text)
	}
	if !strings.Contains(pr.Description, "of 2000 tokens") {
		t.Errorf("prompt description %q", pr.Description)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "build_context", Arguments: map[string]string{"task": "x", "budget": "lots"}}); err == nil || !strings.Contains(err.Error(), "invalid_argument") {
		t.Errorf("bad budget: %v", err)
	}
}

// TestMCP_Profiles: --tools all lists every tool and --tools read the
// read-only ones; an unknown profile is a usage error before any daemon is
// asked.
func TestMCP_Profiles(t *testing.T) {
	socket := startDaemon(t)
	for _, p := range []string{"all", "read"} {
		if got, want := toolNames(listedTools(t, startMCP(t, socket, "--tools", p).ClientSession)), profileNames(t, p); !slices.Equal(got, want) {
			t.Errorf("--tools %s: %v, want %v", p, got, want)
		}
	}
	code, out, errOut := ctxd(t, socket, "", "mcp", "--tools", "most")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "core, read, all") {
		t.Errorf("--tools most: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// listedTools lists a session's tools.
func listedTools(t *testing.T, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool)
	}
	return tools
}

func toolNames(tools []*mcp.Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return names
}

// profileNames are a profile's tool names, sorted as the SDK lists them.
func profileNames(t *testing.T, profile string) []string {
	t.Helper()
	tools, err := toolset.Profile(profile)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// TestMCP_NoDaemon: without a daemon `ctxd mcp` exits 1 at once with the
// hint, writing nothing on stdout (the protocol's stream).
func TestMCP_NoDaemon(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "none.sock")
	var out, errOut bytes.Buffer
	code := runWith(context.Background(), []string{"--socket", socket, "mcp"}, strings.NewReader(""), &out, &errOut)
	if code != exitError || out.Len() != 0 || !strings.Contains(errOut.String(), "cannot reach the daemon at "+socket) ||
		!strings.Contains(errOut.String(), "hint: Start it with `ctxd serve`") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}

// TestMCP_DaemonGone: a call made after the daemon stopped is a tool error
// (unavailable, with the hint to start it), and the session goes on: once
// the daemon is back, its calls succeed again.
func TestMCP_DaemonGone(t *testing.T) {
	cfg, _ := tempConfig(t)
	d, err := daemon.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	cs := startMCP(t, cfg.Socket)
	if out, isErr := toolText(t, cs.ClientSession, "context_list_drives", nil); isErr {
		t.Fatalf("list drives: %v", out)
	}
	stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Stop(stop); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		out, isErr := toolText(t, cs.ClientSession, "context_read", map[string]any{"path": "/a.md"})
		wantToolError(t, out, isErr, "unavailable", "ctxd serve")
	}

	// Once the daemon is back, the same session's calls succeed again.
	d = runDaemon(t, cfg)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out, isErr := toolText(t, cs.ClientSession, "context_list_drives", nil)
		if !isErr {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session did not reconnect to the restarted daemon: %v", out)
		}
	}
}

// TestMCP_AgentName: an invalid --agent-name is refused by the daemon at
// start, with its hint.
func TestMCP_AgentName(t *testing.T) {
	socket := startDaemon(t)
	var out, errOut bytes.Buffer
	code := runWith(context.Background(), []string{"--socket", socket, "mcp", "--agent-name", "no spaces"}, strings.NewReader(""), &out, &errOut)
	if code != exitError || out.Len() != 0 || !strings.Contains(errOut.String(), "INVALID_ARGUMENT") || !strings.Contains(errOut.String(), "--agent-name") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}

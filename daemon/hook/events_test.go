package hook_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/daemon/hook"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

const (
	toolUse    = ctxdv1.SessionEventKind_SESSION_EVENT_KIND_TOOL_USE
	fileChange = ctxdv1.SessionEventKind_SESSION_EVENT_KIND_FILE_CHANGE
	errorKind  = ctxdv1.SessionEventKind_SESSION_EVENT_KIND_ERROR
	decision   = ctxdv1.SessionEventKind_SESSION_EVENT_KIND_DECISION
)

func mustRead(t *testing.T, input string) *hook.Input {
	t.Helper()
	in, err := hook.ReadInput(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// Secrets of known shape, built from parts.
var (
	ghToken   = "ghp_" + strings.Repeat("aB3d", 9)
	openAIKey = "sk-proj-" + strings.Repeat("Xy7_", 12)
)

func TestToolEvent(t *testing.T) {
	tests := []struct {
		name  string
		input string
		kind  ctxdv1.SessionEventKind
		text  string
		refs  []string
	}{
		{"reference Write", reference["PostToolUse/Write"], fileChange,
			"Write: /path/to/file.txt (12 bytes)", []string{"/path/to/file.txt"}},
		{"reference failed Bash", reference["PostToolUseFailure/Bash"], errorKind,
			"npm test failed: Command exited with non-zero status code 1\ndescription: Run test suite", nil},
		{"Bash", postToolUse("Bash", `{"command": "go test ./...", "description": "Run the tests", "timeout": 120000, "run_in_background": false}`,
			`{"stdout": "ok  \tgithub.com/x/y\t0.3s", "stderr": "", "interrupted": false, "isImage": false}`), toolUse,
			"go test ./...\ndescription: Run the tests", nil},
		{"Bash in the background with a token", postToolUse("Bash", `{"command": "GITHUB_TOKEN=`+ghToken+` gh pr list", "run_in_background": true}`, `{}`), toolUse,
			"GITHUB_TOKEN=[REDACTED] gh pr list\nin the background", nil},
		{"Bash interrupted", postToolUse("Bash", `{"command": "sleep 100"}`, `{"stdout": "", "stderr": "", "interrupted": true}`), errorKind,
			"sleep 100 failed: interrupted by the user", nil},
		{"Edit", postToolUse("Edit", `{"file_path": "/repo/main.go", "old_string": "func old() {}", "new_string": "func new() {}", "replace_all": false}`,
			`{"filePath": "/repo/main.go", "oldString": "func old() {}", "newString": "func new() {}", "originalFile": "package main\nfunc old() {}\n", "structuredPatch": [], "userModified": false, "replaceAll": false}`),
			fileChange, "Edit: /repo/main.go", []string{"/repo/main.go"}},
		{"MultiEdit", postToolUse("MultiEdit", `{"file_path": "/repo/a.go", "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]}`, `{}`),
			fileChange, "MultiEdit: /repo/a.go (2 edits)", []string{"/repo/a.go"}},
		{"NotebookEdit", postToolUse("NotebookEdit", `{"notebook_path": "/repo/nb.ipynb", "new_source": "print(1)", "cell_id": "c1"}`, `{}`),
			fileChange, "NotebookEdit: /repo/nb.ipynb", []string{"/repo/nb.ipynb"}},
		{"Read", postToolUse("Read", `{"file_path": "/repo/README.md", "offset": 10, "limit": 50}`, `{"type": "text", "file": {"filePath": "/repo/README.md", "content": "# Title\nsecret stuff"}}`),
			toolUse, "Read: /repo/README.md", []string{"/repo/README.md"}},
		{"Glob", postToolUse("Glob", `{"pattern": "**/*.go", "path": "/repo"}`, `{"filenames": ["/repo/a.go"]}`),
			toolUse, "Glob: **/*.go in /repo", []string{"/repo"}},
		{"Grep", postToolUse("Grep", `{"pattern": "func Test", "path": "/repo/daemon", "glob": "*_test.go", "output_mode": "files_with_matches", "-i": false, "multiline": false}`, `{}`),
			toolUse, "Grep: func Test in /repo/daemon (files *_test.go)", []string{"/repo/daemon"}},
		{"WebFetch", postToolUse("WebFetch", `{"url": "https://go.dev/doc/effective_go", "prompt": "How are interfaces named?"}`, `{"bytes": 1000, "code": 200, "result": "…"}`),
			toolUse, "WebFetch: https://go.dev/doc/effective_go\nlooking for: How are interfaces named?", []string{"https://go.dev/doc/effective_go"}},
		{"WebSearch", postToolUse("WebSearch", `{"query": "bbolt freelist sync", "allowed_domains": [], "blocked_domains": []}`, `{}`),
			toolUse, "WebSearch: bbolt freelist sync", nil},
		{"Task", postToolUse("Task", `{"description": "Find the auth code", "prompt": "Locate every place tokens are checked", "subagent_type": "Explore"}`, `{}`),
			toolUse, "Task: Find the auth code (Explore)\nprompt: Locate every place tokens are checked", nil},
		{"TodoWrite", postToolUse("TodoWrite", `{"todos": [
      {"content": "write a readme", "status": "completed", "activeForm": "Writing a readme"},
      {"content": "add the hook tests", "status": "in_progress", "activeForm": "Adding the hook tests"},
      {"content": "measure p99", "status": "pending", "activeForm": "Measuring p99"}]}`,
			`{"oldTodos": [], "newTodos": []}`), toolUse,
			"TodoWrite: 3 todos (1 completed, 1 in progress, 1 pending)\n- [x] write a readme\n- [ ] add the hook tests\n- [ ] measure p99", nil},
		{"TaskCreate", postToolUse("TaskCreate", `{"subject": "Add user authentication", "description": "JWT", "activeForm": "Adding user authentication"}`, `{"task": {"id": "1", "subject": "Add user authentication"}}`),
			toolUse, "TaskCreate: Add user authentication", nil},
		{"TaskUpdate", postToolUse("TaskUpdate", `{"taskId": "1", "status": "completed", "subject": "Add user authentication"}`, `{}`),
			toolUse, "TaskUpdate: task 1 completed (Add user authentication)", nil},
		{"ExitPlanMode", postToolUse("ExitPlanMode", `{"plan": "1. Add the hook\n2. Test it"}`, `{}`),
			decision, "Plan approved: 1. Add the hook\n2. Test it", nil},
		{"MCP tool", postToolUse("mcp__ctxd__context_write", `{"path": "/notes/plan.md", "content": "the whole note", "on_conflict": "overwrite"}`, `{}`),
			toolUse, "mcp__ctxd__context_write: path=/notes/plan.md", []string{"/notes/plan.md"}},
		{"failed Edit", postToolUse("Edit", `{"file_path": "/repo/x.go", "old_string": "a", "new_string": "b"}`, `{"success": false, "error": "String to replace not found in file."}`),
			errorKind, "/repo/x.go failed: String to replace not found in file.", []string{"/repo/x.go"}},
		{"Read of a secret file", postToolUse("Read", `{"file_path": "/repo/.env"}`, `{"file": {"content": "OPENAI_API_KEY=`+openAIKey+`"}}`),
			toolUse, "Read: /repo/.env (secret file name .env: nothing else recorded)", []string{"/repo/.env"}},
		{"failed Edit of a key file", `{"session_id": "s", "hook_event_name": "PostToolUseFailure", "tool_name": "Edit",
			"tool_input": {"file_path": "/home/me/.ssh/id_ed25519", "old_string": "-----BEGIN", "new_string": "x"},
			"error": "String to replace not found in file.\nString: -----BEGIN"}`,
			errorKind, "/home/me/.ssh/id_ed25519 failed (inside .ssh, a credentials directory: nothing else recorded)", []string{"/home/me/.ssh/id_ed25519"}},
		{"failure with a long error", `{"session_id": "s", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
			"tool_input": {"command": "go vet ./..."}, "error": "Error: exit status 1\n# ctxd/x\nx.go:3:2: unused variable"}`,
			errorKind, "go vet ./... failed: Error: exit status 1\nerror: Error: exit status 1\n# ctxd/x\nx.go:3:2: unused variable", nil},
		{"interrupted failure", `{"session_id": "s", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": "make bench"}, "error": "", "is_interrupt": true}`,
			errorKind, "make bench failed: interrupted by the user", nil},
		{"no tool input", `{"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Bash"}`, toolUse, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := hook.ToolEvent(mustRead(t, tt.input))
			if ev.Kind != tt.kind || ev.Text != tt.text || !slices.Equal(ev.Refs, tt.refs) {
				t.Errorf("got  %v %q %q\nwant %v %q %q", ev.Kind, ev.Text, ev.Refs, tt.kind, tt.text, tt.refs)
			}
			if ev.Tool == "" || ev.Truncated {
				t.Errorf("tool %q, truncated %v", ev.Tool, ev.Truncated)
			}
		})
	}
}

// TestToolEvent_Bounds: a Write's content is never recorded, long inputs
// are cut at MaxFieldBytes with the daemon's marker, and no event is over
// MaxSummaryBytes.
func TestToolEvent_Bounds(t *testing.T) {
	content := strings.Repeat("confidential line\n", 100_000)
	ev := hook.ToolEvent(mustRead(t, postToolUse("Write", `{"file_path": "/repo/big.txt", "content": "`+strings.ReplaceAll(content, "\n", `\n`)+`"}`, `{"success": true}`)))
	if strings.Contains(ev.Text, "confidential") || ev.Text != "Write: /repo/big.txt (1800000 bytes)" {
		t.Errorf("Write recorded %q", ev.Text)
	}
	long := strings.Repeat("é", 2000) // 4000 bytes
	ev = hook.ToolEvent(mustRead(t, postToolUse("Bash", `{"command": "echo `+long+`"}`, `{}`)))
	if len(ev.Text) > hook.MaxFieldBytes || !strings.Contains(ev.Text, "…[cut ") || !strings.HasSuffix(ev.Text, " bytes]") {
		t.Errorf("long command: %d bytes, %q…", len(ev.Text), ev.Text[len(ev.Text)-40:])
	}
	if !strings.HasPrefix(ev.Text, "echo é") || strings.ContainsRune(ev.Text, '\uFFFD') {
		t.Errorf("cut mid-rune: %q", ev.Text[:20])
	}
	var todos []string
	for i := range 200 {
		todos = append(todos, `{"content": "`+strings.Repeat("t", 300)+`", "status": "pending", "activeForm": "x`+string(rune('a'+i%26))+`"}`)
	}
	ev = hook.ToolEvent(mustRead(t, postToolUse("TodoWrite", `{"todos": [`+strings.Join(todos, ",")+`]}`, `{}`)))
	if len(ev.Text) > hook.MaxSummaryBytes || !ev.Truncated {
		t.Errorf("200 todos: %d bytes, truncated %v", len(ev.Text), ev.Truncated)
	}
	if !strings.HasPrefix(ev.Text, "TodoWrite: 200 todos (0 completed, 0 in progress, 200 pending)\n- [ ] ttt") {
		t.Errorf("200 todos: %q", ev.Text[:80])
	}
}

func TestPromptEvent(t *testing.T) {
	ev := hook.PromptEvent("deploy with OPENAI_API_KEY=" + openAIKey + " please")
	if ev.Kind != ctxdv1.SessionEventKind_SESSION_EVENT_KIND_PROMPT || ev.Text != "deploy with OPENAI_API_KEY=[REDACTED] please" || ev.Truncated {
		t.Errorf("got %v %q %v", ev.Kind, ev.Text, ev.Truncated)
	}
	ev = hook.PromptEvent(strings.Repeat("word ", 10_000))
	if len(ev.Text) > hook.MaxPromptBytes || !ev.Truncated || !strings.HasSuffix(ev.Text, " bytes]") {
		t.Errorf("long prompt: %d bytes, truncated %v", len(ev.Text), ev.Truncated)
	}
}

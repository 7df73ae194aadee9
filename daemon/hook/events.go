package hook

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/ingest"
)

// Bounds of what one event records. The daemon bounds event text again
// (limits.max_event_bytes, 8 KiB by default); these keep a tool's summary
// a summary.
const (
	// MaxPromptBytes bounds a recorded prompt, and the prompt sent to
	// Recall.
	MaxPromptBytes = 8 << 10
	// MaxFieldBytes bounds one key input of a tool use (a command, a path,
	// a URL, a pattern, a description) and the error a tool met.
	MaxFieldBytes = 1 << 10
	// MaxPlanBytes bounds an approved plan (ExitPlanMode).
	MaxPlanBytes = 4 << 10
	// MaxTodos bounds the todos listed from one TodoWrite; MaxTodoBytes
	// bounds each.
	MaxTodos     = 50
	MaxTodoBytes = 256
	// MaxSummaryBytes bounds the whole text of a tool-use event.
	MaxSummaryBytes = 6 << 10
)

// cut returns s whole when it has at most n bytes, else its longest prefix
// ending at a rune boundary followed by "…[cut N bytes]" (N the bytes
// dropped), at most n bytes in all: the marker the daemon uses for event
// text.
func cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	keep := max(n-len("…[cut 0000000000 bytes]"), 0)
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return fmt.Sprintf("%s…[cut %d bytes]", s[:keep], len(s)-keep), true
}

// clean is a value as recorded: valid UTF-8, secrets redacted, at most n
// bytes. Redaction comes first, so that a cut never leaves the start of a
// secret that Redact would no longer recognise.
func clean(s string, n int) string {
	out, _ := cut(ingest.Redact(strings.ToValidUTF8(s, "\uFFFD")), n)
	return out
}

// PromptEvent is the event that records a prompt: its text redacted and
// cut to MaxPromptBytes.
func PromptEvent(prompt string) *ctxdv1.SessionEvent {
	text, truncated := cut(ingest.Redact(strings.ToValidUTF8(prompt, "\uFFFD")), MaxPromptBytes)
	return &ctxdv1.SessionEvent{Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_PROMPT, Text: text, Truncated: truncated}
}

// toolArgs are a tool's input, decoded leniently: a field of another type
// than expected reads as empty.
type toolArgs map[string]json.RawMessage

func (a toolArgs) str(key string) string {
	var s string
	json.Unmarshal(a[key], &s)
	return s
}

func (a toolArgs) boolean(key string) bool {
	var b bool
	json.Unmarshal(a[key], &b)
	return b
}

func (a toolArgs) list(key string) []json.RawMessage {
	var l []json.RawMessage
	json.Unmarshal(a[key], &l)
	return l
}

// fileTools write files: their uses are FILE_CHANGE events.
var fileTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}

// pathKeys name a tool input's file path, in order of preference.
var pathKeys = []string{"file_path", "notebook_path", "path"}

// genericKeys are the inputs recorded for tools the hook does not know (MCP
// tools among them): names that hold a key input, never a content.
var genericKeys = []string{"file_path", "notebook_path", "path", "command", "url", "pattern", "query", "ref", "uri", "name", "description", "subject"}

// ToolEvent summarises a PostToolUse or PostToolUseFailure input as one
// event: the tool, its key input and, when it failed, the error. Its kind
// is ERROR when the tool failed, FILE_CHANGE for Write, Edit, MultiEdit and
// NotebookEdit (the path in refs), DECISION for an approved plan
// (ExitPlanMode), TOOL_USE otherwise. TodoWrite lists its todos one per
// line as "- [ ] text" (pending or in progress) or "- [x] text" (completed),
// which is where a session's open goals come from.
//
// Nothing of a file's content is recorded (a Write records the path and
// its size); each value is redacted (ingest.Redact) and cut to
// MaxFieldBytes, the whole to MaxSummaryBytes. A tool use on a file that
// ingest.SecretReason calls a secret records the tool and the path only,
// not even the error (an Edit's error quotes the file).
func ToolEvent(in *Input) *ctxdv1.SessionEvent {
	var args toolArgs
	json.Unmarshal(in.ToolInput, &args)
	tool := strings.ToValidUTF8(in.ToolName, "\uFFFD")
	if tool == "" {
		tool = "tool"
	}
	tool, _ = cut(tool, 128)
	failed, errText := toolFailed(in)
	ev := &ctxdv1.SessionEvent{Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_TOOL_USE, Tool: tool}
	if failed {
		ev.Kind = ctxdv1.SessionEventKind_SESSION_EVENT_KIND_ERROR
	} else if fileTools[tool] {
		ev.Kind = ctxdv1.SessionEventKind_SESSION_EVENT_KIND_FILE_CHANGE
	}
	head := tool
	if failed {
		head += " failed"
	}

	path := ""
	for _, k := range pathKeys {
		if path = args.str(k); path != "" {
			break
		}
	}
	ref := ""
	if path != "" {
		ref = clean(path, MaxFieldBytes)
		ev.Refs = []string{ref}
		if reason, secret := ingest.SecretReason(path); secret {
			ev.Text = fmt.Sprintf("%s: %s (%s: nothing else recorded)", head, ref, reason)
			return ev
		}
	}

	var lines []string
	line := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	field := func(key string) string { return clean(args.str(key), MaxFieldBytes) }
	switch tool {
	case "Bash":
		line("%s: %s", head, field("command"))
		if d := field("description"); d != "" {
			line("description: %s", d)
		}
		if args.boolean("run_in_background") {
			line("in the background")
		}
	case "Read", "Edit", "NotebookEdit":
		line("%s: %s", head, ref)
	case "Write":
		line("%s: %s (%d bytes)", head, ref, len(args.str("content")))
	case "MultiEdit":
		line("%s: %s (%d edits)", head, ref, len(args.list("edits")))
	case "Glob", "Grep":
		s := fmt.Sprintf("%s: %s", head, field("pattern"))
		if p := ref; p != "" {
			s += " in " + p
		}
		if g := field("glob"); g != "" {
			s += " (files " + g + ")"
		}
		line("%s", s)
	case "WebFetch":
		url := field("url")
		ev.Refs = append(ev.Refs, url)
		line("%s: %s", head, url)
		if p := field("prompt"); p != "" {
			line("looking for: %s", p)
		}
	case "WebSearch":
		line("%s: %s", head, field("query"))
	case "Task", "Agent":
		s := fmt.Sprintf("%s: %s", head, field("description"))
		if t := field("subagent_type"); t != "" {
			s += " (" + t + ")"
		}
		line("%s", s)
		if p := field("prompt"); p != "" {
			line("prompt: %s", p)
		}
	case "TodoWrite":
		todos := todoLines(args.list("todos"))
		line("%s: %s", head, todos[0])
		lines = append(lines, todos[1:]...)
	case "TaskCreate":
		line("%s:", head)
		line("- [ ] %s", clean(args.str("subject"), MaxTodoBytes))
	case "TaskUpdate":
		s := fmt.Sprintf("%s: task %s", head, field("taskId"))
		if st := field("status"); st != "" {
			s += " " + strings.ReplaceAll(st, "_", " ")
		}
		line("%s", s)
		if subj := args.str("subject"); subj != "" {
			mark := " "
			if args.str("status") == "completed" {
				mark = "x"
			}
			line("- [%s] %s", mark, clean(subj, MaxTodoBytes))
		}
	case "ExitPlanMode":
		if !failed {
			ev.Kind = ctxdv1.SessionEventKind_SESSION_EVENT_KIND_DECISION
			head = "plan approved"
		}
		line("%s:", head)
		line("%s", clean(args.str("plan"), MaxPlanBytes))
	default:
		var kv []string
		for _, k := range genericKeys {
			if v := field(k); v != "" {
				kv = append(kv, k+"="+v)
			}
		}
		line("%s", strings.TrimSuffix(head+": "+strings.Join(kv, ", "), ": "))
	}
	if failed {
		if errText == "" {
			errText = "no error message"
		}
		line("error: %s", clean(errText, MaxFieldBytes))
	}
	ev.Text, ev.Truncated = cut(strings.Join(lines, "\n"), MaxSummaryBytes)
	return ev
}

// todoLines renders TodoWrite's todos: a count line, then one line per
// todo, at most MaxTodos.
func todoLines(raw []json.RawMessage) []string {
	counts := map[string]int{}
	var items []string
	for _, r := range raw {
		var t struct {
			Content string `json:"content"`
			Status  string `json:"status"`
		}
		json.Unmarshal(r, &t)
		counts[t.Status]++
		if len(items) == MaxTodos {
			continue
		}
		mark := " "
		if t.Status == "completed" {
			mark = "x"
		}
		items = append(items, fmt.Sprintf("- [%s] %s", mark, clean(t.Content, MaxTodoBytes)))
	}
	head := fmt.Sprintf("%d todos (%d completed, %d in progress, %d pending)", len(raw), counts["completed"], counts["in_progress"], counts["pending"])
	if more := len(raw) - len(items); more > 0 {
		items = append(items, fmt.Sprintf("… %d more", more))
	}
	return append([]string{head}, items...)
}

// toolFailed tells whether a tool use failed and with what message: every
// PostToolUseFailure, and a PostToolUse whose tool_response says so
// ("success": false, "is_error": true, an "error" text, "interrupted").
func toolFailed(in *Input) (bool, string) {
	if in.HookEventName == PostToolUseFailure {
		if in.IsInterrupt {
			return true, strings.TrimSpace("interrupted by the user " + in.Error)
		}
		return true, in.Error
	}
	var resp struct {
		Success     *bool  `json:"success"`
		IsError     bool   `json:"is_error"`
		Error       string `json:"error"`
		Interrupted bool   `json:"interrupted"`
	}
	json.Unmarshal(in.ToolResponse, &resp)
	switch {
	case resp.Error != "":
		return true, resp.Error
	case resp.Success != nil && !*resp.Success, resp.IsError:
		return true, ""
	case resp.Interrupted:
		return true, "interrupted by the user"
	}
	return false, ""
}

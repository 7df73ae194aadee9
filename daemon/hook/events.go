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

// shellTools are the tools whose key input is a command: their TOOL_USE
// text starts with the command run, as the digest reads it.
var shellTools = map[string]bool{"Bash": true}

// ToolEvent summarises a PostToolUse or PostToolUseFailure input as one
// event: the tool (in Tool), its key input and, when it failed, the error.
// Its kind is ERROR when the tool failed, FILE_CHANGE for Write, Edit,
// MultiEdit and NotebookEdit (the file in refs), DECISION for an approved
// plan (ExitPlanMode), TOOL_USE otherwise.
//
// The text's first line is what the session's digest shows: for a Bash
// TOOL_USE the command run; for an ERROR the key input, "failed:" and the
// error's first line (the digest puts the tool in front); otherwise
// "TOOL: key input". More lines follow (a command's description, the whole
// error, a plan). TodoWrite lists its todos one per line, "- [ ] text"
// (pending or in progress) or "- [x] text" (completed): the latest such
// list's unchecked lines are the session's open goals.
//
// Nothing of a file's content is recorded (a Write records the path and
// its size); each value is redacted (ingest.Redact) and cut to
// MaxFieldBytes, the whole to MaxSummaryBytes. A tool use on a file that
// ingest.SecretReason calls a secret records the path alone, not even the
// error (an Edit's error quotes the file).
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
	switch {
	case failed:
		ev.Kind = ctxdv1.SessionEventKind_SESSION_EVENT_KIND_ERROR
	case fileTools[tool]:
		ev.Kind = ctxdv1.SessionEventKind_SESSION_EVENT_KIND_FILE_CHANGE
	case tool == "ExitPlanMode":
		ev.Kind = ctxdv1.SessionEventKind_SESSION_EVENT_KIND_DECISION
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
			ev.Text = fmt.Sprintf("%s: %s (%s: nothing else recorded)", tool, ref, reason)
			if failed {
				ev.Text = fmt.Sprintf("%s failed (%s: nothing else recorded)", ref, reason)
			}
			return ev
		}
	}

	field := func(key string) string { return clean(args.str(key), MaxFieldBytes) }
	var key string    // the call in a phrase
	var more []string // lines after the first
	switch tool {
	case "Bash":
		key = field("command")
		if d := field("description"); d != "" {
			more = append(more, "description: "+d)
		}
		if args.boolean("run_in_background") {
			more = append(more, "in the background")
		}
	case "Read", "Edit", "NotebookEdit":
		key = ref
	case "Write":
		key = fmt.Sprintf("%s (%d bytes)", ref, len(args.str("content")))
	case "MultiEdit":
		key = fmt.Sprintf("%s (%d edits)", ref, len(args.list("edits")))
	case "Glob", "Grep":
		key = field("pattern")
		if ref != "" {
			key += " in " + ref
		}
		if g := field("glob"); g != "" {
			key += " (files " + g + ")"
		}
	case "WebFetch":
		key = field("url")
		ev.Refs = append(ev.Refs, key)
		if p := field("prompt"); p != "" {
			more = append(more, "looking for: "+p)
		}
	case "WebSearch":
		key = field("query")
	case "Task", "Agent":
		key = field("description")
		if t := field("subagent_type"); t != "" {
			key += " (" + t + ")"
		}
		if p := field("prompt"); p != "" {
			more = append(more, "prompt: "+p)
		}
	case "TodoWrite":
		todos := todoLines(args.list("todos"))
		key, more = todos[0], todos[1:]
	case "TaskCreate":
		// One task, not the list: task-list lines here would read as the
		// whole list, and hide the open goals of the latest TodoWrite.
		key = clean(args.str("subject"), MaxTodoBytes)
	case "TaskUpdate":
		key = "task " + field("taskId")
		if st := field("status"); st != "" {
			key += " " + strings.ReplaceAll(st, "_", " ")
		}
		if subj := clean(args.str("subject"), MaxTodoBytes); subj != "" {
			key += " (" + subj + ")"
		}
	case "ExitPlanMode":
		plan := strings.Split(clean(args.str("plan"), MaxPlanBytes), "\n")
		key, more = "Plan approved: "+plan[0], plan[1:]
	default:
		var kv []string
		for _, k := range genericKeys {
			if v := field(k); v != "" {
				kv = append(kv, k+"="+v)
			}
		}
		key = strings.Join(kv, ", ")
	}

	var first string
	switch {
	case failed:
		errText = clean(errText, MaxFieldBytes)
		errFirst, errRest, multi := strings.Cut(errText, "\n")
		first = strings.TrimSpace(key + " failed")
		if errFirst != "" {
			first += ": " + errFirst
		}
		if multi && strings.TrimSpace(errRest) != "" {
			more = append(more, "error: "+errText)
		}
	case shellTools[tool], tool == "ExitPlanMode":
		first = key
	default:
		first = strings.TrimSuffix(tool+": "+key, ": ")
	}
	ev.Text, ev.Truncated = cut(strings.Join(append([]string{first}, more...), "\n"), MaxSummaryBytes)
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

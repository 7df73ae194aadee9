package hook_test

import (
	"strings"
)

// The hook inputs below are shaped exactly as Claude Code's hooks reference
// documents them ("Hook input" of each event, and the tool input schemas of
// PreToolUse/PostToolUse): https://code.claude.com/docs/en/hooks (formerly
// https://docs.anthropic.com/en/docs/claude-code/hooks). The common fields
// and their example values (session_id "abc123", the transcript path, cwd
// "/Users/...", permission_mode "default") are the reference's; tests
// replace session_id and cwd with their own. Where the reference's example
// shows one value of a field (Stop's stop_hook_active true, PreCompact's
// trigger "manual") the tests also use the other documented one.

// commonFields are the fields every event carries, with the reference's
// example values.
const commonFields = `"session_id": "abc123",
  "transcript_path": "/Users/.../.claude/projects/.../00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
  "cwd": "/Users/...",
  "permission_mode": "default",
  `

// reference holds each event's documented input, keyed by a name.
var reference = map[string]string{
	"SessionStart": `{
  ` + commonFields + `"hook_event_name": "SessionStart",
  "source": "startup",
  "model": "claude-sonnet-4-6"
}`,
	"SessionStart/resume": `{
  ` + commonFields + `"hook_event_name": "SessionStart",
  "source": "resume",
  "model": "claude-sonnet-4-6"
}`,
	"UserPromptSubmit": `{
  ` + commonFields + `"hook_event_name": "UserPromptSubmit",
  "prompt": "Write a function to calculate the factorial of a number"
}`,
	"PostToolUse/Write": `{
  ` + commonFields + `"hook_event_name": "PostToolUse",
  "tool_name": "Write",
  "tool_input": {
    "file_path": "/path/to/file.txt",
    "content": "file content"
  },
  "tool_response": {
    "filePath": "/path/to/file.txt",
    "success": true
  },
  "tool_use_id": "toolu_01ABC123..."
}`,
	"PostToolUseFailure/Bash": `{
  ` + commonFields + `"hook_event_name": "PostToolUseFailure",
  "tool_name": "Bash",
  "tool_input": {
    "command": "npm test",
    "description": "Run test suite"
  },
  "tool_use_id": "toolu_01ABC123...",
  "error": "Command exited with non-zero status code 1",
  "is_interrupt": false
}`,
	"PreCompact": `{
  ` + commonFields + `"hook_event_name": "PreCompact",
  "trigger": "manual",
  "custom_instructions": ""
}`,
	"PreCompact/auto": `{
  ` + commonFields + `"hook_event_name": "PreCompact",
  "trigger": "auto",
  "custom_instructions": ""
}`,
	"Stop": `{
  ` + commonFields + `"hook_event_name": "Stop",
  "stop_hook_active": false
}`,
	"Stop/active": `{
  ` + commonFields + `"hook_event_name": "Stop",
  "stop_hook_active": true
}`,
	"SessionEnd": `{
  ` + commonFields + `"hook_event_name": "SessionEnd",
  "reason": "other"
}`,
}

// postToolUse is a PostToolUse input of the reference's shape for a tool
// with the given tool_input and tool_response (JSON).
func postToolUse(tool, toolInput, toolResponse string) string {
	return `{
  ` + commonFields + `"hook_event_name": "PostToolUse",
  "tool_name": "` + tool + `",
  "tool_input": ` + toolInput + `,
  "tool_response": ` + toolResponse + `,
  "tool_use_id": "toolu_01ABC123..."
}`
}

// withSession replaces the reference's session_id and cwd.
func withSession(input, sessionID, cwd string) string {
	return strings.NewReplacer(`"session_id": "abc123"`, `"session_id": "`+sessionID+`"`,
		`"cwd": "/Users/..."`, `"cwd": "`+cwd+`"`).Replace(input)
}

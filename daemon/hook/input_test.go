package hook_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/daemon/hook"
)

func TestReadInput_Reference(t *testing.T) {
	tests := []struct {
		name  string
		check func(*hook.Input) bool
	}{
		{"SessionStart", func(in *hook.Input) bool { return in.Source == "startup" && in.Model == "claude-sonnet-4-6" }},
		{"UserPromptSubmit", func(in *hook.Input) bool {
			return in.Prompt == "Write a function to calculate the factorial of a number"
		}},
		{"PostToolUse/Write", func(in *hook.Input) bool {
			return in.ToolName == "Write" && in.ToolUseID == "toolu_01ABC123..." && strings.Contains(string(in.ToolInput), `"/path/to/file.txt"`) &&
				strings.Contains(string(in.ToolResponse), `"success": true`)
		}},
		{"PostToolUseFailure/Bash", func(in *hook.Input) bool {
			return in.ToolName == "Bash" && in.Error == "Command exited with non-zero status code 1" && !in.IsInterrupt
		}},
		{"PreCompact", func(in *hook.Input) bool { return in.Trigger == "manual" && in.CustomInstructions == "" }},
		{"Stop/active", func(in *hook.Input) bool { return in.StopHookActive }},
		{"SessionEnd", func(in *hook.Input) bool { return in.Reason == "other" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := hook.ReadInput(strings.NewReader(reference[tt.name]))
			if err != nil {
				t.Fatal(err)
			}
			event, _, _ := strings.Cut(tt.name, "/")
			if in.SessionID != "abc123" || in.Cwd != "/Users/..." || in.PermissionMode != "default" ||
				!strings.HasSuffix(in.TranscriptPath, ".jsonl") || in.HookEventName != event {
				t.Errorf("common fields: %+v", in)
			}
			if !tt.check(in) {
				t.Errorf("event fields: %+v", in)
			}
		})
	}
}

// TestReadInput_Lenient: unknown fields are ignored, a known field of
// another type reads as empty, and what is not a JSON object, or too
// large, is an error.
func TestReadInput_Lenient(t *testing.T) {
	in, err := hook.ReadInput(strings.NewReader(`{"session_id":"s1","hook_event_name":"Stop","agent_id":"a","future":{"x":[1]},"stop_hook_active":"yes","reason":7}`))
	if err != nil || in.SessionID != "s1" || in.HookEventName != "Stop" || in.StopHookActive || in.Reason != "" {
		t.Errorf("got %+v, %v", in, err)
	}
	for _, bad := range []string{"", "garbage", "[1,2]", `"SessionStart"`, `{"session_id":`} {
		if _, err := hook.ReadInput(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadInput(%q) succeeded", bad)
		}
	}
	huge := `{"hook_event_name":"PostToolUse","tool_input":{"content":"` + strings.Repeat("x", hook.MaxInputBytes) + `"}}`
	if _, err := hook.ReadInput(strings.NewReader(huge)); !errors.Is(err, hook.ErrInputTooLarge) {
		t.Errorf("input over MaxInputBytes: %v", err)
	}
}

package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The Claude Code hook events the hook handles; any other event does
// nothing.
const (
	SessionStart       = "SessionStart"
	UserPromptSubmit   = "UserPromptSubmit"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	PreCompact         = "PreCompact"
	Stop               = "Stop"
	SessionEnd         = "SessionEnd"
)

// Events are the events Install registers, in the order a session meets
// them.
var Events = []string{SessionStart, UserPromptSubmit, PostToolUse, PostToolUseFailure, PreCompact, Stop, SessionEnd}

// MaxInputBytes bounds the JSON read from stdin. A tool's input and
// response ride in it (a Write's whole content, a Read's file), so it is
// large; a longer input is drained and not handled.
const MaxInputBytes = 16 << 20

// Input is what Claude Code writes on a command hook's stdin: the common
// fields, then those of the event. Fields of other events are empty.
type Input struct {
	// Common to every event.
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode"`
	HookEventName  string `json:"hook_event_name"`

	// SessionStart: startup, resume, clear or compact; and the model.
	Source string `json:"source"`
	Model  string `json:"model"`

	// UserPromptSubmit.
	Prompt string `json:"prompt"`

	// PostToolUse and PostToolUseFailure. ToolInput and ToolResponse
	// differ per tool; PostToolUseFailure has Error (and IsInterrupt)
	// instead of ToolResponse.
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
	ToolUseID    string          `json:"tool_use_id"`
	Error        string          `json:"error"`
	IsInterrupt  bool            `json:"is_interrupt"`

	// PreCompact: manual or auto, and the instructions given to /compact.
	Trigger            string `json:"trigger"`
	CustomInstructions string `json:"custom_instructions"`

	// Stop: true when Claude Code already continues because of a Stop hook.
	StopHookActive bool `json:"stop_hook_active"`

	// SessionEnd: clear, logout, prompt_input_exit, other, ….
	Reason string `json:"reason"`
}

// ErrInputTooLarge is returned by ReadInput for an input over MaxInputBytes.
var ErrInputTooLarge = fmt.Errorf("the hook input is over %d MiB", MaxInputBytes>>20)

// ReadInput reads one hook input from r, at most MaxInputBytes; a longer
// input is read to its end (so the host's write never fails) and refused
// with ErrInputTooLarge. Unknown fields are ignored, and a known field of
// an unexpected type is left empty instead of failing the whole input.
func ReadInput(r io.Reader) (*Input, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the hook input: %w", err)
	}
	if len(data) > MaxInputBytes {
		io.Copy(io.Discard, r)
		return nil, ErrInputTooLarge
	}
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) || typeErr.Field == "" {
			return nil, fmt.Errorf("the hook input is not a JSON object: %w", err)
		}
	}
	return &in, nil
}

// Package hook is ctxd's face to agent hosts that run hooks: Claude Code's
// command hooks first. It owns `ctxd hook claude-code` (the cmd/ctxd
// subcommand is a thin shell around Run) and `ctxd hook install|uninstall
// claude-code`, and nothing else:
//
//   - input: the JSON Claude Code writes on a hook's stdin (Input), as its
//     hooks reference documents it, at most MaxInputBytes; unknown fields
//     are ignored and unknown events do nothing.
//   - what is recorded: a session per host session (StartSession with the
//     host's session_id and cwd, actor "claude-code"), the prompts (PROMPT
//     events), one bounded summary per tool use (ToolEvent: TOOL_USE,
//     FILE_CHANGE for the file-writing tools, ERROR when the tool failed,
//     DECISION for an approved plan), a digest at PreCompact and Stop, and
//     the end at SessionEnd. Summaries name the tool and its key input (a
//     path, a command, a URL, a pattern) and never hold file contents;
//     every text goes through ingest.Redact, and a tool use on a file that
//     ingest.SecretReason calls a secret records the path alone.
//   - what is injected: at SessionStart what the next session should know
//     for the project, at UserPromptSubmit the context files and memory
//     that match the prompt (SessionService.Recall), as the exact JSON the
//     host documents (Output): sanitised of control sequences, within the
//     host's MaxContextChars, or nothing at all.
//   - never breaking the host: Run always returns (the command exits 0),
//     bounded by a deadline, with at most one line on stderr for what went
//     wrong; a SessionStart that meets a daemon still starting waits for it,
//     bounded (WaitReady says how "starting" is told from "down").
//   - the settings merge (Install, Uninstall): ctxd's hooks into a Claude
//     Code settings file, keeping every other byte of it.
//
// The package is an API client, like mcpserver: every call goes to the
// daemon's SessionService over gRPC, so the daemon checks scopes and limits
// as for any caller. It holds no state between invocations: each hook event
// is one short-lived process.
package hook

// Package toolset is the one definition of the tools ctxd offers to agents:
// their names, descriptions, JSON input schemas, annotations and required
// scopes, and the dispatch (Call) that runs a tool against the daemon's gRPC
// API. The MCP server, `ctxd tools`, the ToolService RPC and the Python and
// TypeScript clients all go through it; nothing else writes a tool schema.
//
// A host loads the tool list into every conversation, so what it lists is a
// profile (Profile): core, the default, holds the seeds' seven tools and
// remember within TokenBudget tokens (CountTokens counts them with
// internal/llmtokens; a test holds the list to the budget); read holds the
// tools that change nothing; all holds every tool. Call runs any tool of any
// profile, and the older names merged into a broader tool (context_exists,
// context_count_lines and context_dir_size, answered by context_info) too,
// listed by no profile, so that callers using them by name keep working.
//
// Each tool's input schema is derived from its Go input struct
// (jsonschema.For), with descriptions from `jsonschema` tags and defaults,
// enums and bounds from `schema` tags, so the schema an LLM sees and the
// decoding Call does can not drift apart. Arguments are validated against
// that schema, its defaults applied, then decoded strictly.
//
// The package is an API client like cmd/ctxd: it never touches the store or
// the indexes, and it never checks scopes or access limits itself. The daemon
// enforces those for every caller, so a tool inherits them from the
// credentials on its Backend's connection.
//
// Every failure, whether an unknown tool, arguments that do not match the
// schema or an RPC error, is a Result with IsError set whose text is the
// seed's error shape {"is_error","error_type","message","next_action_hint"};
// Call never returns a Go error, so an MCP host never sees a protocol error.
package toolset

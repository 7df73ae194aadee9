// Package mcpserver builds ctxd's Model Context Protocol server on the
// official Go SDK (github.com/modelcontextprotocol/go-sdk). It owns the MCP
// face of the daemon and nothing else:
//
//   - tools: the tools of a toolset profile (names, descriptions, input
//     schemas, annotations), each dispatched with toolset.Call; tools/call
//     also runs the tools toolset knows that the profile does not list. A
//     tool that fails is a result with isError and the seed's JSON error
//     text, never a protocol error.
//   - resources: every item is the resource ctxd://DRIVE/PATH (a resource
//     template); resources/list pages through the items of the self and
//     agent drives, at most MaxListedResources in all.
//   - prompts: build_context assembles the context of a task.
//
// The server is an API client, like toolset: every request goes through a
// toolset.Backend to the daemon's gRPC API, so the daemon checks scopes,
// access limits and agent guards as for any caller. `ctxd mcp` serves it over
// stdio with a Backend on the unix socket; the daemon serves it over
// streamable HTTP at /mcp with a Backend per request that carries that
// request's own bearer token (Options.Backend).
package mcpserver

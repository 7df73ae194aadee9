// Package daemon runs ctxd: it owns configuration, the data-dir lock, the
// gRPC server (unix socket and optional loopback TCP) with its interceptors,
// the grpc-gateway JSON/HTTP API, bearer-token auth, and the service adapters
// that translate between API messages and the vfs, index, ingest and assemble
// packages. Its subpackages are the agent-facing surfaces: toolset (the tools
// agents call) and mcpserver (the MCP server built from them). It starts the background work the domain packages own
// (index/indexer's chunk and embed passes, vfs history pruning, the
// optional enrich.Enricher, the persistent watches of ingest/watcher) and hands
// what searches return to
// vfs.UsageRecorder (retrieval counts) and ingest.Revalidator (fetched pages
// past their TTL).
//
// The store is the bbolt file in the data dir or a PostgreSQL database that
// several daemons (replicas) share (store.go): on a shared store the daemon
// reports under the replica id kept in its data dir, probes the database
// every second and, while it does not answer, reports NOT_SERVING and
// answers UNAVAILABLE with a hint, serving again by itself once it does
// (storehealth.go). The URL's password never reaches a log, a status or an
// error.
//
// Services are thin: they decode a request, call the domain, and encode the
// result. Domain errors are mapped to gRPC status with an ErrorDetail in one
// place (errors.go); conversions live in convert.go.
//
// Trust model: the unix socket is protected by its file mode (0600) and needs
// no token unless socket_auth is set; every call arriving over TCP needs a
// bearer token whose scopes cover the method, and so does every call the
// daemon makes to itself on a caller's behalf (the gateway, MCP over HTTP,
// tool calls), which goes over an in-memory connection to the same gRPC
// server (tools.go: startInternal) carrying the caller's token: the daemon
// listens only on the socket and the TCP addresses configured. The HTTP
// listener first refuses requests whose Host is not a loopback name or whose
// Origin is foreign (edge.go: DNS rebinding, cross-site browser requests). Every call's context carries
// its caller as a vfs.Actor: the owner on the socket and with the owner
// token, else the token's name, and its agent flag, which the store's
// agent-modification guard checks and history records.
package daemon

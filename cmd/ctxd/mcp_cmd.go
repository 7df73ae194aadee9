package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ctxd/ctxd/daemon"
	"github.com/ctxd/ctxd/daemon/mcpserver"
	"github.com/ctxd/ctxd/daemon/toolset"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

func (c *cli) mcpCommand() *cobra.Command {
	agent, profile := "mcp", toolset.ProfileCore
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the Model Context Protocol over stdio, for agent hosts (Claude Code, Cursor, VS Code)",
		Long: `Serve ctxd's tools, its items as resources (ctxd://DRIVE/PATH) and the
build_context prompt over the Model Context Protocol on stdin and stdout, for an
agent host to start: claude mcp add ctxd -- ctxd mcp

Every call goes to the running daemon over its unix socket (--socket,
CTXD_SOCKET; --token or CTXD_TOKEN when it sets socket_auth) as an agent named
--agent-name, so files whose frontmatter protects them from agents are
read-only, and history records that name.

--tools picks the tools listed: core (the default: context_list_drives,
context_tree, context_read, context_write, context_edit, context_search,
build_context and remember), read (every tool that changes nothing) or all;
of those, the ones the caller may use. A call of any other ctxd tool by name
runs too. remember passes this process's working directory, from which the
daemon derives the project. stdout carries only the protocol; diagnostics go
to stderr.
Without a daemon it exits at once with a hint, and calls made while the daemon
is down fail with isError and the same hint.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := toolset.Profile(profile); err != nil {
				return usageError{err}
			}
			return c.serveMCP(cmd.Context(), agent, profile)
		},
	}
	cmd.Flags().StringVar(&agent, "agent-name", agent,
		"the agent's name in history, sent as ctxd-agent metadata: 1 to 64 characters of A-Z, a-z, 0-9, '.', '_', '-'")
	cmd.Flags().StringVar(&profile, "tools", profile, "which tools to list: "+strings.Join(toolset.Profiles, ", "))
	return cmd
}

// maxMCPLine is the longest JSON-RPC message `ctxd mcp` reads from stdin:
// twice the largest request the CLI sends (JSON escaping at most doubles
// content), so the daemon, not the transport, refuses an item over its limit.
const maxMCPLine = 2 * maxMessage

// serveMCP checks that the daemon answers, lists the profile's tools the
// caller may use, and serves MCP on stdio until stdin closes or ctx ends.
func (c *cli) serveMCP(ctx context.Context, agent, profile string) error {
	// A long-lived session reconnects within a second of a daemon restart,
	// instead of after grpc's default backoff of up to two minutes.
	cl, err := c.dial(grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
		MinConnectTimeout: 20 * time.Second, // grpc's default, which ConnectParams would otherwise zero
	}))
	if err != nil {
		return err
	}
	defer cl.conn.Close()
	conn := toolset.WithMetadata(cl.conn, daemon.AgentMetadata, agent)

	tools, err := c.mcpTools(ctx, conn, profile)
	if err != nil {
		return err
	}
	backend := toolset.NewBackend(conn)
	if wd, err := os.Getwd(); err == nil { // remember's project; without one the daemon uses its default
		backend.Cwd = wd
	}
	srv := mcpserver.New(mcpserver.Options{
		Tools:   tools,
		Backend: func(*mcp.RequestExtra) toolset.Backend { return backend },
		Version: daemon.Version,
		Logger:  slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	err = srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(c.stdin), Writer: nopWriteCloser{c.stdout}, MaxLineLength: maxMCPLine})
	if ctx.Err() != nil {
		return nil // stopped by a signal
	}
	return err
}

// mcpTools asks the daemon which of the profile's tools the caller may use
// (ListTools: its scopes decide), after a health check that turns a missing
// daemon into the CLI's "cannot reach the daemon" error and hint.
func (c *cli) mcpTools(ctx context.Context, conn grpc.ClientConnInterface, profile string) ([]toolset.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		return nil, err
	}
	resp, err := ctxdv1.NewToolServiceClient(conn).ListTools(ctx, &ctxdv1.ListToolsRequest{Format: "mcp", Profile: profile})
	if err != nil {
		return nil, err
	}
	var listed []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(resp.GetToolsJson()), &listed); err != nil {
		return nil, fmt.Errorf("the daemon's tool list: %w", err)
	}
	allowed := map[string]bool{}
	for _, t := range listed {
		allowed[t.Name] = true
	}
	var tools []toolset.Tool
	for _, t := range toolset.Tools() {
		if allowed[t.Name] {
			tools = append(tools, t)
		}
	}
	return tools, nil
}

// nopWriteCloser leaves stdout open when the transport closes.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

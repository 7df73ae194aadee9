package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxd/ctxd/daemon/toolset"
)

// toolsCommand prints the agent tools' definitions for harnesses that call
// tools without MCP. It needs no daemon: the definitions are compiled in.
func (c *cli) toolsCommand() *cobra.Command {
	var format string
	var scopes []string
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "Print the agent tool definitions as JSON schemas",
		Long: `Print the tools ctxd offers to agents (context_read, context_search, ...)
as a JSON array: --format openai gives function tools for the OpenAI API,
anthropic gives tools for the Anthropic Messages API, mcp gives MCP tool
definitions with annotations. Dispatch the model's tool calls with the
clients' call_tool, or the ToolService CallTool RPC. No daemon is needed.`,
		Example: `  ctxd tools --format openai > tools.json
  ctxd tools --format anthropic --scopes read`,
		Args: maxArgs(0),
		RunE: func(*cobra.Command, []string) error {
			tools := toolset.Tools()
			if len(scopes) > 0 {
				tools = toolset.Allowed(scopes)
			}
			out, err := toolset.Export(tools, format)
			if err != nil {
				return usageError{err}
			}
			fmt.Fprintln(c.stdout, string(out))
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "mcp", "output format: "+strings.Join(toolset.Formats, ", "))
	cmd.Flags().StringSliceVar(&scopes, "scopes", nil, "only the tools a token with these scopes may use (read, write, ingest, admin); default all")
	return cmd
}

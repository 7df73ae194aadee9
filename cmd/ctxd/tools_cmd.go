package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ctxd/ctxd/daemon/toolset"
	"github.com/ctxd/ctxd/internal/llmtokens"
)

// toolsCommand prints the agent tools' definitions for harnesses that call
// tools without MCP, or what they cost a model. It needs no daemon: the
// definitions are compiled in.
func (c *cli) toolsCommand() *cobra.Command {
	var format, profile string
	var scopes []string
	var stats bool
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "Print the agent tool definitions as JSON schemas, or their cost in tokens",
		Long: `Print the tools ctxd offers to agents (context_read, context_search, ...)
as a JSON array: --format openai gives function tools for the OpenAI API,
anthropic gives tools for the Anthropic Messages API, mcp gives MCP tool
definitions with annotations. --tools picks the list: core (the default: the
seeds' seven tools and remember), read (every tool that changes nothing) or
all. Dispatch the model's tool calls with the clients' call_tool, or the
ToolService CallTool RPC, which run a tool of any list. No daemon is needed.

--stats prints instead what the lists cost a model: the tokens of each tool
and of each whole list in every format, counted with OpenAI's ` + llmtokens.Encoding + `
encoding over the compact JSON a host receives, for every list (or the one
--tools names).`,
		Example: `  ctxd tools --format openai > tools.json
  ctxd tools --format anthropic --tools all --scopes read
  ctxd tools --stats`,
		Args: maxArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			profiles := []string{profile}
			if stats && !cmd.Flags().Changed("tools") {
				profiles = toolset.Profiles
			}
			lists := make([][]toolset.Tool, len(profiles))
			for i, p := range profiles {
				tools, err := toolset.Profile(p)
				if err != nil {
					return usageError{err}
				}
				if len(scopes) > 0 {
					tools = toolset.Allowed(tools, scopes)
				}
				lists[i] = tools
			}
			if stats {
				return writeToolStats(c.stdout, profiles, lists)
			}
			out, err := toolset.Export(lists[0], format)
			if err != nil {
				return usageError{err}
			}
			fmt.Fprintln(c.stdout, string(out))
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "mcp", "output format: "+strings.Join(toolset.Formats, ", "))
	cmd.Flags().StringVar(&profile, "tools", toolset.ProfileCore, "which tools: "+strings.Join(toolset.Profiles, ", "))
	cmd.Flags().StringSliceVar(&scopes, "scopes", nil, "only the tools a token with these scopes may use (read, write, ingest, admin); default all")
	cmd.Flags().BoolVar(&stats, "stats", false, "print the tokens the tool lists cost a model, per tool and in total, in every format")
	return cmd
}

// writeToolStats prints, for each list, a table of tokens per tool and in
// total, one column per format.
func writeToolStats(w io.Writer, profiles []string, lists [][]toolset.Tool) error {
	fmt.Fprintf(w, "Tokens (%s) of the tool definitions as compact JSON; the default list's budget is %d per format.\n",
		llmtokens.Encoding, toolset.TokenBudget)
	for i, tools := range lists {
		byFormat := make([]toolset.TokenStats, len(toolset.Formats))
		for j, f := range toolset.Formats {
			st, err := toolset.CountTokens(tools, f)
			if err != nil {
				return err
			}
			byFormat[j] = st
		}
		fmt.Fprintf(w, "\n%s: %d tools\n", profiles[i], len(tools))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "TOOL\t%s\n", strings.ToUpper(strings.Join(toolset.Formats, "\t")))
		row := func(name string, tokens func(toolset.TokenStats) int) {
			cells := []string{name}
			for _, st := range byFormat {
				cells = append(cells, fmt.Sprint(tokens(st)))
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		for k, t := range tools {
			row(t.Name, func(st toolset.TokenStats) int { return st.Tools[k].Tokens })
		}
		row("total", func(st toolset.TokenStats) int { return st.Total })
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

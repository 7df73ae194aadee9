package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/assemble"
)

func (c *cli) initCommand() *cobra.Command {
	req := &ctxdv1.InitRequest{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create the persistent context files (soul, beliefs, goals, capabilities) where absent",
		Long: `Create soul.md (loaded always, read-only to agents), beliefs.md, goals.md and
capabilities.md (loaded always, agents may update them) under a context root,
each with its frontmatter. Files that exist are left alone, so init is safe to
run again. Edit them with "ctxd context update REF".`,
		Args: exactArgs(0),
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.InitResponse, error) {
			return ctxdv1.NewContextServiceClient(cl.conn).Init(ctx, req)
		}, func(r *ctxdv1.InitResponse) {
			for _, ref := range r.Created {
				fmt.Fprintf(c.stdout, "created  %s\n", ref)
			}
			for _, ref := range r.Existing {
				fmt.Fprintf(c.stdout, "exists   %s\n", ref)
			}
		}),
	}
	cmd.Flags().StringVar(&req.Root, "root", "", `context root directory, e.g. "self:/researcher/" (default: the daemon's first context root, self:/)`)
	return cmd
}

func (c *cli) contextCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "context",
		Short: "Update context files and assemble the context for a task",
	}
	cmd.AddCommand(c.contextUpdateCommand(), c.contextBuildCommand())
	return cmd
}

func (c *cli) contextUpdateCommand() *cobra.Command {
	req := &ctxdv1.UpdateRequest{}
	var file string
	cmd := &cobra.Command{
		Use:   "update REF",
		Short: "Replace a context file's body from --file or stdin, keeping its frontmatter",
		Long: `Replace the body of a context file (everything after its frontmatter block)
with --file or standard input; the frontmatter is kept byte for byte. Prints
the new content's SHA-256, for --if-hash on the next update.

  echo "- the user prefers short answers" | ctxd context update self:/beliefs.md`,
		Args: exactArgs(1),
		PreRunE: func(_ *cobra.Command, args []string) error {
			req.Ref = args[0]
			var body []byte
			var err error
			if file != "" {
				body, err = os.ReadFile(file)
			} else {
				body, err = io.ReadAll(c.stdin)
			}
			req.Body = string(body)
			return err
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.UpdateResponse, error) {
			return ctxdv1.NewContextServiceClient(cl.conn).Update(ctx, req)
		}, func(r *ctxdv1.UpdateResponse) {
			c.printWarnings(r.Warnings)
			fmt.Fprintln(c.stdout, r.Item.ContentHash)
		}),
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "read the new body from this file instead of stdin")
	cmd.Flags().StringVar(&req.ExpectedContentHash, "if-hash", "", "only if the stored content has this SHA-256")
	return cmd
}

func (c *cli) contextBuildCommand() *cobra.Command {
	req := &ctxdv1.BuildContextRequest{Filter: &ctxdv1.SearchFilter{}}
	var mode string
	cmd := &cobra.Command{
		Use:   "build TASK",
		Short: "Assemble the context for a task: context files plus relevant chunks, within a token budget",
		Long: `Assemble the context for one task and print it as markdown: every file with
"loading: always" under the context roots verbatim (soul, beliefs, goals,
capabilities, then by path), every "loading: contextual" file the task matches
(BM25), then the best search chunks for the task, each labelled with its ref.
The budget is counted in model tokens; when it is tight, chunks are dropped
before contextual files, and those before always files. What was left out, and
why, is printed on stderr (in the JSON with --json). The filter flags apply to
the chunks only.

  ctxd context build "draft the invoice reminder email" --budget 2000`,
		Args: exactArgs(1),
		PreRunE: func(_ *cobra.Command, args []string) (err error) {
			req.Task = args[0]
			req.Mode, err = searchModeFlag(mode)
			return err
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.BuildContextResponse, error) {
			return ctxdv1.NewContextServiceClient(cl.conn).BuildContext(ctx, req)
		}, func(r *ctxdv1.BuildContextResponse) {
			c.printWarnings(r.Warnings)
			c.noteStale(r.Stale, r.StaleReason)
			fmt.Fprint(c.stdout, ensureNewline(r.Markdown))
			// Chunks of files already included whole are expected, not a
			// loss: count them instead of listing each (--json lists them).
			wholeFile := 0
			for _, o := range r.Omitted {
				if strings.HasPrefix(o.Reason, assemble.ReasonWholeFile) {
					wholeFile++
					continue
				}
				what := o.Ref
				if o.Heading != "" {
					what += " (" + o.Heading + ")"
				}
				fmt.Fprintf(c.stderr, "omitted %s %s: %s (%d tokens)\n", o.Kind, what, o.Reason, o.Tokens)
			}
			if wholeFile > 0 {
				fmt.Fprintf(c.stderr, "search chunks skipped because their file is in the context: %d\n", wholeFile)
			}
			fmt.Fprintf(c.stderr, "%d sections, %d of %d tokens\n", len(r.Sections), r.TokensUsed, r.Budget)
		}),
	}
	searchFlags(cmd, &mode, &req.Limit, req.Filter)
	f := cmd.Flags()
	f.Int32Var(&req.Budget, "budget", 0, "token budget, counted with the model's tokenizer (0: 4000)")
	f.StringSliceVar(&req.Roots, "root", nil, `context roots whose files take part, e.g. "self:/researcher/" (repeatable; default: the daemon's context_roots)`)
	return cmd
}

// noteStale says on stderr why a search's results may miss the latest
// writes (SearchResponse.stale).
func (c *cli) noteStale(stale bool, reason string) {
	if stale {
		fmt.Fprintf(c.stderr, "note: %s\n", reason)
	}
}

// printWarnings shows a response's warnings (malformed frontmatter, ...) on
// stderr: the call succeeded, but the caller should know.
func (c *cli) printWarnings(warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(c.stderr, "warning: %s\n", w)
	}
}

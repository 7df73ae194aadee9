package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// parseAge reads an age such as 90d, 36h or 1h30m: a Go duration, or a
// whole number of days.
func parseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not an age: give days (90d) or a duration (36h)", s)
	}
	return d, nil
}

func (c *cli) pruneCommand() *cobra.Command {
	req := &ctxdv1.PruneRequest{}
	var unretrieved string
	cmd := &cobra.Command{
		Use:   "prune --unretrieved AGE [--dry-run]",
		Short: "Delete items no search returned (nor anyone changed) for AGE; restorable from history",
		Long: `List, and without --dry-run delete, the items that no search returned and that
did not change for AGE (90d, 36h): oldest activity first. Never context files
(items declaring loading, or under a context root), items with an importance
set, sessions' records and digests, or directories. Each delete is recorded in
history: "ctxd revert REF --to REV" restores it (the REV is printed).

  ctxd prune --unretrieved 90d --dry-run
  ctxd prune --unretrieved 90d --path agent:/scratch`,
		Args: exactArgs(0),
		PreRunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("unretrieved") {
				return usageError{fmt.Errorf("give the age with --unretrieved (for example 90d)")}
			}
			d, err := parseAge(unretrieved)
			if err != nil {
				return usageError{err}
			}
			req.UnretrievedSeconds = int64(d / time.Second)
			return c.longer(cmd, nil)
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.PruneResponse, error) {
			return cl.admin.Prune(ctx, req)
		}, func(r *ctxdv1.PruneResponse) {
			if len(r.Items) == 0 {
				fmt.Fprintln(c.stdout, "nothing to prune")
				return
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "LAST RETRIEVED\tCHANGED\tBYTES\tREF\tRESTORE WITH")
			for _, it := range r.Items {
				last := "never"
				if it.LastRetrievedAt != nil {
					last = it.LastRetrievedAt.AsTime().Local().Format(time.DateOnly)
				}
				restore := "-"
				if it.DeleteRev > 0 {
					restore = fmt.Sprintf("ctxd revert %s --to %d", it.Ref, it.DeleteRev-1)
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", last, it.UpdatedAt.AsTime().Local().Format(time.DateOnly), it.Size, it.Ref, restore)
			}
			tw.Flush()
			verb := "would delete"
			if r.Deleted {
				verb = "deleted"
			}
			fmt.Fprintf(c.stderr, "%s %d items\n", verb, len(r.Items))
			if r.More {
				fmt.Fprintln(c.stderr, "more items qualify; run it again, or raise --limit")
			}
		}),
	}
	f := cmd.Flags()
	f.StringVar(&unretrieved, "unretrieved", "", "prune items no search returned and nobody changed for this long (90d, 36h); at least a day")
	f.BoolVar(&req.DryRun, "dry-run", false, "list what would be pruned, delete nothing")
	f.StringArrayVar(&req.PathPrefixes, "path", nil, "only items under this directory ref (repeatable)")
	f.Int32Var(&req.Limit, "limit", 0, "items to prune at most (0: 1000)")
	return cmd
}

func (c *cli) compactCommand() *cobra.Command {
	req := &ctxdv1.CompactRequest{}
	cmd := &cobra.Command{
		Use:   "compact REF",
		Short: "Rewrite an oversized memory file shorter; the old version stays in history",
		Long: `Compact a text item of more than --min-tokens model tokens (default 8000): its
repeated entries are dropped, every heading is kept, and the newest entries of
each section are kept within the target (default half of --min-tokens); each
section says how many older entries were compacted and which revision holds
them. With the daemon's [enricher] configured, the model writes the new text
and the extractive one is its fallback. The frontmatter is kept byte for byte.
"ctxd revert REF --to REV" undoes it.

  ctxd compact self:/patterns.md --dry-run`,
		Args: exactArgs(1),
		PreRun: func(_ *cobra.Command, args []string) {
			req.Ref = args[0]
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.CompactResponse, error) {
			return ctxdv1.NewContextServiceClient(cl.conn).Compact(ctx, req)
		}, func(r *ctxdv1.CompactResponse) {
			switch {
			case !r.Compacted:
				fmt.Fprintf(c.stdout, "%s has %d tokens, not over %d: left alone\n", req.Ref, r.TokensBefore, max(req.MinTokens, 8000))
				return
			case req.DryRun:
				fmt.Fprint(c.stdout, ensureNewline(r.Body))
				fmt.Fprintf(c.stderr, "would compact %s from %d to %d tokens (%s)\n", req.Ref, r.TokensBefore, r.TokensAfter, r.Method)
			default:
				fmt.Fprintf(c.stdout, "compacted %s from %d to %d tokens (%s); undo with: ctxd revert %s --to %d\n",
					r.Item.Ref, r.TokensBefore, r.TokensAfter, r.Method, r.Item.Ref, r.PreviousRev)
			}
			if r.EnricherError != "" {
				fmt.Fprintf(c.stderr, "warning: the enricher's text was not used (%s)\n", r.EnricherError)
			}
		}),
	}
	f := cmd.Flags()
	f.Int32Var(&req.MinTokens, "min-tokens", 0, "compact only a file over this many model tokens (0: 8000)")
	f.Int32Var(&req.TargetTokens, "target-tokens", 0, "tokens the compacted body aims at (0: half of --min-tokens)")
	f.BoolVar(&req.DryRun, "dry-run", false, "print the compacted body, write nothing")
	f.StringVar(&req.ExpectedContentHash, "if-hash", "", "fail unless the stored content has this SHA-256")
	return cmd
}

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

func (c *cli) diffCommand() *cobra.Command {
	req := &ctxdv1.DiffRequest{}
	cmd := &cobra.Command{
		Use:   "diff REF [--from N] [--to N]",
		Short: "Show what changed in an item between two revisions, as a unified diff",
		Long: `Compare two revisions of an item line by line and print a unified diff.
--to defaults to the current content, --from to the revision before --to
("ctxd history REF" lists them). A deleted item's last ref works too; its
current content is empty. Binary revisions are reported, not compared.

  ctxd diff notes:/plan.md                 # the last change
  ctxd diff notes:/plan.md --from 3        # revision 3 against now
  ctxd diff notes:/plan.md --from 2 --to 5`,
		Args:   exactArgs(1),
		PreRun: func(_ *cobra.Command, args []string) { req.Ref = args[0] },
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.DiffResponse, error) {
			return cl.vfs.Diff(ctx, req)
		}, func(r *ctxdv1.DiffResponse) {
			switch {
			case r.Binary:
				fmt.Fprintf(c.stdout, "binary content differs between revision %d and %s\n", r.FromRev, diffToName(r.ToRev))
			case r.Unified == "":
				fmt.Fprintf(c.stdout, "no change between revision %d and %s\n", r.FromRev, diffToName(r.ToRev))
			default:
				fmt.Fprint(c.stdout, r.Unified)
				if r.Truncated {
					fmt.Fprintf(c.stderr, "the diff was cut at limits.max_diff_lines (+%d -%d lines in all); compare closer revisions\n", r.Added, r.Removed)
				}
			}
		}),
	}
	f := cmd.Flags()
	f.Int64Var(&req.FromRev, "from", 0, "the older revision (0: the one before --to)")
	f.Int64Var(&req.ToRev, "to", 0, "the newer revision (0: the current content)")
	f.Int32Var(&req.ContextLines, "context", 0, "unchanged lines around each change (0: 3, at most 100)")
	return cmd
}

func diffToName(rev int64) string {
	if rev == 0 {
		return "the current content"
	}
	return fmt.Sprintf("revision %d", rev)
}

func (c *cli) uiCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "ui",
		Short: "Print a one-time link that signs a browser in to the web inspector",
		Long: `Ask the daemon for a one-time sign-in link to its web inspector (/ui/ on the
HTTP listener) and print it. Opening it signs the browser in as the owner for
12 hours; the link works once, within 60 seconds. Needs the owner (the unix
socket, or the owner token) and a daemon started with --http.`,
		Args: exactArgs(0),
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.CreateSignInLinkResponse, error) {
			r, err := cl.admin.CreateSignInLink(ctx, &ctxdv1.CreateSignInLinkRequest{})
			if err == nil && r.Url == "" {
				return nil, errors.New(`the daemon has no HTTP listener (it runs with --http "" or http = ""), so it serves no inspector; start it with --http 127.0.0.1:7077, the default, and run "ctxd ui" again`)
			}
			return r, err
		}, func(r *ctxdv1.CreateSignInLinkResponse) {
			fmt.Fprintln(c.stdout, r.Url)
			fmt.Fprintf(c.stderr, "open it within 60 seconds (until %s); it works once\n", r.ExpiresAt.AsTime().Local().Format("15:04:05"))
		}),
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/timestamppb"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

func (c *cli) historyCommand() *cobra.Command {
	req := &ctxdv1.HistoryRequest{}
	cmd := &cobra.Command{
		Use:   "history REF",
		Short: "List an item's revisions, newest first (deleted items too)",
		Long: `List the revisions of an item, newest first: revision number, time, actor
(the token's name, or owner), operation, size and content hash. Works for a
deleted item's last ref. "ctxd read REF --rev N" prints a revision,
"ctxd revert REF --to N" makes it current again.`,
		Args:   exactArgs(1),
		PreRun: func(_ *cobra.Command, args []string) { req.Ref = args[0] },
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.HistoryResponse, error) {
			return cl.vfs.History(ctx, req)
		}, func(r *ctxdv1.HistoryResponse) {
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "REV\tTIME\tACTOR\tOP\tBYTES\tSHA256\tREF")
			for _, rv := range r.Revisions {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", rv.Rev, revisionTime(rv), rv.Actor, revisionOp(rv),
					rv.SizeBytes, shortHash(rv.ContentHash), rv.Ref)
			}
			tw.Flush()
			if n := len(r.Revisions); n > 0 && int32(n) == req.Limit {
				fmt.Fprintf(c.stderr, "older revisions may follow; continue with --before %d\n", r.Revisions[n-1].Rev)
			}
		}),
	}
	cmd.Flags().Int32Var(&req.Limit, "limit", 20, "revisions to list")
	cmd.Flags().Int64Var(&req.BeforeRev, "before", 0, "only revisions older than this one")
	return cmd
}

func (c *cli) revertCommand() *cobra.Command {
	req := &ctxdv1.RevertRequest{}
	cmd := &cobra.Command{
		Use:   "revert REF --to REV",
		Short: "Make an earlier revision current again (restores a deleted item)",
		Long: `Write revision REV's content and metadata back as a new revision (history
keeps everything in between). For a deleted item it restores the item at its
ref: "ctxd deleted" lists them with the revision to restore.`,
		Args: exactArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			req.Ref = args[0]
			if !cmd.Flags().Changed("to") {
				return usageError{fmt.Errorf("give the revision with --to (see ctxd history %s)", args[0])}
			}
			return nil
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.RevertResponse, error) {
			return cl.vfs.Revert(ctx, req)
		}, func(r *ctxdv1.RevertResponse) {
			c.printWarnings(r.Warnings)
			verb := "reverted"
			if r.Created {
				verb = "restored"
			}
			fmt.Fprintf(c.stdout, "%s %s to revision %d (%d bytes)\n", verb, r.Item.Ref, req.Rev, r.Item.SizeBytes)
		}),
	}
	cmd.Flags().Int64Var(&req.Rev, "to", 0, "the revision to go back to")
	return cmd
}

func (c *cli) deletedCommand() *cobra.Command {
	req := &ctxdv1.ListDeletedRequest{}
	cmd := &cobra.Command{
		Use:   "deleted [DIR]",
		Short: "List deleted items (below DIR), newest first, with the revert that restores each",
		Args:  maxArgs(1),
		PreRun: func(_ *cobra.Command, args []string) {
			if len(args) == 1 {
				req.Ref = args[0]
			}
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.ListDeletedResponse, error) {
			return cl.vfs.ListDeleted(ctx, req)
		}, func(r *ctxdv1.ListDeletedResponse) {
			if len(r.Revisions) == 0 {
				fmt.Fprintln(c.stdout, "no deleted items")
				return
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "DELETED\tACTOR\tREF\tRESTORE WITH")
			for _, rv := range r.Revisions {
				fmt.Fprintf(tw, "%s\t%s\t%s\tctxd revert %s --to %d\n", revisionTime(rv), rv.Actor, rv.Ref, rv.Ref, rv.Rev-1)
			}
			tw.Flush()
		}),
	}
	cmd.Flags().Int32Var(&req.Limit, "limit", 0, "entries to list (0: 50, at most 1000)")
	return cmd
}

func (c *cli) logCommand() *cobra.Command {
	req := &ctxdv1.LogRequest{}
	var since string
	cmd := &cobra.Command{
		Use:   "log",
		Short: "List changes across the store, newest first: who changed what, and when",
		Long: `List revisions across the store, newest first. --actor keeps one actor's
(a token name, or owner); --since keeps the recent ones.

  ctxd log --actor harness --since 24h     # what the agent changed today`,
		Args: exactArgs(0),
		PreRunE: func(_ *cobra.Command, _ []string) error {
			return timeFlag(since, &req.Since)
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.LogResponse, error) {
			return cl.vfs.Log(ctx, req)
		}, func(r *ctxdv1.LogResponse) {
			printLog(c.stdout, r.Revisions)
			if r.NextPageToken != "" {
				fmt.Fprintf(c.stderr, "more changes follow; continue with --page-token %s\n", r.NextPageToken)
			}
		}),
	}
	f := cmd.Flags()
	f.StringVar(&req.Actor, "actor", "", `only this actor's changes: a token name, or "owner"`)
	f.StringVar(&since, "since", "", `only changes since a time: a duration back from now ("24h", "90m") or RFC 3339 ("2026-11-24T09:00:00Z")`)
	f.Int32Var(&req.Limit, "limit", 0, "changes per page (0: 50, at most 1000)")
	f.StringVar(&req.PageToken, "page-token", "", "continue a previous listing")
	return cmd
}

func printLog(w io.Writer, revs []*ctxdv1.Revision) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tACTOR\tOP\tREF\tREV\tBYTES")
	for _, rv := range revs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\n", revisionTime(rv), rv.Actor, revisionOp(rv), rv.Ref, rv.Rev, rv.SizeBytes)
	}
	tw.Flush()
}

// parseSince reads --since: a duration back from now, or an RFC 3339 time.
// timeFlag sets *ts from a --since style flag's value s (see parseSince);
// an empty s leaves it unset.
func timeFlag(s string, ts **timestamppb.Timestamp) error {
	if s == "" {
		return nil
	}
	t, err := parseSince(s, time.Now())
	if err != nil {
		return usageError{err}
	}
	*ts = timestamppb.New(t)
	return nil
}

func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--since %s: give a positive duration back from now", s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--since %q: want a duration (24h, 90m) or an RFC 3339 time (2026-11-24T09:00:00Z)", s)
	}
	return t, nil
}

func revisionTime(rv *ctxdv1.Revision) string {
	return rv.Time.AsTime().Local().Format(time.RFC3339)
}

// revisionOp names the operation; a delete is marked even when the op says
// how the item went (a move away).
func revisionOp(rv *ctxdv1.Revision) string {
	if rv.Deleted && rv.Op != "delete" {
		return rv.Op + " (deleted)"
	}
	return rv.Op
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

func (c *cli) watchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Keep directory trees in step with their items, across restarts",
		Long: `A watch keeps a directory tree on the daemon's host in step with its items
for as long as it exists: it is stored with the items, survives daemon
restarts, and at each start the daemon reconciles what changed, appeared or
vanished while it was down before following the tree's events again.

  ctxd watch add ~/notes --exclude '*.csv' --debounce 500ms
  ctxd watch list
  ctxd watch rm ~/notes`,
	}
	cmd.AddCommand(c.watchAddCommand(), c.watchListCommand(), c.watchRemoveCommand())
	return cmd
}

func (c *cli) watchAddCommand() *cobra.Command {
	req := &ctxdv1.AddWatchRequest{}
	var debounce time.Duration
	cmd := &cobra.Command{
		Use:   "add DIR",
		Short: "Ingest a directory tree and keep following it",
		Long: `Ingest a directory tree (as ctxd add does: .gitignore rules, no hidden files
unless --hidden) and keep its items in step with it from now on, also across
daemon restarts. Answers once the tree is ingested and searchable, with the
watch's status; a directory already watched answers its watch. There is no
deadline unless --timeout is given; interrupted, the watch stays and goes on
ingesting (see ctxd watch list).

A changed file is refreshed (by size and mtime, then content hash), a new one
added, a renamed one moved (its item keeps its id and history), and the item of
a deleted one kept and reported missing, or deleted with --delete-missing.

  ctxd watch add ~/notes
  ctxd watch add ./docs --exclude 'drafts/' --tag docs --debounce 1s`,
		Args: exactArgs(1),
		PreRunE: func(_ *cobra.Command, args []string) (err error) {
			if debounce < 0 || debounce > time.Minute || debounce > 0 && debounce < time.Millisecond {
				return usageError{fmt.Errorf("--debounce must be from 1ms to 1m, got %s", debounce)}
			}
			req.DebounceMs = debounce.Milliseconds()
			req.Path, err = addSource(args[0])
			return err
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := c.untilInterrupted(cmd)
			defer stop()
			cl, err := c.dial()
			if err != nil {
				return err
			}
			defer cl.conn.Close()
			resp, err := ctxdv1.NewWatchServiceClient(cl.conn).AddWatch(ctx, req)
			if err != nil {
				if ctx.Err() != nil {
					fmt.Fprintf(c.stderr, "ctxd: stopped waiting; if the watch was stored it goes on ingesting %s (see ctxd watch list)\n", req.Path)
				}
				return err
			}
			if c.json {
				return c.printJSON(resp)
			}
			w := resp.GetWatch()
			if resp.GetExisted() {
				fmt.Fprintf(c.stdout, "%s is watched already (watch %s)\n", w.GetPath(), w.GetId())
			} else {
				r := w.GetStatus().GetLastReconcile()
				fmt.Fprintf(c.stdout, "watching %s (watch %s): %d files, %d added, %d updated, %d unchanged, %d failed\n",
					w.GetPath(), w.GetId(), w.GetStatus().GetFiles(), r.GetAdded(), r.GetUpdated(), r.GetUnchanged(), r.GetFailed())
			}
			printWatchNotice(c.stdout, w)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Drive, "drive", "", "store under this drive instead of disk")
	f.StringArrayVar(&req.Exclude, "exclude", nil, "glob of paths to leave out, besides .gitignore rules (repeatable)")
	f.BoolVar(&req.IncludeHidden, "hidden", false, "include hidden files and directories")
	f.StringSliceVar(&req.Tags, "tag", nil, "tag added to every item (repeatable)")
	f.DurationVar(&debounce, "debounce", 0, "how long a file's events coalesce before it is read, e.g. 500ms (default 200ms)")
	f.BoolVar(&req.DeleteMissing, "delete-missing", false, "delete the item of a file that vanished, instead of keeping it")
	return cmd
}

// printWatchNotice says why a watch does not follow events, if it does not.
func printWatchNotice(out io.Writer, w *ctxdv1.Watch) {
	st := w.GetStatus()
	switch st.GetMode() {
	case ctxdv1.WatchMode_WATCH_MODE_SCANNING:
		fmt.Fprintf(out, "note: %s is scanned, not followed with events: %s\n", w.GetPath(), st.GetReason())
	case ctxdv1.WatchMode_WATCH_MODE_FAILED:
		fmt.Fprintf(out, "note: %s failed: %s\n", w.GetPath(), st.GetReason())
	}
}

func (c *cli) watchListCommand() *cobra.Command {
	return &cobra.Command{
		Use: "list", Aliases: []string{"ls"}, Short: "List the watches and where each stands", Args: exactArgs(0),
		Long: `List the watches: per watch its mode (events; scanning when the tree needs more
directory watches than allowed; failed; starting until its first reconcile;
remote when another replica runs it), files, when it last applied a change,
the last reconcile (when, how long, what it did), the lag from an event to
its write, changes pending, and errors. Reasons and errors follow the table.`,
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.ListWatchesResponse, error) {
			return ctxdv1.NewWatchServiceClient(cl.conn).ListWatches(ctx, &ctxdv1.ListWatchesRequest{})
		}, func(r *ctxdv1.ListWatchesResponse) {
			if len(r.GetWatches()) == 0 {
				fmt.Fprintln(c.stdout, "no watches (add one with ctxd watch add DIR)")
				return
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			watchTable(tw, r.GetWatches())
			tw.Flush()
		}),
	}
}

// watchTable prints watches as a table, then each one's reason and last
// error; status uses it too.
func watchTable(tw *tabwriter.Writer, ws []*ctxdv1.Watch) {
	fmt.Fprintf(tw, "id\tpath\tmode\tfiles\tlast event\tlast reconcile\tlag\tpending\terrors\n")
	var notes []string
	for _, w := range ws {
		st := w.GetStatus()
		mode := strings.ToLower(strings.TrimPrefix(st.GetMode().String(), "WATCH_MODE_"))
		reconcile := "-"
		if st.GetLastReconcileAt() != nil {
			r := st.GetLastReconcile()
			reconcile = fmt.Sprintf("%s (%s): +%d ~%d >%d -%d =%d !%d", ago(st.GetLastReconcileAt().AsTime()),
				time.Duration(st.GetLastReconcileMs())*time.Millisecond, r.GetAdded(), r.GetUpdated(), r.GetMoved(), r.GetMissing(), r.GetUnchanged(), r.GetFailed())
		}
		event, lag := "-", "-"
		if st.GetLastEventAt() != nil {
			event = ago(st.GetLastEventAt().AsTime())
			lag = (time.Duration(st.GetLagMs()) * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%d\t%d\n", w.GetId(), w.GetPath(), mode, st.GetFiles(), event, reconcile, lag, st.GetPending(), st.GetErrorCount())
		if st.GetReason() != "" {
			notes = append(notes, fmt.Sprintf("%s %s: %s", w.GetId(), mode, st.GetReason()))
		}
		if st.GetLastError() != "" {
			notes = append(notes, fmt.Sprintf("%s last error (%s): %s", w.GetId(), ago(st.GetLastErrorAt().AsTime()), st.GetLastError()))
		}
		if st.GetMode() == ctxdv1.WatchMode_WATCH_MODE_REMOTE {
			notes = append(notes, fmt.Sprintf("%s runs on replica %s", w.GetId(), w.GetReplicaId()))
		}
	}
	fmt.Fprintf(tw, "(last reconcile: +added ~updated >moved -missing =unchanged !failed)\n")
	for _, n := range notes {
		fmt.Fprintln(tw, n)
	}
}

// ago says how long before now t was, to the second.
func ago(t time.Time) string {
	return time.Since(t).Round(time.Second).String() + " ago"
}

func (c *cli) watchRemoveCommand() *cobra.Command {
	return &cobra.Command{
		Use: "rm ID|DIR", Aliases: []string{"remove"}, Short: "Stop watching a tree; its items stay", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			target := args[0]
			if fi, err := os.Stat(target); err == nil && fi.IsDir() { // a directory here, not an id
				abs, err := addSource(target)
				if err != nil {
					return err
				}
				target = abs
			}
			return run(c, func(ctx context.Context, cl *clients) (*ctxdv1.RemoveWatchResponse, error) {
				return ctxdv1.NewWatchServiceClient(cl.conn).RemoveWatch(ctx, &ctxdv1.RemoveWatchRequest{Watch: target})
			}, func(r *ctxdv1.RemoveWatchResponse) {
				fmt.Fprintf(c.stdout, "stopped watching %s (watch %s); its items are kept\n", r.GetWatch().GetPath(), r.GetWatch().GetId())
			})(cmd, args)
		},
	}
}

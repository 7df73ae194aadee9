package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// standingFlags defines the flags of a standing query: --mode (bm25 by
// default), --min-score, --snippet-length and the filters.
func standingFlags(cmd *cobra.Command, mode *string, q *ctxdv1.StandingQuery) {
	f := cmd.Flags()
	f.StringVar(mode, "mode", "bm25", "bm25 (every term must be there, weighed by rarity), hybrid (or close in meaning) or vector")
	f.Float64Var(&q.MinScore, "min-score", 0, "least score of a match, in (0, 1] (0: every term for bm25, cosine 0.5 for the vector leg)")
	f.Int32Var(&q.SnippetLength, "snippet-length", 0, "snippet length in characters (0: 300)")
	f.StringSliceVar(&q.Filter.Drives, "drive", nil, "only these drives (repeatable)")
	f.StringSliceVar(&q.Filter.PathPrefixes, "path", nil, `only items under these directories, "drive:/dir" or "/dir" (repeatable)`)
	f.StringSliceVar(&q.Filter.MimeTypes, "mime", nil, `only these MIME types, "text/*" allowed (repeatable)`)
	f.StringSliceVar(&q.Filter.Tags, "tag", nil, "only items with all of these tags (repeatable)")
}

// standingQueryArgs fills q's queries and mode from the arguments and --mode.
func standingQueryArgs(q *ctxdv1.StandingQuery, mode string, args []string) error {
	m, err := searchModeFlag(mode)
	if err != nil {
		return err
	}
	q.Mode = m
	for _, a := range args {
		q.Queries = append(q.Queries, &ctxdv1.SearchQuery{Text: a})
	}
	return nil
}

func (c *cli) subscribeCommand() *cobra.Command {
	req := &ctxdv1.SubscribeRequest{Query: &ctxdv1.StandingQuery{Filter: &ctxdv1.SearchFilter{}}}
	var mode string
	cmd := &cobra.Command{
		Use:   "subscribe QUERY...",
		Short: "Print each item that newly matches a standing query, as it arrives",
		Long: "Register a standing query for as long as the command runs and print each item that newly matches it, " +
			"with the change that caused it (write, edit, refresh, ingest, ...). Each argument is a query; an item " +
			"matching any matches. With --name, stream a durable subscription instead (its inbox first; what is " +
			"printed is acknowledged). Each push carries a resume token: run again with --resume TOKEN to get what " +
			"matched meanwhile. SIGINT or SIGTERM ends it cleanly. With --json each event is one JSON line.",
		PreRunE: func(_ *cobra.Command, args []string) error {
			if req.Name != "" {
				if len(args) > 0 {
					return usageError{errors.New("give queries or --name, not both")}
				}
				req.Query = nil
				return nil
			}
			if len(args) == 0 {
				return usageError{errors.New("give at least one query, or --name")}
			}
			return standingQueryArgs(req.Query, mode, args)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.followSubscription(cmd, req)
		},
	}
	standingFlags(cmd, &mode, req.Query)
	cmd.Flags().StringVar(&req.Name, "name", "", "stream this durable subscription (`ctxd subscription create`)")
	cmd.Flags().StringVar(&req.ResumeToken, "resume", "", "resume after the push that carried this token")
	return cmd
}

// followSubscription prints a Subscribe stream until it ends or a signal
// stops it (a clean exit).
func (c *cli) followSubscription(cmd *cobra.Command, req *ctxdv1.SubscribeRequest) error {
	interrupted, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cl, err := c.dial()
	if err != nil {
		return err
	}
	defer cl.conn.Close()
	stream, err := ctxdv1.NewSubscriptionServiceClient(cl.conn).Subscribe(interrupted, req)
	if err != nil {
		return err
	}
	for {
		ev, err := stream.Recv()
		switch {
		case interrupted.Err() != nil:
			return nil
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		if c.json {
			if err := c.printJSONLine(ev); err != nil {
				return err
			}
			continue
		}
		switch {
		case ev.GetReady() != nil:
			fmt.Fprintf(c.stderr, "subscribed (%s); resume token %s\n", ev.GetReady().GetSubscription(), ev.GetReady().GetResumeToken())
		case ev.GetGap() != nil:
			g := ev.GetGap()
			fmt.Fprintf(c.stdout, "gap: %s\n", g.GetReason())
		case ev.GetMatch() != nil:
			c.printMatch(ev.GetMatch())
		}
	}
}

// printMatch prints one push: ref, lines, score, change, snippet, token.
func (c *cli) printMatch(m *ctxdv1.SubscriptionMatch) {
	r, ch := m.GetResult(), m.GetChange()
	kind := strings.ToLower(strings.TrimPrefix(ch.GetKind().String(), "CHANGE_KIND_"))
	fmt.Fprintf(c.stdout, "%s  lines %d-%d  (%.3f)  %s by %s, rev %d\n", r.GetRef(), r.GetStartLine(), r.GetEndLine(), r.GetScore(), kind, ch.GetActor(), ch.GetRev())
	if r.GetHeading() != "" {
		fmt.Fprintf(c.stdout, "   %s\n", r.GetHeading())
	}
	fmt.Fprintf(c.stdout, "   %s\n", strings.TrimSpace(r.GetSnippet()))
	if m.GetResumeToken() != "" {
		fmt.Fprintf(c.stdout, "   resume: %s\n", m.GetResumeToken())
	}
}

func (c *cli) subscriptionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "subscription",
		Short: "Durable subscriptions: standing queries kept by the daemon, whose matches wait in an inbox",
	}
	cmd.AddCommand(c.subscriptionCreateCommand(), c.subscriptionListCommand(), c.subscriptionRmCommand(), c.subscriptionReadCommand())
	return cmd
}

func (c *cli) subscriptionCreateCommand() *cobra.Command {
	req := &ctxdv1.CreateSubscriptionRequest{Query: &ctxdv1.StandingQuery{Filter: &ctxdv1.SearchFilter{}}}
	var mode string
	cmd := &cobra.Command{
		Use:   "create NAME QUERY...",
		Short: "Create a durable subscription; its matches are kept, across restarts, until read",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageError{errors.New("give a name and at least one query")}
			}
			return nil
		},
		PreRunE: func(_ *cobra.Command, args []string) error {
			req.Name = args[0]
			return standingQueryArgs(req.Query, mode, args[1:])
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.CreateSubscriptionResponse, error) {
			return ctxdv1.NewSubscriptionServiceClient(cl.conn).CreateSubscription(ctx, req)
		}, func(r *ctxdv1.CreateSubscriptionResponse) {
			fmt.Fprintf(c.stdout, "created %s (%s)\n", r.GetSubscription().GetName(), r.GetSubscription().GetResourceUri())
		}),
	}
	standingFlags(cmd, &mode, req.Query)
	cmd.Flags().BoolVar(&req.Replace, "replace", false, "replace a subscription of that name, keeping its inbox")
	return cmd
}

func (c *cli) subscriptionListCommand() *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List the durable subscriptions this token may see", Args: exactArgs(0),
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.ListSubscriptionsResponse, error) {
			return ctxdv1.NewSubscriptionServiceClient(cl.conn).ListSubscriptions(ctx, &ctxdv1.ListSubscriptionsRequest{})
		}, func(r *ctxdv1.ListSubscriptionsResponse) {
			if len(r.GetSubscriptions()) == 0 {
				fmt.Fprintln(c.stdout, "no subscriptions")
			}
			for _, s := range r.GetSubscriptions() {
				var qs []string
				for _, q := range s.GetQuery().GetQueries() {
					qs = append(qs, fmt.Sprintf("%q", q.GetText()))
				}
				fmt.Fprintf(c.stdout, "%s  %s  pending %d  dropped %d  owner %s\n", s.GetName(), strings.Join(qs, " "), s.GetPending(), s.GetDropped(), s.GetOwner())
			}
		}),
	}
}

func (c *cli) subscriptionRmCommand() *cobra.Command {
	req := &ctxdv1.DeleteSubscriptionRequest{}
	return &cobra.Command{
		Use: "rm NAME", Short: "Delete a durable subscription and its inbox", Args: exactArgs(1),
		PreRunE: func(_ *cobra.Command, args []string) error { req.Name = args[0]; return nil },
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.DeleteSubscriptionResponse, error) {
			return ctxdv1.NewSubscriptionServiceClient(cl.conn).DeleteSubscription(ctx, req)
		}, func(r *ctxdv1.DeleteSubscriptionResponse) {
			fmt.Fprintf(c.stdout, "deleted %s (%d matches unread)\n", r.GetSubscription().GetName(), r.GetSubscription().GetPending())
		}),
	}
}

func (c *cli) subscriptionReadCommand() *cobra.Command {
	req := &ctxdv1.ReadSubscriptionRequest{}
	cmd := &cobra.Command{
		Use:     "read NAME",
		Short:   "Print (and acknowledge) the oldest matches waiting in a durable subscription's inbox",
		Args:    exactArgs(1),
		PreRunE: func(_ *cobra.Command, args []string) error { req.Name = args[0]; return nil },
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.ReadSubscriptionResponse, error) {
			return ctxdv1.NewSubscriptionServiceClient(cl.conn).ReadSubscription(ctx, req)
		}, func(r *ctxdv1.ReadSubscriptionResponse) {
			if g := r.GetGap(); g != nil {
				fmt.Fprintf(c.stdout, "gap: %s\n", g.GetReason())
			}
			if len(r.GetMatches()) == 0 {
				fmt.Fprintln(c.stdout, "no new matches")
			}
			for _, m := range r.GetMatches() {
				c.printMatch(m)
			}
			if r.GetRemaining() > 0 {
				fmt.Fprintf(c.stdout, "%d more waiting\n", r.GetRemaining())
			}
		}),
	}
	cmd.Flags().Int32Var(&req.Limit, "limit", 0, "most matches to print (0: 100, at most 1000)")
	cmd.Flags().BoolVar(&req.Peek, "peek", false, "leave them in the inbox")
	return cmd
}

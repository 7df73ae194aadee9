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
	"github.com/ctxd/ctxd/index/session"
	"github.com/ctxd/ctxd/internal/runes"
)

func (c *cli) sessionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Record and recall what agents did: sessions, their events and digests",
		Long: `A session is one agent's work on one project: its prompts, tool uses,
decisions, errors, notes and file changes, kept as items of the session drive
(session:/PROJECT/STARTED-ID/...), searchable like any item, digested when it
ends and recalled when the next one starts. The project defaults to the base
name of the current directory's git repository root.

  ctxd session start                    # prints the new session's id
  ctxd session event decision "Use pgx for PostgreSQL" --session ID
  ctxd session end ID                   # writes the digest
  ctxd session list ; ctxd session show ID
  ctxd session search "flaky test" --kind error --since 7d`,
	}
	cmd.AddCommand(c.sessionStartCommand(), c.sessionEventCommand(), c.sessionEndCommand(), c.sessionShowCommand(),
		c.sessionListCommand(), c.sessionSearchCommand(), c.sessionRecallCommand())
	return cmd
}

// workingDir is the directory a session's project derives from.
func workingDir() string {
	dir, _ := os.Getwd()
	return dir
}

func (c *cli) sessionStartCommand() *cobra.Command {
	req := &ctxdv1.StartSessionRequest{}
	cmd := &cobra.Command{
		Use:   "start [ID]",
		Short: "Start a session (or resume the one with that id) and print its id",
		Args:  maxArgs(1),
		PreRun: func(_ *cobra.Command, args []string) {
			if len(args) == 1 {
				req.Id = args[0]
			}
			if req.Cwd == "" {
				req.Cwd = workingDir()
			}
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.StartSessionResponse, error) {
			return ctxdv1.NewSessionServiceClient(cl.conn).StartSession(ctx, req)
		}, func(r *ctxdv1.StartSessionResponse) {
			verb := "resumed"
			if r.Created {
				verb = "started"
			}
			fmt.Fprintln(c.stdout, r.Session.Id)
			fmt.Fprintf(c.stderr, "%s session %s of project %s (%s)\n", verb, r.Session.Id, r.Session.Project, r.Session.Ref)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&req.Project, "project", "", "project name (default: the base name of the current directory's repository root)")
	f.StringVar(&req.Actor, "actor", "", "who works in it (default: the caller's token name, or owner)")
	f.StringVar(&req.Cwd, "cwd", "", "working directory recorded, and the project derived from (default: the current directory)")
	return cmd
}

// eventKinds maps the CLI's kind names to the API's.
var eventKinds = map[string]ctxdv1.SessionEventKind{
	"prompt": ctxdv1.SessionEventKind_SESSION_EVENT_KIND_PROMPT, "tool_use": ctxdv1.SessionEventKind_SESSION_EVENT_KIND_TOOL_USE,
	"decision": ctxdv1.SessionEventKind_SESSION_EVENT_KIND_DECISION, "error": ctxdv1.SessionEventKind_SESSION_EVENT_KIND_ERROR,
	"note": ctxdv1.SessionEventKind_SESSION_EVENT_KIND_NOTE, "file_change": ctxdv1.SessionEventKind_SESSION_EVENT_KIND_FILE_CHANGE,
	"summary": ctxdv1.SessionEventKind_SESSION_EVENT_KIND_SUMMARY,
}

func eventKind(name string) (ctxdv1.SessionEventKind, error) {
	if k, ok := eventKinds[strings.ReplaceAll(strings.ToLower(name), "-", "_")]; ok {
		return k, nil
	}
	return 0, usageError{fmt.Errorf("unknown kind %q: use prompt, tool_use, decision, error, note, file_change or summary", name)}
}

func kindName(k ctxdv1.SessionEventKind) string {
	return strings.ToLower(strings.TrimPrefix(k.String(), "SESSION_EVENT_KIND_"))
}

func (c *cli) sessionEventCommand() *cobra.Command {
	req := &ctxdv1.AppendEventsRequest{}
	ev := &ctxdv1.SessionEvent{}
	cmd := &cobra.Command{
		Use:   "event KIND [TEXT|-]",
		Short: "Record an event (prompt, tool_use, decision, error, note, file_change, summary) in a session",
		Long: `Record one event. The text is the argument, or stdin with "-" or no argument;
text over the daemon's max_event_bytes (8 KiB) is cut with a marker. Without
--session the event goes to the project's most recently started open session,
or a new one.

  ctxd session event decision "Search waits for the index, at most 1 s" --session ID
  git diff --stat | ctxd session event note -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.RangeArgs(1, 2)(cmd, args); err != nil {
				return usageError{err}
			}
			return nil
		},
		PreRunE: func(_ *cobra.Command, args []string) (err error) {
			if ev.Kind, err = eventKind(args[0]); err != nil {
				return err
			}
			if len(args) == 2 && args[1] != "-" {
				ev.Text = args[1]
			} else {
				b, err := io.ReadAll(io.LimitReader(c.stdin, maxMessage))
				if err != nil {
					return err
				}
				ev.Text = string(b)
			}
			req.Events, req.Cwd = []*ctxdv1.SessionEvent{ev}, workingDir()
			return nil
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.AppendEventsResponse, error) {
			return ctxdv1.NewSessionServiceClient(cl.conn).AppendEvents(ctx, req)
		}, func(r *ctxdv1.AppendEventsResponse) {
			for _, e := range r.Events {
				fmt.Fprintln(c.stdout, e.Ref)
				if e.Truncated {
					fmt.Fprintln(c.stderr, "warning: the text was cut to the daemon's max_event_bytes")
				}
			}
		}),
	}
	f := cmd.Flags()
	f.StringVar(&req.SessionId, "session", "", "session id (default: the project's latest open session, or a new one)")
	f.StringVar(&req.Project, "project", "", "project name (default: from the current directory)")
	f.StringVar(&ev.Tool, "tool", "", "the tool's name, for tool uses and errors")
	f.StringArrayVar(&ev.Refs, "ref", nil, "a ref or file the event is about (repeatable)")
	return cmd
}

func (c *cli) sessionEndCommand() *cobra.Command {
	req := &ctxdv1.EndSessionRequest{}
	cmd := &cobra.Command{
		Use:   "end ID",
		Short: "End a session and print its digest",
		Args:  exactArgs(1),
		PreRun: func(_ *cobra.Command, args []string) {
			req.SessionId = args[0]
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.EndSessionResponse, error) {
			return ctxdv1.NewSessionServiceClient(cl.conn).EndSession(ctx, req)
		}, func(r *ctxdv1.EndSessionResponse) {
			c.printDigest(r.Digest)
		}),
	}
	cmd.Flags().StringVar(&req.Project, "project", "", "project name (default: any project)")
	cmd.Flags().BoolVar(&req.WaitForEnricher, "wait", false, "with an enricher configured, wait for its digest (within --timeout)")
	return cmd
}

func (c *cli) printDigest(d *ctxdv1.SessionDigest) {
	fmt.Fprint(c.stdout, ensureNewline(d.Markdown))
	if d.EnricherError != "" {
		fmt.Fprintf(c.stderr, "warning: the enricher's digest failed (%s); this is the extractive one\n", d.EnricherError)
	}
	if d.EnricherPending {
		fmt.Fprintln(c.stderr, "the enricher's digest will replace this one in the background")
	}
	fmt.Fprintf(c.stderr, "digest %s (%s, %d events)\n", d.Ref, d.Method, d.EventCount)
}

func (c *cli) sessionShowCommand() *cobra.Command {
	req := &ctxdv1.GetSessionRequest{}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session: its record, its events (oldest first) and its digest",
		Args:  exactArgs(1),
		PreRun: func(_ *cobra.Command, args []string) {
			req.SessionId = args[0]
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.GetSessionResponse, error) {
			return ctxdv1.NewSessionServiceClient(cl.conn).GetSession(ctx, req)
		}, func(r *ctxdv1.GetSessionResponse) {
			s := r.Session
			fmt.Fprintf(c.stdout, "session %s of %s, by %s, %s; %d events\n", s.Id, s.Project, s.Actor, sessionSpan(s), s.EventCount)
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tKIND\tTOOL\tTEXT")
			for _, e := range r.Events {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Time.AsTime().Local().Format(time.TimeOnly), kindName(e.Kind), e.Tool, oneLine(e.Text, 100))
			}
			tw.Flush()
			if r.NextPageToken != "" {
				fmt.Fprintf(c.stderr, "more events follow; continue with --page-token %s\n", r.NextPageToken)
			}
			if r.Digest != "" {
				fmt.Fprint(c.stdout, "\n"+ensureNewline(r.Digest))
			}
		}),
	}
	f := cmd.Flags()
	f.StringVar(&req.Project, "project", "", "project name (default: any project)")
	f.Int32Var(&req.Limit, "limit", 0, "events to show (0: 100)")
	f.StringVar(&req.PageToken, "page-token", "", "continue after an earlier page")
	return cmd
}

// sessionSpan says when a session ran.
func sessionSpan(s *ctxdv1.Session) string {
	start := s.StartedAt.AsTime().Local()
	if s.EndedAt == nil {
		return "started " + start.Format(time.DateTime) + ", open"
	}
	return fmt.Sprintf("%s to %s", start.Format(time.DateTime), s.EndedAt.AsTime().Local().Format(time.TimeOnly))
}

// oneLine is text's first line, cut to n runes.
func oneLine(text string, n int) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	return runes.Ellipsize(line, n)
}

func (c *cli) sessionListCommand() *cobra.Command {
	req := &ctxdv1.ListSessionsRequest{}
	var since string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List sessions, most recently started first",
		Args:  exactArgs(0),
		PreRunE: func(_ *cobra.Command, _ []string) error {
			return timeFlag(since, &req.Since)
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.ListSessionsResponse, error) {
			return ctxdv1.NewSessionServiceClient(cl.conn).ListSessions(ctx, req)
		}, func(r *ctxdv1.ListSessionsResponse) {
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tPROJECT\tWHEN\tEVENTS\tACTOR\tDIGEST")
			for _, s := range r.Sessions {
				digest := "-"
				if s.DigestRef != "" {
					digest = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", s.Id, s.Project, sessionSpan(s), s.EventCount, s.Actor, digest)
			}
			tw.Flush()
		}),
	}
	f := cmd.Flags()
	f.StringVar(&req.Project, "project", "", "only this project's sessions (default: every project)")
	f.Int32Var(&req.Limit, "limit", 0, "sessions to list (0: 20)")
	f.StringVar(&since, "since", "", "only sessions started since: a duration back from now (7d is 168h) or an RFC 3339 time")
	return cmd
}

func (c *cli) sessionSearchCommand() *cobra.Command {
	req := &ctxdv1.SearchEventsRequest{}
	var kinds []string
	var mode, since, until string
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search events and digests, grouped by session",
		Long: `Search the sessions' events and digests with the hybrid engine; the filters run
inside every leg. Results are grouped by session, the best session first.

  ctxd session search "why did the search test fail" --kind error --kind decision --since 168h`,
		Args: exactArgs(1),
		PreRunE: func(_ *cobra.Command, args []string) (err error) {
			req.Query = args[0]
			for _, k := range kinds {
				kind, err := eventKind(k)
				if err != nil {
					return err
				}
				req.Kinds = append(req.Kinds, kind)
			}
			if err := timeFlag(since, &req.After); err != nil {
				return err
			}
			if err := timeFlag(until, &req.Before); err != nil {
				return err
			}
			req.Mode, err = searchModeFlag(mode)
			return err
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.SearchEventsResponse, error) {
			return ctxdv1.NewSessionServiceClient(cl.conn).SearchEvents(ctx, req)
		}, func(r *ctxdv1.SearchEventsResponse) {
			if r.ModeReason != "" {
				fmt.Fprintln(c.stderr, "note: "+r.ModeReason)
			}
			c.noteStale(r.Stale, r.StaleReason)
			for _, g := range r.Sessions {
				fmt.Fprintf(c.stdout, "session %s of %s (%s)\n", g.Session.Id, g.Session.Project, sessionSpan(g.Session))
				for _, h := range g.Hits {
					fmt.Fprintf(c.stdout, "  %.3f  %s  %-11s %s\n", h.Result.Score, h.Event.Time.AsTime().Local().Format(time.DateTime), kindName(h.Event.Kind), oneLine(h.Result.Snippet, 100))
					fmt.Fprintf(c.stdout, "         %s\n", h.Result.Ref)
				}
			}
		}),
	}
	f := cmd.Flags()
	f.StringVar(&req.Project, "project", "", "only this project's sessions")
	f.StringArrayVar(&req.SessionIds, "session", nil, "only this session (repeatable)")
	f.StringArrayVar(&kinds, "kind", nil, "only events of this kind (repeatable); summary includes digests")
	f.StringVar(&since, "since", "", "only events since: a duration back from now or an RFC 3339 time")
	f.StringVar(&until, "until", "", "only events before: a duration back from now or an RFC 3339 time")
	f.Int32Var(&req.Limit, "limit", 0, "events to return over all sessions (0: 10)")
	f.StringVar(&mode, "mode", "hybrid", "hybrid, bm25 or vector")
	return cmd
}

func (c *cli) sessionRecallCommand() *cobra.Command {
	req := &ctxdv1.RecallRequest{}
	cmd := &cobra.Command{
		Use:   "recall [PROMPT]",
		Short: "Print what an agent should know: at a session's start, or for a prompt",
		Long: `Without a prompt, print what a new session of the project should know: the
always-loaded context files, the open goals and the last sessions' digests.
With a prompt, print the contextual files and the memory that match it, or
nothing. This is what the Claude Code hooks inject.`,
		Args: maxArgs(1),
		PreRun: func(_ *cobra.Command, args []string) {
			if len(args) == 1 {
				req.Prompt = args[0]
			}
			req.Cwd = workingDir()
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.RecallResponse, error) {
			return ctxdv1.NewSessionServiceClient(cl.conn).Recall(ctx, req)
		}, func(r *ctxdv1.RecallResponse) {
			c.printWarnings(r.Warnings)
			c.noteStale(r.Stale, r.StaleReason)
			fmt.Fprint(c.stdout, r.Markdown)
			fmt.Fprintf(c.stderr, "project %s: %d sections, %d tokens\n", r.Project, len(r.Sections), r.TokensUsed)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&req.Project, "project", "", "project name (default: from the current directory)")
	f.StringVar(&req.SessionId, "session", "", "the asking session, whose own events are not recalled")
	f.Int32Var(&req.Budget, "budget", 0, fmt.Sprintf("token budget (0: %d)", session.DefaultRecallBudget))
	f.Int32Var(&req.Digests, "digests", 0, fmt.Sprintf("earlier sessions' digests at a start (0: %d)", session.DefaultRecallDigests))
	return cmd
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

func (c *cli) addCommand() *cobra.Command {
	req := &ctxdv1.AddRequest{}
	var onConflict string
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "add PATH|URL...",
		Short: "Ingest files, directory trees and URLs",
		Long: `Ingest files, directory trees and web pages. Files and trees go to the disk
drive under their absolute paths (relative paths are taken from the current
directory), URLs to the url drive, GitHub file URLs to the github drive.
Directory walks follow .gitignore rules and leave out hidden files unless --hidden.

Prints a line per added, updated, skipped, missing or failed item (unchanged
ones are only counted) and a summary; exits 1 when an item failed. With
--watch it keeps following the trees and reports every change until
interrupted (ctxd watch add keeps following a tree without a terminal, across
daemon restarts). There is no deadline unless --timeout is given.

  ctxd add ~/notes README.md
  ctxd add ./src --exclude '*.min.js' --tag project-x
  ctxd add https://go.dev/doc/effective_go --ttl 168h

--dedupe skips a new text source whose every chunk already has a match in one
stored item at or above the threshold (cosine similarity of embeddings; 0.9
when given without a value), printing which item it duplicates. It embeds
each new source before writing it, needs the embedding model, and compares
only items already embedded, so it does not catch two copies within one add.

  ctxd add ~/inbox --dedupe
  ctxd add note.md --dedupe=0.97`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("give at least one path or URL")}
			}
			return nil
		},
		PreRunE: func(cmd *cobra.Command, args []string) (err error) {
			if req.OnConflict, err = onConflictFlag(onConflict); err != nil {
				return err
			}
			if ttl < 0 || ttl > 0 && ttl < time.Second {
				return usageError{fmt.Errorf("--ttl must be at least 1s, got %s", ttl)}
			}
			req.TtlSeconds = int64(ttl / time.Second)
			if t := req.DedupeThreshold; t < 0 || t > 1 || cmd.Flags().Changed("dedupe") && t == 0 {
				return usageError{fmt.Errorf("--dedupe must be a similarity in (0, 1], got %v", t)}
			}
			for _, a := range args {
				src, err := addSource(a)
				if err != nil {
					return err
				}
				req.Sources = append(req.Sources, src)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return follow(c, cmd, req.Watch, func(ctx context.Context, ic ctxdv1.IngestServiceClient) (ingestStream[*ctxdv1.AddResponse], error) {
				return ic.Add(ctx, req)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&onConflict, "on-conflict", "skip", "when an item exists: skip, error or overwrite")
	f.StringVar(&req.Drive, "drive", "", "store under this drive instead of the source's own")
	f.StringArrayVar(&req.Exclude, "exclude", nil, "glob of paths to leave out, besides .gitignore rules (repeatable)")
	f.BoolVar(&req.IncludeHidden, "hidden", false, "descend into hidden files and directories")
	f.StringSliceVar(&req.Tags, "tag", nil, "tag added to every item (repeatable)")
	f.DurationVar(&ttl, "ttl", 0, "how long fetched URLs count as fresh, e.g. 1h (default: the daemon's, 24h)")
	f.BoolVar(&req.Watch, "watch", false, "keep watching the trees until interrupted")
	f.Float64Var(&req.DedupeThreshold, "dedupe", 0, "skip new sources that duplicate a stored item: --dedupe or --dedupe=SIMILARITY (default 0.9)")
	f.Lookup("dedupe").NoOptDefVal = "0.9"
	return cmd
}

func (c *cli) refreshCommand() *cobra.Command {
	req := &ctxdv1.RefreshRequest{}
	cmd := &cobra.Command{
		Use:   "refresh [REF... | --all]",
		Short: "Re-read the sources of stored items and re-embed what changed",
		Long: `Re-read the sources of stored items (files, URLs) and re-embed the chunks that
changed. Give item refs, ids or directories ("disk:/home/me/notes"), or --all.
Local paths that exist here (README.md, ./docs, /abs/dir) are taken as disk:
refs; other bare /paths are agent-drive refs.

Output and exit status are those of ctxd add. There is no deadline unless
--timeout is given.

  ctxd refresh --all
  ctxd refresh ./docs
  ctxd refresh url:/ --stale`,
		PreRunE: func(_ *cobra.Command, args []string) error {
			if (len(args) == 0) == !req.All {
				return usageError{fmt.Errorf("give refs or --all (not both)")}
			}
			for _, a := range args {
				ref, err := refreshRef(a)
				if err != nil {
					return err
				}
				req.Refs = append(req.Refs, ref)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return follow(c, cmd, false, func(ctx context.Context, ic ctxdv1.IngestServiceClient) (ingestStream[*ctxdv1.RefreshResponse], error) {
				return ic.Refresh(ctx, req)
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&req.All, "all", false, "refresh every item on every refreshable drive")
	f.BoolVar(&req.Force, "force", false, "re-read sources even when size, mtime or validators say they are unchanged")
	f.BoolVar(&req.StaleOnly, "stale", false, "only re-validate URL items whose TTL has passed")
	return cmd
}

// addSource makes a path absolute against the CLI's working directory, since
// the daemon has its own; URLs pass as they are.
func addSource(arg string) (string, error) {
	if l := strings.ToLower(arg); strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
		return arg, nil
	}
	return filepath.Abs(arg)
}

// refreshRef turns a local path that exists into a disk: ref. Anything else
// (drive:/path, a bare /path of the agent drive, an item id) passes as it is.
func refreshRef(arg string) (string, error) {
	if strings.Contains(arg, ":") {
		return arg, nil
	}
	if _, err := os.Stat(arg); err != nil {
		return arg, nil
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return "", err
	}
	return "disk:" + abs, nil
}

// ingestEvent is an AddResponse or a RefreshResponse.
type ingestEvent interface {
	proto.Message
	GetProgress() *ctxdv1.IngestProgress
	GetItem() *ctxdv1.IngestItemResult
	GetSummary() *ctxdv1.IngestSummary
}

// ingestStream is the receiving side of an Add or Refresh call.
type ingestStream[T ingestEvent] interface {
	Recv() (T, error)
}

// jsonLine prints a stream event as one line.
var jsonLine = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// follow runs an ingest call to its end without a deadline (unless --timeout
// is given) and prints its events: one JSON line each with --json, otherwise
// item lines, a progress line and the summary. It exits 1 when an item
// failed. SIGINT and SIGTERM cancel the call; that is how --watch ends, so
// then it exits cleanly.
func follow[T ingestEvent](c *cli, cmd *cobra.Command, watch bool, open func(context.Context, ctxdv1.IngestServiceClient) (ingestStream[T], error)) error {
	interrupted, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx := interrupted
	if cmd.Flags().Changed("timeout") {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	cl, err := c.dial()
	if err != nil {
		return err
	}
	defer cl.conn.Close()
	terminal, width := terminalWidth(c.stderr)
	p := newProgressPrinter(c.stdout, c.stderr, terminal, width, time.Now)
	var summary *ctxdv1.IngestSummary
	err = func() error {
		stream, err := open(ctx, ctxdv1.NewIngestServiceClient(cl.conn))
		if err != nil {
			return err
		}
		for {
			ev, err := stream.Recv()
			if err != nil {
				return err
			}
			if s := ev.GetSummary(); s != nil {
				summary = s
			}
			if c.json {
				if err := c.printJSONLine(ev); err != nil {
					return err
				}
				continue
			}
			switch {
			case ev.GetProgress() != nil:
				p.progress(ev.GetProgress())
			case ev.GetItem() != nil:
				p.item(ev.GetItem())
			case ev.GetSummary() != nil:
				p.summary(ev.GetSummary())
			}
		}
	}()
	p.clear()
	switch {
	case errors.Is(err, io.EOF):
	case interrupted.Err() != nil:
		if summary == nil {
			summary = p.tallied()
			if !c.json {
				p.summary(summary)
			}
		}
		if !watch {
			return errors.New("interrupted")
		}
	default:
		return err
	}
	if summary.GetFailed() > 0 {
		return exitCodeError(exitError)
	}
	return nil
}

// terminalWidth reports whether w is a terminal, and its width if known.
func terminalWidth(w io.Writer) (bool, int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false, 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return true, 0
	}
	return true, width
}

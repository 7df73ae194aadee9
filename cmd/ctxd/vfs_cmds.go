package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// onConflictFlag parses --on-conflict values.
func onConflictFlag(v string) (ctxdv1.OnConflict, error) {
	switch v {
	case "error":
		return ctxdv1.OnConflict_ON_CONFLICT_ERROR, nil
	case "overwrite":
		return ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE, nil
	case "skip":
		return ctxdv1.OnConflict_ON_CONFLICT_SKIP, nil
	}
	return 0, usageError{fmt.Errorf("--on-conflict must be error, overwrite or skip, got %q", v)}
}

// run wraps a command body that makes one call and prints its response:
// as JSON with --json, otherwise with human.
func run[T proto.Message](c *cli, call func(context.Context, *clients) (T, error), human func(T)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		return c.call(cmd.Context(), func(ctx context.Context, cl *clients) error {
			resp, err := call(ctx, cl)
			if err != nil {
				return err
			}
			if c.json {
				return c.printJSON(resp)
			}
			human(resp)
			return nil
		})
	}
}

func (c *cli) addVFSCommands(root *cobra.Command) {
	root.AddCommand(
		c.drivesCommand(), c.treeCommand(), c.lsCommand(), c.readCommand(), c.writeCommand(),
		c.editCommand(), c.rmCommand(), c.cpCommand(), c.mvCommand(), c.infoCommand(),
		c.existsCommand(), c.mkdirCommand(), c.duCommand(), c.wcCommand(), c.statusCommand(),
		c.importCommand(), c.exportCommand(), c.reembedCommand(), c.modelCommand(), c.searchCommand(), c.similarCommand(), c.reindexCommand(), c.doctorCommand(),
		c.historyCommand(), c.revertCommand(), c.deletedCommand(), c.logCommand(), c.diffCommand(), c.uiCommand(),
		c.initCommand(), c.contextCommand(),
	)
}

func (c *cli) drivesCommand() *cobra.Command {
	return &cobra.Command{
		Use: "drives", Short: "List drives that hold items", Args: exactArgs(0),
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.ListDrivesResponse, error) {
			return cl.vfs.ListDrives(ctx, &ctxdv1.ListDrivesRequest{})
		}, func(r *ctxdv1.ListDrivesResponse) {
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "DRIVE\tITEMS\tBYTES")
			for _, d := range r.Drives {
				fmt.Fprintf(tw, "%s\t%d\t%d\n", d.Name, d.ItemCount, d.SizeBytes)
			}
			tw.Flush()
		}),
	}
}

func (c *cli) treeCommand() *cobra.Command {
	req := &ctxdv1.TreeRequest{}
	cmd := &cobra.Command{
		Use: "tree [REF]", Short: "Show a directory (or all drives) as a tree", Args: maxArgs(1),
		PreRun: func(_ *cobra.Command, args []string) {
			if len(args) == 1 {
				req.Ref = args[0]
			}
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.TreeResponse, error) {
			return cl.vfs.Tree(ctx, req)
		}, func(r *ctxdv1.TreeResponse) { fmt.Fprint(c.stdout, ensureNewline(r.Rendered)) }),
	}
	cmd.Flags().Int32VarP(&req.MaxDepth, "depth", "L", 0, "levels to expand (default 3)")
	cmd.Flags().Int32Var(&req.ItemsPerDir, "per-dir", 0, "entries shown per directory (default 50)")
	return cmd
}

func (c *cli) lsCommand() *cobra.Command {
	req := &ctxdv1.ListRequest{}
	cmd := &cobra.Command{
		Use: "ls REF", Short: "List a directory", Args: exactArgs(1),
		PreRun: func(_ *cobra.Command, args []string) { req.Ref = args[0] },
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.ListResponse, error) {
			return cl.vfs.List(ctx, req)
		}, func(r *ctxdv1.ListResponse) {
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			for _, e := range r.Entries {
				if e.IsDir {
					fmt.Fprintf(tw, "%s/\t\t\n", e.Ref)
					continue
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\n", e.Ref, e.GetItem().GetSizeBytes(), e.GetItem().GetMimeType())
			}
			tw.Flush()
			if r.NextPageToken != "" {
				fmt.Fprintf(c.stderr, "more entries follow; continue with --page-token %s\n", r.NextPageToken)
			}
		}),
	}
	cmd.Flags().BoolVarP(&req.Recursive, "recursive", "r", false, "list every item below the directory")
	cmd.Flags().Int32Var(&req.Limit, "limit", 0, "entries per page (default 1000)")
	cmd.Flags().StringVar(&req.PageToken, "page-token", "", "continue a previous listing")
	return cmd
}

func (c *cli) readCommand() *cobra.Command {
	req := &ctxdv1.ReadRequest{}
	var rev int64
	show := func(content string, data []byte) {
		if req.Raw {
			c.stdout.Write(data)
			return
		}
		io.WriteString(c.stdout, content)
	}
	readCurrent := run(c, func(ctx context.Context, cl *clients) (*ctxdv1.ReadResponse, error) {
		return cl.vfs.Read(ctx, req)
	}, func(r *ctxdv1.ReadResponse) { show(r.Content, r.Data) })
	readRevision := run(c, func(ctx context.Context, cl *clients) (*ctxdv1.ReadRevisionResponse, error) {
		return cl.vfs.ReadRevision(ctx, &ctxdv1.ReadRevisionRequest{Ref: req.Ref, Rev: rev, Raw: req.Raw})
	}, func(r *ctxdv1.ReadRevisionResponse) { show(r.Content, r.Data) })
	cmd := &cobra.Command{
		Use: "read REF", Short: "Print an item's text (or raw bytes with --raw), or an earlier revision with --rev", Args: exactArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			req.Ref = args[0]
			if cmd.Flags().Changed("rev") && (cmd.Flags().Changed("offset") || cmd.Flags().Changed("limit")) {
				return usageError{fmt.Errorf("--rev prints a whole revision; --offset and --limit apply to the current content only")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("rev") {
				return readRevision(cmd, args)
			}
			return readCurrent(cmd, args)
		},
	}
	cmd.Flags().Int64Var(&req.LineOffset, "offset", 0, "lines to skip")
	cmd.Flags().Int64Var(&req.LineLimit, "limit", 0, "lines to print (default all)")
	cmd.Flags().BoolVar(&req.Raw, "raw", false, "print the raw bytes (works for binary items)")
	cmd.Flags().Int64Var(&rev, "rev", 0, "print this revision (see ctxd history REF), deleted items too")
	return cmd
}

func (c *cli) writeCommand() *cobra.Command {
	req := &ctxdv1.WriteRequest{}
	var file, content, onConflict string
	var binary bool
	cmd := &cobra.Command{
		Use:   "write REF",
		Short: "Write an item from --content, --file or stdin",
		Long: `Write an item from --content, --file or standard input. Text must be UTF-8
without NUL bytes; use --binary to store any bytes as a blob.

  ctxd write agent:/notes/todo.md --content "- call the vet"
  ctxd write disk:/ref/spec.pdf --file spec.pdf --binary
  git log -5 | ctxd write agent:/log.txt --on-conflict overwrite`,
		Args: exactArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			req.Ref = args[0]
			oc, err := onConflictFlag(onConflict)
			if err != nil {
				return err
			}
			req.OnConflict = oc
			var data []byte
			switch {
			case cmd.Flags().Changed("content") && file != "":
				return usageError{fmt.Errorf("give --content or --file, not both")}
			case cmd.Flags().Changed("content"):
				data = []byte(content)
			case file != "":
				data, err = os.ReadFile(file)
			default:
				data, err = io.ReadAll(c.stdin)
			}
			if err != nil {
				return err
			}
			if binary {
				req.Body = &ctxdv1.WriteRequest_Data{Data: data}
			} else {
				req.Body = &ctxdv1.WriteRequest_Content{Content: string(data)}
			}
			return nil
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.WriteResponse, error) {
			return cl.vfs.Write(ctx, req)
		}, func(r *ctxdv1.WriteResponse) {
			verb := "updated"
			switch {
			case r.Created:
				verb = "created"
			case r.Skipped:
				verb = "skipped (exists)"
			}
			c.printWarnings(r.Warnings)
			fmt.Fprintf(c.stdout, "%s %s (%d bytes)\n", verb, r.Item.Ref, r.Item.SizeBytes)
			fmt.Fprint(c.stdout, ensureNewline(r.GetTree().GetRendered()))
		}),
	}
	f := cmd.Flags()
	f.StringVar(&content, "content", "", "the content itself, instead of stdin")
	f.StringVarP(&file, "file", "f", "", "read content from this file instead of stdin")
	f.BoolVar(&binary, "binary", false, "store the content as a binary blob")
	f.StringVar(&onConflict, "on-conflict", "error", "when the item exists: error, overwrite or skip")
	f.StringVar(&req.MimeType, "mime", "", "MIME type (default: detected)")
	f.StringVar(&req.Title, "title", "", "title (default: file name)")
	f.StringVar(&req.Description, "description", "", "description")
	f.StringSliceVar(&req.Tags, "tag", nil, "tag (repeatable)")
	f.Float64Var(&req.Importance, "importance", 0, "importance in [0, 1]")
	f.StringVar(&req.SourceUrl, "source", "", "where the content came from")
	f.StringVar(&req.ExpectedContentHash, "if-hash", "", "with overwrite: only if the stored content has this SHA-256")
	f.StringArrayVar(&req.Questions, "question", nil, "a question the content answers, found by vector search (repeatable; replaces the item's earlier ones)")
	return cmd
}

func (c *cli) editCommand() *cobra.Command {
	req := &ctxdv1.EditRequest{}
	var patchFile, content string
	var start, end int64
	cmd := &cobra.Command{
		Use:   "edit REF",
		Short: "Apply line-range patches to a text item",
		Long: `Apply line-range patches to a text item. Lines are 1-based and inclusive.

One patch from flags:  ctxd edit REF --start 3 --end 4 --content 'new text'
  (--end 0 inserts before --start; empty --content deletes; without --content
  the replacement is read from stdin)
Several patches:       ctxd edit REF --patches patches.json   ("-" for stdin)
  where the file holds [{"start_line":1,"end_line":1,"content":"..."}, ...]`,
		Args: exactArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			req.Ref = args[0]
			if patchFile != "" {
				return readPatches(patchFile, c.stdin, req)
			}
			if !cmd.Flags().Changed("start") {
				return usageError{fmt.Errorf("give --start (and --end) or --patches")}
			}
			if !cmd.Flags().Changed("content") {
				b, err := io.ReadAll(c.stdin)
				if err != nil {
					return err
				}
				content = string(b)
			}
			req.Patches = []*ctxdv1.Patch{{StartLine: start, EndLine: end, Content: content}}
			return nil
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.EditResponse, error) {
			return cl.vfs.Edit(ctx, req)
		}, func(r *ctxdv1.EditResponse) {
			c.printWarnings(r.Warnings)
			fmt.Fprintf(c.stdout, "edited %s: %d -> %d lines\n", r.Item.Ref, r.LinesBefore, r.LinesAfter)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&patchFile, "patches", "", `JSON file of patches ("-" for stdin)`)
	f.Int64Var(&start, "start", 0, "first line (1-based)")
	f.Int64Var(&end, "end", 0, "last line replaced, inclusive; 0 inserts")
	f.StringVar(&content, "content", "", "replacement text")
	f.StringVar(&req.ExpectedContentHash, "if-hash", "", "only if the stored content has this SHA-256")
	return cmd
}

// readPatches decodes a JSON array of patches from a file or stdin.
func readPatches(name string, stdin io.Reader, req *ctxdv1.EditRequest) error {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	var ps []struct {
		StartLine int64  `json:"start_line"`
		EndLine   int64  `json:"end_line"`
		Content   string `json:"content"`
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ps); err != nil {
		return usageError{fmt.Errorf("--patches: want a JSON array of {start_line, end_line, content}: %w", err)}
	}
	for _, p := range ps {
		req.Patches = append(req.Patches, &ctxdv1.Patch{StartLine: p.StartLine, EndLine: p.EndLine, Content: p.Content})
	}
	return nil
}

func (c *cli) rmCommand() *cobra.Command {
	req := &ctxdv1.DeleteRequest{}
	cmd := &cobra.Command{
		Use: "rm REF", Short: "Delete an item, or a directory with -r", Args: exactArgs(1),
		PreRun: func(_ *cobra.Command, args []string) { req.Ref = args[0] },
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.DeleteResponse, error) {
			return cl.vfs.Delete(ctx, req)
		}, func(r *ctxdv1.DeleteResponse) { fmt.Fprintf(c.stdout, "deleted %d items\n", r.DeletedCount) }),
	}
	cmd.Flags().BoolVarP(&req.Recursive, "recursive", "r", false, "delete a directory and everything below it")
	return cmd
}

func (c *cli) cpCommand() *cobra.Command {
	req := &ctxdv1.CopyRequest{}
	var onConflict string
	cmd := &cobra.Command{
		Use: "cp SRC DST", Short: "Copy an item, or a directory with -r", Args: exactArgs(2),
		PreRunE: func(_ *cobra.Command, args []string) (err error) {
			req.SourceRef, req.DestinationRef = args[0], args[1]
			req.OnConflict, err = onConflictFlag(onConflict)
			return err
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.CopyResponse, error) {
			return cl.vfs.Copy(ctx, req)
		}, func(r *ctxdv1.CopyResponse) {
			fmt.Fprintf(c.stdout, "copied %d items to %s (%d skipped)\n", r.CopiedCount, r.DestinationRef, r.SkippedCount)
		}),
	}
	cmd.Flags().BoolVarP(&req.Recursive, "recursive", "r", false, "copy a directory and everything below it")
	cmd.Flags().StringVar(&onConflict, "on-conflict", "error", "when a destination item exists: error, overwrite or skip")
	return cmd
}

func (c *cli) mvCommand() *cobra.Command {
	req := &ctxdv1.MoveRequest{}
	var onConflict string
	cmd := &cobra.Command{
		Use: "mv SRC DST", Short: "Move or rename an item or a directory, across drives too", Args: exactArgs(2),
		PreRunE: func(_ *cobra.Command, args []string) (err error) {
			req.SourceRef, req.DestinationRef = args[0], args[1]
			req.OnConflict, err = onConflictFlag(onConflict)
			return err
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.MoveResponse, error) {
			return cl.vfs.Move(ctx, req)
		}, func(r *ctxdv1.MoveResponse) {
			fmt.Fprintf(c.stdout, "moved %d items to %s (%d skipped)\n", r.MovedCount, r.DestinationRef, r.SkippedCount)
		}),
	}
	cmd.Flags().StringVar(&onConflict, "on-conflict", "error", "when a destination item exists: error, overwrite or skip")
	return cmd
}

func (c *cli) infoCommand() *cobra.Command {
	req := &ctxdv1.InfoRequest{}
	return &cobra.Command{
		Use: "info REF", Short: "Show an item's or directory's metadata", Args: exactArgs(1),
		PreRun: func(_ *cobra.Command, args []string) { req.Ref = args[0] },
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.InfoResponse, error) {
			return cl.vfs.Info(ctx, req)
		}, func(r *ctxdv1.InfoResponse) {
			it := r.Item
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			row := func(k string, v any) { fmt.Fprintf(tw, "%s:\t%v\n", k, v) }
			row("ref", it.Ref)
			if it.IsDir {
				row("type", "directory")
				row("items", r.ItemCount)
				row("bytes", it.SizeBytes)
				tw.Flush()
				return
			}
			row("id", it.Id)
			row("title", it.Title)
			row("mime", it.MimeType)
			row("bytes", it.SizeBytes)
			row("lines", it.LineCount)
			row("sha256", it.ContentHash)
			if len(it.Tags) > 0 {
				row("tags", strings.Join(it.Tags, ", "))
			}
			if it.SourceUrl != "" {
				row("source", it.SourceUrl)
			}
			if it.Loading != "" || it.AgentModification {
				row("loading", it.Loading)
				row("agent-modification", it.AgentModification)
			}
			row("created", it.CreatedAt.AsTime().Local().Format(time.RFC3339))
			row("updated", it.UpdatedAt.AsTime().Local().Format(time.RFC3339))
			tw.Flush()
		}),
	}
}

func (c *cli) existsCommand() *cobra.Command {
	return &cobra.Command{
		Use: "exists REF", Short: "Exit 0 if REF exists, 1 if not", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.call(cmd.Context(), func(ctx context.Context, cl *clients) error {
				r, err := cl.vfs.Exists(ctx, &ctxdv1.ExistsRequest{Ref: args[0]})
				if err != nil {
					return err
				}
				if c.json {
					c.printJSON(r)
				} else {
					fmt.Fprintln(c.stdout, map[bool]string{true: "yes", false: "no"}[r.Exists]+map[bool]string{true: " (directory)"}[r.IsDir])
				}
				if !r.Exists {
					return exitCodeError(exitError)
				}
				return nil
			})
		},
	}
}

func (c *cli) mkdirCommand() *cobra.Command {
	req := &ctxdv1.MakeDirRequest{}
	return &cobra.Command{
		Use: "mkdir REF", Short: "Create an empty directory", Args: exactArgs(1),
		PreRun: func(_ *cobra.Command, args []string) { req.Ref = args[0] },
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.MakeDirResponse, error) {
			return cl.vfs.MakeDir(ctx, req)
		}, func(r *ctxdv1.MakeDirResponse) {
			fmt.Fprintf(c.stdout, "%s %s\n", map[bool]string{true: "created", false: "exists"}[r.Created], r.Ref)
		}),
	}
}

func (c *cli) duCommand() *cobra.Command {
	req := &ctxdv1.DirSizeRequest{}
	return &cobra.Command{
		Use: "du REF", Short: "Total bytes below a directory", Args: exactArgs(1),
		PreRun: func(_ *cobra.Command, args []string) { req.Ref = args[0] },
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.DirSizeResponse, error) {
			return cl.vfs.DirSize(ctx, req)
		}, func(r *ctxdv1.DirSizeResponse) {
			fmt.Fprintf(c.stdout, "%d\t%s (%d items)\n", r.SizeBytes, req.Ref, r.ItemCount)
		}),
	}
}

func (c *cli) wcCommand() *cobra.Command {
	req := &ctxdv1.CountLinesRequest{}
	return &cobra.Command{
		Use: "wc REF", Short: "Count an item's lines", Args: exactArgs(1),
		PreRun: func(_ *cobra.Command, args []string) { req.Ref = args[0] },
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.CountLinesResponse, error) {
			return cl.vfs.CountLines(ctx, req)
		}, func(r *ctxdv1.CountLinesResponse) { fmt.Fprintf(c.stdout, "%d %s\n", r.Lines, req.Ref) }),
	}
}

func (c *cli) reembedCommand() *cobra.Command {
	req := &ctxdv1.ReembedRequest{}
	cmd := &cobra.Command{
		Use:   "reembed [REF...]",
		Short: "Compute the embeddings of items (or --all) again",
		Long:  "Queue the chunks of the given items or directories (or every item with --all) for embedding with the current model, and follow progress until the queue is empty.",
		PreRunE: func(_ *cobra.Command, args []string) error {
			req.Refs = args
			if len(args) == 0 && !req.All {
				return usageError{fmt.Errorf("give refs or --all")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := c.dial()
			if err != nil {
				return err
			}
			defer cl.conn.Close()
			stream, err := ctxdv1.NewIngestServiceClient(cl.conn).Reembed(cmd.Context(), req)
			if err != nil {
				return err
			}
			var last string
			var printed time.Time
			for {
				ev, err := stream.Recv()
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
				if c.json {
					c.printJSON(ev)
					continue
				}
				if p := ev.GetProgress(); p != nil {
					// Only a change, at most once a second but the last one: the
					// daemon repeats itself while other chunks drain from the queue.
					line := reembedLine(p)
					if line != last && (time.Since(printed) >= time.Second || p.ChunksDone == p.ItemsTotal) {
						fmt.Fprintln(c.stderr, line)
						last, printed = line, time.Now()
					}
				}
				if sum := ev.GetSummary(); sum != nil {
					fmt.Fprintf(c.stdout, "re-embedded %d chunks in %.1fs\n", sum.ChunksQueued, sum.Seconds)
				}
			}
		},
	}
	cmd.Flags().BoolVar(&req.All, "all", false, "re-embed every item")
	return cmd
}

// reembedLine renders Reembed progress: "embedding: 120/400 chunks, 35
// chunks/s, ETA 8s", the rate and ETA once the daemon has measured them.
func reembedLine(p *ctxdv1.IngestProgress) string {
	line := fmt.Sprintf("embedding: %d/%d chunks", p.ChunksDone, p.ItemsTotal)
	if p.ItemsPerSecond > 0 {
		line += fmt.Sprintf(", %s chunks/s", humanRate(p.ItemsPerSecond))
	}
	if p.EtaSeconds > 0 {
		line += ", ETA " + formatETA(time.Duration(min(p.EtaSeconds, 1e8)*float64(time.Second)))
	}
	return line
}

// availability renders a status's state: available, what it is loading
// (the reason says), or unavailable and why.
func availability(ok, loading bool, reason string) string {
	switch {
	case ok:
		return "available"
	case loading:
		return cmp.Or(reason, "loading")
	case reason == "":
		return "unavailable (the daemon gave no reason)"
	}
	return "unavailable: " + reason
}

func ensureNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// Bounds of one import line and of the content one WriteBatch carries: a
// request is refused above twice the daemon's max_content_bytes (default
// 64 MiB), so a batch is sent before its lines pass importBatchBytes.
const (
	maxImportLine    = 256 << 20
	importBatchBytes = 32 << 20
)

func (c *cli) importCommand() *cobra.Command {
	var batch int
	var onConflict string
	cmd := &cobra.Command{
		Use:   "import [FILE|DIR]",
		Short: "Write items from JSON lines (FILE or stdin), or from a ctxd export DIR, in batches",
		Long: `Write many items from JSON lines, one WriteRequest a line as the API takes it
({"ref":"notes:/a.md","content":"...","tags":["x"]}; "data" for base64 binary,
"chunk_embeddings" and "embedding_model" for precomputed vectors), read from FILE
or standard input. Lines go to the daemon in WriteBatch calls of --batch items:
each batch is written whole or not at all, and when one fails the batches before
it stay written. --on-conflict applies to lines that do not set on_conflict.

A directory written by ctxd export is read through its manifest: every file is
checked against the SHA-256 the manifest records, and each item is written with
its metadata and its exported id, kept where no item has it (a new id
otherwise; the summary counts both). Empty directories are made again.

  ctxd import notes.jsonl --on-conflict overwrite
  ctxd import ~/ctxd-export --on-conflict skip
  jq -c '{ref: ("notes:/" + .id), content: .text}' docs.json | ctxd import`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			oc, err := onConflictFlag(onConflict)
			if err != nil {
				return err
			}
			if batch < 1 {
				return usageError{fmt.Errorf("--batch must be at least 1, got %d", batch)}
			}
			in := c.stdin
			if len(args) == 1 && args[0] != "-" {
				if st, err := os.Stat(args[0]); err == nil && st.IsDir() {
					ctx, stop := c.untilInterrupted(cmd)
					defer stop()
					return c.importTree(ctx, args[0], batch, oc)
				}
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			return c.importLines(cmd.Context(), in, batch, oc)
		},
	}
	cmd.Flags().IntVar(&batch, "batch", 256, "items per WriteBatch call (at most the daemon's limits.max_batch_items)")
	cmd.Flags().StringVar(&onConflict, "on-conflict", "error", "when an item exists: error, overwrite or skip")
	return cmd
}

// importLines sends the JSON lines of in as WriteBatch calls, each with its
// own deadline, and reports what was written.
func (c *cli) importLines(ctx context.Context, in io.Reader, batch int, oc ctxdv1.OnConflict) error {
	cl, err := c.dial()
	if err != nil {
		return err
	}
	defer cl.conn.Close()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxImportLine)
	var line, first int // the current line; the first line of the pending batch
	b := newWriteBatcher(c, cl, batch)
	b.failed = func() {
		fmt.Fprintf(c.stderr, "ctxd import: nothing of lines %d-%d was written (items[i] is line %d+i); %d items before them were\n",
			first, line, first, b.written())
	}
	for sc.Scan() {
		line++
		raw := sc.Bytes()
		if len(raw) == 0 {
			continue
		}
		w := &ctxdv1.WriteRequest{}
		if err := protojson.Unmarshal(raw, w); err != nil {
			return usageError{fmt.Errorf("line %d is not a WriteRequest in JSON (%v); %d items of earlier batches were written, the %d lines since were not sent",
				line, err, b.written(), b.pending())}
		}
		if w.OnConflict == ctxdv1.OnConflict_ON_CONFLICT_UNSPECIFIED {
			w.OnConflict = oc
		}
		if err := b.makeRoom(ctx, len(raw)); err != nil {
			return err
		}
		if b.pending() == 0 {
			first = line
		}
		if err := b.push(ctx, w, len(raw)); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("line %d is longer than %d MiB: write that item on its own with ctxd write", line+1, maxImportLine>>20)
		}
		return err
	}
	if err := b.send(ctx); err != nil {
		return err
	}
	if !c.json {
		fmt.Fprintf(c.stdout, "imported %d items: %d created, %d updated, %d skipped; WriteBatch calls: %d\n",
			b.written(), b.created, b.updated, b.skipped, b.batches)
	}
	return nil
}

// writeBatcher sends WriteRequests in WriteBatch calls of at most max items
// and about importBatchBytes, each call with the CLI's deadline, and counts
// the outcomes.
type writeBatcher struct {
	c       *cli
	cl      *clients
	max     int
	req     *ctxdv1.WriteBatchRequest
	bytes   int
	created int
	updated int
	skipped int
	batches int
	// failed, if set, is called when a call fails, before its error returns.
	failed func()
	// result, if set, is called with every item and its outcome.
	result func(*ctxdv1.WriteRequest, *ctxdv1.WriteResponse)
}

func newWriteBatcher(c *cli, cl *clients, max int) *writeBatcher {
	return &writeBatcher{c: c, cl: cl, max: max, req: &ctxdv1.WriteBatchRequest{}}
}

// pending is how many items wait for the next call; written how many the
// calls so far wrote (or skipped).
func (b *writeBatcher) pending() int { return len(b.req.Items) }
func (b *writeBatcher) written() int { return b.created + b.updated + b.skipped }

// makeRoom sends the pending items if size more bytes would pass the
// batch's bound.
func (b *writeBatcher) makeRoom(ctx context.Context, size int) error {
	if b.pending() > 0 && b.bytes+size > importBatchBytes {
		return b.send(ctx)
	}
	return nil
}

// push adds w, of about size bytes, and sends the batch once it is full.
func (b *writeBatcher) push(ctx context.Context, w *ctxdv1.WriteRequest, size int) error {
	b.req.Items = append(b.req.Items, w)
	b.bytes += size
	if b.pending() == b.max {
		return b.send(ctx)
	}
	return nil
}

// send writes the pending items in one WriteBatch call.
func (b *writeBatcher) send(ctx context.Context) error {
	if b.pending() == 0 {
		return nil
	}
	bctx, cancel := context.WithTimeout(ctx, b.c.timeout)
	defer cancel()
	resp, err := b.cl.vfs.WriteBatch(bctx, b.req)
	if err != nil {
		if b.failed != nil {
			b.failed()
		}
		return err
	}
	b.batches++
	if b.c.json {
		if err := b.c.printJSON(resp); err != nil {
			return err
		}
	}
	for i, r := range resp.Results {
		switch {
		case r.Created:
			b.created++
		case r.Skipped:
			b.skipped++
		default:
			b.updated++
		}
		if b.result != nil {
			b.result(b.req.Items[i], r)
		}
	}
	b.req, b.bytes = &ctxdv1.WriteBatchRequest{}, 0
	return nil
}

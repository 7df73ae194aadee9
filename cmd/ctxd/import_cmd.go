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
		Use:   "import [FILE]",
		Short: "Write items from JSON lines (FILE or stdin) in batches",
		Long: `Write many items from JSON lines, one WriteRequest a line as the API takes it
({"ref":"notes:/a.md","content":"...","tags":["x"]}; "data" for base64 binary,
"chunk_embeddings" and "embedding_model" for precomputed vectors), read from FILE
or standard input. Lines go to the daemon in WriteBatch calls of --batch items:
each batch is written whole or not at all, and when one fails the batches before
it stay written. --on-conflict applies to lines that do not set on_conflict.

  ctxd import notes.jsonl --on-conflict overwrite
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
	var (
		req                       = &ctxdv1.WriteBatchRequest{}
		reqBytes                  int
		line, first               int // the current line; the first line of req
		created, updated, skipped int
		batches                   int
	)
	send := func() error {
		if len(req.Items) == 0 {
			return nil
		}
		bctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		resp, err := cl.vfs.WriteBatch(bctx, req)
		if err != nil {
			fmt.Fprintf(c.stderr, "ctxd import: nothing of lines %d-%d was written (items[i] is line %d+i); %d items before them were\n",
				first, line, first, created+updated+skipped)
			return err
		}
		batches++
		if c.json {
			if err := c.printJSON(resp); err != nil {
				return err
			}
		}
		for _, r := range resp.Results {
			switch {
			case r.Created:
				created++
			case r.Skipped:
				skipped++
			default:
				updated++
			}
		}
		req, reqBytes = &ctxdv1.WriteBatchRequest{}, 0
		return nil
	}
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		w := &ctxdv1.WriteRequest{}
		if err := protojson.Unmarshal(b, w); err != nil {
			return usageError{fmt.Errorf("line %d is not a WriteRequest in JSON (%v); %d items of earlier batches were written, the %d lines since were not sent",
				line, err, created+updated+skipped, len(req.Items))}
		}
		if w.OnConflict == ctxdv1.OnConflict_ON_CONFLICT_UNSPECIFIED {
			w.OnConflict = oc
		}
		if len(req.Items) > 0 && reqBytes+len(b) > importBatchBytes {
			if err := send(); err != nil {
				return err
			}
		}
		if len(req.Items) == 0 {
			first = line
		}
		req.Items = append(req.Items, w)
		reqBytes += len(b)
		if len(req.Items) == batch {
			if err := send(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("line %d is longer than %d MiB: write that item on its own with ctxd write", line+1, maxImportLine>>20)
		}
		return err
	}
	if err := send(); err != nil {
		return err
	}
	if !c.json {
		fmt.Fprintf(c.stdout, "imported %d items: %d created, %d updated, %d skipped; WriteBatch calls: %d\n",
			created+updated+skipped, created, updated, skipped, batches)
	}
	return nil
}

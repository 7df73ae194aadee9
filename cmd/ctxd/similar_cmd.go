package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

func (c *cli) similarCommand() *cobra.Command {
	req := &ctxdv1.FindSimilarRequest{Filter: &ctxdv1.SearchFilter{}}
	var text string
	cmd := &cobra.Command{
		Use:   "similar [REF]",
		Short: "Find stored items that are near-duplicates of an item or a text",
		Long: "Compare the chunks of the item at REF, or of --text (chunked and embedded the way a " +
			"written item would be; \"-\" reads stdin), with the chunks of every other stored item, by " +
			"cosine similarity of their embeddings. Prints each item holding a chunk at or above " +
			"--threshold: its ref, the best pair's similarity, its coverage (the share of the target's " +
			"chunks matched; 1 means all of it is already there) and that chunk's snippet. Check before " +
			"writing a memory that may exist already; `ctxd add --dedupe` skips such sources itself.",
		Args: maxArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			hasText := cmd.Flags().Changed("text")
			switch {
			case len(args) == 1 && !hasText:
				req.Target = &ctxdv1.FindSimilarRequest_Ref{Ref: args[0]}
			case len(args) == 0 && hasText:
				if text == "-" {
					b, err := io.ReadAll(c.stdin)
					if err != nil {
						return err
					}
					text = string(b)
				}
				req.Target = &ctxdv1.FindSimilarRequest_Text{Text: text}
			default:
				return usageError{fmt.Errorf("give either a REF or --text")}
			}
			return nil
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.FindSimilarResponse, error) {
			return ctxdv1.NewSearchServiceClient(cl.conn).FindSimilar(ctx, req)
		}, func(r *ctxdv1.FindSimilarResponse) {
			c.noteStale(r.Stale, r.StaleReason)
			if len(r.Items) == 0 {
				fmt.Fprintf(c.stdout, "no similar items (%d chunks compared)\n", r.TargetChunks)
				return
			}
			for i, it := range r.Items {
				fmt.Fprintf(c.stdout, "%d. %s  similarity %.3f  coverage %.2f\n", i+1, it.Ref, it.Similarity, it.Coverage)
				fmt.Fprintf(c.stdout, "   %s\n", strings.TrimSpace(it.Snippet))
			}
		}),
	}
	filterFlags(cmd, &req.Limit, req.Filter)
	f := cmd.Flags()
	f.StringVar(&text, "text", "", `compare this text instead of an item ("-": read stdin)`)
	f.Float64Var(&req.Threshold, "threshold", 0, "cosine similarity in (0, 1] a chunk pair must reach (0: 0.9)")
	return cmd
}

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

var searchModes = map[string]ctxdv1.SearchMode{
	"hybrid": ctxdv1.SearchMode_SEARCH_MODE_HYBRID,
	"bm25":   ctxdv1.SearchMode_SEARCH_MODE_BM25,
	"vector": ctxdv1.SearchMode_SEARCH_MODE_VECTOR,
}

func (c *cli) searchCommand() *cobra.Command {
	req := &ctxdv1.SearchRequest{Filter: &ctxdv1.SearchFilter{}}
	var mode, proximity, recency string
	var items bool
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Search stored items; each argument is one query of a batch",
		Long: "Search chunks of stored items by words and meaning. Each argument is a query; " +
			"results of a batch are fused and de-duplicated. Prints ref, the chunk's lines, score, heading " +
			"and snippet; `ctxd read REF --offset START-1 --limit END-START+1` prints the lines START-END. " +
			"A long query (a pasted page) is searched by its most informative words, which are shown. " +
			"With --items each result is an item, ranked by where the legs found any of its chunks, " +
			"printed with its best chunk and then its next best (up to --per-item in all), indented. " +
			"--explain prints under each result why it scores what it does: each leg's rank and share of the fusion, " +
			"the fused score over its most, the factors applied after it and the query terms the chunk holds.",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("give at least one query")}
			}
			return nil
		},
		PreRunE: func(_ *cobra.Command, args []string) (err error) {
			if req.Mode, err = searchModeFlag(mode); err != nil {
				return err
			}
			if items {
				req.GroupBy = ctxdv1.SearchGroupBy_SEARCH_GROUP_BY_ITEM
			}
			if req.Proximity, err = toggleFlag("--proximity", proximity); err != nil {
				return err
			}
			if req.Recency, err = toggleFlag("--recency", recency); err != nil {
				return err
			}
			for _, q := range args {
				req.Queries = append(req.Queries, &ctxdv1.SearchQuery{Text: q})
			}
			return nil
		},
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.SearchResponse, error) {
			return ctxdv1.NewSearchServiceClient(cl.conn).Search(ctx, req)
		}, func(r *ctxdv1.SearchResponse) {
			if r.ModeReason != "" {
				fmt.Fprintf(c.stderr, "note: %s\n", r.ModeReason)
			}
			c.noteStale(r.Stale, r.StaleReason)
			for i, q := range r.Queries {
				if q.ReducedText != "" {
					fmt.Fprintf(c.stderr, "note: query %d is long; searched for its key words %q\n", i+1, q.ReducedText)
				}
				if q.CorrectedText != "" {
					fmt.Fprintf(c.stderr, "note: no match for %q; showing results for %q\n", q.Text, q.CorrectedText)
				}
			}
			if len(r.Results) == 0 {
				fmt.Fprintln(c.stdout, "no results")
				return
			}
			for i, res := range r.Results {
				fmt.Fprintf(c.stdout, "%d. %s  lines %d-%d  (%.3f)\n", i+1, res.Ref, res.StartLine, res.EndLine, res.Score)
				if res.Heading != "" {
					fmt.Fprintf(c.stdout, "   %s\n", res.Heading)
				}
				fmt.Fprintf(c.stdout, "   %s\n", strings.TrimSpace(res.Snippet))
				if res.Explanation != nil {
					printExplanation(c.stdout, res.Explanation)
				}
				for _, m := range res.MoreChunks {
					fmt.Fprintf(c.stdout, "   + lines %d-%d  (%.3f)\n", m.StartLine, m.EndLine, m.Score)
					if m.Heading != "" {
						fmt.Fprintf(c.stdout, "     %s\n", m.Heading)
					}
					fmt.Fprintf(c.stdout, "     %s\n", strings.TrimSpace(m.Snippet))
				}
			}
		}),
	}
	searchFlags(cmd, &mode, &req.Limit, req.Filter)
	f := cmd.Flags()
	f.Int32Var(&req.MaxChunksPerItem, "per-item", 0, "at most this many chunks per item (0: 3)")
	f.Int32Var(&req.TokenBudget, "token-budget", 0, "stop adding results past this many model tokens of snippets (0: none)")
	f.Int32Var(&req.SnippetLength, "snippet-length", 0, "snippet length in characters (0: 300)")
	f.BoolVar(&items, "items", false, "one result per item with its best chunks: --limit counts items, --per-item caps each item's chunks")
	f.Float64Var(&req.MinScore, "min-score", 0, "drop results scoring below this, in [0, 1] (0: keep all; scores come from the legs' ranks)")
	f.Float64Var(&req.ImportanceWeight, "importance-weight", 0, "weigh results by their item's importance, in [0, 1] (0: off; 1: importance 1 scores up to twice importance 0)")
	f.Float64Var(&req.UsageWeight, "usage-weight", 0, "weigh results by how often search returned their item before, in [0, 1] (0: off)")
	f.StringVar(&proximity, "proximity", "default", "rank chunks holding the query's words close together first: on, off or default (on in hybrid and bm25 mode)")
	f.StringVar(&recency, "recency", "default", "rank fresh session events above stale ones: on, off or default (on)")
	f.BoolVar(&req.Explain, "explain", false, "print why each result scores what it does (legs, fusion, factors, matched terms)")
	return cmd
}

// legNames are the short names of the legs in explanations.
var legNames = map[ctxdv1.SearchLeg]string{
	ctxdv1.SearchLeg_SEARCH_LEG_BM25:      "bm25",
	ctxdv1.SearchLeg_SEARCH_LEG_SUBSTRING: "substring",
	ctxdv1.SearchLeg_SEARCH_LEG_VECTOR:    "vector",
}

// printExplanation prints a result's explanation, indented under it.
func printExplanation(w io.Writer, x *ctxdv1.SearchExplanation) {
	fmt.Fprintf(w, "   why: query %d, fused %.4f of %.4f (rrf k %g)\n", x.QueryIndex+1, x.Fused, x.FusedMax, x.RrfK)
	for _, l := range x.Legs {
		if l.Rank == 0 {
			fmt.Fprintf(w, "     %-9s  missed\n", legNames[l.Leg])
			continue
		}
		fmt.Fprintf(w, "     %-9s  rank %d, score %.4g, weight %g: +%.4f\n", legNames[l.Leg], l.Rank, l.Score, l.Weight, l.Contribution)
	}
	for _, f := range x.Factors {
		fmt.Fprintf(w, "     × %-9s %.4f  %s\n", f.Name, f.Factor, f.Detail)
	}
	if len(x.MatchedTerms)+len(x.MissingTerms) > 0 {
		fmt.Fprintf(w, "     terms      matched: %s; missing: %s\n", termList(x.MatchedTerms), termList(x.MissingTerms))
	}
	if x.MatchedQuestion != "" {
		fmt.Fprintf(w, "     question   %q\n", x.MatchedQuestion)
	}
}

// termList joins terms, or says there are none.
func termList(terms []string) string {
	if len(terms) == 0 {
		return "none"
	}
	return strings.Join(terms, " ")
}

// toggleFlag parses an on|off|default flag.
func toggleFlag(name, v string) (ctxdv1.SearchToggle, error) {
	switch v {
	case "default":
		return ctxdv1.SearchToggle_SEARCH_TOGGLE_UNSPECIFIED, nil
	case "on":
		return ctxdv1.SearchToggle_SEARCH_TOGGLE_ON, nil
	case "off":
		return ctxdv1.SearchToggle_SEARCH_TOGGLE_OFF, nil
	}
	return 0, usageError{fmt.Errorf("%s must be on, off or default, not %q", name, v)}
}

// searchFlags defines the flags every searching command shares: --mode
// (parse it with searchModeFlag), --limit and the filters.
func searchFlags(cmd *cobra.Command, mode *string, limit *int32, filter *ctxdv1.SearchFilter) {
	cmd.Flags().StringVar(mode, "mode", "hybrid", "hybrid, bm25 or vector")
	filterFlags(cmd, limit, filter)
}

// filterFlags defines --limit and the filters.
func filterFlags(cmd *cobra.Command, limit *int32, filter *ctxdv1.SearchFilter) {
	f := cmd.Flags()
	f.Int32Var(limit, "limit", 10, "maximum results")
	f.StringSliceVar(&filter.Drives, "drive", nil, "only these drives (repeatable)")
	f.StringSliceVar(&filter.PathPrefixes, "path", nil, `only items under these directories, "drive:/dir" or "/dir" (repeatable)`)
	f.StringSliceVar(&filter.MimeTypes, "mime", nil, `only these MIME types, "text/*" allowed (repeatable)`)
	f.StringSliceVar(&filter.Tags, "tag", nil, "only items with all of these tags (repeatable)")
}

// searchModeFlag parses --mode.
func searchModeFlag(mode string) (ctxdv1.SearchMode, error) {
	m, ok := searchModes[mode]
	if !ok {
		return 0, usageError{fmt.Errorf("--mode must be hybrid, bm25 or vector, not %q", mode)}
	}
	return m, nil
}

// maintenanceTimeout is the deadline of reindex and doctor unless --timeout
// is given: both read every chunk, minutes for millions of them.
const maintenanceTimeout = time.Hour

// longer gives a maintenance command its own default deadline.
func (c *cli) longer(cmd *cobra.Command, _ []string) error {
	if !cmd.Flags().Changed("timeout") {
		c.timeout = maintenanceTimeout
	}
	return nil
}

func (c *cli) reindexCommand() *cobra.Command {
	return &cobra.Command{
		Use: "reindex", Short: "Rebuild the search indexes from the store", Args: exactArgs(0),
		PreRunE: c.longer,
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.ReindexResponse, error) {
			return cl.admin.Reindex(ctx, &ctxdv1.ReindexRequest{})
		}, func(r *ctxdv1.ReindexResponse) {
			fmt.Fprintf(c.stdout, "reindexed %d chunks (%d vectors) up to change %d in %.1fs\n",
				r.LexicalChunks, r.VectorChunks, r.AppliedSequence, r.Seconds)
		}),
	}
}

func (c *cli) doctorCommand() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:     "doctor",
		Short:   "Check that the store and the search indexes agree",
		Long:    "Verify the store file and compare every chunk with the lexical and vector indexes, at one point of the store's change log, so the result is exact while the daemon is being written to (writes wait while the file's pages are checked; new writes become searchable once doctor is done). Exits 0 when all agree and 1 when something disagrees or the check could not run, so it serves as a health check (`ctxd reindex` repairs index drift). The deadline is an hour unless --timeout is given.",
		Args:    exactArgs(0),
		PreRunE: c.longer,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dataDir != "" {
				ctx, cancel := context.WithTimeout(cmd.Context(), c.timeout)
				defer cancel()
				return c.doctorDataDir(ctx, dataDir)
			}
			var r *ctxdv1.DoctorResponse
			err := c.call(cmd.Context(), func(ctx context.Context, cl *clients) error {
				var err error
				r, err = cl.admin.Doctor(ctx, &ctxdv1.DoctorRequest{})
				return err
			})
			if err != nil {
				return err
			}
			if c.json {
				c.printJSON(r)
			} else {
				fmt.Fprintf(c.stdout, "store: %d chunks, %d vectors; lexical index: %d chunks; vector index: %d; changes applied %d of %d\n",
					r.StoreChunks, r.StoreVectors, r.LexicalChunks, r.VectorChunks, r.AppliedSequence, r.OutboxSequence)
				for _, p := range r.Problems {
					fmt.Fprintf(c.stdout, "problem: %s\n", p)
				}
				if r.Ok {
					fmt.Fprintln(c.stdout, "ok")
				}
			}
			if !r.Ok {
				return exitCodeError(exitError)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "check the store of this data directory without a daemon (none may run on it)")
	return cmd
}

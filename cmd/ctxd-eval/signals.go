package main

import (
	"fmt"
	"slices"
	"strings"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// formatSignals writes the report's comparisons of the ranking signals
// with a switch: the proximity rerank (each mode and grouping with it on
// against off, paired over the queries) and recency (the default rows
// against recency off, which must rank every query the same: the
// collections hold no session events).
func formatSignals(b *strings.Builder, results []collectionResult) {
	fmt.Fprintf(b, "\n## Proximity rerank\n\n")
	fmt.Fprintf(b, "On against off per collection, mode and grouping. Δ is the mean per-query difference with its 95%% confidence interval (paired, mean ± 1.96·sd/√n) and the queries it raised/lowered; ")
	fmt.Fprintf(b, "`*` marks a difference beyond noise (the interval excludes 0). The default column says which of the two the server's default matched.\n\n")
	fmt.Fprintf(b, "| collection | mode | nDCG@10 off | nDCG@10 on | Δ nDCG@10 | Recall@100 off | Recall@100 on | Δ Recall@100 | default |\n")
	fmt.Fprintf(b, "|---|---|---:|---:|---|---:|---:|---|---|\n")
	for _, r := range results {
		for _, on := range r.modes {
			if on.variant.proximity != ctxdv1.SearchToggle_SEARCH_TOGGLE_ON {
				continue
			}
			off := r.find(on.base, func(v searchVariant) bool {
				return v.items == on.variant.items && v.proximity == ctxdv1.SearchToggle_SEARCH_TOGGLE_OFF
			})
			def := r.find(on.base, func(v searchVariant) bool { return v == searchVariant{items: on.variant.items} })
			if off == nil || def == nil {
				continue
			}
			dn, dr := PairedDiff(off.ndcgs, on.ndcgs), PairedDiff(off.recalls, on.recalls)
			fmt.Fprintf(b, "| %s | %s | %.4f | %.4f | %s | %.4f | %.4f | %s | %s |\n", r.name, on.variant.grouping(on.base),
				off.ndcg, on.ndcg, formatPaired(dn), off.recall, on.recall, formatPaired(dr), defaultOf(def, &on, off))
		}
	}

	fmt.Fprintf(b, "\n## Recency\n\n")
	fmt.Fprintf(b, "The default rows (recency on for session events) against recency off: the collections hold no session events, so every query must rank the same documents in the same order.\n\n")
	fmt.Fprintf(b, "| collection | mode | queries ranked differently |\n")
	fmt.Fprintf(b, "|---|---|---:|\n")
	for _, r := range results {
		for _, off := range r.modes {
			if off.variant.recency != ctxdv1.SearchToggle_SEARCH_TOGGLE_OFF {
				continue
			}
			def := r.find(off.base, func(v searchVariant) bool { return v == searchVariant{items: off.variant.items} })
			if def == nil {
				continue
			}
			differ := 0
			for i := range def.ranked {
				if !slices.Equal(def.ranked[i], off.ranked[i]) {
					differ++
				}
			}
			fmt.Fprintf(b, "| %s | %s | %d of %d |\n", r.name, off.variant.grouping(off.base), differ, len(def.ranked))
		}
	}
}

// find returns the row of mode whose variant satisfies match, or nil.
func (r collectionResult) find(mode string, match func(searchVariant) bool) *modeResult {
	for i := range r.modes {
		if m := &r.modes[i]; m.base == mode && m.ndcgs != nil && match(m.variant) {
			return m
		}
	}
	return nil
}

// formatPaired renders a paired difference: "+0.0123 ± 0.0045 * (40/3)".
func formatPaired(p Paired) string {
	mark := ""
	if p.Beyond() {
		mark = " *"
	}
	return fmt.Sprintf("%+.4f ± %.4f%s (%d/%d)", p.Mean, p.Half, mark, p.Wins, p.Losses)
}

// defaultOf says which of on and off the default row ranked like.
func defaultOf(def, on, off *modeResult) string {
	same := func(a, b *modeResult) bool { return slices.EqualFunc(a.ranked, b.ranked, slices.Equal) }
	switch {
	case same(on, off):
		return "either (on and off rank alike)"
	case same(def, on):
		return "on"
	case same(def, off):
		return "off"
	}
	return "neither"
}

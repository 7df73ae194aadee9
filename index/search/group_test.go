package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// chunksOf counts the chunks a result shows: its own and More.
func chunksOf(r Result) int { return 1 + len(r.More) }

func TestEngine_GroupByItemLimitAndCap(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/a.md", "walrus one\n\nwalrus two\n\nwalrus three\n\nwalrus four\n\nwalrus five")
	e.write("notes:/b.md", "walrus bee\n\nwalrus bee again")
	e.write("notes:/c.md", "walrus sea")
	e.write("notes:/d.md", "walrus dee")
	e.sync()
	q := []Query{{Text: "walrus"}}

	// Chunk grouping fills a small limit from few items; item grouping
	// counts items.
	chunks := e.search(Request{Mode: BM25, Queries: q, Limit: 3})
	if len(chunks.Results) != 3 {
		t.Fatalf("chunk grouping: %v", refs(chunks))
	}
	for _, tt := range []struct{ limit, perItem int }{{2, 2}, {3, 1}, {4, 0}, {10, 4}} {
		r := e.search(Request{Mode: BM25, Queries: q, GroupBy: GroupItem, Limit: tt.limit, MaxPerItem: tt.perItem})
		got := refs(r)
		want := min(tt.limit, 4)
		if len(got) != want || len(slices.Compact(slices.Sorted(slices.Values(got)))) != want {
			t.Fatalf("limit %d: %v, want %d distinct items", tt.limit, got, want)
		}
		perItem := cmpOr(tt.perItem, DefaultMaxPerItem)
		used, chunkIDs := 0, map[string]bool{}
		for _, res := range r.Results {
			avail := map[string]int{"/a.md": 5, "/b.md": 2, "/c.md": 1, "/d.md": 1}[res.Path]
			if n := chunksOf(res); n != min(perItem, avail) {
				t.Errorf("limit %d cap %d: %s shows %d chunks, want %d", tt.limit, perItem, res.Path, n, min(perItem, avail))
			}
			for _, c := range append([]Result{res}, res.More...) {
				if c.ItemID != res.ItemID || chunkIDs[c.ChunkID] || !strings.Contains(c.Snippet, "walrus") {
					t.Errorf("chunk %+v of %s: another item's, repeated or without the match", c, res.Path)
				}
				chunkIDs[c.ChunkID] = true
				used += c.Tokens
			}
			for i, m := range res.More {
				if prev := append([]Result{res}, res.More...)[i]; m.Score > prev.Score && i > 0 {
					t.Errorf("%s: more chunks out of order", res.Path)
				}
			}
		}
		if used != r.TokensUsed {
			t.Errorf("tokens used %d, the snippets hold %d", r.TokensUsed, used)
		}
	}
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// TestEngine_GroupByItemCreditsLegsThroughDifferentChunks: the lexical legs
// find item x through its first paragraph, the vector leg through its
// second. Chunk by chunk, y's one paragraph (first in both lexical legs, no
// vector) wins; over items, x has all three legs and must win.
func TestEngine_GroupByItemCreditsLegsThroughDifferentChunks(t *testing.T) {
	e := newEnv(t)
	// x's first paragraph points away from the query; 130 fillers nearer
	// the query keep it out of the vector leg's chunk candidates (at most
	// 120 deep for item grouping's default limit and cap).
	e.write("notes:/x.md", "zeppelin hangar at the old airfield by the river\n\nnothing to see", angled(math.Pi), unit(0, 0))
	e.write("notes:/y.md", "zeppelin") // no vector: found by the lexical legs only
	for i := range 130 {
		e.write(fmt.Sprintf("fill:/f%03d.md", i), "unrelated words", angled(0.5+float64(i)/1000))
	}
	e.sync()
	q := []Query{{Text: "zeppelin", Vector: unit(0, 0)}}

	chunks := e.search(Request{Queries: q})
	if chunks.Mode != Hybrid {
		t.Fatalf("mode %v: %s", chunks.Mode, chunks.ModeReason)
	}
	if got := refs(chunks); len(got) < 3 || got[0] != "notes:/y.md" {
		t.Fatalf("chunk grouping = %v; the test needs y's chunk first", got)
	}
	r := e.search(Request{Queries: q, GroupBy: GroupItem})
	if got := refs(r); len(got) < 3 || got[0] != "notes:/x.md" || got[1] != "notes:/y.md" {
		t.Fatalf("item grouping = %v, want x (three legs through two chunks) before y (two legs)", got)
	}
	x := r.Results[0]
	legs := map[Leg]int{}
	for _, lr := range x.Ranks {
		legs[lr.Leg] = lr.Rank
	}
	if legs[LegBM25] != 2 || legs[LegSubstring] != 2 || legs[LegVector] != 1 {
		t.Errorf("x's item ranks = %+v, want bm25 2, substring 2, vector 1", x.Ranks)
	}
	// 1/(k+2) twice and 1/(k+1), over three legs' 1/(k+1).
	k := float64(DefaultRRFK)
	if want := (2/(k+2) + 1/(k+1)) / (3 / (k + 1)); math.Abs(x.Score-want) > 1e-12 {
		t.Errorf("x's score %v, want %v", x.Score, want)
	}
	if chunksOf(x) != 2 || x.ChunkID == x.More[0].ChunkID {
		t.Errorf("x shows %d chunks: %+v", chunksOf(x), x)
	}
}

func TestEngine_MinScoreDropsWeakResults(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/a.md", "heron", unit(0, 0))
	e.write("notes:/b.md", "heron heron wading", unit(0, 0.3))
	e.write("notes:/c.md", "a heron among many other birds of the marsh and the shore", unit(0, 0.6))
	e.write("notes:/d.md", "gulls", unit(4, 0))
	e.sync()
	q := []Query{{Text: "heron", Vector: unit(0, 0)}}
	for _, group := range []GroupBy{GroupChunk, GroupItem} {
		all := e.search(Request{Queries: q, GroupBy: group})
		if len(all.Results) != 4 {
			t.Fatalf("group %d: %v", group, refs(all))
		}
		for i := range all.Results {
			floor := all.Results[i].Score
			if i > 0 && floor == all.Results[i-1].Score {
				t.Fatalf("group %d: tied scores %v", group, all.Results)
			}
			got := e.search(Request{Queries: q, GroupBy: group, MinScore: floor})
			if want := refs(all)[:i+1]; !slices.Equal(refs(got), want) {
				t.Errorf("group %d, min score %v: %v, want %v", group, floor, refs(got), want)
			}
		}
		if top := all.Results[0].Score; top < 1 {
			if got := e.search(Request{Queries: q, GroupBy: group, MinScore: math.Nextafter(top, 2)}); len(got.Results) != 0 {
				t.Errorf("group %d, min score over the best: %v", group, refs(got))
			}
		}
	}
	for _, bad := range []float64{-0.1, 1.5, math.NaN(), math.Inf(1)} {
		_, err := e.eng.Search(context.Background(), Request{Queries: q, MinScore: bad})
		if !errors.Is(err, ErrMinScore) || !errors.Is(err, ErrInvalidQuery) {
			t.Errorf("min score %v: err = %v, want ErrMinScore", bad, err)
		}
	}
}

// TestEngine_GroupByItemTokenBudget: an item whose best chunk does not fit
// the budget is skipped, a further chunk that does not fit is left out, and
// later items are still tried.
func TestEngine_GroupByItemTokenBudget(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/1-long.md", "budget zebra "+strings.Repeat("and some filler words to make it longer ", 8))
	e.write("notes:/2-short.md", "budget budget note\n\nbudget again, in a second paragraph a little longer than the first")
	e.write("notes:/3-short.md", "budget tiny")
	e.sync()
	words := func(s string) int { return len(strings.Fields(s)) }
	req := Request{Mode: BM25, Queries: []Query{{Text: "budget zebra"}}, GroupBy: GroupItem, CountTokens: words}
	full := e.search(req)
	if got := refs(full); !slices.Equal(got, []string{"notes:/1-long.md", "notes:/2-short.md", "notes:/3-short.md"}) || len(full.Results[1].More) != 1 {
		t.Fatalf("unbudgeted = %v, %+v", got, full.Results)
	}
	req.TokenBudget = full.Results[1].Tokens + full.Results[2].Tokens
	r := e.search(req)
	if got := refs(r); !slices.Equal(got, []string{"notes:/2-short.md", "notes:/3-short.md"}) || len(r.Results[0].More) != 0 {
		t.Fatalf("budget %d: %v %+v, want the two short items, the second chunk of the first left out", req.TokenBudget, got, r.Results)
	}
	if r.TokensUsed != req.TokenBudget {
		t.Fatalf("tokens used %d, want %d", r.TokensUsed, req.TokenBudget)
	}
}

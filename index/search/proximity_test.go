package search

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/ctxd/ctxd/vfs"
)

func TestEngine_Closeness(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		query, text string
		want        float64
	}{
		{"heat transfer", "heat transfer in pipes", 1},
		{"heat transfer", "heat flows slowly before transfer", 1.0 / 16},
		{"heat transfer", "heat alone", 0},
		{"heat transfer", "transfer of heat", 1.0 / 4}, // either order
		// The query's own gap: "flow of air" written as in the query is a phrase.
		{"flow of air", "the flow of air over wings", 1},
		{"flow of air", "air flow", 1},
		{"flow of air", "flow of the air", 1.0 / 4},
		// Three terms, two pairs of neighbours: (boundary, layer) 1, (layer, separation) 1/4.
		{"boundary layer separation", "boundary layer and separation", (1 + 1.0/4) / 2},
		// Stemmed as BM25 stems: "running dogs" meets "dogs run".
		{"running dogs", "dogs run", 1},
		// The nearest pair counts, wherever it is.
		{"heat transfer", "heat, heat, and then at last, heat transfer", 1},
		{"heat", "anything at all", 1}, // one term: nothing to scatter
	}
	for _, tc := range tests {
		q, err := e.eng.proxQueryOf(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := e.eng.chunkPositions(tc.text, q.terms)
		if err != nil {
			t.Fatal(err)
		}
		got := closeness(ps, q)
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("closeness(%q, %q) = %v, want %v", tc.query, tc.text, got, tc.want)
		}
	}
	// A chunk is scanned once for every query of a batch: the positions of
	// another query's terms are skipped.
	q, err := e.eng.proxQueryOf("heat transfer")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := e.eng.chunkPositions("heat pipe transfer", map[string]bool{"heat": true, "transfer": true, "pipe": true})
	if err != nil {
		t.Fatal(err)
	}
	if got := closeness(ps, q); got != 1.0/4 {
		t.Errorf("with another query's term between: %v, want 1/4", got)
	}
}

// TestEngine_ProximityRanksTightMatchFirst: of two notes holding both
// query words, BM25 prefers the shorter, where they stand apart; the
// proximity rerank puts the one holding them as the query does first, by
// exactly the documented factor, in both groupings. The default follows
// DefaultProximity.
func TestEngine_ProximityRanksTightMatchFirst(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/scattered.md", "heat flows slowly outward before transfer")
	e.write("notes:/tight.md", "heat transfer matters in pipes, vessels, engines, boilers, radiators, condensers and turbines")
	e.write("notes:/half.md", "heat alone is here, in a note of middling length")
	e.sync()
	q := []Query{{Text: "heat transfer"}}
	factor := map[string]float64{
		"notes:/scattered.md": 1 - ProximityShare*(1-1.0/25),
		"notes:/tight.md":     1,
		"notes:/half.md":      1 - ProximityShare,
	}
	for _, group := range []GroupBy{GroupChunk, GroupItem} {
		off := e.search(Request{Queries: q, Mode: BM25, GroupBy: group, Proximity: ToggleOff})
		if want := []string{"notes:/scattered.md", "notes:/tight.md", "notes:/half.md"}; !slices.Equal(refs(off), want) {
			t.Fatalf("group %d, proximity off: %v, want %v", group, refs(off), want)
		}
		on := e.search(Request{Queries: q, Mode: BM25, GroupBy: group, Proximity: ToggleOn})
		if want := []string{"notes:/tight.md", "notes:/scattered.md", "notes:/half.md"}; !slices.Equal(refs(on), want) {
			t.Errorf("group %d, proximity on: %v, want %v", group, refs(on), want)
		}
		score := map[string]float64{}
		for _, r := range off.Results {
			score[r.Drive+":"+r.Path] = r.Score
		}
		for _, r := range on.Results {
			ref := r.Drive + ":" + r.Path
			if want := score[ref] * factor[ref]; math.Abs(r.Score-want) > 1e-12 {
				t.Errorf("group %d: %s scores %v, want %v", group, ref, r.Score, want)
			}
		}
		def := e.search(Request{Queries: q, Mode: BM25, GroupBy: group})
		want := off
		if DefaultProximity(BM25, group) {
			want = on
		}
		if !slices.Equal(scores(def), scores(want)) {
			t.Errorf("group %d, default: %v, want %v", group, scores(def), scores(want))
		}
	}
}

func scores(resp Response) []float64 {
	var out []float64
	for _, r := range resp.Results {
		out = append(out, r.Score)
	}
	return out
}

// TestEngine_ProximityLeavesOneTermAndVectorQueriesAlone: a query of one
// term and a query in Vector mode score the same with the rerank on as off.
func TestEngine_ProximityLeavesOneTermAndVectorQueriesAlone(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/a.md", "heat flows slowly outward before transfer", unit(0, 0.1))
	e.write("notes:/b.md", "heat transfer in pipes and many other vessels", unit(1, 0.1))
	e.sync()
	for name, req := range map[string]Request{
		"one term": {Queries: []Query{{Text: "heat"}}, Mode: BM25},
		"vector":   {Queries: []Query{{Text: "heat transfer", Vector: unit(0, 0.1)}}, Mode: Vector},
	} {
		req.Proximity = ToggleOff
		off := e.search(req)
		req.Proximity = ToggleOn
		on := e.search(req)
		if len(off.Results) != 2 || !slices.Equal(refs(on), refs(off)) || !slices.Equal(scores(on), scores(off)) {
			t.Errorf("%s: on %v %v, off %v %v", name, refs(on), scores(on), refs(off), scores(off))
		}
	}
}

// TestEngine_RerankReadsEachChunkOnce: the presentation of a reranked
// window reads nothing from the store again (its context is cancelled, so
// any read would fail), and the rerank reads at most maxRerankChunks chunks
// however large the limit.
func TestEngine_RerankReadsEachChunkOnce(t *testing.T) {
	e := newEnv(t)
	var cands []*candidate
	for i := range 3 * maxRerankChunks / 2 {
		it := e.write("notes:/n"+string(rune('a'+i%26))+string(rune('a'+i/26))+".md", "heat flows before transfer")
		cands = append(cands, &candidate{id: ChunkID(it.ID, 0), fused: 1 - float64(i)/1000, queries: []int{0}})
	}
	e.sync()
	q, err := e.eng.proxQueryOf("heat transfer")
	if err != nil {
		t.Fatal(err)
	}
	rr := reranker{e: e.eng, qs: []proxQuery{q}, terms: q.terms}

	tc := textCache{}
	if err := e.eng.rerank(context.Background(), rr, cands[:10], 5, chunkRef, tc); err != nil {
		t.Fatal(err)
	}
	if len(tc) != 10 {
		t.Fatalf("the window of limit 5 read %d chunks, want 10", len(tc))
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	hl := highlight{terms: map[string]bool{}, words: map[string]bool{}}
	res, _, err := e.eng.present(cancelled, Request{}, cands[:10], hl, 5, 1, tc, nil)
	if err != nil || len(res) != 5 {
		t.Fatalf("present after the rerank: %d results, %v", len(res), err)
	}

	tc = textCache{}
	if err := e.eng.rerank(context.Background(), rr, cands, len(cands), chunkRef, tc); err != nil {
		t.Fatal(err)
	}
	if len(tc) != maxRerankChunks {
		t.Errorf("a limit of %d read %d chunks, want the bound %d", len(cands), len(tc), maxRerankChunks)
	}
	if _, err := tc.read(cancelled, e.store, []vfs.ChunkRef{chunkRef(cands[0])[0]}); err != nil {
		t.Errorf("a read chunk read again: %v", err)
	}
}

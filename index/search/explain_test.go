package search

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// embedFixed embeds every query text as v: enough for the vector leg to
// rank the chunks by their own vectors.
func embedFixed(v []float32) func(context.Context, string) ([]float32, error) {
	return func(context.Context, string) ([]float32, error) { return v, nil }
}

// checkExplained asserts what must hold of every explained result: its
// score is Fused / FusedMax × the product of its factors, its legs are
// those of mode with a weight above 0 in leg order and agree with its
// ranks, each contribution is weight/(k + rank), and its query found it.
func checkExplained(t *testing.T, what string, mode Mode, r Result) {
	t.Helper()
	x := r.Explanation
	if x == nil {
		t.Fatalf("%s: %s:%s has no explanation", what, r.Drive, r.Path)
	}
	score := x.Fused / x.FusedMax
	for _, f := range x.Factors {
		score *= f.Value
	}
	if math.Abs(score-r.Score) > 1e-12 {
		t.Errorf("%s: %s:%s scores %v, its explanation %v (%+v)", what, r.Drive, r.Path, r.Score, score, *x)
	}
	var legs []Leg
	var fused float64
	for _, l := range x.Legs {
		legs = append(legs, l.Leg)
		want := 0.0
		if l.Rank > 0 {
			want = l.Weight / (x.RRFK + float64(l.Rank))
			i := slices.IndexFunc(r.Ranks, func(lr LegRank) bool { return lr.Leg == l.Leg })
			if i < 0 || r.Ranks[i].Rank != l.Rank || r.Ranks[i].Score != l.Score {
				t.Errorf("%s: %s:%s leg %d rank %d score %v, ranks say %+v", what, r.Drive, r.Path, l.Leg, l.Rank, l.Score, r.Ranks)
			}
		}
		if l.Contribution != want {
			t.Errorf("%s: leg %d contributes %v, want %v", what, l.Leg, l.Contribution, want)
		}
		fused += l.Contribution
	}
	if math.Abs(fused-x.Fused) > 1e-15 {
		t.Errorf("%s: fused %v, the legs sum to %v", what, x.Fused, fused)
	}
	for _, lr := range r.Ranks {
		if !slices.Contains(legs, lr.Leg) {
			t.Errorf("%s: leg %d ranked %s:%s but the explanation lacks it", what, lr.Leg, r.Drive, r.Path)
		}
	}
	if want := modeLegs(mode); !slices.Equal(legs, want) {
		t.Errorf("%s: legs %v, want %v", what, legs, want)
	}
	if !slices.Contains(r.QueryIndexes, x.Query) {
		t.Errorf("%s: explains query %d, not one of %v", what, x.Query, r.QueryIndexes)
	}
}

// TestEngine_ExplainIsTheScore: in every mode, both groupings, with priors,
// proximity and recency each on and off, for one query and a batch, every
// result's explanation multiplies out to its score, lists the factors that
// were on in their order, and agrees with its leg ranks; without Explain no
// result carries one.
func TestEngine_ExplainIsTheScore(t *testing.T) {
	e := newEnv(t)
	stale := e.write("session:/proj/s1/events/e1", "deploy failed because the disk was full", angled(0.3))
	e.writeImportant("notes:/deploy.md", "how to deploy: check the disk first, then deploy", 0.9)
	e.write("notes:/disk.md", "the disk filled up with logs during the deploy", angled(0.2))
	e.write("notes:/full.md", "full disk alerts\n\ndeploy notes and a disk that is never full", angled(0.1), angled(1))
	e.write("notes:/other.md", "gulls and herons by the sea", angled(1.4))
	fresh := e.write("session:/proj/s2/events/e2", "the deploy is full of surprises", angled(0.5))
	e.sync()
	if err := e.store.RecordRetrievals(context.Background(), []string{stale.ID, stale.ID}, time.Now()); err != nil {
		t.Fatal(err)
	}
	rec := Recency{HalfLife: time.Hour, Floor: 0.5, Applies: isEvent, Now: fresh.CreatedAt.Add(2 * time.Hour)}
	batches := map[string][]Query{
		"one":   {{Text: "disk full deploy"}},
		"batch": {{Text: "deploy disk"}, {Text: "full"}, {Text: "herons gulls"}},
	}
	for _, mode := range []Mode{Hybrid, BM25, Vector} {
		for _, group := range []GroupBy{GroupChunk, GroupItem} {
			for _, priors := range []Priors{{}, {Importance: 0.7, Usage: 0.4}} {
				for _, prox := range []Toggle{ToggleOn, ToggleOff} {
					for _, recency := range []Recency{{}, rec} {
						for name, qs := range batches {
							what := fmt.Sprintf("%v/group %d/priors %v/proximity %d/recency %v/%s", mode, group, priors, prox, recency.on(), name)
							req := Request{Queries: qs, Mode: mode, GroupBy: group, Priors: priors, Proximity: prox,
								Recency: recency, EmbedQuery: embedFixed(angled(0)), Limit: 4}
							plain := e.search(req)
							req.Explain = true
							resp := e.search(req)
							if len(resp.Results) == 0 || resp.Mode != mode {
								t.Fatalf("%s: %d results in mode %v", what, len(resp.Results), resp.Mode)
							}
							if !slices.Equal(refs(resp), refs(plain)) {
								t.Errorf("%s: explaining changed the results: %v, not %v", what, refs(resp), refs(plain))
							}
							var want []string
							if !priors.off() {
								want = append(want, FactorPriors)
							}
							if prox == ToggleOn && mode != Vector {
								want = append(want, FactorProximity)
							}
							if recency.on() {
								want = append(want, FactorRecency)
							}
							for i, r := range resp.Results {
								if plain.Results[i].Explanation != nil {
									t.Fatalf("%s: an explanation without Explain", what)
								}
								if r.Score != plain.Results[i].Score {
									t.Errorf("%s: explaining changed a score: %v, not %v", what, r.Score, plain.Results[i].Score)
								}
								checkExplained(t, what, mode, r)
								var names []string
								for _, f := range r.Explanation.Factors {
									names = append(names, f.Name)
								}
								if !slices.Equal(names, want) {
									t.Errorf("%s: factors %v, want %v", what, names, want)
								}
								for _, m := range r.More {
									if m.Explanation != nil {
										t.Errorf("%s: a further chunk carries an explanation", what)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestEngine_ExplainFactorsAndNorm: the factors carry the values their
// signals define and FusedMax counts only the legs that found anything: a
// query with a vector and no text in Hybrid mode runs the vector leg alone,
// so its best result, first there, scores 1.
func TestEngine_ExplainFactorsAndNorm(t *testing.T) {
	e := newEnv(t)
	ev := e.write("session:/proj/s1/events/e1", "deploy failed: the disk was full", angled(0))
	e.writeImportant("notes:/deploy.md", "a deploy failed: the disk was full", 1) // another text: vectors go by text
	e.sync()
	k := float64(DefaultRRFK)
	resp := e.search(Request{Queries: []Query{{Vector: angled(0)}}, Mode: Hybrid, Explain: true})
	if len(resp.Results) != 1 {
		t.Fatalf("vector query: %v, want the event alone (the only vector)", refs(resp))
	}
	x := resp.Results[0].Explanation
	if want := 1 / (k + 1); math.Abs(x.FusedMax-want) > 1e-15 || math.Abs(x.Fused-want) > 1e-15 {
		t.Errorf("vector leg alone: fused %v of %v, want %v of %v", x.Fused, x.FusedMax, want, want)
	}
	if len(x.Legs) != 3 || x.Legs[0].Rank != 0 || x.Legs[1].Rank != 0 || x.Legs[2].Rank != 1 {
		t.Errorf("legs %+v, want BM25 and substring missing, vector first", x.Legs)
	}
	if x.Matched != nil || x.Missing != nil {
		t.Errorf("a query without text matched terms %v, missed %v", x.Matched, x.Missing)
	}

	age := 3 * time.Hour
	rec := Recency{HalfLife: time.Hour, Floor: 0.5, Applies: isEvent, Now: ev.CreatedAt.Add(age)}
	resp = e.search(Request{Queries: []Query{{Text: "disk full"}}, Mode: BM25, Explain: true,
		Priors: Priors{Importance: 1}, Proximity: ToggleOn, Recency: rec})
	got := map[string][]Factor{}
	for _, r := range resp.Results {
		checkExplained(t, "factors", BM25, r)
		got[r.Path] = r.Explanation.Factors
		if want := []string{"disk", "full"}; !slices.Equal(r.Explanation.Matched, want) || r.Explanation.Missing != nil {
			t.Errorf("%s matched %v, missed %v, want %v", r.Path, r.Explanation.Matched, r.Explanation.Missing, want)
		}
	}
	want := map[string][]float64{ // priors, proximity ("disk was full": 1/(1+2-1)²), recency
		"/proj/s1/events/e1": {0.5, 0.85 + 0.15*0.25, 0.5 + 0.5*math.Exp2(-3)},
		"/deploy.md":         {1, 0.85 + 0.15*0.25, 1},
	}
	for path, w := range want {
		f := got[path]
		if len(f) != 3 {
			t.Fatalf("%s: factors %+v, want 3", path, f)
		}
		for i := range w {
			if math.Abs(f[i].Value-w[i]) > 1e-12 {
				t.Errorf("%s: factor %s is %v, want %v (%s)", path, f[i].Name, f[i].Value, w[i], f[i].Detail)
			}
		}
	}
	if d := got["/proj/s1/events/e1"][2].Detail; d != "age 3 h (half-life 1 h, floor 0.5)" {
		t.Errorf("recency detail %q", d)
	}
	if d := got["/deploy.md"][0].Detail; d != "importance 1 (weight 1), 0 retrievals (weight 0)" {
		t.Errorf("priors detail %q", d)
	}
}

// TestEngine_ExplainTermsOfTheShownChunk: matched and missing terms are the
// query's analysed terms (stemmed, stop words left out), found in the chunk
// a result shows: with ITEM grouping, the item's best chunk, not the item.
func TestEngine_ExplainTermsOfTheShownChunk(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/two.md", "herons wading herons\n\nthe marsh")
	e.sync()
	for _, group := range []GroupBy{GroupChunk, GroupItem} {
		resp := e.search(Request{Queries: []Query{{Text: "the heron is wading in a marsh"}}, Mode: BM25, GroupBy: group, Explain: true, Limit: 1})
		if len(resp.Results) != 1 {
			t.Fatalf("group %d: %v", group, refs(resp))
		}
		x := resp.Results[0].Explanation
		if !slices.Equal(x.Matched, []string{"heron", "wade"}) || !slices.Equal(x.Missing, []string{"marsh"}) {
			t.Errorf("group %d: matched %v, missing %v; want [heron wade], [marsh]", group, x.Matched, x.Missing)
		}
	}
}

// TestEngine_ExplainMatchedQuestion: a chunk the vector leg scored by one
// of its question vectors names that question, in both groupings; one
// scored by its text names none.
func TestEngine_ExplainMatchedQuestion(t *testing.T) {
	e := newEnv(t)
	e.writeQ("notes:/a.md", "lunch and learn talks", angled(0.5))
	e.writeQ("other:/b.md", "the kitchen opens at noon", angled(1.2), "When is lunch served?", "Where is the kitchen?")
	e.embedQuestions(map[string][]float32{"When is lunch served?": angled(0.1), "Where is the kitchen?": angled(0.2)})
	e.sync()
	for _, group := range []GroupBy{GroupChunk, GroupItem} {
		resp := e.search(Request{Mode: Vector, Queries: []Query{{Vector: angled(0)}}, GroupBy: group, Explain: true})
		if got := refs(resp); len(got) != 2 || got[0] != "other:/b.md" {
			t.Fatalf("group %d: %v, want /b.md first", group, got)
		}
		if q := resp.Results[0].Explanation.Question; q != "When is lunch served?" {
			t.Errorf("group %d: /b.md matched question %q", group, q)
		}
		if q := resp.Results[1].Explanation.Question; q != "" {
			t.Errorf("group %d: /a.md, scored by its text, matched question %q", group, q)
		}
		for _, r := range resp.Results {
			checkExplained(t, "questions", Vector, r)
		}
	}
}

package daemon

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// TestSearch_Explain runs SearchRequest.explain through the real daemon
// with the real model, over gRPC and JSON/HTTP: in every mode and both
// groupings each result's explanation multiplies out to its score, lists
// the mode's legs in order in agreement with leg_ranks, and names the
// matched terms; without explain no result carries one.
func TestSearch_Explain(t *testing.T) {
	cfg := withModel(t, testConfig(t))
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	vc := ctxdv1.NewVfsServiceClient(conn)
	writeText(t, vc, "notes:/heat.md", "heat transfer in boilers and radiators\n")
	writeText(t, vc, "notes:/pipes.md", "pipes carry heat; the transfer is slow\n")
	writeText(t, vc, "session:/proj/s1/events/e1", "the boiler lost heat overnight\n")
	waitEmbedded(t, conn, 60*time.Second)

	modeLegs := map[ctxdv1.SearchMode][]ctxdv1.SearchLeg{
		ctxdv1.SearchMode_SEARCH_MODE_HYBRID: {ctxdv1.SearchLeg_SEARCH_LEG_BM25, ctxdv1.SearchLeg_SEARCH_LEG_SUBSTRING, ctxdv1.SearchLeg_SEARCH_LEG_VECTOR},
		ctxdv1.SearchMode_SEARCH_MODE_BM25:   {ctxdv1.SearchLeg_SEARCH_LEG_BM25, ctxdv1.SearchLeg_SEARCH_LEG_SUBSTRING},
		ctxdv1.SearchMode_SEARCH_MODE_VECTOR: {ctxdv1.SearchLeg_SEARCH_LEG_VECTOR},
	}
	for mode, legs := range modeLegs {
		for _, group := range []ctxdv1.SearchGroupBy{ctxdv1.SearchGroupBy_SEARCH_GROUP_BY_CHUNK, ctxdv1.SearchGroupBy_SEARCH_GROUP_BY_ITEM} {
			req := &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: "heat transfer"}, {Text: "boiler"}},
				Mode: mode, GroupBy: group, ImportanceWeight: 0.5}
			plain := doSearch(t, conn, req)
			req.Explain = true
			r := doSearch(t, conn, req)
			if r.ModeUsed != mode || len(r.Results) != 3 || !slices.Equal(resultRefs(r), resultRefs(plain)) {
				t.Fatalf("%v/%v: %v in %v, without explain %v", mode, group, resultRefs(r), r.ModeUsed, resultRefs(plain))
			}
			for i, res := range r.Results {
				if plain.Results[i].Explanation != nil {
					t.Fatalf("%v/%v: an explanation without explain", mode, group)
				}
				x := res.Explanation
				if x == nil {
					t.Fatalf("%v/%v: %s has no explanation", mode, group, res.Ref)
				}
				score := x.Fused / x.FusedMax
				var names []string
				for _, f := range x.Factors {
					score *= f.Factor
					names = append(names, f.Name)
				}
				if math.Abs(score-res.Score) > 1e-12 {
					t.Errorf("%v/%v: %s scores %v, its explanation %v", mode, group, res.Ref, res.Score, score)
				}
				want := []string{"priors", "proximity", "recency"}
				if mode != ctxdv1.SearchMode_SEARCH_MODE_HYBRID {
					want = []string{"priors", "recency"} // proximity is on by default in hybrid mode only
				}
				if !slices.Equal(names, want) {
					t.Errorf("%v/%v: factors %v, want %v", mode, group, names, want)
				}
				var got []ctxdv1.SearchLeg
				for _, l := range x.Legs {
					got = append(got, l.Leg)
					if l.Rank == 0 {
						continue
					}
					i := slices.IndexFunc(res.LegRanks, func(lr *ctxdv1.LegRank) bool { return lr.Leg == l.Leg })
					if i < 0 || res.LegRanks[i].Rank != l.Rank || l.Contribution != l.Weight/(x.RrfK+float64(l.Rank)) {
						t.Errorf("%v/%v: %s leg %+v, leg_ranks %v", mode, group, res.Ref, l, res.LegRanks)
					}
				}
				if !slices.Equal(got, legs) {
					t.Errorf("%v/%v: legs %v, want %v", mode, group, got, legs)
				}
				if !slices.Contains(res.QueryIndexes, x.QueryIndex) {
					t.Errorf("%v/%v: explains query %d, not one of %v", mode, group, x.QueryIndex, res.QueryIndexes)
				}
				if res.Ref == "notes:/heat.md" && x.QueryIndex == 0 && !slices.Equal(x.MatchedTerms, []string{"heat", "transfer"}) {
					t.Errorf("%v/%v: heat.md matched %v missed %v", mode, group, x.MatchedTerms, x.MissingTerms)
				}
			}
		}
	}

	status, body := httpCall(t, "POST", "http://"+d.HTTPAddr().String()+"/v1/search",
		`{"queries":[{"text":"heat transfer"}],"mode":"SEARCH_MODE_BM25","explain":true,"limit":1}`, d.token)
	var resp struct {
		Results []struct {
			Explanation struct {
				Legs []struct {
					Leg          string
					Rank         int
					Contribution float64
				}
				RrfK         float64  `json:"rrf_k"`
				FusedMax     float64  `json:"fused_max"`
				MatchedTerms []string `json:"matched_terms"`
			}
		}
	}
	if err := json.Unmarshal(body, &resp); status != 200 || err != nil || len(resp.Results) != 1 {
		t.Fatalf("HTTP explain: %d %s", status, body)
	}
	x := resp.Results[0].Explanation
	if len(x.Legs) != 2 || x.Legs[0].Leg != "SEARCH_LEG_BM25" || x.Legs[0].Rank != 1 || x.RrfK != 60 ||
		x.FusedMax != 2.0/61 || !slices.Equal(x.MatchedTerms, []string{"heat", "transfer"}) {
		t.Errorf("HTTP explanation %+v (%s)", x, body)
	}
}

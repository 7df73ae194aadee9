package daemon

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// TestSearch_GroupByItemAndMinScore runs item grouping and min_score
// through the real daemon, over gRPC and JSON/HTTP.
func TestSearch_GroupByItemAndMinScore(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	vc := ctxdv1.NewVfsServiceClient(conn)
	// Sections long enough that the chunker keeps each a chunk of its own.
	filler := strings.Repeat("Some words of plain description follow here. ", 25)
	writeText(t, vc, "notes:/many.md", "# Narwhals\n\n## Tusks\n\nNarwhal tusks are teeth. "+filler+"\n\n## Diet\n\nNarwhal diet is fish. "+filler+
		"\n\n## Range\n\nNarwhal range is the Arctic. "+filler+"\n")
	writeText(t, vc, "notes:/one.md", "A narwhal was seen. "+filler+"\n")
	writeText(t, vc, "notes:/none.md", "Nothing about that whale.\n")
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), 30*time.Second)

	bm25 := ctxdv1.SearchMode_SEARCH_MODE_BM25
	q := []*ctxdv1.SearchQuery{{Text: "narwhal"}}
	chunks := doSearch(t, conn, &ctxdv1.SearchRequest{Queries: q, Mode: bm25, Limit: 2})
	if got := resultRefs(chunks); len(got) != 2 || got[0] != got[1] {
		t.Fatalf("chunk grouping, limit 2 = %v; the test needs two chunks of one item: %v", got, chunks.Results)
	}
	r := doSearch(t, conn, &ctxdv1.SearchRequest{Queries: q, Mode: bm25, Limit: 2, MaxChunksPerItem: 2, GroupBy: ctxdv1.SearchGroupBy_SEARCH_GROUP_BY_ITEM})
	if got := resultRefs(r); len(got) != 2 || got[0] != "notes:/many.md" || got[1] != "notes:/one.md" {
		t.Fatalf("item grouping = %v", got)
	}
	many := r.Results[0]
	if len(many.MoreChunks) != 1 || many.MoreChunks[0].ChunkId == many.ChunkId || many.MoreChunks[0].Heading == "" ||
		!strings.Contains(many.MoreChunks[0].Snippet, "Narwhal") || len(r.Results[1].MoreChunks) != 0 {
		t.Fatalf("item results: %v", r.Results)
	}
	if want := many.TokenCount + many.MoreChunks[0].TokenCount + r.Results[1].TokenCount; r.TokensUsed != want {
		t.Errorf("tokens used %d, the snippets hold %d", r.TokensUsed, want)
	}

	// min_score between the two items' scores keeps the first.
	floor := (r.Results[0].Score + r.Results[1].Score) / 2
	status, body := httpCall(t, "POST", "http://"+d.HTTPAddr().String()+"/v1/search",
		`{"queries":[{"text":"narwhal"}],"mode":"SEARCH_MODE_BM25","group_by":"SEARCH_GROUP_BY_ITEM","min_score":`+jsonNumber(floor)+`}`, d.token)
	if status != 200 {
		t.Fatalf("HTTP %d: %s", status, body)
	}
	var resp struct {
		Results []struct {
			Ref        string
			MoreChunks []struct{ Snippet string } `json:"more_chunks"`
		}
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 1 || resp.Results[0].Ref != "notes:/many.md" || len(resp.Results[0].MoreChunks) != 2 {
		t.Fatalf("HTTP min_score %v: %s", floor, body)
	}

	for _, bad := range []float64{-1, 1.5, math.NaN()} {
		_, err := ctxdv1.NewSearchServiceClient(conn).Search(t.Context(), &ctxdv1.SearchRequest{Queries: q, MinScore: bad})
		if code, det := errorDetail(t, err); code != codes.InvalidArgument || !strings.Contains(det.NextActionHint, "--min-score") {
			t.Errorf("min_score %v: %v %v", bad, code, det)
		}
	}
	_, err := ctxdv1.NewSearchServiceClient(conn).Search(t.Context(), &ctxdv1.SearchRequest{Queries: q, GroupBy: 7})
	if code, det := errorDetail(t, err); code != codes.InvalidArgument || !strings.Contains(det.NextActionHint, "ITEM") {
		t.Errorf("unknown group_by: %v %v", code, det)
	}
}

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// TestSearch_Priors weighs importance (set in the frontmatter) through the
// JSON/HTTP API, and refuses weights outside [0, 1] with a hint.
func TestSearch_Priors(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	vc := ctxdv1.NewVfsServiceClient(conn)
	writeText(t, vc, "notes:/plain.md", "Narwhal.\n")
	writeText(t, vc, "notes:/kept.md", "---\nimportance: 1\n---\nA narwhal, seen from the boat at dawn.\n")
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), 30*time.Second)

	search := func(weight string) []string {
		t.Helper()
		status, body := httpCall(t, "POST", "http://"+d.HTTPAddr().String()+"/v1/search",
			`{"queries":[{"text":"narwhal"}],"mode":"SEARCH_MODE_BM25","importance_weight":`+weight+`}`, d.token)
		if status != 200 {
			t.Fatalf("HTTP %d: %s", status, body)
		}
		var resp struct{ Results []struct{ Ref string } }
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, r := range resp.Results {
			refs = append(refs, r.Ref)
		}
		return refs
	}
	if got := search("0"); len(got) != 2 || got[0] != "notes:/plain.md" {
		t.Fatalf("no prior: %v; the test needs the plain note first", got)
	}
	if got := search("1"); len(got) != 2 || got[0] != "notes:/kept.md" {
		t.Errorf("importance weight 1: %v, want the important note first", got)
	}

	q := []*ctxdv1.SearchQuery{{Text: "narwhal"}}
	for _, bad := range []*ctxdv1.SearchRequest{{Queries: q, ImportanceWeight: 2}, {Queries: q, UsageWeight: -0.5}, {Queries: q, UsageWeight: math.NaN()}} {
		_, err := ctxdv1.NewSearchServiceClient(conn).Search(t.Context(), bad)
		if code, det := errorDetail(t, err); code != codes.InvalidArgument || !strings.Contains(det.NextActionHint, "--importance-weight") {
			t.Errorf("weights %v/%v: %v %v", bad.ImportanceWeight, bad.UsageWeight, code, det)
		}
	}
}

package daemon

import (
	"context"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// TestSearch_FrontmatterTitleAndDescription checks, with the real model,
// that an item's frontmatter title and description are searched with every
// chunk, by BM25 and by meaning, while the frontmatter block itself is not
// chunk text: two items share a body, and only one describes it.
func TestSearch_FrontmatterTitleAndDescription(t *testing.T) {
	d := mustStart(t, withModel(t, testConfig(t)))
	conn := dial(t, "unix://"+d.cfg.Socket)
	vfsc := ctxdv1.NewVfsServiceClient(conn)
	const body = "Every document carries a reference number and a date.\n"
	for ref, content := range map[string]string{
		"notes:/billing.md": "---\ntitle: Invoicing rules\ndescription: How overdue customers are charged late payment fees\nloading: contextual\n---\n" + body,
		"notes:/plain.md":   body,
	} {
		if _, err := vfsc.Write(context.Background(), &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: content}}); err != nil {
			t.Fatal(err)
		}
	}
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), time.Minute)

	bm25 := func(q string) []string {
		return resultRefs(doSearch(t, conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Queries: []*ctxdv1.SearchQuery{{Text: q}}}))
	}
	if got := bm25("overdue fees"); len(got) != 1 || got[0] != "notes:/billing.md" {
		t.Errorf("BM25 for description words = %v, want [notes:/billing.md]", got)
	}
	if got := bm25("contextual"); len(got) != 0 {
		t.Errorf("BM25 for a frontmatter value = %v, want nothing: the block is not chunk text", got)
	}

	r := doSearch(t, conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_VECTOR, Queries: []*ctxdv1.SearchQuery{{Text: "charging late customers a penalty"}}})
	if r.ModeUsed != ctxdv1.SearchMode_SEARCH_MODE_VECTOR || len(r.Results) != 2 {
		t.Fatalf("vector search: mode %v (%s), results %v", r.ModeUsed, r.ModeReason, resultRefs(r))
	}
	if r.Results[0].Ref != "notes:/billing.md" || r.Results[0].Score <= r.Results[1].Score {
		t.Errorf("vector ranking %v (scores %v, %v): the described item must rank first, above the same body without its description",
			resultRefs(r), r.Results[0].Score, r.Results[1].Score)
	}
}

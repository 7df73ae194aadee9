package daemon

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// TestVfsService_WriteBatch writes items with and without precomputed
// vectors in one batch through the real daemon and model, then searches
// them; a batch with one bad item writes nothing and names the item.
func TestVfsService_WriteBatch(t *testing.T) {
	d := mustStart(t, withModel(t, testConfig(t)))
	conn := dial(t, "unix://"+d.cfg.Socket)
	c := ctxdv1.NewVfsServiceClient(conn)
	st := waitEmbedded(t, conn, time.Minute)
	model, dims := st.Embedding.ModelId, int(st.Embedding.Dimensions)
	vec := randomVector(rand.New(rand.NewPCG(3, 4)), dims)
	text := func(ref, content string) *ctxdv1.WriteRequest {
		return &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: content}}
	}
	withVector := text("batch:/pre.md", "a passage whose vector the caller computed")
	withVector.EmbeddingModel, withVector.ChunkEmbeddings = model, []*ctxdv1.Embedding{{Values: vec}}

	res, err := c.WriteBatch(context.Background(), &ctxdv1.WriteBatchRequest{Items: []*ctxdv1.WriteRequest{
		text("batch:/walrus.md", "Walruses haul out on the ice floes."),
		withVector,
		{Ref: "batch:/img.png", Body: &ctxdv1.WriteRequest_Data{Data: []byte("\x89PNG\r\n\x1a\n\x00")}},
	}})
	if err != nil {
		t.Fatalf("WriteBatch: %v", err)
	}
	var refs []string
	for _, r := range res.Results {
		if !r.Created || r.Tree != nil {
			t.Errorf("result %v: want created and no tree", r)
		}
		refs = append(refs, r.Item.GetRef())
	}
	if want := []string{"batch:/walrus.md", "batch:/pre.md", "batch:/img.png"}; !slices.Equal(refs, want) {
		t.Fatalf("results for %v, want %v in request order", refs, want)
	}
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), time.Minute)
	if r := doSearch(t, conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Queries: []*ctxdv1.SearchQuery{{Text: "walrus ice"}}}); len(r.Results) == 0 || r.Results[0].Ref != "batch:/walrus.md" {
		t.Errorf("bm25 search for the batch's text: %v", resultRefs(r))
	}
	r := doSearch(t, conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_VECTOR, Queries: []*ctxdv1.SearchQuery{{Vector: vec}}})
	if len(r.Results) == 0 || r.Results[0].Ref != "batch:/pre.md" || r.Results[0].LegRanks[0].Score < 0.999 {
		t.Errorf("vector search with the vector written in the batch: %v", resultRefs(r))
	}

	for _, tt := range []struct {
		name    string
		bad     *ctxdv1.WriteRequest
		code    codes.Code
		message string
	}{
		{"wrong dimensions", &ctxdv1.WriteRequest{Ref: "batch:/dims.md", Body: &ctxdv1.WriteRequest_Content{Content: "x"},
			EmbeddingModel: model, ChunkEmbeddings: []*ctxdv1.Embedding{{Values: vec[:8]}}}, codes.InvalidArgument, "items[1] (batch:/dims.md): Chunk embedding 0 has 8 dimensions"},
		{"malformed ref", text("batch:rel", "x"), codes.InvalidArgument, "items[1] (batch:rel): "},
		{"existing ref", text("batch:/walrus.md", "again"), codes.AlreadyExists, "items[1] (batch:/walrus.md): An item already exists at batch:/walrus.md."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.WriteBatch(context.Background(), &ctxdv1.WriteBatchRequest{Items: []*ctxdv1.WriteRequest{text("batch:/new.md", "new"), tt.bad}})
			code, det := errorDetail(t, err)
			if msg := status.Convert(err).Message(); code != tt.code || !strings.HasPrefix(msg, tt.message) || det.NextActionHint == "" {
				t.Fatalf("WriteBatch = %v %q (%v); want %v starting %q with a hint", code, msg, det, tt.code, tt.message)
			}
			if e, err := c.Exists(context.Background(), &ctxdv1.ExistsRequest{Ref: "batch:/new.md"}); err != nil || e.Exists {
				t.Errorf("the failed batch's first item exists=%v (%v)", e.GetExists(), err)
			}
		})
	}
}

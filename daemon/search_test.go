package daemon

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/beir"
)

var update = flag.Bool("update", false, "rewrite golden files from the current results")

func doSearch(t testing.TB, conn *grpc.ClientConn, req *ctxdv1.SearchRequest) *ctxdv1.SearchResponse {
	t.Helper()
	resp, err := ctxdv1.NewSearchServiceClient(conn).Search(context.Background(), req)
	if err != nil {
		t.Fatalf("Search %v: %v", req.Queries, err)
	}
	return resp
}

func resultRefs(r *ctxdv1.SearchResponse) []string {
	var out []string
	for _, res := range r.Results {
		out = append(out, res.Ref)
	}
	return out
}

// TestSearch_GoldenRankings pins the top 5 of every mode for 40 tldr
// known-item queries over 200 tldr pages, with the real model. A ranking
// change shows up as a diff of testdata/golden/search-tldr.json to review;
// regenerate it with `go test ./daemon -run GoldenRankings -update`.
func TestSearch_GoldenRankings(t *testing.T) {
	const corpus = "../../shared/data/docs-corpus/"
	docs, err := beir.LoadCorpus(corpus+"corpus.jsonl.gz", 0)
	if err != nil {
		t.Fatal(err)
	}
	queries, err := beir.LoadQueries(corpus + "tldr-knownitem-queries.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	qrels, err := beir.LoadQrels(corpus + "tldr-knownitem-qrels.tsv")
	if err != nil {
		t.Fatal(err)
	}
	queries = queries[:40]
	keep := map[string]bool{}
	for _, q := range queries {
		for id := range qrels[q.ID] {
			keep[id] = true
		}
	}
	for _, d := range docs {
		if len(keep) >= 200 {
			break
		}
		if strings.HasPrefix(d.ID, "tldr:pages/common/") {
			keep[d.ID] = true
		}
	}
	ref := func(id string) string { return "docs:/" + strings.ReplaceAll(id, ":", "/") }

	d := mustStart(t, withModel(t, testConfig(t)))
	conn := dial(t, "unix://"+d.cfg.Socket)
	c := ctxdv1.NewVfsServiceClient(conn)
	for _, doc := range docs {
		if keep[doc.ID] {
			writeText(t, c, ref(doc.ID), doc.Text)
		}
	}
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), 3*time.Minute)

	modes := map[string]ctxdv1.SearchMode{"bm25": ctxdv1.SearchMode_SEARCH_MODE_BM25, "vector": ctxdv1.SearchMode_SEARCH_MODE_VECTOR, "hybrid": ctxdv1.SearchMode_SEARCH_MODE_HYBRID}
	got := map[string]map[string][]string{}
	found := map[string]int{}
	for _, q := range queries {
		got[q.Text] = map[string][]string{}
		for name, mode := range modes {
			r := doSearch(t, conn, &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: q.Text}}, Mode: mode, Limit: 5, MaxChunksPerItem: 1})
			if r.ModeUsed != mode {
				t.Fatalf("%s ran as %v: %s", name, r.ModeUsed, r.ModeReason)
			}
			refs := resultRefs(r)
			got[q.Text][name] = refs
			for id := range qrels[q.ID] {
				if slices.Contains(refs, ref(id)) {
					found[name]++
				}
			}
		}
	}
	t.Logf("known item in the top 5 of %d queries: %v", len(queries), found)
	// Not a tuning target, a floor: hybrid must find most known items.
	if found["hybrid"] < len(queries)*3/4 {
		t.Errorf("hybrid found %d of %d known items in its top 5", found["hybrid"], len(queries))
	}

	golden := filepath.Join("..", "testdata", "golden", "search-tldr.json")
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (generate it with -update)", err)
	}
	var wantMap map[string]map[string][]string
	if err := json.Unmarshal(want, &wantMap); err != nil {
		t.Fatal(err)
	}
	for q, modes := range wantMap {
		for mode, refs := range modes {
			if !slices.Equal(got[q][mode], refs) {
				t.Errorf("%s %q:\n got  %v\n want %v", mode, q, got[q][mode], refs)
			}
		}
	}
}

func TestSearch_NoModelAnswersBM25OverHTTPAndRecordsUsage(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	c := ctxdv1.NewVfsServiceClient(conn)
	writeText(t, c, "notes:/otter.md", "# Otters\n\nSea otters hold hands while sleeping.")
	writeText(t, c, "notes:/other.md", "Nothing about that animal.")
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), 30*time.Second)

	// Words standing as the query has them: the proximity rerank leaves the
	// score of a result first in every leg at 1.
	status, body := httpCall(t, "POST", "http://"+d.HTTPAddr().String()+"/v1/search", `{"queries":[{"text":"sea otters"}]}`, d.token)
	if status != 200 {
		t.Fatalf("HTTP %d: %s", status, body)
	}
	var resp struct {
		Results []struct {
			Ref, Snippet string
			Score        float64
		}
		ModeUsed   string `json:"mode_used"`
		ModeReason string `json:"mode_reason"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.ModeUsed != "SEARCH_MODE_BM25" || !strings.Contains(resp.ModeReason, "no embedding model") {
		t.Fatalf("mode %q reason %q: without a model hybrid must answer as BM25 and say so", resp.ModeUsed, resp.ModeReason)
	}
	if len(resp.Results) != 1 || resp.Results[0].Ref != "notes:/otter.md" || resp.Results[0].Score != 1 ||
		!strings.Contains(resp.Results[0].Snippet, "otters") {
		t.Fatalf("results %+v", resp.Results)
	}

	// Usage signals are written in the background within about a second.
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, err := c.Info(context.Background(), &ctxdv1.InfoRequest{Ref: "notes:/otter.md"})
		if err != nil {
			t.Fatal(err)
		}
		if info.Item.RetrievalCount == 1 && info.Item.LastRetrievedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("retrieval not recorded: count %d", info.Item.RetrievalCount)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func randomVector(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func TestSearch_PrecomputedEmbeddings(t *testing.T) {
	d := mustStart(t, withModel(t, testConfig(t)))
	conn := dial(t, "unix://"+d.cfg.Socket)
	c := ctxdv1.NewVfsServiceClient(conn)
	st := waitEmbedded(t, conn, time.Minute)
	model, dims := st.Embedding.ModelId, int(st.Embedding.Dimensions)
	r := rand.New(rand.NewPCG(1, 2))
	vec := randomVector(r, dims)
	write := func(ref string, model string, vecs ...[]float32) error {
		req := &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: "a short passage"}, EmbeddingModel: model}
		for _, v := range vecs {
			req.ChunkEmbeddings = append(req.ChunkEmbeddings, &ctxdv1.Embedding{Values: v})
		}
		_, err := c.Write(context.Background(), req)
		return err
	}
	for name, err := range map[string]error{
		"no model named": write("pre:/a", "", vec),
		"other model":    write("pre:/b", "bge-small-en-v1.5", vec),
		"wrong dims":     write("pre:/c", model, vec[:10]),
		"two for one":    write("pre:/d", model, vec, vec),
		"zero vector":    write("pre:/e", model, make([]float32, dims)),
	} {
		if code, det := errorDetail(t, err); code != codes.InvalidArgument || det.NextActionHint == "" {
			t.Errorf("%s: %v %v", name, code, det)
		}
	}
	if drives, _ := c.ListDrives(context.Background(), &ctxdv1.ListDrivesRequest{}); len(drives.GetDrives()) != 0 {
		t.Fatalf("rejected writes left items: %v", drives)
	}
	if err := write("pre:/ok", model, vec); err != nil {
		t.Fatal(err)
	}
	st = waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), time.Minute)
	if st.Embedding.EmbeddedChunks != 1 {
		t.Fatalf("embedded chunks = %d, want the precomputed one", st.Embedding.EmbeddedChunks)
	}
	res := doSearch(t, conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_VECTOR, Queries: []*ctxdv1.SearchQuery{{Vector: vec}}})
	if len(res.Results) != 1 || res.Results[0].Ref != "pre:/ok" || res.Results[0].LegRanks[0].Score < 0.999 {
		t.Fatalf("vector search with the stored vector: %v", res.Results)
	}
}

// TestProcess_KillDuringIndexingThenDoctorFindsNoDrift kills the real
// daemon with SIGKILL while 8 writers stream items (with precomputed
// vectors, so both indexes are busy), restarts it, and requires the indexes
// to catch up with no drift and every acknowledged write to be searchable.
func TestProcess_KillDuringIndexingThenDoctorFindsNoDrift(t *testing.T) {
	dir := shortTempDir(t)
	dataDir, socket := filepath.Join(dir, "data"), filepath.Join(dir, "s.sock")
	p := startProcess(t, dataDir, socket, modelArgs(t, ortLib(t))...)
	conn := dial(t, "unix://"+socket)
	st := waitEmbedded(t, conn, time.Minute)
	model, dims := st.Embedding.ModelId, int(st.Embedding.Dimensions)
	c := ctxdv1.NewVfsServiceClient(conn)

	acked := loadThenKill(t, p, 8, 2000, func(w, i int) (string, error) {
		word := fmt.Sprintf("w%di%05d", w, i)
		r := rand.New(rand.NewPCG(uint64(w), uint64(i)))
		req := &ctxdv1.WriteRequest{
			Ref:            fmt.Sprintf("load:/w%d/%s.txt", w, word),
			Body:           &ctxdv1.WriteRequest_Content{Content: "unique token " + word},
			EmbeddingModel: model, ChunkEmbeddings: []*ctxdv1.Embedding{{Values: randomVector(r, dims)}},
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := c.Write(ctx, req)
		return word, err
	})

	p = startProcess(t, dataDir, socket, modelArgs(t, ortLib(t))...)
	conn = dial(t, "unix://"+socket)
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), 2*time.Minute)
	doc, err := ctxdv1.NewAdminServiceClient(conn).Doctor(context.Background(), &ctxdv1.DoctorRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Ok || doc.StoreChunks < int64(len(acked)) || doc.VectorChunks != doc.StoreVectors {
		t.Fatalf("doctor after kill -9: %v", doc)
	}
	for i, word := range acked {
		if i%97 != 0 {
			continue
		}
		r := doSearch(t, conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Queries: []*ctxdv1.SearchQuery{{Text: word}}})
		if len(r.Results) == 0 || !strings.HasSuffix(r.Results[0].Ref, word+".txt") {
			t.Fatalf("acknowledged %s not found after restart: %v", word, resultRefs(r))
		}
	}
	p.stop(t)
	t.Logf("%d acknowledged writes; doctor: %d chunks, %d vectors, no drift", len(acked), doc.StoreChunks, doc.VectorChunks)
}

// TestLimits_RequestLimitsOverGRPCAndHTTP checks every request limit both
// ways: a value at the limit is served, one past it is INVALID_ARGUMENT with
// an ErrorDetail whose hint names the config key that raises it.
func TestLimits_RequestLimitsOverGRPCAndHTTP(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	cfg.Limits = Limits{
		MaxQueries: 3, MaxQueryBytes: 64, MaxQueryTerms: 8, MaxSearchLimit: 20, MaxSnippetLength: 50,
		MaxTokenBudget: 40, MaxChunksPerItem: 2, MaxFilterValues: 2, MaxListLimit: 5, MaxTreeDepth: 2,
		MaxTreeItemsPerDir: 4, MaxQuestionsPerItem: 2, MaxSimilarTextBytes: 4096, MaxBatchItems: 2,
		MaxEventBytes: 256, MaxWatches: 1, MaxWatchExcludes: 1, // the watch limits: TestWatchService_badRequests
		MaxSubscriptionsPerToken: 1, MaxSubscriptions: 10, MaxSubscriptionQueries: 2,
		MaxSubscriptionPending: 10, MaxSubscriptionInbox: 10,
		MaxDiffLines: 100, // a diff past it is cut, not refused: TestDiff
	}
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	vc := ctxdv1.NewVfsServiceClient(conn)
	writeText(t, vc, "notes:/a/walrus.md", "walrus tusks")
	// An event's text over max_event_bytes is cut, not refused.
	ev, err := ctxdv1.NewSessionServiceClient(conn).AppendEvents(context.Background(), &ctxdv1.AppendEventsRequest{SessionId: "s", Project: "p",
		Events: []*ctxdv1.SessionEvent{{Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_NOTE, Text: strings.Repeat("walrus ", 100)}}})
	if err != nil || !ev.Events[0].Truncated || len(ev.Events[0].Text) > 256 {
		t.Errorf("an event over max_event_bytes: %v", err)
	}
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), 30*time.Second)
	base := "http://" + d.HTTPAddr().String()

	search := func(edit func(*ctxdv1.SearchRequest)) *ctxdv1.SearchRequest {
		r := &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: "walrus"}}}
		edit(r)
		return r
	}
	queries := func(n int) func(*ctxdv1.SearchRequest) {
		return func(r *ctxdv1.SearchRequest) {
			r.Queries = nil
			for range n {
				r.Queries = append(r.Queries, &ctxdv1.SearchQuery{Text: "walrus"})
			}
		}
	}
	text := func(n int) func(*ctxdv1.SearchRequest) {
		return func(r *ctxdv1.SearchRequest) { r.Queries[0].Text = "walrus " + strings.Repeat("x", n-7) }
	}
	batch := func(n int) *ctxdv1.WriteBatchRequest {
		r := &ctxdv1.WriteBatchRequest{}
		for i := range n {
			r.Items = append(r.Items, &ctxdv1.WriteRequest{Ref: fmt.Sprintf("notes:/batch/%d.md", i),
				Body: &ctxdv1.WriteRequest_Content{Content: "x"}, OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE})
		}
		return r
	}
	tags := func(n int) func(*ctxdv1.SearchRequest) {
		return func(r *ctxdv1.SearchRequest) {
			r.Filter = &ctxdv1.SearchFilter{}
			for i := range n {
				r.Filter.Drives = append(r.Filter.Drives, fmt.Sprintf("d%d", i))
			}
		}
	}
	for _, tt := range []struct {
		name, key string
		at, over  proto.Message
	}{
		{"queries", "max_queries", search(queries(3)), search(queries(4))},
		{"query bytes", "max_query_bytes", search(text(64)), search(text(65))},
		{"search limit", "max_search_limit", search(func(r *ctxdv1.SearchRequest) { r.Limit = 20 }), search(func(r *ctxdv1.SearchRequest) { r.Limit = 21 })},
		{"snippet length", "max_snippet_length", search(func(r *ctxdv1.SearchRequest) { r.SnippetLength = 50 }), search(func(r *ctxdv1.SearchRequest) { r.SnippetLength = 51 })},
		{"token budget", "max_token_budget", search(func(r *ctxdv1.SearchRequest) { r.TokenBudget = 40 }), search(func(r *ctxdv1.SearchRequest) { r.TokenBudget = 41 })},
		{"chunks per item", "max_chunks_per_item", search(func(r *ctxdv1.SearchRequest) { r.MaxChunksPerItem = 2 }), search(func(r *ctxdv1.SearchRequest) { r.MaxChunksPerItem = 3 })},
		{"filter values", "max_filter_values", search(tags(2)), search(tags(3))},
		{"list limit", "max_list_limit", &ctxdv1.ListRequest{Ref: "notes:/", Limit: 5}, &ctxdv1.ListRequest{Ref: "notes:/", Limit: 6}},
		{"tree depth", "max_tree_depth", &ctxdv1.TreeRequest{Ref: "notes:/", MaxDepth: 2}, &ctxdv1.TreeRequest{Ref: "notes:/", MaxDepth: 3}},
		{"tree items per dir", "max_tree_items_per_dir", &ctxdv1.TreeRequest{Ref: "notes:/", ItemsPerDir: 4}, &ctxdv1.TreeRequest{Ref: "notes:/", ItemsPerDir: 5}},
		{"batch items", "max_batch_items", batch(2), batch(3)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := limitCallGRPC(conn, tt.at); err != nil {
				t.Fatalf("gRPC at the limit: %v", err)
			}
			if status, body := limitCallHTTP(t, base, d.token, tt.at); status != 200 {
				t.Fatalf("HTTP at the limit: %d %s", status, body)
			}
			code, det := errorDetail(t, limitCallGRPC(conn, tt.over))
			if code != codes.InvalidArgument || det.Type != ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT ||
				!strings.Contains(det.NextActionHint, "limits."+tt.key) || !strings.Contains(det.NextActionHint, "CTXD_") {
				t.Fatalf("gRPC over the limit: %v %v", code, det)
			}
			status, body := limitCallHTTP(t, base, d.token, tt.over)
			if status != 400 {
				t.Fatalf("HTTP over the limit: %d %s", status, body)
			}
			if e := decodeHTTPError(t, body, ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT); !strings.Contains(e.Details[0].Hint, "limits."+tt.key) {
				t.Fatalf("HTTP hint %q does not name limits.%s", e.Details[0].Hint, tt.key)
			}
		})
	}
}

// limitCallGRPC sends a Search, List, Tree or WriteBatch request over gRPC.
func limitCallGRPC(conn *grpc.ClientConn, m proto.Message) error {
	ctx := context.Background()
	var err error
	switch r := m.(type) {
	case *ctxdv1.SearchRequest:
		_, err = ctxdv1.NewSearchServiceClient(conn).Search(ctx, r)
	case *ctxdv1.ListRequest:
		_, err = ctxdv1.NewVfsServiceClient(conn).List(ctx, r)
	case *ctxdv1.TreeRequest:
		_, err = ctxdv1.NewVfsServiceClient(conn).Tree(ctx, r)
	case *ctxdv1.WriteBatchRequest:
		_, err = ctxdv1.NewVfsServiceClient(conn).WriteBatch(ctx, r)
	}
	return err
}

// limitCallHTTP sends the same request through the gateway.
func limitCallHTTP(t *testing.T, base, token string, m proto.Message) (int, []byte) {
	t.Helper()
	switch r := m.(type) {
	case *ctxdv1.SearchRequest:
		body, err := protojson.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return httpCall(t, "POST", base+"/v1/search", string(body), token)
	case *ctxdv1.WriteBatchRequest:
		body, err := protojson.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return httpCall(t, "POST", base+"/v1/write-batch", string(body), token)
	case *ctxdv1.ListRequest:
		return httpCall(t, "GET", fmt.Sprintf("%s/v1/list?ref=%s&limit=%d", base, url.QueryEscape(r.Ref), r.Limit), "", token)
	case *ctxdv1.TreeRequest:
		return httpCall(t, "GET", fmt.Sprintf("%s/v1/tree?ref=%s&max_depth=%d&items_per_dir=%d", base, url.QueryEscape(r.Ref), r.MaxDepth, r.ItemsPerDir), "", token)
	}
	t.Fatalf("no HTTP call for %T", m)
	return 0, nil
}

// TestSearch_ResultsGiveLineRangeAndReduction checks the line range of a
// result against Read, and that a long query reports its reduction.
func TestSearch_ResultsGiveLineRangeAndReduction(t *testing.T) {
	cfg := testConfig(t)
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	vc := d.vfsClient(t)
	writeText(t, vc, "notes:/guide.md", "# Guide\n\nIntro text.\n\n## Walruses\n\nWalruses haul out\non the ice floes.\n")
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), 30*time.Second)

	long := strings.Repeat("filler words about nothing much at all, ", 20) + "walruses haul " + strings.Repeat("padding and more padding ", 20)
	for i := range 40 {
		long += fmt.Sprintf(" unknownword%d", i)
	}
	r := doSearch(t, conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Queries: []*ctxdv1.SearchQuery{{Text: long}}, Limit: 1})
	if red := r.Queries[0].ReducedText; red == "" || !strings.Contains(red, "walruses") {
		t.Fatalf("reduced text %q: want the query reduced to words including walruses", red)
	}
	if len(r.Results) != 1 {
		t.Fatalf("results %v", resultRefs(r))
	}
	res := r.Results[0]
	if res.StartLine < 1 || res.EndLine < res.StartLine {
		t.Fatalf("line range %d-%d", res.StartLine, res.EndLine)
	}
	read, err := vc.Read(context.Background(), &ctxdv1.ReadRequest{Ref: res.Ref, LineOffset: res.StartLine - 1, LineLimit: res.EndLine - res.StartLine + 1})
	if err != nil {
		t.Fatal(err)
	}
	full, err := vc.Read(context.Background(), &ctxdv1.ReadRequest{Ref: res.Ref})
	if err != nil {
		t.Fatal(err)
	}
	chunk := full.Content[res.Span.Start:res.Span.End]
	if !strings.Contains(read.Content, strings.TrimSpace(chunk)) || strings.Count(strings.TrimRight(read.Content, "\n"), "\n") != int(res.EndLine-res.StartLine) {
		t.Fatalf("lines %d-%d read %q; the chunk is %q", res.StartLine, res.EndLine, read.Content, chunk)
	}
}

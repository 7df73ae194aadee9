package daemon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// ingestEvents is what one Add or Refresh stream delivered.
type ingestEvents struct {
	items    map[string]*ctxdv1.IngestItemResult // by ref (or source when there is no ref)
	progress int
	summary  *ctxdv1.IngestSummary
}

// event is the part of AddResponse and RefreshResponse that ingestEvents reads.
type event interface {
	GetProgress() *ctxdv1.IngestProgress
	GetItem() *ctxdv1.IngestItemResult
	GetSummary() *ctxdv1.IngestSummary
}

// drain reads a stream to its end; the summary must be the last event.
func drain[T any, PT interface {
	*T
	event
}](t *testing.T, stream grpc.ServerStreamingClient[T]) (*ingestEvents, error) {
	t.Helper()
	ev := &ingestEvents{items: map[string]*ctxdv1.IngestItemResult{}}
	for {
		m, err := stream.Recv()
		msg := PT(m)
		if err == io.EOF {
			if ev.summary == nil {
				t.Fatal("stream ended without a summary")
			}
			return ev, nil
		}
		if err != nil {
			return ev, err
		}
		if ev.summary != nil {
			t.Fatalf("event after the summary: %v", msg)
		}
		switch {
		case msg.GetSummary() != nil:
			ev.summary = msg.GetSummary()
		case msg.GetItem() != nil:
			it := msg.GetItem()
			key := it.Ref
			if key == "" {
				key = it.Source
			}
			ev.items[key] = it
		case msg.GetProgress() != nil:
			ev.progress++
		}
	}
}

func add(t *testing.T, conn *grpc.ClientConn, req *ctxdv1.AddRequest) (*ingestEvents, error) {
	t.Helper()
	stream, err := ctxdv1.NewIngestServiceClient(conn).Add(context.Background(), req)
	if err != nil {
		return nil, err
	}
	return drain(t, stream)
}

func refresh(t *testing.T, conn *grpc.ClientConn, req *ctxdv1.RefreshRequest) (*ingestEvents, error) {
	t.Helper()
	stream, err := ctxdv1.NewIngestServiceClient(conn).Refresh(context.Background(), req)
	if err != nil {
		return nil, err
	}
	return drain(t, stream)
}

// runbook has sections long enough that the chunker keeps each in a chunk of its own.
var runbook = func() string {
	var b strings.Builder
	b.WriteString("# Runbook\n")
	for _, sec := range []struct{ title, topic string }{
		{"Backups", "Backups run nightly and keep thirty daily snapshots of every volume"},
		{"Restores", "To restore, stop the service, pick a snapshot and copy it back into place"},
		{"Alerts", "Disk alerts page the on-call engineer when a volume passes ninety percent"},
		{"Upgrades", "Upgrades roll one node at a time and wait for health checks to pass"},
	} {
		fmt.Fprintf(&b, "\n## %s\n\n", sec.title)
		for i := range 12 {
			fmt.Fprintf(&b, "%s, as step %d of the %s procedure explains. ", sec.topic, i+1, strings.ToLower(sec.title))
		}
		b.WriteString("\n")
	}
	return b.String()
}()

// TestIngest_TreeRefreshReembedsOnlyChangedChunks runs the whole ingest
// loop on the real model: add a tree, search it (PDF text included), edit
// one section, refresh, and check that only that section was embedded again.
func TestIngest_TreeRefreshReembedsOnlyChangedChunks(t *testing.T) {
	root := t.TempDir()
	cfg := withModel(t, testConfig(t))
	cfg.AllowedRoots = []string{root}
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+d.cfg.Socket)
	waitStatus(t, ctxdv1.NewAdminServiceClient(conn), time.Minute, "the embedding model", func(st *ctxdv1.StatusResponse) bool {
		return st.Embedding.Available && st.Embedding.ModelId != ""
	})
	pdf, err := os.ReadFile("testdata/ingest/brief.pdf")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"ops/runbook.md":   []byte(runbook),
		"ops/brief.pdf":    pdf,
		"ops/logo.png":     []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"),
		"notes/ideas.txt":  []byte("Try a solar kiln for drying lumber.\n"),
		"build/output.txt": []byte("build output is excluded by default\n"),
		".env":             []byte("TOKEN=secret\n"),
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ref := func(name string) string { return "disk:" + filepath.Join(root, name) }

	ev, err := add(t, conn, &ctxdv1.AddRequest{Sources: []string{root}, Tags: []string{"ops"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := ev.summary; s.Added != 4 || s.Failed != 0 || s.ChunksQueued == 0 || ev.progress == 0 {
		t.Fatalf("add summary = %v, %d progress events, items %v", s, ev.progress, ev.items)
	}
	// Searchable as soon as Add returns, before embedding finishes.
	resp := doSearch(t, conn, &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: "heliostat array record output"}}, Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25})
	if len(resp.Results) == 0 || resp.Results[0].Ref != ref("ops/brief.pdf") {
		t.Fatalf("PDF text search = %v, want %s first", resultRefs(resp), ref("ops/brief.pdf"))
	}
	resp = doSearch(t, conn, &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: "logo"}}, Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25})
	if !slices.Contains(resultRefs(resp), ref("ops/logo.png")) {
		t.Errorf("search by a binary's name = %v, want %s", resultRefs(resp), ref("ops/logo.png"))
	}
	waitEmbedded(t, conn, 2*time.Minute)

	edited := strings.Replace(runbook, "passes ninety percent, as step 3", "passes eighty-five percent, as step 3", 1)
	if err := os.WriteFile(filepath.Join(root, "ops/runbook.md"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "notes/ideas.txt")); err != nil {
		t.Fatal(err)
	}
	ev, err = refresh(t, conn, &ctxdv1.RefreshRequest{All: true})
	if err != nil {
		t.Fatal(err)
	}
	s := ev.summary
	if s.Updated != 1 || s.Missing != 1 || s.Unchanged != 2 || s.Failed != 0 {
		t.Fatalf("refresh summary = %v, items %v", s, ev.items)
	}
	// One sentence changed in one of four sections: its chunk is embedded
	// again, the other sections' chunks keep their vectors.
	t.Logf("refresh after one edit: %d chunks embedded, %d reused", s.ChunksQueued, s.ChunksReused)
	if s.ChunksQueued < 1 || s.ChunksReused < 3 || s.ChunksQueued >= s.ChunksReused {
		t.Errorf("refresh embedded %d and reused %d chunks of a file with one section edited", s.ChunksQueued, s.ChunksReused)
	}
	missing := ev.items[ref("notes/ideas.txt")]
	if missing.GetAction() != ctxdv1.IngestAction_INGEST_ACTION_MISSING || missing.GetError().GetType() != ctxdv1.ErrorType_ERROR_TYPE_SOURCE_UNREADABLE {
		t.Errorf("deleted file reported as %v", missing)
	}
	if _, err := d.vfsClient(t).Info(context.Background(), &ctxdv1.InfoRequest{Ref: ref("notes/ideas.txt")}); err != nil {
		t.Errorf("the item of a deleted file is gone: %v", err)
	}
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), 2*time.Minute)
	resp = doSearch(t, conn, &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: "disk alerts at eighty-five percent"}}, Mode: ctxdv1.SearchMode_SEARCH_MODE_VECTOR})
	if len(resp.Results) == 0 || resp.Results[0].Ref != ref("ops/runbook.md") || !strings.Contains(resp.Results[0].Snippet, "eighty-five") {
		t.Errorf("vector search after refresh = %v", resp.Results)
	}
}

func TestIngest_URLAndErrors(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/guide", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"g1"`)
		if r.Header.Get("If-None-Match") == `"g1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprint(w, `<html><head><title>Kiln guide</title></head><body><nav>Shop Cart Login</nav>
<main><h1>Drying lumber</h1><p>A solar kiln dries oak in six weeks.</p></main></body></html>`)
	})
	var news atomic.Value
	news.Store("Tide tables: high water at six.")
	mux.HandleFunc("/news", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<html><head><title>Harbour news</title></head><body><p>%s</p></body></html>", news.Load())
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	root := t.TempDir()
	cfg := testConfig(t)
	cfg.AllowedRoots = []string{root}
	cfg.AllowPrivateNetwork = true
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+d.cfg.Socket)

	ev, err := add(t, conn, &ctxdv1.AddRequest{Sources: []string{srv.URL + "/guide"}})
	if err != nil || ev.summary.Added != 1 {
		t.Fatalf("add URL = %v, %v", ev, err)
	}
	pageRef := "url:/" + srv.URL + "/guide"
	read, err := d.vfsClient(t).Read(context.Background(), &ctxdv1.ReadRequest{Ref: pageRef})
	if err != nil || !strings.Contains(read.Content, "six weeks") || strings.Contains(read.Content, "Login") || read.Item.Title != "Kiln guide" {
		t.Fatalf("stored page = %v, %v", read, err)
	}
	if read.Item.GetOrigin().GetEtag() != `"g1"` || read.Item.GetOrigin().GetTtlSeconds() != int64(cfg.URLTTL.Seconds()) {
		t.Errorf("origin = %v", read.Item.GetOrigin())
	}
	resp := doSearch(t, conn, &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: "solar kiln oak"}}})
	if len(resp.Results) == 0 || resp.Results[0].Ref != pageRef {
		t.Errorf("search = %v", resultRefs(resp))
	}
	ev, err = refresh(t, conn, &ctxdv1.RefreshRequest{Refs: []string{pageRef}})
	if err != nil || ev.summary.Unchanged != 1 || ev.items[pageRef].GetAction() != ctxdv1.IngestAction_INGEST_ACTION_UNCHANGED {
		t.Errorf("refresh of an unchanged page = %v, %v", ev, err)
	}

	// Once a page's TTL has passed, a search that returns it re-validates it
	// in the background: later reads and searches see the new text.
	if ev, err := add(t, conn, &ctxdv1.AddRequest{Sources: []string{srv.URL + "/news"}, TtlSeconds: 1}); err != nil || ev.summary.Added != 1 {
		t.Fatalf("add news = %v, %v", ev, err)
	}
	news.Store("Tide tables: high water at seven.")
	newsRef := "url:/" + srv.URL + "/news"
	deadline := time.Now().Add(15 * time.Second)
	for {
		doSearch(t, conn, &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: "high water"}}, Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25})
		read, err := d.vfsClient(t).Read(context.Background(), &ctxdv1.ReadRequest{Ref: newsRef})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(read.Content, "seven") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a stale page returned by search was not re-validated: %q", read.Content)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Per-item failures carry a typed error; the call still ends with a summary.
	outside := t.TempDir()
	ev, err = add(t, conn, &ctxdv1.AddRequest{Sources: []string{outside, "notes.md"}})
	if err != nil || ev.summary.Failed != 2 {
		t.Fatalf("add of refused sources = %v, %v", ev, err)
	}
	if e := ev.items["disk:"+outside].GetError(); e.GetType() != ctxdv1.ErrorType_ERROR_TYPE_SOURCE_REFUSED || e.GetNextActionHint() == "" {
		t.Errorf("outside the allowed roots: %v", ev.items["disk:"+outside])
	}
	if e := ev.items["notes.md"].GetError(); e.GetType() != ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT {
		t.Errorf("relative path: %v", ev.items["notes.md"])
	}
	// Whole-call errors are statuses.
	_, err = add(t, conn, &ctxdv1.AddRequest{Sources: []string{srv.URL + "/guide"}, OnConflict: ctxdv1.OnConflict_ON_CONFLICT_ERROR})
	if code, det := errorDetail(t, err); code != codes.AlreadyExists || det.Type != ctxdv1.ErrorType_ERROR_TYPE_PATH_CONFLICT {
		t.Errorf("add of a stored URL with on_conflict error: %v", err)
	}
	_, err = add(t, conn, &ctxdv1.AddRequest{})
	if code, _ := errorDetail(t, err); code != codes.InvalidArgument {
		t.Errorf("add without sources: %v", err)
	}
	_, err = refresh(t, conn, &ctxdv1.RefreshRequest{})
	if code, _ := errorDetail(t, err); code != codes.InvalidArgument {
		t.Errorf("refresh without refs: %v", err)
	}
	_, err = refresh(t, conn, &ctxdv1.RefreshRequest{Refs: []string{"disk:/no/such/item"}})
	if code, _ := errorDetail(t, err); code != codes.NotFound {
		t.Errorf("refresh of a missing ref: %v", err)
	}
}

func TestIngest_WatchStreamsNewFiles(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(t)
	cfg.AllowedRoots = []string{root}
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+d.cfg.Socket)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := ctxdv1.NewIngestServiceClient(conn).Add(ctx, &ctxdv1.AddRequest{Sources: []string{root}, Watch: true})
	if err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if msg.GetSummary() != nil {
			break
		}
	}
	// The watch is set up right after the summary; write until it is seen.
	want := "disk:" + filepath.Join(root, "later.md")
	got := make(chan *ctxdv1.IngestItemResult, 1)
	go func() {
		for {
			msg, err := stream.Recv()
			if err != nil {
				return
			}
			if it := msg.GetItem(); it != nil && it.Ref == want {
				got <- it
				return
			}
		}
	}()
	deadline := time.After(10 * time.Second)
	for i := 0; ; i++ {
		if err := os.WriteFile(filepath.Join(root, "later.md"), []byte(fmt.Sprintf("written after the add, take %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case it := <-got:
			if it.Action != ctxdv1.IngestAction_INGEST_ACTION_ADDED && it.Action != ctxdv1.IngestAction_INGEST_ACTION_UPDATED {
				t.Fatalf("watch reported %v", it)
			}
			read, err := d.vfsClient(t).Read(context.Background(), &ctxdv1.ReadRequest{Ref: want})
			if err != nil || !strings.HasPrefix(read.Content, "written after the add") {
				t.Fatalf("watched file = %v, %v", read, err)
			}
			return
		case <-time.After(500 * time.Millisecond):
		case <-deadline:
			t.Fatal("watch did not report a new file within 10s")
		}
	}
}
